/*
 * call_paths.c - a profile's calls folded into pooled call paths, rank by
 * rank, one walk per rank over its calls in time order (call_paths.h).
 *
 * Pieces: call_merge.h delivers a rank's calls in an order where parents
 * come first, call_nesting.h names each call's parent among the calls
 * still open, and this file places the call on its path and adds it to the
 * path's accumulators. Per rank, the paths it touched keep running values
 * (their total, exclusive time and the interval run of the coverage union)
 * that are folded into the pooled values when the rank ends.
 */
#include "util/sat_math.h"
#include "analysis/call_paths.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/sort.h"
#include "profile/call_cursor.h"
#include "analysis/call_merge.h"
#include "analysis/call_nesting.h"
#include "analysis/duration_sketch.h"
#include "analysis/stats.h"

/* Streamed mean/min/max of per-rank totals and spi_imbalance's inputs, in
 * rank order, so the values are bit for bit those of the arrays they
 * replace (summary_rows.c's rank_spread over the totals of each rank). */
typedef struct spread_acc {
    uint32_t ranks;
    double sum;
    int64_t lo, hi;
    size_t kept;              /* totals > 0 */
    double kept_sum, kept_max;
} spread_acc;

/* A call's place in the order calltree.c visited a rank's calls. */
typedef struct node_key {
    uint32_t rank;
    bool by_id;
    int64_t lane, start, end, id;
    size_t row;
    uint64_t index;
} node_key;

/* Memo slots per path (call_paths.c's node). */
#define SPI_PATH_MEMO 4u

typedef struct node {
    long parent;
    uint32_t region;
    int depth;
    bool recursive;
    uint64_t count, recursions;
    int64_t total, exclusive, minimum, maximum, start_min, end_max;
    double mean, m2;          /* Welford over the durations */
    int64_t first_start, first_end, first_duration;
    uint32_t first_rank;
    int64_t last_start, last_end, last_duration;
    uint32_t last_rank;
    int64_t coverage;
    uint32_t ranks, lowest_rank;
    spi_durations durations;
    spread_acc inclusive, exclusive_spread;
    /* The path's place in the output: its first call in the order the
     * call tree visited calls (rank, then id, or lane, start, longer
     * first, row, index), so the paths come out as the tree numbered them
     * and siblings that tie keep their order in the table. */
    node_key first_key;
    uint32_t threads;         /* (rank, thread) pairs that ran it */
    int64_t other_threads;
    /* the rank being walked */
    bool in_rank;
    int64_t rank_total, rank_exclusive, run_start, run_end;
    /* Memos of the last lookups through this path (0 = none), so a loop
     * over the same regions pays a compare instead of a hash probe per
     * call: per region modulo SPI_PATH_MEMO the child path found last
     * (index + 1), and per thread modulo SPI_PATH_MEMO the (path, thread)
     * row found last (index + 1 into the rank's rows, checked against the
     * row before use, since rows restart each rank). Several slots, as the
     * children of one path (and the threads of one rank) take turns. */
    size_t memo_child[SPI_PATH_MEMO];
    uint32_t memo_region[SPI_PATH_MEMO];
    size_t memo_thread_row[SPI_PATH_MEMO];
} node;

typedef struct walker {
    const spi_profile *profile;
    const bool *visible;
    node *nodes;
    size_t node_count, node_cap;
    long *hash;               /* node index + 1, 0 = empty */
    size_t hash_cap;
    size_t *touched;          /* nodes of the rank being walked */
    size_t touched_count, touched_cap;
    spi_duration_budget budget;
    size_t root_memo[SPI_PATH_MEMO]; /* child_get's memo for roots */
    uint32_t root_memo_region[SPI_PATH_MEMO];
    /* The rank's (path, thread) rows, keyed in `lanes` (row index + 1, 0 =
     * empty): each row counts a thread for its path when the rank ends,
     * and is kept in `kept` when the caller wants them. */
    spi_path_thread *thread_rows;
    size_t thread_row_count, thread_row_cap;
    size_t *lanes;
    size_t lanes_cap;
    bool keep_threads;
    spi_path_thread *kept;
    size_t kept_count, kept_cap;
    spi_error *err;
} walker;

