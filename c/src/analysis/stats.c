/*
 * stats.c - FORMAT.md 7.1-7.4 over an spi_profile.
 *
 * With per-call data every pooled statistic is computed on the pooled
 * durations (each call weighs the same, so a rank with more calls counts
 * more), exactly as the reference does with numpy. Without it (summary-only
 * or aggregate files) the per-rank (count, mean, m2) triples are combined
 * exactly (Chan et al.), which is why percentiles are then unavailable: no
 * combination of stored moments can give them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/sat_math.h"
#include "util/alloc.h"
#include "util/sort.h"
#include "analysis/calltree.h"
#include "analysis/stats.h"
#include "profile/call_cursor.h"

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

double spi_percentile_sorted(const int64_t *sorted, size_t n, double pct) {
    if (n == 0) return 0.0;
    /* numpy: q = pct / 100, virtual index (n - 1) * q, then its _lerp, which
     * interpolates from the upper neighbour when t >= 0.5 so that the result
     * is exact at both ends. */
    double q = pct / 100.0;
    double virt = (double)(n - 1) * q;
    double lo_d = floor(virt);
    if (lo_d < 0) lo_d = 0;
    size_t lo = (size_t)lo_d;
    if (lo > n - 1) lo = n - 1;
    size_t hi = lo + 1 < n ? lo + 1 : n - 1;
    double t = virt - lo_d;
    double a = (double)sorted[lo], b = (double)sorted[hi];
    double diff = b - a;
    return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

double spi_std_values(const int64_t *values, size_t n, double mean) {
    if (n == 0) return 0.0;
    double m2 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double dev = (double)values[i] - mean;
        m2 += dev * dev;
    }
    return sqrt(m2 / (double)n);
}

double spi_imbalance(const int64_t *totals, size_t n) {
    size_t kept = 0;
    double sum = 0.0, max = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (totals[i] <= 0) continue;
        kept++;
        sum += (double)totals[i];
        if ((double)totals[i] > max) max = (double)totals[i];
    }
    if (kept < 2) return 0.0;
    return max / (sum / (double)kept);
}

bool spi_rank_selected(const uint32_t *ranks, size_t rank_count, uint32_t rank) {
    if (!ranks) return true;
    for (size_t i = 0; i < rank_count; i++)
        if (ranks[i] == rank) return true;
    return false;
}

static bool row_has_events(const spi_profile *profile, const spi_row *row) {
    return !profile->summary_only && !profile->aggregate && !row->aggregate &&
           (row->count == 0 || profile->store || (row->starts && row->durations));
}

static uint64_t row_calls(const spi_row *row) {
    return row->aggregate ? row->aggregate_count : row->count;
}

static int64_t row_total(const spi_row *row) {
    return row->aggregate ? row->aggregate_total : row->stats.total;
}

int spi_row_exclusive(const spi_profile *profile, size_t row_index, int64_t *exclusive_ns,
                      spi_error *err) {
    const spi_row *row = &profile->rows[row_index];
    if (row->aggregate) {
        /* FORMAT.md 2.2: without a stored value a summary has only the
         * inclusive total to offer. */
        *exclusive_ns = row->aggregate_exclusive >= 0 ? row->aggregate_exclusive
                                                      : row->aggregate_total;
        return SP_OK;
    }
    if (row->exclusive_total >= 0) {
        *exclusive_ns = row->exclusive_total;
        return SP_OK;
    }
    if (!row_has_events(profile, row)) {
        *exclusive_ns = row->stats.total;
        return SP_OK;
    }
    if (row->count == 0) {
        *exclusive_ns = 0;
        return SP_OK;
    }
    spi_rank_tree tree;
    int status = spi_rank_tree_build(&tree, profile, row->rank, err);
    if (status != SP_OK) return status;
    int64_t sum = 0;
    for (size_t i = 0; i < tree.call_count; i++)
        if (tree.rows[i] == row_index) sum = spi_sat_add_i64(sum, tree.exclusive[i]);
    spi_rank_tree_free(&tree);
    *exclusive_ns = sum;
    return SP_OK;
}

