/*
 * openmp.h - calls of OpenMP worker threads under the call that forked
 * their team.
 *
 * A region recorded on an OpenMP worker thread, outside any call of its
 * own thread, belongs under the call the team's primary thread was in when
 * the parallel region began (Score-P and Caliper show it so). libgomp has
 * no OMPT, so this works without it, in two steps:
 *
 *   at attach   a thread is an OpenMP worker when the OpenMP runtime is in
 *               the program and, on its first recording call, the thread
 *               is inside a parallel region with a thread number > 0
 *               (spi_omp_thread_is_worker, omp_runtime.h; weak references, so a program
 *               without OpenMP never loads a runtime). A plain pthread is
 *               never a worker.
 *   at begin    on the other threads (only in a program with an OpenMP
 *               runtime), a call notes whether it began inside a parallel
 *               region; a thread with such calls is a team's primary.
 *   at finalize a worker's root calls get as parent the innermost call of
 *               a primary thread that encloses them in time and began
 *               outside any parallel region (the call the team was forked
 *               in; the primary's own team work is skipped). Without a
 *               primary that recorded inside its team, every non-worker
 *               thread is a candidate (spi_omp_hosts_*).
 *
 * The parent then runs on another thread. Its exclusive time does not lose
 * the worker's time: it ran alongside, not inside the parent's own work.
 *
 * Aggregate mode has no calls to search at finalize, so there the fork
 * parent is found while recording: the main thread publishes the path of
 * its innermost call begun outside a parallel region at each of its
 * begins and ends (spi_omp_fork_path, recorder_state.h), and a worker's
 * root call goes below a stand-in for that path (SPI_PATH_HOSTED,
 * recorder_buffers.c), which run_aggregate.c turns into the parent.
 */
#ifndef SPI_OPENMP_H
#define SPI_OPENMP_H

#include <stdbool.h>
#include <stdint.h>

#include "record/recorder.h"

typedef struct spi_omp_hosts spi_omp_hosts;

/* An index of the calls of the session's non-worker threads; bases[i] is
 * the first call id of the i-th thread in attach order. NULL (and SP_OK)
 * when no worker thread recorded; SP_ERR_OUT_OF_MEMORY. Events must be in
 * ns already. */
int spi_omp_hosts_build(spi_omp_hosts **hosts, spi_session *session, const int64_t *bases);

/* The id of the innermost host call enclosing [start, end] whose id is
 * below child_id (parents precede children), or -1. */
int64_t spi_omp_host_parent(const spi_omp_hosts *hosts, int64_t start, int64_t end,
                            int64_t child_id);

void spi_omp_hosts_free(spi_omp_hosts *hosts);

#endif /* SPI_OPENMP_H */
