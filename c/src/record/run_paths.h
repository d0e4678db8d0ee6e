/*
 * run_paths.h - a stopped trace session's calls folded into call paths
 * (run_paths.c): what the end-of-run summary prints, in memory that grows
 * with the number of distinct paths, never with the number of calls.
 * Internal to the record module (used by the lifecycle through run.h).
 *
 * The fold has no walk of its own: spi_run_collect walks every event once
 * to build the profile's rows (run.c, or run_stream.c for a session that
 * spilled) and hands each call to spi_call_fold_call on the way, so the
 * summary costs no second pass over the events (issue 31: that pass was
 * 0.5 s of CPU per 20M calls, a spill file read back once more). The
 * collect walks the threads in spi_run_walk_order (run_threads.h) and each
 * thread backward (call_parents.h), which visits a call's parent before the
 * call: the parent's path is known when the call is placed.
 *
 *   spi_call_fold_open    after the call-id bases and the OpenMP fork
 *                         parents (openmp.h) are known
 *   spi_call_fold_thread  before each thread's walk
 *   spi_call_fold_call    every call, in walk order
 *   spi_call_fold_finish  the paths, regions numbered as the profile's;
 *                         the fold released
 *   spi_call_fold_close   the fold released without its paths
 *
 * Not thread-safe: one fold has one walker (finalize).
 */
#ifndef SPI_RUN_PATHS_H
#define SPI_RUN_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "record/call_parents.h"
#include "record/path_table.h"
#include "record/recorder.h"

/* The summary's call paths that spi_run_collect folds for its caller
 * (run.h): on return `paths` (free with spi_free) holds `count` paths of
 * the rank's calls, parents before children, regions numbered as the
 * profile's names (the regions with calls, in registration order), threads
 * pooled (thread -1), `threads` and `other_threads` set (the summary's
 * threads view); or `status` says why there are none (SP_ERR_OUT_OF_MEMORY,
 * or the collect's own failure), and `paths` is NULL. */
typedef struct spi_run_paths {
    spi_call_path *paths;
    size_t count;
    int status;
} spi_run_paths;

/* What the fold keeps per path beside the spi_call_path itself (one array:
 * one pointer and one cache line per path on the per-call path). */
typedef struct spi_call_fold_state {
    double mean;              /* Welford's running mean */
    uint32_t seen_by;         /* 1 + the attach index of the last thread walked
                                 that ran the path; threads are walked one after
                                 another, so a change counts a new thread
                                 (spi_call_path.threads) */
    uint32_t memo_region;     /* the region of the child path found last ... */
    int32_t memo_path;        /* ... and that path (-1: none): a loop's calls
                                 cost a compare, not a table lookup */
} spi_call_fold_state;

typedef struct spi_call_fold {
    spi_call_path *paths;
    spi_call_fold_state *state; /* [capacity] */
    uint32_t root_memo_region;  /* the memo of the roots */
    int32_t root_memo_path;
    size_t count;
    size_t capacity;
    spi_path_table index;     /* (parent, region) -> path (path_table.h) */
    uint32_t rank;
    int status;               /* SP_OK, or why the fold stopped (it then takes no call) */
    /* the thread being walked (spi_call_fold_thread) */
    uint32_t thread_tag;      /* 1 + its attach index */
    bool worker;              /* an OpenMP worker: its roots go under their fork parents */
    int32_t *thread_paths;    /* its calls' paths by sequence, or NULL */
    /* OpenMP, only when fork parents were found (spi_omp_hosts): each
     * non-worker thread's call paths by sequence, so that a worker root
     * finds its fork parent's path (memory per call, as the fork-parent
     * index itself) */
    const int64_t *bases;     /* first call id per attach index */
    size_t thread_count;
    int32_t **sequence_paths; /* [thread_count], NULL entries for workers */
} spi_call_fold;

/* Start a fold of `session`'s calls (a trace, times in ns) tagged with
 * `rank`. bases: each thread's first call id by attach index
 * (spi_run_thread_bases), kept until the fold is closed. with_hosts: the
 * collect found OpenMP fork parents (spi_omp_hosts_build gave an index),
 * so worker roots go under their fork parents' paths. SP_OK or
 * SP_ERR_OUT_OF_MEMORY (also kept in fold->status: the fold then takes no
 * call). */
int spi_call_fold_open(spi_call_fold *fold, const spi_session *session, uint32_t rank,
                       const int64_t *bases, bool with_hosts);

/* The thread whose calls come next: t, of attach index `index`. Call
 * before walking each thread. */
void spi_call_fold_thread(spi_call_fold *fold, const spi_thread *t, size_t index);

