/*
 * summary_rows.c - the rows of the summary table (FORMAT.md 7.5), pooled
 * over ranks; summary_table.c orders them and summary.c prints them.
 *
 * Rows are call paths, not regions: every call of every selected rank gets
 * the path of region names from its root (call_paths.c: each rank's calls
 * walked once in time order, each placed on its path as it arrives, so no
 * call is kept), runs of one name collapse into one element so recursion
 * is one row, and all calls with the same path are pooled over ranks. The
 * tree is the unfiltered one and filters only decide which calls get a
 * row: a hidden call passes its place in the path on to its children, and
 * its time still counts as child time of its parent, so "(own)" is honest.
 *
 * An aggregate file with call paths (docs/FORMAT.md) gives the same tree
 * from its paths, pooled the same way (add_paths).
 *
 * The table falls back to one row per region (summary_flat.c) when the
 * data has no calls and no paths (summary-only, a Python aggregate file),
 * when asked (flat), or when a rank's calls do not nest; the last case is
 * reported as SP_ERR_NESTING after printing.
 *
 * Per row and over the ranks that ran it, the mean, minimum and maximum
 * of the per-rank totals and the imbalance max/mean - 1 (rank_spread; the
 * top of summary_table.c says when the table shows them).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/sat_math.h"
#include "util/alloc.h"
#include "analysis/call_paths.h"
#include "analysis/calltree.h"
#include "analysis/stats.h"
#include "analysis/summary_rows.h"
#include "profile/path_pool.h"

/* Short for SPI_SV_BIT: the bit of a value slot in spi_summary_row.has. */
#define HAS(slot) SPI_SV_BIT(slot)

/* ---- the builder: path nodes, call records, rows ------------------------- */

typedef struct node {
    long parent;
    uint32_t region;
    int depth;
    bool recursive;
} node;

typedef struct builder {
    const spi_profile *profile;
    const spi_summary_options *opt;
    const bool *visible; /* [name_count] */
    node *nodes;
    size_t node_count, node_cap;
    long *hash;         /* node index + 1, 0 = empty */
    size_t hash_cap;
    spi_summary_row *rows;
    size_t row_count, row_cap;
    spi_error *err;
} builder;

static int oom(builder *b) {
    return spi_error_set(b->err, SP_ERR_OUT_OF_MEMORY, "out of memory building the summary");
}

static spi_summary_row *row_append(builder *b) {
    if (b->row_count == b->row_cap) {
        size_t cap = b->row_cap ? 2 * b->row_cap : 32;
        spi_summary_row *rows = spi_reallocarray(b->rows, cap, sizeof *rows);
        if (!rows) return NULL;
        b->rows = rows;
        b->row_cap = cap;
    }
    spi_summary_row *row = &b->rows[b->row_count++];
    memset(row, 0, sizeof *row);
    row->parent = -1;
    row->start = INT64_MAX;
    return row;
}

/* ---- path nodes: (parent node, region) -> node, open addressing --------- */

static size_t node_hash(long parent, uint32_t region, size_t cap) {
    uint64_t h = (uint64_t)(parent + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)region * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return (size_t)h & (cap - 1);
}

static int hash_grow(builder *b) {
    size_t cap = b->hash_cap ? 2 * b->hash_cap : 64;
    long *hash = spi_calloc(cap, sizeof *hash);
    if (!hash) return oom(b);
    for (size_t i = 0; i < b->node_count; i++) {
        size_t h = node_hash(b->nodes[i].parent, b->nodes[i].region, cap);
        while (hash[h]) h = (h + 1) & (cap - 1);
        hash[h] = (long)i + 1;
    }
    spi_free(b->hash);
    b->hash = hash;
    b->hash_cap = cap;
    return SP_OK;
}

static int node_get(builder *b, long parent, uint32_t region, long *out) {
    if (b->hash_cap == 0 || 2 * (b->node_count + 1) > b->hash_cap) {
        int status = hash_grow(b);
        if (status != SP_OK) return status;
    }
    size_t h = node_hash(parent, region, b->hash_cap);
    while (b->hash[h]) {
        const node *n = &b->nodes[b->hash[h] - 1];
        if (n->parent == parent && n->region == region) {
            *out = b->hash[h] - 1;
            return SP_OK;
        }
        h = (h + 1) & (b->hash_cap - 1);
    }
    if (b->node_count == b->node_cap) {
        size_t cap = b->node_cap ? 2 * b->node_cap : 32;
        node *nodes = spi_reallocarray(b->nodes, cap, sizeof *nodes);
        if (!nodes) return oom(b);
        b->nodes = nodes;
        b->node_cap = cap;
    }
    long id = (long)b->node_count++;
    b->nodes[id] = (node){parent, region, parent < 0 ? 0 : b->nodes[parent].depth + 1, false};
    b->hash[h] = id + 1;
    *out = id;
    return SP_OK;
}

