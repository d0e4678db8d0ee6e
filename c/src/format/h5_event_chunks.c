/*
 * h5_event_chunks.c - event columns filled chunk by chunk and written with
 * H5Dwrite_chunk after the column pool compressed them (see
 * h5_event_chunks.h).
 *
 * Why not HDF5's own pipeline: it filters a chunk on the thread that
 * writes, when the chunk leaves the cache, so finalize compressed every
 * column on one core. Here HDF5 only receives finished chunks, in the
 * order of the file (chunk k of every column before chunk k + 1), which
 * is also the order the old cache evicted them.
 *
 * Chunks put already encoded (scope-merge's copies of an input's stored
 * chunks) skip the pool but keep that order: each submitted chunk gets a
 * sequence number, and an encoded chunk submitted while older pooled
 * chunks are still compressing waits in a small queue until the sink has
 * stored them (the sink stores the waiting ones older than each pooled
 * chunk before it). The queue is bounded: when it is full the pool is
 * drained first, so memory stays fixed (queue entries grow to the encoded
 * bound at most).
 */
#include "format/h5_event_chunks.h"

#include <string.h>

#include "format/h5_chunk_deflate.h"
#include "format/h5_chunk_inflate.h"
#include "format/h5_column_pool.h"
#include "format/h5_file_parts.h"
#include "scope_profiler.h"
#include "util/alloc.h"

/* Encoded chunks waiting for older pooled chunks: at most this many. */
#define WAITING_MAX (2 * SPI_EV_COUNT)
/* Pooled chunks in flight are at most the pool's slots; the ring of their
 * sequence numbers holds this many (more in flight: drained first). */
#define POOLED_RING 64

typedef struct encoded_chunk {
    uint64_t seq;
    int column;
    uint64_t index;
    unsigned char *data;
    size_t bytes, capacity;
} encoded_chunk;

struct spi_event_chunks {
    hid_t datasets[SPI_EV_COUNT];
    int64_t *filling[SPI_EV_COUNT]; /* the column's current chunk, NULL for absent columns */
    uint64_t event_count;
    size_t chunk_elements;
    size_t filled;                  /* values in the current chunks */
    uint64_t chunk_index;           /* of the current chunks */
    uint64_t written;               /* values submitted, whole chunks */
    int failed;
    bool finished;
    spi_column_pool *pool;

    /* chunks put encoded (spi_event_chunks_put_encoded) */
    bool copyable[SPI_EV_COUNT];    /* the dataset's layout takes them */
    bool encoded[SPI_EV_COUNT];     /* the current chunk of the column is */
    encoded_chunk current[SPI_EV_COUNT]; /* its bytes until submitted */
    size_t encoded_limit;           /* largest encoded chunk taken */
    uint64_t next_seq;              /* of the next submitted chunk */
    uint64_t pooled_seq[POOLED_RING]; /* pooled chunks not yet stored, oldest first */
    uint64_t pooled_head, pooled_tail;
    encoded_chunk waiting[WAITING_MAX]; /* ring, oldest first */
    size_t waiting_head, waiting_count;
};

bool spi_event_chunks_wanted(uint64_t event_count) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return spi_h5_event_columns_chunked(event_count);
#else
    (void)event_count; /* the file is little-endian: let HDF5 convert */
    return false;
#endif
}

static int write_chunk(spi_event_chunks *chunks, int column, uint64_t index, const void *data,
                       size_t bytes) {
    hsize_t offset[1] = {(hsize_t)index * chunks->chunk_elements};
    return H5Dwrite_chunk(chunks->datasets[column], H5P_DEFAULT, 0, offset, bytes, data) < 0
               ? SP_ERR_HDF5
               : SP_OK;
}

/* Store the waiting encoded chunks older than seq (all: UINT64_MAX). */
static int store_waiting(spi_event_chunks *chunks, uint64_t seq) {
    while (chunks->waiting_count) {
        encoded_chunk *e = &chunks->waiting[chunks->waiting_head];
        if (e->seq >= seq) break;
        int status = write_chunk(chunks, e->column, e->index, e->data, e->bytes);
        if (status != SP_OK) return status;
        chunks->waiting_head = (chunks->waiting_head + 1) % WAITING_MAX;
        chunks->waiting_count--;
    }
    return SP_OK;
}

/* The pool's sink: one compressed chunk into its dataset, after the
 * encoded chunks submitted before it. */
