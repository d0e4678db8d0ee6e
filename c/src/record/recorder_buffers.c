/*
 * recorder_buffers.c - where a recording thread's calls go when its fast
 * path runs out of room: a bigger stack of open calls, a new event chunk
 * (within the session's buffer limit), the spill file past it, and
 * aggregate mode's per-thread table of call paths.
 *
 * Everything here runs on the recording thread itself, off the inline
 * path, so it updates the thread's hot block (spi_tls) and its spi_thread
 * together.
 */
#include "record/recorder_buffers.h"

#include <inttypes.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "record/recorder_retire.h"
#include "record/recorder_state.h"
#include "record/recorder_threads.h"
#include "record/spill_writer.h"

/* The buffers' slow paths below run on the recording thread itself, so
 * they update its hot block (spi_tls) and its spi_thread together. */

__attribute__((noinline, cold)) int spi_stack_grow(void) {
    spi_thread *t = spi_tls.thread;
    size_t capacity = t->stack_capacity * 2;
    spi_frame *grown = spi_reallocarray(t->stack, capacity, sizeof *grown);
    if (!grown) return SP_ERR_OUT_OF_MEMORY;
    spi_tls.top = grown + (spi_tls.top - spi_tls.stack_base);
    spi_tls.stack_base = grown;
    spi_tls.stack_end = grown + capacity;
    t->stack = grown;
    t->stack_capacity = capacity;
    return SP_OK;
}

/* Link a fresh chunk (its bytes already counted in spi_buffer_bytes). */
static void start_chunk(spi_thread *t, spi_chunk *chunk) {
    if (t->tsc) spi_tls.next_anchor = spi_thread_take_anchor(t); /* one per chunk: thousands of events */
    spi_tls.cursor = chunk->events;
    spi_tls.chunk_end = chunk->events + chunk->capacity;
}

/* Flush mode, the limit reached, no spill writer (SCOPE_PROFILER_SPILL_THREAD=0):
 * write the thread's full chunks to the
 * spill file in order, one write each (spi_chunk_spill), keep the last
 * one's memory for the next events and give the others' back. No lock:
 * the file offset is reserved atomically (spill.h). A failed write (disk
 * full, I/O error) turns flushing off for the whole session, with one
 * message: the chunks not written stay in memory and recorded, later
 * calls past the limit are dropped and counted. */
static int write_chunks_here(spi_thread *t) {
    t->tail->used = (size_t)(spi_tls.cursor - t->tail->events);
    while (t->head) {
        spi_chunk *c = t->head;
        if (c->used) {
            int status = spi_chunk_spill(t, c);
            if (status != SP_OK) return status;
        }
        if (c == t->tail) break;
        t->head = c->next;
        atomic_fetch_sub(&spi_buffer_bytes, c->bytes);
        spi_unmap(c, c->bytes);
    }
    t->tail->used = 0;
    start_chunk(t, t->tail);
    return SP_OK;
}

/* One full chunk of t, the head, to the spill writer: its entry in
 * t->spilled recorded now (the writer fills the file later), the chunk
 * unlinked and the writer's from here on. SP_OK; otherwise it stays t's
 * head (the writer failed, or no memory for the entry or the queue). */
