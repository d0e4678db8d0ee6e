/*
 * sat_math.h - sums of stored int64 values that saturate instead of wrap.
 *
 * Totals and counts read from a file are summed over calls, rows and
 * ranks. A real run is ~290 years of nanoseconds from the int64 limit; a
 * damaged or hostile file is not, and a wrapped sum (undefined behaviour in
 * C) would turn a huge total negative. These clamp at INT64_MAX/INT64_MIN.
 * Pure functions: thread-safe.
 */
#ifndef SPI_SAT_MATH_H
#define SPI_SAT_MATH_H

#include <stdint.h>

/* a + b, clamped to [INT64_MIN, INT64_MAX]. */
static inline int64_t spi_sat_add_i64(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

#endif /* SPI_SAT_MATH_H */
