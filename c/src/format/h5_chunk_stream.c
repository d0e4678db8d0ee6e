/*
 * h5_chunk_stream.c - compressed event columns decoded ahead by helper
 * threads (see h5_chunk_stream.h for the division of work and the safety
 * rule).
 *
 * A stream is a small ring of slots, each one chunk: the reading thread
 * claims a slot for a chunk, fetches its stored bytes through HDF5 and
 * queues it on the pool; a helper (or the reading thread itself, when it
 * would otherwise wait) inflates it into the slot's decoded buffer. A slot
 * keeps its decoded chunk until it is claimed again (least recently used
 * first), so the reader's second pass over a row that fits the ring
 * (profile_build.c reads each row twice) decodes nothing again.
 *
 * Read-ahead: after a read of chunk i that follows the stream's previous
 * chunk (i or i - 1), chunks up to i + depth (and before the caller's
 * ahead_end) are fetched; after a jump only i + 1; and only into slots
 * that are empty or passed (see free_slot), so cursors that take turns on
 * different rows of one column (the views' merge by start time) never
 * lose a chunk they are in to another's read-ahead.
 *
 * Slot states: the reading thread moves a slot out of EMPTY/READY/REFUSED
 * (claiming it) and into QUEUED; a decoder moves it from QUEUED through
 * DECODING to READY or REFUSED. Every state change and every look at a
 * state that a helper may change happens under the pool's mutex, which
 * also orders the buffers: a helper reads `stored` after the reader's
 * enqueue and writes `decoded` before its own state change.
 */
#include "format/h5_chunk_stream.h"

#include <errno.h>
#include <libdeflate.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/h5_chunk_inflate.h"
#include "scope_profiler.h"
#include "util/alloc.h"
#include "util/cpus.h"
#include "util/diag.h"
#include "util/threads.h"

/* Helpers by default: more than four gain little on a reader that also
 * has the statistics to compute, and each costs a scratch chunk. */
#define READ_THREADS_DEFAULT_MAX 4u
/* Slots of a stream beyond its read-ahead: the chunk being copied out
 * and one kept for a read that crosses back into it. */
#define STREAM_SPARE_SLOTS 2u
/* At least as many decoded chunks as the 4 MiB chunk cache the store
 * gave each column (reader_calls.c) holds of the writers' 512 KiB
 * chunks: the statistics read each row twice, and a row of up to this
 * many chunks is then decoded once. */
#define STREAM_MIN_SLOTS 8u
#define STREAM_SLOTS_MAX (SPI_READ_THREADS_MAX + 1 + STREAM_SPARE_SLOTS)
_Static_assert(STREAM_SLOTS_MAX >= STREAM_MIN_SLOTS, "the ring must hold the minimum");
/* Helpers run libdeflate and the unshuffle only: a small stack keeps a
 * reader under its address-space limit (cli/cli_isolate.c). */
#define HELPER_STACK_BYTES ((size_t)1 << 20)

typedef enum slot_state {
    SLOT_EMPTY,    /* nothing in it */
    SLOT_QUEUED,   /* stored bytes fetched, waiting for a decoder */
    SLOT_DECODING, /* a decoder has it */
    SLOT_READY,    /* decoded */
    SLOT_REFUSED   /* not the promised layout: the range goes to H5Dread */
} slot_state;

typedef struct stream_slot {
    spi_chunk_stream *stream;
    uint64_t index;           /* chunk number, when `holds` */
    bool holds;               /* index is claimed (reading thread only) */
    bool passed;              /* a read went through its last value */
    uint64_t used;            /* the stream's clock at the last claim or use */
    slot_state state;         /* under the pool's lock */
    unsigned char *stored;    /* the chunk as stored */
    size_t stored_capacity;
    size_t stored_bytes;
    int64_t *decoded;         /* one chunk, allocated on first claim */
    struct stream_slot *next; /* in the pool's queue */
} stream_slot;

/* What one decoding thread owns. */
typedef struct decoder {
    spi_inflate_pool *pool;
    struct libdeflate_decompressor *inflater;
    unsigned char *scratch; /* the shuffled bytes of one chunk */
} decoder;

