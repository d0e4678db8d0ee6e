/*
 * duration_sketch.c - exact-then-sketched percentiles (duration_sketch.h).
 */
#include "analysis/duration_sketch.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "analysis/stats.h"

/* a = 0.0099 < 1%: the margin absorbs the rounding of log() at a bucket's
 * edge, where a value can land one bucket off. */
#define SKETCH_ALPHA 0.0099

static double gamma_value(void) { return (1.0 + SKETCH_ALPHA) / (1.0 - SKETCH_ALPHA); }

/* The definition of a value's bucket (no cached global: any thread may
 * add). */
static int32_t bucket_of_exact(int64_t value) {
    return (int32_t)ceil(log((double)value) / log(gamma_value()));
}

/* log(1 + i / 128), i = 0..127 (libm's, printed to 17 digits). */
static const double LOG_STEP[128] = {
    0.0, 0.007782140442054949, 0.015504186535965254,
    0.02316705928153438, 0.030771658666753687, 0.0383188643021366,
    0.0458095360312942, 0.053244514518812285, 0.06062462181643484,
    0.06795066190850775, 0.07522342123758753, 0.08244366921107459,
    0.08961215868968714, 0.09672962645855111, 0.10379679368164356,
    0.11081436634029011, 0.11778303565638346, 0.12470347850095724,
    0.13157635778871926, 0.13840232285911913, 0.1451820098444979,
    0.15191604202584197, 0.15860503017663857, 0.16524957289530717,
    0.17185025692665923, 0.1784076574728183, 0.184922338494012,
    0.19139485299962947, 0.19782574332991987, 0.2042155414286909,
    0.21056476910734964, 0.21687393830061436, 0.22314355131420976,
    0.22937410106484582, 0.2355660713127669, 0.24171993688714516,
    0.24783616390458127, 0.25391520998096345, 0.25995752443692605,
    0.26596354849713794, 0.27193371548364176, 0.2778684510034563,
    0.2837681731306446, 0.28963329258304266, 0.2954642128938359,
    0.3012613305781618, 0.3070250352949119, 0.3127557100038969,
    0.3184537311185346, 0.324119468654212, 0.329753286372468,
    0.3353555419211378, 0.3409265869705932, 0.34646676734620857,
    0.3519764231571782, 0.3574558889218038, 0.3629054936893685,
    0.3683255611587076, 0.37371640979358406, 0.37907835293496944,
    0.38441169891033206, 0.3897167511400252, 0.394993808240869,
    0.4002431641270127, 0.4054651081081644, 0.4106599249852684,
    0.415827895143711, 0.42096929464412963, 0.4260843953109001,
    0.4311734648183713, 0.43623676677491807, 0.4412745608048752,
    0.44628710262841953, 0.45127464413945856, 0.4562374334815876,
    0.46117571512217015, 0.46608972992459924, 0.470979715218791,
    0.4758459048699639, 0.4806885293457519, 0.4855078157817008,
    0.4903039880451938, 0.4950772667978515, 0.4998278695564493,
    0.5045560107523953, 0.5092619017898079, 0.5139457511022343,
    0.5186077642080457, 0.5232481437645479, 0.5278670896208424,
    0.5324647988694718, 0.5370414658968836, 0.5415972824327444,
    0.5461324375981357, 0.5506471179526623, 0.5551415075405016,
    0.5596157879354227, 0.564070138284803, 0.5685047353526688,
    0.5729197535617855, 0.5773153650348236, 0.5816917396346225,
    0.5860490450035782, 0.5903874466021763, 0.5947071077466928,
    0.5990081896460834, 0.6032908514380843, 0.6075552502245418,
    0.6118015411059929, 0.616029877215514, 0.6202404097518576,
    0.6244332880118935, 0.6286086594223741, 0.6327666695710378,
    0.6369074622370692, 0.6410311794209312, 0.6451379613735847,
    0.6492279466251099, 0.6533012720127457, 0.65735807270836,
    0.661398482245365, 0.6654226325450905, 0.6694306539426292,
    0.6734226752121667, 0.6773988235918061, 0.6813592248079031,
    0.6853040030989194, 0.689233281238809
};

/* 128 / (128 + i), i = 0..127, rounded: r below is then a product (its
 * rounding is far inside the margin). */
