/*
 * h5_chunk_stream.h - the reader's compressed event columns decoded by a
 * few helper threads, a few chunks ahead of where the reader is.
 *
 * The tools (scope-inspect, -export, -report) read every event column
 * front to back, and HDF5's deflate filter decodes them on one thread
 * with zlib. A stream over one column does instead:
 *   - the reading thread, the only one that calls HDF5 (Debian's libhdf5
 *     is not thread-safe; the reader holds reader_lock.h around it),
 *     fetches the stored bytes of the chunk asked for and of the next few
 *     (H5Dread_chunk, h5_chunk_inflate.h);
 *   - helper threads inflate and unshuffle them (no HDF5);
 *   - the reading thread copies the values out in order, decoding a
 *     waiting chunk itself rather than sit idle.
 * The safety rule of h5_chunk_inflate.h carries over exactly: a column of
 * another layout gets no stream, and a chunk that is not what the layout
 * promises makes that read report "not done", after which the caller
 * reads the range through H5Dread (spi_h5r_read_int_slice), where HDF5
 * and the reader's checks decide about it as before.
 *
 * Bounded: a stream holds a fixed number of slots (chunks fetched,
 * decoding or decoded: max(8, helpers + 3)); read-ahead (helpers + 1
 * chunks) stops at the end the caller names and at the slots in flight.
 * Each slot holds one decoded chunk and one stored chunk, each decoding
 * thread one scratch chunk and one inflater: for the writers' 512 KiB
 * chunks about 4-6 MiB a column, what HDF5's chunk cache of the on-demand
 * store held before. All of it is allocated by the thread that opens and
 * reads (helpers never allocate).
 *
 * Environment: SCOPE_PROFILER_READ_THREADS helper threads (default
 * min(4, CPUs this process may use); 0 = the reading thread decodes
 * alone); SCOPE_PROFILER_READ_VALUE_PATH=1 gives no stream at all (every
 * read through HDF5's filters, for tests and comparisons).
 *
 * Thread-safety: one thread at a time calls a stream and its pool (the
 * reader serialises its callers with its lock); the helpers synchronise
 * with it inside. Internal to the format module.
 */
#ifndef SPI_H5_CHUNK_STREAM_H
#define SPI_H5_CHUNK_STREAM_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most helper threads, whatever the environment says. */
#define SPI_READ_THREADS_MAX 8

typedef struct spi_inflate_pool spi_inflate_pool;
typedef struct spi_chunk_stream spi_chunk_stream;

/* Helper threads for a pool: SCOPE_PROFILER_READ_THREADS when it is a
 * number >= 0 (capped at SPI_READ_THREADS_MAX), else min(4, CPUs). A value
 * that is not a number is reported once (diag) and the default used. */
unsigned spi_read_threads(void);

/* Whether SCOPE_PROFILER_READ_VALUE_PATH asks for HDF5's filters only. */
bool spi_read_value_path(void);

/* A pool of `threads` helpers (0: none) decoding chunks of at most
 * `chunk_bytes` (the largest spi_chunk_bytes of the streams it serves).
 * A helper that cannot be started leaves fewer helpers, not an error.
 * SP_OK or SP_ERR_OUT_OF_MEMORY (*pool NULL). */
int spi_inflate_pool_open(spi_inflate_pool **pool, unsigned threads, size_t chunk_bytes);

/* Helpers the pool runs (for tests). */
unsigned spi_inflate_pool_helpers(const spi_inflate_pool *pool);

/* Stops and joins the helpers, frees the pool. Every stream on it must be
 * closed first. NULL is a no-op. */
void spi_inflate_pool_close(spi_inflate_pool *pool);

/* *stream: a stream over dset (borrowed, stays open) on `pool`, or NULL
 * when dset is not the layout decoded here, its chunks are larger than
 * the pool's, or the value path is asked for (then read through H5Dread).
 * Calls HDF5. SP_OK or SP_ERR_OUT_OF_MEMORY. */
int spi_chunk_stream_open(hid_t dset, spi_inflate_pool *pool, spi_chunk_stream **stream);

/* The same stream with a ring of `slots` chunks instead of the reader's
 * max(8, helpers + 3): at least helpers + 3, at most helpers + 3 for
 * SPI_READ_THREADS_MAX helpers. For a caller that knows how many cursors
 * take turns on the column (scope-merge: about two chunks for each row
 * read in turn, merge/src/merge_chunks.c) and keeps no second pass over
 * a row in the ring. SP_OK or SP_ERR_OUT_OF_MEMORY (*stream NULL as for
 * spi_chunk_stream_open). */
int spi_chunk_stream_open_slots(hid_t dset, spi_inflate_pool *pool, unsigned slots,
                                spi_chunk_stream **stream);

/* Bytes of one chunk of dset when a stream would take it, else 0 (to
 * size a pool before its streams). Calls HDF5. */
size_t spi_chunk_stream_chunk_bytes(hid_t dset);

/* The column's dataset was reopened: later fetches use dset. */
void spi_chunk_stream_set_dataset(spi_chunk_stream *stream, hid_t dset);

/* `count` values from element `pos` into out. `ahead_end` (element, >=
 * pos + count) is how far the caller will go on reading in order: chunks
 * before it may be fetched and decoded ahead. *done false when the caller
 * must read the range through H5Dread instead (what was copied is
 * overwritten then). Calls HDF5. SP_OK or SP_ERR_OUT_OF_MEMORY. */
int spi_chunk_stream_read(spi_chunk_stream *stream, uint64_t pos, uint64_t count,
                          uint64_t ahead_end, int64_t *out, bool *done);

/* Waits for the stream's chunks in flight and frees it. NULL is a no-op. */
void spi_chunk_stream_close(spi_chunk_stream *stream);

#endif /* SPI_H5_CHUNK_STREAM_H */
