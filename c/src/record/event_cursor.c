/*
 * event_cursor.c - a thread's events from the spill file and memory
 * (event_cursor.h). A spilled entry the spill writer failed to write has
 * its chunk kept in memory (recorder.h spi_spilled_chunk.kept): it is
 * copied and converted like one read from the file, so it comes in the
 * same place of the order with the same times.
 */
#include "record/event_cursor.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cpus.h"
#include "util/error.h"
#include "util/threads.h"

bool spi_event_cursor_read_ahead = true;

/* ---- read-ahead --------------------------------------------------------------
 *
 * One helper per cursor reads the thread's spilled chunks in the walker's
 * order (the k-th one taken is spilled[k], or spilled[count - 1 - k]
 * backward) into a ring of SPI_EVENT_CURSOR_AHEAD buffers and converts
 * their times. The walker may hold the batch it was given until its next
 * request, so chunk k's buffer is refilled (with chunk k + AHEAD) only
 * once the walker asked for chunk k + 1: `released` counts the chunks the
 * walker is done with, `produced` the chunks ready. A read error travels
 * in its slot and ends the helper; the walker returns it in order. Why a
 * thread and not posix_fadvise or asynchronous I/O: the chunks are not in
 * the page cache, a WILLNEED hint runs the page-cache allocation and the
 * read submission on the caller (4% of a 20M-call finalize's CPU, perf),
 * and the buffered read then copies every byte once more; a direct read
 * on a helper costs the walker nothing. */
typedef struct ahead_slot {
    void *block;              /* spi_map_populated, page aligned */
    spi_event *events;        /* inside block */
    size_t count;
    int status;
} ahead_slot;

typedef struct spi_read_ahead {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    pthread_t thread;
    /* set before the helper starts, then read-only */
    const spi_spill *spill;
    const spi_spilled_chunk *spilled;
    size_t total;
    bool backward;
    bool convert;             /* spilled_raw_ends: times to convert */
    bool use_map;
    spi_tick_map map;         /* the session's, with a hint of its own */
    size_t slot_bytes;
    ahead_slot slots[SPI_EVENT_CURSOR_AHEAD];
    /* under lock */
    size_t produced;
    size_t released;
    bool stop;
    bool finished;            /* the helper returned */
    /* the walker's own */
    size_t taken;
} spi_read_ahead;

static size_t ahead_index(const spi_read_ahead *a, size_t k) {
    return a->backward ? a->total - 1 - k : k;
}

static int ahead_read(spi_read_ahead *a, ahead_slot *slot, const spi_spilled_chunk *s,
                      bool *direct) {
    size_t bytes = (size_t)s->count * sizeof(spi_event);
    slot->count = (size_t)s->count;
    if (s->kept) { /* the spill writer could not write it: still in memory */
        slot->events = slot->block;
        memcpy(slot->events, s->kept->events, bytes);
    } else {
        const void *data;
        int rc = spi_spill_read_block(a->spill, s->offset, bytes, slot->block, a->slot_bytes,
                                      direct, &data);
        if (rc != 0) return SP_ERR_OUTPUT;
        slot->events = (spi_event *)(uintptr_t)data;
    }
    if (a->convert) spi_event_convert_times(slot->events, slot->count, a->use_map ? &a->map : NULL);
    return SP_OK;
}

