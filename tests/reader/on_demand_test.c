/*
 * on_demand_test - SP_RESULTS_CALLS_ON_DEMAND gives exactly what a full
 * read gives. For every file named on the command line: the same rows,
 * statistics (bit for bit), start order and per-region summaries; every
 * row's calls read through cursors of several slice sizes equal the full
 * read's arrays. `expect` says whether the calls must have stayed in the
 * file ("kept") or the file must have been read whole ("whole").
 *
 *   on_demand_test kept|whole FILE...
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler_results.h"
#include "scope_profiler_summary.h"

static int failures;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                                 \
            fprintf(stderr, "\n");                                        \
            failures++;                                                   \
        }                                                                 \
    } while (0)

static const int64_t *column(const sp_call_slice *s, int which) {
    const int64_t *c[] = {s->starts, s->ends, s->durations, s->call_ids, s->parent_ids,
                          s->thread_ids};
    return c[which];
}

static const int64_t *full_column(const sp_results *r, size_t row, int which) {
    switch (which) {
    case 0: return sp_results_row_starts(r, row);
    case 1: return sp_results_row_ends(r, row);
    case 2: return sp_results_row_durations(r, row);
    case 3: return sp_results_row_call_ids(r, row);
    case 4: return sp_results_row_parent_ids(r, row);
    default: return sp_results_row_thread_ids(r, row);
    }
}

/* Every call of `row` read through a cursor of `slice_max` on `lazy`
 * against the arrays of `full`. */
static void compare_calls(const char *path, const sp_results *full, const sp_results *lazy,
                          size_t row, size_t slice_max) {
    sp_calls *calls;
    int st = sp_calls_open(lazy, row, slice_max, &calls);
    CHECK(st == SP_OK, "%s row %zu: sp_calls_open gave %d", path, row, st);
    if (st != SP_OK) return;
    uint64_t at = 0, n = sp_results_row_calls(full, row);
    sp_call_slice s;
    char msg[512];
    while ((st = sp_calls_next(calls, &s, msg, sizeof msg)) == SP_OK && s.count) {
        CHECK(slice_max == 0 || s.count <= slice_max, "%s: slice of %zu > %zu", path, s.count,
              slice_max);
        for (int w = 0; w < 6; w++) {
            const int64_t *want = full_column(full, row, w), *got = column(&s, w);
            CHECK(!want == !got, "%s row %zu column %d: present %d vs %d", path, row, w, !!want,
                  !!got);
            if (want && got && at + s.count <= n)
                CHECK(memcmp(want + at, got, s.count * 8) == 0,
                      "%s row %zu column %d: calls %" PRIu64 "..+%zu differ", path, row, w, at,
                      s.count);
        }
        at += s.count;
    }
    CHECK(st == SP_OK, "%s row %zu: sp_calls_next gave %d (%s)", path, row, st, msg);
    CHECK(at == n, "%s row %zu: cursor gave %" PRIu64 " calls, the row has %" PRIu64, path, row,
          at, n);
    CHECK(sp_calls_next(calls, &s, NULL, 0) == SP_OK && s.count == 0,
          "%s: a finished cursor must stay finished", path);
    sp_calls_close(calls);
}

static void compare_file(const char *path, int kept) {
    char msg[512];
    sp_results *full = NULL, *lazy = NULL;
    int st = sp_results_open(path, 0, &full, msg, sizeof msg);
    CHECK(st == SP_OK, "%s: full open: %s", path, msg);
    st = sp_results_open(path, SP_RESULTS_CALLS_ON_DEMAND, &lazy, msg, sizeof msg);
    CHECK(st == SP_OK, "%s: on-demand open: %s", path, msg);
    if (!full || !lazy) goto done;
    CHECK(sp_results_calls_in_memory(lazy) == !kept, "%s: calls_in_memory %d, expected %d", path,
          sp_results_calls_in_memory(lazy), !kept);
    size_t rows = sp_results_row_count(full);
    CHECK(rows == sp_results_row_count(lazy), "%s: row counts differ", path);
    for (size_t row = 0; row < rows; row++) {
        sp_row_stats a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        sp_results_row_stats(full, row, &a);
        sp_results_row_stats(lazy, row, &b);
        CHECK(memcmp(&a, &b, sizeof a) == 0, "%s row %zu: statistics differ (total %" PRId64
              " vs %" PRId64 ", m2 %.17g vs %.17g)", path, row, a.total, b.total, a.m2, b.m2);
        CHECK(sp_results_row_in_start_order(full, row) == sp_results_row_in_start_order(lazy, row),
              "%s row %zu: start order differs", path, row);
        if (kept) {
            CHECK(sp_results_row_starts(lazy, row) == NULL, "%s: kept calls have no arrays", path);
        }
        if (!sp_results_has_events(full)) continue;
        compare_calls(path, full, lazy, row, 1);
        compare_calls(path, full, lazy, row, 7);
        compare_calls(path, full, lazy, row, 0);
    }
    size_t regions = sp_results_region_count(full);
    sp_region_summary *x = calloc(regions + 1, sizeof *x), *y = calloc(regions + 1, sizeof *y);
    if (x && y) {
        int sa = sp_summary_regions(full, NULL, 0, x, NULL, 0);
        int sb = sp_summary_regions(lazy, NULL, 0, y, NULL, 0);
        CHECK(sa == sb, "%s: sp_summary_regions %d vs %d", path, sa, sb);
        for (size_t r = 0; r < regions; r++) {
            CHECK(memcmp(&x[r], &y[r], sizeof x[r]) == 0,
                  "%s region %zu: summaries differ (p50 %.17g vs %.17g, available %x vs %x)", path,
                  r, x[r].p50_ns, y[r].p50_ns, x[r].available, y[r].available);
            double pa = -1, pb = -2;
            if (sp_results_has_events(full)) {
                sp_summary_percentile(full, r, NULL, 0, 95.0, &pa);
                sp_summary_percentile(lazy, r, NULL, 0, 95.0, &pb);
                CHECK(pa == pb, "%s region %zu: p95 %.17g vs %.17g", path, r, pa, pb);
            }
        }
    }
    free(x);
    free(y);
done:
    sp_results_close(full);
    sp_results_close(lazy);
}

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "kept") != 0 && strcmp(argv[1], "whole") != 0)) {
        fprintf(stderr, "usage: on_demand_test kept|whole FILE...\n");
        return 2;
    }
    int kept = strcmp(argv[1], "kept") == 0;
    for (int i = 2; i < argc; i++) compare_file(argv[i], kept);
    /* misuse */
    sp_results *r = NULL;
    CHECK(sp_results_open(argv[2], SP_RESULTS_CALLS_ON_DEMAND | SP_RESULTS_SUMMARY_ONLY, &r,
                          NULL, 0) == SP_ERR_INVALID_ARGUMENT,
          "both flags must be refused");
    sp_calls *c = (sp_calls *)1;
    CHECK(sp_calls_open(NULL, 0, 0, &c) == SP_ERR_INVALID_ARGUMENT && c == NULL,
          "NULL results must be refused");
    sp_calls_close(NULL);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
