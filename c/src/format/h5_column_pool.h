/*
 * h5_column_pool.h - chunks compressed by a few threads, handed back in
 * the order they were submitted, on the thread that submitted them.
 *
 * The streaming writer fills one chunk of each event column at a time and
 * submits it; helper threads shuffle and deflate (h5_chunk_deflate.h) while
 * the writer goes on producing the next slices; finished chunks reach the
 * pool's sink in submission order, always on the submitting thread, which
 * is the only one that calls HDF5 (libhdf5 is not thread-safe).
 *
 * Memory is fixed when the pool is made: `slots` chunks in flight, each a
 * raw buffer and an encoded buffer, plus one encoder per compressing
 * thread. A submit that finds every slot busy first writes the oldest one
 * (compressing a waiting chunk itself while it waits), so the producer
 * never runs more than `slots` chunks ahead of the file.
 *
 * Threads: with 1 write thread there are no helper threads at all and a
 * submit compresses and sinks the chunk at once. With N > 1, N - 1 helpers
 * compress and the submitting thread helps whenever it would wait, so N
 * threads compress in all. Helper threads block every signal (the
 * profiled program's handlers never run on them) and are joined by
 * spi_column_pool_close on every path.
 *
 * Not thread-safe: one producer thread calls every function.
 */
#ifndef SPI_H5_COLUMN_POOL_H
#define SPI_H5_COLUMN_POOL_H

#include <stddef.h>
#include <stdint.h>

/* spi_write_threads() and SPI_WRITE_THREADS_MAX: how many threads a pool
 * compresses with (the setting is finalize's, shared with record/). */
#include "util/cpus.h"

/* libdeflate's level for the event columns' varying byte planes (the
 * constant high planes are deflate_planes.c's own blocks). Level 1 since
 * issue 31's plane encoder: on the same 306 chunks of each column of a 20M-
 * call trace (tests/unit/deflate_planes_test --measure, pinned, two rounds
 * interleaved), level 1 against 2 took 13% less CPU on durations and 17%
 * less on start deltas, and stored 2.4% and 3.2% fewer bytes. (Before the
 * plane encoder, on whole shuffled chunks, level 2 was the faster one: 0.26-
 * 0.33 s against 0.40-0.44 s on 256 chunks, for 1.31 against 1.34 MB; zlib
 * level 1, what HDF5 ran before, 0.28-0.33 s for 2.09 MB.) The level HDF5
 * records in the dataset (SPI_DEFLATE_LEVEL) only describes the stream;
 * inflate reads any level. */
#define SPI_POOL_DEFLATE_LEVEL 1

/* One encoded chunk, as the sink receives it. */
typedef struct spi_encoded_chunk {
    const void *data;
    size_t bytes;
    int column;        /* as submitted */
    uint64_t index;    /* as submitted: the chunk's number in its column */
} spi_encoded_chunk;

/* Stores one encoded chunk (H5Dwrite_chunk for the writer). Called on the
 * producer thread, in submission order. Returns SP_OK or a status, which
 * fails the pool: every later call returns it. */
typedef int (*spi_chunk_sink)(void *context, const spi_encoded_chunk *chunk);

typedef struct spi_column_pool spi_column_pool;

/* A pool of `threads` compressing threads (1 = none but the caller) for
 * chunks of at most `chunk_bytes` made of `element_bytes` elements, with
 * `columns` chunks submitted together at most (the slots are sized so that
 * one round of every column fits beside what the helpers hold:
 * slots = 2 * (threads - 1) + columns, 1 without helpers). A helper that
 * cannot be started leaves fewer helpers, not an error.
 * SP_OK or SP_ERR_OUT_OF_MEMORY (*pool NULL). */
int spi_column_pool_open(spi_column_pool **pool, unsigned threads, unsigned columns,
                         size_t chunk_bytes, size_t element_bytes, spi_chunk_sink sink,
                         void *context);

/* The slots the pool keeps in flight and its helper threads (for tests and
 * the memory statement: each slot holds chunk_bytes raw and the encoded
 * bound). */
unsigned spi_column_pool_slots(const spi_column_pool *pool);
unsigned spi_column_pool_helpers(const spi_column_pool *pool);

/* Submit the chunk in *buffer (raw_bytes of it are the chunk, at most
 * chunk_bytes) as chunk `index` of `column`. The pool takes the buffer and
 * puts an empty one of chunk_bytes in *buffer (the caller's next chunk
 * goes there); the caller's buffer must come from spi_column_pool_buffer
 * or an earlier submit. May compress and sink older chunks first. SP_OK or
 * the pool's first failure (the sink's status, SP_ERR_OUT_OF_MEMORY,
 * SP_ERR_OUTPUT from the compressor). */
int spi_column_pool_submit(spi_column_pool *pool, void **buffer, size_t raw_bytes, int column,
                           uint64_t index);

/* An empty buffer of chunk_bytes owned by the pool, for a column's first
 * chunk (returned through submit, or freed by close). NULL when out of
 * memory. */
void *spi_column_pool_buffer(spi_column_pool *pool);

/* Wait for every submitted chunk and sink them all, in order. SP_OK or the
 * pool's first failure. */
int spi_column_pool_drain(spi_column_pool *pool);

/* Stop and join the helpers (chunks not yet sunk are dropped: after a
 * failure, or when the write is abandoned), free everything. NULL is a
 * no-op. */
void spi_column_pool_close(spi_column_pool *pool);

#endif /* SPI_H5_COLUMN_POOL_H */
