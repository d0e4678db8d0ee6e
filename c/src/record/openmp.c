/*
 * openmp.c - the fork parents of OpenMP worker threads' root calls, found at
 * finalize (openmp.h; the runtime queries of the hot path are omp_runtime.c).
 *
 * Finding the innermost enclosing call of a thread: its calls nest
 * properly, so the call that started last at or before `start` is either
 * inside every call that encloses `start` or is one of them; the enclosing
 * calls are therefore its ancestors, and a walk up its parents finds the
 * innermost one that also reaches `end`. One binary search and a walk as
 * deep as the nesting, per worker root call.
 */
#include "record/openmp.h"

#include "record/call_parents.h"
#include "record/event_cursor.h"

#include <stdlib.h>

#include "util/alloc.h"
#include "util/error.h"

/* One non-worker thread's calls, indexed by sequence. */
typedef struct host_thread {
    int64_t base;             /* call id of sequence 0 */
    int64_t count;            /* sequences */
    int64_t *start;           /* [count], INT64_MAX: not recorded */
    int64_t *end;
    int64_t *parent;          /* parent sequence, -1 = root */
    bool *in_parallel;        /* began inside a parallel region */
    int64_t *by_start;        /* recorded sequences sorted by start */
    int64_t recorded;
} host_thread;

struct spi_omp_hosts {
    host_thread *threads;
    size_t count;
};



static const host_thread *sort_context;
static int by_start(const void *a, const void *b) {
    int64_t x = sort_context->start[*(const int64_t *)a];
    int64_t y = sort_context->start[*(const int64_t *)b];
    if (x != y) return x < y ? -1 : 1;
    /* equal starts: the enclosing call (lower sequence) first */
    return *(const int64_t *)a < *(const int64_t *)b ? -1 : 1;
}

static void free_host(host_thread *h) {
    spi_free(h->start);
    spi_free(h->end);
    spi_free(h->parent);
    spi_free(h->in_parallel);
    spi_free(h->by_start);
}

/* A thread that recorded a call inside a parallel region: a primary. */
static bool recorded_team_work(spi_session *session, spi_thread *t) {
    spi_event_cursor cursor;
    spi_event_cursor_open(&cursor, session, t, false);
    const spi_event *events;
    size_t n;
    bool found = false;
    while (!found && spi_event_cursor_next(&cursor, &events, &n) == SP_OK && n)
        for (size_t i = 0; i < n && !found; i++)
            found = spi_event_in_parallel(&events[i]);
    spi_event_cursor_close(&cursor);
    return found;
}

static bool has_events(const spi_thread *t) { return t->head || t->spilled_count; }

int spi_omp_hosts_build(spi_omp_hosts **out, spi_session *session, const int64_t *bases) {
    *out = NULL;
    bool workers = false, primaries = false;
    size_t candidates = 0;
    for (spi_thread *t = session->threads; t; t = t->next) {
        if (t->omp_worker && has_events(t)) workers = true;
        if (!t->omp_worker && has_events(t)) {
            candidates++;
            primaries = primaries || recorded_team_work(session, t);
        }
    }
    if (!workers || candidates == 0) return SP_OK;
    spi_omp_hosts *h = spi_calloc(1, sizeof *h);
    if (!h || !(h->threads = spi_calloc(candidates, sizeof *h->threads))) {
        spi_free(h);
        return SP_ERR_OUT_OF_MEMORY;
    }
    size_t index = 0;
    for (spi_thread *t = session->threads; t; t = t->next, index++) {
        if (t->omp_worker || !has_events(t)) continue;
        /* a plain pthread is never a fork parent when a primary is known */
        if (primaries && !recorded_team_work(session, t)) continue;
        host_thread *x = &h->threads[h->count++];
        size_t n = (size_t)t->next_sequence;
        x->base = bases[index];
        x->count = t->next_sequence;
        x->start = spi_malloc((n + 1) * sizeof *x->start);
        x->end = spi_malloc((n + 1) * sizeof *x->end);
        x->parent = spi_malloc((n + 1) * sizeof *x->parent);
        x->in_parallel = spi_malloc((n + 1) * sizeof *x->in_parallel);
        x->by_start = spi_malloc((n + 1) * sizeof *x->by_start);
        if (!x->start || !x->end || !x->parent || !x->in_parallel || !x->by_start) {
            spi_omp_hosts_free(h);
            return SP_ERR_OUT_OF_MEMORY;
        }
        for (size_t s = 0; s < n; s++) x->start[s] = INT64_MAX;
        spi_call_walk walk;
        spi_call_walk_open(&walk, session, t, false);
        const spi_event *e;
        const spi_enclosing_call *parent;
        int status;
        while ((status = spi_call_walk_next(&walk, &e, &parent)) == SP_OK && e) {
            int64_t s = spi_event_sequence(e);
            x->start[s] = e->start_ns;
            x->end[s] = e->start_ns + e->duration_ns;
            x->parent[s] = parent ? parent->sequence : -1;
            x->in_parallel[s] = spi_event_in_parallel(e);
            x->by_start[x->recorded++] = s;
        }
        spi_call_walk_close(&walk);
        if (status != SP_OK) {
            spi_omp_hosts_free(h);
            return status;
        }
        sort_context = x;
        qsort(x->by_start, (size_t)x->recorded, sizeof *x->by_start, by_start);
    }
    *out = h;
    return SP_OK;
}

int64_t spi_omp_host_parent(const spi_omp_hosts *h, int64_t start, int64_t end, int64_t child_id) {
    if (!h) return -1;
    int64_t best = -1, best_length = INT64_MAX;
    for (size_t k = 0; k < h->count; k++) {
        const host_thread *x = &h->threads[k];
        /* last call started at or before `start` */
        int64_t lo = 0, hi = x->recorded;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (x->start[x->by_start[mid]] <= start) lo = mid + 1;
            else hi = mid;
        }
        if (lo == 0) continue;
        for (int64_t s = x->by_start[lo - 1]; s >= 0; s = x->parent[s]) {
            if (x->start[s] == INT64_MAX) break; /* an ancestor that was not recorded */
            if (x->in_parallel[s]) continue;      /* the primary's own team work */
            if (x->end[s] >= end && x->start[s] <= start) {
                int64_t length = x->end[s] - x->start[s];
                if (x->base + s < child_id && length < best_length) {
                    best = x->base + s;
                    best_length = length;
                }
                break;
            }
        }
    }
    return best;
}

void spi_omp_hosts_free(spi_omp_hosts *h) {
    if (!h) return;
    for (size_t k = 0; k < h->count; k++) free_host(&h->threads[k]);
    spi_free(h->threads);
    spi_free(h);
}
