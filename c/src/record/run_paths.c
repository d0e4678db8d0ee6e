/*
 * run_paths.c - a trace's calls folded into call paths (run_paths.h), the
 * input of the end-of-run summary.
 *
 * The summary is a tree of call paths. Building it from the calls (the
 * rank's call tree, calltree.c) needs every call in memory, which for a
 * bounded trace is many times the bound: 2.8 GB for 20M calls of one
 * region. A path table needs memory per distinct path only, and the walk
 * the collect already makes over each thread's events gives it, because
 * the backward walk (call_parents.h) visits a call's parent before the
 * call: the parent's path is known when the call is placed. Until issue 31
 * the fold made a walk of its own before the collect; now the collect
 * feeds it (spi_call_fold_call), in the same thread order
 * (spi_run_walk_order), so the paths are bit for bit those of that walk.
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

#include <string.h>

#include "util/alloc.h"
#include "record/registry.h"

static int grow(spi_call_fold *f) {
    size_t capacity = f->capacity ? f->capacity * 2 : 64;
    spi_call_path *paths = spi_reallocarray(f->paths, capacity, sizeof *paths);
    if (!paths) return SP_ERR_OUT_OF_MEMORY;
    f->paths = paths;
    spi_call_fold_state *state = spi_reallocarray(f->state, capacity, sizeof *state);
    if (!state) return SP_ERR_OUT_OF_MEMORY;
    f->state = state;
    f->capacity = capacity;
    return SP_OK;
}

int32_t spi_call_fold_find_path(spi_call_fold *f, int32_t parent, uint32_t region) {
    uint64_t key = spi_path_key(parent, (int)region);
    int32_t found = spi_path_table_find(&f->index, key);
    if (found >= 0) return found;
    if (f->count >= INT32_MAX) return -1;
    if (spi_path_table_reserve(&f->index, f->count + 1, 256) != SP_OK) return -1;
    if (f->count == f->capacity && grow(f) != SP_OK) return -1;
    int32_t index = (int32_t)f->count++;
    f->paths[index] = (spi_call_path){.rank = f->rank, .region = region, .parent = parent,
                                      .thread = -1, .minimum = INT64_MAX,
                                      .maximum = INT64_MIN, .start_minimum = INT64_MAX,
                                      .end_maximum = INT64_MIN};
    f->state[index] = (spi_call_fold_state){.mean = 0.0, .seen_by = 0, .memo_path = -1};
    spi_path_table_insert(&f->index, key, index);
    return index;
}

int32_t spi_call_fold_host_path(const spi_call_fold *f, int64_t host) {
    if (!f->sequence_paths) return -1; /* opened without fork parents */
    size_t lo = 0, hi = f->thread_count; /* the thread whose ids hold `host` */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->bases[mid] <= host) lo = mid;
        else hi = mid;
    }
    return f->sequence_paths[lo] ? f->sequence_paths[lo][host - f->bases[lo]] : -1;
}

int spi_call_fold_open(spi_call_fold *f, const spi_session *session, uint32_t rank,
                       const int64_t *bases, bool with_hosts) {
    *f = (spi_call_fold){.rank = rank, .status = SP_OK, .root_memo_path = -1, .bases = bases,
                         .thread_count = (size_t)session->thread_count};
    if (!with_hosts) return SP_OK;
    /* fork parents' paths by sequence, only when some worker recorded */
    f->sequence_paths = spi_calloc(f->thread_count + 1, sizeof *f->sequence_paths);
    if (!f->sequence_paths) f->status = SP_ERR_OUT_OF_MEMORY;
    size_t i = 0;
    for (const spi_thread *t = session->threads; t && f->status == SP_OK; t = t->next, i++) {
        if (t->omp_worker) continue;
        size_t bytes = ((size_t)t->next_sequence + 1) * sizeof *f->sequence_paths[i];
        f->sequence_paths[i] = spi_malloc(bytes);
        if (!f->sequence_paths[i]) f->status = SP_ERR_OUT_OF_MEMORY;
        else memset(f->sequence_paths[i], 0xff, bytes); /* -1: not recorded */
    }
    return f->status;
}

void spi_call_fold_thread(spi_call_fold *f, const spi_thread *t, size_t index) {
    f->thread_tag = (uint32_t)index + 1;
    f->worker = t->omp_worker;
    f->thread_paths = f->sequence_paths ? f->sequence_paths[index] : NULL;
}

/* Regions as the profile numbers them (run.c): the regions with calls, in
 * registration order. Every recorded call is on a path, so the regions of
 * the paths are exactly those. */
static int number_regions(spi_call_fold *f) {
    int region_count = spi_registry_count();
    int32_t *index = spi_calloc((size_t)region_count + 1, sizeof *index);
    if (!index) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < f->count; i++) index[f->paths[i].region] = 1;
    int32_t next = 0;
    for (int r = 0; r < region_count; r++) index[r] = index[r] ? next++ : -1;
    for (size_t i = 0; i < f->count; i++) f->paths[i].region = (uint32_t)index[f->paths[i].region];
    spi_free(index);
    return SP_OK;
}

void spi_call_fold_finish(spi_call_fold *f, int collect_status, spi_run_paths *out) {
    *out = (spi_run_paths){.status = collect_status != SP_OK ? collect_status : f->status};
    if (out->status == SP_OK) out->status = number_regions(f);
    if (out->status == SP_OK) {
        out->paths = f->paths;
        out->count = f->count;
        f->paths = NULL;
        f->count = 0;
    }
    spi_call_fold_close(f);
}

void spi_call_fold_close(spi_call_fold *f) {
    for (size_t i = 0; f->sequence_paths && i < f->thread_count; i++)
        spi_free(f->sequence_paths[i]);
    spi_free(f->sequence_paths);
    spi_free(f->paths);
    spi_free(f->state);
    spi_path_table_free(&f->index);
    *f = (spi_call_fold){.status = f->status, .root_memo_path = -1};
}
