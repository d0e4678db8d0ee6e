/*
 * h5_column_pool.c - the threads that compress event chunks at finalize
 * (see h5_column_pool.h).
 *
 * A ring of slots, numbered by three counters under one mutex: `submitted`
 * (chunks handed in), `claimed` (chunks a thread started to compress) and
 * `sunk` (chunks handed to the sink, always the oldest first). Threads
 * claim chunks in submission order but may finish them in any order; the
 * sink waits for the oldest. A chunk takes a millisecond or so to
 * compress, so one mutex and two condition variables cost nothing next to
 * the work they hand out.
 *
 * Why the producer helps: on a machine with few cores the producer (the
 * k-way merge of a spilled trace, the delta encoding, the HDF5 writes)
 * and the helpers share the cores. A producer that only waited would leave
 * its core idle whenever the slots are full; compressing the next waiting
 * chunk instead keeps every core busy, and never reorders what is written.
 */
#include "format/h5_column_pool.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/h5_chunk_deflate.h"
#include "scope_profiler.h"
#include "util/alloc.h"
#include "util/cpus.h"
#include "util/diag.h"
#include "util/threads.h"


typedef enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_ENCODING, SLOT_DONE } slot_state;

typedef struct pool_slot {
    slot_state state;
    void *raw;             /* the submitted chunk (or a spare buffer when free) */
    size_t raw_bytes;
    void *encoded;         /* spi_chunk_encoded_bound(chunk_bytes) */
    size_t encoded_bytes;
    int status;            /* of the compression */
    int column;
    uint64_t index;
} pool_slot;

struct spi_column_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;   /* helpers: a chunk was submitted, or stop */
    pthread_cond_t done;   /* producer: a chunk was compressed */
    bool stop;
    uint64_t submitted, claimed, sunk;
    int failed;            /* first failure, SP_OK while none */

    unsigned slot_count;
    pool_slot *slots;
    size_t chunk_bytes, element_bytes, encoded_capacity;
    void **buffers;        /* every raw buffer the pool made, whoever holds it */
    unsigned buffer_count, buffer_capacity;

    spi_chunk_sink sink;
    void *context;
    spi_chunk_encoder *producer_encoder;

    unsigned helpers_asked; /* encoders made for helpers */
    unsigned helper_count;  /* helpers running */
    pthread_t *helpers;
    spi_chunk_encoder **helper_encoders;
};

/* ---- compressing ------------------------------------------------------------- */

static void encode_slot(spi_column_pool *pool, spi_chunk_encoder *encoder, pool_slot *slot) {
    slot->status = spi_chunk_encode(encoder, slot->raw, slot->raw_bytes, pool->element_bytes,
                                    slot->encoded, pool->encoded_capacity, &slot->encoded_bytes);
}

/* Claim the oldest queued chunk and compress it with `encoder`; the lock
 * is held on entry and on return, released while compressing. */
static void compress_next(spi_column_pool *pool, spi_chunk_encoder *encoder) {
    pool_slot *slot = &pool->slots[pool->claimed % pool->slot_count];
    pool->claimed++;
    slot->state = SLOT_ENCODING;
    pthread_mutex_unlock(&pool->lock);
    encode_slot(pool, encoder, slot);
    pthread_mutex_lock(&pool->lock);
    slot->state = SLOT_DONE;
    pthread_cond_signal(&pool->done);
}

typedef struct helper_start {
    spi_column_pool *pool;
    spi_chunk_encoder *encoder;
} helper_start;

static void *helper_main(void *arg) {
    spi_column_pool *pool = ((helper_start *)arg)->pool;
    spi_chunk_encoder *encoder = ((helper_start *)arg)->encoder;
    spi_free(arg);
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->stop && pool->claimed == pool->submitted)
            pthread_cond_wait(&pool->work, &pool->lock);
        if (pool->stop) break;
        compress_next(pool, encoder);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* ---- sinking, oldest first ----------------------------------------------------- */

/* Wait for the oldest submitted chunk (compressing waiting chunks on this
 * thread meanwhile), sink it and free its slot. */