int spi_rows_durations(const spi_profile *profile, const size_t *rows, size_t row_count,
                       int64_t *out, uint64_t n, int64_t *gpu_total, uint64_t *gpu_values,
                       spi_error *err) {
    uint64_t k = 0;
    int status = SP_OK;
    for (size_t r = 0; r < row_count && status == SP_OK; r++) {
        /* through a cursor: the calls may still be in the file */
        spi_call_cursor cursor;
        spi_call_slice slice;
        status = spi_call_cursor_open(&cursor, profile, rows[r],
                                      SPI_CURSOR_DURATIONS | (gpu_total ? SPI_CURSOR_GPU : 0), 0);
        while (status == SP_OK && (status = spi_call_cursor_next(&cursor, &slice, err)) == SP_OK &&
               slice.count && k + slice.count <= n) {
            memcpy(out + k, slice.durations, slice.count * sizeof *out);
            k += slice.count;
            if (gpu_total && slice.gpu_durations) {
                /* FORMAT.md 3.3 quirk: a kept slice sums its -1 entries too. */
                for (size_t i = 0; i < slice.count; i++)
                    *gpu_total = spi_sat_add_i64(*gpu_total, slice.gpu_durations[i]);
                *gpu_values += slice.count;
            }
        }
        spi_call_cursor_close(&cursor);
    }
    if (status == SP_ERR_OUT_OF_MEMORY)
        return spi_error_set(err, status, "out of memory pooling durations");
    return status;
}

/* Durations pooled in one array at most (bytes); a region with more calls
 * is pooled in passes over its calls instead (pool_passes), with the same
 * exact results. SCOPE_PROFILER_STATS_MEMORY (bytes) overrides it, which is
 * how the tests make small regions take the passes. */
#define POOL_MEMORY_DEFAULT ((uint64_t)32 << 20)

static uint64_t pool_memory(void) {
    const char *text = getenv("SCOPE_PROFILER_STATS_MEMORY");
    if (!text || !text[0]) return POOL_MEMORY_DEFAULT;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    return end && *end == '\0' ? (uint64_t)v : POOL_MEMORY_DEFAULT;
}

/* Buckets of one refinement pass per order statistic. */
#define SELECT_BUCKETS 65536u

/* One wanted order statistic: its value lies in [lo, hi], and `below`
 * values are smaller than lo. */
typedef struct order_stat {
    uint64_t rank;
    int64_t lo, hi;
    uint64_t below;
    uint64_t *counts;
} order_stat;

/* The durations of rows[0..row_count) through cursors, each handed to fn. */
typedef void (*duration_fn)(void *context, int64_t duration);

static int each_duration(const spi_profile *profile, const size_t *rows, size_t row_count,
                         duration_fn fn, void *context, spi_error *err) {
    int status = SP_OK;
    for (size_t r = 0; r < row_count && status == SP_OK; r++) {
        spi_call_cursor cursor;
        spi_call_slice slice;
        status = spi_call_cursor_open(&cursor, profile, rows[r], SPI_CURSOR_DURATIONS, 0);
        while (status == SP_OK && (status = spi_call_cursor_next(&cursor, &slice, err)) == SP_OK &&
               slice.count)
            for (size_t i = 0; i < slice.count; i++) fn(context, slice.durations[i]);
        spi_call_cursor_close(&cursor);
    }
    if (status == SP_ERR_OUT_OF_MEMORY)
        return spi_error_set(err, status, "out of memory pooling durations");
    return status;
}

typedef struct first_pass {
    double mean, m2;
    int64_t min, max;
    bool any;
} first_pass;

static void first_pass_add(void *context, int64_t d) {
    first_pass *f = context;
    double dev = (double)d - f->mean;  /* spi_std_values, value by value */
    f->m2 += dev * dev;
    if (!f->any || d < f->min) f->min = d;
    if (!f->any || d > f->max) f->max = d;
    f->any = true;
}

