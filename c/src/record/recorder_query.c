/*
 * recorder_query.c - sp_region_thread_totals: a region's calls and time
 * so far on the calling thread, while it records (GPTLquery and
 * GPTLget_wallclock in shims/gptl need them in a program's time loop).
 *
 * Why a query over what the thread recorded, and not a running sum kept at
 * every end: the hot path (recorder.c) stays exactly as it is, and a
 * program that never asks pays nothing. What the thread recorded already
 * holds every answer: in a trace, its events (in memory, and in the spill
 * file once a bounded trace flushed); in aggregate mode, its path
 * accumulators; its open calls are its frames.
 *
 * A trace query is incremental: the thread keeps, here, one sum per region
 * it recorded and the number of its events already added, so each event is
 * read once however often the program asks (a time loop asking every step
 * costs the events of that step, not of the run). Memory: two words per
 * region handle up to the largest the thread recorded; nothing per call.
 * Events are numbered in recording order across the spill file (first)
 * and the chunks still in memory, so a flush that reused a chunk's memory
 * cannot make an event count twice or never.
 *
 * Times: the events and accumulators hold raw readings (recorder.h); a
 * CLOCK_MONOTONIC end is decoded from its start, TSC ticks are summed and
 * turned into ns at the rate between the session's first anchor and the
 * thread's newest (ticks_to_ns: accurate to the anchors' tens of ns over
 * the session's length; the file's exact map can differ from it by that).
 *
 * Only the calling thread's own state is read, and only by that thread, so
 * no lock is taken (but the spill writer's, once, to wait until the
 * chunks this thread handed it are written: spill_writer.h); the thread is marked busy meanwhile (as recorder.c's
 * calls do), so a signal handler that records on it cannot move its chunks
 * under the walk.
 */
#include "record/recorder.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "record/clock.h"
#include "record/recorder_state.h"
#include "record/registry.h"
#include "record/spill_writer.h"
#include "scope_profiler.h"

/* What one thread already added up. */
typedef struct query_sums {
    uint64_t generation;      /* the session the sums belong to */
    uint64_t events_added;    /* of the thread's events, in recording order */
    uint64_t *calls;          /* per region handle */
    int64_t *raw_total;       /* per region handle: ns, or TSC ticks */
    size_t capacity;          /* handles the two arrays hold */
    spi_anchor rate_anchor;   /* TSC: ticks_to_ns's own anchor, ns 0 = none */
} query_sums;

static SPI_TLS query_sums *thread_sums;

/* The sums are freed when their thread exits (a key's destructor). */
static pthread_key_t sums_key;
static pthread_once_t sums_key_once = PTHREAD_ONCE_INIT;
static bool sums_key_ready;

static void free_sums(void *pointer) {
    query_sums *sums = pointer;
    if (!sums) return;
    free(sums->calls);
    free(sums->raw_total);
    free(sums);
}

static void create_sums_key(void) { sums_key_ready = pthread_key_create(&sums_key, free_sums) == 0; }

static query_sums *sums_of_thread(void) {
    if (thread_sums) return thread_sums;
    pthread_once(&sums_key_once, create_sums_key);
    if (!sums_key_ready) return NULL;
    query_sums *sums = calloc(1, sizeof *sums);
    if (!sums) return NULL;
    if (pthread_setspecific(sums_key, sums) != 0) {
        free(sums);
        return NULL;
    }
    thread_sums = sums;
    return sums;
}

/* Room for `region`; false when out of memory (nothing changed). */
static bool sums_reserve(query_sums *sums, uint32_t region) {
    if (region < sums->capacity) return true;
    size_t capacity = sums->capacity ? sums->capacity : 64;
    while (capacity <= region) capacity *= 2;
    uint64_t *calls = realloc(sums->calls, capacity * sizeof *calls);
    if (!calls) return false;
    sums->calls = calls;
    int64_t *totals = realloc(sums->raw_total, capacity * sizeof *totals);
    if (!totals) return false;
    sums->raw_total = totals;
    memset(calls + sums->capacity, 0, (capacity - sums->capacity) * sizeof *calls);
    memset(totals + sums->capacity, 0, (capacity - sums->capacity) * sizeof *totals);
    sums->capacity = capacity;
    return true;
}

/* A raw event's duration in the session's unit (ns, or TSC ticks). */
static inline int64_t raw_duration(const spi_event *e, bool tsc) {
    if (tsc) return e->duration_ns - e->start_ns;
    return spi_clock_end_ns(e->start_ns, e->duration_ns) - e->start_ns;
}

static int add_events(query_sums *sums, const spi_event *events, size_t count, bool tsc) {
    for (size_t i = 0; i < count; i++) {
        uint32_t region = spi_event_region(&events[i]);
        if (!sums_reserve(sums, region)) {
            sums->events_added += i; /* those are in: none counts twice */
            return SP_ERR_OUT_OF_MEMORY;
        }
        sums->calls[region]++;
        sums->raw_total[region] += raw_duration(&events[i], tsc);
    }
    sums->events_added += count;
    return SP_OK;
}

/* Events [from, from + count) of one spilled chunk, read back in slices. */
static int add_spilled(query_sums *sums, const spi_spilled_chunk *chunk, uint64_t from,
                       bool tsc) {
    enum { SLICE = 512 };
    spi_event slice[SLICE];
    if (chunk->kept) /* the spill writer could not write it (spill_writer.h) */
        return add_events(sums, chunk->kept->events + from, (size_t)(chunk->count - from), tsc);
    const spi_spill *spill = spi_live_session.spill;
    if (!spill) return SP_ERR_OUTPUT;
    while (from < chunk->count) {
        uint64_t take = chunk->count - from < SLICE ? chunk->count - from : SLICE;
        if (spi_spill_read(spill, chunk->offset + from * sizeof(spi_event), slice,
                           (size_t)take * sizeof(spi_event)) != 0)
            return SP_ERR_OUTPUT;
        int status = add_events(sums, slice, (size_t)take, tsc);
        if (status != SP_OK) return status;
        from += take;
    }
    return SP_OK;
}

