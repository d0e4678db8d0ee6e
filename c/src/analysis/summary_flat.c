/*
 * summary_flat.c - the flat rows of the summary table (FORMAT.md 7.5): one
 * row per region, from the region statistics of stats.c.
 *
 * They are the whole table when the data has no calls and no paths, when
 * flat was asked for, or when a rank's calls do not nest, and otherwise
 * the rows of the regions the call tree has no row for. They share only
 * the row type with the call tree (summary_rows.c), which appends them to
 * its rows: their values are pooled by region, by stats.c, not by path.
 */
#include <stdlib.h>
#include <string.h>

#include "util/sat_math.h"
#include "util/alloc.h"
#include "analysis/stats.h"
#include "analysis/summary_rows.h"
#include "profile/call_cursor.h"

/* Short for SPI_SV_BIT: the bit of a value slot in spi_summary_row.has. */
#define HAS(slot) SPI_SV_BIT(slot)

static int oom(spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory building the summary");
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

/* Sums of stored values saturate, as in summary_rows.c: a damaged file
 * must not make them wrap. */
static inline int64_t sat_add(int64_t a, int64_t b) { return spi_sat_add_i64(a, b); }

/* Sorts (start, end) pairs by start: two int64 per element compared on
 * the first. */
static int cmp_pair(const void *a, const void *b) { return cmp_i64(a, b); }

/* Union of one row's call intervals, through a cursor (the calls may be in
 * the file): streamed when the row is in start order (the union only grows
 * at its end), else the row's (start, end) pairs sorted in memory, as
 * before (only files that store calls out of start order pay that). *ok
 * false: a damaged row (the total stands in) or no memory. */
static int64_t row_coverage(const spi_profile *p, size_t index, bool *ok) {
    const spi_row *row = &p->rows[index];
    bool sorted = !row->out_of_start_order;
    int64_t *pairs = sorted ? NULL : spi_calloc((size_t)row->count * 2, sizeof *pairs);
    if (!sorted && !pairs) {
        *ok = false;
        return 0;
    }
    spi_call_cursor cursor;
    spi_call_slice slice;
    int64_t coverage = 0, cs = 0, ce = 0;
    uint64_t k = 0;
    int status = spi_call_cursor_open(&cursor, p, index, SPI_CURSOR_STARTS | SPI_CURSOR_DURATIONS,
                                      0);
    while (status == SP_OK && *ok && (status = spi_call_cursor_next(&cursor, &slice, NULL)) == SP_OK &&
           slice.count) {
        for (size_t i = 0; i < slice.count && *ok; i++, k++) {
            int64_t s = slice.starts[i], e;
            if (slice.durations[i] < 0 || __builtin_add_overflow(s, slice.durations[i], &e)) {
                *ok = false;  /* a damaged row: the total stands in */
            } else if (!sorted) {
                pairs[2 * k] = s;
                pairs[2 * k + 1] = e;
            } else if (k == 0) {
                cs = s;
                ce = e;
            } else if (s <= ce) {
                if (e > ce) ce = e;
            } else {
                coverage = sat_add(coverage, ce - cs);
                cs = s;
                ce = e;
            }
        }
    }
    spi_call_cursor_close(&cursor);
    if (status != SP_OK) *ok = false;
    if (*ok && !sorted && k) {
        qsort(pairs, (size_t)k, 2 * sizeof *pairs, cmp_pair);
        cs = pairs[0];
        ce = pairs[1];
        for (uint64_t i = 1; i < k; i++) {
            if (pairs[2 * i] <= ce) {
                if (pairs[2 * i + 1] > ce) ce = pairs[2 * i + 1];
            } else {
                coverage = sat_add(coverage, ce - cs);
                cs = pairs[2 * i];
                ce = pairs[2 * i + 1];
            }
        }
    }
    spi_free(pairs);
    return k ? sat_add(coverage, ce - cs) : 0;
}

/* Union of a region's call intervals per rank, summed (flat rows), over
 * the region's selected rows. */
static int64_t region_coverage(const spi_profile *p, const size_t *rows, size_t row_count,
                               bool *ok) {
    int64_t coverage = 0;
    *ok = true;
    for (size_t k = 0; k < row_count && *ok; k++) {
        const spi_row *row = &p->rows[rows[k]];
        if (row->count == 0) continue;
        if (!p->store && (!row->starts || !row->durations)) {
            *ok = false;
            return 0;
        }
        coverage = sat_add(coverage, row_coverage(p, rows[k], ok));
    }
    return *ok ? coverage : 0;
}

static void flat_row_values(spi_summary_row *row, const spi_region_stats *s) {
    row->v[SPI_SV_CALLS] = (double)s->calls;
    row->v[SPI_SV_TOTAL] = (double)s->total_ns;
    row->v[SPI_SV_AVG] = s->mean_ns;
    row->v[SPI_SV_IMB] = s->rank_imbalance_pct;
    row->v[SPI_SV_RANKS] = (double)s->ranks_called;
    row->v[SPI_SV_RANK_MEAN] = s->rank_mean_ns;
    row->v[SPI_SV_RANK_MIN] = (double)s->rank_min_ns;
    row->v[SPI_SV_RANK_MAX] = (double)s->rank_max_ns;
    row->has = HAS(SPI_SV_CALLS) | HAS(SPI_SV_TOTAL) | HAS(SPI_SV_AVG) | HAS(SPI_SV_IMB) |
               HAS(SPI_SV_RANKS) | HAS(SPI_SV_RANK_MEAN) | HAS(SPI_SV_RANK_MIN) |
               HAS(SPI_SV_RANK_MAX);
    if (s->available & SPI_STAT_EXCLUSIVE) {
        row->v[SPI_SV_EXCL] = (double)s->exclusive_ns;
        row->has |= HAS(SPI_SV_EXCL);
    }
    if (s->available & SPI_STAT_MIN_MAX) {
        row->v[SPI_SV_MIN] = (double)s->min_ns;
        row->v[SPI_SV_MAX] = (double)s->max_ns;
        row->has |= HAS(SPI_SV_MIN) | HAS(SPI_SV_MAX);
    }
    if (s->available & SPI_STAT_STD) {
        row->v[SPI_SV_STD] = s->std_ns;
        row->has |= HAS(SPI_SV_STD);
    }
    if (s->available & SPI_STAT_PERCENTILES) {
        row->v[SPI_SV_P50] = s->p50_ns;
        row->v[SPI_SV_P95] = s->p95_ns;
        row->v[SPI_SV_P99] = s->p99_ns;
        row->has |= HAS(SPI_SV_P50) | HAS(SPI_SV_P95) | HAS(SPI_SV_P99);
    }
    if (s->available & SPI_STAT_FIRST_LAST) {
        row->v[SPI_SV_FIRST] = (double)s->first_ns;
        row->v[SPI_SV_LAST] = (double)s->last_ns;
        row->has |= HAS(SPI_SV_FIRST) | HAS(SPI_SV_LAST);
    }
    if ((s->available & SPI_STAT_START_END) && s->calls) row->start = s->first_start_ns;
}

/* One flat row per visible region (all of them when flat, else only those
 * without a tree row). A NESTING status leaves the row without exclusive
 * time and is passed on. Linear in rows and regions: the rows are grouped
 * by region once, and every row's exclusive time is computed once (one
 * call tree per rank that needs one) only when some row has to be shown. */
int spi_summary_flat_rows(spi_summary_row **flat, size_t *flat_count, const spi_profile *p,
                          const uint32_t *ranks, size_t rank_count, const bool *visible,
                          const bool *in_tree, int *nesting, spi_error *err) {
    spi_region_rows index;
    size_t count = 0;
    spi_summary_row *out = spi_calloc(p->name_count + 1, sizeof *out);  /* a row per region */
    int64_t *exclusive = spi_calloc(p->row_count + 1, sizeof *exclusive);
    bool *exclusive_ok = spi_calloc(p->row_count + 1, sizeof *exclusive_ok);
    int status = spi_region_rows_build(&index, p, ranks, rank_count);
    *flat = NULL;
    *flat_count = 0;
    if (status != SP_OK || !out || !exclusive || !exclusive_ok) {
        if (status == SP_OK) spi_region_rows_free(&index);
        spi_free(out);
        spi_free(exclusive);
        spi_free(exclusive_ok);
        return oom(err);
    }
    bool have_exclusive = false;
    for (size_t region = 0; region < p->name_count && status == SP_OK; region++) {
        const size_t *rows = index.rows + index.start[region];
        size_t row_count = index.start[region + 1] - index.start[region];
        if (!visible[region] || row_count == 0 || (in_tree && in_tree[region])) continue;
        if (!have_exclusive) {
            spi_error local;
            spi_error_clear(&local);
            status = spi_rows_exclusive(p, exclusive, exclusive_ok, &local);
            if (status == SP_ERR_NESTING) {
                if (*nesting == SP_OK) {
                    *nesting = status;
                    spi_error_set(err, status, "%s", local.message);
                }
                status = SP_OK;
            } else if (status != SP_OK) {
                spi_error_set(err, status, "%s", local.message);
                break;
            }
            have_exclusive = true;
        }
        spi_region_stats s;
        status = spi_region_stats_from_rows(&s, p, rows, row_count, exclusive, exclusive_ok,
                                            err);
        if (status == SP_ERR_NESTING) status = SP_OK;  /* reported above */
        if (status != SP_OK) break;
        spi_summary_row *row = &out[count++];
        row->parent = -1;
        row->start = INT64_MAX;
        row->name = p->names[region];
        flat_row_values(row, &s);
        bool ok;
        int64_t coverage = region_coverage(p, rows, row_count, &ok);
        row->v[SPI_SV_COVERAGE] = ok ? (double)coverage : (double)s.total_ns;
        row->has |= HAS(SPI_SV_COVERAGE);
        /* (own) rows exist only in the tree; per-rank exclusive is not
         * needed here. */
    }
    spi_region_rows_free(&index);
    spi_free(exclusive);
    spi_free(exclusive_ok);
    if (status != SP_OK) {
        spi_free(out);
        return status;
    }
    *flat = out;
    *flat_count = count;
    return SP_OK;
}
