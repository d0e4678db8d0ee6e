/*
 * scope-check - validate profile files against the format contract
 * (FORMAT.md), the way h5check validates HDF5 files: every violation is
 * reported, one line each, not just the first.
 *
 *   scope-check FILE... [--quiet] [--strict]
 *
 * sp_results_open already refuses what cannot be read safely (index past
 * the event columns, overlapping rows, region ids out of range, newer
 * schemas). What it accepts may still break the promises the format makes
 * about the values, and those are what this tool checks, per rank:
 *   - every duration is >= 0;
 *   - call ids are unique on a rank; -1 means "not numbered";
 *   - a parent id >= 0 names a call of the same rank with a smaller id that
 *     encloses the child in time (on the same thread, or on another one:
 *     an OpenMP worker's call under the call that forked its team);
 *   - thread ids (-1 = unknown lane) are indexes of the rank's thread table;
 *   - no (rank, region) pair has two rows;
 *   - the stored summary_statistics (read with SP_RESULTS_SUMMARY_ONLY,
 *     exactly what a summary-only reader would trust) agree with the
 *     events: integers exactly, mean and m2 to 1e-9 relative;
 *   - stored exclusive totals (>= 0) equal the totals of the call tree the
 *     parent ids describe.
 * Calls out of start order within a row are legal (FORMAT.md 3.1) and only
 * reported, as warnings, with --strict.
 *
 * A thin main over the public API (scope_profiler_results.h): no internal
 * header, so the checks are those any reader of the format could make.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_isolate.h"
#include "scope_profiler.h"
#include "scope_profiler_results.h"



static const char usage_text[] =
    "Usage: scope-check [OPTIONS] FILE...\n"
    "\n"
    "Check scope-profiler files (HDF5 schema 1-3, the aggregate layout, native\n"
    "traces) against the format contract and report every violation, one line\n"
    "each: \"FILE: rank R region NAME: problem\". Each FILE ends with a verdict,\n"
    "\"FILE: ok (N regions, M calls, K ranks)\" or \"FILE: invalid (...)\".\n"
    "\n"
    "Checked: durations >= 0; call ids unique per rank; each parent id names an\n"
    "earlier-numbered call of the same rank that encloses the child (on another\n"
    "thread only as an OpenMP fork parent);\n"
    "thread ids within the thread table; one row per (rank, region); stored\n"
    "summary_statistics and exclusive totals equal to what the events give.\n"
    "\n"
    "Options:\n"
    "  --quiet     print only the problems (no verdict lines)\n"
    "  --strict    also warn about calls stored out of start order (legal; a\n"
    "              warning does not make a file invalid)\n"
    "  -h, --help  show this help\n"
    "      --version  show the version, git describe, HDF5 and MPI\n"
    "\n"
    "Exit status:\n"
    "  0  every FILE is valid\n"
    "  1  usage error\n"
    "  2  some FILE is invalid or cannot be read\n"
    "  3  any other failure (out of memory, output not writable)\n";

/* Where problems go and how many a file had. */
typedef struct checker {
    const char *path;
    const sp_results *res;
    size_t problems;
    size_t warnings;
    bool failed;  /* out of memory: the verdict would be incomplete */
} checker;

/* Region names come from other programs; a control character in one must
 * not break the one-line-per-problem promise. */
static void print_name(const char *name) {
    for (const unsigned char *p = (const unsigned char *)(name ? name : "?"); *p; p++) {
        if (*p < 0x20 || *p == 0x7f) printf("\\x%02x", *p);
        else putchar(*p);
    }
}

static void report(checker *ck, bool warning, long rank, const char *region, const char *format,
                   ...) __attribute__((format(printf, 5, 6)));
static void report(checker *ck, bool warning, long rank, const char *region, const char *format,
                   ...) {
    printf("%s: ", ck->path);
    if (rank >= 0) printf("rank %ld ", rank);
    if (region) {
        printf("region ");
        print_name(region);
        fputs(": ", stdout);
    } else if (rank >= 0) {
        fputs(": ", stdout);
    }
    if (warning) fputs("warning: ", stdout);
    va_list ap;
    va_start(ap, format);
    vprintf(format, ap);
    va_end(ap);
    putchar('\n');
    if (warning) ck->warnings++;
    else ck->problems++;
}

