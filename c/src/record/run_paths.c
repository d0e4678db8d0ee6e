/*
 * run_paths.c - a trace's calls folded into call paths (run_paths.h), the
 * input of the end-of-run summary.
 *
 * The summary is a tree of call paths. Building it from the calls (the
 * rank's call tree, calltree.c) needs every call in memory, which for a
 * bounded trace is many times the bound: 2.8 GB for 20M calls of one
 * region. A path table needs memory per distinct path only, and one walk
 * over each thread's events gives it, because the backward walk
 * (call_parents.h) visits a call's parent before the call: the parent's
 * path is known when the call is placed.
 *
 * The paths are the ones aggregate mode records (recorder_buffers.c):
 * keyed by (parent path, region), a run of one region (recursion) stays on
 * one path, and each path accumulates count, total, exclusive, min, max,
 * m2 (Welford, per call), earliest start and latest end. Unlike aggregate
 * mode, threads share paths: the summary pools them anyway.
 *
 * Per path also the threads that ran it and the time of the calls that
 * ran beside their parent's call on another thread (the summary's
 * threads and other-threads columns, issue 34).
 *
 * OpenMP: a worker thread's root calls belong under the call that forked
 * their team (openmp.h). The non-worker threads are walked first and keep
 * the path of each of their calls by sequence (only when workers
 * recorded: the memory the fork-parent index already takes), so a worker
 * root finds its fork parent's path.
 */
#include "record/run_paths.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "record/call_parents.h"
#include "record/openmp.h"
#include "record/path_table.h"
#include "record/registry.h"
#include "record/run_threads.h"

typedef struct path_table {
    spi_call_path *paths;
    double *means;            /* Welford's running mean per path */
    size_t *seen_by;          /* per path: 1 + the last thread walked that ran it;
                                 threads are walked one after another, so a
                                 change counts a new thread (spi_call_path.threads) */
    size_t count;
    size_t capacity;
    spi_path_table index;     /* (parent, region) -> path (path_table.h) */
    uint32_t rank;
} path_table;

static int32_t add_path(path_table *t, int32_t parent, uint32_t region, uint64_t key) {
    if (t->count >= INT32_MAX) return -1;
    if (spi_path_table_reserve(&t->index, t->count + 1, 256) != SP_OK) return -1;
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? t->capacity * 2 : 64;
        spi_call_path *paths = spi_reallocarray(t->paths, capacity, sizeof *paths);
        if (!paths) return -1;
        t->paths = paths;
        double *means = spi_reallocarray(t->means, capacity, sizeof *means);
        if (!means) return -1;
        t->means = means;
        size_t *seen_by = spi_reallocarray(t->seen_by, capacity, sizeof *seen_by);
        if (!seen_by) return -1;
        t->seen_by = seen_by;
        t->capacity = capacity;
    }
    int32_t index = (int32_t)t->count++;
    t->paths[index] = (spi_call_path){.rank = t->rank, .region = region, .parent = parent,
                                      .thread = -1, .minimum = INT64_MAX,
                                      .maximum = INT64_MIN, .start_minimum = INT64_MAX,
                                      .end_maximum = INT64_MIN};
    t->means[index] = 0.0;
    t->seen_by[index] = 0;
    spi_path_table_insert(&t->index, key, index);
    return index;
}

/* The path of a call of `region` inside path `parent` (-1: a root); -1
 * when out of memory. */
static int32_t path_of(path_table *t, int32_t parent, uint32_t region) {
    if (parent >= 0 && t->paths[parent].region == region) {
        t->paths[parent].recursions++;
        return parent;
    }
    uint64_t key = spi_path_key(parent, (int)region);
    int32_t path = spi_path_table_find(&t->index, key);
    return path >= 0 ? path : add_path(t, parent, region, key);
}

/* One call on path p; `parent` the path its duration is child time of on
 * its own thread (-1: none). Exclusive time as spi_exclusive_add: a call
 * adds its duration to its path and takes it from its parent's. */
static void add_call(path_table *t, int32_t p, int32_t parent, const spi_event *e,
                     size_t thread) {
    spi_call_path *path = &t->paths[p];
    int64_t d = e->duration_ns;
    if (t->seen_by[p] != thread + 1) {
        t->seen_by[p] = thread + 1;
        path->threads++;
    }
    path->count++;
    path->total += d;
    path->exclusive += d;
    if (parent >= 0) t->paths[parent].exclusive -= d;
    if (d < path->minimum) path->minimum = d;
    if (d > path->maximum) path->maximum = d;
    double delta = (double)d - t->means[p];
    t->means[p] += delta / (double)path->count;
    path->m2 += delta * ((double)d - t->means[p]);
    if (e->start_ns < path->start_minimum) path->start_minimum = e->start_ns;
    if (e->start_ns + d > path->end_maximum) path->end_maximum = e->start_ns + d;
}

/* The path of the worker root e through its OpenMP fork parent, -1 when it
 * has none (a root of its own). */