typedef struct select_pass {
    order_stat *stats;
    size_t count;
} select_pass;

static uint64_t bucket_width(const order_stat *o) {
    uint64_t range = (uint64_t)o->hi - (uint64_t)o->lo; /* hi >= lo */
    return range / SELECT_BUCKETS + 1;
}

static void select_pass_add(void *context, int64_t d) {
    select_pass *p = context;
    for (size_t t = 0; t < p->count; t++) {
        order_stat *o = &p->stats[t];
        if (o->lo == o->hi || d < o->lo || d > o->hi) continue;
        o->counts[((uint64_t)d - (uint64_t)o->lo) / bucket_width(o)]++;
    }
}

/* A region too large for one array: min, max and std in one pass (the
 * deviations summed in the order spi_std_values sums them, so std is bit
 * for bit the same), then each wanted order statistic narrowed down by
 * counting the values in SELECT_BUCKETS buckets of its range per pass
 * until the range is one value: exact, in memory independent of the calls
 * (a few passes: each divides the range by 65536). */
static int pool_passes(spi_region_stats *out, const spi_profile *profile, const size_t *rows,
                       size_t row_count, spi_error *err) {
    uint64_t n = out->calls;
    first_pass f = {.mean = (double)out->total_ns / (double)n};
    int status = each_duration(profile, rows, row_count, first_pass_add, &f, err);
    if (status != SP_OK) return status;
    out->mean_ns = f.mean;
    out->std_ns = sqrt(f.m2 / (double)n);
    out->min_ns = f.min;
    out->max_ns = f.max;
    static const double pcts[3] = {50.0, 95.0, 99.0};
    order_stat stats[6];
    select_pass pass = {stats, 0};
    uint64_t lo_rank[3], hi_rank[3];
    double frac[3];
    for (int q = 0; q < 3; q++) {
        /* spi_percentile_sorted's indices */
        double virt = (double)(n - 1) * (pcts[q] / 100.0), lo_d = floor(virt);
        if (lo_d < 0) lo_d = 0;
        lo_rank[q] = (uint64_t)lo_d > n - 1 ? n - 1 : (uint64_t)lo_d;
        hi_rank[q] = lo_rank[q] + 1 < n ? lo_rank[q] + 1 : n - 1;
        frac[q] = virt - lo_d;
        for (int side = 0; side < 2; side++) {
            uint64_t rank = side ? hi_rank[q] : lo_rank[q];
            bool known = false;
            for (size_t t = 0; t < pass.count; t++) known |= stats[t].rank == rank;
            if (!known) stats[pass.count++] = (order_stat){rank, f.min, f.max, 0, NULL};
        }
    }
    for (size_t t = 0; t < pass.count && status == SP_OK; t++)
        if (!(stats[t].counts = spi_calloc(SELECT_BUCKETS, sizeof *stats[t].counts)))
            status = spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory pooling durations");
    for (bool open = true; open && status == SP_OK;) {
        for (size_t t = 0; t < pass.count; t++)
            memset(stats[t].counts, 0, SELECT_BUCKETS * sizeof *stats[t].counts);
        status = each_duration(profile, rows, row_count, select_pass_add, &pass, err);
        open = false;
        for (size_t t = 0; t < pass.count && status == SP_OK; t++) {
            order_stat *o = &stats[t];
            if (o->lo == o->hi) continue;
            uint64_t width = bucket_width(o), seen = o->below, b = 0;
            while (b + 1 < SELECT_BUCKETS && seen + o->counts[b] <= o->rank) seen += o->counts[b++];
            o->below = seen;
            /* offsets from lo: the range fits in uint64 whatever the signs */
            uint64_t range = (uint64_t)o->hi - (uint64_t)o->lo, first = b * width;
            uint64_t last = range - first < width - 1 ? range : first + width - 1;
            o->hi = (int64_t)((uint64_t)o->lo + last);
            o->lo = (int64_t)((uint64_t)o->lo + first);
            open |= o->lo != o->hi;
        }
    }
    for (int q = 0; q < 3 && status == SP_OK; q++) {
        double a = 0.0, b = 0.0;
        for (size_t t = 0; t < pass.count; t++) {
            if (stats[t].rank == lo_rank[q]) a = (double)stats[t].lo;
            if (stats[t].rank == hi_rank[q]) b = (double)stats[t].lo;
        }
        double diff = b - a, t = frac[q];
        double v = t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
        if (q == 0) out->p50_ns = v;
        else if (q == 1) out->p95_ns = v;
        else out->p99_ns = v;
    }
    for (size_t t = 0; t < pass.count; t++) spi_free(stats[t].counts);
    return status;
}