static const char *row_name(const sp_results *res, size_t row) {
    return sp_results_region_name(res, sp_results_row_region(res, row));
}

/* "call id 7", or "call #2" (its position in the row) when not numbered. */
static const char *call_label(char *buf, size_t len, const int64_t *ids, uint64_t k) {
    if (ids && ids[k] >= 0) snprintf(buf, len, "call id %lld", (long long)ids[k]);
    else snprintf(buf, len, "call #%llu", (unsigned long long)k);
    return buf;
}

/* ---- thread table ---------------------------------------------------------- */

typedef struct thread_key {
    uint32_t rank;
    int64_t index;
} thread_key;

static int cmp_thread_key(const void *pa, const void *pb) {
    const thread_key *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* The (rank, index) pairs of the thread table, sorted for lookup; a pair
 * listed twice makes thread ids ambiguous and is a problem of its own. */
static thread_key *thread_keys(checker *ck, size_t *count) {
    size_t n = sp_results_thread_count(ck->res);
    thread_key *keys = malloc((n + 1) * sizeof *keys);
    *count = 0;
    if (!keys) return NULL;
    for (size_t t = 0; t < n; t++) {
        sp_thread_info info;
        if (sp_results_thread(ck->res, t, &info) != SP_OK) continue;
        keys[*count].rank = info.rank;
        keys[*count].index = info.index;
        (*count)++;
    }
    qsort(keys, *count, sizeof *keys, cmp_thread_key);
    for (size_t i = 1; i < *count; i++)
        if (!cmp_thread_key(&keys[i - 1], &keys[i]))
            report(ck, false, (long)keys[i].rank, NULL,
                   "thread table lists thread index %lld more than once",
                   (long long)keys[i].index);
    return keys;
}

/* ---- per-rank checks of the events ----------------------------------------- */

/* One numbered call of a rank: its id and where it is (flat = the call's
 * position in the rank's concatenated rows). */
typedef struct id_entry {
    int64_t id;
    size_t flat;
} id_entry;

static int cmp_id_entry(const void *pa, const void *pb) {
    const id_entry *a = pa, *b = pb;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->flat < b->flat ? -1 : a->flat > b->flat;
}

/* First entry with `id`, or NULL. */
static const id_entry *find_id(const id_entry *ids, size_t n, int64_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && ids[lo].id == id ? &ids[lo] : NULL;
}

typedef struct rank_rows {
    uint32_t rank;
    const size_t *rows;  /* the rank's rows, in file order */
    size_t count;
    size_t *base;        /* flat index of each row's first call */
    size_t calls;
} rank_rows;

/* Row and position of flat call index `flat`. */
static void locate(const rank_rows *rr, size_t flat, size_t *row_i, uint64_t *k) {
    size_t lo = 0, hi = rr->count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (rr->base[mid] <= flat) lo = mid;
        else hi = mid;
    }
    *row_i = lo;
    *k = flat - rr->base[lo];
}

static int cmp_size(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return a < b ? -1 : a > b;
}

static void check_duplicate_rows(checker *ck, const rank_rows *rr) {
    size_t *regions = malloc((rr->count + 1) * sizeof *regions);
    if (!regions) {
        ck->failed = true;
        return;
    }
    for (size_t i = 0; i < rr->count; i++) regions[i] = sp_results_row_region(ck->res, rr->rows[i]);
    qsort(regions, rr->count, sizeof *regions, cmp_size);
    for (size_t i = 1; i < rr->count; i++)
        if (regions[i] == regions[i - 1] && (i < 2 || regions[i - 2] != regions[i]))
            report(ck, false, (long)rr->rank, sp_results_region_name(ck->res, regions[i]),
                   "more than one index row for this rank and region");
    free(regions);
}

