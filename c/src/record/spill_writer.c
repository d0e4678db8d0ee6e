/*
 * spill_writer.c - the session's spill writer thread (spill_writer.h).
 *
 * A FIFO of handed-over chunks, a free list of written ones and a list of
 * failed ones, all under one mutex. The queue is a list of small entries
 * (chunk, thread, index, offset) allocated at hand-over: the chunk's own
 * header cannot carry them without growing every chunk, and one
 * allocation per ~87,000 events is nothing beside the write.
 *
 * Why a failed chunk is kept rather than dropped: its events are recorded
 * already and counted within the limit; keeping them costs no memory that
 * was not counted, and the file then holds every call recorded before the
 * failure, exactly as when a recording thread's own write fails (its
 * chunks stay in memory too).
 */
#include "record/spill_writer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/error.h"
#include "util/threads.h"
#include "record/recorder_state.h"
#include "record/spill.h"

typedef struct pending_chunk {
    struct pending_chunk *next;
    spi_chunk *chunk;
    spi_thread *thread;
    size_t index;          /* of the chunk's entry in thread->spilled */
    uint64_t block_offset; /* of the chunk's block (spill.h): its header */
    size_t block_bytes;
} pending_chunk;

struct spi_spill_writer {
    spi_spill *spill;
    const char *label;
    size_t limit_bytes;
    pthread_mutex_t lock;
    pthread_cond_t work;            /* a chunk queued, or stopping */
    pthread_cond_t done;            /* a chunk written or failed */
    pthread_t thread;
    bool started;                   /* the thread runs (joined at finish) */
    bool stopping;
    bool failed;                    /* a write failed: nothing more is written */
    pending_chunk *queue_head, *queue_tail;
    pending_chunk *failed_chunks;   /* kept, waiting for their thread's entry */
    spi_chunk *free_chunks;         /* written, full size, `used` 0 */
    /* the free list's length, read without the lock by
     * spi_spill_writer_take_free so an empty list costs one load */
    atomic_size_t free_count;
};

bool spi_spill_writer_wanted(void) {
    const char *value = getenv("SCOPE_PROFILER_SPILL_THREAD");
    if (!value || !*value) return true;
    static const char *const off[] = {"0", "no", "off", "false"};
    static const char *const on[] = {"1", "yes", "on", "true"};
    for (size_t i = 0; i < 4; i++)
        if (strcasecmp(value, off[i]) == 0) return false;
    for (size_t i = 0; i < 4; i++)
        if (strcasecmp(value, on[i]) == 0) return true;
    static atomic_bool said = false; /* once a process, not at every session */
    if (!atomic_exchange(&said, true))
        spi_diag("SCOPE_PROFILER_SPILL_THREAD=%s is not 0 or 1; using the spill writer thread",
                 value);
    return true;
}

spi_spill_writer *spi_spill_writer_create(spi_spill *spill, const char *label, size_t limit_bytes) {
    spi_spill_writer *w = spi_calloc(1, sizeof *w);
    if (!w) return NULL;
    w->spill = spill;
    w->label = label;
    w->limit_bytes = limit_bytes;
    if (pthread_mutex_init(&w->lock, NULL) != 0) goto fail_mutex;
    if (pthread_cond_init(&w->work, NULL) != 0) goto fail_work;
    if (pthread_cond_init(&w->done, NULL) != 0) goto fail_done;
    return w;
fail_done:
    pthread_cond_destroy(&w->work);
fail_work:
    pthread_mutex_destroy(&w->lock);
fail_mutex:
    spi_free(w);
    return NULL;
}

/* A chunk leaves the session's memory. */
static void unmap_chunk(spi_chunk *chunk) {
    atomic_fetch_sub(&spi_buffer_bytes, chunk->bytes);
    spi_chunk_unmap(chunk);
}

/* Under the lock. */
static void unmap_free_list(spi_spill_writer *w) {
    while (w->free_chunks) {
        spi_chunk *c = w->free_chunks;
        w->free_chunks = c->next;
        unmap_chunk(c);
    }
    atomic_store_explicit(&w->free_count, 0, memory_order_relaxed);
}

/* A write failed (errno `error`). Under the lock. The message and the
 * spill's flag are shared with a recording thread's own failed write
 * (recorder_retire.c), so the session says it once whoever failed first. */
static void note_failure(spi_spill_writer *w, int error) {
    w->failed = true;
    if (!atomic_exchange(&w->spill->failed, true))
        spi_diag("cannot write the spill file beside %s (%s): from now on calls past the "
                 "%zu-byte buffer limit are dropped and counted",
                 w->label, strerror(error), w->limit_bytes);
    /* drop mode maps its own chunks within the limit: give it the room */
    unmap_free_list(w);
}

/* One written (or failed) chunk's fate. Under the lock. */
static void settle(spi_spill_writer *w, pending_chunk *p, int error) {
    if (error && !w->failed) note_failure(w, error);
    if (error || w->failed) {
        /* not in the file: kept, for its entry's `kept` */
        p->next = w->failed_chunks;
        w->failed_chunks = p;
    } else if (p->chunk->bytes == SPI_CHUNK_BYTES) {
        p->chunk->used = 0;
        p->chunk->next = w->free_chunks;
        w->free_chunks = p->chunk;
        atomic_fetch_add_explicit(&w->free_count, 1, memory_order_relaxed);
        spi_free(p);
    } else {
        /* a thread's first chunk, or a smaller one mapped where a full one
         * would not fit: not the size a recording thread takes */
        unmap_chunk(p->chunk);
        spi_free(p);
    }
}