/* Pooled over calls: FORMAT.md 7.3 "with event data". */
static int pool_events(spi_region_stats *out, const spi_profile *profile, const size_t *rows,
                       size_t row_count, spi_error *err) {
    size_t n = (size_t)out->calls;
    bool gpu = false;
    for (size_t r = 0; r < row_count; r++) gpu |= profile->rows[rows[r]].gpu_durations != NULL;
    /* GPU rows are in memory anyway (a store never holds them). */
    if (!gpu && n && out->calls > pool_memory() / sizeof(int64_t)) {
        int status = pool_passes(out, profile, rows, row_count, err);
        if (status == SP_OK)
            out->available |= SPI_STAT_MIN_MAX | SPI_STAT_FIRST_LAST | SPI_STAT_STD |
                              SPI_STAT_PERCENTILES | SPI_STAT_START_END;
        return status;
    }
    int64_t *all = spi_calloc(n ? n : 1, sizeof *all);
    if (!all) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory pooling durations");
    uint64_t gpu_values = 0;
    int status = spi_rows_durations(profile, rows, row_count, all, n, &out->gpu_total_ns,
                                    &gpu_values, err);
    if (status != SP_OK) {
        spi_free(all);
        return status;
    }
    out->available |= SPI_STAT_MIN_MAX | SPI_STAT_FIRST_LAST | SPI_STAT_STD |
                      SPI_STAT_PERCENTILES | SPI_STAT_START_END;
    if (n) {
        out->mean_ns = (double)out->total_ns / (double)n;
        out->std_ns = spi_std_values(all, n, out->mean_ns);
        qsort(all, n, sizeof *all, cmp_i64);
        out->min_ns = all[0];
        out->max_ns = all[n - 1];
        out->p50_ns = spi_percentile_sorted(all, n, 50.0);
        out->p95_ns = spi_percentile_sorted(all, n, 95.0);
        out->p99_ns = spi_percentile_sorted(all, n, 99.0);
    }
    if (gpu_values) {
        out->available |= SPI_STAT_GPU;
        out->gpu_mean_ns = (double)out->gpu_total_ns / (double)gpu_values;
    }
    spi_free(all);
    return SP_OK;
}

