/*
 * recorder_ticks.c - a stopped session's raw times into CLOCK_MONOTONIC ns
 * (spi_recorder_convert_ticks, recorder.h).
 *
 * The hot path stores each event's start in the session's clock and its
 * end as read (spi_event, clock.h says why). A CLOCK_MONOTONIC end only
 * needs unpacking. A TSC timestamp goes through the piecewise-linear map
 * of every anchor the session took (tick_map.h); a duration is the
 * difference of its converted end and start, so it is never negative and
 * a child never starts before its parent (the map is monotone). Aggregate
 * paths keep sums, not timestamps: their totals, extremes and sums of
 * squares scale by the session's average rate, their first start and last
 * end go through the map. Events a bounded trace wrote to its spill file
 * keep their raw times until run_stream.c reads them back
 * (event_cursor.c converts them with spi_event_convert_times).
 */
#include "record/recorder.h"

#include "record/clock.h"
#include "util/alloc.h"
#include "util/error.h"

static int64_t span_ns(const spi_tick_map *map, int64_t ticks) {
    return spi_tick_map_span_ns(map, ticks);
}

void spi_event_convert_times(spi_event *events, size_t count, spi_tick_map *map) {
    for (spi_event *e = events; e < events + count; e++) {
        int64_t start, end;
        if (map) {
            start = spi_tick_map_ns(map, e->start_ns);
            end = spi_tick_map_ns(map, e->duration_ns);
        } else {
            start = e->start_ns;
            end = spi_clock_end_ns(start, e->duration_ns);
        }
        e->start_ns = start;
        e->duration_ns = end - start;
    }
}

/* the tail chunk's fill level is set by spi_recorder_stop */
static void convert_events(spi_thread *t, spi_tick_map *map) {
    for (spi_chunk *chunk = t->head; chunk; chunk = chunk->next)
        spi_event_convert_times(chunk->events, chunk->used, map);
}

static void convert_paths(spi_thread *t, spi_tick_map *map) {
    double rate = map->ns_per_tick;
    for (size_t i = 0; i < t->node_count; i++) {
        spi_path_node *n = &t->nodes[i];
        if (n->count == 0) continue;
        n->total_ns = span_ns(map, n->total_ns);
        n->min_ns = span_ns(map, n->min_ns);
        n->max_ns = span_ns(map, n->max_ns);
        n->exclusive_ns = span_ns(map, n->exclusive_ns);
        /* (d * rate)^2 = d^2 * rate^2, kept exact in 128 bits */
        long double squares = (long double)n->sum_squares * (long double)rate * (long double)rate;
        n->sum_squares = squares > 0 ? (spi_u128)squares : 0;
        n->start_min_ns = spi_tick_map_ns(map, n->start_min_ns);
        n->end_max_ns = spi_tick_map_ns(map, n->end_max_ns);
    }
}

int spi_recorder_convert_ticks(spi_session *session) {
    if (!session->tsc) {
        if (session->raw_ends)
            for (spi_thread *t = session->threads; t; t = t->next) convert_events(t, NULL);
        session->spilled_raw_ends = session->raw_ends && spi_session_spilled(session);
        session->raw_ends = false;
        return SP_OK;
    }
    size_t total = session->anchors.count;
    for (const spi_thread *t = session->threads; t; t = t->next) total += t->anchors.count;
    spi_anchor *all = spi_malloc((total ? total : 1) * sizeof *all);
    if (!all) return SP_ERR_OUT_OF_MEMORY;
    size_t n = 0;
    for (size_t i = 0; i < session->anchors.count; i++) all[n++] = session->anchors.items[i];
    for (const spi_thread *t = session->threads; t; t = t->next)
        for (size_t i = 0; i < t->anchors.count; i++) all[n++] = t->anchors.items[i];
    spi_tick_map map;
    int status = spi_tick_map_build(&map, all, n);
    spi_free(all);
    if (status != SP_OK) return status;
    for (spi_thread *t = session->threads; t; t = t->next) {
        map.hint = 0;
        if (session->aggregate) convert_paths(t, &map);
        else convert_events(t, &map);
    }
    /* events in the spill file are converted as they are read back */
    if (spi_session_spilled(session)) {
        map.hint = 0;
        session->spilled_map = map;
        session->spilled_map_live = true;
        session->spilled_raw_ends = session->raw_ends;
    } else {
        spi_tick_map_free(&map);
    }
    session->tsc = false;
    session->raw_ends = false;
    return SP_OK;
}
