/*
 * scope_diff_compare.c - the comparison behind scope-diff.
 *
 * Regions are matched by name (region ids are file-local), and each side is
 * the region pooled over every rank by the public summary API, so the
 * numbers are the ones scope-inspect and the Python package show for the
 * same file (FORMAT.md 7.3). Nothing here reads per-call arrays itself.
 *
 * Noise. A timing difference between two runs is only worth a CI failure
 * when it is larger than what the spread of the individual calls explains.
 * With per-call data on both sides (or an aggregate-mode file, whose call
 * paths carry each region's exact count, mean and m2) we run Welch's
 * unequal-variance t test on the per-call (inclusive) durations: n, mean
 * and the population std come from sp_summary_regions, the std is turned into the sample std
 * (x sqrt(n/(n-1))) because the test wants an estimate of the spread, and
 *     t = (mean_new - mean_base) / sqrt(s_base^2/n_base + s_new^2/n_new).
 * |t| < 2 (roughly the 95% two-sided level for more than a handful of
 * calls) marks a change as "within noise". Welch rather than Student
 * because a slowed-down region usually changes its spread as well.
 *
 * The test compares per-call means, so it can only excuse what per-call
 * variation can cause: a total (or exclusive total) whose call count
 * changed moved for a reason that is not noise, and call counts themselves
 * are exact, so neither is ever excused.
 *
 * Runs on different rank counts (options->per_rank): the sums (total,
 * exclusive, calls) are divided by each run's number of ranks, so 4 ranks
 * doing the work of 2 in half the time per rank is an improvement, not a
 * regression of the summed CPU time. The noise test is unchanged (it
 * compares per-call means), and "a sum over a different number of calls"
 * becomes a different number of calls per rank.
 */
#include <math.h>
#include <stdint.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_diff.h"

static const char *const metric_names[DIFF_METRIC_COUNT] = {
    "total", "avg", "p50", "p95", "p99", "calls", "exclusive"};

const char *diff_metric_name(diff_metric metric) {
    return (unsigned)metric < DIFF_METRIC_COUNT ? metric_names[metric] : "?";
}

int diff_metric_parse(const char *text) {
    for (int m = 0; m < DIFF_METRIC_COUNT; m++)
        if (!strcmp(text, metric_names[m])) return m;
    return -1;
}

const char *diff_status_name(diff_status status) {
    static const char *const names[] = {"unchanged", "regression", "improvement", "within_noise",
                                        "added",     "removed",    "unavailable"};
    return (unsigned)status <= DIFF_UNAVAILABLE ? names[status] : "?";
}

/* ---- region selection ------------------------------------------------------ */

typedef struct filters {
    regex_t *include, *exclude;
    size_t include_count, exclude_count;
} filters;

static void filters_free(filters *f) {
    for (size_t i = 0; i < f->include_count; i++) regfree(&f->include[i]);
    for (size_t i = 0; i < f->exclude_count; i++) regfree(&f->exclude[i]);
    free(f->include);
    free(f->exclude);
}

/* Anchored at the start of the name, as scope-inspect and the library's
 * table filters do (Python's re.match); the group keeps an alternation in
 * the pattern under the anchor. */
static int compile_list(const char *const *patterns, size_t count, regex_t **out, size_t *done) {
    *out = calloc(count ? count : 1, sizeof **out);
    if (!*out) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(patterns[i]) + 4;
        char *anchored = malloc(len);
        if (!anchored) return SP_ERR_OUT_OF_MEMORY;
        snprintf(anchored, len, "^(%s)", patterns[i]);
        int rc = regcomp(&(*out)[i], anchored, REG_EXTENDED | REG_NOSUB);
        free(anchored);
        if (rc != 0) return SP_ERR_INVALID_ARGUMENT;
        (*done)++;
    }
    return SP_OK;
}

static bool any_match(const regex_t *list, size_t count, const char *name) {
    for (size_t i = 0; i < count; i++)
        if (regexec(&list[i], name, 0, NULL, 0) == 0) return true;
    return false;
}

static bool selected(const filters *f, const char *name) {
    if (f->include_count && !any_match(f->include, f->include_count, name)) return false;
    return !any_match(f->exclude, f->exclude_count, name);
}

/* ---- one side of a region -------------------------------------------------- */

