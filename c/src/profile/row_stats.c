/*
 * row_stats.c - spi_stats_compute (row_stats.h): the statistics of a row in
 * one fused, branch-free pass, plus the second pass for the squared
 * deviations. Every full read runs this over every event, so it is written
 * for the vectoriser (the build gives this file GCC's dynamic cost model).
 */
#include "profile/row_stats.h"

#include <math.h>
#include <stddef.h>

/* One pass over a row (vectorised: no branches, wrapping arithmetic) for
 * the order statistics, the sums, the ends when asked, and the largest
 * magnitudes, which tell whether any int64 overflow was possible. */
#define STATS_PASS(WRITE_END)                                                  \
    for (uint64_t i = 0; i < count; i++) {                                     \
        int64_t d = durations[i], st = starts[i];                              \
        int64_t end = (int64_t)((uint64_t)st + (uint64_t)d);                   \
        WRITE_END;                                                             \
        total += (uint64_t)d;                                                  \
        minimum = d < minimum ? d : minimum;                                   \
        maximum = d > maximum ? d : maximum;                                   \
        start_minimum = st < start_minimum ? st : start_minimum;               \
        end_maximum = end > end_maximum ? end : end_maximum;                   \
        uint64_t sm = st < 0 ? -(uint64_t)st : (uint64_t)st;                   \
        start_magnitude = sm > start_magnitude ? sm : start_magnitude;         \
    }

bool spi_stats_compute(spi_stats *stats, const int64_t *starts, const int64_t *durations,
                       const int64_t *gpu, uint64_t count, int64_t *ends) {
    *stats = (spi_stats){0};
    if (count == 0) return true;
    uint64_t total = 0, start_magnitude = 0;
    int64_t minimum = durations[0], maximum = durations[0];
    int64_t start_minimum = starts[0], end_maximum = INT64_MIN;
    if (ends) {
        STATS_PASS(ends[i] = end)
    } else {
        STATS_PASS((void)0)
    }
    stats->total = (int64_t)total;
    stats->minimum = minimum;
    stats->maximum = maximum;
    stats->first = durations[0];
    stats->last = durations[count - 1];
    stats->start_minimum = start_minimum;
    stats->end_maximum = end_maximum;
    uint64_t gpu_magnitude = 0;
    if (gpu) {
        for (uint64_t i = 0; i < count; i++) {
            if (gpu[i] < 0) continue;
            stats->gpu_count++;
            stats->gpu_total = (int64_t)((uint64_t)stats->gpu_total + (uint64_t)gpu[i]);
            gpu_magnitude = (uint64_t)gpu[i] > gpu_magnitude ? (uint64_t)gpu[i] : gpu_magnitude;
        }
    }
    /* Two passes, as the reference writer does: the mean first, then the
     * squared deviations from it (numerically stable for large offsets).
     * Four partial sums: independent add chains run in parallel (and sum
     * in a more balanced order than one long chain, closer to numpy's
     * pairwise summation). */
    double mean = (double)stats->total / (double)count;
    double partial[4] = {0.0, 0.0, 0.0, 0.0};
    uint64_t i = 0;
    for (; i + 4 <= count; i += 4)
        for (int lane = 0; lane < 4; lane++) {
            double dev = (double)durations[i + lane] - mean;
            partial[lane] += dev * dev;
        }
    for (; i < count; i++) {
        double dev = (double)durations[i] - mean;
        partial[0] += dev * dev;
    }
    stats->mean = mean;
    stats->m2 = (partial[0] + partial[1]) + (partial[2] + partial[3]);
    /* |start|, |duration| < 2^61 and count * max|duration| < 2^62: no end,
     * running total or GPU total can have left int64. */
    const uint64_t limit = (uint64_t)1 << 61;
    uint64_t duration_magnitude = (uint64_t)(maximum < 0 ? -maximum : maximum);
    uint64_t low = minimum < 0 ? -(uint64_t)minimum : (uint64_t)minimum;
    if (low > duration_magnitude) duration_magnitude = low;
    return start_magnitude < limit && duration_magnitude < limit &&
           duration_magnitude <= limit / count && gpu_magnitude <= limit / count;
}
#undef STATS_PASS

/* ---- the streaming form (row_stats.h) --------------------------------------- */