/* Without events: FORMAT.md 7.2 per rank, combined as in 7.3. */
static void pool_stored(spi_region_stats *out, const spi_profile *profile, const size_t *rows,
                        size_t row_count) {
    bool aggregate = profile->aggregate;
    bool first = true;
    double mean = 0.0, m2 = 0.0;
    uint64_t n = 0, gpu_count = 0;
    for (size_t r = 0; r < row_count; r++) {
        const spi_row *row = &profile->rows[rows[r]];
        aggregate = aggregate || row->aggregate;
        uint64_t c = row_calls(row);
        if (c == 0) continue;
        if (first || row->stats.minimum < out->min_ns) out->min_ns = row->stats.minimum;
        if (first || row->stats.maximum > out->max_ns) out->max_ns = row->stats.maximum;
        first = false;
        /* Exact combination of (count, mean, m2): the pooled M2 is the sum
         * of the parts plus each part's offset from the pooled mean. */
        double row_mean = (double)row_total(row) / (double)c;
        uint64_t nn = n + c;
        double delta = row_mean - mean;
        double new_mean = mean + delta * (double)c / (double)nn;
        m2 += fmax(row->stats.m2, 0.0) + delta * delta * (double)n * (double)c / (double)nn;
        mean = new_mean;
        n = nn;
        gpu_count += row->stats.gpu_count;
        out->gpu_total_ns = spi_sat_add_i64(out->gpu_total_ns, row->stats.gpu_total);
    }
    out->available |= SPI_STAT_MIN_MAX;
    if (out->calls) out->mean_ns = (double)out->total_ns / (double)out->calls;
    if (aggregate && profile->path_count > 0) {
        /* Our aggregate mode's call paths carry the moments and the first
         * start / last end, not the first and last durations. */
        out->available |= SPI_STAT_STD | SPI_STAT_START_END;
        out->std_ns = n ? sqrt(fmax(m2, 0.0) / (double)n) : 0.0;
        out->gpu_total_ns = 0;
    } else if (!aggregate) {
        /* The aggregate layout stores no moments and no first/last. */
        out->available |= SPI_STAT_STD | SPI_STAT_FIRST_LAST | SPI_STAT_START_END;
        out->std_ns = n ? sqrt(fmax(m2, 0.0) / (double)n) : 0.0;
        if (gpu_count) {
            out->available |= SPI_STAT_GPU;
            out->gpu_mean_ns = (double)out->gpu_total_ns / (double)gpu_count;
        }
    } else {
        out->gpu_total_ns = 0;
    }
    /* "percentiles are None, or 0.0 when there are no calls" (7.3). */
    if (out->calls == 0) out->available |= SPI_STAT_PERCENTILES;
}

/* Rank spread of one region: the totals of the ranks that called it
 * (FORMAT.md 7.3's imbalance uses the same totals). */
static void rank_spread(spi_region_stats *out, const spi_profile *profile, const size_t *rows,
                        size_t row_count, const int64_t *totals) {
    double sum = 0.0;
    for (size_t r = 0; r < row_count; r++) {
        if (row_calls(&profile->rows[rows[r]]) == 0) continue;
        int64_t t = totals[r];
        if (out->ranks_called == 0 || t < out->rank_min_ns) out->rank_min_ns = t;
        if (out->ranks_called == 0 || t > out->rank_max_ns) out->rank_max_ns = t;
        sum += (double)t;
        out->ranks_called++;
    }
    out->rank_mean_ns = out->ranks_called ? sum / (double)out->ranks_called : 0.0;
}

int spi_region_stats_from_rows(spi_region_stats *out, const spi_profile *profile,
                               const size_t *rows, size_t row_count, const int64_t *row_exclusive,
                               const bool *row_exclusive_ok, spi_error *err) {
    memset(out, 0, sizeof *out);
    out->exclusive_ns = -1;
    int64_t *totals = spi_calloc(row_count ? row_count : 1, sizeof *totals);
    if (!totals) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory computing statistics");
    bool events = true;
    for (size_t r = 0; r < row_count; r++) {
        const spi_row *row = &profile->rows[rows[r]];
        totals[r] = row_total(row);
        out->calls += row_calls(row);
        out->total_ns = spi_sat_add_i64(out->total_ns, row_total(row));
        if (!row_has_events(profile, row)) events = false;
    }
    out->num_ranks = (uint32_t)row_count;  /* one row per (rank, region) */
    int status = SP_OK;
    if (events) status = pool_events(out, profile, rows, row_count, err);
    else pool_stored(out, profile, rows, row_count);

    /* first/last: the chronologically first call's duration and the last
     * one's, taken from the rank that started first / ended last. */
    bool have_first = false;
    for (size_t r = 0; r < row_count; r++) {
        const spi_row *row = &profile->rows[rows[r]];
        if (row_calls(row) == 0 || row->aggregate) continue;
        const spi_stats *s = &row->stats;
        if (!have_first || s->start_minimum < out->first_start_ns) {
            out->first_start_ns = s->start_minimum;
            out->first_ns = s->first;
        }
        if (!have_first || s->end_maximum > out->last_end_ns) {
            out->last_end_ns = s->end_maximum;
            out->last_ns = s->last;
        }
        have_first = true;
    }
    out->rank_imbalance = spi_imbalance(totals, row_count);
    out->rank_imbalance_pct = out->rank_imbalance == 0.0 ? 0.0 : (out->rank_imbalance - 1.0) * 100.0;
    rank_spread(out, profile, rows, row_count, totals);

    if (status == SP_OK) {
        int64_t exclusive = 0;
        int ex_status = SP_OK;
        for (size_t r = 0; r < row_count && ex_status == SP_OK; r++) {
            int64_t value = 0;
            if (!row_exclusive) {
                ex_status = spi_row_exclusive(profile, rows[r], &value, err);
            } else if (row_exclusive_ok[rows[r]]) {
                value = row_exclusive[rows[r]];
            } else {
                /* the caller's err already names the rank's problem */
                ex_status = SP_ERR_NESTING;
            }
            exclusive = spi_sat_add_i64(exclusive, value);
        }
        if (ex_status == SP_OK) {
            out->exclusive_ns = exclusive;
            out->available |= SPI_STAT_EXCLUSIVE;
        }
        status = ex_status;
    }
    spi_free(totals);
    return status;
}

