/*
 * check_results - read a merged profile back through the public results API
 * and compare it with its inputs: every (rank, region) row of every input
 * must be in the output with the same calls, start and end timestamps, GPU
 * durations and source location, every call on a thread of the output's
 * thread table; call ids must be unique per rank and every parent must be
 * an earlier id on the same rank.
 *
 *   check_results MERGED IN...     exit 0 = all equal, 1 = a mismatch
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler_results.h"

static int failures;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static int same(const int64_t *a, const int64_t *b, uint64_t n) {
    if (n == 0) return 1;
    if (!a || !b) return a == b;
    return memcmp(a, b, n * sizeof *a) == 0;
}

static int compare_ll(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

static void check_ids(const sp_results *out) {
    size_t rows = sp_results_row_count(out);
    uint32_t max_rank = 0;
    for (size_t r = 0; r < rows; r++)
        if (sp_results_row_rank(out, r) > max_rank) max_rank = sp_results_row_rank(out, r);
    for (uint32_t rank = 0; rank <= max_rank && rows; rank++) {
        size_t n = 0;
        for (size_t r = 0; r < rows; r++)
            if (sp_results_row_rank(out, r) == rank && sp_results_row_call_ids(out, r))
                n += sp_results_row_calls(out, r);
        int64_t *ids = calloc(n ? n : 1, sizeof *ids);
        size_t k = 0;
        for (size_t r = 0; r < rows; r++) {
            const int64_t *c = sp_results_row_call_ids(out, r);
            if (sp_results_row_rank(out, r) != rank || !c) continue;
            for (uint64_t i = 0; i < sp_results_row_calls(out, r); i++)
                if (c[i] >= 0) ids[k++] = c[i];
        }
        qsort(ids, k, sizeof *ids, compare_ll);
        for (size_t i = 1; i < k; i++)
            CHECK(ids[i] != ids[i - 1], "rank %u: call id %lld appears twice", rank,
                  (long long)ids[i]);
        for (size_t r = 0; r < rows; r++) {
            const int64_t *c = sp_results_row_call_ids(out, r);
            const int64_t *p = sp_results_row_parent_ids(out, r);
            if (sp_results_row_rank(out, r) != rank || !c || !p) continue;
            for (uint64_t i = 0; i < sp_results_row_calls(out, r); i++) {
                if (p[i] < 0) continue;
                CHECK(p[i] < c[i], "rank %u: parent %lld not below child %lld", rank,
                      (long long)p[i], (long long)c[i]);
                CHECK(bsearch(&p[i], ids, k, sizeof *ids, compare_ll) != NULL,
                      "rank %u: parent %lld is no call id", rank, (long long)p[i]);
            }
        }
        free(ids);
    }
}

/* Whether (rank, index) is a row of the file's thread table. */
static int thread_known(const sp_results *res, uint32_t rank, int64_t index) {
    for (size_t t = 0; t < sp_results_thread_count(res); t++) {
        sp_thread_info info;
        if (sp_results_thread(res, t, &info) == SP_OK && info.rank == rank &&
            info.index == index)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: check_results MERGED IN...\n");
        return 2;
    }
    char msg[1024];
    sp_results *out = NULL;
    int st = sp_results_open(argv[1], 0, &out, msg, sizeof msg);
    if (st != SP_OK) {
        fprintf(stderr, "cannot read the merged file: %s\n", msg);
        return 1;
    }
    CHECK(sp_results_schema_version(out) == 3, "schema %d", sp_results_schema_version(out));
    size_t expected_rows = 0;
    for (int a = 2; a < argc; a++) {
        sp_results *in = NULL;
        st = sp_results_open(argv[a], 0, &in, msg, sizeof msg);
        if (st != SP_OK) {
            fprintf(stderr, "cannot read input: %s\n", msg);
            return 1;
        }
        expected_rows += sp_results_row_count(in);
        for (size_t r = 0; r < sp_results_row_count(in); r++) {
            const char *name = sp_results_region_name(in, sp_results_row_region(in, r));
            uint32_t rank = sp_results_row_rank(in, r);
            long region = sp_results_region_find(out, name);
            CHECK(region >= 0, "%s: region %s missing", argv[a], name);
            if (region < 0) continue;
            long o = sp_results_row_find(out, rank, (size_t)region);
            CHECK(o >= 0, "%s: row (%u, %s) missing", argv[a], rank, name);
            if (o < 0) continue;
            uint64_t n = sp_results_row_calls(in, r);
            CHECK(sp_results_row_calls(out, (size_t)o) == n, "%s: %s calls differ", argv[a], name);
            if (sp_results_row_calls(out, (size_t)o) != n) continue;
            CHECK(same(sp_results_row_starts(in, r), sp_results_row_starts(out, (size_t)o), n),
                  "%s: %s rank %u starts differ", argv[a], name, rank);
            CHECK(same(sp_results_row_ends(in, r), sp_results_row_ends(out, (size_t)o), n),
                  "%s: %s rank %u ends differ", argv[a], name, rank);
            CHECK(same(sp_results_row_gpu_durations(in, r),
                       sp_results_row_gpu_durations(out, (size_t)o), n),
                  "%s: %s gpu durations differ", argv[a], name);
            CHECK(sp_results_row_source_line(in, r) == sp_results_row_source_line(out, (size_t)o),
                  "%s: %s source line differs", argv[a], name);
            const char *fi = sp_results_row_source_file(in, r);
            const char *fo = sp_results_row_source_file(out, (size_t)o);
            CHECK((!fi && !fo) || (fi && fo && strcmp(fi, fo) == 0), "%s: %s source file",
                  argv[a], name);
            CHECK(strcmp(sp_results_row_tags_json(in, r), sp_results_row_tags_json(out, (size_t)o)) == 0,
                  "%s: %s tags differ", argv[a], name);
            CHECK(sp_results_row_exclusive_total(out, (size_t)o) >= -1, "%s: exclusive", name);
            /* Every call gets a lane (docs/FORMAT.md 4.5): a thread id of
             * the output's thread table on its rank, or -1 for a call that
             * had none when that is its rank's only lane. Calls of one
             * input thread (or without one) stay on one output thread. */
            const int64_t *ti = sp_results_row_thread_ids(in, r);
            const int64_t *to = sp_results_row_thread_ids(out, (size_t)o);
            CHECK(n == 0 || to || !ti, "%s: %s thread ids lost", argv[a], name);
            for (uint64_t i = 0; to && i < n; i++) {
                CHECK(thread_known(out, rank, to[i]) || (to[i] == -1 && (!ti || ti[i] == -1)),
                      "%s: %s call %llu: thread %lld is not in the output's thread table",
                      argv[a], name, (unsigned long long)i, (long long)to[i]);
                for (uint64_t j = 0; j < i && i < 64; j++)
                    if ((ti ? ti[i] == ti[j] : 1))
                        CHECK(to[i] == to[j], "%s: %s: one input lane split over threads %lld "
                              "and %lld", argv[a], name, (long long)to[j], (long long)to[i]);
            }
        }
        sp_results_close(in);
    }
    CHECK(sp_results_row_count(out) == expected_rows, "rows %zu, expected %zu",
          sp_results_row_count(out), expected_rows);
    check_ids(out);
    sp_results_close(out);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
