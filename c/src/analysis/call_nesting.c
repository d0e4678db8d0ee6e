/*
 * call_nesting.c - parents of a rank's calls from the calls still open
 * (call_nesting.h). The messages are calltree.c's, so a file that does not
 * nest is reported the same way whichever builds its tree.
 */
#include "analysis/call_nesting.h"

#include <string.h>

#include "util/alloc.h"

/* An open call: by id, a map entry; by containment, the last call of a
 * depth in its lane. */
typedef struct open_call {
    int64_t id, start, end;
    size_t row;
    uint64_t index;
    spi_nest_value value;
    /* by id: the index of its parent's entry when it was pushed
     * (SIZE_MAX: a root), which may since hold another call: see
     * find_open */
    size_t up;
} open_call;

/* Lanes whose last pushed call a by-id nesting remembers (a direct-mapped
 * table indexed by the lane). */
#define LANE_MEMO 8u
/* Steps find_open walks up from a lane's last call before the map. */
#define UP_STEPS 8

typedef struct lane_state {
    int64_t lane;
    int64_t *ends;            /* min-heap of doubled ends still past "now" */
    size_t end_count, end_cap;
    open_call *depth;         /* [d]: the last call of depth d */
    size_t depth_cap;
    int64_t top;              /* depth of the lane's previous call, -1 */
} lane_state;

struct spi_call_nesting {
    const spi_profile *profile;
    uint32_t rank;
    bool by_id;
    /* by id: the calls pushed (dense, in push order) and id -> call index
     * + 1 (linear probing, no deletion). A call is open while its end is
     * not before `now`, the start of the call being placed (the merge's
     * time never goes back, so a call that closed stays closed); closed
     * calls stay until the calls fill half the index, when the open ones
     * are compacted and the index rebuilt (sweep), which leaves it at
     * most an eighth full: constant work per call, no per-call expiry.
     * Each id has at most one entry (a closed one is reused by its id). */
    open_call *calls;
    size_t call_count;
    size_t *slots;
    size_t slot_cap;
    int64_t now;
    /* the call index + 1 of each lane's last pushed call, and the parent
     * entry found by the pending parent query (SIZE_MAX: none) */
    int64_t memo_lane[LANE_MEMO];
    size_t memo_last[LANE_MEMO];
    size_t pending_up;
    /* by containment: the lanes, lane -> index + 1, and the pending push */
    lane_state *lanes;
    size_t lane_count, lane_cap;
    size_t *lane_slots;
    size_t lane_slot_cap;
    size_t pending_lane, pending_depth;
};

static int oom(spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory building the call tree");
}

static const char *region_name(const spi_profile *p, size_t row) {
    uint32_t region = p->rows[row].region;
    return region < p->name_count && p->names[region] ? p->names[region] : "?";
}