/* `ranks` divides the sums (1 unless per-rank means are compared). */
static bool metric_value(diff_metric metric, const sp_region_summary *s, double ranks,
                         double *value) {
    unsigned av = s->available;
    switch (metric) {
    case DIFF_METRIC_TOTAL: *value = (double)s->total_ns / ranks; return true;
    case DIFF_METRIC_AVG: *value = s->average_ns; return true;
    case DIFF_METRIC_CALLS: *value = (double)s->calls / ranks; return true;
    case DIFF_METRIC_P50: *value = s->p50_ns; return av & SP_STAT_PERCENTILES;
    case DIFF_METRIC_P95: *value = s->p95_ns; return av & SP_STAT_PERCENTILES;
    case DIFF_METRIC_P99: *value = s->p99_ns; return av & SP_STAT_PERCENTILES;
    case DIFF_METRIC_EXCLUSIVE:
        *value = (double)s->exclusive_ns / ranks;
        return (av & SP_STAT_EXCLUSIVE) && s->exclusive_ns >= 0;
    default: return false;
    }
}

/* One run: every region's statistics from one sp_summary_regions call and
 * its names sorted, so matching a name is a binary search (a lookup and a
 * summary per region were regions x (regions + rows)). */
typedef struct run_index {
    const sp_results *res;
    sp_region_summary *stats;  /* [region_count] */
    size_t *by_name;           /* region ids sorted by name */
    size_t count;
} run_index;

static const sp_results *sort_run;  /* qsort has no context; single-threaded tool */

static int cmp_by_name(const void *a, const void *b) {
    return strcmp(sp_results_region_name(sort_run, *(const size_t *)a),
                  sp_results_region_name(sort_run, *(const size_t *)b));
}

static void run_index_free(run_index *x) {
    free(x->stats);
    free(x->by_name);
    memset(x, 0, sizeof *x);
}