static void *writer_main(void *argument) {
    spi_spill_writer *w = argument;
    (void)pthread_setname_np(pthread_self(), "sp-spill");
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->queue_head && !w->stopping) pthread_cond_wait(&w->work, &w->lock);
        pending_chunk *p = w->queue_head;
        if (!p) break; /* stopping, and everything written */
        w->queue_head = p->next;
        if (!w->queue_head) w->queue_tail = NULL;
        bool skip = w->failed;
        pthread_mutex_unlock(&w->lock);
        /* the chunk's events were complete when it was queued (under the
         * lock), and nobody touches it until it is settled */
        int error = skip ? 0
                         : spi_spill_write_block(w->spill, p->chunk, p->block_bytes,
                                                 p->block_offset,
                                                 p->chunk->used * sizeof(spi_event));
        pthread_mutex_lock(&w->lock);
        spi_thread *t = p->thread;
        settle(w, p, error);
        t->spill_done++;
        pthread_cond_broadcast(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Starts the thread with every signal blocked: a program's handlers
 * (timers, samplers) must not run on the profiler's own thread. Under the
 * lock. */
static int start_thread(spi_spill_writer *w) {
    int rc = spi_thread_start_masked(&w->thread, NULL, writer_main, w);
    if (rc != 0) return SP_ERR_OUT_OF_MEMORY;
    w->started = true;
    return SP_OK;
}

int spi_spill_writer_submit(spi_spill_writer *w, spi_thread *t, spi_chunk *chunk, size_t index,
                            uint64_t *offset) {
    /* an arena copy (bytes 0) is no block of its own: never a live
     * thread's chunk, but if it were, its thread appends it itself */
    if (!chunk->bytes) return SP_ERR_BUFFER_LIMIT;
    pending_chunk *p = spi_malloc(sizeof *p);
    if (!p) return SP_ERR_OUT_OF_MEMORY;
    pthread_mutex_lock(&w->lock);
    int status = w->failed || w->stopping ? SP_ERR_BUFFER_LIMIT
                 : w->started             ? SP_OK
                                          : start_thread(w);
    if (status != SP_OK) {
        pthread_mutex_unlock(&w->lock);
        spi_free(p);
        return status;
    }
    size_t block_bytes =
        spi_spill_block_bytes(offsetof(spi_chunk, events) + chunk->used * sizeof(spi_event));
    *p = (pending_chunk){.chunk = chunk, .thread = t, .index = index,
                         .block_offset = spi_spill_reserve_block(w->spill, block_bytes),
                         .block_bytes = block_bytes};
    *offset = p->block_offset + offsetof(spi_chunk, events);
    if (w->queue_tail) w->queue_tail->next = p;
    else w->queue_head = p;
    w->queue_tail = p;
    t->spill_queued++;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    return SP_OK;
}

spi_chunk *spi_spill_writer_take_free(spi_spill_writer *w) {
    if (atomic_load_explicit(&w->free_count, memory_order_relaxed) == 0) return NULL;
    pthread_mutex_lock(&w->lock);
    spi_chunk *c = w->free_chunks;
    if (c) {
        w->free_chunks = c->next;
        c->next = NULL;
        atomic_fetch_sub_explicit(&w->free_count, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&w->lock);
    return c;
}

/* Sets the `kept` chunk of the failed entries of `t` (every thread's when
 * NULL) and forgets them. Under the lock, or after the join. */
static void adopt_failed(spi_spill_writer *w, spi_thread *t) {
    for (pending_chunk **link = &w->failed_chunks; *link;) {
        pending_chunk *p = *link;
        if (t && p->thread != t) {
            link = &p->next;
            continue;
        }
        p->thread->spilled[p->index].kept = p->chunk;
        *link = p->next;
        spi_free(p);
    }
}

void spi_spill_writer_wait_thread(spi_spill_writer *w, spi_thread *t) {
    if (!w || t->spill_queued == 0) return;
    pthread_mutex_lock(&w->lock);
    while (t->spill_done < t->spill_queued) pthread_cond_wait(&w->done, &w->lock);
    adopt_failed(w, t);
    pthread_mutex_unlock(&w->lock);
}

void spi_spill_writer_finish(spi_spill_writer *w) {
    if (!w) return;
    pthread_mutex_lock(&w->lock);
    w->stopping = true;
    pthread_cond_signal(&w->work);
    bool started = w->started;
    pthread_mutex_unlock(&w->lock);
    if (started) pthread_join(w->thread, NULL);
    /* the thread is gone: what follows needs no lock, but the lists are
     * the lock's, so it is taken anyway (cheap, and clear to TSan) */
    pthread_mutex_lock(&w->lock);
    adopt_failed(w, NULL);
    unmap_free_list(w);
    pthread_mutex_unlock(&w->lock);
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->work);
    pthread_mutex_destroy(&w->lock);
    spi_free(w);
}