static void *ahead_main(void *argument) {
    spi_read_ahead *a = argument;
    (void)pthread_setname_np(pthread_self(), "sp-read");
    bool direct = true;
    for (size_t k = 0; k < a->total; k++) {
        pthread_mutex_lock(&a->lock);
        while (!a->stop && k - a->released >= SPI_EVENT_CURSOR_AHEAD)
            pthread_cond_wait(&a->changed, &a->lock);
        bool stop = a->stop;
        pthread_mutex_unlock(&a->lock);
        if (stop) break;
        ahead_slot *slot = &a->slots[k % SPI_EVENT_CURSOR_AHEAD];
        slot->status = ahead_read(a, slot, &a->spilled[ahead_index(a, k)], &direct);
        pthread_mutex_lock(&a->lock);
        a->produced = k + 1;
        pthread_cond_broadcast(&a->changed);
        pthread_mutex_unlock(&a->lock);
        if (slot->status != SP_OK) break;
    }
    pthread_mutex_lock(&a->lock);
    a->finished = true;
    pthread_cond_broadcast(&a->changed);
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

static void ahead_free(spi_read_ahead *a) {
    for (size_t i = 0; i < SPI_EVENT_CURSOR_AHEAD; i++)
        if (a->slots[i].block) spi_unmap(a->slots[i].block, a->slot_bytes);
    pthread_cond_destroy(&a->changed);
    pthread_mutex_destroy(&a->lock);
    spi_free(a);
}

/* The helper for the cursor's spilled chunks, or NULL (then the walker
 * reads them itself): none wanted, fewer than two chunks (nothing to
 * overlap), or no memory or thread. */
static spi_read_ahead *ahead_start(const spi_event_cursor *c) {
    const spi_thread *t = c->thread;
    /* SCOPE_PROFILER_WRITE_THREADS=1: finalize keeps to its own thread */
    if (!spi_event_cursor_read_ahead || t->spilled_count < 2 || !c->session->spill ||
        spi_write_threads() < 2)
        return NULL;
    spi_read_ahead *a = spi_calloc(1, sizeof *a);
    if (!a) return NULL;
    uint64_t largest = 0;
    for (size_t i = 0; i < t->spilled_count; i++)
        if (t->spilled[i].count > largest) largest = t->spilled[i].count;
    *a = (spi_read_ahead){.spill = c->session->spill, .spilled = t->spilled,
                          .total = t->spilled_count, .backward = c->backward,
                          .convert = c->session->spilled_raw_ends,
                          .use_map = c->session->spilled_map_live,
                          .slot_bytes = spi_spill_read_block_bytes((size_t)largest *
                                                                   sizeof(spi_event))};
    if (a->use_map) {
        a->map = c->session->spilled_map; /* anchors shared read-only; hint its own */
        a->map.hint = 0;
    }
    if (pthread_mutex_init(&a->lock, NULL) != 0) {
        spi_free(a);
        return NULL;
    }
    if (pthread_cond_init(&a->changed, NULL) != 0) {
        pthread_mutex_destroy(&a->lock);
        spi_free(a);
        return NULL;
    }
    for (size_t i = 0; i < SPI_EVENT_CURSOR_AHEAD; i++) {
        if (!(a->slots[i].block = spi_map_populated(a->slot_bytes))) {
            ahead_free(a);
            return NULL;
        }
    }
    /* no signal of the program's is delivered to the helper */
    int rc = spi_thread_start_masked(&a->thread, NULL, ahead_main, a);
    if (rc != 0) {
        ahead_free(a);
        return NULL;
    }
    return a;
}

static void ahead_stop(spi_read_ahead *a) {
    pthread_mutex_lock(&a->lock);
    a->stop = true;
    pthread_cond_broadcast(&a->changed);
    pthread_mutex_unlock(&a->lock);
    pthread_join(a->thread, NULL);
    ahead_free(a);
}

/* The walker's next spilled chunk from the helper: the one before it is
 * given back first (its batch is no longer the walker's). */
static int ahead_next(spi_read_ahead *a, const spi_event **events, size_t *count) {
    pthread_mutex_lock(&a->lock);
    a->released = a->taken;
    pthread_cond_broadcast(&a->changed);
    while (a->produced <= a->taken && !a->finished) pthread_cond_wait(&a->changed, &a->lock);
    bool ready = a->produced > a->taken;
    pthread_mutex_unlock(&a->lock);
    if (!ready) return SP_ERR_OUTPUT; /* asked again after the error it returned */
    const ahead_slot *slot = &a->slots[a->taken % SPI_EVENT_CURSOR_AHEAD];
    a->taken++;
    if (slot->status != SP_OK) return slot->status;
    *events = slot->events;
    *count = slot->count;
    return SP_OK;
}

/* Start the helper once, when the walker is about to need spilled chunks. */
static void ahead_maybe_start(spi_event_cursor *c) {
    if (c->ahead_tried) return;
    c->ahead_tried = true;
    c->ahead = ahead_start(c);
}

void spi_event_cursor_open(spi_event_cursor *c, spi_session *session, spi_thread *thread,
                           bool release) {
    *c = (spi_event_cursor){.session = session, .thread = thread, .release = release,
                            .chunk = thread->head};
    if (session->spilled_map_live) session->spilled_map.hint = 0;
}

void spi_event_cursor_open_backward(spi_event_cursor *c, spi_session *session,
                                    spi_thread *thread, bool release) {
    *c = (spi_event_cursor){.session = session, .thread = thread, .release = release,
                            .backward = true, .next_spilled = thread->spilled_count};
    if (session->spilled_map_live) session->spilled_map.hint = 0;
    size_t count = 0;
    for (const spi_chunk *k = thread->head; k; k = k->next) count++;
    if (!count) return;
    c->chunks = spi_malloc(count * sizeof *c->chunks);
    if (!c->chunks) {
        c->status = SP_ERR_OUT_OF_MEMORY;
        return;
    }
    for (spi_chunk *k = thread->head; k; k = k->next) c->chunks[c->chunks_left++] = k;
}

/* Forward, the chunk read last is the head; backward, it is the tail. */
static void release_previous(spi_event_cursor *c) {
    if (!c->release || !c->previous) return;
    spi_thread *t = c->thread;
    if (c->backward) {
        t->tail = c->chunks_left ? c->chunks[c->chunks_left - 1] : NULL;
        if (t->tail) t->tail->next = NULL;
        else t->head = NULL;
    } else {
        t->head = c->previous->next;
        if (!t->head) t->tail = NULL;
    }
    spi_chunk_unmap(c->previous); /* an arena copy stays: the session frees it */
    c->previous = NULL;
}

static int read_spilled(spi_event_cursor *c, size_t index, const spi_event **events,
                        size_t *count) {
    const spi_spilled_chunk *s = &c->thread->spilled[index];
    if (s->count > c->buffer_capacity) {
        spi_free(c->buffer);
        c->buffer = spi_malloc((size_t)s->count * sizeof *c->buffer);
        c->buffer_capacity = c->buffer ? (size_t)s->count : 0;
        if (!c->buffer) return SP_ERR_OUT_OF_MEMORY;
    }
    if (s->kept) /* the spill writer could not write it: still in memory */
        memcpy(c->buffer, s->kept->events, (size_t)s->count * sizeof *c->buffer);
    else if (spi_spill_read(c->session->spill, s->offset, c->buffer,
                            (size_t)s->count * sizeof *c->buffer) != 0)
        return SP_ERR_OUTPUT;
    /* the same conversion recorder_ticks.c gave the memory chunks */
    if (c->session->spilled_raw_ends)
        spi_event_convert_times(c->buffer, (size_t)s->count,
                                c->session->spilled_map_live ? &c->session->spilled_map : NULL);
    *events = c->buffer;
    *count = (size_t)s->count;
    return SP_OK;
}

static int next_backward(spi_event_cursor *c, const spi_event **events, size_t *count) {
    while (c->chunks_left) {
        spi_chunk *chunk = c->chunks[--c->chunks_left];
        c->previous = chunk;
        /* the last memory chunk: the spilled ones are next, read them ahead
         * while the walker is in this one */
        if (!c->chunks_left) ahead_maybe_start(c);
        if (chunk->used) {
            *events = chunk->events;
            *count = chunk->used;
            return SP_OK;
        }
        release_previous(c);
    }
    if (!c->next_spilled) {
        if (c->ahead) ahead_stop(c->ahead); /* its last batch was given back */
        c->ahead = NULL;
        return SP_OK;
    }
    ahead_maybe_start(c);
    size_t index = --c->next_spilled;
    if (c->ahead) return ahead_next(c->ahead, events, count);
    if (index) {
        const spi_spilled_chunk *before = &c->thread->spilled[index - 1];
        spi_spill_will_read(c->session->spill, before->offset, (size_t)before->count * sizeof(spi_event));
    }
    return read_spilled(c, index, events, count);
}

int spi_event_cursor_next(spi_event_cursor *c, const spi_event **events, size_t *count) {
    *events = NULL;
    *count = 0;
    release_previous(c);
    if (c->status != SP_OK) return c->status;
    if (c->backward) return next_backward(c, events, count);
    if (c->next_spilled < c->thread->spilled_count) {
        ahead_maybe_start(c);
        size_t index = c->next_spilled++;
        if (c->ahead) return ahead_next(c->ahead, events, count);
        return read_spilled(c, index, events, count);
    }
    if (c->ahead) ahead_stop(c->ahead); /* the memory chunks now */
    c->ahead = NULL;
    while (c->chunk && c->chunk->used == 0) {
        c->previous = c->chunk;
        c->chunk = c->chunk->next;
        release_previous(c);
    }
    if (!c->chunk) return SP_OK;
    *events = c->chunk->events;
    *count = c->chunk->used;
    c->previous = c->chunk;
    c->chunk = c->chunk->next;
    return SP_OK;
}

void spi_event_cursor_close(spi_event_cursor *c) {
    release_previous(c);
    if (c->ahead) ahead_stop(c->ahead);
    c->ahead = NULL;
    spi_free(c->buffer);
    c->buffer = NULL;
    spi_free(c->chunks);
    c->chunks = NULL;
}