/* ---- traces: the tree from the calls, folded into paths rank by rank --- */

typedef struct rank_rows {
    uint32_t rank;
    size_t row;
} rank_rows;

static int cmp_rank_rows(const void *a, const void *b) {
    const rank_rows *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->row < y->row ? -1 : (x->row > y->row);
}

/* Sums of stored values saturate: a damaged file must not make them wrap
 * (nor trip the sanitizers); a real run is ~290 years from the limit. */
static inline int64_t sat_add(int64_t a, int64_t b) { return spi_sat_add_i64(a, b); }

/* Per-rank spread of a row: mean, min and max of the totals of the ranks
 * that ran it, and the imbalance max/mean - 1 in percent (FORMAT.md 7.3). */
static void rank_spread(spi_summary_row *row, const int64_t *totals, size_t ranks, int mean_slot) {
    double sum = 0.0;
    int64_t lo = ranks ? totals[0] : 0, hi = lo;
    for (size_t i = 0; i < ranks; i++) {
        sum += (double)totals[i];
        if (totals[i] < lo) lo = totals[i];
        if (totals[i] > hi) hi = totals[i];
    }
    double imb = spi_imbalance(totals, ranks);
    row->v[mean_slot] = ranks ? sum / (double)ranks : 0.0;
    row->v[mean_slot + 1] = (double)lo;
    row->v[mean_slot + 2] = (double)hi;
    row->v[mean_slot == SPI_SV_RANK_MEAN ? SPI_SV_IMB : SPI_SV_XIMB] =
        imb == 0.0 ? 0.0 : (imb - 1.0) * 100.0;
    row->has |= HAS(mean_slot) | HAS(mean_slot + 1) | HAS(mean_slot + 2) |
                HAS(mean_slot == SPI_SV_RANK_MEAN ? SPI_SV_IMB : SPI_SV_XIMB);
}

/* The same from a path's streamed spread (call_paths.h). */
static void path_spread(spi_summary_row *row, const spi_path_spread *s, int mean_slot) {
    int imb_slot = mean_slot == SPI_SV_RANK_MEAN ? SPI_SV_IMB : SPI_SV_XIMB;
    row->v[mean_slot] = s->mean;
    row->v[mean_slot + 1] = (double)s->minimum;
    row->v[mean_slot + 2] = (double)s->maximum;
    row->v[imb_slot] = s->imbalance_pct;
    row->has |= HAS(mean_slot) | HAS(mean_slot + 1) | HAS(mean_slot + 2) | HAS(imb_slot);
}

/* The table rows of the selected ranks' calls (by_rank[0..n): the rows
 * grouped by rank, ranks[0..rank_count) the ranks): one row per path of
 * call_paths.h, whose nodes are the builder's nodes too (the flat rows
 * after them need to know which regions have a tree row). The calls are
 * read rank by rank through cursors, in memory or on demand, and no call
 * is kept: memory grows with the paths. */