static int store_chunk(void *context, const spi_encoded_chunk *chunk) {
    spi_event_chunks *chunks = context;
    uint64_t seq = chunks->pooled_seq[chunks->pooled_head % POOLED_RING];
    chunks->pooled_head++;
    int status = store_waiting(chunks, seq);
    return status == SP_OK ? write_chunk(chunks, chunk->column, chunk->index, chunk->data,
                                         chunk->bytes)
                           : status;
}

/* Every pooled chunk and then every waiting one in the file. */
static int drain_all(spi_event_chunks *chunks) {
    int status = spi_column_pool_drain(chunks->pool);
    return status == SP_OK ? store_waiting(chunks, UINT64_MAX) : status;
}

/* One chunk into the pool, its sequence number noted for the sink. */
static int submit_pooled(spi_event_chunks *chunks, int column, size_t bytes) {
    if (chunks->pooled_tail - chunks->pooled_head == POOLED_RING) {
        int status = drain_all(chunks);
        if (status != SP_OK) return status;
    }
    chunks->pooled_seq[chunks->pooled_tail++ % POOLED_RING] = chunks->next_seq++;
    return spi_column_pool_submit(chunks->pool, (void **)&chunks->filling[column], bytes, column,
                                  chunks->chunk_index);
}

/* The encoded current chunk of `column`: stored now when nothing older
 * waits, else queued behind the pooled chunks (the entry takes the bytes
 * and gives its old buffer back to `current`). */
static int submit_encoded(spi_event_chunks *chunks, int column) {
    encoded_chunk *e = &chunks->current[column];
    e->seq = chunks->next_seq++;
    e->column = column;
    e->index = chunks->chunk_index;
    if (chunks->waiting_count == WAITING_MAX) {
        int status = drain_all(chunks);
        if (status != SP_OK) return status;
    }
    if (chunks->pooled_tail == chunks->pooled_head) {
        int status = store_waiting(chunks, UINT64_MAX);
        return status == SP_OK ? write_chunk(chunks, column, e->index, e->data, e->bytes) : status;
    }
    encoded_chunk *slot =
        &chunks->waiting[(chunks->waiting_head + chunks->waiting_count) % WAITING_MAX];
    encoded_chunk spare = *slot;
    *slot = *e;
    e->data = spare.data;
    e->capacity = spare.capacity;
    chunks->waiting_count++;
    return SP_OK;
}

int spi_event_chunks_open(spi_event_chunks **out, const hid_t datasets[SPI_EV_COUNT],
                          uint64_t event_count, unsigned threads) {
    *out = NULL;
    spi_event_chunks *chunks = spi_calloc(1, sizeof *chunks);
    if (!chunks) return SP_ERR_OUT_OF_MEMORY;
    chunks->event_count = event_count;
    chunks->chunk_elements = event_count < SPI_EVENT_CHUNK_ELEMENTS ? (size_t)event_count
                                                                    : SPI_EVENT_CHUNK_ELEMENTS;
    chunks->failed = SP_OK;
    unsigned columns = 0;
    for (int c = 0; c < SPI_EV_COUNT; c++) {
        chunks->datasets[c] = datasets[c];
        if (datasets[c] >= 0) columns++;
    }
    int status = spi_column_pool_open(&chunks->pool, threads, columns,
                                      chunks->chunk_elements * sizeof(int64_t), sizeof(int64_t),
                                      store_chunk, chunks);
    chunks->encoded_limit = spi_chunk_encoded_bound(chunks->chunk_elements * sizeof(int64_t));
    for (int c = 0; c < SPI_EV_COUNT; c++) {
        spi_chunk_layout layout;
        chunks->copyable[c] = datasets[c] >= 0 && spi_chunk_layout_of(datasets[c], &layout) &&
                              layout.shuffled && layout.chunk_elements == chunks->chunk_elements &&
                              layout.length == event_count;
    }
    for (int c = 0; c < SPI_EV_COUNT && status == SP_OK; c++)
        if (datasets[c] >= 0 && !(chunks->filling[c] = spi_column_pool_buffer(chunks->pool)))
            status = SP_ERR_OUT_OF_MEMORY;
    if (status != SP_OK) {
        spi_event_chunks_close(chunks);
        return status;
    }
    *out = chunks;
    return SP_OK;
}

