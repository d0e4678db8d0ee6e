/*
 * view_lanes.c - see view_lanes.h.
 *
 * Building is two passes over the selected calls: count per lane, then
 * place each call's reference into its lane's slice (a counting sort), and
 * sort each slice by (start ascending, end descending), which puts a
 * parent before the children that start with it. Nesting then comes from
 * one stack walk per lane, as FORMAT.md 7.6 rebuilds it per lane, instead
 * of from the stored parent ids: those are optional (merged and foreign
 * files lack them) and containment gives the same tree whenever they exist.
 */
#include "view_lanes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* (rank, thread) packed into one key; thread + 1 so the unknown lane (-1)
 * becomes 0 and keys sort like (rank, thread). */
static uint64_t lane_key(uint32_t rank, int64_t thread) {
    return (uint64_t)rank << 32 | (uint32_t)(thread + 1);
}

typedef struct lane_map {
    uint64_t *keys; /* key + 1, 0 = empty slot */
    uint32_t *lane;
    size_t cap, used;
} lane_map;

static uint64_t hash64(uint64_t x) {
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    return x;
}

static int map_grow(lane_map *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *lane = calloc(cap, sizeof *lane);
    if (!keys || !lane) {
        free(keys);
        free(lane);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = hash64(m->keys[i]) & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        lane[j] = m->lane[i];
    }
    free(m->keys);
    free(m->lane);
    m->keys = keys;
    m->lane = lane;
    m->cap = cap;
    return SP_OK;
}

/* The lane of key, adding it as lane number m->used when new. */
static int map_lane(lane_map *m, uint64_t key, uint32_t *out) {
    if (m->used * 2 >= m->cap && map_grow(m) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    size_t j = hash64(key + 1) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != key + 1) j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) {
        m->keys[j] = key + 1;
        m->lane[j] = (uint32_t)m->used++;
    }
    *out = m->lane[j];
    return SP_OK;
}

/* qsort has no context argument in C11: the lanes being sorted are
 * reachable through this file-level pointer. Tools are single-threaded. */
static const view_lanes *sort_ctx;