int spi_region_stats_compute(spi_region_stats *out, const spi_profile *profile, size_t region,
                             const uint32_t *ranks, size_t rank_count, spi_error *err) {
    memset(out, 0, sizeof *out);
    out->exclusive_ns = -1;
    if (!profile || region >= profile->name_count)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "region %zu out of range", region);
    size_t *rows = spi_calloc(profile->row_count ? profile->row_count : 1, sizeof *rows);
    if (!rows) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory computing statistics");
    size_t row_count = 0;
    for (size_t r = 0; r < profile->row_count; r++) {
        const spi_row *row = &profile->rows[r];
        if (row->region == region && spi_rank_selected(ranks, rank_count, row->rank))
            rows[row_count++] = r;
    }
    int status = spi_region_stats_from_rows(out, profile, rows, row_count, NULL, NULL, err);
    spi_free(rows);
    return status;
}

/* ---- every region at once ------------------------------------------------- */

void spi_region_rows_free(spi_region_rows *index) {
    if (!index) return;
    spi_free(index->start);
    spi_free(index->rows);
    memset(index, 0, sizeof *index);
}

int spi_region_rows_build(spi_region_rows *index, const spi_profile *profile,
                          const uint32_t *ranks, size_t rank_count) {
    /* A counting sort by region: O(rows + regions), row order kept. */
    memset(index, 0, sizeof *index);
    size_t names = profile->name_count;
    index->start = spi_calloc(names + 2, sizeof *index->start);
    index->rows = spi_calloc(profile->row_count + 1, sizeof *index->rows);
    size_t *fill = spi_calloc(names + 1, sizeof *fill);
    if (!index->start || !index->rows || !fill) {
        spi_free(fill);
        spi_region_rows_free(index);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t r = 0; r < profile->row_count; r++) {
        const spi_row *row = &profile->rows[r];
        if (row->region < names && spi_rank_selected(ranks, rank_count, row->rank))
            index->start[row->region + 1]++;
    }
    for (size_t i = 0; i < names; i++) index->start[i + 1] += index->start[i];
    for (size_t r = 0; r < profile->row_count; r++) {
        const spi_row *row = &profile->rows[r];
        if (row->region < names && spi_rank_selected(ranks, rank_count, row->rank))
            index->rows[index->start[row->region] + fill[row->region]++] = r;
    }
    spi_free(fill);
    return SP_OK;
}

static int cmp_row_by_rank(const void *context, size_t x, size_t y) {
    const spi_profile *profile = context;
    uint32_t rx = profile->rows[x].rank, ry = profile->rows[y].rank;
    if (rx != ry) return rx < ry ? -1 : 1;
    return x < y ? -1 : (x > y);
}