static const double INV_STEP[128] = {
    1.0, 0.9922480620155039, 0.9846153846153847,
    0.9770992366412213, 0.9696969696969697, 0.9624060150375939,
    0.9552238805970149, 0.9481481481481482, 0.9411764705882353,
    0.9343065693430657, 0.927536231884058, 0.920863309352518,
    0.9142857142857143, 0.9078014184397163, 0.9014084507042254,
    0.8951048951048951, 0.8888888888888888, 0.8827586206896552,
    0.8767123287671232, 0.8707482993197279, 0.8648648648648649,
    0.8590604026845637, 0.8533333333333334, 0.847682119205298,
    0.8421052631578947, 0.8366013071895425, 0.8311688311688312,
    0.8258064516129032, 0.8205128205128205, 0.8152866242038217,
    0.810126582278481, 0.8050314465408805, 0.8,
    0.7950310559006211, 0.7901234567901234, 0.7852760736196319,
    0.7804878048780488, 0.7757575757575758, 0.7710843373493976,
    0.7664670658682635, 0.7619047619047619, 0.757396449704142,
    0.7529411764705882, 0.7485380116959064, 0.7441860465116279,
    0.7398843930635838, 0.735632183908046, 0.7314285714285714,
    0.7272727272727273, 0.7231638418079096, 0.7191011235955056,
    0.7150837988826816, 0.7111111111111111, 0.7071823204419889,
    0.7032967032967034, 0.6994535519125683, 0.6956521739130435,
    0.6918918918918919, 0.6881720430107527, 0.6844919786096256,
    0.6808510638297872, 0.6772486772486772, 0.6736842105263158,
    0.6701570680628273, 0.6666666666666666, 0.6632124352331606,
    0.6597938144329897, 0.6564102564102564, 0.6530612244897959,
    0.649746192893401, 0.6464646464646465, 0.6432160804020101,
    0.64, 0.6368159203980099, 0.6336633663366337,
    0.6305418719211823, 0.6274509803921569, 0.624390243902439,
    0.6213592233009708, 0.6183574879227053, 0.6153846153846154,
    0.6124401913875598, 0.6095238095238096, 0.6066350710900474,
    0.6037735849056604, 0.6009389671361502, 0.5981308411214953,
    0.5953488372093023, 0.5925925925925926, 0.5898617511520737,
    0.5871559633027523, 0.5844748858447488, 0.5818181818181818,
    0.579185520361991, 0.5765765765765766, 0.5739910313901345,
    0.5714285714285714, 0.5688888888888889, 0.5663716814159292,
    0.5638766519823789, 0.5614035087719298, 0.5589519650655022,
    0.5565217391304348, 0.5541125541125541, 0.5517241379310345,
    0.5493562231759657, 0.5470085470085471, 0.5446808510638298,
    0.5423728813559322, 0.540084388185654, 0.5378151260504201,
    0.5355648535564853, 0.5333333333333333, 0.5311203319502075,
    0.5289256198347108, 0.5267489711934157, 0.5245901639344263,
    0.5224489795918368, 0.5203252032520326, 0.5182186234817814,
    0.5161290322580645, 0.5140562248995983, 0.512,
    0.5099601593625498, 0.5079365079365079, 0.5059288537549407,
    0.5039370078740157, 0.5019607843137255
};

/* bucket_of_exact without a libm call per value (the summary adds one
 * value per call, millions of them). t = ln(x) / ln(gamma) is estimated
 * from x's exponent, a table step and five terms of log1p, within about
 * 1e-11 of the quotient bucket_of_exact computes (the estimate's
 * truncation r^6/6 < 4e-14 and libm's log, within one ulp of ln(x) <= 44,
 * both divided by ln(gamma) ~ 0.0198, plus the roundings). When t lies
 * within BUCKET_MARGIN of a whole number, where the two could round to
 * different buckets, the exact definition decides; elsewhere both ceil to
 * the same bucket. So the result is always bucket_of_exact's, and libm is
 * called for about 2 values in 10^9. */
#define BUCKET_MARGIN 1e-9
static int32_t bucket_of(int64_t value) {
    double x = (double)value;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    int exponent = (int)((bits >> 52) & 0x7ff) - 1023;
    unsigned step = (unsigned)((bits >> 45) & 127);    /* top 7 bits of the mantissa */
    uint64_t mantissa_bits = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1023) << 52);
    double m, c = 1.0 + (double)step * (1.0 / 128.0);  /* m in [c, c + 1/128); exact */
    memcpy(&m, &mantissa_bits, sizeof m);
    double r = (m - c) * INV_STEP[step];               /* 0 <= r < 1/128 */
    double p = r * (1.0 + r * (-0.5 + r * (1.0 / 3.0 + r * (-0.25 + r * 0.2))));
    double ln = (double)exponent * 0.69314718055994530942 + (LOG_STEP[step] + p);
    double t = ln * (1.0 / log(gamma_value()));        /* >= 0: x >= 1 */
    /* ceil(t) is the bucket unless t is within the margin of a whole
     * number (t >= 0: the conversion truncates to floor(t)) */
    int32_t whole = (int32_t)t;
    double fraction = t - (double)whole;
    if (fraction > BUCKET_MARGIN && fraction < 1.0 - BUCKET_MARGIN) return whole + 1;
    return bucket_of_exact(value);
}

