/*
 * summary_table.h - the summary table (FORMAT.md 7.5) as data, before any
 * text: its rows with their percentages, the lines to print in display
 * order ("(own)" lines included), and the columns to show.
 *
 * summary_table.c builds it from spi_summary_options (filters, ranks, sort
 * key, columns) over the rows of summary_rows.h; summary.c renders it.
 */
#ifndef SPI_SUMMARY_TABLE_H
#define SPI_SUMMARY_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"
#include "profile/profile.h"
#include "analysis/summary.h"
#include "analysis/summary_rows.h"

/* Deepest tree level shown; deeper rows are only counted (too_deep). */
#define SPI_SUMMARY_MAX_DEPTH 64

/* Most columns a table has. */
#define SPI_SUMMARY_MAX_COLUMNS 32

/* One format per column: FMT_TOTAL sums of time (s, %.6f), FMT_SCI one
 * call's time (s, %.3e), FMT_PCT %.1f%%, FMT_IMB %.2f, FMT_INT an exact
 * count. */
typedef enum spi_summary_format {
    SPI_SUMMARY_FMT_TOTAL, SPI_SUMMARY_FMT_SCI, SPI_SUMMARY_FMT_PCT, SPI_SUMMARY_FMT_IMB,
    SPI_SUMMARY_FMT_INT
} spi_summary_format;

typedef struct spi_summary_column {
    const char *name;          /* as spi_summary_options.columns names it */
    const char *header;
    int slot;                  /* SPI_SV_*, -1 for the region column */
    spi_summary_format fmt;
    bool on_own_row;           /* shown on "(own)" rows */
} spi_summary_column;

/* Every column, in the order of spi_summary_column_names; index 0 is the
 * region column. spi_summary_table.cols index into it. */
extern const spi_summary_column spi_summary_columns[];

typedef struct spi_summary_table {
    spi_summary_row *rows;     /* [row_count], values and percentages filled */
    size_t row_count;
    size_t *lines;             /* [line_count] what to print, in order: a row
                                  index, or row_count + i for the "(own)" line
                                  of row i (see spi_summary_table_line) */
    size_t line_count;
    size_t too_deep;           /* rows deeper than SPI_SUMMARY_MAX_DEPTH levels,
                                  left out of lines */
    int cols[SPI_SUMMARY_MAX_COLUMNS]; /* the columns shown, region first */
    size_t col_count;
    bool calls_inline;         /* no calls column: the region cell shows them */
    double session_total;      /* ns of the session row, 0 without one */
    size_t job_ranks;          /* the ranks the table speaks of */
    bool multi_rank;           /* job_ranks > 1: per-rank spread by default */
    bool threaded;             /* a row ran on more threads than ranks */
    bool other_threads;        /* a row's calls ran beside their parent on
                                  another thread (OpenMP workers) */
    int nesting;               /* SP_OK, or SP_ERR_NESTING: a rank's calls do
                                  not nest, the rows fell back to flat (or lack
                                  exclusive time) and err named the regions */
} spi_summary_table;

/*
 * Build the summary table of `profile` into *table (overwritten). options
 * NULL means the defaults. profile is not changed; nothing is printed.
 * Statuses: SP_OK (also when table->nesting is SP_ERR_NESTING);
 * SP_ERR_INVALID_ARGUMENT (profile NULL, a filter count without its array,
 * a bad regex, sort key or column; err says which); SP_ERR_OUT_OF_MEMORY;
 * an error of building a rank's call tree. On an error *table holds
 * nothing (spi_summary_table_free on it is harmless).
 * Thread-safety: only reads the profile and uses no global state, so
 * calls on one profile may run concurrently.
 */
int spi_summary_table_build(spi_summary_table *table, const spi_profile *profile,
                            const spi_summary_options *options, spi_error *err);

/*
 * The row to print as line `line` (< table->line_count): a row of the
 * table, or for an "(own)" line the time its owner spent outside its
 * children, written into *own (and returned). Either way the row's depth
 * is its depth in the printed tree. Cannot fail.
 * Thread-safety: reads the table only.
 */
const spi_summary_row *spi_summary_table_line(const spi_summary_table *table, size_t line,
                                              spi_summary_row *own);

/* Release what spi_summary_table_build allocated; the table is left empty.
 * Thread-safety: not concurrently with other use of the table. */
void spi_summary_table_free(spi_summary_table *table);

#endif /* SPI_SUMMARY_TABLE_H */
