/*
 * summary_api.c - the public statistics and summary API
 * (scope_profiler_summary.h) over stats.c and summary.c.
 *
 * The internal modules work on an spi_profile, while sp_results keeps its
 * spi_profile private to results_api.c. Rather than reach into that
 * layout, each call builds a *view*: an spi_profile whose rows borrow the
 * per-call arrays through the public accessors (no copy of any event).
 * The view is a few words per row, owns only its row and name tables, and
 * never outlives the call, so the results object stays immutable and the
 * functions are safe to call concurrently on it.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "scope_profiler_summary.h"
#include "analysis/stats.h"
#include "analysis/summary.h"
#include "analysis/summary_threads.h"
#include "analysis/results_internal.h"
#include "util/text.h"

_Static_assert(SP_STAT_MIN_MAX == SPI_STAT_MIN_MAX && SP_STAT_FIRST_LAST == SPI_STAT_FIRST_LAST &&
                   SP_STAT_STD == SPI_STAT_STD && SP_STAT_PERCENTILES == SPI_STAT_PERCENTILES &&
                   SP_STAT_EXCLUSIVE == SPI_STAT_EXCLUSIVE && SP_STAT_GPU == SPI_STAT_GPU &&
                   SP_STAT_START_END == SPI_STAT_START_END,
               "public and internal availability bits must agree");

static void copy_message(char *errbuf, size_t errbuf_len, const char *message) {
    if (!errbuf || errbuf_len == 0) return;
    size_t len = strlen(message);
    if (len >= errbuf_len) len = errbuf_len - 1;
    memcpy(errbuf, message, len);
    errbuf[len] = '\0';
}

/* The accessors hand out const arrays; the view only ever reads them, the
 * spi_row fields are non-const because the recorder owns and fills its
 * rows. */
static int64_t *borrow(const int64_t *p) { return (int64_t *)(uintptr_t)p; }

static void view_close(spi_profile *view) {
    view->store = NULL; /* borrowed */
    spi_free(view->rows);
    spi_free(view->names);
    spi_free(view->paths);
    memset(view, 0, sizeof *view);
}

