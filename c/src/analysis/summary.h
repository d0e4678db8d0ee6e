/*
 * summary.h - the region summary table (FORMAT.md 7.5): a call tree pooled
 * over ranks by collapsed call path, with "(own)" rows, rendered as a box
 * table. Used by sp_finalize (the end-of-run report) and, through the
 * public sp_summary_print, by scope-inspect.
 */
#ifndef SPI_SUMMARY_H
#define SPI_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/error.h"
#include "profile/profile.h"

typedef enum spi_summary_style {
    SPI_SUMMARY_STYLE_AUTO = 0,    /* box drawing on a UTF-8 terminal, else ASCII */
    SPI_SUMMARY_STYLE_ASCII = 1,
    SPI_SUMMARY_STYLE_UNICODE = 2
} spi_summary_style;

typedef struct spi_summary_options {
    int style;                     /* spi_summary_style */
    bool flat;                     /* one row per region, no call tree */
    bool percent_exclusive;        /* % session from exclusive time, not coverage */
    const char *sort;              /* NULL or "start" (default), "total", "calls",
                                      "avg", "min", "max", "first", "last", "std",
                                      "p50", "p95", "p99", "imbalance", "name" */
    const char *columns;           /* comma-separated column names, NULL = default */
    const char *const *include;    /* POSIX extended regexes, anchored at the start */
    size_t include_count;
    const char *const *exclude;
    size_t exclude_count;
    const uint32_t *ranks;         /* NULL = every rank */
    size_t rank_count;
    const char *title;             /* line printed above the table, NULL = none */
} spi_summary_options;

/* The column names spi_summary_options.columns accepts, comma-separated
 * (for help texts). */
extern const char spi_summary_column_names[];

/*
 * Print the summary table of `profile` to `out`. options may be NULL
 * (defaults). Only `out` is written to.
 * Statuses: SP_OK; SP_ERR_INVALID_ARGUMENT (bad regex, sort key or column;
 * nothing printed; err says which); SP_ERR_NESTING (a rank's calls do not
 * nest: the table WAS printed, as flat per-region rows, and err names the
 * regions); SP_ERR_OUT_OF_MEMORY; SP_ERR_OUTPUT (writing to out failed).
 */
int spi_summary_print(const spi_profile *profile, FILE *out, const spi_summary_options *options,
                      spi_error *err);

#endif /* SPI_SUMMARY_H */
