/*
 * calltree.c - one rank's call tree, from stored ids or from containment.
 *
 * Containment follows FORMAT.md 7.6 step by step so that the exclusive
 * totals are bit-identical to what the reference package stores: sort by
 * start (later end first on ties), double every timestamp and lengthen
 * zero-length calls by one tick, depth = sorted position minus the number
 * of adjusted ends <= the start, parent = nearest earlier call one level
 * up. Doubling is what lets a zero-length call nest inside a call that
 * starts at the same instant without touching a sibling that ended there.
 * The one extension is lanes: calls are grouped by lane first, so threads
 * never nest inside each other.
 */
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "analysis/calltree.h"

typedef struct call_key {
    int64_t lane;
    int64_t start;
    int64_t end;
    int64_t id;       /* call id in id mode */
    size_t row;
    uint64_t call;
} call_key;

static int cmp_by_time(const void *a, const void *b) {
    const call_key *x = a, *y = b;
    if (x->lane != y->lane) return x->lane < y->lane ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;  /* parents first */
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return x->call < y->call ? -1 : (x->call > y->call);
}

static int cmp_by_id(const void *a, const void *b) {
    const call_key *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

bool spi_rank_tree_possible(const spi_profile *profile) {
    return profile && !profile->summary_only && !profile->aggregate;
}

void spi_rank_tree_free(spi_rank_tree *tree) {
    if (!tree) return;
    spi_free(tree->rows);
    spi_free(tree->calls);
    spi_free(tree->parent);
    spi_free(tree->exclusive);
    spi_free(tree->lane);
    memset(tree, 0, sizeof *tree);
}

static int64_t lane_of(const spi_row *row, uint64_t i) {
    if (row->task_ids && row->task_ids[i] >= 0) return row->task_ids[i];
    if (row->thread_ids && row->thread_ids[i] >= 0) return -2 - row->thread_ids[i];
    return -1;
}

static const char *region_name(const spi_profile *profile, size_t row) {
    uint32_t region = profile->rows[row].region;
    return region < profile->name_count && profile->names[region] ? profile->names[region] : "?";
}

/* Index of `id` among keys sorted by id, or -1. */
static int64_t find_id(const call_key *keys, size_t n, int64_t id) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && keys[lo].id == id ? (int64_t)lo : -1;
}

static int nest_by_ids(spi_rank_tree *tree, const spi_profile *profile, call_key *keys,
                       spi_error *err) {
    size_t n = tree->call_count;
    qsort(keys, n, sizeof *keys, cmp_by_id);
    for (size_t i = 1; i < n; i++) {
        if (keys[i].id == keys[i - 1].id)
            return spi_error_set(err, SP_ERR_NESTING,
                                 "rank %u: call id %lld is used by region '%s' call %llu and "
                                 "region '%s' call %llu",
                                 tree->rank, (long long)keys[i].id,
                                 region_name(profile, keys[i - 1].row),
                                 (unsigned long long)keys[i - 1].call,
                                 region_name(profile, keys[i].row), (unsigned long long)keys[i].call);
    }
    for (size_t i = 0; i < n; i++) {
        const spi_row *row = &profile->rows[keys[i].row];
        int64_t pid = row->parent_ids[keys[i].call];
        int64_t p = -1;
        if (pid >= 0) {
            /* A parent id always precedes its child; anything else would
             * allow a cycle, so it is a damaged tree, not a root. */
            if (pid >= keys[i].id)
                return spi_error_set(err, SP_ERR_NESTING,
                                     "rank %u: region '%s' call %llu has parent id %lld, not "
                                     "smaller than its own id %lld",
                                     tree->rank, region_name(profile, keys[i].row),
                                     (unsigned long long)keys[i].call, (long long)pid,
                                     (long long)keys[i].id);
            /* A parent that was never stored (still open at finalize and
             * dropped) makes the call a root, as the recorder does. */
            p = find_id(keys, n, pid);
        }
        tree->parent[i] = p;
    }
    return SP_OK;
}

