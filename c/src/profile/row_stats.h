/*
 * row_stats.h - the summary statistics of one row of calls (FORMAT.md 2.1).
 *
 * spi_stats is the in-memory form of the file's summary_statistics compound
 * and mirrors its 88-byte layout exactly, so the writer and the reader move
 * it with no conversion (format/schema.c builds the HDF5 type from it and
 * asserts the layout). The recorder, the reader and merge all compute it
 * with the one function below, so a row's statistics never depend on which
 * path produced the row.
 */
#ifndef SPI_ROW_STATS_H
#define SPI_ROW_STATS_H

#include <stdbool.h>
#include <stdint.h>

/* summary_statistics (FORMAT.md 2.1): 11 fields, packed, 88 bytes. The
 * struct mirrors the file layout exactly (checked by a static assertion). */
typedef struct spi_stats {
    int64_t total;
    int64_t minimum;
    int64_t maximum;
    int64_t first;
    int64_t last;
    int64_t start_minimum;
    int64_t end_maximum;
    uint64_t gpu_count;
    int64_t gpu_total;
    double mean;
    double m2;
} spi_stats;

/* Statistics of one row of durations in stored order (FORMAT.md 2.1), the
 * mean and then the squared deviations like the reference writer. starts
 * may be NULL only when count is 0; gpu may be NULL; ends, when not NULL,
 * receives start + duration of every call (fused into the same pass).
 * Returns true when the values are small enough that no int64 overflow was
 * possible; false means the caller must check the row exactly (only
 * damaged data gets there). */
bool spi_stats_compute(spi_stats *stats, const int64_t *starts, const int64_t *durations,
                       const int64_t *gpu, uint64_t count, int64_t *ends);

/* Whether statistics read from a file can be trusted as numbers (FORMAT.md
 * 2.1): mean finite, m2 finite and not negative (a sum of squares). A
 * reader refuses a row for which this is false: +inf or NaN would be
 * printed as "inf"/"nan", which is not JSON, and a negative m2 has no
 * square root. *why (may be NULL) names the field at fault. Pure. */
bool spi_stats_stored_valid(const spi_stats *stats, const char **why);

/* The same statistics over a row delivered in slices (a bounded trace's
 * streaming finalize), bit for bit what spi_stats_compute gives for the
 * whole row: the count and the total of the durations (wrapping uint64
 * sum, any order) are known before the first call, so the mean is too and
 * one pass over the calls in stored order suffices. */
typedef struct spi_stats_stream {
    spi_stats stats;
    uint64_t count;           /* calls the row will have */
    uint64_t seen;            /* calls whose squared deviations were added */
    uint64_t ordered;         /* calls whose order statistics were added */
    uint64_t lanes_end;       /* calls before here go to 4 lanes, then lane 0 */
    double partial[4];
} spi_stats_stream;

void spi_stats_stream_begin(spi_stats_stream *s, uint64_t count, uint64_t total);
void spi_stats_stream_add(spi_stats_stream *s, const int64_t *starts, const int64_t *durations,
                          uint64_t n);
/* The two halves of spi_stats_stream_add, for a reader that passes over
 * the row twice anyway (profile/profile_build.c: the first pass finds the
 * total): _order takes the order statistics (minimum, maximum, first,
 * last, first start, last end), which need no mean, and may run before
 * the total is known (begin with total 0, then _set_total); _squares
 * takes the squared deviations from the mean and reads the durations
 * alone, so the second pass need not read the starts. Each half over all
 * the row's calls in stored order gives, bit for bit, what
 * spi_stats_stream_add gives. Pure; one stream per thread. */
void spi_stats_stream_add_order(spi_stats_stream *s, const int64_t *starts,
                                const int64_t *durations, uint64_t n);
void spi_stats_stream_set_total(spi_stats_stream *s, uint64_t total);
void spi_stats_stream_add_squares(spi_stats_stream *s, const int64_t *durations, uint64_t n);
/* The row's statistics; call after its `count` calls were added. */
void spi_stats_stream_end(spi_stats_stream *s, spi_stats *stats);

#endif /* SPI_ROW_STATS_H */
