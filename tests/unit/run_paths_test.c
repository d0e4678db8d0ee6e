/*
 * run_paths_test.c - the summary's call paths that spi_run_collect folds in
 * its own walk (record/run_paths.h) against the paths the tools fold from
 * the collected profile's calls (analysis/call_paths.h, what scope-inspect's
 * summary prints): the two are written independently, one from the events
 * with their recorded nesting, the other from the rows' stored call and
 * parent ids in time order.
 *
 * Two sessions of one workload: a bounded one that spills (the streamed
 * collect, run_stream.c) and an unbounded one (run.c). The workload has
 * what the fold must get right: nested regions, recursion (collapsed into
 * one path), a parent whose children alternate between two paths, four
 * pthreads (one attached after the OpenMP workers), an OpenMP team when
 * the build has OpenMP (worker roots under the call that forked them:
 * other-threads time, the threads column), a call still open at finalize
 * (its children become roots). Per path, count, recursions, total, exclusive, min, max, first
 * start, last end, threads and other-threads time must be equal; m2 (a
 * Welford sum over the calls in another order) within 1e-9 relative.
 *
 * Usage: run_paths_test DIR
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/call_paths.h"
#include "record/clock.h"
#include "record/recorder.h"
#include "record/run.h"
#include "record/spill.h"
#include "util/alloc.h"
#include "scope_profiler.h"
#include "unit_check.h"

enum { MAIN, WORK, EVEN, ODD, TEAM, KERNEL, REGIONS };
static int regions[REGIONS];

/* EVEN inside EVEN, then ODD inside ODD: two runs of one region each
 * (recursion, collapsed into one path), one inside the other */
static void recurse(int depth) {
    sp_begin(regions[depth > 2 ? EVEN : ODD]);
    if (depth > 0) recurse(depth - 1);
    sp_end(regions[depth > 2 ? EVEN : ODD]);
}

/* WORK has two kinds of children (EVEN's recursion, a plain ODD), so a
 * parent's children alternate between two paths */
static void *work(void *arg) {
    long calls = (long)(intptr_t)arg;
    for (long i = 0; i < calls; i++) {
        sp_begin(regions[WORK]);
        if (i % 97 == 0) {
            recurse(6);
        } else if (i % 5 == 0) {
            sp_begin(regions[ODD]);
            sp_end(regions[ODD]);
        }
        sp_end(regions[WORK]);
    }
    return NULL;
}

/* An OpenMP team inside a call of TEAM: the workers' KERNEL roots belong
 * under it (a worker's own nesting too: KERNEL > EVEN/ODD). */
static void team(long calls) {
    sp_begin(regions[TEAM]);
#ifdef _OPENMP
#pragma omp parallel num_threads(3)
    {
        for (long i = 0; i < calls; i++) {
            sp_begin(regions[KERNEL]);
            if (i % 13 == 0) recurse(3);
            sp_end(regions[KERNEL]);
        }
    }
#else
    (void)calls;
#endif
    sp_end(regions[TEAM]);
}

static void record(long calls) {
    sp_begin(regions[MAIN]); /* stays open: dropped, its children become roots */
    pthread_t threads[3];
    for (int i = 0; i < 3; i++)
        if (pthread_create(&threads[i], NULL, work, (void *)(intptr_t)(calls + 1000 * i)) != 0)
            exit(2);
    for (int round = 0; round < 4; round++) team(calls / 8);
    work((void *)(intptr_t)(calls / 2));
    for (int i = 0; i < 3; i++) pthread_join(threads[i], NULL);
    /* a thread attached after the workers: the walk (non-workers first)
     * is then not the attach order the rows keep */
    pthread_t late;
    if (pthread_create(&late, NULL, work, (void *)(intptr_t)(calls / 4)) != 0) exit(2);
    pthread_join(late, NULL);
    team(calls / 8);
}

/* The streamed profile's calls into arrays, so the tools' fold reads them
 * as it reads a file's (the row source serves each row once, in order). */