/* ---- buckets from a table ---------------------------------------------------
 * The bucket is monotone in the value (log, a positive divisor and ceil
 * all are), so each cell of values that share a double's exponent and top
 * 7 mantissa bits (bucket_of's `step`) holds at most one bucket edge: a
 * cell spans less than 1/128 of its values, a bucket about 2%. A cell then
 * stores its lowest value's bucket and the last value still in that
 * bucket, and a value's bucket is a compare, not bucket_of's polynomial
 * (9% of scope-inspect's time on 32M calls). Cells are indexed by the
 * value's double, as the definition computes with it: above 2^53 a value
 * may round into the next cell, whose bucket is then the definition's
 * (its double is that cell's lowest). Values below 256 (cells narrower
 * than an integer) have their own table. The tables are built once per
 * process, by the first thread that asks (about 10^5 calls to libm); a
 * thread that finds them being built uses bucket_of meanwhile, so either
 * way the bucket is the definition's. */
#define CELL_SMALL 256
#define CELL_COUNT (64 * 128)
static int32_t small_bucket[CELL_SMALL];
static int32_t cell_bucket[CELL_COUNT];
static int64_t cell_last[CELL_COUNT];     /* INT64_MAX: no edge in the cell */
static _Atomic int cells_state;           /* 0 none, 1 being built, 2 ready, 3 unusable */

static bool build_cells(void) {
    for (int64_t v = 1; v < CELL_SMALL; v++) small_bucket[v] = bucket_of_exact(v);
    for (int e = 8; e < 64; e++)
        for (int step = 0; step < 128; step++) {
            size_t cell = (size_t)e * 128 + (size_t)step;
            if (e == 63 && step > 0) break; /* only 2^63 itself: INT64_MAX rounds to it */
            /* the cell's integers whose doubles stay in it: [lo, hi] */
            int64_t lo = e == 63 ? INT64_MAX : (int64_t)(128 + step) << (e - 7);
            int64_t width = e == 63 ? 0 : (int64_t)1 << (e - 7);
            int64_t spacing = e > 52 ? (int64_t)1 << (e - 52) : 1; /* between doubles */
            int64_t hi = e == 63 ? INT64_MAX : lo + (width - spacing);
            int32_t base = bucket_of_exact(lo), top = bucket_of_exact(hi);
            cell_bucket[cell] = base;
            cell_last[cell] = INT64_MAX;
            if (top == base) continue;
            if (top != base + 1) return false; /* two edges: not this table's shape */
            int64_t below = lo, above = hi;       /* bucket(below) == base, bucket(above) == top */
            while (above - below > 1) {
                int64_t mid = below + (above - below) / 2;
                if (bucket_of_exact(mid) == base) below = mid;
                else above = mid;
            }
            cell_last[cell] = below;
        }
    return true;
}

static bool cells_ready(void) {
    int state = atomic_load_explicit(&cells_state, memory_order_acquire);
    if (state == 2) return true;
    if (state != 0) return false;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&cells_state, &expected, 1)) return false;
    bool ok = build_cells();
    atomic_store_explicit(&cells_state, ok ? 2 : 3, memory_order_release);
    return ok;
}

/* value > 0. */
static inline int32_t bucket_of_cells(int64_t value) {
    if (value < CELL_SMALL) return small_bucket[value];
    double x = (double)value;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    size_t cell = (size_t)(bits >> 45) - ((size_t)1023 << 7); /* exponent * 128 + step */
    return cell_bucket[cell] + (value > cell_last[cell]);
}

int32_t spi_sketch_bucket(int64_t value) {
    if (value <= 0) return 0;
    return cells_ready() ? bucket_of_cells(value) : bucket_of(value);
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
        int32_t b = cells_ready() ? bucket_of_cells(value) : bucket_of(value);
        /* cover() only when the bucket is outside the ones held (rare once
         * a set has seen its range): the common case stays a compare */
        if ((!s->length || b < s->offset || b >= s->offset + (int32_t)s->length) &&
            cover(s, b, b) != SP_OK)
            return SP_ERR_OUT_OF_MEMORY;
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