static int queue_head_chunk(spi_thread *t, spi_spill_writer *writer) {
    spi_chunk *c = t->head;
    if (spi_spilled_reserve(t) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    spi_chunk *next = c->next;
    size_t used = c->used, index = t->spilled_count;
    uint64_t offset;
    int status = spi_spill_writer_submit(writer, t, c, index, &offset);
    if (status != SP_OK) return status;
    t->spilled[index] = (spi_spilled_chunk){.offset = offset, .count = used};
    t->spilled_count = index + 1;
    t->head = next;
    if (!t->head) t->tail = NULL;
    return SP_OK;
}

/* t's chunks from the head up to `keep` (not included; NULL: all of them)
 * leave memory for the spill file, in recording order: queued for the
 * writer, or, a chunk the writer will not take, written here. Empty ones
 * are only unmapped. SP_OK, or the error of a write here: that chunk and
 * those after it stay linked from t->head, recorded. */
static int send_chunks(spi_thread *t, spi_spill_writer *writer, spi_chunk *keep) {
    while (t->head && t->head != keep) {
        /* after a failed write nothing more goes to the file: the rest
         * stays in memory, recorded (drop mode from here on) */
        if (atomic_load_explicit(&spi_live_session.spill->failed, memory_order_relaxed))
            return SP_ERR_BUFFER_LIMIT;
        spi_chunk *c = t->head;
        if (c->used && queue_head_chunk(t, writer) == SP_OK) continue;
        if (c->used) {
            int status = spi_chunk_spill(t, c);
            if (status != SP_OK) return status;
        }
        t->head = c->next;
        if (!t->head) t->tail = NULL;
        atomic_fetch_sub(&spi_buffer_bytes, c->bytes);
        spi_chunk_unmap(c);
    }
    return SP_OK;
}

/* Flush mode, the limit reached: with the spill writer, its full chunks
 * but the last go to the writer, and the last, whose memory the thread
 * keeps, is written here (no written chunk is free to take instead: the
 * writer is behind, or this is the session's first spill; back-pressure,
 * as without the writer). Without it, write_chunks_here. */
static int spill_chunks(spi_thread *t) {
    spi_spill_writer *writer = spi_live_session.spill_writer;
    if (!writer) return write_chunks_here(t);
    t->tail->used = (size_t)(spi_tls.cursor - t->tail->events);
    int status = send_chunks(t, writer, t->tail);
    if (status != SP_OK) return status;
    if (t->tail->used) {
        status = spi_chunk_spill(t, t->tail);
        if (status != SP_OK) return status;
    }
    t->tail->used = 0;
    start_chunk(t, t->tail);
    return SP_OK;
}

/* Flush mode with a written chunk free (the writer recycled it): every
 * full chunk of t goes to the writer and t records on in `fresh`, already
 * counted in spi_buffer_bytes, so the memory in use does not change. The
 * chunks a failed write leaves stay before `fresh`, recorded. Always
 * SP_OK: the call that asked for room has it. */
static int continue_in_free_chunk(spi_thread *t, spi_spill_writer *writer, spi_chunk *fresh) {
    t->tail->used = (size_t)(spi_tls.cursor - t->tail->events);
    (void)send_chunks(t, writer, NULL);
    fresh->used = 0;
    fresh->next = NULL;
    if (t->tail) t->tail->next = fresh;
    else t->head = fresh;
    t->tail = fresh;
    start_chunk(t, fresh);
    return SP_OK;
}

static bool flushing(void) {
    return spi_live_session.spill && !atomic_load_explicit(&spi_live_session.spill->failed, memory_order_relaxed);
}

/* A thread whose sequences would no longer fit an event's key (recorder.h)
 * records nothing more: its later calls are dropped and counted. */
static int sequence_limit_reached(spi_thread *t) {
    static atomic_bool reported = false;
    if (!atomic_exchange(&reported, true))
        spi_diag("thread %d began %" PRId64 " calls, the most one thread can record in a "
                 "trace; its later calls are dropped and counted (aggregate mode has no "
                 "such limit)", t->index, spi_tls.next_sequence);
    return SP_ERR_BUFFER_LIMIT;
}

/* No memory for a chunk, and no spill file to make room in: the call is
 * dropped (counted by the caller), and so are the thread's calls until it
 * began chunk_backoff_calls more, which doubles with every failure up to
 * about a million: under an address-space limit every call once retried a
 * failing 4 MiB mmap (50 times slower), while memory that comes back
 * (another thread exited) is still found. One message per process. */
#define FIRST_BACKOFF_CALLS 1024
#define MAX_BACKOFF_CALLS ((int64_t)1 << 20)
static __attribute__((noinline, cold)) int chunk_map_failed(spi_thread *t) {
    static atomic_bool reported = false;
    if (!atomic_exchange(&reported, true))
        spi_diag("thread %d: no memory for more events (%zu bytes of events mapped; an "
                 "address-space limit such as ulimit -v?); calls that find no room are "
                 "dropped and counted",
                 t->index, atomic_load(&spi_buffer_bytes));
    t->chunk_backoff_calls = t->chunk_backoff_calls == 0 ? FIRST_BACKOFF_CALLS
                             : t->chunk_backoff_calls < MAX_BACKOFF_CALLS
                                 ? t->chunk_backoff_calls * 2
                                 : MAX_BACKOFF_CALLS;
    t->chunk_retry_sequence = spi_tls.next_sequence + t->chunk_backoff_calls;
    return SP_ERR_OUT_OF_MEMORY;
}

int spi_chunk_add(spi_thread *t) {
    /* the only check: recorder.h says why it is enough */
    if (__builtin_expect(spi_tls.next_sequence >= SPI_SEQUENCE_LIMIT, 0))
        return sequence_limit_reached(t);
    if (__builtin_expect(t->chunk_backoff_calls != 0, 0) &&
        spi_tls.next_sequence < t->chunk_retry_sequence)
        return SP_ERR_OUT_OF_MEMORY; /* chunk_map_failed */
    size_t bytes = t->head ? SPI_CHUNK_BYTES : SPI_FIRST_CHUNK_BYTES;
    size_t limit = spi_live_session.buffer_limit_bytes;
    if (limit && flushing()) {
        /* past the limit once, the writer recycles written chunks: take
         * one before mapping anything (a thread's first chunk is mapped:
         * it has no chunk to hand over) */
        spi_spill_writer *writer = spi_live_session.spill_writer;
        spi_chunk *fresh = writer && t->head ? spi_spill_writer_take_free(writer) : NULL;
        if (fresh) return continue_in_free_chunk(t, writer, fresh);
        /* whole chunks only (a small one would only mean more writes);
         * a thread's first chunk is granted past the limit, so every
         * thread can record: the bound is limit + 64 KiB per thread */
        size_t before = atomic_fetch_add(&spi_buffer_bytes, bytes);
        if (t->head && before + bytes > limit) {
            atomic_fetch_sub(&spi_buffer_bytes, bytes);
            return spill_chunks(t);
        }
    } else if (limit) {
        /* near the limit, a smaller chunk of what is left: every call that
         * fits is recorded, however small the limit */
        size_t before = atomic_load(&spi_buffer_bytes);
        for (;;) {
            size_t left = before < limit ? limit - before : 0;
            size_t take = bytes < left ? bytes : left;
            if (take < sizeof(spi_chunk) + 64 * sizeof(spi_event)) return SP_ERR_BUFFER_LIMIT;
            if (atomic_compare_exchange_weak(&spi_buffer_bytes, &before, before + take)) {
                bytes = take;
                break;
            }
        }
    } else {
        atomic_fetch_add(&spi_buffer_bytes, bytes);
    }
    spi_chunk *chunk = spi_map_populated(bytes);
    if (!chunk && bytes > SPI_FIRST_CHUNK_BYTES) {
        /* what is left of the address space may still hold a small one */
        atomic_fetch_sub(&spi_buffer_bytes, bytes - SPI_FIRST_CHUNK_BYTES);
        bytes = SPI_FIRST_CHUNK_BYTES;
        chunk = spi_map_populated(bytes);
    }
    if (!chunk) {
        atomic_fetch_sub(&spi_buffer_bytes, bytes);
        /* a bounded trace that flushes makes room in the file instead */
        if (t->head && flushing()) return spill_chunks(t);
        return chunk_map_failed(t);
    }
    t->chunk_backoff_calls = 0;
    chunk->bytes = bytes;
    chunk->capacity = (bytes - sizeof *chunk) / sizeof(spi_event);
    chunk->next = NULL;
    chunk->used = 0;
    if (t->tail) t->tail->used = (size_t)(spi_tls.cursor - t->tail->events);
    if (t->tail) t->tail->next = chunk;
    else t->head = chunk;
    t->tail = chunk;
    start_chunk(t, chunk);
    return SP_OK;
}

/* ---- aggregate mode: call paths ----------------------------------------- */

/* A new path: the only allocation of aggregate recording. */
static int32_t add_path(spi_thread *t, int32_t parent, int region, uint64_t key) {
    if (t->node_count >= INT32_MAX) return -1;
    if (spi_path_table_reserve(&t->paths, t->node_count + 1, 0) != SP_OK) return -1;
    if (t->node_count == t->node_capacity) {
        size_t capacity = t->node_capacity ? t->node_capacity * 2 : 64;
        spi_path_node *grown = spi_reallocarray(t->nodes, capacity, sizeof *grown);
        if (!grown) return -1;
        t->nodes = grown;
        t->node_capacity = capacity;
    }
    int32_t node = (int32_t)t->node_count++;
    t->nodes[node] = (spi_path_node){.parent = parent, .region = (uint32_t)region,
                                     .min_ns = INT64_MAX, .max_ns = INT64_MIN,
                                     .start_min_ns = INT64_MAX, .end_max_ns = INT64_MIN};
    spi_path_table_insert(&t->paths, key, node);
    return node;
}

int32_t spi_path_fork_parent(spi_thread *t) {
    uint64_t word = atomic_load_explicit(&spi_omp_fork_path, memory_order_relaxed);
    if (word == 0) return -1;
    int32_t host_thread = (int32_t)(word >> 32) - 1, host_node = (int32_t)(uint32_t)word;
    uint64_t key = spi_hosted_key(host_thread, host_node);
    int32_t node = spi_path_table_find(&t->paths, key);
    if (node >= 0) return node;
    node = add_path(t, -1, (int)SPI_PATH_HOSTED, key);
    if (node >= 0) {
        t->nodes[node].host_thread = host_thread;
        t->nodes[node].host_node = host_node;
    }
    return node;
}

/* The path of a call of `region` made inside the path `parent` (-1: none). */
int32_t spi_path_of(spi_thread *t, int32_t parent, int region) {
    /* recursion: a run of one region stays on one path (the summary
     * table's collapse), so recursion depth never creates paths */
    if (parent >= 0 && t->nodes[parent].region == (uint32_t)region) {
        t->nodes[parent].recursions++;
        return parent;
    }
    uint64_t key = spi_path_key(parent, region);
    int32_t node = spi_path_table_find(&t->paths, key);
    return node >= 0 ? node : add_path(t, parent, region, key);
}