/* Adds the thread's events not added yet: the spilled ones, then those in
 * its chunks (the current chunk's count is its cursor: `used` is only
 * published when the chunk is left). */
static int add_new_events(query_sums *sums, spi_thread *t) {
    /* chunks handed to the spill writer are listed before they are in
     * the file: wait for this thread's (the writer never waits for a
     * recording thread, so this ends) */
    spi_spill_writer_wait_thread(spi_live_session.spill_writer, t);
    uint64_t first = 0; /* number of the first event of the next part */
    for (size_t i = 0; i < t->spilled_count; i++) {
        const spi_spilled_chunk *chunk = &t->spilled[i];
        if (sums->events_added < first + chunk->count) {
            int status = add_spilled(sums, chunk, sums->events_added - first, t->tsc);
            if (status != SP_OK) return status;
        }
        first += chunk->count;
    }
    for (const spi_chunk *c = t->head; c; c = c->next) {
        size_t used = c == t->tail ? (size_t)(spi_tls.cursor - c->events) : c->used;
        if (sums->events_added < first + used) {
            size_t skip = (size_t)(sums->events_added - first);
            int status = add_events(sums, c->events + skip, used - skip, t->tsc);
            if (status != SP_OK) return status;
        }
        first += used;
    }
    return SP_OK;
}

/* Aggregate mode: the region's paths of this thread. */
static void sum_paths(const spi_thread *t, uint32_t region, uint64_t *calls, int64_t *raw) {
    for (size_t i = 0; i < t->node_count; i++) {
        const spi_path_node *n = &t->nodes[i];
        if (n->region != region) continue;
        *calls += n->count;
        *raw += n->total_ns;
    }
}

/* A sum of TSC ticks in ns, at the rate the session's clock ran from its
 * start to the thread's newest anchor (one is taken at least every
 * SPI_ANCHOR_INTERVAL_NS while it records), or, while those span less than
 * a millisecond, to an anchor taken at this thread's first such question
 * and kept: two questions with no call between them get the same answer,
 * as GPTL's do. */
static int64_t ticks_to_ns(const spi_thread *t, query_sums *sums, int64_t ticks) {
    const spi_anchor_list *start = &spi_live_session.anchors;
    if (start->count == 0 || ticks == 0) return 0;
    spi_anchor first = start->items[0], last = {0, 0};
    if (t->anchors.count) last = t->anchors.items[t->anchors.count - 1];
    if (last.ns - first.ns < INT64_C(1000000)) {
        if (sums->rate_anchor.ns == 0)
            spi_clock_anchor(&sums->rate_anchor.ticks, &sums->rate_anchor.ns);
        last = sums->rate_anchor;
    }
    int64_t span_ticks = last.ticks - first.ticks, span_ns = last.ns - first.ns;
    if (span_ticks <= 0 || span_ns <= 0) return 0;
    return (int64_t)((double)ticks * ((double)span_ns / (double)span_ticks));
}

static int query(spi_thread *t, uint32_t region, sp_region_totals *totals) {
    for (const spi_frame *f = spi_tls.stack_base; f < spi_tls.top; f++)
        if (SPI_FRAME_REGION(f) == region) totals->open++;
    query_sums *sums = sums_of_thread();
    if (!sums) return SP_ERR_OUT_OF_MEMORY;
    if (sums->generation != spi_tls.generation) {
        /* a new session: nothing of the last one counts */
        sums->generation = spi_tls.generation;
        sums->events_added = 0;
        sums->rate_anchor = (spi_anchor){0, 0};
        if (sums->capacity) {
            memset(sums->calls, 0, sums->capacity * sizeof *sums->calls);
            memset(sums->raw_total, 0, sums->capacity * sizeof *sums->raw_total);
        }
    }
    uint64_t calls = 0;
    int64_t raw = 0;
    int status = SP_OK;
    if (t->aggregate) {
        sum_paths(t, region, &calls, &raw);
    } else {
        status = add_new_events(sums, t);
        if (region < sums->capacity) {
            calls = sums->calls[region];
            raw = sums->raw_total[region];
        }
    }
    totals->calls = calls;
    totals->total_ns = t->tsc ? ticks_to_ns(t, sums, raw) : raw;
    return status;
}

SP_API int sp_region_thread_totals(int region, sp_region_totals *totals) {
    if (!totals) return SP_ERR_INVALID_ARGUMENT;
    memset(totals, 0, sizeof *totals);
    if (region < 0 || !spi_registry_get(region)) return SP_ERR_INVALID_REGION;
    uint64_t generation = atomic_load_explicit(&spi_session_generation, memory_order_relaxed);
    if (generation == 0) return SP_ERR_NOT_ACTIVE;
    /* a thread that has not recorded in this session has nothing yet (it
     * is not attached for a question) */
    if (generation != spi_tls.generation || !spi_tls.thread) return SP_OK;
    /* the reentrancy guard of recorder.c's calls (enter/leave there) */
    int path = atomic_load_explicit(&spi_tls.path, memory_order_relaxed);
    if (path == SPI_PATH_BUSY) return SP_ERR_UNSUPPORTED;
    atomic_store_explicit(&spi_tls.path, SPI_PATH_BUSY, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    int status = query(spi_tls.thread, (uint32_t)region, totals);
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&spi_tls.path, path, memory_order_relaxed);
    return status;
}
