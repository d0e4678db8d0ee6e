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

/* Statistics of `region` pooled over `ranks` (NULL = every rank). Ranks
 * without a row of the region are ignored. When the exclusive time cannot
 * be rebuilt, every other field is still filled, exclusive_ns is -1 and
 * SP_ERR_NESTING is returned with the message in err. Statuses: SP_OK,
 * SP_ERR_INVALID_ARGUMENT (region out of range), SP_ERR_NESTING,
 * SP_ERR_OUT_OF_MEMORY. */
int spi_region_stats_compute(spi_region_stats *out, const spi_profile *profile, size_t region,
                             const uint32_t *ranks, size_t rank_count, spi_error *err);

/* True when `rank` is in the selection (NULL = all ranks). */
bool spi_rank_selected(const uint32_t *ranks, size_t rank_count, uint32_t rank);

#endif /* SPI_STATS_H */