static int take_rows(spi_profile *p) {
    for (size_t r = 0; r < p->row_count; r++) {
        spi_row *row = &p->rows[r];
        size_t n = (size_t)row->count;
        row->starts = spi_malloc((n + 1) * sizeof(int64_t));
        row->durations = spi_malloc((n + 1) * sizeof(int64_t));
        row->call_ids = spi_malloc((n + 1) * sizeof(int64_t));
        row->parent_ids = spi_malloc((n + 1) * sizeof(int64_t));
        row->thread_ids = spi_malloc((n + 1) * sizeof(int64_t));
        if (!row->starts || !row->durations || !row->call_ids || !row->parent_ids ||
            !row->thread_ids)
            return SP_ERR_OUT_OF_MEMORY;
        for (uint64_t at = 0; at < row->count;) {
            spi_call_slice s;
            spi_error err;
            int status = spi_profile_row_calls(p, r, at, 1 << 16, &s, &err);
            if (status != SP_OK || s.count == 0) return status != SP_OK ? status : SP_ERR_CORRUPT;
            memcpy(row->starts + at, s.starts, s.count * sizeof(int64_t));
            memcpy(row->durations + at, s.durations, s.count * sizeof(int64_t));
            memcpy(row->call_ids + at, s.call_ids, s.count * sizeof(int64_t));
            memcpy(row->parent_ids + at, s.parent_ids, s.count * sizeof(int64_t));
            for (size_t i = 0; i < s.count; i++)
                row->thread_ids[at + i] = s.thread_ids ? s.thread_ids[i] : 0;
            at += s.count;
        }
        row->stats = *spi_profile_row_stats(p, r);
    }
    p->source->release(p->source);
    p->source = NULL;
    return SP_OK;
}

static bool close_enough(double a, double b) {
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-6;
}

/* The folded paths against the tools' paths of the same profile. */
static void compare(const char *what, const spi_profile *p, const spi_run_paths *folded,
                    bool expect_workers) {
    CHECK(folded->status == SP_OK, "%s: fold status %d", what, folded->status);
    size_t *rows = malloc((p->row_count + 1) * sizeof *rows);
    size_t first[2] = {0, p->row_count};
    uint32_t rank = 0;
    for (size_t r = 0; r < p->row_count; r++) rows[r] = r;
    spi_call_paths_options options = {0};
    spi_path_summary *tools = NULL;
    size_t count = 0;
    spi_error err;
    spi_error_clear(&err);
    int status = spi_call_paths_build(p, &rank, 1, rows, first, &options, &tools, &count, &err);
    CHECK(status == SP_OK, "%s: the tools' fold: %s", what, err.message);
    CHECK(count == folded->count, "%s: %zu paths folded, the tools find %zu", what,
          folded->count, count);
    size_t *match = malloc((folded->count + 1) * sizeof *match);
    int64_t other_threads = 0;
    for (size_t i = 0; status == SP_OK && i < folded->count && i < count; i++) {
        const spi_call_path *a = &folded->paths[i];
        CHECK(a->parent < (int64_t)i, "%s: path %zu: parent %lld not before it", what, i,
              (long long)a->parent);
        /* the same path: the same region under the same parent path */
        size_t j = 0;
        while (j < count &&
               !(tools[j].path.region == a->region &&
                 (a->parent < 0 ? tools[j].path.parent < 0
                                : tools[j].path.parent == (int64_t)match[a->parent])))
            j++;
        CHECK(j < count, "%s: path %zu (%s) is not among the tools' paths", what, i,
              p->names[a->region]);
        if (j == count) break;
        match[i] = j;
        const spi_call_path *b = &tools[j].path;
        const char *name = p->names[a->region];
#define SAME(field)                                                                        \
    CHECK(a->field == b->field, "%s: path %zu (%s): " #field " %lld folded, %lld by the tools", \
          what, i, name, (long long)a->field, (long long)b->field)
        SAME(count);
        SAME(recursions);
        SAME(total);
        SAME(exclusive);
        SAME(minimum);
        SAME(maximum);
        SAME(start_minimum);
        SAME(end_maximum);
#undef SAME
        CHECK(a->other_threads == tools[j].other_threads,
              "%s: path %zu (%s): other threads %lld ns folded, %lld by the tools", what, i, name,
              (long long)a->other_threads, (long long)tools[j].other_threads);
        CHECK(a->threads == tools[j].threads,
              "%s: path %zu (%s): %u threads folded, %u by the tools", what, i, name, a->threads,
              tools[j].threads);
        CHECK(close_enough(a->m2, b->m2), "%s: path %zu (%s): m2 %.17g folded, %.17g by the tools",
              what, i, name, a->m2, b->m2);
        CHECK(a->thread == -1, "%s: path %zu: thread %lld, not pooled", what, i,
              (long long)a->thread);
        other_threads += a->other_threads;
    }
    /* the workload did reach what it is here for */
    size_t recursive = 0;
    for (size_t i = 0; i < folded->count; i++) recursive += folded->paths[i].recursions > 0;
    CHECK(recursive > 0, "%s: no path collapsed a recursion", what);
    CHECK(!expect_workers || other_threads > 0, "%s: no worker root under its fork parent", what);
    printf("run_paths_test: %s: %zu paths, %llu calls, equal to the tools' paths%s\n", what,
           folded->count, (unsigned long long)p->event_count,
           expect_workers ? " (OpenMP workers under their fork parents)" : "");
    free(match);
    free(rows);
    free(tools);
}