void spi_stats_stream_begin(spi_stats_stream *s, uint64_t count, uint64_t total) {
    *s = (spi_stats_stream){.count = count, .lanes_end = count - count % 4};
    if (count == 0) return;
    s->stats.total = (int64_t)total;
    s->stats.mean = (double)s->stats.total / (double)count;
    s->stats.end_maximum = INT64_MIN;
}

/* The total known only after a first pass (row_stats.h). */
void spi_stats_stream_set_total(spi_stats_stream *s, uint64_t total) {
    if (s->count == 0) return;
    s->stats.total = (int64_t)total;
    s->stats.mean = (double)s->stats.total / (double)s->count;
}

/* The same sums as spi_stats_compute in the same order: each of the four
 * lanes adds its calls' squared deviations one after the other, so a slice
 * may end anywhere. Written as spi_stats_compute is, for the vectoriser:
 * the order statistics in one branch-free loop, then the lanes in blocks
 * of four (a streamed row of 20M calls spent 4% of finalize here when one
 * loop chose the lane per call). The two halves below are that order
 * statistics loop and those lanes. */
void spi_stats_stream_add_order(spi_stats_stream *s, const int64_t *starts,
                                const int64_t *durations, uint64_t n) {
    if (n == 0) return;
    spi_stats *st = &s->stats;
    if (s->ordered == 0) {
        st->minimum = st->maximum = st->first = durations[0];
        st->start_minimum = starts[0];
    }
    int64_t minimum = st->minimum, maximum = st->maximum;
    int64_t start_minimum = st->start_minimum, end_maximum = st->end_maximum;
    for (uint64_t k = 0; k < n; k++) {
        int64_t d = durations[k], start = starts[k];
        int64_t end = (int64_t)((uint64_t)start + (uint64_t)d);
        minimum = d < minimum ? d : minimum;
        maximum = d > maximum ? d : maximum;
        start_minimum = start < start_minimum ? start : start_minimum;
        end_maximum = end > end_maximum ? end : end_maximum;
    }
    st->minimum = minimum;
    st->maximum = maximum;
    st->start_minimum = start_minimum;
    st->end_maximum = end_maximum;
    st->last = durations[n - 1];
    s->ordered += n;
}

void spi_stats_stream_add_squares(spi_stats_stream *s, const int64_t *durations, uint64_t n) {
    if (n == 0) return;
    const double mean = s->stats.mean;
    uint64_t k = 0, seen = s->seen;
    /* up to a multiple of four (a slice ended inside a block) */
    for (; k < n && seen % 4 && seen < s->lanes_end; k++, seen++) {
        double dev = (double)durations[k] - mean;
        s->partial[seen % 4] += dev * dev;
    }
    double lane[4] = {s->partial[0], s->partial[1], s->partial[2], s->partial[3]};
    for (; k + 4 <= n && seen + 4 <= s->lanes_end; k += 4, seen += 4)
        for (int l = 0; l < 4; l++) {
            double dev = (double)durations[k + l] - mean;
            lane[l] += dev * dev;
        }
    for (int l = 0; l < 4; l++) s->partial[l] = lane[l];
    /* a block cut by the slice's end, then the row's last calls (lane 0) */
    for (; k < n; k++, seen++) {
        double dev = (double)durations[k] - mean;
        s->partial[seen < s->lanes_end ? seen % 4 : 0] += dev * dev;
    }
    s->seen = seen;
}

void spi_stats_stream_add(spi_stats_stream *s, const int64_t *starts, const int64_t *durations,
                          uint64_t n) {
    spi_stats_stream_add_order(s, starts, durations, n);
    spi_stats_stream_add_squares(s, durations, n);
}

void spi_stats_stream_end(spi_stats_stream *s, spi_stats *stats) {
    s->stats.m2 = (s->partial[0] + s->partial[1]) + (s->partial[2] + s->partial[3]);
    if (s->count == 0) s->stats = (spi_stats){0};
    *stats = s->stats;
}

bool spi_stats_stored_valid(const spi_stats *stats, const char **why) {
    const char *bad = NULL;
    if (!isfinite(stats->mean)) bad = "mean is not a finite number";
    else if (!isfinite(stats->m2)) bad = "m2 is not a finite number";
    else if (stats->m2 < 0.0) bad = "m2 (a sum of squares) is negative";
    if (why) *why = bad;
    return bad == NULL;
}
