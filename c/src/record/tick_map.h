/*
 * tick_map.h - exact conversion of TSC ticks to CLOCK_MONOTONIC ns.
 *
 * With the TSC clock the hot path stores raw ticks; every file still holds
 * CLOCK_MONOTONIC ns (the Python driver's perf_counter_ns() timeline). The
 * recorder takes anchors, pairs (ticks, ns) read back to back, at setup,
 * when a thread attaches, at every new event chunk, at least every
 * SPI_ANCHOR_INTERVAL_NS while a thread records, and at finalize. A tick
 * value is mapped by linear interpolation between the anchors around it, so
 * the map follows NTP slewing and drift instead of assuming one rate for
 * hours. Error bound: the anchor read itself (half the rdtsc-clock_gettime-
 * rdtsc window, tens of ns), the thinning slack (SPI_ANCHOR_SLACK_NS), and
 * any change of the tick rate within one anchor interval: a rate that
 * changes by d in the middle of an interval of length T bends the line by
 * at most d*T/4 (1.25 us for an abrupt 500 ppm step within 10 ms; the
 * kernel's NTP frequency corrections move far less than 1 ppm per 10 ms,
 * well under 1 ns). bench/overhead measures the error of a long run.
 *
 * The map is monotone by construction: anchors whose ns would go backwards
 * (a VM with an unstable TSC, a thread migrating between unsynchronised
 * cores) are dropped, so a converted duration is never negative and a call
 * never starts before its parent.
 */
#ifndef SPI_TICK_MAP_H
#define SPI_TICK_MAP_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* Anchors are taken at least this often while a thread records. */
#define SPI_ANCHOR_INTERVAL_NS INT64_C(10000000)

typedef struct spi_anchor {
    int64_t ticks;
    int64_t ns;
} spi_anchor;

/* A growing list of anchors of one thread. Collinear anchors are thinned
 * on the fly: when the newest anchor lies within SPI_ANCHOR_SLACK_NS of the
 * line through its neighbours it is replaced, so a stable clock costs a
 * handful of anchors per thread whatever the run's length. */
#define SPI_ANCHOR_SLACK_NS 20
typedef struct spi_anchor_list {
    spi_anchor *items;
    size_t count;
    size_t capacity;
    /* Grow with mmap instead of malloc: a recording thread's list, which
     * may grow inside a signal handler (a TSC anchor falls due at any
     * begin), where only async-signal-safe calls are allowed. */
    bool mapped;
} spi_anchor_list;

/* Append `a`; SP_OK or SP_ERR_OUT_OF_MEMORY (the list is unchanged).
 * Async-signal-safe when list->mapped (and not re-entered on one list). */
int spi_anchor_list_add(spi_anchor_list *list, spi_anchor a);
void spi_anchor_list_free(spi_anchor_list *list);

typedef struct spi_tick_map {
    spi_anchor *anchors;      /* increasing ticks, non-decreasing ns */
    size_t count;
    size_t hint;              /* segment of the last lookup */
    double ns_per_tick;       /* over the whole map, for durations of sums */
} spi_tick_map;

/* Build a map from any number of anchors in any order (copied; the input
 * is not changed). Needs at least one anchor. SP_OK,
 * SP_ERR_INVALID_ARGUMENT (no anchor) or SP_ERR_OUT_OF_MEMORY. */
int spi_tick_map_build(spi_tick_map *map, const spi_anchor *anchors, size_t count);
/* ns of `ticks`: interpolated between the anchors around it, extrapolated
 * with the nearest segment's rate outside them. Monotone in ticks. */
int64_t spi_tick_map_ns(spi_tick_map *map, int64_t ticks);
/* A tick count (a sum of durations) in ns at the map's overall rate. */
int64_t spi_tick_map_span_ns(const spi_tick_map *map, int64_t ticks);
void spi_tick_map_free(spi_tick_map *map);

#endif /* SPI_TICK_MAP_H */