static int run_index_build(run_index *x, const sp_results *res, char *warning, size_t warning_len,
                           char *errbuf, size_t errbuf_len) {
    memset(x, 0, sizeof *x);
    x->res = res;
    x->count = sp_results_region_count(res);
    x->stats = calloc(x->count + 1, sizeof *x->stats);
    x->by_name = calloc(x->count + 1, sizeof *x->by_name);
    if (!x->stats || !x->by_name) {
        run_index_free(x);
        snprintf(errbuf, errbuf_len, "out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    char msg[512] = "";
    int st = sp_summary_regions(res, NULL, 0, x->stats, msg, sizeof msg);
    if (st == SP_ERR_NESTING) {
        /* The rest of the statistics are valid; only exclusive time is
         * lost. One message per run. */
        snprintf(warning, warning_len, "%s", msg);
    } else if (st != SP_OK) {
        snprintf(errbuf, errbuf_len, "%s: %s", sp_results_path(res),
                 msg[0] ? msg : sp_error_string(st));
        run_index_free(x);
        return st;
    }
    for (size_t i = 0; i < x->count; i++) x->by_name[i] = i;
    sort_run = res;
    if (x->count) qsort(x->by_name, x->count, sizeof *x->by_name, cmp_by_name);
    return SP_OK;
}

static long run_index_find(const run_index *x, const char *name) {
    size_t lo = 0, hi = x->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(sp_results_region_name(x->res, x->by_name[mid]), name);
        if (c == 0) return (long)x->by_name[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* Fill one side; a region missing from the run, or present in its table
 * without any row, is "not present". */
static void load_side(const run_index *x, const char *name, diff_metric metric, double ranks,
                      diff_side *side) {
    memset(side, 0, sizeof *side);
    long id = run_index_find(x, name);
    if (id < 0) return;
    side->s = x->stats[id];
    side->present = side->s.num_ranks > 0;
    if (side->present) side->has_value = metric_value(metric, &side->s, ranks, &side->value);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

uint32_t diff_rank_count(const sp_results *res) {
    size_t rows = sp_results_row_count(res);
    uint32_t *ranks = malloc((rows ? rows : 1) * sizeof *ranks);
    if (!ranks) return 0;
    for (size_t i = 0; i < rows; i++) ranks[i] = sp_results_row_rank(res, i);
    qsort(ranks, rows, sizeof *ranks, cmp_u32);
    uint32_t distinct = 0;
    for (size_t i = 0; i < rows; i++)
        if (i == 0 || ranks[i] != ranks[i - 1]) distinct++;
    free(ranks);
    return distinct;
}

/* ---- significance ------------------------------------------------------------ */

/* ranks_b, ranks_c: the runs' rank counts when per-rank means are
 * compared, else 1 and 1. */
static void welch(diff_row *row, bool events_both, diff_metric metric, uint64_t ranks_b,
                  uint64_t ranks_c) {
    row->has_t = false;
    row->significant = DIFF_SIG_UNKNOWN;
    const sp_region_summary *b = &row->base.s, *c = &row->cand.s;
    if (!events_both || !row->base.present || !row->cand.present) return;
    /* A sample variance needs two calls on each side. */
    if (b->calls < 2 || c->calls < 2 || !(b->available & SP_STAT_STD) ||
        !(c->available & SP_STAT_STD))
        return;
    double nb = (double)b->calls, nc = (double)c->calls;
    double vb = b->std_ns * b->std_ns * nb / (nb - 1.0);
    double vc = c->std_ns * c->std_ns * nc / (nc - 1.0);
    double se = sqrt(vb / nb + vc / nc);
    double diff = c->average_ns - b->average_ns;
    int verdict;
    if (se > 0.0) {
        row->t = diff / se;
        row->has_t = isfinite(row->t);
        verdict = fabs(row->t) >= DIFF_T_LIMIT ? DIFF_SIG_REAL : DIFF_SIG_NOISE;
    } else {
        /* No spread at all: equal means are t = 0; any difference is real
         * (t would be infinite, which JSON cannot carry: t_stat null). */
        row->t = 0.0;
        row->has_t = diff == 0.0;
        verdict = diff == 0.0 ? DIFF_SIG_NOISE : DIFF_SIG_REAL;
    }
    if (metric == DIFF_METRIC_CALLS) verdict = DIFF_SIG_UNKNOWN;  /* counts are exact */
    else if ((metric == DIFF_METRIC_TOTAL || metric == DIFF_METRIC_EXCLUSIVE) &&
             (double)b->calls * (double)ranks_c != (double)c->calls * (double)ranks_b)
        verdict = DIFF_SIG_REAL;  /* a sum over a different number of calls (per rank) */
    row->significant = verdict;
}

static void classify(diff_row *row, double threshold_pct) {
    row->has_change = row->has_pct = row->exceeds = false;
    row->change = row->change_pct = 0.0;
    if (!row->base.present) {
        row->status = DIFF_ADDED;
        row->has_change = row->cand.has_value;
        row->change = row->cand.value;
        return;
    }
    if (!row->cand.present) {
        row->status = DIFF_REMOVED;
        row->has_change = row->base.has_value;
        row->change = -row->base.value;
        return;
    }
    if (!row->base.has_value || !row->cand.has_value) {
        row->status = DIFF_UNAVAILABLE;
        return;
    }
    row->has_change = true;
    row->change = row->cand.value - row->base.value;
    if (row->base.value != 0.0) {
        row->has_pct = true;
        row->change_pct = 100.0 * row->change / row->base.value;
        row->exceeds = fabs(row->change_pct) > threshold_pct;
    } else {
        row->exceeds = row->change != 0.0;  /* from nothing: infinitely more */
    }
    if (!row->exceeds) row->status = DIFF_UNCHANGED;
    else if (row->significant == DIFF_SIG_NOISE) row->status = DIFF_NOISE;
    else row->status = row->change > 0.0 ? DIFF_REGRESSION : DIFF_IMPROVEMENT;
}

/* ---- session time ------------------------------------------------------------ */

/* The longest rank's wall span. Spans are taken per rank because ranks on
 * different nodes read different monotonic clocks; the slowest rank is the
 * job's time to solution. Aggregate files store no timestamps: none.
 * Memory follows the rows, never the rank numbers (a file may hold rank
 * 4294967295 beside rank 0): each row's [start, end] is sorted by rank and
 * the ranks are swept in order. A span is end - start as an unsigned
 * difference, clamped to INT64_MAX (the reader accepts any int64 times). */
typedef struct rank_span {
    uint32_t rank;
    int64_t lo, hi;
} rank_span;

static int by_rank(const void *a, const void *b) {
    uint32_t x = ((const rank_span *)a)->rank, y = ((const rank_span *)b)->rank;
    return x < y ? -1 : x > y;
}

static int64_t span_of(int64_t lo, int64_t hi) {
    if (hi <= lo) return 0;
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    return span > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)span;
}

static bool session_span(const sp_results *res, int64_t *span_ns) {
    size_t rows = sp_results_row_count(res), used = 0;
    rank_span *spans = calloc(rows ? rows : 1, sizeof *spans);
    if (!spans) return false;
    for (size_t i = 0; i < rows; i++) {
        sp_row_stats st;
        if (sp_results_row_stats(res, i, &st) != SP_OK || st.count == 0 ||
            st.source == SP_STATS_AGGREGATE)
            continue;
        spans[used++] = (rank_span){sp_results_row_rank(res, i), st.start_minimum,
                                    st.end_maximum};
    }
    qsort(spans, used, sizeof *spans, by_rank);
    *span_ns = 0;
    for (size_t i = 0; i < used;) {
        int64_t lo = spans[i].lo, hi = spans[i].hi;
        size_t j = i + 1;
        for (; j < used && spans[j].rank == spans[i].rank; j++) {
            if (spans[j].lo < lo) lo = spans[j].lo;
            if (spans[j].hi > hi) hi = spans[j].hi;
        }
        int64_t span = span_of(lo, hi);
        if (span > *span_ns) *span_ns = span;
        i = j;
    }
    free(spans);
    return used > 0;
}

/* ---- order ------------------------------------------------------------------- */

static diff_sort sort_mode;  /* qsort has no context argument; one sort at a time */

static bool sort_key(const diff_row *r, double *key) {
    switch (sort_mode) {
    case DIFF_SORT_CHANGE: *key = fabs(r->change); return r->has_change;
    case DIFF_SORT_BASE: *key = r->base.value; return r->base.present && r->base.has_value;
    case DIFF_SORT_NEW: *key = r->cand.value; return r->cand.present && r->cand.has_value;
    default: return false;
    }
}

/* Largest key first, rows without a key last, then by name so that the
 * order never depends on the files' region order. */
static int cmp_rows(const void *pa, const void *pb) {
    const diff_row *a = pa, *b = pb;
    double ka = 0.0, kb = 0.0;
    bool ha = sort_key(a, &ka), hb = sort_key(b, &kb);
    if (ha != hb) return ha ? -1 : 1;
    if (ha && ka != kb) return ka > kb ? -1 : 1;
    return strcmp(a->name, b->name);
}

/* ---- the report -------------------------------------------------------------- */

int diff_compare(const sp_results *base, const sp_results *cand, const diff_options *o,
                 diff_report *report, char *errbuf, size_t errbuf_len) {
    memset(report, 0, sizeof *report);
    if (errbuf_len) errbuf[0] = '\0';
    filters f = {0};
    int st = compile_list(o->include, o->include_count, &f.include, &f.include_count);
    if (st == SP_OK) st = compile_list(o->exclude, o->exclude_count, &f.exclude, &f.exclude_count);
    if (st != SP_OK) {
        filters_free(&f);
        snprintf(errbuf, errbuf_len, "%s", st == SP_ERR_INVALID_ARGUMENT
                                               ? "invalid regular expression"
                                               : "out of memory");
        return st;
    }
    size_t nb = sp_results_region_count(base), nc = sp_results_region_count(cand);
    report->rows = calloc(nb + nc + 1, sizeof *report->rows);
    if (!report->rows) {
        filters_free(&f);
        snprintf(errbuf, errbuf_len, "out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    run_index xb, xc;
    st = run_index_build(&xb, base, report->warning_base, sizeof report->warning_base, errbuf,
                         errbuf_len);
    if (st == SP_OK) {
        st = run_index_build(&xc, cand, report->warning_cand, sizeof report->warning_cand, errbuf,
                             errbuf_len);
        if (st != SP_OK) run_index_free(&xb);
    }
    if (st != SP_OK) {
        filters_free(&f);
        diff_report_free(report);
        return st;
    }
    /* the test needs every call's moments, not the calls themselves */
    report->events_both = (sp_results_has_events(base) || sp_results_call_path_count(base) > 0) &&
                          (sp_results_has_events(cand) || sp_results_call_path_count(cand) > 0);
    report->ranks_base = diff_rank_count(base);
    report->ranks_cand = diff_rank_count(cand);
    report->per_rank = o->per_rank && report->ranks_base && report->ranks_cand;
    double div_b = report->per_rank ? report->ranks_base : 1.0;
    double div_c = report->per_rank ? report->ranks_cand : 1.0;
    /* Every name of the base run, then the new run's names the base lacks. */
    for (size_t k = 0; k < nb + nc && st == SP_OK; k++) {
        const sp_results *owner = k < nb ? base : cand;
        const char *name = sp_results_region_name(owner, k < nb ? k : k - nb);
        if (!name || !selected(&f, name)) continue;
        if (k >= nb && run_index_find(&xb, name) >= 0) continue;
        diff_row *row = &report->rows[report->count];
        row->name = name;
        load_side(&xb, name, o->metric, div_b, &row->base);
        load_side(&xc, name, o->metric, div_c, &row->cand);
        if (!row->base.present && !row->cand.present) continue;
        welch(row, report->events_both, o->metric, (uint64_t)div_b, (uint64_t)div_c);
        classify(row, o->threshold_pct);
        report->by_status[row->status]++;
        report->count++;
    }
    filters_free(&f);
    run_index_free(&xb);
    run_index_free(&xc);
    sort_mode = o->sort;
    qsort(report->rows, report->count, sizeof *report->rows, cmp_rows);
    report->session.has_base = session_span(base, &report->session.base_ns);
    report->session.has_cand = session_span(cand, &report->session.cand_ns);
    return SP_OK;
}

void diff_report_free(diff_report *report) {
    if (!report) return;
    free(report->rows);
    report->rows = NULL;
    report->count = 0;
}