int64_t *spi_event_chunks_span(spi_event_chunks *chunks, int column, size_t *room) {
    *room = chunks->chunk_elements - chunks->filled;
    return chunks->encoded[column] ? NULL : chunks->filling[column] + chunks->filled;
}

size_t spi_event_chunks_chunk_elements(const spi_event_chunks *chunks) {
    return chunks->chunk_elements;
}

int spi_event_chunks_put_encoded(spi_event_chunks *chunks, int column, const void *data,
                                 size_t bytes, bool *taken) {
    *taken = false;
    if (chunks->failed != SP_OK) return chunks->failed;
    if (column < 0 || column >= SPI_EV_COUNT || !chunks->filling[column] ||
        !chunks->copyable[column] || chunks->filled != 0 || chunks->finished ||
        chunks->event_count - chunks->written < chunks->chunk_elements || bytes == 0 ||
        bytes > chunks->encoded_limit)
        return SP_OK;
    encoded_chunk *e = &chunks->current[column];
    if (e->capacity < bytes) {
        /* As large as this chunk, not the bound: copied chunks are mostly
         * small, and the buffers move into the waiting queue and back. */
        unsigned char *grown = spi_malloc(bytes);
        if (!grown) return chunks->failed = SP_ERR_OUT_OF_MEMORY;
        spi_free(e->data);
        e->data = grown;
        e->capacity = bytes;
    }
    memcpy(e->data, data, bytes);
    e->bytes = bytes;
    chunks->encoded[column] = true;
    *taken = true;
    return SP_OK;
}

/* Submit the current chunk of every column (raw_bytes: the whole chunk,
 * the partial last one padded with zeros). */
static int submit_chunks(spi_event_chunks *chunks) {
    size_t bytes = chunks->chunk_elements * sizeof(int64_t);
    if (chunks->filled < chunks->chunk_elements)
        for (int c = 0; c < SPI_EV_COUNT; c++)
            if (chunks->filling[c])
                memset(chunks->filling[c] + chunks->filled, 0,
                       (chunks->chunk_elements - chunks->filled) * sizeof(int64_t));
    for (int c = 0; c < SPI_EV_COUNT && chunks->failed == SP_OK; c++) {
        if (!chunks->filling[c]) continue;
        chunks->failed = chunks->encoded[c] ? submit_encoded(chunks, c)
                                            : submit_pooled(chunks, c, bytes);
        chunks->encoded[c] = false;
    }
    chunks->written += chunks->filled;
    chunks->filled = 0;
    chunks->chunk_index++;
    return chunks->failed;
}

int spi_event_chunks_advance(spi_event_chunks *chunks, size_t count) {
    if (chunks->failed != SP_OK) return chunks->failed;
    if (count > chunks->chunk_elements - chunks->filled)
        return chunks->failed = SP_ERR_INVALID_ARGUMENT;
    chunks->filled += count;
    bool last = chunks->written + chunks->filled == chunks->event_count;
    if (chunks->filled == chunks->chunk_elements || (last && chunks->filled))
        submit_chunks(chunks);
    if (last && chunks->failed == SP_OK) chunks->failed = spi_event_chunks_finish(chunks);
    return chunks->failed;
}

int spi_event_chunks_finish(spi_event_chunks *chunks) {
    if (chunks->failed != SP_OK || chunks->finished) return chunks->failed;
    if (chunks->written + chunks->filled != chunks->event_count)
        return chunks->failed = SP_ERR_INVALID_ARGUMENT;
    if (chunks->filled) submit_chunks(chunks);
    if (chunks->failed == SP_OK) chunks->failed = drain_all(chunks);
    /* The threads are not needed past the last chunk: join them now. */
    spi_column_pool_close(chunks->pool);
    chunks->pool = NULL;
    for (int c = 0; c < SPI_EV_COUNT; c++) chunks->filling[c] = NULL; /* freed by the pool */
    chunks->finished = chunks->failed == SP_OK;
    return chunks->failed;
}

void spi_event_chunks_close(spi_event_chunks *chunks) {
    if (!chunks) return;
    spi_column_pool_close(chunks->pool);
    for (int c = 0; c < SPI_EV_COUNT; c++) spi_free(chunks->current[c].data);
    for (size_t i = 0; i < WAITING_MAX; i++) spi_free(chunks->waiting[i].data);
    spi_free(chunks);
}