static int add_calls(builder *b, const uint32_t *ranks, size_t rank_count,
                     const rank_rows *by_rank, size_t n) {
    size_t *rows = spi_calloc(n + 1, sizeof *rows);
    size_t *first = spi_calloc(rank_count + 1, sizeof *first);
    if (!rows || !first) {
        spi_free(rows);
        spi_free(first);
        return oom(b);
    }
    for (size_t i = 0, r = 0; i < n; i++) {
        if (i == 0 || by_rank[i].rank != by_rank[i - 1].rank) first[r++] = i;
        rows[i] = by_rank[i].row;
    }
    first[rank_count] = n;
    spi_call_paths_options options = {.visible = b->visible};
    spi_path_summary *paths = NULL;
    size_t count = 0;
    int status = spi_call_paths_build(b->profile, ranks, rank_count, rows, first, &options,
                                      &paths, &count, b->err);
    spi_free(rows);
    spi_free(first);
    if (status != SP_OK) return status;
    b->nodes = spi_calloc(count + 1, sizeof *b->nodes);
    b->node_cap = count + 1;
    b->row_cap = count + b->profile->name_count + 1;
    b->rows = spi_calloc(b->row_cap, sizeof *b->rows);
    if (!b->nodes || !b->rows) {
        spi_free(paths);
        return oom(b);
    }
    for (size_t i = 0; i < count; i++) {
        const spi_path_summary *s = &paths[i];
        b->nodes[b->node_count++] = (node){s->path.parent, s->path.region, s->depth, s->recursive};
        spi_summary_row *row = row_append(b);
        row->name = b->profile->names[s->path.region];
        row->parent = s->path.parent;
        row->depth = s->depth;
        row->recursive = s->recursive;
        row->start = s->path.start_minimum;
        row->v[SPI_SV_CALLS] = (double)s->path.count;
        row->v[SPI_SV_TOTAL] = (double)s->path.total;
        row->v[SPI_SV_EXCL] = (double)s->path.exclusive;
        row->v[SPI_SV_AVG] = (double)s->path.total / (double)s->path.count;
        row->v[SPI_SV_STD] = s->std;
        row->v[SPI_SV_MIN] = (double)s->path.minimum;
        row->v[SPI_SV_MAX] = (double)s->path.maximum;
        row->v[SPI_SV_P50] = s->p50;
        row->v[SPI_SV_P95] = s->p95;
        row->v[SPI_SV_P99] = s->p99;
        row->v[SPI_SV_FIRST] = (double)s->first;
        row->v[SPI_SV_LAST] = (double)s->last;
        row->v[SPI_SV_RANKS] = (double)s->ranks;
        row->v[SPI_SV_COVERAGE] = (double)s->coverage;
        row->has = HAS(SPI_SV_COUNT) - 1;
        row->has &= ~(HAS(SPI_SV_PERCENT) | HAS(SPI_SV_PARENT_PERCENT));
        path_spread(row, &s->inclusive, SPI_SV_RANK_MEAN);
        path_spread(row, &s->exclusive, SPI_SV_XRANK_MEAN);
        /* threads: known when the calls carry thread ids */
        row->v[SPI_SV_THREADS] = (double)s->threads;
        row->v[SPI_SV_OTHER_THREADS] = (double)s->other_threads;
        if (s->threads == 0) row->has &= ~(HAS(SPI_SV_THREADS) | HAS(SPI_SV_OTHER_THREADS));
    }
    for (size_t i = 0; i < b->row_count; i++)
        if (b->rows[i].parent >= 0) b->rows[b->rows[i].parent].has_children = true;
    spi_free(paths);
    return SP_OK;
}

/* ---- aggregate files: the tree from the stored call paths --------------- */

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : (x > y);
}

/* `rank` in the ascending list ranks[0..n-1]. */
static bool rank_in(const uint32_t *ranks, size_t n, uint32_t rank) {
    return n && bsearch(&rank, ranks, n, sizeof *ranks, cmp_u32) != NULL;
}

/* One stored path placed on a table node, for pooling. */
typedef struct path_rec {
    long node;
    uint32_t rank;
    const spi_call_path *path;
    int64_t parent_thread;    /* the stored parent path's thread, -1 = none */
} path_rec;

static int cmp_path_rec(const void *a, const void *b) {
    const path_rec *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    /* threads of one rank next to each other: counted once each */
    return x->path->thread < y->path->thread ? -1 : (x->path->thread > y->path->thread);
}

/* The threads column of a row from its paths recs[0..n) (sorted by rank,
 * thread): a file's paths are per thread (their `thread`), a path a run
 * folded for the summary counts its threads itself (spi_call_path.threads).
 * A per-thread path whose parent path is another thread's ran beside it
 * (an OpenMP worker under its fork): its time is the row's other-threads
 * time, as spi_call_path.other_threads says for a folded path. */
static void row_threads(spi_summary_row *row, const path_rec *recs, size_t n) {
    double threads = 0.0, other = 0.0;
    bool known = false;
    for (size_t k = 0; k < n; k++) {
        const spi_call_path *path = recs[k].path;
        if (path->thread >= 0) {
            known = true;
            if (k == 0 || recs[k].rank != recs[k - 1].rank ||
                path->thread != recs[k - 1].path->thread)
                threads += 1.0;
            if (recs[k].parent_thread >= 0 && recs[k].parent_thread != path->thread)
                other += (double)path->total;
        } else if (path->threads > 0) {
            known = true;
            threads += (double)path->threads;
            other += (double)path->other_threads;
        }
    }
    if (!known) return;
    row->v[SPI_SV_THREADS] = threads;
    row->v[SPI_SV_OTHER_THREADS] = other;
    row->has |= HAS(SPI_SV_THREADS) | HAS(SPI_SV_OTHER_THREADS);
}