struct spi_inflate_pool {
    pthread_mutex_t lock;
    pthread_cond_t work; /* helpers: a slot was queued, or stop */
    pthread_cond_t done; /* reader: a slot was decoded */
    stream_slot *head, *tail;
    bool stop;
    size_t chunk_bytes;
    unsigned helper_count;
    pthread_t helpers[SPI_READ_THREADS_MAX];
    /* one per helper, and the last one the reading thread's */
    decoder decoders[SPI_READ_THREADS_MAX + 1];
};

struct spi_chunk_stream {
    hid_t dset;
    spi_chunk_layout layout;
    spi_inflate_pool *pool;
    unsigned depth;      /* chunks read ahead on a sequential read */
    unsigned slot_count; /* depth + STREAM_SPARE_SLOTS, at least STREAM_MIN_SLOTS */
    uint64_t clock;
    uint64_t last_index; /* chunk of the previous read, UINT64_MAX: none */
    stream_slot slots[STREAM_SLOTS_MAX];
};

/* ---- configuration --------------------------------------------------------- */

unsigned spi_read_threads(void) {
    static _Atomic _Bool said = 0;
    unsigned threads = spi_cpus_available();
    if (threads > READ_THREADS_DEFAULT_MAX) threads = READ_THREADS_DEFAULT_MAX;
    return spi_thread_count_setting("SCOPE_PROFILER_READ_THREADS",
                                    getenv("SCOPE_PROFILER_READ_THREADS"), threads, 0,
                                    SPI_READ_THREADS_MAX, &said);
}

bool spi_read_value_path(void) {
    const char *v = getenv("SCOPE_PROFILER_READ_VALUE_PATH");
    return v && v[0] && strcmp(v, "0") != 0;
}

/* ---- decoding ------------------------------------------------------------- */

static void decode_slot(decoder *d, stream_slot *slot) {
    const spi_chunk_stream *s = slot->stream;
    bool ok = spi_chunk_decode(d->inflater, &s->layout, slot->stored, slot->stored_bytes,
                               d->scratch, slot->decoded);
    pthread_mutex_lock(&d->pool->lock);
    slot->state = ok ? SLOT_READY : SLOT_REFUSED;
    pthread_cond_broadcast(&d->pool->done);
    pthread_mutex_unlock(&d->pool->lock);
}

/* The oldest queued slot, now DECODING; NULL when none. Lock held. */
static stream_slot *take_queued(spi_inflate_pool *pool) {
    stream_slot *slot = pool->head;
    if (!slot) return NULL;
    pool->head = slot->next;
    if (!pool->head) pool->tail = NULL;
    slot->next = NULL;
    slot->state = SLOT_DECODING;
    return slot;
}

