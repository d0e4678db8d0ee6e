/*
 * duration_sketch.h - percentiles of many durations in memory that does
 * not grow with their number: exact while few, then a log-bucketed sketch.
 *
 * The summary table shows p50/p95/p99 per call path. Keeping every
 * duration of a path (what the call tree did) costs 8 bytes per call; a
 * path with 25M calls alone is 200 MiB. So a duration set keeps its values
 * exactly up to a budget, which keeps every small file's percentiles bit
 * for bit numpy's, and past it folds them into a sketch:
 *
 * The sketch (the DDSketch idea): a value v >= 1 ns goes to bucket
 * i = ceil(log(v) / log(gamma)), gamma = (1 + a) / (1 - a) with a = 0.0099,
 * and a bucket stands for 2 gamma^i / (gamma + 1), which is within a of
 * every value of the bucket. Zero durations are counted apart, exactly.
 * So any order statistic it returns has a RELATIVE ERROR OF AT MOST 1%
 * (SPI_SKETCH_RELATIVE_ERROR; a = 0.0099 leaves room for the rounding of
 * log), and so does numpy's linear percentile built from two of them (a
 * convex combination of two values each within 1%). The smallest and the
 * largest value are kept exactly (p0 and p100 are exact) and every
 * estimate is clamped to them. Sketches merge by adding bucket
 * counts, so pooling the sketches of several ranks is exact: the merged
 * sketch is the one all values would have built.
 *
 * Size: one 8-byte count per bucket between the smallest and the largest
 * bucket seen; int64 ns span at most 2,206 buckets (17 KiB), a path whose
 * calls take 100 ns .. 1 s about 820 (6.5 KiB).
 */
#ifndef SPI_DURATION_SKETCH_H
#define SPI_DURATION_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The stated bound on the relative error of a sketched order statistic or
 * percentile (exact values have none). */
#define SPI_SKETCH_RELATIVE_ERROR 0.01

/* Durations a set keeps exactly before it becomes a sketch, unless the
 * caller's budget says otherwise. */
#define SPI_DURATIONS_EXACT_DEFAULT 65536u

typedef struct spi_sketch {
    uint64_t count;     /* values added, zeros included */
    uint64_t zeros;     /* values of 0 */
    int64_t minimum, maximum;
    int32_t offset;     /* bucket index of counts[0] */
    uint32_t length;    /* buckets held */
    uint64_t *counts;
} spi_sketch;

/* An empty sketch (no allocation). Thread-safety: none needed. */
void spi_sketch_init(spi_sketch *s);

/* Add `value` (>= 0; a negative value counts as 0). SP_OK or
 * SP_ERR_OUT_OF_MEMORY (the sketch is unchanged). Not thread-safe on one
 * sketch. */
int spi_sketch_add(spi_sketch *s, int64_t value);

/* Add every value of `from` to `into` (counts summed: the result is the
 * sketch of both value sets). SP_OK or SP_ERR_OUT_OF_MEMORY (`into`
 * unchanged). `from` is only read. */
int spi_sketch_merge(spi_sketch *into, const spi_sketch *from);

/* The estimate of the rank-th smallest value (0-based, < count), within
 * SPI_SKETCH_RELATIVE_ERROR of the true one; 0 when empty. Read-only. */
double spi_sketch_value_at(const spi_sketch *s, uint64_t rank);

/* numpy.percentile(values, pct, method="linear") estimated from the
 * sketch (spi_percentile_sorted's interpolation over two estimated order
 * statistics), within SPI_SKETCH_RELATIVE_ERROR; 0 when empty. */
double spi_sketch_percentile(const spi_sketch *s, double pct);

/* The bucket of a value > 0: ceil(log(value) / log(gamma)) exactly as
 * libm computes it (0 for a value <= 0). Exposed for the unit test that
 * compares it with that formula. Pure, thread-safe. */
int32_t spi_sketch_bucket(int64_t value);

/* Bytes the sketch holds. */
size_t spi_sketch_bytes(const spi_sketch *s);

/* Release the buckets and make the sketch empty. */
void spi_sketch_free(spi_sketch *s);

/* ---- a set of durations: exact within a budget, then a sketch ---------- */

/* How many values the sets of one computation keep exactly: `per_set` for
 * each, `total` for all together (so thousands of paths cannot hold
 * `per_set` values each), and what they hold now (`held`, in values of
 * capacity). One budget is shared by the sets of one computation only. */
typedef struct spi_duration_budget {
    size_t per_set;
    size_t total;
    size_t held;
} spi_duration_budget;

typedef struct spi_durations {
    uint64_t count;
    int64_t *values;    /* exact values in the order added, while !sketched */
    size_t capacity;
    bool sketched;
    spi_sketch sketch;
} spi_durations;

/* Add `value` (>= 0). A set at its budget (or one whose growth would pass
 * the shared total) turns into a sketch first and gives its values back.
 * SP_OK or SP_ERR_OUT_OF_MEMORY (the value was not added). Not
 * thread-safe on one budget. */
int spi_durations_add(spi_durations *d, int64_t value, spi_duration_budget *budget);

/* numpy's linear percentiles pcts[0..n-1] of the set into out: exact
 * (spi_percentile_sorted) while the set kept every value, which it sorts
 * in place (so call after the values' order is no longer needed), else
 * from the sketch. *exact says which. An empty set gives 0s. */
void spi_durations_percentiles(spi_durations *d, const double *pcts, size_t n, double *out,
                               bool *exact);

/* Release the set's memory (returned to the budget, which may be NULL). */
void spi_durations_free(spi_durations *d, spi_duration_budget *budget);

#endif /* SPI_DURATION_SKETCH_H */