static void check_rank_events(checker *ck, const rank_rows *rr, const thread_key *threads,
                              size_t thread_count, bool strict) {
    const sp_results *res = ck->res;
    long rank = (long)rr->rank;
    char a[64];
    id_entry *ids = malloc((rr->calls + 1) * sizeof *ids);
    /* Unsigned sums: a damaged file may hold durations near INT64_MAX, and
     * the checker must report them, not overflow on them. */
    uint64_t *child_ns = calloc(rr->calls + 1, sizeof *child_ns);
    if (!ids || !child_ns) {
        free(ids);
        free(child_ns);
        ck->failed = true;
        return;
    }
    /* Pass 1: per-call values, and the rank's ids for the lookups below. */
    size_t id_count = 0;
    bool all_numbered = true;  /* every row of the rank has call/parent ids */
    for (size_t i = 0; i < rr->count; i++) {
        size_t row = rr->rows[i];
        const char *name = row_name(res, row);
        uint64_t calls = sp_results_row_calls(res, row);
        const int64_t *starts = sp_results_row_starts(res, row);
        const int64_t *dur = sp_results_row_durations(res, row);
        const int64_t *cid = sp_results_row_call_ids(res, row);
        const int64_t *pid = sp_results_row_parent_ids(res, row);
        const int64_t *tid = sp_results_row_thread_ids(res, row);
        if (calls == 0 || !starts || !dur) continue;
        if (!cid || !pid) all_numbered = false;
        uint64_t out_of_order = 0, first_out = 0;
        for (uint64_t k = 0; k < calls; k++) {
            if (dur[k] < 0)
                report(ck, false, rank, name, "%s: negative duration %lld ns",
                       call_label(a, sizeof a, cid, k), (long long)dur[k]);
            if (cid && cid[k] < -1)
                report(ck, false, rank, name, "call #%llu: invalid call id %lld (ids are >= 0, "
                       "-1 = not numbered)", (unsigned long long)k, (long long)cid[k]);
            if (cid && cid[k] >= 0) ids[id_count++] = (id_entry){cid[k], rr->base[i] + k};
            if (cid && cid[k] == -1) all_numbered = false;
            if (pid && pid[k] < -1)
                report(ck, false, rank, name, "%s: invalid parent id %lld (-1 = root)",
                       call_label(a, sizeof a, cid, k), (long long)pid[k]);
            if (tid && tid[k] != -1) {
                thread_key key = {rr->rank, tid[k]};
                if (tid[k] < -1 ||
                    !bsearch(&key, threads, thread_count, sizeof *threads, cmp_thread_key))
                    report(ck, false, rank, name,
                           "%s: thread id %lld is not in the thread table of rank %ld",
                           call_label(a, sizeof a, cid, k), (long long)tid[k], rank);
            }
            if (k > 0 && starts[k] < starts[k - 1] && out_of_order++ == 0) first_out = k;
        }
        if (strict && out_of_order)
            report(ck, true, rank, name,
                   "%llu call(s) start before the call stored before them (first: call #%llu)",
                   (unsigned long long)out_of_order, (unsigned long long)first_out);
    }
    qsort(ids, id_count, sizeof *ids, cmp_id_entry);
    for (size_t j = 1; j < id_count; j++) {
        if (ids[j].id != ids[j - 1].id) continue;
        size_t ri, rj;
        uint64_t ki, kj;
        locate(rr, ids[j - 1].flat, &ri, &ki);
        locate(rr, ids[j].flat, &rj, &kj);
        report(ck, false, rank, row_name(res, rr->rows[rj]),
               "call #%llu: duplicate call id %lld (also call #%llu of region %s)",
               (unsigned long long)kj, (long long)ids[j].id, (unsigned long long)ki,
               row_name(res, rr->rows[ri]));
    }

    /* Pass 2: parents. Each call's time goes to its parent's child time,
     * which gives the exclusive totals of pass 3. */
    for (size_t i = 0; i < rr->count; i++) {
        size_t row = rr->rows[i];
        const char *name = row_name(res, row);
        uint64_t calls = sp_results_row_calls(res, row);
        const int64_t *pid = sp_results_row_parent_ids(res, row);
        if (calls == 0 || !pid) continue;
        const int64_t *starts = sp_results_row_starts(res, row);
        const int64_t *ends = sp_results_row_ends(res, row);
        const int64_t *dur = sp_results_row_durations(res, row);
        const int64_t *cid = sp_results_row_call_ids(res, row);
        const int64_t *tid = sp_results_row_thread_ids(res, row);
        if (!starts || !ends || !dur) continue;
        for (uint64_t k = 0; k < calls; k++) {
            if (pid[k] < 0) continue;
            call_label(a, sizeof a, cid, k);
            const id_entry *p = find_id(ids, id_count, pid[k]);
            if (!p) {
                report(ck, false, rank, name, "%s: parent id %lld does not exist on rank %ld", a,
                       (long long)pid[k], rank);
                continue;
            }
            size_t pi;
            uint64_t pk;
            locate(rr, p->flat, &pi, &pk);
            size_t prow = rr->rows[pi];
            const char *pname = row_name(res, prow);
            if (cid && cid[k] >= 0 && pid[k] >= cid[k])
                report(ck, false, rank, name, "%s: parent id %lld is not smaller than the call's id",
                       a, (long long)pid[k]);
            int64_t ps = sp_results_row_starts(res, prow)[pk];
            int64_t pe = sp_results_row_ends(res, prow)[pk];
            if (ps > starts[k] || ends[k] > pe)
                report(ck, false, rank, name,
                       "%s [%lld, %lld] is not inside its parent, call id %lld of region %s "
                       "[%lld, %lld]",
                       a, (long long)starts[k], (long long)ends[k], (long long)pid[k], pname,
                       (long long)ps, (long long)pe);
            /* A parent on another thread is valid when it encloses the
             * child (checked above): an OpenMP worker's call under the
             * call that forked its team, or a driver call scope-merge made
             * the parent of a native root. Its time is then not the
             * parent's child time (pass 3 follows calltree.c). */
            const int64_t *ptid = sp_results_row_thread_ids(res, prow);
            if (tid && ptid && tid[k] >= 0 && ptid[pk] >= 0 && tid[k] != ptid[pk]) continue;
            child_ns[p->flat] += (uint64_t)dur[k];
        }
    }

    /* Pass 3: stored exclusive totals against the tree of the parent ids.
     * Without ids on every call of the rank there is no stored tree to
     * compare with (the nesting would have to be guessed from times). */
    for (size_t i = 0; i < rr->count && all_numbered; i++) {
        size_t row = rr->rows[i];
        int64_t stored = sp_results_row_exclusive_total(res, row);
        if (stored < 0) continue;
        uint64_t calls = sp_results_row_calls(res, row);
        const int64_t *dur = sp_results_row_durations(res, row);
        if (calls && !dur) continue;
        uint64_t sum = 0;
        for (uint64_t k = 0; k < calls; k++) sum += (uint64_t)dur[k] - child_ns[rr->base[i] + k];
        int64_t total = (int64_t)sum;  /* wraps back for any in-range result */
        if (total != stored)
            report(ck, false, rank, row_name(res, row),
                   "stored exclusive total %lld ns, the call tree gives %lld ns",
                   (long long)stored, (long long)total);
    }
    free(ids);
    free(child_ns);
}