static int view_open(spi_profile *view, const sp_results *res, spi_error *err) {
    memset(view, 0, sizeof *view);
    size_t names = sp_results_region_count(res), rows = sp_results_row_count(res);
    view->names = spi_calloc(names + 1, sizeof *view->names);
    view->rows = spi_calloc(rows + 1, sizeof *view->rows);
    if (!view->names || !view->rows) {
        view_close(view);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < names; i++)
        view->names[i] = (char *)(uintptr_t)sp_results_region_name(res, i);
    view->name_count = names;
    view->summary_only = sp_results_is_summary_only(res) != 0;
    view->aggregate = sp_results_is_aggregate(res) != 0;
    view->rank_count = sp_results_rank_count(res);
    bool events = sp_results_has_events(res) != 0;
    for (size_t i = 0; i < rows; i++) {
        spi_row *row = &view->rows[i];
        sp_row_stats st;
        if (sp_results_row_stats(res, i, &st) != SP_OK) memset(&st, 0, sizeof st);
        row->region = (uint32_t)sp_results_row_region(res, i);
        row->rank = sp_results_row_rank(res, i);
        row->exclusive_total = -1;
        row->aggregate_exclusive = -1;
        row->source_line = -1;
        row->stats = (spi_stats){st.total, st.minimum, st.maximum, st.first, st.last,
                                 st.start_minimum, st.end_maximum, st.gpu_count, st.gpu_total,
                                 st.mean, st.m2};
        if (view->aggregate) {
            row->aggregate = true;
            row->aggregate_count = st.count;
            row->aggregate_total = st.total;
            row->aggregate_minimum = st.minimum;
            row->aggregate_maximum = st.maximum;
            row->aggregate_exclusive = sp_results_row_exclusive_total(res, i);
            continue;
        }
        row->count = st.count;
        row->exclusive_total = sp_results_row_exclusive_total(res, i);
        row->out_of_start_order = !sp_results_row_in_start_order(res, i);
        if (events) {
            row->starts = borrow(sp_results_row_starts(res, i));
            row->durations = borrow(sp_results_row_durations(res, i));
            row->gpu_durations = borrow(sp_results_row_gpu_durations(res, i));
            row->call_ids = borrow(sp_results_row_call_ids(res, i));
            row->parent_ids = borrow(sp_results_row_parent_ids(res, i));
            row->thread_ids = borrow(sp_results_row_thread_ids(res, i));
            row->task_ids = borrow(sp_results_row_task_ids(res, i));
            row->await_ns = borrow(sp_results_row_await_ns(res, i));
        }
        view->event_count += row->count;
    }
    view->row_count = rows;
    /* Calls kept in the file (SP_RESULTS_CALLS_ON_DEMAND): the view reads
     * them through the object's store, borrowed like the arrays; its rows
     * are the object's rows, index for index. */
    view->store = spi_results_profile(res)->store;
    /* Aggregate mode's call paths: small (paths, not calls), so copied. */
    size_t paths = sp_results_call_path_count(res);
    view->paths = spi_calloc(paths + 1, sizeof *view->paths);
    if (!view->paths) {
        view_close(view);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < paths; i++) {
        sp_call_path p;
        if (sp_results_call_path(res, i, &p) != SP_OK) continue;
        view->paths[view->path_count++] = (spi_call_path){
            .rank = p.rank, .region = (uint32_t)p.region, .parent = p.parent,
            .thread = p.thread, .count = p.count, .recursions = p.recursions,
            .total = p.total_ns, .minimum = p.min_ns, .maximum = p.max_ns,
            .exclusive = p.exclusive_ns, .m2 = p.m2, .start_minimum = p.start_min_ns,
            .end_maximum = p.end_max_ns};
    }
    return SP_OK;
}

static void to_public(sp_region_summary *out, const spi_region_stats *s) {
    *out = (sp_region_summary){
        .calls = s->calls,
        .num_ranks = s->num_ranks,
        .total_ns = s->total_ns,
        .exclusive_ns = s->exclusive_ns,
        .average_ns = s->mean_ns,
        .min_ns = s->min_ns,
        .max_ns = s->max_ns,
        .first_ns = s->first_ns,
        .last_ns = s->last_ns,
        .std_ns = s->std_ns,
        .p50_ns = s->p50_ns,
        .p95_ns = s->p95_ns,
        .p99_ns = s->p99_ns,
        .rank_imbalance = s->rank_imbalance,
        .rank_imbalance_pct = s->rank_imbalance_pct,
        .first_start_ns = s->first_start_ns,
        .last_end_ns = s->last_end_ns,
        .gpu_total_ns = s->gpu_total_ns,
        .gpu_average_ns = s->gpu_mean_ns,
        .available = s->available,
    };
}