static int nesting_error(spi_error *err, const spi_profile *profile, uint32_t rank,
                         const call_key *child, const call_key *parent) {
    return spi_error_set(err, SP_ERR_NESTING,
                         "rank %u: region '%s' call %llu [%lld, %lld] ns overlaps region '%s' "
                         "call %llu [%lld, %lld] ns that encloses its start; recorded calls "
                         "are not properly nested",
                         rank, region_name(profile, child->row), (unsigned long long)child->call,
                         (long long)child->start, (long long)child->end,
                         region_name(profile, parent->row), (unsigned long long)parent->call,
                         (long long)parent->start, (long long)parent->end);
}

/* FORMAT.md 7.6 within each lane; keys sorted by (lane, start, -end). */
static int nest_by_containment(spi_rank_tree *tree, const spi_profile *profile, call_key *keys,
                               spi_error *err) {
    size_t n = tree->call_count;
    /* Doubling must not overflow; real monotonic clocks are far below. */
    const int64_t limit = INT64_MAX / 4;
    for (size_t i = 0; i < n; i++) {
        if (keys[i].end < keys[i].start)
            return spi_error_set(err, SP_ERR_NESTING,
                                 "rank %u: region '%s' call %llu ends before it starts",
                                 tree->rank, region_name(profile, keys[i].row),
                                 (unsigned long long)keys[i].call);
        if (keys[i].start < -limit || keys[i].end > limit)
            return spi_error_set(err, SP_ERR_NESTING,
                                 "rank %u: region '%s' call %llu has a timestamp out of range",
                                 tree->rank, region_name(profile, keys[i].row),
                                 (unsigned long long)keys[i].call);
    }
    qsort(keys, n, sizeof *keys, cmp_by_time);

    int64_t *ends = spi_calloc(n ? n : 1, sizeof *ends);
    int64_t *at_depth = spi_calloc(n ? n : 1, sizeof *at_depth);
    if (!ends || !at_depth) {
        spi_free(ends);
        spi_free(at_depth);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory building the call tree");
    }
    int status = SP_OK;
    for (size_t a = 0; a < n && status == SP_OK;) {
        size_t b = a;
        while (b < n && keys[b].lane == keys[a].lane) b++;
        size_t len = b - a;
        for (size_t i = 0; i < len; i++) {
            const call_key *k = &keys[a + i];
            ends[i] = k->end == k->start ? 2 * k->start + 1 : 2 * k->end;
        }
        qsort(ends, len, sizeof *ends, cmp_i64);
        int64_t top = -1;  /* deepest level currently in at_depth */
        for (size_t i = 0; i < len; i++) {
            const call_key *k = &keys[a + i];
            int64_t start2 = 2 * k->start;
            size_t lo = 0, hi = len;  /* number of ends <= start2 */
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (ends[mid] <= start2) lo = mid + 1;
                else hi = mid;
            }
            int64_t depth = (int64_t)i - (int64_t)lo;
            if (depth < 0 || depth > top + 1) {
                status = spi_error_set(err, SP_ERR_NESTING,
                                       "rank %u: region '%s' call %llu: recorded calls are not "
                                       "properly nested",
                                       tree->rank, region_name(profile, k->row),
                                       (unsigned long long)k->call);
                break;
            }
            int64_t parent = depth == 0 ? -1 : at_depth[depth - 1];
            if (parent >= 0 && k->end > keys[parent].end) {
                status = nesting_error(err, profile, tree->rank, k, &keys[parent]);
                break;
            }
            tree->parent[a + i] = parent;
            at_depth[depth] = (int64_t)(a + i);
            top = depth;
        }
        a = b;
    }
    spi_free(ends);
    spi_free(at_depth);
    return status;
}

int spi_rank_tree_build(spi_rank_tree *tree, const spi_profile *profile, uint32_t rank,
                        spi_error *err) {
    size_t count = 0;
    for (size_t r = 0; r < profile->row_count; r++) count += profile->rows[r].rank == rank;
    size_t *rows = spi_calloc(count ? count : 1, sizeof *rows);
    if (!rows) {
        memset(tree, 0, sizeof *tree);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory building the call tree");
    }
    size_t k = 0;
    for (size_t r = 0; r < profile->row_count; r++)
        if (profile->rows[r].rank == rank) rows[k++] = r;
    int status = spi_rank_tree_build_rows(tree, profile, rank, rows, count, err);
    spi_free(rows);
    return status;
}

