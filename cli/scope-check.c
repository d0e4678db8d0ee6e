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
 *   - a parent id >= 0 is smaller than its call's id;
 *   - the package's lane rule (issue 28, docs/FORMAT.md 5): per rank and
 *     lane the tree that time containment implies is the stored one (a
 *     stored parent on the call's lane is its containment parent, a call
 *     with a containment parent stores it; a stored parent on another
 *     lane must enclose the child: an OpenMP worker's call under the call
 *     that forked its team), and calls of a lane nest properly;
 *   - thread ids (-1 = unknown lane) are indexes of the rank's thread table;
 *   - no (rank, region) pair has two rows;
 *   - the stored summary_statistics (read with SP_RESULTS_SUMMARY_ONLY,
 *     exactly what a summary-only reader would trust) agree with the
 *     events: integers exactly, mean and m2 to 1e-9 relative;
 *   - stored exclusive totals (>= 0) equal the totals the package's rule
 *     rebuilds (duration minus the children of the containment tree);
 *   - region names "mpi:..." parse with the package's rule (FORMAT.md 4.6).
 * Calls out of start order within a row are legal (FORMAT.md 3.1) and only
 * reported, as warnings, with --strict. Aggregate files hold no calls:
 * only their rows and names are checked (the verdict says so).
 *
 * Memory (issue 27): the file is opened with SP_RESULTS_CALLS_ON_DEMAND
 * and each rank's calls are swept once through cursors
 * (scope_check_rank.c), so the peak does not grow with the calls.
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
#include "scope_check.h"
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
    "thread only as an OpenMP fork parent); the package's lane rule: per rank\n"
    "and lane (task id, else thread id, else unknown) the tree that time\n"
    "containment implies equals the stored parents, and stored exclusive\n"
    "totals equal the totals it rebuilds; thread ids within the thread table;\n"
    "one row per (rank, region); stored summary_statistics equal to what the\n"
    "events give; region names \"mpi:...\" parse with the package's rule.\n"
    "Aggregate files store no calls and are exempt from the per-call rules.\n"
    "Memory does not grow with the calls: each rank is swept through cursors;\n"
    "call ids are checked for repeats exactly within SCOPE_PROFILER_CHECK_MEMORY\n"
    "bytes per rank (default 96M), past that from the order of each thread's ids\n"
    "(a note on stderr says when that could not be shown).\n"
    "\n"
    "Options:\n"
    "  --quiet     print only the problems (no verdict lines)\n"
    "  --strict    also warn about calls stored out of start order (legal; a\n"
    "              warning does not make a file invalid)\n"
    "  --max-problems N  list at most N problem lines per file (default 200,\n"
    "              0 = all); the verdict counts the rest\n"
    "  -h, --help  show this help\n"
    "      --version  show the version, git describe, HDF5 and MPI\n"
    "\n"
    "Exit status:\n"
    "  0  every FILE is valid\n"
    "  1  usage error\n"
    "  2  some FILE is invalid or cannot be read\n"
    "  3  any other failure (out of memory, output not writable)\n";

/* ---- thread table ---------------------------------------------------------- */

/* The (rank, index) pairs of the thread table, sorted for lookup; a pair
 * listed twice makes thread ids ambiguous and is a problem of its own. */
static check_thread_key *thread_keys(checker *ck, size_t *count) {
    size_t n = sp_results_thread_count(ck->res);
    check_thread_key *keys = malloc((n + 1) * sizeof *keys);
    *count = 0;
    if (!keys) return NULL;
    for (size_t t = 0; t < n; t++) {
        sp_thread_info info;
        if (sp_results_thread(ck->res, t, &info) != SP_OK) continue;
        keys[*count].rank = info.rank;
        keys[*count].index = info.index;
        (*count)++;
    }
    qsort(keys, *count, sizeof *keys, check_thread_key_cmp);
    for (size_t i = 1; i < *count; i++)
        if (!check_thread_key_cmp(&keys[i - 1], &keys[i]))
            check_report(ck, false, (long)keys[i].rank, NULL,
                         "thread table lists thread index %lld more than once",
                         (long long)keys[i].index);
    return keys;
}

static int cmp_size(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return a < b ? -1 : a > b;
}

