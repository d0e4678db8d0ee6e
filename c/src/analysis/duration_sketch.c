/*
 * duration_sketch.c - exact-then-sketched percentiles (duration_sketch.h).
 */
#include "analysis/duration_sketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "analysis/stats.h"

/* a = 0.0099 < 1%: the margin absorbs the rounding of log() at a bucket's
 * edge, where a value can land one bucket off. */
#define SKETCH_ALPHA 0.0099

static double gamma_value(void) { return (1.0 + SKETCH_ALPHA) / (1.0 - SKETCH_ALPHA); }

/* Computed per value (no cached global: any thread may add). */
static int32_t bucket_of(int64_t value) {
    return (int32_t)ceil(log((double)value) / log(gamma_value()));
}

static double bucket_value(int32_t index) {
    double g = gamma_value();
    return 2.0 * pow(g, (double)index) / (g + 1.0);
}

void spi_sketch_init(spi_sketch *s) {
    memset(s, 0, sizeof *s);
    s->minimum = INT64_MAX;
    s->maximum = INT64_MIN;
}

void spi_sketch_free(spi_sketch *s) {
    spi_free(s->counts);
    spi_sketch_init(s);
}

size_t spi_sketch_bytes(const spi_sketch *s) { return (size_t)s->length * sizeof *s->counts; }

/* Make buckets [lo, hi] present (zeroed where new). */
static int cover(spi_sketch *s, int32_t lo, int32_t hi) {
    if (s->length && lo >= s->offset && hi < s->offset + (int32_t)s->length) return SP_OK;
    int32_t new_lo = s->length && s->offset < lo ? s->offset : lo;
    int32_t new_hi = s->length && s->offset + (int32_t)s->length - 1 > hi
                         ? s->offset + (int32_t)s->length - 1
                         : hi;
    size_t length = (size_t)(new_hi - new_lo) + 1;
    uint64_t *counts = spi_calloc(length, sizeof *counts);
    if (!counts) return SP_ERR_OUT_OF_MEMORY;
    if (s->length)
        memcpy(counts + (s->offset - new_lo), s->counts, s->length * sizeof *counts);
    spi_free(s->counts);
    s->counts = counts;
    s->offset = new_lo;
    s->length = (uint32_t)length;
    return SP_OK;
}

int spi_sketch_add(spi_sketch *s, int64_t value) {
    if (value < 0) value = 0;
    if (value > 0) {
        int32_t b = bucket_of(value);
        if (cover(s, b, b) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
        s->counts[b - s->offset]++;
    } else {
        s->zeros++;
    }
    s->count++;
    if (value < s->minimum) s->minimum = value;
    if (value > s->maximum) s->maximum = value;
    return SP_OK;
}

int spi_sketch_merge(spi_sketch *into, const spi_sketch *from) {
    if (from->length &&
        cover(into, from->offset, from->offset + (int32_t)from->length - 1) != SP_OK)
        return SP_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < from->length; i++)
        into->counts[from->offset - into->offset + (int32_t)i] += from->counts[i];
    into->count += from->count;
    into->zeros += from->zeros;
    if (from->minimum < into->minimum) into->minimum = from->minimum;
    if (from->maximum > into->maximum) into->maximum = from->maximum;
    return SP_OK;
}

double spi_sketch_value_at(const spi_sketch *s, uint64_t rank) {
    if (s->count == 0) return 0.0;
    if (rank >= s->count) rank = s->count - 1;
    /* Both ends are known exactly, as numpy's percentiles are at 0 and 100. */
    if (rank == 0) return (double)s->minimum;
    if (rank == s->count - 1) return (double)s->maximum;
    double v = 0.0;
    if (rank >= s->zeros) {
        uint64_t seen = s->zeros;
        uint32_t i = 0;
        for (; i + 1 < s->length && seen + s->counts[i] <= rank; i++) seen += s->counts[i];
        v = bucket_value(s->offset + (int32_t)i);
    }
    /* The true value lies within [minimum, maximum]: clamping only moves
     * the estimate towards it. */
    if (v < (double)s->minimum) v = (double)s->minimum;
    if (v > (double)s->maximum) v = (double)s->maximum;
    return v;
}

double spi_sketch_percentile(const spi_sketch *s, double pct) {
    if (s->count == 0) return 0.0;
    /* spi_percentile_sorted's interpolation (numpy's "linear"), with the
     * two neighbouring order statistics estimated. */
    uint64_t n = s->count;
    double virt = (double)(n - 1) * (pct / 100.0);
    double lo_d = floor(virt);
    if (lo_d < 0) lo_d = 0;
    uint64_t lo = (uint64_t)lo_d;
    if (lo > n - 1) lo = n - 1;
    uint64_t hi = lo + 1 < n ? lo + 1 : n - 1;
    double t = virt - lo_d;
    double a = spi_sketch_value_at(s, lo), b = lo == hi ? a : spi_sketch_value_at(s, hi);
    double diff = b - a;
    return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

/* ---- exact within a budget, then a sketch -------------------------------- */

static void give_back(spi_durations *d, spi_duration_budget *budget) {
    if (budget) budget->held -= d->capacity < budget->held ? d->capacity : budget->held;
    spi_free(d->values);
    d->values = NULL;
    d->capacity = 0;
}

/* The exact values into a sketch; the values go back to the budget. */
static int to_sketch(spi_durations *d, spi_duration_budget *budget) {
    spi_sketch s;
    spi_sketch_init(&s);
    for (uint64_t i = 0; i < d->count; i++)
        if (spi_sketch_add(&s, d->values[i]) != SP_OK) {
            spi_sketch_free(&s);
            return SP_ERR_OUT_OF_MEMORY;
        }
    give_back(d, budget);
    d->sketch = s;
    d->sketched = true;
    return SP_OK;
}

int spi_durations_add(spi_durations *d, int64_t value, spi_duration_budget *budget) {
    if (value < 0) value = 0;
    if (!d->sketched && d->count == d->capacity) {
        size_t per_set = budget && budget->per_set ? budget->per_set : SPI_DURATIONS_EXACT_DEFAULT;
        size_t capacity = d->capacity ? 2 * d->capacity : 16;
        if (capacity > per_set) capacity = per_set;
        size_t growth = capacity - d->capacity;
        bool fits = capacity > d->capacity &&
                    (!budget || !budget->total || budget->held + growth <= budget->total);
        if (!fits) {
            if (to_sketch(d, budget) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
        } else {
            int64_t *values = spi_reallocarray(d->values, capacity, sizeof *values);
            if (!values) return SP_ERR_OUT_OF_MEMORY;
            d->values = values;
            d->capacity = capacity;
            if (budget) budget->held += growth;
        }
    }
    if (d->sketched) {
        if (spi_sketch_add(&d->sketch, value) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    } else {
        d->values[d->count] = value;
    }
    d->count++;
    return SP_OK;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

void spi_durations_percentiles(spi_durations *d, const double *pcts, size_t n, double *out,
                               bool *exact) {
    *exact = !d->sketched;
    if (!d->sketched && d->count) qsort(d->values, (size_t)d->count, sizeof *d->values, cmp_i64);
    for (size_t i = 0; i < n; i++) {
        if (d->count == 0) out[i] = 0.0;
        else if (d->sketched) out[i] = spi_sketch_percentile(&d->sketch, pcts[i]);
        else out[i] = spi_percentile_sorted(d->values, (size_t)d->count, pcts[i]);
    }
}

void spi_durations_free(spi_durations *d, spi_duration_budget *budget) {
    give_back(d, budget);
    spi_sketch_free(&d->sketch);
    memset(d, 0, sizeof *d);
}