static void run(const char *what, const char *spill_path, size_t limit_bytes, long calls) {
    spi_error err;
    spi_error_clear(&err);
    spi_spill *spill = NULL;
    if (spill_path) CHECK(spi_spill_open(&spill, spill_path, &err) == SP_OK, "%s", err.message);
    spi_recording recording = {.buffer_limit_bytes = limit_bytes, .spill = spill,
                               .spill_label = spill_path};
    CHECK(spi_recorder_start(&recording) == SP_OK, "%s: cannot start", what);
    const char *names[REGIONS] = {"main", "work", "even", "odd", "team", "kernel"};
    for (int i = 0; i < REGIONS; i++) regions[i] = sp_region(names[i]);
    record(calls);
    spi_session session = spi_recorder_stop();
    CHECK(!spill_path || spi_session_spilled(&session), "%s: the session never spilled", what);
    CHECK(spi_recorder_convert_ticks(&session) == SP_OK, "%s: tick conversion", what);
    spi_profile profile = {0};
    spi_run_report report;
    spi_run_paths folded;
    CHECK(spi_run_collect(&session, 0, &profile, &report, &folded) == SP_OK, "%s: collect",
          what);
    CHECK(report.open_calls == 1, "%s: %llu open calls", what,
          (unsigned long long)report.open_calls);
    CHECK(!spill_path == !profile.source, "%s: streamed %d", what, profile.source != NULL);
    if (profile.source) CHECK(take_rows(&profile) == SP_OK, "%s: the streamed rows", what);
    bool workers = false, after_workers = false;
    for (const spi_thread *t = session.threads; t; t = t->next) {
        after_workers = after_workers || (workers && !t->omp_worker);
        workers = workers || (t->omp_worker && t->next_sequence > 0);
    }
#ifdef _OPENMP
    CHECK(workers, "%s: no OpenMP worker recorded", what);
    CHECK(after_workers, "%s: no thread attached after the workers", what);
#endif
    compare(what, &profile, &folded, workers);
    spi_free(folded.paths);
    spi_profile_free(&profile);
    spi_recorder_release(&session);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: run_paths_test DIR\n");
        return 2;
    }
    char spill_path[4096];
    snprintf(spill_path, sizeof spill_path, "%s/spilled.h5", argv[1]);
    /* more calls than one sorted run of run_stream.c holds (16 MiB of
     * 40-byte calls): several runs merged */
    run("bounded trace, streamed", spill_path, (size_t)3 << 20, 150000);
    run("unbounded trace, in memory", NULL, 0, 20000);
    return failures ? 1 : 0;
}
