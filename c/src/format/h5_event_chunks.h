/*
 * h5_event_chunks.h - the streaming writer's event columns written chunk by
 * chunk: filled in memory, shuffled and deflated by the column pool's
 * threads (h5_column_pool.h, h5_chunk_deflate.h), stored in order with
 * H5Dwrite_chunk.
 *
 * The datasets are the ones spi_h5_create_event_column made (chunked, with
 * shuffle + deflate in their creation list), so the file is the same
 * format every reader knows; only who runs the filters changes. Columns
 * advance in lockstep (every row appends the same count to each), so the
 * chunks of all columns fill together: one buffer per column, submitted
 * when full; the last, partial chunk is padded with zeros (the fill value)
 * to the chunk size, as HDF5 stores an edge chunk.
 *
 * Memory: one chunk buffer per column plus the pool's slots and encoders,
 * fixed at open (about 1 MiB per slot; 2 * (threads - 1) + columns slots);
 * chunks put encoded add at most 3 * SPI_EV_COUNT buffers, each as large
 * as the largest such chunk (the current ones and a queue waiting for
 * older pooled chunks).
 *
 * Errors: SP_ERR_HDF5 (H5Dwrite_chunk failed: HDF5's error stack and errno
 * say why), SP_ERR_OUT_OF_MEMORY, SP_ERR_OUTPUT (the compressor refused);
 * after a failure every call returns it. Not thread-safe: the writer's
 * thread calls everything (and is the only one calling HDF5).
 */
#ifndef SPI_H5_EVENT_CHUNKS_H
#define SPI_H5_EVENT_CHUNKS_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/event_columns.h"

typedef struct spi_event_chunks spi_event_chunks;

/* Whether event columns of `event_count` calls are written through this
 * module: when they are chunked and compressed (spi_h5_event_columns_chunked)
 * and the host stores int64 as the file does (little-endian), else the
 * writer lets HDF5 convert and compress on its own. */
bool spi_event_chunks_wanted(uint64_t event_count);

/* Chunked writing into `datasets` (indexed by spi_event_col; < 0: a column
 * the file does not have), all of `event_count` int64 elements, with
 * `threads` compressing threads (spi_write_threads()). SP_OK or
 * SP_ERR_OUT_OF_MEMORY. */
int spi_event_chunks_open(spi_event_chunks **chunks, const hid_t datasets[SPI_EV_COUNT],
                          uint64_t event_count, unsigned threads);

/* Where the next values of `column` go: room for *room values (at least 1
 * while the columns are not full), the rest of the current chunk; NULL
 * (with the room set) when the chunk of that column was put encoded
 * (spi_event_chunks_put_encoded): its values are not written. */
int64_t *spi_event_chunks_span(spi_event_chunks *chunks, int column, size_t *room);

/* `count` values (at most the room) were put into every column's span:
 * full chunks are submitted, finished ones written. After the last value
 * of the columns, the partial chunk is submitted and everything written. */
int spi_event_chunks_advance(spi_event_chunks *chunks, size_t count);

/* Store the current chunk of `column` as `bytes` already-encoded bytes
 * (scope-merge: an input's stored chunk, H5Dread_chunk, holding exactly the
 * values this chunk would get), in order with the pool's chunks, instead
 * of compressing it. Taken (*taken true) only at a chunk's start (no value
 * advanced into it yet), for a full chunk (not the padded last one), for a
 * column whose dataset has the layout spi_chunk_layout_of takes with
 * shuffle (so the caller's chunk, from a column of that layout with the
 * same chunk size and a filter mask of 0, decodes with this dataset's
 * filters to the same values), and for at most
 * spi_chunk_encoded_bound(chunk) bytes. Once taken, the column's span is
 * NULL until the chunk is submitted: the caller advances the chunk as
 * usual and writes no value of this column. The bytes are copied.
 * SP_OK (taken or not) or the first failure. */
int spi_event_chunks_put_encoded(spi_event_chunks *chunks, int column, const void *data,
                                 size_t bytes, bool *taken);

/* Elements per chunk of the columns (SPI_EVENT_CHUNK_ELEMENTS, or the
 * event count when smaller). */
size_t spi_event_chunks_chunk_elements(const spi_event_chunks *chunks);

/* Every value arrived and every chunk is in the file (the pool's threads
 * are then joined). SP_OK, or the first failure, or
 * SP_ERR_INVALID_ARGUMENT when values are missing. */
int spi_event_chunks_finish(spi_event_chunks *chunks);

/* Join the threads and free everything, on any path. NULL is a no-op. */
void spi_event_chunks_close(spi_event_chunks *chunks);

#endif /* SPI_H5_EVENT_CHUNKS_H */