SP_API int sp_summary_region(const sp_results *results, size_t region, const uint32_t *ranks,
                             size_t rank_count, sp_region_summary *out, char *errbuf,
                             size_t errbuf_len) {
    copy_message(errbuf, errbuf_len, "");
    if (!results || !out || (rank_count && !ranks)) {
        copy_message(errbuf, errbuf_len, "sp_summary_region: invalid argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    spi_error err;
    spi_error_clear(&err);
    spi_profile view;
    int status = view_open(&view, results, &err);
    if (status == SP_OK) {
        spi_region_stats s;
        status = spi_region_stats_compute(&s, &view, region, ranks, ranks ? rank_count : 0, &err);
        if (status == SP_OK || status == SP_ERR_NESTING) to_public(out, &s);
        view_close(&view);
    }
    if (status != SP_OK) copy_message(errbuf, errbuf_len, err.message);
    return status;
}

/* Every region's (by_row false) or every row's statistics of the view. */
static int view_summaries(const spi_profile *view, const uint32_t *ranks, size_t rank_count,
                          bool by_row, sp_region_summary *out, spi_error *err) {
    if (!by_row) {
        spi_region_stats *all = spi_calloc(view->name_count + 1, sizeof *all);
        if (!all) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
        int status = spi_regions_stats_compute(all, view, ranks, rank_count, err);
        if (status == SP_OK || status == SP_ERR_NESTING)
            for (size_t i = 0; i < view->name_count; i++) to_public(&out[i], &all[i]);
        spi_free(all);
        return status;
    }
    int64_t *exclusive = spi_calloc(view->row_count + 1, sizeof *exclusive);
    bool *ok = spi_calloc(view->row_count + 1, sizeof *ok);
    int status = exclusive && ok ? spi_rows_exclusive(view, exclusive, ok, err)
                                 : spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    int nesting = status == SP_ERR_NESTING ? status : SP_OK;
    if (nesting) status = SP_OK;
    for (size_t r = 0; r < view->row_count && status == SP_OK; r++) {
        spi_region_stats s;
        int st = spi_region_stats_from_rows(&s, view, &r, 1, exclusive, ok, err);
        if (st != SP_OK && st != SP_ERR_NESTING) status = st;
        else to_public(&out[r], &s);
    }
    spi_free(exclusive);
    spi_free(ok);
    return status != SP_OK ? status : nesting;
}

static int summaries(const sp_results *results, const uint32_t *ranks, size_t rank_count,
                     bool by_row, sp_region_summary *out, char *errbuf, size_t errbuf_len) {
    copy_message(errbuf, errbuf_len, "");
    if (!results || !out || (rank_count && !ranks)) {
        copy_message(errbuf, errbuf_len, by_row ? "sp_summary_rows: invalid argument"
                                                : "sp_summary_regions: invalid argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    spi_error err;
    spi_error_clear(&err);
    spi_profile view;
    int status = view_open(&view, results, &err);
    if (status == SP_OK) {
        status = view_summaries(&view, ranks, ranks ? rank_count : 0, by_row, out, &err);
        view_close(&view);
    }
    if (status != SP_OK) copy_message(errbuf, errbuf_len, err.message);
    return status;
}

SP_API int sp_summary_regions(const sp_results *results, const uint32_t *ranks,
                              size_t rank_count, sp_region_summary *out, char *errbuf,
                              size_t errbuf_len) {
    return summaries(results, ranks, rank_count, false, out, errbuf, errbuf_len);
}

SP_API int sp_summary_rows(const sp_results *results, sp_region_summary *out, char *errbuf,
                           size_t errbuf_len) {
    return summaries(results, NULL, 0, true, out, errbuf, errbuf_len);
}

SP_API int sp_summary_region_rank(const sp_results *results, size_t region, uint32_t rank,
                                  sp_region_summary *out, char *errbuf, size_t errbuf_len) {
    return sp_summary_region(results, region, &rank, 1, out, errbuf, errbuf_len);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

SP_API int sp_summary_percentile(const sp_results *results, size_t region, const uint32_t *ranks,
                                 size_t rank_count, double percent, double *value_ns) {
    if (!results || !value_ns || region >= sp_results_region_count(results) ||
        (rank_count && !ranks) || !(percent >= 0.0 && percent <= 100.0))
        return SP_ERR_INVALID_ARGUMENT;
    if (!sp_results_has_events(results)) return SP_ERR_UNSUPPORTED;
    size_t rows = sp_results_row_count(results), selected = 0;
    size_t *picked = spi_malloc((rows + 1) * sizeof *picked);
    if (!picked) return SP_ERR_OUT_OF_MEMORY;
    uint64_t n = 0;
    for (size_t i = 0; i < rows; i++)
        if (sp_results_row_region(results, i) == region &&
            spi_rank_selected(ranks, rank_count, sp_results_row_rank(results, i))) {
            picked[selected++] = i;
            n += sp_results_row_calls(results, i);
        }
    int64_t *all = spi_calloc(n ? (size_t)n : 1, sizeof *all);
    int status = all ? spi_rows_durations(spi_results_profile(results), picked, selected, all, n,
                                          NULL, NULL, NULL)
                     : SP_ERR_OUT_OF_MEMORY;
    spi_free(picked);
    if (status != SP_OK) {
        spi_free(all);
        return status;
    }
    size_t k = (size_t)n;
    qsort(all, k, sizeof *all, cmp_i64);
    *value_ns = k ? spi_percentile_sorted(all, k, percent) : 0.0;
    spi_free(all);
    return SP_OK;
}

SP_API void sp_summary_options_init(sp_summary_options *options) {
    if (options) memset(options, 0, sizeof *options);
}

SP_API const char *sp_summary_column_names(void) { return spi_summary_column_names; }

SP_API int sp_summary_print(const sp_results *results, FILE *out,
                            const sp_summary_options *options, char *errbuf, size_t errbuf_len) {
    copy_message(errbuf, errbuf_len, "");
    if (!results || !out) {
        copy_message(errbuf, errbuf_len, "sp_summary_print: invalid argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    spi_summary_options o = {0};
    if (options) {
        o.style = options->style;
        o.flat = options->flat != 0;
        o.percent_exclusive = options->percent_exclusive != 0;
        o.sort = options->sort;
        o.columns = options->columns;
        o.include = options->include;
        o.include_count = options->include_count;
        o.exclude = options->exclude;
        o.exclude_count = options->exclude_count;
        o.ranks = options->ranks;
        o.rank_count = options->rank_count;
        o.title = options->title;
    }
    spi_error err;
    spi_error_clear(&err);
    spi_profile view;
    int status = view_open(&view, results, &err);
    if (status == SP_OK) {
        status = spi_summary_print(&view, out, &o, &err);
        view_close(&view);
    }
    if (status != SP_OK) copy_message(errbuf, errbuf_len, err.message);
    return status;
}

_Static_assert(sizeof(sp_thread_row) == sizeof(spi_summary_thread_row) &&
                   offsetof(sp_thread_row, path) == offsetof(spi_summary_thread_row, path) &&
                   offsetof(sp_thread_row, other_threads_ns) ==
                       offsetof(spi_summary_thread_row, other_threads_ns),
               "the public thread row mirrors the internal one");

SP_API int sp_summary_threads(const sp_results *results, const uint32_t *ranks,
                              size_t rank_count, sp_thread_row **rows, size_t *row_count,
                              char *errbuf, size_t errbuf_len) {
    copy_message(errbuf, errbuf_len, "");
    if (rows) *rows = NULL;
    if (row_count) *row_count = 0;
    if (!results || !rows || !row_count || (rank_count && !ranks)) {
        copy_message(errbuf, errbuf_len, "sp_summary_threads: invalid argument");
        return SP_ERR_INVALID_ARGUMENT;
    }
    spi_error err;
    spi_error_clear(&err);
    spi_profile view;
    int status = view_open(&view, results, &err);
    if (status == SP_OK) {
        spi_summary_thread_row *internal = NULL;
        status = spi_summary_thread_rows(&view, ranks, ranks ? rank_count : 0, &internal,
                                         row_count, &err);
        /* one block with the same layout (checked above): handed out as is */
        *rows = (sp_thread_row *)(void *)internal;
        view_close(&view);
    }
    if (status != SP_OK) copy_message(errbuf, errbuf_len, err.message);
    return status;
}

SP_API void sp_summary_threads_free(sp_thread_row *rows) { spi_free(rows); }

SP_API size_t sp_escape_name(const char *name, char *out, size_t out_size) {
    return spi_text_escape(out, out ? out_size : 0, name);
}