static int32_t fork_parent_path(const spi_omp_hosts *hosts, int32_t *const *sequence_paths,
                                const int64_t *bases, size_t thread_count, const spi_thread *t,
                                int64_t base, const spi_event *e) {
    int64_t host = spi_run_parent_id(t, e, NULL, base, hosts);
    if (host < 0) return -1;
    size_t lo = 0, hi = thread_count; /* the thread whose ids hold `host` */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (bases[mid] <= host) lo = mid;
        else hi = mid;
    }
    return sequence_paths[lo] ? sequence_paths[lo][host - bases[lo]] : -1;
}

/* Walk thread t (index `index`) into the table. sequence_paths[index],
 * when set, receives each call's path by sequence. */
static int walk_thread(path_table *table, spi_session *session, spi_thread *t, size_t index,
                       const int64_t *bases, size_t thread_count, const spi_omp_hosts *hosts,
                       int32_t *const *sequence_paths) {
    spi_call_walk walk;
    spi_call_walk_open(&walk, session, t, false);
    const spi_event *e;
    const spi_enclosing_call *parent;
    int status;
    while ((status = spi_call_walk_next(&walk, &e, &parent)) == SP_OK && e) {
        int32_t parent_path = parent ? parent->path : -1;
        int32_t under = parent_path;
        if (!parent && t->omp_worker)
            under = fork_parent_path(hosts, sequence_paths, bases, thread_count, t, bases[index], e);
        int32_t p = path_of(table, under, spi_event_region(e));
        if (p < 0) {
            status = SP_ERR_OUT_OF_MEMORY;
            break;
        }
        spi_call_walk_top(&walk)->path = p;
        add_call(table, p, parent_path, e, index);
        /* a worker root under its fork parent: beside the parent, not in it */
        if (under != parent_path) table->paths[p].other_threads += e->duration_ns;
        if (sequence_paths[index]) sequence_paths[index][spi_event_sequence(e)] = p;
    }
    spi_call_walk_close(&walk);
    return status;
}

/* Regions as the profile numbers them (run.c): the regions with calls, in
 * registration order. Every recorded call is on a path, so the regions of
 * the paths are exactly those. */
static int number_regions(path_table *t) {
    int region_count = spi_registry_count();
    int32_t *index = spi_calloc((size_t)region_count + 1, sizeof *index);
    if (!index) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < t->count; i++) index[t->paths[i].region] = 1;
    int32_t next = 0;
    for (int r = 0; r < region_count; r++) index[r] = index[r] ? next++ : -1;
    for (size_t i = 0; i < t->count; i++) t->paths[i].region = (uint32_t)index[t->paths[i].region];
    spi_free(index);
    return SP_OK;
}

int spi_run_summary_paths(spi_session *session, uint32_t rank, spi_call_path **paths,
                          size_t *count) {
    *paths = NULL;
    *count = 0;
    size_t thread_count = (size_t)session->thread_count;
    path_table table = {.rank = rank};
    int64_t *bases = spi_run_thread_bases(session);
    spi_thread **threads = spi_calloc(thread_count + 1, sizeof *threads);
    int32_t **sequence_paths = spi_calloc(thread_count + 1, sizeof *sequence_paths);
    spi_omp_hosts *hosts = NULL;
    int status = bases && threads && sequence_paths ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    size_t index = 0;
    for (spi_thread *t = session->threads; t && status == SP_OK; t = t->next) threads[index++] = t;
    if (status == SP_OK && spi_run_has_omp_workers(session)) status = spi_omp_hosts_build(&hosts, session, bases);
    /* fork parents' paths by sequence, only when some worker recorded */
    for (size_t i = 0; hosts && i < thread_count && status == SP_OK; i++) {
        if (threads[i]->omp_worker) continue;
        size_t bytes = ((size_t)threads[i]->next_sequence + 1) * sizeof *sequence_paths[i];
        sequence_paths[i] = spi_malloc(bytes);
        if (!sequence_paths[i]) status = SP_ERR_OUT_OF_MEMORY;
        else memset(sequence_paths[i], 0xff, bytes); /* -1: not recorded */
    }
    /* the fork parents first, then the workers whose roots hang under them */
    for (int workers = 0; workers < 2 && status == SP_OK; workers++)
        for (size_t i = 0; i < thread_count && status == SP_OK; i++)
            if (threads[i]->omp_worker == (workers == 1))
                status = walk_thread(&table, session, threads[i], i, bases, thread_count, hosts,
                                     sequence_paths);
    for (size_t i = 0; i < thread_count; i++) spi_free(sequence_paths ? sequence_paths[i] : NULL);
    spi_free(sequence_paths);
    spi_omp_hosts_free(hosts);
    spi_free(threads);
    spi_free(bases);
    spi_free(table.means);
    spi_free(table.seen_by);
    spi_path_table_free(&table.index);
    if (status == SP_OK) status = number_regions(&table);
    if (status != SP_OK) {
        spi_free(table.paths);
        return status;
    }
    *paths = table.paths;
    *count = table.count;
    return SP_OK;
}