static int sink_oldest(spi_column_pool *pool) {
    pthread_mutex_lock(&pool->lock);
    pool_slot *slot = &pool->slots[pool->sunk % pool->slot_count];
    while (slot->state != SLOT_DONE) {
        if (pool->claimed < pool->submitted) compress_next(pool, pool->producer_encoder);
        else pthread_cond_wait(&pool->done, &pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    int status = slot->status;
    if (status == SP_OK && pool->failed == SP_OK) {
        spi_encoded_chunk chunk = {.data = slot->encoded, .bytes = slot->encoded_bytes,
                                   .column = slot->column, .index = slot->index};
        status = pool->sink(pool->context, &chunk);
    }
    if (status != SP_OK && pool->failed == SP_OK) pool->failed = status;
    pthread_mutex_lock(&pool->lock);
    slot->state = SLOT_FREE;
    pool->sunk++;
    pthread_mutex_unlock(&pool->lock);
    return pool->failed;
}

/* Sink the chunks at the head of the ring that are already compressed,
 * without waiting for the others. */
static int sink_finished(spi_column_pool *pool) {
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        bool ready = pool->sunk < pool->submitted &&
                     pool->slots[pool->sunk % pool->slot_count].state == SLOT_DONE;
        pthread_mutex_unlock(&pool->lock);
        if (!ready || pool->failed != SP_OK) return pool->failed;
        if (sink_oldest(pool) != SP_OK) return pool->failed;
    }
}

/* ---- the pool ------------------------------------------------------------------- */

static void *new_buffer(spi_column_pool *pool) {
    if (pool->buffer_count == pool->buffer_capacity) {
        unsigned capacity = pool->buffer_capacity ? pool->buffer_capacity * 2 : 16;
        void **grown = spi_reallocarray(pool->buffers, capacity, sizeof *grown);
        if (!grown) return NULL;
        pool->buffers = grown;
        pool->buffer_capacity = capacity;
    }
    void *buffer = spi_malloc(pool->chunk_bytes);
    if (buffer) pool->buffers[pool->buffer_count++] = buffer;
    return buffer;
}

/* Start up to `wanted` helpers with every signal blocked (they inherit the
 * mask); the caller's mask is restored. */
static void start_helpers(spi_column_pool *pool, unsigned wanted) {
    for (unsigned i = 0; i < wanted; i++) {
        helper_start *start = spi_malloc(sizeof *start);
        if (!start) break;
        start->pool = pool;
        start->encoder = pool->helper_encoders[i];
        if (spi_thread_start_masked(&pool->helpers[i], NULL, helper_main, start) != 0) {
            spi_free(start);
            break;
        }
        pool->helper_count++;
    }
}

int spi_column_pool_open(spi_column_pool **out, unsigned threads, unsigned columns,
                         size_t chunk_bytes, size_t element_bytes, spi_chunk_sink sink,
                         void *context) {
    *out = NULL;
    if (threads < 1) threads = 1;
    if (threads > SPI_WRITE_THREADS_MAX) threads = SPI_WRITE_THREADS_MAX;
    unsigned helpers = threads - 1;
    spi_column_pool *pool = spi_calloc(1, sizeof *pool);
    if (!pool) return SP_ERR_OUT_OF_MEMORY;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->chunk_bytes = chunk_bytes;
    pool->element_bytes = element_bytes;
    pool->encoded_capacity = spi_chunk_encoded_bound(chunk_bytes);
    pool->sink = sink;
    pool->context = context;
    pool->failed = SP_OK;
    pool->helpers_asked = helpers;
    pool->slot_count = helpers ? 2 * helpers + (columns ? columns : 1) : 1;
    pool->slots = spi_calloc(pool->slot_count, sizeof *pool->slots);
    pool->helpers = spi_calloc(helpers ? helpers : 1, sizeof *pool->helpers);
    pool->helper_encoders = spi_calloc(helpers ? helpers : 1, sizeof *pool->helper_encoders);
    pool->producer_encoder = spi_chunk_encoder_create(SPI_POOL_DEFLATE_LEVEL, chunk_bytes);
    bool ok = pool->slots && pool->helpers && pool->helper_encoders && pool->producer_encoder;
    for (unsigned i = 0; ok && i < pool->slot_count; i++) {
        pool->slots[i].raw = new_buffer(pool);
        pool->slots[i].encoded = spi_malloc(pool->encoded_capacity);
        ok = pool->slots[i].raw && pool->slots[i].encoded;
    }
    for (unsigned i = 0; ok && i < helpers; i++)
        ok = (pool->helper_encoders[i] = spi_chunk_encoder_create(SPI_POOL_DEFLATE_LEVEL, chunk_bytes)) != NULL;
    if (!ok) {
        spi_column_pool_close(pool);
        return SP_ERR_OUT_OF_MEMORY;
    }
    start_helpers(pool, helpers);
    *out = pool;
    return SP_OK;
}

unsigned spi_column_pool_slots(const spi_column_pool *pool) { return pool->slot_count; }
unsigned spi_column_pool_helpers(const spi_column_pool *pool) { return pool->helper_count; }

void *spi_column_pool_buffer(spi_column_pool *pool) { return new_buffer(pool); }

int spi_column_pool_submit(spi_column_pool *pool, void **buffer, size_t raw_bytes, int column,
                           uint64_t index) {
    if (pool->failed != SP_OK) return pool->failed;
    if (raw_bytes > pool->chunk_bytes) return pool->failed = SP_ERR_INVALID_ARGUMENT;
    /* Every slot busy: the oldest goes to the file first. */
    if (pool->submitted - pool->sunk == pool->slot_count && sink_oldest(pool) != SP_OK)
        return pool->failed;
    pthread_mutex_lock(&pool->lock);
    pool_slot *slot = &pool->slots[pool->submitted % pool->slot_count];
    void *spare = slot->raw;
    slot->raw = *buffer;
    slot->raw_bytes = raw_bytes;
    slot->column = column;
    slot->index = index;
    slot->state = SLOT_QUEUED;
    pool->submitted++;
    if (pool->helper_count) pthread_cond_signal(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    *buffer = spare;
    /* Without helpers nobody else compresses: the chunk is done here. */
    if (pool->helper_count == 0) return sink_oldest(pool);
    return sink_finished(pool);
}

int spi_column_pool_drain(spi_column_pool *pool) {
    while (pool->failed == SP_OK && pool->sunk < pool->submitted) sink_oldest(pool);
    return pool->failed;
}

void spi_column_pool_close(spi_column_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = true;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->helper_count; i++) pthread_join(pool->helpers[i], NULL);
    for (unsigned i = 0; pool->helper_encoders && i < pool->helpers_asked; i++)
        spi_chunk_encoder_free(pool->helper_encoders[i]);
    for (unsigned i = 0; pool->slots && i < pool->slot_count; i++) spi_free(pool->slots[i].encoded);
    for (unsigned i = 0; i < pool->buffer_count; i++) spi_free(pool->buffers[i]);
    spi_chunk_encoder_free(pool->producer_encoder);
    spi_free(pool->buffers);
    spi_free(pool->slots);
    spi_free(pool->helpers);
    spi_free(pool->helper_encoders);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->work);
    pthread_mutex_destroy(&pool->lock);
    spi_free(pool);
}