/* The spread of a row of pooled paths (path_pool.h): the pool kept the
 * per-rank sums the loop above would have from every rank's paths. One
 * pooled path per row unless regions are hidden; then the spreads of the
 * row's paths are combined (ranks: the most of any). */
static void pooled_spread(spi_summary_row *row, const spi_profile *p, const path_rec *recs,
                          size_t n) {
    spi_path_ranks all = p->path_ranks[recs[0].path - p->paths];
    for (size_t k = 1; k < n; k++) {
        const spi_path_ranks *r = &p->path_ranks[recs[k].path - p->paths];
        spi_rank_spread *into[2] = {&all.inclusive, &all.exclusive};
        const spi_rank_spread *from[2] = {&r->inclusive, &r->exclusive};
        for (int j = 0; j < 2; j++) {
            into[j]->sum += from[j]->sum;
            into[j]->positive_sum += from[j]->positive_sum;
            if (from[j]->positive_ranks > into[j]->positive_ranks)
                into[j]->positive_ranks = from[j]->positive_ranks;
            if (from[j]->minimum < into[j]->minimum) into[j]->minimum = from[j]->minimum;
            if (from[j]->maximum > into[j]->maximum) into[j]->maximum = from[j]->maximum;
        }
        if (r->ranks > all.ranks) all.ranks = r->ranks;
    }
    row->v[SPI_SV_RANKS] = (double)all.ranks;
    const spi_rank_spread *spreads[2] = {&all.inclusive, &all.exclusive};
    const int mean_slots[2] = {SPI_SV_RANK_MEAN, SPI_SV_XRANK_MEAN};
    for (int j = 0; j < 2; j++) {
        int slot = mean_slots[j];
        double imb = spi_rank_spread_imbalance(spreads[j]);
        row->v[slot] = all.ranks ? spreads[j]->sum / (double)all.ranks : 0.0;
        row->v[slot + 1] = (double)spreads[j]->minimum;
        row->v[slot + 2] = (double)spreads[j]->maximum;
        row->v[slot == SPI_SV_RANK_MEAN ? SPI_SV_IMB : SPI_SV_XIMB] =
            imb == 0.0 ? 0.0 : (imb - 1.0) * 100.0;
    }
}

/* The table rows of an aggregate file with call paths: each selected
 * rank's paths are placed on the same (parent, region) nodes as a trace's
 * calls would be (hidden regions pass their place on, a run of one region
 * is one recursive row), then pooled: counts, totals, exclusive times,
 * min and max add up exactly; std pools the paths' (count, mean, m2);
 * percentiles, first and last need the calls and stay empty. */
