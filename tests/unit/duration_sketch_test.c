/*
 * duration_sketch_test.c - the percentile sketch of analysis/duration_sketch.h
 * against exact percentiles (numpy's linear method, spi_percentile_sorted)
 * on known distributions: every estimate within SPI_SKETCH_RELATIVE_ERROR;
 * sketches merged from parts equal the sketch of the whole; a duration set
 * exact within its budget and sketched past it, its shared budget kept.
 * Registered by tests/inspect/CMakeLists.txt (label inspect).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/duration_sketch.h"
#include "analysis/stats.h"

static int failures;
static double worst;

#define CHECK(cond, ...)                                   \
    do {                                                   \
        if (!(cond)) {                                     \
            failures++;                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                  \
            fputc('\n', stderr);                           \
        }                                                  \
    } while (0)

/* xorshift64*: a fixed sequence on every platform. */
static uint64_t state = 88172645463325252ull;
static double uniform01(void) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (double)((state * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

static double relative(double got, double want) {
    if (want == 0.0) return got == 0.0 ? 0.0 : INFINITY;
    return fabs(got - want) / fabs(want);
}

/* Every percentile 0..100 in steps of 0.5 and a sample of order statistics
 * of values[0..n) within the stated bound. */
static void check_distribution(const char *name, int64_t *values, size_t n) {
    spi_sketch s;
    spi_sketch_init(&s);
    for (size_t i = 0; i < n; i++) CHECK(spi_sketch_add(&s, values[i]) == SP_OK, "add");
    qsort(values, n, sizeof *values, cmp_i64);
    double local = 0.0;
    for (double pct = 0.0; pct <= 100.0; pct += 0.5) {
        double want = spi_percentile_sorted(values, n, pct);
        double got = spi_sketch_percentile(&s, pct);
        double e = relative(got, want);
        if (e > local) local = e;
        CHECK(e <= SPI_SKETCH_RELATIVE_ERROR, "%s p%.1f: %.17g, exact %.17g (%.4f%%)", name, pct,
              got, want, 100 * e);
    }
    for (size_t k = 0; k < n; k += n / 997 + 1) {
        double e = relative(spi_sketch_value_at(&s, k), (double)values[k]);
        if (e > local) local = e;
        CHECK(e <= SPI_SKETCH_RELATIVE_ERROR, "%s value %zu: %.17g, exact %lld", name, k,
              spi_sketch_value_at(&s, k), (long long)values[k]);
    }
    CHECK(spi_sketch_value_at(&s, 0) == (double)values[0], "%s minimum", name);
    CHECK(spi_sketch_value_at(&s, n - 1) == (double)values[n - 1], "%s maximum", name);
    CHECK(spi_sketch_bytes(&s) <= 2300 * sizeof(uint64_t), "%s: %zu bytes", name,
          spi_sketch_bytes(&s));
    printf("%-12s n=%zu buckets=%zu worst relative error %.4f%%\n", name, n,
           spi_sketch_bytes(&s) / sizeof(uint64_t), 100 * local);
    if (local > worst) worst = local;
    spi_sketch_free(&s);
}

/* Sketches of 8 parts merged = the sketch of all values, bucket for bucket. */
static void check_merge(const int64_t *values, size_t n) {
    spi_sketch all, merged, part;
    spi_sketch_init(&all);
    spi_sketch_init(&merged);
    for (size_t i = 0; i < n; i++) spi_sketch_add(&all, values[i]);
    for (int p = 0; p < 8; p++) {
        spi_sketch_init(&part);
        for (size_t i = (size_t)p; i < n; i += 8) spi_sketch_add(&part, values[i]);
        CHECK(spi_sketch_merge(&merged, &part) == SP_OK, "merge");
        spi_sketch_free(&part);
    }
    CHECK(merged.count == all.count && merged.zeros == all.zeros &&
              merged.minimum == all.minimum && merged.maximum == all.maximum,
          "merged totals");
    for (int32_t b = all.offset; b < all.offset + (int32_t)all.length; b++) {
        uint64_t x = all.counts[b - all.offset];
        uint64_t y = b >= merged.offset && b < merged.offset + (int32_t)merged.length
                         ? merged.counts[b - merged.offset]
                         : 0;
        CHECK(x == y, "bucket %d: %llu vs %llu", b, (unsigned long long)x, (unsigned long long)y);
    }
    for (double pct = 0; pct <= 100; pct += 12.5)
        CHECK(spi_sketch_percentile(&all, pct) == spi_sketch_percentile(&merged, pct),
              "merged p%.1f", pct);
    spi_sketch_free(&all);
    spi_sketch_free(&merged);
}

/* Exact within the per-set budget (bit for bit the sorted percentile),
 * sketched past it; the shared total is never passed. */
static void check_durations(void) {
    spi_duration_budget budget = {.per_set = 1000, .total = 1500, .held = 0};
    spi_durations a = {0}, b = {0};
    int64_t values[1001];
    for (int i = 0; i < 1000; i++) {
        values[i] = 1 + (int64_t)(uniform01() * 1e6);
        CHECK(spi_durations_add(&a, values[i], &budget) == SP_OK, "add a");
        CHECK(budget.held <= budget.total, "held %zu", budget.held);
    }
    static const double pcts[3] = {50, 95, 99};
    double q[3];
    bool exact;
    spi_durations_percentiles(&a, pcts, 3, q, &exact);
    qsort(values, 1000, sizeof *values, cmp_i64);
    CHECK(exact, "1000 values within a budget of 1000 stay exact");
    for (int i = 0; i < 3; i++)
        CHECK(q[i] == spi_percentile_sorted(values, 1000, pcts[i]), "exact p%g", pcts[i]);
    /* a second set finds the shared total (1500) used up by a's 1000 */
    for (int i = 0; i < 800; i++) CHECK(spi_durations_add(&b, i, &budget) == SP_OK, "add b");
    CHECK(budget.held <= budget.total, "held %zu of %zu", budget.held, budget.total);
    CHECK(b.sketched && b.count == 800, "the total budget turns b into a sketch");
    /* the 1001st value passes the per-set budget */
    values[1000] = 5;
    CHECK(spi_durations_add(&a, 5, &budget) == SP_OK, "add past the budget");
    spi_durations_percentiles(&a, pcts, 3, q, &exact);
    qsort(values, 1001, sizeof *values, cmp_i64);
    CHECK(!exact && a.count == 1001, "sketched past the budget");
    for (int i = 0; i < 3; i++)
        CHECK(relative(q[i], spi_percentile_sorted(values, 1001, pcts[i])) <=
                  SPI_SKETCH_RELATIVE_ERROR,
              "sketched p%g", pcts[i]);
    spi_durations_free(&a, &budget);
    spi_durations_free(&b, &budget);
    CHECK(budget.held == 0, "every value given back (%zu)", budget.held);
}

/* The sketch's bucket of a value is ceil(log(v) / log(gamma)) as libm
 * computes it (the definition in duration_sketch.h); duration_sketch.c
 * estimates the quotient without libm and asks libm only near a bucket's
 * edge. The estimate must never pick another bucket: every value up to
 * 2^20, values at and around every bucket's edge, and random magnitudes
 * over the whole int64 range. */
static int32_t bucket_by_definition(int64_t v) {
    const double a = 0.0099, g = (1.0 + a) / (1.0 - a);
    return (int32_t)ceil(log((double)v) / log(g));
}

static void check_buckets(void) {
    long wrong = 0, checked = 0;
    int64_t first_wrong = 0;
#define BUCKET_CHECK(value)                                                   \
    do {                                                                      \
        int64_t v_ = (value);                                                 \
        if (v_ <= 0) break;                                                   \
        checked++;                                                            \
        if (spi_sketch_bucket(v_) != bucket_by_definition(v_) && !wrong++)    \
            first_wrong = v_;                                                 \
    } while (0)
    for (int64_t v = 1; v <= (1 << 20); v++) BUCKET_CHECK(v);
    const double g = (1.0 + 0.0099) / (1.0 - 0.0099);
    for (int b = 1; b < 2210; b++) {
        double edge = pow(g, (double)b);
        if (edge >= 9.2e18) break;
        int64_t e = (int64_t)edge;
        /* the integers around the edge, and the doubles next to it */
        for (int64_t d = -4; d <= 4; d++) BUCKET_CHECK(e + d);
        double x = edge;
        for (int k = 0; k < 4; k++) {
            x = nextafter(x, INFINITY);
            BUCKET_CHECK((int64_t)x);
        }
    }
    for (int i = 0; i < 2000000; i++) {
        double magnitude = 63.0 * uniform01();
        BUCKET_CHECK((int64_t)pow(2.0, magnitude));
    }
#undef BUCKET_CHECK
    CHECK(wrong == 0, "%ld of %ld values in another bucket than the definition's, first %lld",
          wrong, checked, (long long)first_wrong);
    if (!wrong) printf("buckets: %ld values, all as defined\n", checked);
}

int main(void) {
    enum { N = 200000 };
    int64_t *v = malloc(N * sizeof *v);
    if (!v) return 1;
    for (size_t i = 0; i < N; i++) v[i] = 1 + (int64_t)(uniform01() * 1e6);
    check_merge(v, N);
    check_distribution("uniform", v, N);
    for (size_t i = 0; i < N; i++) v[i] = (int64_t)(-log(1.0 - uniform01()) * 5e4);
    check_distribution("exponential", v, N);
    for (size_t i = 0; i < N; i++) {
        /* lognormal: Box-Muller, spanning ns to seconds */
        double z = sqrt(-2 * log(1.0 - uniform01())) * cos(6.283185307179586 * uniform01());
        v[i] = (int64_t)exp(12.0 + 3.0 * z);
    }
    check_merge(v, N);
    check_distribution("lognormal", v, N);
    for (size_t i = 0; i < N; i++) v[i] = i % 3 == 0 ? 0 : 1 + (int64_t)(uniform01() * 20);
    check_distribution("small+zeros", v, N);
    for (size_t i = 0; i < N; i++) v[i] = 123456789;
    check_distribution("constant", v, N);
    for (size_t i = 0; i < N; i++)
        v[i] = (int64_t)(uniform01() * 9.2e18) + (i % 2 ? 0 : (int64_t)(uniform01() * 1000));
    check_distribution("int64 range", v, N);
    for (size_t i = 0; i < N; i++) v[i] = i < N / 2 ? 1000 : 1000000; /* two modes */
    check_distribution("bimodal", v, N);
    check_durations();
    check_buckets();
    free(v);
    printf("worst relative error %.4f%% (bound %.2f%%)\n", 100 * worst,
           100 * SPI_SKETCH_RELATIVE_ERROR);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
