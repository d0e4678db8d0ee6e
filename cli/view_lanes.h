/*
 * view_lanes.h - the calls of a profile regrouped by lane, the unit every
 * timeline view shows: one lane per (rank, thread), its calls in start
 * order (parents before their children), walked as properly nested
 * open/close events. Shared by the speedscope and OTF2 exports, the flame
 * graph and the report's timeline.
 *
 * The file stores calls per (rank, region) row; a lane gathers the calls
 * of one thread from every row of its rank. Memory: 8 bytes per selected
 * call on top of the results object (a packed (row, index) reference).
 */
#ifndef SP_CLI_VIEW_LANES_H
#define SP_CLI_VIEW_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scope_profiler_results.h"

typedef struct view_lane {
    uint32_t rank;
    int64_t thread; /* index into the rank's thread table, -1 = unknown lane */
    size_t first;   /* its calls: refs[first .. first + count) */
    size_t count;
} view_lane;

typedef struct view_lanes {
    const sp_results *res;
    int64_t origin;  /* earliest start of the whole file (not only the selection) */
    int64_t end_max; /* latest end of the selected calls */
    view_lane *lanes; /* sorted by (rank, thread) */
    size_t lane_count;
    uint64_t *refs;   /* row << 32 | index within the row */
    size_t ref_count;
    const int64_t **starts; /* per row, cached accessor results */
    const int64_t **ends;
    uint64_t clamped; /* calls that ended after their parent (see walk) */
} view_lanes;

/* Build the lanes of the calls whose rank is selected (ranks NULL = all)
 * and whose region has region_on set (region_on NULL = all). The file must
 * have per-call events. Returns SP_OK or SP_ERR_OUT_OF_MEMORY; *v is
 * always safe to free afterwards. */
int view_lanes_build(view_lanes *v, const sp_results *res, const uint32_t *ranks,
                     size_t rank_count, const bool *region_on);
void view_lanes_free(view_lanes *v);

static inline size_t view_ref_row(uint64_t ref) { return (size_t)(ref >> 32); }
static inline uint64_t view_ref_index(uint64_t ref) { return ref & 0xffffffffu; }
static inline int64_t view_ref_start(const view_lanes *v, uint64_t ref) {
    return v->starts[view_ref_row(ref)][view_ref_index(ref)];
}
static inline int64_t view_ref_end(const view_lanes *v, uint64_t ref) {
    return v->ends[view_ref_row(ref)][view_ref_index(ref)];
}
static inline size_t view_ref_region(const view_lanes *v, uint64_t ref) {
    return sp_results_row_region(v->res, view_ref_row(ref));
}

/* "rank R / thread T", or "rank R" for the unknown lane: one spelling in
 * every view. */
void view_lane_label(const view_lane *l, char *buf, size_t len);

/* Callbacks of view_lanes_walk. `start`/`end` are absolute ns, already
 * made to nest; depth 0 = a root of the lane. A callback returning
 * non-zero stops the walk with that value. */
typedef struct view_walk_callbacks {
    int (*open)(void *ctx, uint64_t ref, unsigned depth, int64_t start);
    int (*close)(void *ctx, uint64_t ref, unsigned depth, int64_t end);
} view_walk_callbacks;

/* Walk one lane as nested events: every call opens at its start and
 * closes at its end, children inside their parent, events in time order.
 * A call that overlaps its parent's end (impossible for data recorded by
 * this library, possible in foreign or damaged files) is cut at the
 * parent's end and counted in v->clamped, so every consumer sees a proper
 * tree. Returns 0, SP_ERR_OUT_OF_MEMORY or a callback's value. */
int view_lanes_walk(view_lanes *v, size_t lane, const view_walk_callbacks *cb, void *ctx);

#endif /* SP_CLI_VIEW_LANES_H */