static int cmp_ref(const void *pa, const void *pb) {
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    int64_t sa = view_ref_start(sort_ctx, a), sb = view_ref_start(sort_ctx, b);
    if (sa != sb) return sa < sb ? -1 : 1;
    int64_t ea = view_ref_end(sort_ctx, a), eb = view_ref_end(sort_ctx, b);
    if (ea != eb) return ea > eb ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_lane(const void *pa, const void *pb) {
    const view_lane *a = pa, *b = pb;
    uint64_t ka = lane_key(a->rank, a->thread), kb = lane_key(b->rank, b->thread);
    return ka < kb ? -1 : ka > kb;
}

typedef struct lane_order {
    uint64_t key;
    uint32_t lane;
} lane_order;

static int cmp_lane_order(const void *pa, const void *pb) {
    const lane_order *a = pa, *b = pb;
    return a->key < b->key ? -1 : a->key > b->key;
}

static bool rank_in(const uint32_t *ranks, size_t n, uint32_t rank) {
    if (!ranks || n == 0) return true;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranks[mid] == rank) return true;
        if (ranks[mid] < rank) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

/* One pass over the selected calls, finding each call's lane. Without
 * `fill` it counts the calls per lane (growing counts) and the total; with
 * it, it places each call's reference at fill[lane] and advances it. */
static int sweep(view_lanes *v, lane_map *map, const bool *row_on, uint64_t **counts,
                 size_t *counts_cap, uint64_t *fill) {
    const sp_results *res = v->res;
    for (size_t r = 0; r < sp_results_row_count(res); r++) {
        if (!row_on[r]) continue;
        uint32_t rank = sp_results_row_rank(res, r);
        const int64_t *tids = sp_results_row_thread_ids(res, r);
        uint64_t calls = sp_results_row_calls(res, r);
        for (uint64_t k = 0; k < calls; k++) {
            uint32_t lane;
            if (map_lane(map, lane_key(rank, tids ? tids[k] : -1), &lane) != SP_OK)
                return SP_ERR_OUT_OF_MEMORY;
            if (fill) {
                v->refs[fill[lane]++] = (uint64_t)r << 32 | k;
                continue;
            }
            if (lane >= *counts_cap) {
                size_t cap = *counts_cap ? *counts_cap * 2 : 16;
                uint64_t *grown = realloc(*counts, cap * sizeof *grown);
                if (!grown) return SP_ERR_OUT_OF_MEMORY;
                memset(grown + *counts_cap, 0, (cap - *counts_cap) * sizeof *grown);
                *counts = grown;
                *counts_cap = cap;
            }
            (*counts)[lane]++;
            v->ref_count++;
            if (v->ends[r][k] > v->end_max || v->ref_count == 1) v->end_max = v->ends[r][k];
        }
    }
    return SP_OK;
}

int view_lanes_build(view_lanes *v, const sp_results *res, const uint32_t *ranks,
                     size_t rank_count, const bool *region_on) {
    memset(v, 0, sizeof *v);
    v->res = res;
    size_t rows = sp_results_row_count(res);
    v->starts = calloc(rows + 1, sizeof *v->starts);
    v->ends = calloc(rows + 1, sizeof *v->ends);
    bool *row_on = calloc(rows + 1, sizeof *row_on);
    lane_map map = {0};
    uint64_t *counts = NULL;
    int st = SP_ERR_OUT_OF_MEMORY;
    if (!v->starts || !v->ends || !row_on) goto done;

    bool have_origin = false;
    for (size_t r = 0; r < rows; r++) {
        uint64_t calls = sp_results_row_calls(res, r);
        v->starts[r] = sp_results_row_starts(res, r);
        v->ends[r] = sp_results_row_ends(res, r);
        if (!v->starts[r] || !v->ends[r]) continue;
        /* The origin is the earliest start of the whole file, so a
         * filtered view lines up with an unfiltered one. */
        for (uint64_t k = 0; k < calls; k++)
            if (!have_origin || v->starts[r][k] < v->origin) {
                v->origin = v->starts[r][k];
                have_origin = true;
            }
        row_on[r] = calls > 0 && calls <= 0xffffffffu &&
                    rank_in(ranks, rank_count, sp_results_row_rank(res, r)) &&
                    (!region_on || region_on[sp_results_row_region(res, r)]);
    }

    /* Pass 1: lanes and their sizes. */
    size_t counts_cap = 0;
    if (sweep(v, &map, row_on, &counts, &counts_cap, NULL) != SP_OK) goto done;
    v->lane_count = map.used;
    v->lanes = calloc(v->lane_count + 1, sizeof *v->lanes);
    v->refs = malloc((v->ref_count + 1) * sizeof *v->refs);
    if (!v->lanes || !v->refs) goto done;
    for (size_t i = 0; i < map.cap; i++) {
        if (!map.keys[i]) continue;
        uint64_t key = map.keys[i] - 1;
        view_lane *l = &v->lanes[map.lane[i]];
        l->rank = (uint32_t)(key >> 32);
        l->thread = (int64_t)(key & 0xffffffffu) - 1;
        l->count = counts[map.lane[i]];
    }
    /* Slices in (rank, thread) order; the map keeps the numbering of pass
     * 1, so remember each lane's slice start by its old number. */
    uint64_t *fill = calloc(v->lane_count + 1, sizeof *fill);
    if (!fill) goto done;
    {
        /* (key, lane number) pairs sorted by key: a file can have one lane
         * per rank for 10^5 ranks, so no insertion sort here. */
        lane_order *order = malloc((v->lane_count + 1) * sizeof *order);
        if (!order) {
            free(fill);
            goto done;
        }
        for (uint32_t i = 0; i < v->lane_count; i++)
            order[i] = (lane_order){lane_key(v->lanes[i].rank, v->lanes[i].thread), i};
        qsort(order, v->lane_count, sizeof *order, cmp_lane_order);
        size_t pos = 0;
        for (size_t i = 0; i < v->lane_count; i++) {
            fill[order[i].lane] = pos;
            pos += v->lanes[order[i].lane].count;
        }
        for (size_t i = 0; i < v->lane_count; i++) v->lanes[i].first = fill[i];
        free(order);
    }
    /* Pass 2: place the references (every lane is known: no growth). */
    sweep(v, &map, row_on, NULL, NULL, fill);
    free(fill);
    qsort(v->lanes, v->lane_count, sizeof *v->lanes, cmp_lane);
    sort_ctx = v;
    for (size_t i = 0; i < v->lane_count; i++) {
        uint64_t *slice = v->refs + v->lanes[i].first;
        size_t n = v->lanes[i].count;
        bool sorted = true;
        for (size_t k = 1; k < n && sorted; k++) sorted = cmp_ref(&slice[k - 1], &slice[k]) < 0;
        if (!sorted) qsort(slice, n, sizeof *slice, cmp_ref);
    }
    sort_ctx = NULL;
    st = SP_OK;
done:
    free(map.keys);
    free(map.lane);
    free(counts);
    free(row_on);
    return st;
}

void view_lanes_free(view_lanes *v) {
    free(v->lanes);
    free(v->refs);
    free(v->starts);
    free(v->ends);
    memset(v, 0, sizeof *v);
}

void view_lane_label(const view_lane *l, char *buf, size_t len) {
    if (l->thread >= 0) snprintf(buf, len, "rank %u / thread %lld", l->rank, (long long)l->thread);
    else snprintf(buf, len, "rank %u", l->rank);
}

typedef struct open_call {
    uint64_t ref;
    int64_t end;
} open_call;

int view_lanes_walk(view_lanes *v, size_t lane, const view_walk_callbacks *cb, void *ctx) {
    const view_lane *l = &v->lanes[lane];
    size_t cap = 64, depth = 0;
    open_call *stack = malloc(cap * sizeof *stack);
    if (!stack) return SP_ERR_OUT_OF_MEMORY;
    int rc = 0;
    for (size_t i = 0; i < l->count && !rc; i++) {
        uint64_t ref = v->refs[l->first + i];
        int64_t start = view_ref_start(v, ref), end = view_ref_end(v, ref);
        if (end < start) end = start;
        while (depth > 0 && stack[depth - 1].end <= start && !rc) {
            depth--;
            if (cb->close) rc = cb->close(ctx, stack[depth].ref, (unsigned)depth, stack[depth].end);
        }
        if (rc) break;
        if (depth > 0 && end > stack[depth - 1].end) {
            end = stack[depth - 1].end;
            v->clamped++;
        }
        if (depth == cap) {
            open_call *grown = realloc(stack, 2 * cap * sizeof *stack);
            if (!grown) {
                rc = SP_ERR_OUT_OF_MEMORY;
                break;
            }
            stack = grown;
            cap *= 2;
        }
        if (cb->open) rc = cb->open(ctx, ref, (unsigned)depth, start);
        stack[depth].ref = ref;
        stack[depth].end = end;
        depth++;
    }
    while (depth > 0 && !rc) {
        depth--;
        if (cb->close) rc = cb->close(ctx, stack[depth].ref, (unsigned)depth, stack[depth].end);
    }
    free(stack);
    return rc;
}
