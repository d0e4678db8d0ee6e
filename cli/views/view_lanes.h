/*
 * view_lanes.h - the calls of a profile regrouped by lane, the unit every
 * timeline view shows: one lane per (rank, thread), its calls in start
 * order (parents before their children), walked as properly nested
 * open/close events. Shared by the speedscope and OTF2 exports, the flame
 * graph and the report's timeline.
 *
 * The file stores calls per (rank, region) row; a lane gathers the calls
 * of one thread from every row of its rank. Building streams each rank's
 * rows through sp_calls cursors and merges them by start time (a row that
 * is not in start order is sorted in memory first), appending each call
 * to its lane. Lanes stay in memory while the selected calls fit
 * VIEW_MEMORY_DEFAULT (or SCOPE_PROFILER_VIEW_MEMORY bytes); past that
 * they are written in blocks to an unlinked temporary file and read back
 * block by block when walked, so memory stays bounded whatever the size
 * of the file (a results object opened with SP_RESULTS_CALLS_ON_DEMAND).
 */
#ifndef SP_CLI_VIEW_LANES_H
#define SP_CLI_VIEW_LANES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scope_profiler_results.h"

/* Bytes of calls kept in memory before lanes go to a temporary file. */
#define VIEW_MEMORY_DEFAULT ((size_t)64 << 20)

/* One call as the views see it. */
typedef struct view_call {
    int64_t start;
    int64_t end;       /* start + duration */
    int64_t call_id;   /* -1 when the file has none */
    int64_t parent_id; /* -1 = root or none stored */
    uint32_t row;      /* the row it came from: its region and rank */
    uint32_t reserved;
} view_call;

typedef struct view_lane {
    uint32_t rank;
    int64_t thread; /* index into the rank's thread table, -1 = unknown lane */
    uint64_t count;
    int64_t start_min; /* earliest start and latest end of its calls */
    int64_t end_max;
    /* storage (view_lanes.c): in memory, or blocks in the temporary file */
    view_call *calls;
    uint64_t *blocks; /* file offsets of its full blocks */
    size_t block_count;
    size_t capacity;
} view_lane;

typedef struct view_lanes {
    const sp_results *res;
    int64_t origin;  /* earliest start of the whole file (not only the selection) */
    int64_t end_max; /* latest end of the selected calls */
    view_lane *lanes; /* sorted by (rank, thread) */
    size_t lane_count;
    uint64_t call_count;       /* selected calls */
    uint64_t duration_bins[66]; /* calls by bit length of end - start (bin 0: <= 0) */
    bool parents;     /* some selected call has a stored call id and parent id */
    uint64_t clamped; /* calls that ended after their parent (see walk) */
    FILE *spill;      /* NULL: every lane in memory */
    size_t block_calls;
    char error[512];  /* why building failed, when it did */
} view_lanes;

/* Build the lanes of the calls whose rank is selected (ranks NULL = all)
 * and whose region has region_on set (region_on NULL = all). The file must
 * have per-call events. Returns SP_OK, SP_ERR_OUT_OF_MEMORY, SP_ERR_OUTPUT
 * (the temporary file) or a read error of the file (v->error says which);
 * *v is always safe to free afterwards. */
int view_lanes_build(view_lanes *v, const sp_results *res, const uint32_t *ranks,
                     size_t rank_count, const bool *region_on);
void view_lanes_free(view_lanes *v);

static inline size_t view_call_region(const view_lanes *v, const view_call *c) {
    return sp_results_row_region(v->res, c->row);
}

/* Bit length of a duration: the bin of view_lanes.duration_bins. */
unsigned view_duration_bin(int64_t duration);

/* "rank R / thread T", or "rank R" for the unknown lane: one spelling in
 * every view. */
void view_lane_label(const view_lane *l, char *buf, size_t len);

/* Callbacks of view_lanes_walk. `start`/`end` are absolute ns, already
 * made to nest; depth 0 = a root of the lane. `call` is valid during the
 * callback only. A callback returning non-zero stops the walk with that
 * value. */
typedef struct view_walk_callbacks {
    int (*open)(void *ctx, const view_call *call, unsigned depth, int64_t start);
    int (*close)(void *ctx, const view_call *call, unsigned depth, int64_t end);
} view_walk_callbacks;

/* Walk one lane as nested events: every call opens at its start and
 * closes at its end, children inside their parent, events in time order.
 * A call that overlaps its parent's end (impossible for data recorded by
 * this library, possible in foreign or damaged files) is cut at the
 * parent's end and counted in v->clamped, so every consumer sees a proper
 * tree. Returns 0, SP_ERR_OUT_OF_MEMORY, SP_ERR_OUTPUT (the temporary
 * file could not be read back) or a callback's value. */
int view_lanes_walk(view_lanes *v, size_t lane, const view_walk_callbacks *cb, void *ctx);

#endif /* SP_CLI_VIEW_LANES_H */