int spi_rows_exclusive(const spi_profile *profile, int64_t *exclusive_ns, bool *ok,
                       spi_error *err) {
    size_t n = profile->row_count;
    size_t *rows = spi_calloc(n + 1, sizeof *rows);
    size_t *tmp = spi_calloc(n + 1, sizeof *tmp);
    bool *needs = spi_calloc(n + 1, sizeof *needs);
    if (!rows || !tmp || !needs) {
        spi_free(rows);
        spi_free(tmp);
        spi_free(needs);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory computing statistics");
    }
    /* Stored values first; only rows without one need their rank's tree. */
    for (size_t r = 0; r < n; r++) {
        const spi_row *row = &profile->rows[r];
        rows[r] = r;
        ok[r] = true;
        exclusive_ns[r] = 0;
        if (row->aggregate || row->exclusive_total >= 0 || !row_has_events(profile, row) ||
            row->count == 0) {
            spi_row_exclusive(profile, r, &exclusive_ns[r], err);  /* O(1) for these rows */
        } else {
            needs[r] = true;
        }
    }
    spi_sort_indices(rows, tmp, n, cmp_row_by_rank, profile);
    int status = SP_OK, nesting = SP_OK;
    for (size_t a = 0; a < n && status == SP_OK;) {
        size_t b = a;
        bool any = false;
        while (b < n && profile->rows[rows[b]].rank == profile->rows[rows[a]].rank) any |= needs[rows[b++]];
        if (any) {
            spi_rank_tree tree;
            spi_error local;
            spi_error_clear(&local);
            int st = spi_rank_tree_build_rows(&tree, profile, profile->rows[rows[a]].rank,
                                              rows + a, b - a, &local);
            if (st == SP_OK) {
                for (size_t i = 0; i < tree.call_count; i++)
                    if (needs[tree.rows[i]])
                        exclusive_ns[tree.rows[i]] =
                            spi_sat_add_i64(exclusive_ns[tree.rows[i]], tree.exclusive[i]);
                spi_rank_tree_free(&tree);
            } else if (st == SP_ERR_NESTING) {
                for (size_t i = a; i < b; i++)
                    if (needs[rows[i]]) ok[rows[i]] = false;
                if (nesting == SP_OK) {
                    nesting = st;
                    spi_error_set(err, st, "%s", local.message);
                }
            } else {
                status = spi_error_set(err, st, "%s", local.message);
            }
        }
        a = b;
    }
    spi_free(rows);
    spi_free(tmp);
    spi_free(needs);
    return status != SP_OK ? status : nesting;
}

int spi_regions_stats_compute(spi_region_stats *out, const spi_profile *profile,
                              const uint32_t *ranks, size_t rank_count, spi_error *err) {
    size_t names = profile->name_count, n = profile->row_count;
    spi_region_rows index;
    int64_t *exclusive = spi_calloc(n + 1, sizeof *exclusive);
    bool *ok = spi_calloc(n + 1, sizeof *ok);
    int status = spi_region_rows_build(&index, profile, ranks, rank_count);
    if (status != SP_OK || !exclusive || !ok) {
        spi_free(exclusive);
        spi_free(ok);
        spi_region_rows_free(&index);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory computing statistics");
    }
    status = spi_rows_exclusive(profile, exclusive, ok, err);
    int nesting = status == SP_ERR_NESTING ? status : SP_OK;
    if (nesting) status = SP_OK;
    for (size_t g = 0; g < names && status == SP_OK; g++) {
        int st = spi_region_stats_from_rows(&out[g], profile, index.rows + index.start[g],
                                            index.start[g + 1] - index.start[g], exclusive, ok,
                                            err);
        if (st != SP_OK && st != SP_ERR_NESTING) status = st;
    }
    spi_free(exclusive);
    spi_free(ok);
    spi_region_rows_free(&index);
    return status != SP_OK ? status : nesting;
}