static void *helper_main(void *arg) {
    decoder *d = arg;
    spi_inflate_pool *pool = d->pool;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (!pool->stop && !pool->head) pthread_cond_wait(&pool->work, &pool->lock);
        if (pool->stop) break;
        stream_slot *slot = take_queued(pool);
        pthread_mutex_unlock(&pool->lock);
        decode_slot(d, slot);
        pthread_mutex_lock(&pool->lock);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

/* Until `slot` is no longer in flight; the reading thread decodes queued
 * slots itself meanwhile (with no helpers it decodes every one). */
static void wait_slot(spi_inflate_pool *pool, stream_slot *slot) {
    pthread_mutex_lock(&pool->lock);
    while (slot->state == SLOT_QUEUED || slot->state == SLOT_DECODING) {
        stream_slot *mine = take_queued(pool);
        if (mine) {
            pthread_mutex_unlock(&pool->lock);
            decode_slot(&pool->decoders[pool->helper_count], mine);
            pthread_mutex_lock(&pool->lock);
        } else {
            pthread_cond_wait(&pool->done, &pool->lock);
        }
    }
    pthread_mutex_unlock(&pool->lock);
}

/* ---- the pool ------------------------------------------------------------- */

static void start_helpers(spi_inflate_pool *pool, unsigned wanted) {
    pthread_attr_t attr;
    bool attr_ok = pthread_attr_init(&attr) == 0;
    if (attr_ok) pthread_attr_setstacksize(&attr, HELPER_STACK_BYTES);
    /* Helpers block every signal (they inherit the mask): the program's
     * handlers never run on them. */
    for (unsigned i = 0; i < wanted; i++) {
        if (spi_thread_start_masked(&pool->helpers[i], attr_ok ? &attr : NULL, helper_main,
                                    &pool->decoders[i]) != 0)
            break;
        pool->helper_count++;
    }
    if (attr_ok) pthread_attr_destroy(&attr);
}

static void free_decoders(spi_inflate_pool *pool) {
    for (unsigned i = 0; i <= SPI_READ_THREADS_MAX; i++) {
        decoder *d = &pool->decoders[i];
        if (d->inflater) libdeflate_free_decompressor(d->inflater);
        spi_free(d->scratch);
    }
}

int spi_inflate_pool_open(spi_inflate_pool **out, unsigned threads, size_t chunk_bytes) {
    *out = NULL;
    if (threads > SPI_READ_THREADS_MAX) threads = SPI_READ_THREADS_MAX;
    spi_inflate_pool *pool = spi_calloc(1, sizeof *pool);
    if (!pool) return SP_ERR_OUT_OF_MEMORY;
    pool->chunk_bytes = chunk_bytes;
    /* Every decoder, the reading thread's last, allocated here: helpers
     * never call the allocator (no per-thread malloc arenas). */
    for (unsigned i = 0; i <= threads; i++) {
        decoder *d = &pool->decoders[i];
        d->pool = pool;
        if (!(d->inflater = libdeflate_alloc_decompressor()) ||
            !(d->scratch = spi_malloc(chunk_bytes ? chunk_bytes : 1))) {
            free_decoders(pool);
            spi_free(pool);
            return SP_ERR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->work, NULL);
    pthread_cond_init(&pool->done, NULL);
    start_helpers(pool, threads);
    /* The reading thread's decoder sits right after the helpers that did
     * start (fewer than asked when a thread could not be made). */
    if (pool->helper_count < threads) {
        decoder spare = pool->decoders[threads];
        pool->decoders[threads] = pool->decoders[pool->helper_count];
        pool->decoders[pool->helper_count] = spare;
    }
    *out = pool;
    return SP_OK;
}

unsigned spi_inflate_pool_helpers(const spi_inflate_pool *pool) {
    return pool ? pool->helper_count : 0;
}

void spi_inflate_pool_close(spi_inflate_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = true;
    pthread_cond_broadcast(&pool->work);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i < pool->helper_count; i++) pthread_join(pool->helpers[i], NULL);
    pthread_cond_destroy(&pool->done);
    pthread_cond_destroy(&pool->work);
    pthread_mutex_destroy(&pool->lock);
    free_decoders(pool);
    spi_free(pool);
}

/* ---- streams ------------------------------------------------------------- */

size_t spi_chunk_stream_chunk_bytes(hid_t dset) {
    spi_chunk_layout layout;
    if (spi_read_value_path() || !spi_chunk_layout_of(dset, &layout)) return 0;
    return spi_chunk_bytes(&layout);
}

int spi_chunk_stream_open(hid_t dset, spi_inflate_pool *pool, spi_chunk_stream **out) {
    *out = NULL;
    spi_chunk_layout layout;
    if (!pool || spi_read_value_path() || !spi_chunk_layout_of(dset, &layout) ||
        spi_chunk_bytes(&layout) > pool->chunk_bytes)
        return SP_OK;
    spi_chunk_stream *s = spi_calloc(1, sizeof *s);
    if (!s) return SP_ERR_OUT_OF_MEMORY;
    s->dset = dset;
    s->layout = layout;
    s->pool = pool;
    /* Read ahead one chunk per decoding thread, reader included: with no
     * helpers the reader decodes each chunk when it needs it. */
    s->depth = pool->helper_count ? pool->helper_count + 1 : 0;
    s->slot_count = s->depth + STREAM_SPARE_SLOTS;
    if (s->slot_count < STREAM_MIN_SLOTS) s->slot_count = STREAM_MIN_SLOTS;
    s->last_index = UINT64_MAX;
    for (unsigned i = 0; i < s->slot_count; i++) s->slots[i].stream = s;
    *out = s;
    return SP_OK;
}

int spi_chunk_stream_open_slots(hid_t dset, spi_inflate_pool *pool, unsigned slots,
                                spi_chunk_stream **out) {
    int status = spi_chunk_stream_open(dset, pool, out);
    if (status != SP_OK || !*out) return status;
    spi_chunk_stream *s = *out;
    /* Nothing is claimed yet: only the ring's length changes. */
    unsigned least = s->depth + STREAM_SPARE_SLOTS;
    if (slots < least) slots = least;
    if (slots > STREAM_SLOTS_MAX) slots = STREAM_SLOTS_MAX;
    s->slot_count = slots;
    for (unsigned i = 0; i < s->slot_count; i++) s->slots[i].stream = s;
    return SP_OK;
}

void spi_chunk_stream_set_dataset(spi_chunk_stream *s, hid_t dset) {
    if (s) s->dset = dset; /* fetches are synchronous: nothing refers to the old one */
}

/* The slot holding chunk `index` (in any state), NULL when none. */
static stream_slot *find_slot(spi_chunk_stream *s, uint64_t index) {
    for (unsigned i = 0; i < s->slot_count; i++)
        if (s->slots[i].holds && s->slots[i].index == index) return &s->slots[i];
    return NULL;
}

/* A slot to claim: an empty one, else the least recently used passed
 * one, else (unless passed_only) the least recently used one, of those
 * not in flight and not used since `pinned_from` (the chunk being copied
 * out and those read ahead for it); NULL when there is none.
 *
 * Passed chunks go first because readers go forward: several cursors
 * taking turns (the views' merge by start time) each leave one chunk
 * half read, which they come back to, and the chunks behind them, which
 * they do not. Plain LRU gave those up alike and decoded most chunks
 * twice in such a merge. Read-ahead takes only empty or passed slots, so
 * it never pushes out a chunk a cursor is still in. */
static stream_slot *free_slot(spi_chunk_stream *s, uint64_t pinned_from, bool passed_only) {
    stream_slot *best = NULL;
    pthread_mutex_lock(&s->pool->lock);
    for (unsigned i = 0; i < s->slot_count; i++) {
        stream_slot *slot = &s->slots[i];
        if (slot->state == SLOT_QUEUED || slot->state == SLOT_DECODING) continue;
        if (!slot->holds) {
            best = slot;
            break;
        }
        if (slot->used >= pinned_from || (passed_only && !slot->passed)) continue;
        if (!best || (slot->passed && !best->passed) ||
            (slot->passed == best->passed && slot->used < best->used))
            best = slot;
    }
    if (best) {
        best->state = SLOT_EMPTY;
        best->holds = false;
    }
    pthread_mutex_unlock(&s->pool->lock);
    return best;
}

/* Claim a slot for chunk `index`, fetch it and queue it (or mark it
 * refused). *slot NULL when every slot is in flight. SP_OK or
 * SP_ERR_OUT_OF_MEMORY. */
static int start_chunk(spi_chunk_stream *s, uint64_t index, uint64_t pinned_from,
                       bool passed_only, stream_slot **out) {
    *out = NULL;
    stream_slot *slot = free_slot(s, pinned_from, passed_only);
    if (!slot) return SP_OK;
    size_t bytes = spi_chunk_bytes(&s->layout);
    if (!slot->decoded && !(slot->decoded = spi_malloc(bytes))) return SP_ERR_OUT_OF_MEMORY;
    spi_chunk_fetch_result fetched = spi_chunk_fetch(s->dset, &s->layout, index, &slot->stored,
                                                     &slot->stored_capacity, &slot->stored_bytes);
    if (fetched == SPI_CHUNK_NO_MEMORY) return SP_ERR_OUT_OF_MEMORY;
    /* Only now does the slot hold the chunk: a failure above leaves it
     * empty. */
    slot->index = index;
    slot->holds = true;
    slot->passed = false;
    slot->used = ++s->clock;
    *out = slot;
    spi_inflate_pool *pool = s->pool;
    pthread_mutex_lock(&pool->lock);
    if (fetched == SPI_CHUNK_TO_HDF5) {
        slot->state = SLOT_REFUSED;
    } else {
        slot->state = SLOT_QUEUED;
        if (pool->tail) pool->tail->next = slot;
        else pool->head = slot;
        pool->tail = slot;
        if (pool->helper_count) pthread_cond_signal(&pool->work);
    }
    pthread_mutex_unlock(&pool->lock);
    return SP_OK;
}

/* Fetch chunks after `index` that are not in the stream yet, at most
 * `ahead` of them and none from `limit` (a chunk number) on. Stops
 * quietly when the slots are all in flight or memory runs short: read-
 * ahead is an optimisation. */
static void read_ahead(spi_chunk_stream *s, uint64_t index, unsigned ahead, uint64_t limit,
                       uint64_t pinned_from) {
    for (uint64_t next = index + 1; next < limit && next <= index + ahead; next++) {
        stream_slot *slot = find_slot(s, next);
        if (slot) {
            slot->used = ++s->clock; /* pinned too: needed soon */
            continue;
        }
        if (start_chunk(s, next, pinned_from, true, &slot) != SP_OK || !slot) return;
    }
}

int spi_chunk_stream_read(spi_chunk_stream *s, uint64_t pos, uint64_t count, uint64_t ahead_end,
                          int64_t *out, bool *done) {
    *done = false;
    uint64_t length = s ? s->layout.length : 0;
    if (!s || count == 0 || pos > length || count > length - pos) return SP_OK;
    if (ahead_end > length) ahead_end = length;
    if (ahead_end < pos + count) ahead_end = pos + count;
    uint64_t chunk = s->layout.chunk_elements;
    uint64_t limit = (ahead_end + chunk - 1) / chunk; /* first chunk not to read ahead */
    for (uint64_t copied = 0; copied < count;) {
        uint64_t at = pos + copied, index = at / chunk, within = at % chunk;
        /* Slots used from here on are not given up for read-ahead. */
        uint64_t pinned_from = s->clock + 1;
        stream_slot *slot = find_slot(s, index);
        if (slot) slot->used = ++s->clock;
        while (!slot) {
            int status = start_chunk(s, index, pinned_from, false, &slot);
            if (status != SP_OK) return status;
            /* every slot in flight (none is pinned yet): wait for one */
            if (!slot) wait_slot(s->pool, &s->slots[0]);
        }
        bool sequential = s->last_index != UINT64_MAX &&
                          (index == s->last_index || index == s->last_index + 1);
        read_ahead(s, index, sequential ? s->depth : (s->depth ? 1u : 0u), limit, pinned_from);
        s->last_index = index;
        wait_slot(s->pool, slot);
        pthread_mutex_lock(&s->pool->lock);
        bool refused = slot->state == SLOT_REFUSED;
        pthread_mutex_unlock(&s->pool->lock);
        if (refused) return SP_OK; /* HDF5 decides about the whole range */
        uint64_t n = chunk - within;
        if (n > count - copied) n = count - copied;
        memcpy(out + copied, slot->decoded + within, (size_t)n * sizeof *out);
        copied += n;
        if (within + n == chunk || at + n == length) slot->passed = true;
    }
    *done = true;
    return SP_OK;
}

void spi_chunk_stream_close(spi_chunk_stream *s) {
    if (!s) return;
    for (unsigned i = 0; i < s->slot_count; i++) {
        stream_slot *slot = &s->slots[i];
        wait_slot(s->pool, slot); /* a helper may still hold it */
        spi_free(slot->stored);
        spi_free(slot->decoded);
    }
    spi_free(s);
}