/* ---- stored statistics ----------------------------------------------------- */

static bool close_rel(double x, double y) {
    /* 1e-9 relative, with a floor far below one ns^2 so that 0 vs a
     * rounding residue of 1e-20 is not a problem. */
    double scale = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
    return fabs(x - y) <= 1e-9 * scale + 1e-9;
}

static void compare_stats(checker *ck, size_t row, const sp_row_stats *ev,
                          const sp_row_stats *st) {
    long rank = (long)sp_results_row_rank(ck->res, row);
    const char *name = row_name(ck->res, row);
    struct {
        const char *field;
        int64_t stored, events;
    } exact[] = {
        {"total", st->total, ev->total},
        {"minimum", st->minimum, ev->minimum},
        {"maximum", st->maximum, ev->maximum},
        {"first", st->first, ev->first},
        {"last", st->last, ev->last},
        {"start_minimum", st->start_minimum, ev->start_minimum},
        {"end_maximum", st->end_maximum, ev->end_maximum},
        {"gpu_count", (int64_t)st->gpu_count, (int64_t)ev->gpu_count},
        {"gpu_total", st->gpu_total, ev->gpu_total},
    };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++)
        if (exact[i].stored != exact[i].events)
            report(ck, false, rank, name, "summary_statistics %s is %lld, the events give %lld",
                   exact[i].field, (long long)exact[i].stored, (long long)exact[i].events);
    if (!close_rel(st->mean, ev->mean))
        report(ck, false, rank, name, "summary_statistics mean is %.17g, the events give %.17g",
               st->mean, ev->mean);
    if (!close_rel(st->m2, ev->m2))
        report(ck, false, rank, name, "summary_statistics m2 is %.17g, the events give %.17g",
               st->m2, ev->m2);
}

