/*
 * recorder_buffers.h - the recording thread's slow paths for room
 * (recorder_buffers.c). Internal to the record module.
 */
#ifndef SPI_RECORDER_BUFFERS_H
#define SPI_RECORDER_BUFFERS_H

#include <stdint.h>

#include "record/recorder.h"

/* Doubles the calling thread's stack of open calls (its hot block follows).
 * SP_OK or SP_ERR_OUT_OF_MEMORY (the stack is unchanged). Own thread only. */
int spi_stack_grow(void);

/* Gives thread t (the calling thread) room for more events: a new chunk
 * within the buffer limit, or, past it in flush mode, its full chunks
 * written to the spill file and the last one reused. SP_OK;
 * SP_ERR_BUFFER_LIMIT (limit reached without a working spill, or the
 * thread's sequences exhausted) or SP_ERR_OUT_OF_MEMORY: the call that
 * needed it is dropped by the caller. Own thread only. */
int spi_chunk_add(spi_thread *t);

/* Aggregate mode: the path of a call of `region` made inside path `parent`
 * (-1: a root) on thread t, created on first sight; a run of one region
 * (recursion) stays on one path. -1 when out of memory. Own thread only. */
int32_t spi_path_of(spi_thread *t, int32_t parent, int region);

/* Aggregate mode, an OpenMP worker's root call: the node to use as its
 * parent, a stand-in (SPI_PATH_HOSTED) for the path the main thread
 * published as its teams' fork path (spi_omp_fork_path), created on first
 * sight; -1 (a root) when none is published or out of memory. Own thread
 * only. */
int32_t spi_path_fork_parent(spi_thread *t);

#endif /* SPI_RECORDER_BUFFERS_H */