int spi_rank_tree_build_rows(spi_rank_tree *tree, const spi_profile *profile, uint32_t rank,
                             const size_t *row_list, size_t row_count, spi_error *err) {
    memset(tree, 0, sizeof *tree);
    tree->rank = rank;
    size_t n = 0;
    bool have_ids = true;
    for (size_t j = 0; j < row_count; j++) {
        const spi_row *row = &profile->rows[row_list[j]];
        if (row->rank != rank || row->count == 0 || !row->starts || !row->durations) continue;
        n += (size_t)row->count;
        if (!row->call_ids || !row->parent_ids) have_ids = false;
    }
    tree->call_count = n;
    size_t cap = n ? n : 1;
    call_key *keys = spi_calloc(cap, sizeof *keys);
    tree->rows = spi_calloc(cap, sizeof *tree->rows);
    tree->calls = spi_calloc(cap, sizeof *tree->calls);
    tree->parent = spi_calloc(cap, sizeof *tree->parent);
    tree->exclusive = spi_calloc(cap, sizeof *tree->exclusive);
    tree->lane = spi_calloc(cap, sizeof *tree->lane);
    if (!keys || !tree->rows || !tree->calls || !tree->parent || !tree->exclusive || !tree->lane) {
        spi_free(keys);
        spi_rank_tree_free(tree);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory building the call tree");
    }
    size_t k = 0;
    int status = SP_OK;
    for (size_t j = 0; j < row_count && status == SP_OK; j++) {
        size_t r = row_list[j];
        const spi_row *row = &profile->rows[r];
        if (row->rank != rank || row->count == 0 || !row->starts || !row->durations) continue;
        for (uint64_t i = 0; i < row->count; i++, k++) {
            keys[k].lane = lane_of(row, i);
            keys[k].start = row->starts[i];
            /* A damaged file can hold any start and duration: an end past
             * INT64_MAX is refused here, once, so no caller (the exclusive
             * sums below, the summary's pooling) ever overflows. */
            if (row->durations[i] < 0 ||
                __builtin_add_overflow(row->starts[i], row->durations[i], &keys[k].end)) {
                status = spi_error_set(err, SP_ERR_NESTING,
                                       "rank %u: region '%s' call %llu has a timestamp or "
                                       "duration out of range",
                                       rank, region_name(profile, r), (unsigned long long)i);
                break;
            }
            keys[k].id = have_ids ? row->call_ids[i] : 0;
            keys[k].row = r;
            keys[k].call = i;
        }
    }
    if (status == SP_OK)
        status = have_ids ? nest_by_ids(tree, profile, keys, err)
                           : nest_by_containment(tree, profile, keys, err);
    if (status == SP_OK) {
        for (size_t i = 0; i < n; i++) {
            tree->rows[i] = keys[i].row;
            tree->calls[i] = keys[i].call;
            tree->lane[i] = keys[i].lane;
            tree->exclusive[i] = keys[i].end - keys[i].start;
        }
        /* A child on another known thread (an OpenMP worker's call under
         * the call that forked its team) ran alongside its parent, not
         * inside the parent's own work: it does not reduce the parent's
         * exclusive time. An unknown lane (-1) counts as the parent's.
         * Stored ids do not promise that children fit in their parent, so
         * the subtraction saturates instead of wrapping. */
        for (size_t i = 0; i < n; i++) {
            int64_t p = tree->parent[i];
            if (p < 0) continue;
            bool concurrent = keys[i].lane != -1 && keys[p].lane != -1 &&
                              keys[i].lane != keys[p].lane;
            if (concurrent) continue;
            if (__builtin_sub_overflow(tree->exclusive[p], keys[i].end - keys[i].start,
                                       &tree->exclusive[p]))
                tree->exclusive[p] = INT64_MIN;
        }
    }
    spi_free(keys);
    if (status != SP_OK) spi_rank_tree_free(tree);
    return status;
}
