/*
 * tick_map.c - anchors and the ticks -> ns map (tick_map.h).
 */
#include "record/tick_map.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"

/* ns of `ticks` on the line through a and b (a.ticks < b.ticks). The
 * products are formed in double: ticks differ by at most hours of cycles,
 * so the relative rounding of 2^-53 is far below a nanosecond. */
static int64_t on_line(spi_anchor a, spi_anchor b, int64_t ticks) {
    double slope = (double)(b.ns - a.ns) / (double)(b.ticks - a.ticks);
    return a.ns + (int64_t)((double)(ticks - a.ticks) * slope);
}

int spi_anchor_list_add(spi_anchor_list *list, spi_anchor a) {
    size_t n = list->count;
    /* thinning: B between A and the new C, and on their line: drop B */
    if (n >= 2) {
        spi_anchor first = list->items[n - 2], middle = list->items[n - 1];
        if (first.ticks < middle.ticks && middle.ticks < a.ticks) {
            int64_t predicted = on_line(first, a, middle.ticks);
            int64_t off = predicted - middle.ns;
            if (off >= -SPI_ANCHOR_SLACK_NS && off <= SPI_ANCHOR_SLACK_NS) {
                list->items[n - 1] = a;
                return SP_OK;
            }
        }
    }
    if (n == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 16;
        spi_anchor *grown;
        if (list->mapped) {
            /* mmap, copy, munmap: no malloc lock a signal could be holding */
            if (capacity > SIZE_MAX / sizeof *grown ||
                !(grown = spi_map_populated(capacity * sizeof *grown)))
                return SP_ERR_OUT_OF_MEMORY;
            if (n) memcpy(grown, list->items, n * sizeof *grown);
            if (list->items) spi_unmap(list->items, list->capacity * sizeof *grown);
        } else if (!(grown = spi_reallocarray(list->items, capacity, sizeof *grown))) {
            return SP_ERR_OUT_OF_MEMORY;
        }
        list->items = grown;
        list->capacity = capacity;
    }
    list->items[list->count++] = a;
    return SP_OK;
}

void spi_anchor_list_free(spi_anchor_list *list) {
    if (list->mapped && list->items) spi_unmap(list->items, list->capacity * sizeof *list->items);
    else if (!list->mapped) spi_free(list->items);
    *list = (spi_anchor_list){0};
}

static int by_ticks(const void *pa, const void *pb) {
    const spi_anchor *a = pa, *b = pb;
    if (a->ticks != b->ticks) return a->ticks < b->ticks ? -1 : 1;
    return a->ns < b->ns ? -1 : (a->ns > b->ns);
}

int spi_tick_map_build(spi_tick_map *map, const spi_anchor *anchors, size_t count) {
    *map = (spi_tick_map){0};
    if (count == 0) return SP_ERR_INVALID_ARGUMENT;
    map->anchors = spi_malloc(count * sizeof *map->anchors);
    if (!map->anchors) return SP_ERR_OUT_OF_MEMORY;
    memcpy(map->anchors, anchors, count * sizeof *anchors);
    qsort(map->anchors, count, sizeof *map->anchors, by_ticks);
    /* keep a strictly increasing tick sequence with non-decreasing ns: an
     * anchor that would make time run backwards is a bad reading */
    size_t kept = 1;
    for (size_t i = 1; i < count; i++) {
        spi_anchor a = map->anchors[i], last = map->anchors[kept - 1];
        if (a.ticks == last.ticks || a.ns < last.ns) continue;
        map->anchors[kept++] = a;
    }
    map->count = kept;
    spi_anchor first = map->anchors[0], final = map->anchors[kept - 1];
    /* a single anchor: assume 1 tick = 1 ns until told better (only a run
     * with no recorded call gets here) */
    map->ns_per_tick = final.ticks > first.ticks
                           ? (double)(final.ns - first.ns) / (double)(final.ticks - first.ticks)
                           : 1.0;
    return SP_OK;
}

int64_t spi_tick_map_ns(spi_tick_map *map, int64_t ticks) {
    const spi_anchor *a = map->anchors;
    size_t n = map->count;
    if (n == 1) return a[0].ns + (int64_t)((double)(ticks - a[0].ticks) * map->ns_per_tick);
    /* segment i covers [a[i].ticks, a[i+1].ticks]; events arrive roughly
     * in order, so the last segment or its neighbour usually holds them */
    size_t i = map->hint < n - 1 ? map->hint : n - 2;
    if (!(a[i].ticks <= ticks && ticks <= a[i + 1].ticks)) {
        if (i + 2 < n && a[i + 1].ticks <= ticks && ticks <= a[i + 2].ticks) {
            i++;
        } else if (ticks <= a[0].ticks) {
            i = 0;
        } else if (ticks >= a[n - 1].ticks) {
            i = n - 2;
        } else {
            size_t lo = 0, hi = n - 1; /* a[lo].ticks <= ticks < a[hi].ticks */
            while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (a[mid].ticks <= ticks) lo = mid;
                else hi = mid;
            }
            i = lo;
        }
    }
    map->hint = i;
    int64_t ns = on_line(a[i], a[i + 1], ticks);
    /* the interpolation is monotone within a segment; outside the anchors
     * it extrapolates along the end segments, which are monotone too */
    return ns;
}

int64_t spi_tick_map_span_ns(const spi_tick_map *map, int64_t ticks) {
    return (int64_t)((double)ticks * map->ns_per_tick);
}

void spi_tick_map_free(spi_tick_map *map) {
    spi_free(map->anchors);
    *map = (spi_tick_map){0};
}