/* Stored statistics are only in columnar HDF5 files of schema >= 2; early
 * schema-2 files may lack them (FORMAT.md 4.2), any other refusal of the
 * summary-only reader is a broken summary index (FORMAT.md 4.4). */
static void check_stored_stats(checker *ck) {
    const sp_results *res = ck->res;
    if (sp_results_format_kind(res) != SP_RESULTS_FORMAT_HDF5 ||
        sp_results_schema_version(res) < 2)
        return;
    char msg[1024];
    sp_results *sum = NULL;
    int st = cli_results_open(ck->path, SP_RESULTS_SUMMARY_ONLY, &sum, msg, sizeof msg);
    if (st == SP_ERR_NO_SUMMARY && strstr(msg, "has no fixed-size summary statistics")) return;
    if (st == SP_ERR_OUT_OF_MEMORY) {
        ck->failed = true;
        return;
    }
    if (st != SP_OK) {
        /* Drop the reader's "PATH: " prefix: the line starts with it. */
        size_t plen = strlen(ck->path);
        const char *text = !strncmp(msg, ck->path, plen) && !strncmp(msg + plen, ": ", 2)
                               ? msg + plen + 2 : msg;
        report(ck, false, -1, NULL, "summary-only read refused: %s", text);
        return;
    }
    size_t rows = sp_results_row_count(res);
    if (sp_results_row_count(sum) != rows) {
        report(ck, false, -1, NULL, "summary index has %zu rows, the full index %zu",
               sp_results_row_count(sum), rows);
    } else {
        for (size_t r = 0; r < rows; r++) {
            sp_row_stats ev, stored;
            if (sp_results_row_stats(res, r, &ev) != SP_OK ||
                sp_results_row_stats(sum, r, &stored) != SP_OK ||
                stored.source != SP_STATS_STORED)
                continue;
            compare_stats(ck, r, &ev, &stored);
        }
    }
    sp_results_close(sum);
}

/* ---- aggregate files ------------------------------------------------------- */

/* Rows hold count, total, minimum, maximum and exclusive only: check what
 * durations >= 0 implies for them. */
static void check_aggregate_row(checker *ck, size_t row) {
    sp_row_stats s;
    if (sp_results_row_stats(ck->res, row, &s) != SP_OK || s.count == 0) return;
    long rank = (long)sp_results_row_rank(ck->res, row);
    const char *name = row_name(ck->res, row);
    if (s.minimum < 0)
        report(ck, false, rank, name, "negative minimum duration %lld ns", (long long)s.minimum);
    if (s.minimum > s.maximum)
        report(ck, false, rank, name, "minimum duration %lld ns exceeds the maximum %lld ns",
               (long long)s.minimum, (long long)s.maximum);
    if (s.total < 0)
        report(ck, false, rank, name, "negative total %lld ns", (long long)s.total);
    int64_t excl = sp_results_row_exclusive_total(ck->res, row);
    if (excl > s.total)
        report(ck, false, rank, name, "exclusive total %lld ns exceeds the total %lld ns",
               (long long)excl, (long long)s.total);
}

/* ---- one file -------------------------------------------------------------- */

static int cmp_row_by_rank(const void *pa, const void *pb, const sp_results *res) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    uint32_t ra = sp_results_row_rank(res, a), rb = sp_results_row_rank(res, b);
    if (ra != rb) return ra < rb ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* qsort has no context argument; the rows being sorted belong to one
 * results object at a time. */
static const sp_results *sort_res;
static int cmp_row_by_rank_q(const void *pa, const void *pb) {
    return cmp_row_by_rank(pa, pb, sort_res);
}