static void check_duplicate_rows(checker *ck, uint32_t rank, const size_t *rows, size_t count) {
    size_t *regions = malloc((count + 1) * sizeof *regions);
    if (!regions) {
        ck->failed = true;
        return;
    }
    for (size_t i = 0; i < count; i++) regions[i] = sp_results_row_region(ck->res, rows[i]);
    qsort(regions, count, sizeof *regions, cmp_size);
    for (size_t i = 1; i < count; i++)
        if (regions[i] == regions[i - 1] && (i < 2 || regions[i - 2] != regions[i]))
            check_report(ck, false, (long)rank, sp_results_region_name(ck->res, regions[i]),
                         "more than one index row for this rank and region");
    free(regions);
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
    const char *name = check_row_name(ck->res, row);
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
            check_report(ck, false, rank, name,
                         "summary_statistics %s is %lld, the events give %lld", exact[i].field,
                         (long long)exact[i].stored, (long long)exact[i].events);
    if (!close_rel(st->mean, ev->mean))
        check_report(ck, false, rank, name,
                     "summary_statistics mean is %.17g, the events give %.17g", st->mean, ev->mean);
    if (!close_rel(st->m2, ev->m2))
        check_report(ck, false, rank, name, "summary_statistics m2 is %.17g, the events give %.17g",
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
        check_report(ck, false, -1, NULL, "summary-only read refused: %s", text);
        return;
    }
    size_t rows = sp_results_row_count(res);
    if (sp_results_row_count(sum) != rows) {
        check_report(ck, false, -1, NULL, "summary index has %zu rows, the full index %zu",
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
    const char *name = check_row_name(ck->res, row);
    if (s.minimum < 0)
        check_report(ck, false, rank, name, "negative minimum duration %lld ns",
                     (long long)s.minimum);
    if (s.minimum > s.maximum)
        check_report(ck, false, rank, name, "minimum duration %lld ns exceeds the maximum %lld ns",
                     (long long)s.minimum, (long long)s.maximum);
    if (s.total < 0)
        check_report(ck, false, rank, name, "negative total %lld ns", (long long)s.total);
    int64_t excl = sp_results_row_exclusive_total(ck->res, row);
    if (excl > s.total)
        check_report(ck, false, rank, name, "exclusive total %lld ns exceeds the total %lld ns",
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

static void check_file(checker *ck) {
    const sp_results *res = ck->res;
    size_t rows = sp_results_row_count(res);
    size_t *order = malloc((rows + 1) * sizeof *order);
    size_t thread_count = 0;
    check_thread_key *threads = thread_keys(ck, &thread_count);
    if (!order || !threads) {
        free(order);
        free(threads);
        ck->failed = true;
        return;
    }
    for (size_t r = 0; r < rows; r++) order[r] = r;
    sort_res = res;
    qsort(order, rows, sizeof *order, cmp_row_by_rank_q);
    /* Rank by rank: only one rank's cursors and lanes are alive at once. */
    for (size_t i = 0; i < rows && !ck->failed;) {
        size_t j = i;
        uint32_t rank = sp_results_row_rank(res, order[i]);
        while (j < rows && sp_results_row_rank(res, order[j]) == rank) j++;
        check_duplicate_rows(ck, rank, order + i, j - i);
        if (sp_results_has_events(res))
            check_rank_events(ck, rank, order + i, j - i, threads, thread_count);
        i = j;
    }
    check_mpi_names(ck);
    if (sp_results_is_aggregate(res)) {
        for (size_t r = 0; r < rows; r++) check_aggregate_row(ck, r);
        check_note(ck, -1, "aggregate layout: no calls stored, so the per-call rules (ids, "
                   "parents, lanes, exclusive totals rebuilt from calls) do not apply");
    } else {
        check_stored_stats(ck);
    }
    free(order);
    free(threads);
}

/* A size as SCOPE_PROFILER_VIEW_MEMORY takes it: bytes, or with a binary
 * K, M or G suffix. */
static bool parse_bytes(const char *text, size_t *out) {
    char *end = NULL;
    if (text[0] < '0' || text[0] > '9') return false;
    unsigned long long n = strtoull(text, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    else if (*end == 'M' || *end == 'm') shift = 20;
    else if (*end == 'G' || *end == 'g') shift = 30;
    if (shift) end++;
    if (*end || n > (SIZE_MAX >> shift)) return false;
    *out = (size_t)n << shift;
    return true;
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
    size_t listed_max = CHECK_DEFAULT_LISTED;
    size_t id_memory = CHECK_DEFAULT_ID_MEMORY;
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
        else if (!strcmp(arg, "--max-problems") || !strncmp(arg, "--max-problems=", 15)) {
            const char *value = arg[14] == '=' ? arg + 15 : (i + 1 < argc ? argv[++i] : "");
            char *end = NULL;
            unsigned long long n = strtoull(value, &end, 10);
            if (!*value || *end || value[0] == '-') {
                free(files);
                return cli_usage_error("scope-check", "--max-problems takes a count, not '%s'",
                                       value);
            }
            listed_max = n == 0 || n > SIZE_MAX ? SIZE_MAX : (size_t)n;
        }
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
    const char *env_memory = getenv("SCOPE_PROFILER_CHECK_MEMORY");
    if (env_memory && *env_memory && !parse_bytes(env_memory, &id_memory)) {
        free(files);
        return cli_usage_error("scope-check", "SCOPE_PROFILER_CHECK_MEMORY='%s' is not a "
                               "size (bytes, or with K, M or G: 96M)", env_memory);
    }
    int exit_code = 0;
    for (size_t f = 0; f < file_count; f++) {
        checker ck = {.path = files[f], .listed_max = listed_max, .id_memory = id_memory,
                      .strict = strict, .quiet = quiet};
        char msg[1024];
        sp_results *res = NULL;
        /* Calls stay in the file and are read in slices (issue 27). */
        int st = cli_results_open(files[f], SP_RESULTS_CALLS_ON_DEMAND, &res, msg, sizeof msg);
        if (st != SP_OK) {
            /* An unreadable file is the first problem of its report. */
            printf("%s: cannot be read: %s\n", files[f], msg[0] ? msg : sp_error_string(st));
            if (!quiet) printf("%s: invalid (unreadable)\n", files[f]);
            exit_code = CLI_EXIT_FILE;
            continue;
        }
        ck.res = res;
        check_file(&ck);
        uint64_t calls = 0;
        char counts[128];
        for (size_t r = 0; r < sp_results_row_count(res); r++) calls += sp_results_row_calls(res, r);
        if (ck.failed) {
            fprintf(stderr, "scope-check: %s: out of memory; the check is incomplete\n", files[f]);
            exit_code = CLI_EXIT_OTHER;
        } else if (!quiet) {
            size_t unlisted = ck.problems + ck.warnings - ck.listed;
            if (ck.problems && unlisted)
                printf("%s: invalid: %zu problem%s (%s); %zu line%s not listed "
                       "(--max-problems)\n", files[f], ck.problems,
                       ck.problems == 1 ? "" : "s", sizes(res, calls, counts, sizeof counts),
                       unlisted, unlisted == 1 ? "" : "s");
            else if (ck.problems)
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
