/*
 * view_lanes.h - the calls of a profile regrouped by lane, the unit every
 * timeline view shows: one lane per (rank, thread, tree track), its calls
 * in start order (parents before their children), walked as properly
 * nested open/close events. Shared by the speedscope and OTF2 exports,
 * the flame graph and the report's timeline.
 *
 * One tree for every view. A call's parent is its stored parent
 * (`parent_ids`) whenever the file has call and parent ids, exactly as
 * scope-inspect's call tree takes it; only files without them fall back
 * to the one shared rule of time containment within a lane (start
 * ascending, longest first; docs/FORMAT.md §5). Two unrelated trees on
 * one thread whose times overlap (two runs merged with --allow-disjoint)
 * cannot be drawn as one properly nested sequence of events, so a stored
 * root that starts while an earlier tree of its thread is still open goes
 * to the next free "track" of that thread: its own lane, labelled
 * "rank R / thread T / tree K". No view then re-parents a call into the
 * other tree or drops it. At most VIEW_MAX_TRACKS tracks a thread; past
 * that a root falls back to containment (a file of overlapping roots on
 * one thread is damaged, and must not multiply the lanes).
 *
 * The file stores calls per (rank, region) row; a lane gathers the calls
 * of one thread from every row of its rank. Building streams each rank's
 * rows through sp_calls cursors and merges them by start time (a row that
 * is not in start order is sorted in memory first), appending each call
 * to its lane. Lanes stay in memory while the selected calls fit
 * VIEW_MEMORY_DEFAULT (or SCOPE_PROFILER_VIEW_MEMORY bytes); past that
 * they are written in blocks to an unlinked temporary file and read back
 * block by block when walked. Per lane only a small record is kept (and,
 * while its rank is merged, a buffer that starts at a few calls and is
 * flushed when all buffers together pass a share of the budget), so a
 * file with a million threads costs ~100 bytes a lane; when even those
 * records pass half the budget the build is refused with a message that
 * names the setting, never a blow-up.
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

/* Most tree tracks (lanes) one thread is split into. */
#define VIEW_MAX_TRACKS 16

/* parent_id of a call whose file stores no call or parent ids: nesting by
 * containment. (-1 is a stored root.) */
#define VIEW_PARENT_UNKNOWN (-2)

/* One call as the views see it. */
typedef struct view_call {
    int64_t start;
    int64_t end;       /* start + duration (the reader refuses an overflow) */
    int64_t call_id;   /* -1 when the file has none */
    int64_t parent_id; /* stored parent, -1 = stored root, VIEW_PARENT_UNKNOWN = none stored */
    uint32_t row;      /* the row it came from: its region and rank */
    uint32_t reserved;
} view_call;

/* A run of a lane's calls in the temporary file. */
typedef struct view_block {
    uint64_t offset;
    uint64_t count;
} view_block;

typedef struct view_lane {
    uint32_t rank;
    uint32_t track;  /* 0, or the K-th tree overlapping earlier ones on this thread */
    int64_t thread;  /* index into the rank's thread table, -1 = unknown lane */
    uint64_t count;
    int64_t start_min; /* earliest start and latest end of its calls */
    int64_t end_max;
    /* storage (view_lanes.c): in memory, or blocks in the temporary file
     * (calls is then the buffer of the block being filled) */
    view_call *calls;
    view_block *blocks;
    size_t block_count;
    size_t capacity; /* of calls */
    size_t pending;  /* spilled lanes: calls in the buffer, not yet in a block */
} view_lane;

typedef struct view_lanes {
    const sp_results *res;
    int64_t origin;  /* earliest start of the whole file (not only the selection) */
    int64_t end_max; /* latest end of the selected calls */
    view_lane *lanes; /* sorted by (rank, thread, track) */
    size_t lane_count;
    uint64_t call_count;       /* selected calls */
    uint64_t duration_bins[66]; /* calls by bit length of end - start (bin 0: <= 0; 1..64) */
    bool parents;     /* some selected call has a stored call id and parent id */
    uint64_t clamped; /* calls cut to nest (see walk) */
    FILE *spill;      /* NULL: every lane in memory */
    size_t block_calls;
    size_t budget;      /* bytes: SCOPE_PROFILER_VIEW_MEMORY or the default */
    size_t lanes_cap;   /* building: allocated lane records */
    size_t buffered;    /* building: calls held in the buffers of spilled lanes */
    size_t max_lane_calls; /* the longest lane (walk buffers are sized by it) */
    char error[512];  /* why building failed, when it did */
} view_lanes;

/* Build the lanes of the calls whose rank is selected (ranks NULL = all)
 * and whose region has region_on set (region_on NULL = all). The file must
 * have per-call events. Returns SP_OK, SP_ERR_OUT_OF_MEMORY (also when the
 * lanes' records alone pass half of the memory budget: v->error then says
 * so and names SCOPE_PROFILER_VIEW_MEMORY), SP_ERR_OUTPUT (the temporary
 * file) or a read error of the file (v->error says which); *v is always
 * safe to free afterwards. Not thread-safe (one build at a time). */
int view_lanes_build(view_lanes *v, const sp_results *res, const uint32_t *ranks,
                     size_t rank_count, const bool *region_on);
void view_lanes_free(view_lanes *v);

static inline size_t view_call_region(const view_lanes *v, const view_call *c) {
    return sp_results_row_region(v->res, c->row);
}

/* Bit length of a duration: the bin of view_lanes.duration_bins. */
unsigned view_duration_bin(uint64_t duration);

/* b - a for b >= a, exact whatever the values (no signed overflow): the
 * views measure every time from the file's origin with it. */
static inline uint64_t view_span(int64_t a, int64_t b) {
    return b > a ? (uint64_t)b - (uint64_t)a : 0;
}

/* "rank R / thread T", "rank R" for the unknown lane, and " / tree K"
 * (K = track + 1) for a lane's second and later tracks: one spelling in
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
 * A call opens under its stored parent when that parent is open on the
 * lane (else, with no parent stored, under the innermost open call that
 * contains its start). Calls that do not nest (impossible for data
 * recorded by this library, possible in foreign or damaged files) are cut
 * so every consumer sees a proper tree: a child at its parent's end, an
 * open sibling at the start of a call whose stored parent is below it;
 * each cut is counted in v->clamped. Returns 0, SP_ERR_OUT_OF_MEMORY,
 * SP_ERR_OUTPUT (the temporary file could not be read back) or a
 * callback's value. */
int view_lanes_walk(view_lanes *v, size_t lane, const view_walk_callbacks *cb, void *ctx);

#endif /* SP_CLI_VIEW_LANES_H */