static void check_file(checker *ck, bool strict) {
    const sp_results *res = ck->res;
    size_t rows = sp_results_row_count(res);
    size_t *order = malloc((rows + 1) * sizeof *order);
    size_t *base = malloc((rows + 1) * sizeof *base);
    size_t thread_count = 0;
    thread_key *threads = thread_keys(ck, &thread_count);
    if (!order || !base || !threads) {
        free(order);
        free(base);
        free(threads);
        ck->failed = true;
        return;
    }
    for (size_t r = 0; r < rows; r++) order[r] = r;
    sort_res = res;
    qsort(order, rows, sizeof *order, cmp_row_by_rank_q);
    for (size_t i = 0; i < rows;) {
        size_t j = i;
        uint32_t rank = sp_results_row_rank(res, order[i]);
        size_t calls = 0;
        while (j < rows && sp_results_row_rank(res, order[j]) == rank) {
            base[j] = calls;
            calls += (size_t)sp_results_row_calls(res, order[j]);
            j++;
        }
        rank_rows rr = {rank, order + i, j - i, base + i, calls};
        check_duplicate_rows(ck, &rr);
        if (sp_results_has_events(res)) check_rank_events(ck, &rr, threads, thread_count, strict);
        i = j;
    }
    if (sp_results_is_aggregate(res))
        for (size_t r = 0; r < rows; r++) check_aggregate_row(ck, r);
    else
        check_stored_stats(ck);
    free(order);
    free(base);
    free(threads);
}

/* "N regions, M calls, K ranks", singular where a count is 1. */
static const char *sizes(const sp_results *res, uint64_t calls, char *buf, size_t len) {
    size_t regions = sp_results_region_count(res);
    unsigned ranks = sp_results_rank_count(res);
    snprintf(buf, len, "%zu region%s, %llu call%s, %u rank%s", regions, regions == 1 ? "" : "s",
             (unsigned long long)calls, calls == 1 ? "" : "s", ranks, ranks == 1 ? "" : "s");
    return buf;
}

int main(int argc, char **argv) {
    cli_isolate_start("scope-check");
    bool quiet = false, strict = false, options_done = false;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t file_count = 0;
    if (!files) {
        fprintf(stderr, "scope-check: out of memory\n");
        return CLI_EXIT_OTHER;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || !strcmp(arg, "-")) files[file_count++] = arg;
        else if (!strcmp(arg, "--")) options_done = true;
        else if (!strcmp(arg, "--quiet") || !strcmp(arg, "-q")) quiet = true;
        else if (!strcmp(arg, "--strict")) strict = true;
        else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            fputs(usage_text, stdout);
            free(files);
            return 0;
        } else if (!strcmp(arg, "--version")) {
            free(files);
            return cli_print_version("scope-check");
        } else {
            free(files);
            return cli_usage_error("scope-check", "unknown option '%s'", arg);
        }
    }
    if (file_count == 0) {
        free(files);
        return cli_usage_error("scope-check", "%s", "no FILE given");
    }
    int exit_code = 0;
    for (size_t f = 0; f < file_count; f++) {
        checker ck = {.path = files[f]};
        char msg[1024];
        sp_results *res = NULL;
        int st = cli_results_open(files[f], 0, &res, msg, sizeof msg);
        if (st != SP_OK) {
            /* An unreadable file is the first problem of its report. */
            printf("%s: cannot be read: %s\n", files[f], msg[0] ? msg : sp_error_string(st));
            if (!quiet) printf("%s: invalid (unreadable)\n", files[f]);
            exit_code = CLI_EXIT_FILE;
            continue;
        }
        ck.res = res;
        check_file(&ck, strict);
        uint64_t calls = 0;
        char counts[128];
        for (size_t r = 0; r < sp_results_row_count(res); r++) calls += sp_results_row_calls(res, r);
        if (ck.failed) {
            fprintf(stderr, "scope-check: %s: out of memory; the check is incomplete\n", files[f]);
            exit_code = CLI_EXIT_OTHER;
        } else if (!quiet) {
            if (ck.problems)
                printf("%s: invalid: %zu problem%s (%s)\n", files[f], ck.problems,
                       ck.problems == 1 ? "" : "s", sizes(res, calls, counts, sizeof counts));
            else
                printf("%s: ok (%s)\n", files[f], sizes(res, calls, counts, sizeof counts));
        }
        if (ck.problems && exit_code != CLI_EXIT_OTHER) exit_code = CLI_EXIT_FILE;
        sp_results_close(res);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "scope-check: cannot write the report\n");
        exit_code = CLI_EXIT_OTHER;
    }
    free(files);
    return exit_code;
}