static int oom(walker *w) {
    return spi_error_set(w->err, SP_ERR_OUT_OF_MEMORY, "out of memory building the summary");
}

/* Sums of stored values saturate: a damaged file must not make them wrap
 * (nor trip the sanitizers); a real run is ~290 years from the limit. */
static inline int64_t sat_add(int64_t a, int64_t b) { return spi_sat_add_i64(a, b); }

static int64_t sat_sub(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r)) return b > 0 ? INT64_MIN : INT64_MAX;
    return r;
}

/* ---- paths: (parent path, region) -> path, open addressing -------------- */

static size_t node_hash(long parent, uint32_t region, size_t cap) {
    uint64_t h = (uint64_t)(parent + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)region * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

static int hash_grow(walker *w) {
    size_t cap = w->hash_cap ? 2 * w->hash_cap : 64;
    long *hash = spi_calloc(cap, sizeof *hash);
    if (!hash) return oom(w);
    for (size_t i = 0; i < w->node_count; i++) {
        size_t h = node_hash(w->nodes[i].parent, w->nodes[i].region, cap);
        while (hash[h]) h = (h + 1) & (cap - 1);
        hash[h] = (long)i + 1;
    }
    spi_free(w->hash);
    w->hash = hash;
    w->hash_cap = cap;
    return SP_OK;
}

__attribute__((noinline)) static int node_get(walker *w, long parent, uint32_t region,
                                             long *out) {
    if (w->hash_cap == 0 || 2 * (w->node_count + 1) > w->hash_cap) {
        int status = hash_grow(w);
        if (status != SP_OK) return status;
    }
    size_t h = node_hash(parent, region, w->hash_cap);
    while (w->hash[h]) {
        const node *n = &w->nodes[w->hash[h] - 1];
        if (n->parent == parent && n->region == region) {
            *out = w->hash[h] - 1;
            return SP_OK;
        }
        h = (h + 1) & (w->hash_cap - 1);
    }
    if (w->node_count == w->node_cap) {
        size_t cap = w->node_cap ? 2 * w->node_cap : 32;
        node *nodes = spi_reallocarray(w->nodes, cap, sizeof *nodes);
        if (!nodes) return oom(w);
        w->nodes = nodes;
        w->node_cap = cap;
    }
    long id = (long)w->node_count++;
    node *n = &w->nodes[id];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->region = region;
    n->depth = parent < 0 ? 0 : w->nodes[parent].depth + 1;
    n->minimum = INT64_MAX;
    n->maximum = INT64_MIN;
    w->hash[h] = id + 1;
    *out = id;
    return SP_OK;
}

/* node_get through the parent's memo: the same node, since (parent,
 * region) names one path for the whole build. */
static inline int child_get(walker *w, long parent, uint32_t region, long *out) {
    unsigned k = region % SPI_PATH_MEMO;
    size_t memo = parent < 0 ? w->root_memo[k] : w->nodes[parent].memo_child[k];
    uint32_t memo_region = parent < 0 ? w->root_memo_region[k] : w->nodes[parent].memo_region[k];
    if (memo && memo_region == region) {
        *out = (long)memo - 1;
        return SP_OK;
    }
    int status = node_get(w, parent, region, out);
    if (status != SP_OK) return status;
    /* node_get may have moved the nodes: index them again */
    if (parent < 0) {
        w->root_memo[k] = (size_t)*out + 1;
        w->root_memo_region[k] = region;
    } else {
        w->nodes[parent].memo_child[k] = (size_t)*out + 1;
        w->nodes[parent].memo_region[k] = region;
    }
    return SP_OK;
}

/* ---- (path, thread) rows of the rank being walked -------------------------- */

static size_t thread_hash(size_t path, int64_t thread, size_t cap) {
    uint64_t h = (uint64_t)path * 0x9E3779B97F4A7C15ull ^ (uint64_t)thread * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 31;
    return (size_t)h & (cap - 1);
}

static int lanes_grow(walker *w) {
    size_t cap = w->lanes_cap ? 2 * w->lanes_cap : 64;
    size_t *lanes = spi_calloc(cap, sizeof *lanes);
    if (!lanes) return oom(w);
    for (size_t i = 0; i < w->thread_row_count; i++) {
        size_t h = thread_hash(w->thread_rows[i].path, w->thread_rows[i].thread, cap);
        while (lanes[h]) h = (h + 1) & (cap - 1);
        lanes[h] = i + 1;
    }
    spi_free(w->lanes);
    w->lanes = lanes;
    w->lanes_cap = cap;
    return SP_OK;
}

/* The row of (node, thread) in the rank being walked; NULL when create is
 * false and it has none, or out of memory (err set). Kept out of line, so
 * that thread_row's memo check below stays small enough to inline. */
__attribute__((noinline)) static spi_path_thread *thread_row_lookup(walker *w, size_t path,
                                                                    int64_t thread,
                                                                    uint32_t rank, bool create) {
    if (create && 2 * (w->thread_row_count + 1) > w->lanes_cap && lanes_grow(w) != SP_OK)
        return NULL;
    if (w->lanes_cap == 0) return NULL;
    size_t h = thread_hash(path, thread, w->lanes_cap);
    for (; w->lanes[h]; h = (h + 1) & (w->lanes_cap - 1)) {
        spi_path_thread *row = &w->thread_rows[w->lanes[h] - 1];
        if (row->path == path && row->thread == thread) return row;
    }
    if (!create) return NULL;
    if (w->thread_row_count == w->thread_row_cap) {
        size_t cap = w->thread_row_cap ? 2 * w->thread_row_cap : 64;
        spi_path_thread *rows = spi_reallocarray(w->thread_rows, cap, sizeof *rows);
        if (!rows) {
            oom(w);
            return NULL;
        }
        w->thread_rows = rows;
        w->thread_row_cap = cap;
    }
    spi_path_thread *row = &w->thread_rows[w->thread_row_count++];
    *row = (spi_path_thread){.path = path, .rank = rank, .thread = thread};
    w->lanes[h] = w->thread_row_count;
    return row;
}

static inline spi_path_thread *thread_row(walker *w, size_t path, int64_t thread,
                                          uint32_t rank, bool create) {
    /* The path's memo: a row of this rank (index below the count) that
     * is (path, thread) is the one row the table below would find. */
    size_t *memo = &w->nodes[path].memo_thread_row[(uint64_t)thread % SPI_PATH_MEMO];
    if (*memo && *memo <= w->thread_row_count) {
        spi_path_thread *row = &w->thread_rows[*memo - 1];
        if (row->path == path && row->thread == thread) return row;
    }
    spi_path_thread *row = thread_row_lookup(w, path, thread, rank, create);
    if (row) *memo = (size_t)(row - w->thread_rows) + 1;
    return row;
}

/* The rank is done: each (path, thread) row counts a thread for its path
 * and is kept when wanted. */
static int end_rank_threads(walker *w) {
    for (size_t i = 0; i < w->thread_row_count; i++) w->nodes[w->thread_rows[i].path].threads++;
    if (w->keep_threads && w->thread_row_count) {
        if (w->kept_count + w->thread_row_count > w->kept_cap) {
            size_t cap = w->kept_cap ? w->kept_cap : 64;
            while (cap < w->kept_count + w->thread_row_count) cap *= 2;
            spi_path_thread *kept = spi_reallocarray(w->kept, cap, sizeof *kept);
            if (!kept) return oom(w);
            w->kept = kept;
            w->kept_cap = cap;
        }
        memcpy(w->kept + w->kept_count, w->thread_rows, w->thread_row_count * sizeof *w->kept);
        w->kept_count += w->thread_row_count;
    }
    w->thread_row_count = 0;
    if (w->lanes) memset(w->lanes, 0, w->lanes_cap * sizeof *w->lanes);
    return SP_OK;
}

/* ---- one call on its path ------------------------------------------------ */

/* <0, 0, >0 as key a comes before, with, after b (calltree.c's orders:
 * by id, or by lane then time; one rank uses one of them). */
static int key_compare(const node_key *a, const node_key *b) {
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->by_id) return a->id < b->id ? -1 : (a->id > b->id);
    if (a->lane != b->lane) return a->lane < b->lane ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end > b->end ? -1 : 1;
    if (a->row != b->row) return a->row < b->row ? -1 : 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

static int add_call(walker *w, long id, const spi_merged_call *c, uint32_t rank, bool by_id) {
    node *n = &w->nodes[id];
    node_key key = {rank, by_id, c->lane, c->start, c->end, c->id, c->row, c->index};
    if (n->count == 0 || key_compare(&key, &n->first_key) < 0) n->first_key = key;
    int64_t d = c->end - c->start; /* >= 0, no overflow: call_merge.c checked */
    if (spi_durations_add(&n->durations, d, &w->budget) != SP_OK) return oom(w);
    n->count++;
    n->total = sat_add(n->total, d);
    n->exclusive = sat_add(n->exclusive, d);
    if (d < n->minimum) n->minimum = d;
    if (d > n->maximum) n->maximum = d;
    double delta = (double)d - n->mean;
    n->mean += delta / (double)n->count;
    n->m2 += delta * ((double)d - n->mean);
    bool first = n->count == 1;
    if (first || c->start < n->start_min) n->start_min = c->start;
    if (first || c->end > n->end_max) n->end_max = c->end;
    /* first: earliest start, then lower rank, then earlier end; last:
     * latest end, then lower rank, then earlier start (the pooled call
     * records' order, rank then start then end, decided ties before). */
    if (first || c->start < n->first_start ||
        (c->start == n->first_start &&
         (rank < n->first_rank || (rank == n->first_rank && c->end < n->first_end)))) {
        n->first_start = c->start;
        n->first_end = c->end;
        n->first_rank = rank;
        n->first_duration = d;
    }
    if (first || c->end > n->last_end ||
        (c->end == n->last_end &&
         (rank < n->last_rank || (rank == n->last_rank && c->start < n->last_start)))) {
        n->last_start = c->start;
        n->last_end = c->end;
        n->last_rank = rank;
        n->last_duration = d;
    }
    if (!n->in_rank) {
        if (w->touched_count == w->touched_cap) {
            size_t cap = w->touched_cap ? 2 * w->touched_cap : 64;
            size_t *touched = spi_reallocarray(w->touched, cap, sizeof *touched);
            if (!touched) return oom(w);
            w->touched = touched;
            w->touched_cap = cap;
        }
        w->touched[w->touched_count++] = (size_t)id;
        if (n->ranks++ == 0) n->lowest_rank = rank;
        n->in_rank = true;
        n->rank_total = n->rank_exclusive = 0;
        n->run_start = c->start;
        n->run_end = c->end;
    } else if (c->start <= n->run_end) {
        /* calls come in start order: the union grows at its end */
        if (c->end > n->run_end) n->run_end = c->end;
    } else {
        n->coverage = sat_add(n->coverage, n->run_end - n->run_start);
        n->run_start = c->start;
        n->run_end = c->end;
    }
    n->rank_total = sat_add(n->rank_total, d);
    n->rank_exclusive = sat_add(n->rank_exclusive, d);
    return SP_OK;
}

static void spread_add(spread_acc *s, int64_t total) {
    s->sum += (double)total;
    if (s->ranks == 0 || total < s->lo) s->lo = total;
    if (s->ranks == 0 || total > s->hi) s->hi = total;
    s->ranks++;
    if (total > 0) {
        s->kept++;
        s->kept_sum += (double)total;
        if ((double)total > s->kept_max) s->kept_max = (double)total;
    }
}

static spi_path_spread spread_of(const spread_acc *s) {
    double imbalance = s->kept < 2 ? 0.0 : s->kept_max / (s->kept_sum / (double)s->kept);
    return (spi_path_spread){.mean = s->ranks ? s->sum / (double)s->ranks : 0.0,
                             .minimum = s->lo,
                             .maximum = s->hi,
                             .imbalance_pct = imbalance == 0.0 ? 0.0 : (imbalance - 1.0) * 100.0};
}

/* The rank is done: its coverage runs and totals go into the pool. */
static void end_rank(walker *w) {
    for (size_t i = 0; i < w->touched_count; i++) {
        node *n = &w->nodes[w->touched[i]];
        n->coverage = sat_add(n->coverage, n->run_end - n->run_start);
        spread_add(&n->inclusive, n->rank_total);
        spread_add(&n->exclusive_spread, n->rank_exclusive);
        n->in_rank = false;
    }
    w->touched_count = 0;
}

/* ---- one rank ------------------------------------------------------------- */

static int walk_rank(walker *w, uint32_t rank, const size_t *rows, size_t row_count) {
    const spi_profile *p = w->profile;
    bool by_id = spi_rank_merge_has_ids(p, rank, rows, row_count);
    spi_rank_merge *merge = NULL;
    spi_call_nesting *nesting = NULL;
    int status = spi_rank_merge_open(&merge, p, rank, rows, row_count, by_id, w->err);
    if (status == SP_OK) status = spi_call_nesting_open(&nesting, p, rank, by_id, w->err);
    const spi_merged_call *c = NULL;
    while (status == SP_OK && (status = spi_rank_merge_next(merge, &c, w->err)) == SP_OK && c) {
        const spi_nest_value *found = NULL;
        status = spi_call_nesting_parent(nesting, c, &found, w->err);
        if (status != SP_OK) break;
        spi_nest_value parent = found ? *found : (spi_nest_value){.node = -1};
        uint32_t region = p->rows[c->row].region;
        long id = parent.node;
        bool own = !w->visible || (region < p->name_count && w->visible[region]);
        if (!own) {
            /* a hidden call: its children hang where it would */
        } else if (parent.node >= 0 && w->nodes[parent.node].region == region) {
            w->nodes[id].recursive = true;  /* a run of one name: recursion */
            w->nodes[id].recursions++;
        } else {
            status = child_get(w, parent.node, region, &id);
        }
        if (status == SP_OK && own) status = add_call(w, id, c, rank, by_id);
        if (status != SP_OK) break;
        /* Exclusive time: the call's duration is child time of its parent,
         * unless they ran on two known lanes at once (an OpenMP worker
         * under the call that forked it); a hidden parent has no path. */
        bool concurrent = c->lane != -1 && parent.lane != -1 && c->lane != parent.lane;
        int64_t d = c->end - c->start;
        spi_path_thread *mine = NULL;
        if (own && c->thread >= 0) {
            mine = thread_row(w, (size_t)id, c->thread, rank, true);
            if (!mine) {
                status = SP_ERR_OUT_OF_MEMORY;
                break;
            }
            mine->count++;
            mine->total = sat_add(mine->total, d);
            mine->exclusive = sat_add(mine->exclusive, d);
        }
        if (own && found && concurrent) {
            /* beside its parent: in its own total, outside the parent's */
            w->nodes[id].other_threads = sat_add(w->nodes[id].other_threads, d);
            if (mine) mine->other_threads = sat_add(mine->other_threads, d);
        }
        if (found && parent.own && !concurrent) {
            node *up = &w->nodes[parent.node];
            up->exclusive = sat_sub(up->exclusive, d);
            up->rank_exclusive = sat_sub(up->rank_exclusive, d);
            spi_path_thread *above =
                c->thread >= 0 ? thread_row(w, (size_t)parent.node, c->thread, rank, false) : NULL;
            if (above) above->exclusive = sat_sub(above->exclusive, d);
        }
        status = spi_call_nesting_push(nesting, c, (spi_nest_value){id, own, c->lane}, w->err);
    }
    spi_call_nesting_close(nesting);
    spi_rank_merge_close(merge);
    end_rank(w);
    int threads = end_rank_threads(w);
    return status != SP_OK ? status : threads;
}

/* ---- the paths out ------------------------------------------------------- */

static int compare_nodes(const void *context, size_t a, size_t b) {
    const node *nodes = context;
    return key_compare(&nodes[a].first_key, &nodes[b].first_key);
}

static int compare_thread_rows(const void *a, const void *b) {
    const spi_path_thread *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->path < y->path ? -1 : (x->path > y->path);
}

static void summarise(walker *w, size_t i, spi_path_summary *out) {
    node *n = &w->nodes[i];
    double mean = (double)n->total / (double)n->count;
    /* With every duration kept, std is computed as the call tree's table
     * did (two passes over the values); past the budget from Welford's m2. */
    double std = !n->durations.sketched && n->durations.count == n->count
                     ? spi_std_values(n->durations.values, (size_t)n->count, mean)
                     : sqrt(n->m2 > 0 ? n->m2 / (double)n->count : 0.0);
    static const double pcts[3] = {50.0, 95.0, 99.0};
    double q[3];
    bool exact;
    spi_durations_percentiles(&n->durations, pcts, 3, q, &exact);
    *out = (spi_path_summary){
        .path = {.rank = n->lowest_rank, .region = n->region, .parent = n->parent,
                 .thread = -1, .count = n->count, .recursions = n->recursions,
                 .total = n->total, .minimum = n->minimum, .maximum = n->maximum,
                 .exclusive = n->exclusive, .m2 = n->m2, .start_minimum = n->start_min,
                 .end_maximum = n->end_max},
        .depth = n->depth,
        .recursive = n->recursive,
        .ranks = n->ranks,
        .coverage = n->coverage,
        .first = n->first_duration,
        .last = n->last_duration,
        .std = std,
        .p50 = q[0],
        .p95 = q[1],
        .p99 = q[2],
        .exact_percentiles = exact,
        .inclusive = spread_of(&n->inclusive),
        .exclusive = spread_of(&n->exclusive_spread),
        .threads = n->threads,
        .other_threads = n->other_threads};
}

int spi_call_paths_build(const spi_profile *profile, const uint32_t *ranks, size_t rank_count,
                         const size_t *rank_rows, const size_t *rank_first,
                         const spi_call_paths_options *options, spi_path_summary **paths,
                         size_t *count, spi_error *err) {
    *paths = NULL;
    *count = 0;
    walker w = {.profile = profile, .err = err};
    if (options && options->thread_rows) {
        *options->thread_rows = NULL;
        *options->thread_row_count = 0;
        w.keep_threads = true;
    }
    if (options) {
        w.visible = options->visible;
        w.budget.per_set = options->exact_per_path;
        w.budget.total = options->exact_total;
    }
    if (!w.budget.per_set) w.budget.per_set = SPI_DURATIONS_EXACT_DEFAULT;
    if (!w.budget.total) w.budget.total = SPI_CALL_PATHS_EXACT_TOTAL;
    int status = SP_OK;
    if (spi_profile_has_calls(profile))
        for (size_t r = 0; r < rank_count && status == SP_OK; r++)
            status = walk_rank(&w, ranks[r], rank_rows + rank_first[r],
                               rank_first[r + 1] - rank_first[r]);
    spi_path_summary *out = NULL;
    size_t *order = NULL, *tmp = NULL, *place = NULL;
    bool sorted = false;
    if (status == SP_OK) {
        out = spi_calloc(w.node_count + 1, sizeof *out);
        order = spi_calloc(w.node_count + 1, sizeof *order);
        tmp = spi_calloc(w.node_count + 1, sizeof *tmp);
        place = spi_calloc(w.node_count + 1, sizeof *place);
        if (!out || !order || !tmp || !place) status = oom(&w);
    }
    if (status == SP_OK) {
        /* Paths in the order of their first call (a parent's first call
         * precedes its children's, so parents stay first). */
        for (size_t i = 0; i < w.node_count; i++) order[i] = i;
        spi_sort_indices(order, tmp, w.node_count, compare_nodes, w.nodes);
        for (size_t i = 0; i < w.node_count; i++) place[order[i]] = i;
        sorted = true;
    }
    for (size_t k = 0; k < w.node_count; k++) {
        size_t i = sorted ? order[k] : k;
        if (status == SP_OK) {
            summarise(&w, i, &out[k]);
            if (out[k].path.parent >= 0) out[k].path.parent = (int64_t)place[out[k].path.parent];
        }
        spi_durations_free(&w.nodes[i].durations, &w.budget);
    }
    if (status == SP_OK && w.keep_threads) {
        /* per-thread rows by rank, thread, path (ranks come in order) */
        for (size_t i = 0; i < w.kept_count; i++) w.kept[i].path = place[w.kept[i].path];
        if (w.kept_count) qsort(w.kept, w.kept_count, sizeof *w.kept, compare_thread_rows);
        *options->thread_rows = w.kept;
        *options->thread_row_count = w.kept_count;
        w.kept = NULL;
    }
    spi_free(order);
    spi_free(tmp);
    spi_free(place);
    spi_free(w.nodes);
    spi_free(w.hash);
    spi_free(w.touched);
    spi_free(w.thread_rows);
    spi_free(w.lanes);
    spi_free(w.kept);
    if (status != SP_OK) {
        spi_free(out);
        return status;
    }
    *paths = out;
    *count = w.node_count;
    return SP_OK;
}