static int add_paths(builder *b, const uint32_t *ranks, size_t rank_count) {
    const spi_profile *p = b->profile;
    path_rec *recs = spi_calloc(p->path_count + 1, sizeof *recs);
    long *eff = spi_calloc(p->path_count + 1, sizeof *eff);
    size_t rec_count = 0;
    int status = recs && eff ? SP_OK : oom(b);
    for (size_t first = 0; first < p->path_count && status == SP_OK;) {
        uint32_t rank = p->paths[first].rank;
        size_t end = first;
        while (end < p->path_count && p->paths[end].rank == rank) end++;
        /* pooled paths (path_pool.h) already speak for the job's ranks */
        bool selected = p->path_ranks || rank_in(ranks, rank_count, rank);
        for (size_t i = first; selected && i < end && status == SP_OK; i++) {
            const spi_call_path *path = &p->paths[i];
            long parent_node = path->parent >= 0 ? eff[first + (size_t)path->parent] : -1;
            if (!b->visible[path->region]) {
                eff[i] = parent_node;
                continue;
            }
            long id = -1;
            if (parent_node >= 0 && b->nodes[parent_node].region == path->region) {
                id = parent_node;
                b->nodes[id].recursive = true;
            } else {
                status = node_get(b, parent_node, path->region, &id);
            }
            if ((path->recursions > 0 || (p->path_ranks && p->path_ranks[i].recursive)) && id >= 0)
                b->nodes[id].recursive = true;
            eff[i] = id;
            int64_t parent_thread = path->parent >= 0 ? p->paths[first + (size_t)path->parent].thread
                                                      : -1;
            recs[rec_count++] = (path_rec){id, rank, path, parent_thread};
        }
        first = end;
    }
    if (status == SP_OK) {
        b->row_cap = b->node_count + p->name_count + 1;
        b->rows = spi_calloc(b->row_cap, sizeof *b->rows);
        if (!b->rows) status = oom(b);
    }
    int64_t *totals = status == SP_OK ? spi_calloc(rec_count + 1, sizeof *totals) : NULL;
    int64_t *xtotals = status == SP_OK ? spi_calloc(rec_count + 1, sizeof *xtotals) : NULL;
    if (status == SP_OK && (!totals || !xtotals)) status = oom(b);
    for (size_t i = 0; i < b->node_count && status == SP_OK; i++) {
        spi_summary_row *row = row_append(b);
        const node *n = &b->nodes[i];
        row->name = p->names[n->region];
        row->parent = n->parent;
        row->depth = n->depth;
        row->recursive = n->recursive;
    }
    if (status == SP_OK && rec_count) qsort(recs, rec_count, sizeof *recs, cmp_path_rec);
    for (size_t a = 0; a < rec_count && status == SP_OK;) {
        size_t e = a, ranks_seen = 0;
        spi_summary_row *row = &b->rows[recs[a].node];
        uint64_t calls = 0;
        int64_t total = 0, excl = 0, minimum = INT64_MAX, maximum = INT64_MIN;
        double mean = 0.0, m2 = 0.0;
        for (; e < rec_count && recs[e].node == recs[a].node; e++) {
            const spi_call_path *path = recs[e].path;
            if (e == a || recs[e].rank != recs[e - 1].rank) {
                totals[ranks_seen] = 0;
                xtotals[ranks_seen++] = 0;
            }
            totals[ranks_seen - 1] = sat_add(totals[ranks_seen - 1], path->total);
            xtotals[ranks_seen - 1] = sat_add(xtotals[ranks_seen - 1], path->exclusive);
            /* Chan et al.: exact pooling of (count, mean, m2) */
            uint64_t n = calls + path->count;
            double path_mean = (double)path->total / (double)path->count;
            double delta = path_mean - mean;
            m2 += path->m2 + delta * delta * (double)calls * (double)path->count / (double)n;
            mean += delta * (double)path->count / (double)n;
            calls = n;
            total = sat_add(total, path->total);
            excl = sat_add(excl, path->exclusive);
            if (path->minimum < minimum) minimum = path->minimum;
            if (path->maximum > maximum) maximum = path->maximum;
            if (path->start_minimum < row->start) row->start = path->start_minimum;
        }
        row->v[SPI_SV_CALLS] = (double)calls;
        row->v[SPI_SV_TOTAL] = (double)total;
        row->v[SPI_SV_EXCL] = (double)excl;
        row->v[SPI_SV_AVG] = (double)total / (double)calls;
        row->v[SPI_SV_MIN] = (double)minimum;
        row->v[SPI_SV_MAX] = (double)maximum;
        row->v[SPI_SV_STD] = sqrt(m2 > 0 ? m2 / (double)calls : 0.0);
        row->v[SPI_SV_RANKS] = (double)ranks_seen;
        /* Without the calls the union of their intervals is unknown; the
         * total is its upper bound (exact for a path of one thread that
         * does not recurse). */
        row->v[SPI_SV_COVERAGE] = (double)total;
        row->has = HAS(SPI_SV_CALLS) | HAS(SPI_SV_TOTAL) | HAS(SPI_SV_EXCL) | HAS(SPI_SV_AVG) |
                   HAS(SPI_SV_MIN) | HAS(SPI_SV_MAX) | HAS(SPI_SV_STD) | HAS(SPI_SV_RANKS) |
                   HAS(SPI_SV_COVERAGE);
        rank_spread(row, totals, ranks_seen, SPI_SV_RANK_MEAN);
        rank_spread(row, xtotals, ranks_seen, SPI_SV_XRANK_MEAN);
        if (p->path_ranks) pooled_spread(row, p, recs + a, e - a);
        row_threads(row, recs + a, e - a);
        a = e;
    }
    for (size_t i = 0; i < b->node_count && status == SP_OK; i++)
        if (b->rows[i].parent >= 0) b->rows[b->rows[i].parent].has_children = true;
    spi_free(totals);
    spi_free(xtotals);
    spi_free(recs);
    spi_free(eff);
    return status;
}

/* The flat rows (summary_flat.c) after the tree rows: of every visible
 * region, or with only_missing of those without a tree row. */
