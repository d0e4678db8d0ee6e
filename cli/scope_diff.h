/*
 * scope_diff.h - the comparison model of scope-diff, shared by its main
 * (cli/scope-diff.c: arguments, text and JSON) and the comparison itself
 * (cli/scope_diff_compare.c: matching regions by name, the chosen metric,
 * Welch's t test, status, order).
 *
 * Everything is computed once into a diff_report; the two renderers only
 * format it, so the table and --json can never disagree.
 */
#ifndef SP_SCOPE_DIFF_H
#define SP_SCOPE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scope_profiler_results.h"
#include "scope_profiler_summary.h"

/* The statistic compared per region. Every one of them is "larger is
 * worse", which is what lets one rule decide regression vs improvement. */
typedef enum diff_metric {
    DIFF_METRIC_TOTAL = 0,
    DIFF_METRIC_AVG,
    DIFF_METRIC_P50,
    DIFF_METRIC_P95,
    DIFF_METRIC_P99,
    DIFF_METRIC_CALLS,
    DIFF_METRIC_EXCLUSIVE,
    DIFF_METRIC_COUNT
} diff_metric;

/* The name of a metric as --metric and --json spell it. */
const char *diff_metric_name(diff_metric metric);
/* --metric text to a metric; -1 when unknown. */
int diff_metric_parse(const char *text);

typedef enum diff_sort { DIFF_SORT_CHANGE = 0, DIFF_SORT_NAME, DIFF_SORT_BASE, DIFF_SORT_NEW } diff_sort;

/* Appended only: the text and JSON names are a contract (diff_status_name). */
typedef enum diff_status {
    DIFF_UNCHANGED = 0,  /* |change| within the threshold */
    DIFF_REGRESSION,     /* worse by more than the threshold, not within noise */
    DIFF_IMPROVEMENT,    /* better by more than the threshold, not within noise */
    DIFF_NOISE,          /* beyond the threshold but |t| < 2 */
    DIFF_ADDED,          /* only in the new run */
    DIFF_REMOVED,        /* only in the base run */
    DIFF_UNAVAILABLE     /* the metric cannot be computed for one run */
} diff_status;

/* "unchanged", "regression", ... as --json writes them ("within_noise"). */
const char *diff_status_name(diff_status status);

/* Welch's t at or above this magnitude counts as a real change. */
#define DIFF_T_LIMIT 2.0

/* Significance verdict: the test could not run (or does not apply), the
 * change is explained by per-call spread, or it is not. */
enum { DIFF_SIG_UNKNOWN = -1, DIFF_SIG_NOISE = 0, DIFF_SIG_REAL = 1 };

/* One run's side of a region. */
typedef struct diff_side {
    bool present;        /* the region has a row on some rank of this run */
    bool has_value;      /* the metric could be computed */
    double value;        /* metric value: ns for durations, a count for calls */
    sp_region_summary s; /* pooled statistics (valid when present) */
} diff_side;

typedef struct diff_row {
    const char *name;    /* borrowed from the results that have the region */
    diff_side base, cand;
    bool has_change;     /* change is defined (both values, or added/removed) */
    double change;       /* cand - base; added: cand, removed: -base */
    bool has_pct;        /* change_pct is defined (base value != 0) */
    double change_pct;   /* 100 * change / base */
    bool exceeds;        /* |change_pct| > threshold, or base 0 and cand not */
    bool has_t;          /* t is a finite Welch statistic */
    double t;
    int significant;     /* DIFF_SIG_* */
    diff_status status;
} diff_row;

/* Wall time of a run: the longest rank's span from its earliest start to
 * its latest end over every region (before any filter). */
typedef struct diff_session {
    bool has_base, has_cand;
    int64_t base_ns, cand_ns;
} diff_session;

typedef struct diff_options {
    diff_metric metric;
    double threshold_pct;
    diff_sort sort;
    const char *const *include;  /* POSIX ERE, anchored at the name's start */
    size_t include_count;
    const char *const *exclude;
    size_t exclude_count;
    /* Sums (total, exclusive, calls) divided by each run's rank count, so
     * runs on different numbers of ranks compare per rank: scope-diff sets
     * it when the counts differ, unless --sum. Per-call metrics (avg,
     * percentiles) are per call either way. */
    bool per_rank;
} diff_options;

typedef struct diff_report {
    diff_row *rows;
    size_t count;
    size_t by_status[DIFF_UNAVAILABLE + 1];
    diff_session session;
    bool events_both;    /* both runs have per-call data or call paths
                            (per-call moments): the t test runs */
    char warning_base[512]; /* first SP_ERR_NESTING message per run, or "" */
    char warning_cand[512];
    uint32_t ranks_base, ranks_cand; /* diff_rank_count of each run */
    bool per_rank;                   /* the sums were divided by them */
} diff_report;

/* The number of distinct ranks with at least one row in `res` (not the
 * largest rank + 1: a file may hold rank 4294967295 beside rank 0); 0 when
 * memory runs out or the file has no rows. */
uint32_t diff_rank_count(const sp_results *res);

/*
 * Compare `base` with `cand` region by region into *report (release with
 * diff_report_free). Returns SP_OK, SP_ERR_OUT_OF_MEMORY, or another
 * status of sp_summary_region with its message in errbuf (the failing
 * file named). Regex patterns must already have been checked.
 */
int diff_compare(const sp_results *base, const sp_results *cand, const diff_options *options,
                 diff_report *report, char *errbuf, size_t errbuf_len);

void diff_report_free(diff_report *report);

/* ---- scope-diff --scaling (scope_diff_scaling.c) ---------------------------
 *
 * Several runs of one program on growing rank counts, the first the
 * reference. Per region: its time per run (the per-rank mean of its total:
 * total / ranks), the speedup T_1 / T_k and the parallel efficiency
 *   strong scaling: E_k = T_1 / T_k * P_1 / P_k   (same problem, more ranks)
 *   weak scaling:   E_k = T_1 / T_k               (problem grows with ranks)
 * and, per run, the status diff_compare gives the region against the
 * first run (per-rank means), so the noise test decides what is a change.
 */
typedef struct scaling_cell {
    bool present;        /* the region has a row in this run */
    double time_ns;      /* total / ranks of the run */
    double speedup;      /* T_1 / T_k; 0 when undefined */
    double efficiency;   /* see above; 0 when undefined */
    diff_status status;  /* against the first run (run 0: DIFF_UNCHANGED) */
} scaling_cell;

typedef struct scaling_row {
    const char *name;    /* borrowed from the first run that has the region */
    scaling_cell *cells; /* [run_count] */
} scaling_row;

typedef struct scaling_report {
    size_t run_count;
    uint32_t *ranks;     /* [run_count]: diff_rank_count of each run */
    scaling_row *rows;   /* regions of the first run, then the others' */
    size_t count;
    bool weak;
} scaling_report;

/* Build the scaling table of runs[0..run_count) (run_count >= 2), with the
 * filters and threshold of `options` (its metric and per_rank are set
 * here: total, per rank). Returns SP_OK, SP_ERR_OUT_OF_MEMORY or a
 * statistics error with its message (the file named) in errbuf. */
int diff_scaling(const sp_results *const *runs, size_t run_count, const diff_options *options,
                 bool weak, scaling_report *report, char *errbuf, size_t errbuf_len);

void scaling_report_free(scaling_report *report);

#endif
