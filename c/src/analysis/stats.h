/*
 * stats.h - region statistics exactly as FORMAT.md section 7 defines them,
 * per rank and pooled over ranks, over an spi_profile.
 *
 * Everything stays in ns here (int64 where the value is a sum or a stored
 * duration, double where it is derived); seconds exist only at the edges
 * (tables, JSON). A statistic the data cannot give (percentiles of a
 * summary-only file, first/last of an aggregate row, exclusive time of a
 * rank whose calls do not nest) is flagged unavailable, never invented.
 */
#ifndef SPI_STATS_H
#define SPI_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"

/* Availability bits of spi_region_stats.available (same values as the
 * public SP_STAT_* bits). */
#define SPI_STAT_MIN_MAX     0x01u
#define SPI_STAT_FIRST_LAST  0x02u
#define SPI_STAT_STD         0x04u
#define SPI_STAT_PERCENTILES 0x08u
#define SPI_STAT_EXCLUSIVE   0x10u
#define SPI_STAT_GPU         0x20u
#define SPI_STAT_START_END   0x40u

typedef struct spi_region_stats {
    uint64_t calls;
    uint32_t num_ranks;       /* ranks with a row of this region */
    int64_t total_ns;         /* = inclusive */
    int64_t exclusive_ns;     /* -1 when not available */
    double mean_ns;
    int64_t min_ns, max_ns;
    int64_t first_ns, last_ns;
    double std_ns;            /* population */
    double p50_ns, p95_ns, p99_ns;
    double rank_imbalance;    /* max/mean of per-rank totals > 0; 0 if < 2 */
    double rank_imbalance_pct;
    int64_t first_start_ns;   /* earliest start over the ranks */
    int64_t last_end_ns;      /* latest end */
    int64_t gpu_total_ns;
    double gpu_mean_ns;
    unsigned available;       /* SPI_STAT_* */
    /* Over the ranks that called the region (GPTL's "nranks"): their
     * totals' mean, smallest and largest. */
    uint32_t ranks_called;
    double rank_mean_ns;
    int64_t rank_min_ns, rank_max_ns;
} spi_region_stats;

/* numpy.percentile(..., method="linear") of n sorted values, in the
 * values' unit. n must be > 0 and pct within [0, 100]. */
double spi_percentile_sorted(const int64_t *sorted, size_t n, double pct);

/* Population std of n values around `mean` (two passes, like numpy). */
double spi_std_values(const int64_t *values, size_t n, double mean);

/* (max/mean of the totals > 0), 0 with fewer than two (FORMAT.md 7.3). */
double spi_imbalance(const int64_t *totals, size_t n);

/* Exclusive ns of row `row` (FORMAT.md 2.2/7.4): the stored total when it
 * is >= 0, else rebuilt from the rank's call tree; summary-only rows
 * without a stored value use their total. SP_OK, SP_ERR_NESTING,
 * SP_ERR_OUT_OF_MEMORY. */
int spi_row_exclusive(const spi_profile *profile, size_t row, int64_t *exclusive_ns,
                      spi_error *err);

/* Statistics of `region` pooled over `ranks` (NULL = every rank). With
 * calls, the pooled durations are held in one array up to 32 MiB
 * (SCOPE_PROFILER_STATS_MEMORY bytes when set); a region with more calls
 * is pooled in passes over its calls through cursors (min, max and std in
 * one, then each percentile's order statistics narrowed by 65536-bucket
 * counts per pass): the same exact values in memory independent of the
 * calls. Ranks
 * without a row of the region are ignored. When the exclusive time cannot
 * be rebuilt, every other field is still filled, exclusive_ns is -1 and
 * SP_ERR_NESTING is returned with the message in err. Statuses: SP_OK,
 * SP_ERR_INVALID_ARGUMENT (region out of range), SP_ERR_NESTING,
 * SP_ERR_OUT_OF_MEMORY. */
int spi_region_stats_compute(spi_region_stats *out, const spi_profile *profile, size_t region,
                             const uint32_t *ranks, size_t rank_count, spi_error *err);

/* The same over an explicit list of rows (indices into profile->rows, one
 * region's rows). row_exclusive/row_exclusive_ok, per profile row, are
 * spi_rows_exclusive's results, or NULL to compute each row's exclusive
 * time here. Statuses as spi_region_stats_compute; a row whose exclusive
 * time is not ok gives SP_ERR_NESTING without touching err. */
int spi_region_stats_from_rows(spi_region_stats *out, const spi_profile *profile,
                               const size_t *rows, size_t row_count, const int64_t *row_exclusive,
                               const bool *row_exclusive_ok, spi_error *err);

/* Each region's rows on the selected ranks: rows[start[g] .. start[g+1])
 * are region g's, in row order. O(rows + regions). */
typedef struct spi_region_rows {
    size_t *start;  /* [name_count + 1] */
    size_t *rows;
} spi_region_rows;

/* SP_OK or SP_ERR_OUT_OF_MEMORY; free with spi_region_rows_free. */
int spi_region_rows_build(spi_region_rows *index, const spi_profile *profile,
                          const uint32_t *ranks, size_t rank_count);
void spi_region_rows_free(spi_region_rows *index);

/* Exclusive ns of every row at once (spi_row_exclusive for each), building
 * each rank's call tree at most once. ok[row] is false for the rows of a
 * rank whose calls do not nest; SP_ERR_NESTING then names the first such
 * rank in err. Both arrays have profile->row_count elements. Statuses:
 * SP_OK, SP_ERR_NESTING, SP_ERR_OUT_OF_MEMORY. */
int spi_rows_exclusive(const spi_profile *profile, int64_t *exclusive_ns, bool *ok,
                       spi_error *err);

/* spi_region_stats_compute for every region into out[0..name_count-1], in
 * O(calls log calls + rows log rows + regions): one pass groups the rows by
 * region, one call tree per rank that needs one. SP_ERR_NESTING: the
 * regions of a rank whose calls do not nest have no exclusive time, err
 * names the first; every other field is filled. */
int spi_regions_stats_compute(spi_region_stats *out, const spi_profile *profile,
                              const uint32_t *ranks, size_t rank_count, spi_error *err);

/* True when `rank` is in the selection (NULL = all ranks). */
bool spi_rank_selected(const uint32_t *ranks, size_t rank_count, uint32_t rank);

/* The durations of rows[0..row_count) in that order into out (n = their
 * calls), read through cursors (the calls may be in the file). gpu_total
 * NULL: GPU times are not wanted; else their sum (FORMAT.md 3.3) and how
 * many values it has are added to *gpu_total and *gpu_values. SP_OK or
 * an error with err filled. */
int spi_rows_durations(const spi_profile *profile, const size_t *rows, size_t row_count,
                       int64_t *out, uint64_t n, int64_t *gpu_total, uint64_t *gpu_values,
                       spi_error *err);

#endif /* SPI_STATS_H */