static int add_flat_rows(builder *b, bool only_missing, int *nesting) {
    bool *in_tree = spi_calloc(b->profile->name_count + 1, sizeof *in_tree);
    if (!in_tree) return oom(b);
    for (size_t i = 0; only_missing && i < b->node_count; i++) in_tree[b->nodes[i].region] = true;
    spi_summary_row *flat = NULL;
    size_t flat_count = 0;
    int status = spi_summary_flat_rows(&flat, &flat_count, b->profile, b->opt->ranks,
                                       b->opt->rank_count, b->visible, in_tree, nesting, b->err);
    for (size_t i = 0; i < flat_count && status == SP_OK; i++) {
        spi_summary_row *row = row_append(b);
        if (!row) status = oom(b);
        else *row = flat[i];
    }
    spi_free(flat);
    spi_free(in_tree);
    return status;
}

/* ---- entry point ------------------------------------------------------------ */

int spi_summary_rows_build(const spi_profile *profile, const spi_summary_options *options,
                           const bool *visible, spi_summary_row **rows, size_t *row_count,
                           size_t *job_ranks_out, int *nesting_out, spi_error *err) {
    const spi_summary_options *o = options;
    int status = SP_OK, nesting = SP_OK;
    builder b = {.profile = profile, .opt = o, .visible = visible, .err = err};
    uint32_t *ranks = NULL;
    rank_rows *by_rank = NULL;
    size_t nr = 0, job_ranks = 0;
    *rows = NULL;
    *row_count = 0;
    *job_ranks_out = 0;
    *nesting_out = SP_OK;

    /* The selected ranks that have rows, ascending, and the rows grouped
     * by rank (sorted once: no pass over every row per rank). */
    by_rank = spi_calloc(profile->row_count + 1, sizeof *by_rank);
    ranks = spi_calloc(profile->row_count + 1, sizeof *ranks);
    if (!by_rank || !ranks) {
        status = oom(&b);
        goto done;
    }
    size_t selected_rows = 0;
    for (size_t i = 0; i < profile->row_count; i++)
        if (spi_rank_selected(o->ranks, o->rank_count, profile->rows[i].rank))
            by_rank[selected_rows++] = (rank_rows){profile->rows[i].rank, i};
    if (selected_rows) qsort(by_rank, selected_rows, sizeof *by_rank, cmp_rank_rows);
    for (size_t i = 0; i < selected_rows; i++)
        if (i == 0 || by_rank[i].rank != by_rank[i - 1].rank) ranks[nr++] = by_rank[i].rank;
    /* The job's ranks (a rank that recorded nothing still counts: the
     * table speaks of the job), or the distinct ranks asked for. */
    job_ranks = nr > profile->rank_count ? nr : profile->rank_count;
    if (o->ranks) {
        uint32_t *asked = spi_calloc(o->rank_count + 1, sizeof *asked);
        if (!asked) {
            status = oom(&b);
            goto done;
        }
        if (o->rank_count) memcpy(asked, o->ranks, o->rank_count * sizeof *asked);
        if (o->rank_count) qsort(asked, o->rank_count, sizeof *asked, cmp_u32);
        job_ranks = 0;
        for (size_t i = 0; i < o->rank_count; i++) job_ranks += i == 0 || asked[i] != asked[i - 1];
        spi_free(asked);
    }

    /* The call tree, unless flat was asked for or the data cannot give one:
     * from the calls, or from call paths: an aggregate file's, or the ones
     * sp_finalize folds a trace into (lifecycle/finalize_summary.c). */
    bool paths = !o->flat && profile->path_count > 0;
    bool tree = !o->flat && (paths || spi_rank_tree_possible(profile));
    if (tree) {
        status = paths ? add_paths(&b, ranks, nr) : add_calls(&b, ranks, nr, by_rank, selected_rows);
        if (status == SP_ERR_NESTING) {
            /* Whole table falls back to flat rows (FORMAT.md 7.5). */
            nesting = status;
            status = SP_OK;
            tree = false;
            b.node_count = 0;
            b.row_count = 0;
        }
        if (status != SP_OK) goto done;
    }
    if (status == SP_OK) status = add_flat_rows(&b, tree, &nesting);

done:
    spi_free(b.nodes);
    spi_free(b.hash);
    spi_free(ranks);
    spi_free(by_rank);
    if (status != SP_OK) {
        spi_free(b.rows);
        return status;
    }
    *rows = b.rows;
    *row_count = b.row_count;
    *job_ranks_out = job_ranks;
    *nesting_out = nesting;
    return SP_OK;
}
