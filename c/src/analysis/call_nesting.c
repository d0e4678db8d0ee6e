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
} open_call;

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
    /* by id: pool of open calls, a free list, id -> pool index + 1
     * (linear probing), and a min-heap of pool indices by end */
    open_call *pool;
    size_t pool_count, pool_cap;
    size_t *free_list;
    size_t free_count;
    size_t *slots;
    size_t slot_cap, open_count;
    size_t *heap;
    size_t heap_len;
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
    return SP_OK;
}

void spi_call_nesting_close(spi_call_nesting *n) {
    if (!n) return;
    spi_free(n->pool);
    spi_free(n->free_list);
    spi_free(n->slots);
    spi_free(n->heap);
    for (size_t i = 0; i < n->lane_count; i++) {
        spi_free(n->lanes[i].ends);
        spi_free(n->lanes[i].depth);
    }
    spi_free(n->lanes);
    spi_free(n->lane_slots);
    spi_free(n);
}

/* ---- by id: the map of open calls ------------------------------------------ */

static size_t find_slot(const spi_call_nesting *n, int64_t id) {
    if (!n->slot_cap) return SIZE_MAX;
    for (size_t i = hash_i64(id, n->slot_cap); n->slots[i]; i = (i + 1) & (n->slot_cap - 1))
        if (n->pool[n->slots[i] - 1].id == id) return i;
    return SIZE_MAX;
}

static bool grow_slots(spi_call_nesting *n) {
    size_t cap = n->slot_cap ? 2 * n->slot_cap : 64;
    size_t *slots = spi_calloc(cap, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < n->slot_cap; i++) {
        if (!n->slots[i]) continue;
        size_t j = hash_i64(n->pool[n->slots[i] - 1].id, cap);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = n->slots[i];
    }
    spi_free(n->slots);
    n->slots = slots;
    n->slot_cap = cap;
    return true;
}

/* Linear probing's deletion: later entries of the cluster move back so
 * that no lookup stops early at the hole. */
static void remove_slot(spi_call_nesting *n, size_t i) {
    size_t mask = n->slot_cap - 1;
    n->slots[i] = 0;
    for (size_t j = (i + 1) & mask; n->slots[j]; j = (j + 1) & mask) {
        size_t home = hash_i64(n->pool[n->slots[j] - 1].id, n->slot_cap);
        bool between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (between) continue;
        n->slots[i] = n->slots[j];
        n->slots[j] = 0;
        i = j;
    }
    n->open_count--;
}

static bool heap_less(const spi_call_nesting *n, size_t a, size_t b) {
    return n->pool[n->heap[a]].end < n->pool[n->heap[b]].end;
}

static void heap_swap(size_t *heap, size_t a, size_t b) {
    size_t t = heap[a];
    heap[a] = heap[b];
    heap[b] = t;
}

/* Drop the calls that ended before `now`: nothing starting at or after
 * `now` can be inside them. */
static void expire(spi_call_nesting *n, int64_t now) {
    while (n->heap_len && n->pool[n->heap[0]].end < now) {
        size_t gone = n->heap[0];
        remove_slot(n, find_slot(n, n->pool[gone].id));
        n->free_list[n->free_count++] = gone;
        n->heap[0] = n->heap[--n->heap_len];
        for (size_t i = 0;;) {
            size_t l = 2 * i + 1, r = l + 1, best = i;
            if (l < n->heap_len && heap_less(n, l, best)) best = l;
            if (r < n->heap_len && heap_less(n, r, best)) best = r;
            if (best == i) break;
            heap_swap(n->heap, i, best);
            i = best;
        }
    }
}

static int parent_by_id(spi_call_nesting *n, const spi_merged_call *c,
                        const spi_nest_value **parent, spi_error *err) {
    expire(n, c->start);
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
    size_t slot = find_slot(n, c->parent);
    if (slot == SIZE_MAX)
        return spi_error_set(err, SP_ERR_NESTING,
                             "rank %u: region '%s' call %llu [%lld, %lld] ns has parent id "
                             "%lld, which is no call open at its start; recorded calls are "
                             "not properly nested",
                             n->rank, region_name(n->profile, c->row),
                             (unsigned long long)c->index, (long long)c->start,
                             (long long)c->end, (long long)c->parent);
    *parent = &n->pool[n->slots[slot] - 1].value;
    return SP_OK;
}

static int push_by_id(spi_call_nesting *n, const spi_merged_call *c, spi_nest_value value,
                      spi_error *err) {
    size_t slot = find_slot(n, c->id);
    if (slot != SIZE_MAX) {
        const open_call *other = &n->pool[n->slots[slot] - 1];
        return spi_error_set(err, SP_ERR_NESTING,
                             "rank %u: call id %lld is used by region '%s' call %llu and "
                             "region '%s' call %llu",
                             n->rank, (long long)c->id, region_name(n->profile, other->row),
                             (unsigned long long)other->index, region_name(n->profile, c->row),
                             (unsigned long long)c->index);
    }
    if ((n->open_count + 1) * 2 > n->slot_cap && !grow_slots(n)) return oom(err);
    size_t index;
    if (n->free_count) {
        index = n->free_list[--n->free_count];
    } else {
        if (!reserve((void **)&n->pool, &n->pool_cap, n->pool_count + 1, sizeof *n->pool))
            return oom(err);
        size_t cap = n->pool_cap, heap_cap = n->pool_cap;
        /* the free list and the heap never hold more than the pool */
        size_t *free_list = spi_reallocarray(n->free_list, cap, sizeof *free_list);
        if (!free_list) return oom(err);
        n->free_list = free_list;
        size_t *heap = spi_reallocarray(n->heap, heap_cap, sizeof *heap);
        if (!heap) return oom(err);
        n->heap = heap;
        index = n->pool_count++;
    }
    n->pool[index] = (open_call){c->id, c->start, c->end, c->row, c->index, value};
    size_t i = hash_i64(c->id, n->slot_cap);
    while (n->slots[i]) i = (i + 1) & (n->slot_cap - 1);
    n->slots[i] = index + 1;
    n->open_count++;
    size_t h = n->heap_len++;
    n->heap[h] = index;
    while (h && heap_less(n, h, (h - 1) / 2)) {
        heap_swap(n->heap, h, (h - 1) / 2);
        h = (h - 1) / 2;
    }
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
    l->depth[depth] = (open_call){c->id, c->start, c->end, c->row, c->index, value};
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