static size_t hash_i64(int64_t key, size_t cap) {
    uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

/* Grow ++*cap-style arrays: *array of *cap elements to at least need. */
static bool reserve(void **array, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t grown = *cap ? 2 * *cap : 16;
    while (grown < need) grown *= 2;
    void *p = spi_reallocarray(*array, grown, size);
    if (!p) return false;
    *array = p;
    *cap = grown;
    return true;
}

int spi_call_nesting_open(spi_call_nesting **out, const spi_profile *profile, uint32_t rank,
                          bool by_id, spi_error *err) {
    *out = spi_calloc(1, sizeof **out);
    if (!*out) return oom(err);
    (*out)->profile = profile;
    (*out)->rank = rank;
    (*out)->by_id = by_id;
    (*out)->pending_up = SIZE_MAX;
    return SP_OK;
}

void spi_call_nesting_close(spi_call_nesting *n) {
    if (!n) return;
    spi_free(n->calls);
    spi_free(n->slots);
    for (size_t i = 0; i < n->lane_count; i++) {
        spi_free(n->lanes[i].ends);
        spi_free(n->lanes[i].depth);
    }
    spi_free(n->lanes);
    spi_free(n->lane_slots);
    spi_free(n);
}

/* ---- by id: the pushed calls and their index ------------------------------ */

/* The slot of id's entry, or of the empty slot where it would go. */
static size_t probe(const spi_call_nesting *n, int64_t id) {
    size_t i = hash_i64(id, n->slot_cap);
    while (n->slots[i] && n->calls[n->slots[i] - 1].id != id) i = (i + 1) & (n->slot_cap - 1);
    return i;
}

/* The open calls moved to the front and the index rebuilt with room for
 * `need` more (an index at least 8 x the calls kept, so at least 3/8 of
 * its slots are pushed before the next sweep). Entry numbers change: the
 * lane memos and parent links are dropped. */
static bool sweep(spi_call_nesting *n, size_t need) {
    size_t open = 0;
    for (size_t i = 0; i < n->call_count; i++)
        if (n->calls[i].end >= n->now) n->calls[open++] = n->calls[i];
    size_t cap = 64;
    while (cap < 8 * (open + need)) cap *= 2;
    if (cap != n->slot_cap) {
        size_t *slots = spi_reallocarray(n->slots, cap, sizeof *slots);
        open_call *calls = spi_reallocarray(n->calls, cap / 2, sizeof *calls);
        if (slots) n->slots = slots;
        if (calls) n->calls = calls;
        if (!slots || !calls) return false;
        n->slot_cap = cap;
    }
    memset(n->slots, 0, n->slot_cap * sizeof *n->slots);
    n->call_count = open;
    for (size_t i = 0; i < open; i++) {
        n->calls[i].up = SIZE_MAX;
        n->slots[probe(n, n->calls[i].id)] = i + 1;
    }
    memset(n->memo_last, 0, sizeof n->memo_last);
    n->pending_up = SIZE_MAX;
    return true;
}

/* The index of the open call with id `id`, as the index finds it, but
 * first along the lane's last call and its ancestors: a call's parent is
 * almost always one of those, and an open entry with that id is the one
 * entry held for it. SIZE_MAX when no open call has it. */
static size_t find_open(const spi_call_nesting *n, int64_t lane, int64_t id) {
    if (!n->slot_cap) return SIZE_MAX;
    unsigned k = (unsigned)((uint64_t)lane % LANE_MEMO);
    if (n->memo_last[k] && n->memo_lane[k] == lane) {
        size_t at = n->memo_last[k] - 1;
        for (int step = 0; step < UP_STEPS && at < n->call_count; step++) {
            const open_call *e = &n->calls[at];
            if (e->id == id) return e->end >= n->now ? at : SIZE_MAX;
            at = e->up;
        }
    }
    size_t slot = n->slots[probe(n, id)];
    return slot && n->calls[slot - 1].end >= n->now ? slot - 1 : SIZE_MAX;
}

static int parent_by_id(spi_call_nesting *n, const spi_merged_call *c,
                        const spi_nest_value **parent, spi_error *err) {
    /* Calls that ended before this start are closed from here on:
     * nothing starting at or after it can be inside them. */
    n->now = c->start;
    n->pending_up = SIZE_MAX;
    if (c->parent < 0) return SP_OK;
    /* A parent id always precedes its child; anything else would allow a
     * cycle, so it is a damaged tree, not a root. */
    if (c->parent >= c->id)
        return spi_error_set(err, SP_ERR_NESTING,
                             "rank %u: region '%s' call %llu has parent id %lld, not smaller "
                             "than its own id %lld",
                             n->rank, region_name(n->profile, c->row),
                             (unsigned long long)c->index, (long long)c->parent,
                             (long long)c->id);
    size_t at = find_open(n, c->lane, c->parent);
    if (at == SIZE_MAX)
        return spi_error_set(err, SP_ERR_NESTING,
                             "rank %u: region '%s' call %llu [%lld, %lld] ns has parent id "
                             "%lld, which is no call open at its start; recorded calls are "
                             "not properly nested",
                             n->rank, region_name(n->profile, c->row),
                             (unsigned long long)c->index, (long long)c->start,
                             (long long)c->end, (long long)c->parent);
    n->pending_up = at;
    *parent = &n->calls[at].value;
    return SP_OK;
}

static int push_by_id(spi_call_nesting *n, const spi_merged_call *c, spi_nest_value value,
                      spi_error *err) {
    size_t slot = SIZE_MAX;
    if (n->slot_cap) {
        slot = probe(n, c->id);
        const open_call *other = n->slots[slot] ? &n->calls[n->slots[slot] - 1] : NULL;
        if (other && other->end >= n->now)
            return spi_error_set(err, SP_ERR_NESTING,
                                 "rank %u: call id %lld is used by region '%s' call %llu and "
                                 "region '%s' call %llu",
                                 n->rank, (long long)c->id, region_name(n->profile, other->row),
                                 (unsigned long long)other->index,
                                 region_name(n->profile, c->row), (unsigned long long)c->index);
    }
    /* A closed entry of the same id is taken over; a new one may need a
     * sweep first (which renumbers the entries: probe again). */
    if (slot == SIZE_MAX || (!n->slots[slot] && 2 * (n->call_count + 1) > n->slot_cap)) {
        if (!sweep(n, 1)) return oom(err);
        slot = probe(n, c->id);
    }
    if (!n->slots[slot]) n->slots[slot] = ++n->call_count;
    size_t at = n->slots[slot] - 1;
    n->calls[at] = (open_call){c->id, c->start, c->end, c->row, c->index, value, n->pending_up};
    unsigned k = (unsigned)((uint64_t)c->lane % LANE_MEMO);
    n->memo_lane[k] = c->lane;
    n->memo_last[k] = at + 1;
    return SP_OK;
}

/* ---- by containment: per lane ---------------------------------------------- */

static lane_state *lane_of(spi_call_nesting *n, int64_t lane, size_t *index) {
    if (n->lane_slot_cap) {
        for (size_t i = hash_i64(lane, n->lane_slot_cap); n->lane_slots[i];
             i = (i + 1) & (n->lane_slot_cap - 1))
            if (n->lanes[n->lane_slots[i] - 1].lane == lane) {
                *index = n->lane_slots[i] - 1;
                return &n->lanes[*index];
            }
    }
    if ((n->lane_count + 1) * 2 > n->lane_slot_cap) {
        size_t cap = n->lane_slot_cap ? 2 * n->lane_slot_cap : 16;
        size_t *slots = spi_calloc(cap, sizeof *slots);
        if (!slots) return NULL;
        for (size_t i = 0; i < n->lane_count; i++) {
            size_t j = hash_i64(n->lanes[i].lane, cap);
            while (slots[j]) j = (j + 1) & (cap - 1);
            slots[j] = i + 1;
        }
        spi_free(n->lane_slots);
        n->lane_slots = slots;
        n->lane_slot_cap = cap;
    }
    if (!reserve((void **)&n->lanes, &n->lane_cap, n->lane_count + 1, sizeof *n->lanes))
        return NULL;
    *index = n->lane_count++;
    n->lanes[*index] = (lane_state){.lane = lane, .top = -1};
    size_t i = hash_i64(lane, n->lane_slot_cap);
    while (n->lane_slots[i]) i = (i + 1) & (n->lane_slot_cap - 1);
    n->lane_slots[i] = *index + 1;
    return &n->lanes[*index];
}

static void ends_pop(lane_state *l) {
    l->ends[0] = l->ends[--l->end_count];
    for (size_t i = 0;;) {
        size_t a = 2 * i + 1, b = a + 1, best = i;
        if (a < l->end_count && l->ends[a] < l->ends[best]) best = a;
        if (b < l->end_count && l->ends[b] < l->ends[best]) best = b;
        if (best == i) return;
        int64_t t = l->ends[i];
        l->ends[i] = l->ends[best];
        l->ends[best] = t;
        i = best;
    }
}

static int parent_by_containment(spi_call_nesting *n, const spi_merged_call *c,
                                 const spi_nest_value **parent, spi_error *err) {
    /* Doubling must not overflow; real monotonic clocks are far below. */
    const int64_t limit = INT64_MAX / 4;
    if (c->start < -limit || c->end > limit)
        return spi_error_set(err, SP_ERR_NESTING,
                             "rank %u: region '%s' call %llu has a timestamp out of range",
                             n->rank, region_name(n->profile, c->row),
                             (unsigned long long)c->index);
    size_t index;
    lane_state *l = lane_of(n, c->lane, &index);
    if (!l) return oom(err);
    int64_t start2 = 2 * c->start;
    while (l->end_count && l->ends[0] <= start2) ends_pop(l);
    size_t depth = l->end_count;
    if ((int64_t)depth > l->top + 1)
        return spi_error_set(err, SP_ERR_NESTING,
                             "rank %u: region '%s' call %llu: recorded calls are not properly "
                             "nested",
                             n->rank, region_name(n->profile, c->row),
                             (unsigned long long)c->index);
    if (depth) {
        const open_call *p = &l->depth[depth - 1];
        if (c->end > p->end)
            return spi_error_set(err, SP_ERR_NESTING,
                                 "rank %u: region '%s' call %llu [%lld, %lld] ns overlaps "
                                 "region '%s' call %llu [%lld, %lld] ns that encloses its "
                                 "start; recorded calls are not properly nested",
                                 n->rank, region_name(n->profile, c->row),
                                 (unsigned long long)c->index, (long long)c->start,
                                 (long long)c->end, region_name(n->profile, p->row),
                                 (unsigned long long)p->index, (long long)p->start,
                                 (long long)p->end);
        *parent = &p->value;
    }
    n->pending_lane = index;
    n->pending_depth = depth;
    return SP_OK;
}

static int push_by_containment(spi_call_nesting *n, const spi_merged_call *c,
                               spi_nest_value value, spi_error *err) {
    lane_state *l = &n->lanes[n->pending_lane];
    size_t depth = n->pending_depth;
    if (!reserve((void **)&l->depth, &l->depth_cap, depth + 1, sizeof *l->depth) ||
        !reserve((void **)&l->ends, &l->end_cap, l->end_count + 1, sizeof *l->ends))
        return oom(err);
    l->depth[depth] = (open_call){c->id, c->start, c->end, c->row, c->index, value, 0};
    l->top = (int64_t)depth;
    /* A zero-length call is lengthened by one tick so that it nests inside
     * a call starting at the same instant (FORMAT.md 7.6). */
    int64_t end2 = c->end == c->start ? 2 * c->start + 1 : 2 * c->end;
    size_t h = l->end_count++;
    l->ends[h] = end2;
    while (h && l->ends[h] < l->ends[(h - 1) / 2]) {
        int64_t t = l->ends[h];
        l->ends[h] = l->ends[(h - 1) / 2];
        l->ends[(h - 1) / 2] = t;
        h = (h - 1) / 2;
    }
    return SP_OK;
}

int spi_call_nesting_parent(spi_call_nesting *n, const spi_merged_call *c,
                            const spi_nest_value **parent, spi_error *err) {
    *parent = NULL;
    return n->by_id ? parent_by_id(n, c, parent, err) : parent_by_containment(n, c, parent, err);
}

int spi_call_nesting_push(spi_call_nesting *n, const spi_merged_call *c, spi_nest_value value,
                          spi_error *err) {
    return n->by_id ? push_by_id(n, c, value, err) : push_by_containment(n, c, value, err);
}
