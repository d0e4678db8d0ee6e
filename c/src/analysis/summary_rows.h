/*
 * summary_rows.h - the rows of the summary table (FORMAT.md 7.5), pooled
 * over ranks, before they get their percentages, order and text.
 *
 * A row is one collapsed call path (or, flat, one region) with its values
 * in ns, counts and percent, one slot per value; a value the data cannot
 * give is absent (its bit clear), never invented. summary_rows.c builds
 * the call-tree rows from a profile's calls or an aggregate file's call
 * paths, summary_flat.c the per-region rows; summary_table.c orders them
 * and summary.c prints them.
 */
#ifndef SPI_SUMMARY_ROWS_H
#define SPI_SUMMARY_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"
#include "analysis/summary.h"

/* The values of a row, one slot each: spi_summary_row.v[slot], present
 * when SPI_SV_BIT(slot) is set in spi_summary_row.has. Each per-rank
 * group is mean, min, max in this order (summary_rows.c relies on it). */
typedef enum spi_summary_value {
    SPI_SV_CALLS, SPI_SV_TOTAL, SPI_SV_EXCL, SPI_SV_AVG, SPI_SV_MIN, SPI_SV_MAX, SPI_SV_STD,
    SPI_SV_P50, SPI_SV_P95, SPI_SV_P99, SPI_SV_FIRST, SPI_SV_LAST, SPI_SV_IMB, SPI_SV_RANKS,
    SPI_SV_COVERAGE, SPI_SV_PERCENT, SPI_SV_PARENT_PERCENT,
    /* per-rank inclusive totals */
    SPI_SV_RANK_MEAN, SPI_SV_RANK_MIN, SPI_SV_RANK_MAX,
    /* per-rank exclusive ("(own)") */
    SPI_SV_XRANK_MEAN, SPI_SV_XRANK_MIN, SPI_SV_XRANK_MAX, SPI_SV_XIMB,
    /* threads that ran the row (summed over ranks), and the time of its
     * calls that ran beside their parent call on another thread (OpenMP
     * workers): in the row's total, not in its parent's */
    SPI_SV_THREADS, SPI_SV_OTHER_THREADS,
    SPI_SV_COUNT
} spi_summary_value;

/* Bit of a value slot in spi_summary_row.has. */
#define SPI_SV_BIT(slot) (1u << (slot))

typedef struct spi_summary_row {
    const char *name;   /* borrowed from the profile, or "(own)" */
    long parent;        /* index of the parent row, -1 for a root */
    int depth;
    bool recursive;
    bool own;
    bool has_children;
    int64_t start;      /* earliest start, INT64_MAX when unknown */
    double v[SPI_SV_COUNT];
    unsigned has;       /* bit per SPI_SV_* slot */
} spi_summary_row;

/*
 * The rows of `profile` on the ranks options->ranks selects (NULL = every
 * rank), for the regions with visible[region] true (visible has
 * profile->name_count elements; options is not NULL). They are the call
 * tree pooled by collapsed call path, followed by a flat row for each
 * region without a tree row; all rows are flat when options->flat is set,
 * when the data has neither calls nor call paths, or when a rank's calls
 * do not nest. SPI_SV_PERCENT and SPI_SV_PARENT_PERCENT are left for the
 * whole table (summary_table.c).
 *
 * On SP_OK, *rows (free with spi_free) holds *row_count rows, each parent
 * before its children; *job_ranks is the number of ranks the table speaks
 * of (the job's, or the distinct ranks asked for); *nesting is SP_OK, or
 * SP_ERR_NESTING when a rank's calls do not nest (the rows fell back to
 * flat, or lack exclusive time) with err naming the regions. Otherwise
 * SP_ERR_OUT_OF_MEMORY or an error of building a rank's call tree, err
 * filled and *rows NULL.
 * Thread-safety: only reads the profile and uses no global state, so
 * calls on one profile may run concurrently.
 */
int spi_summary_rows_build(const spi_profile *profile, const spi_summary_options *options,
                           const bool *visible, spi_summary_row **rows, size_t *row_count,
                           size_t *job_ranks, int *nesting, spi_error *err);

/*
 * summary_flat.c: one flat row per region that has rows on the selected
 * ranks (ranks NULL = every rank), is visible (visible[region]) and has no
 * tree row (in_tree[region] false; in_tree NULL = none has one), in region
 * order, with the region statistics of stats.c. On SP_OK *flat (free with
 * spi_free) holds *flat_count rows. When a rank's calls do not nest the
 * rows lack exclusive time: SP_OK still, and if *nesting was SP_OK it
 * becomes SP_ERR_NESTING with err naming the regions. Otherwise
 * SP_ERR_OUT_OF_MEMORY or an error of reading the calls, err filled and
 * *flat NULL.
 * Thread-safety: only reads the profile and uses no global state, so
 * calls on one profile may run concurrently.
 */
int spi_summary_flat_rows(spi_summary_row **flat, size_t *flat_count, const spi_profile *profile,
                          const uint32_t *ranks, size_t rank_count, const bool *visible,
                          const bool *in_tree, int *nesting, spi_error *err);

#endif /* SPI_SUMMARY_ROWS_H */
