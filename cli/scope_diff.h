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
} diff_report;

/*
 * Compare `base` with `cand` region by region into *report (release with
 * diff_report_free). Returns SP_OK, SP_ERR_OUT_OF_MEMORY, or another
 * status of sp_summary_region with its message in errbuf (the failing
 * file named). Regex patterns must already have been checked.
 */
int diff_compare(const sp_results *base, const sp_results *cand, const diff_options *options,
                 diff_report *report, char *errbuf, size_t errbuf_len);

void diff_report_free(diff_report *report);

#endif