/* Out of line parts of spi_call_fold_call: the path of (parent, region)
 * from the index, added when new (-1: out of memory); the path of a
 * worker root's fork parent, by its call id (-1: none). */
int32_t spi_call_fold_find_path(spi_call_fold *fold, int32_t parent, uint32_t region);
int32_t spi_call_fold_host_path(const spi_call_fold *fold, int64_t host_id);

/* The path of a call of `region` inside path `parent` (-1: a root); -1
 * when out of memory. A call of the parent path's own region stays on it
 * (recursion collapsed, counted in `recursions`). */
static inline int32_t spi_call_fold_path_of(spi_call_fold *f, int32_t parent, uint32_t region) {
    if (parent < 0) {
        if (f->root_memo_path >= 0 && f->root_memo_region == region) return f->root_memo_path;
        int32_t path = spi_call_fold_find_path(f, parent, region);
        if (path >= 0) {
            f->root_memo_region = region;
            f->root_memo_path = path;
        }
        return path;
    }
    if (f->paths[parent].region == region) {
        f->paths[parent].recursions++;
        return parent;
    }
    const spi_call_fold_state *memo = &f->state[parent];
    if (memo->memo_path >= 0 && memo->memo_region == region) return memo->memo_path;
    int32_t path = spi_call_fold_find_path(f, parent, region);
    if (path >= 0) { /* after the call: a new path may have moved the arrays */
        f->state[parent].memo_region = region;
        f->state[parent].memo_path = path;
    }
    return path;
}

/* One call e of the thread named by spi_call_fold_thread, as the collect's
 * walk gives it: `parent` its enclosing call on that thread (NULL: a
 * root), `parent_id` the parent id the collect stores for it
 * (spi_run_parent_id: a worker root's fork parent). The call's path is
 * placed and tagged on the walk's top entry (spi_call_walk_top) for the
 * calls inside it; its duration is added to the path and, as child time,
 * taken from the parent's path on the same thread (a worker root runs
 * beside its fork parent: that time is the path's other_threads instead).
 * Inline: the collect calls it for every call (about 80 instructions a
 * call, where the fold's own walk took about 180 and a read of the
 * spill file). Nothing when the fold stopped; out of memory stops it. */
static inline void spi_call_fold_call(spi_call_fold *f, spi_call_walk *walk, const spi_event *e,
                                      const spi_enclosing_call *parent, int64_t parent_id) {
    if (f->status != SP_OK) return;
    int32_t parent_path = parent ? parent->path : -1;
    int32_t under = parent_path;
    if (!parent && f->worker && parent_id >= 0) under = spi_call_fold_host_path(f, parent_id);
    int32_t p = spi_call_fold_path_of(f, under, spi_event_region(e));
    if (p < 0) {
        f->status = SP_ERR_OUT_OF_MEMORY;
        return;
    }
    spi_call_walk_top(walk)->path = p;
    spi_call_path *paths = f->paths, *path = &paths[p];
    spi_call_fold_state *state = &f->state[p];
    int64_t d = e->duration_ns, start = e->start_ns;
    if (state->seen_by != f->thread_tag) {
        state->seen_by = f->thread_tag;
        path->threads++;
    }
    uint64_t count = ++path->count;
    path->total += d;
    path->exclusive += d;
    if (parent_path >= 0) paths[parent_path].exclusive -= d;
    if (d < path->minimum) path->minimum = d;
    if (d > path->maximum) path->maximum = d;
    /* Welford per call, in walk order: the order is part of the result */
    double delta = (double)d - state->mean;
    double mean = state->mean + delta / (double)count;
    state->mean = mean;
    path->m2 += delta * ((double)d - mean);
    if (start < path->start_minimum) path->start_minimum = start;
    if (start + d > path->end_maximum) path->end_maximum = start + d;
    /* a worker root under its fork parent: beside the parent, not in it */
    if (under != parent_path) path->other_threads += d;
    if (f->thread_paths) f->thread_paths[spi_event_sequence(e)] = p;
}

/* The folded paths into *out (out->status SP_OK), their regions numbered
 * as the profile's names; or out->status = the fold's failure, or
 * `collect_status` when the collect itself failed (then no paths). The
 * fold's memory is released (spi_call_fold_close is still called). */
void spi_call_fold_finish(spi_call_fold *fold, int collect_status, spi_run_paths *out);

/* Release what the fold still holds; safe after finish and on a fold
 * whose open failed. */
void spi_call_fold_close(spi_call_fold *fold);

#endif /* SPI_RUN_PATHS_H */
