/*
 * summary.c - the summary table of FORMAT.md 7.5.
 *
 * Rows are call paths, not regions: every call of every selected rank gets
 * the path of region names from its root (through the rank's call tree,
 * calltree.c), runs of one name collapse into one element so recursion is
 * one row, and all calls with the same path are pooled over ranks. The
 * tree is built unfiltered and filters only decide which calls get a row:
 * a hidden call passes its place in the path on to its children, and its
 * time still counts as child time of its parent, so "(own)" is honest.
 *
 * An aggregate file with call paths (docs/FORMAT.md) gives the same tree
 * from its paths, pooled the same way (add_paths).
 *
 * The table falls back to one row per region when the data has no calls
 * and no paths (summary-only, a Python aggregate file), when asked (flat),
 * or when a rank's calls do not nest; the last case is reported as
 * SP_ERR_NESTING after printing.
 *
 * Ranks. One rank (or one selected with ranks) prints totals, as before.
 * Several ranks print what GPTL's summary and Caliper's runtime-report
 * print for an MPI job: per row the mean of the per-rank totals over the
 * ranks that ran the row (GPTL's "nranks"), their minimum and maximum, and
 * the imbalance max/mean - 1 in percent (FORMAT.md 7.3, Hatchet's
 * load_imbalance); calls stay the total over ranks, like GPTL's "ncalls".
 * A caption above the table names the ranks and what every column means.
 *
 * Layout: a rounded box, the region column (tree glyphs and the name),
 * then value columns. The tree lives only in the region column, padded to
 * one width, so every number sits under its header whatever the depth;
 * numbers are right-aligned and each column has one format for every row
 * (durations of calls in seconds, %.3e; totals in seconds, %.6f; counts as
 * exact integers, as in every other view). Region names are printed
 * escaped (control bytes, ANSI escapes and invalid UTF-8 as \xNN), so a
 * name cannot redraw the terminal. Rows deeper than MAX_PRINT_DEPTH levels
 * are not printed (pathological recursion such as a > b > a > ... would
 * otherwise print depth^2 characters); a footer says how many were left
 * out. ASCII replaces every box and tree glyph by one of the same width,
 * so both styles align identically.
 */
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/sort.h"
#include "analysis/calltree.h"
#include "analysis/stats.h"
#include "analysis/summary.h"
#include "util/text.h"

#define SESSION_REGION "scope_profiler.session"

/* Deepest tree level printed; deeper rows are counted in the footer. */
#define MAX_PRINT_DEPTH 64

/* ---- columns and sort keys ------------------------------------------------ */

enum { V_CALLS, V_TOTAL, V_EXCL, V_AVG, V_MIN, V_MAX, V_STD, V_P50, V_P95, V_P99,
       V_FIRST, V_LAST, V_IMB, V_RANKS, V_COVERAGE, V_PERCENT, V_PARENT_PERCENT,
       V_RANK_MEAN, V_RANK_MIN, V_RANK_MAX,       /* per-rank inclusive totals */
       V_XRANK_MEAN, V_XRANK_MIN, V_XRANK_MAX, V_XIMB, /* per-rank exclusive ("(own)") */
       V_COUNT };

/* One format per column: FMT_TOTAL sums of time (s, %.6f), FMT_SCI one
 * call's time (s, %.3e), FMT_PCT %.1f%%, FMT_IMB %.2f, FMT_INT an exact
 * count. */
typedef enum { FMT_TOTAL, FMT_SCI, FMT_PCT, FMT_IMB, FMT_INT } cell_fmt;

typedef struct column_def {
    const char *name;
    const char *header;
    int slot;          /* V_*, -1 for the region column */
    cell_fmt fmt;
    bool on_own_row;   /* shown on "(own)" rows */
} column_def;

static const column_def column_defs[] = {
    {"region", "region", -1, FMT_INT, true},
    {"calls", "calls", V_CALLS, FMT_INT, false},
    {"percent", "% session", V_PERCENT, FMT_PCT, true},
    {"parent_percent", "% parent", V_PARENT_PERCENT, FMT_PCT, true},
    {"total", "total [s]", V_TOTAL, FMT_TOTAL, true},
    {"exclusive", "excl [s]", V_EXCL, FMT_TOTAL, false},
    {"avg", "avg [s]", V_AVG, FMT_SCI, true},
    {"min", "min [s]", V_MIN, FMT_SCI, false},
    {"max", "max [s]", V_MAX, FMT_SCI, false},
    {"std", "std [s]", V_STD, FMT_SCI, false},
    {"p50", "p50 [s]", V_P50, FMT_SCI, false},
    {"p95", "p95 [s]", V_P95, FMT_SCI, false},
    {"p99", "p99 [s]", V_P99, FMT_SCI, false},
    {"first", "first [s]", V_FIRST, FMT_SCI, false},
    {"last", "last [s]", V_LAST, FMT_SCI, false},
    {"imbalance", "imbal [%]", V_IMB, FMT_IMB, true},
    {"ranks", "ranks", V_RANKS, FMT_INT, false},
    {"rank_mean", "mean/rank [s]", V_RANK_MEAN, FMT_TOTAL, true},
    {"rank_min", "min/rank [s]", V_RANK_MIN, FMT_TOTAL, true},
    {"rank_max", "max/rank [s]", V_RANK_MAX, FMT_TOTAL, true},
};
/* Indices into column_defs used by the defaults. */
enum { C_REGION = 0, C_CALLS = 1, C_PERCENT = 2, C_PARENT_PERCENT = 3, C_TOTAL = 4, C_AVG = 6,
       C_IMB = 15, C_RANKS = 16, C_RANK_MEAN = 17, C_RANK_MIN = 18, C_RANK_MAX = 19 };
#define COLUMN_DEF_COUNT (sizeof column_defs / sizeof column_defs[0])
#define MAX_COLUMNS 32

const char spi_summary_column_names[] =
    "region,calls,percent,parent_percent,total,exclusive,avg,min,max,std,p50,p95,p99,"
    "first,last,imbalance,ranks,rank_mean,rank_min,rank_max";

typedef struct sort_key { const char *name; int slot; } sort_key;
enum { SORT_START = -1, SORT_NAME = -2 };
static const sort_key sort_keys[] = {
    {"start", SORT_START}, {"name", SORT_NAME}, {"total", V_TOTAL}, {"calls", V_CALLS},
    {"avg", V_AVG}, {"min", V_MIN}, {"max", V_MAX}, {"first", V_FIRST}, {"last", V_LAST},
    {"std", V_STD}, {"p50", V_P50}, {"p95", V_P95}, {"p99", V_P99}, {"imbalance", V_IMB},
    {"exclusive", V_EXCL}, {"rank_mean", V_RANK_MEAN}, {"rank_min", V_RANK_MIN},
    {"rank_max", V_RANK_MAX},
};

/* ---- table rows ------------------------------------------------------------ */

typedef struct trow {
    const char *name;
    long parent;        /* index of the parent row, -1 for a root */
    int depth;
    bool recursive;
    bool own;
    bool has_children;
    int64_t start;      /* earliest start, INT64_MAX when unknown */
    double v[V_COUNT];
    unsigned has;       /* bit per V_* slot */
} trow;

#define HAS(slot) (1u << (slot))

typedef struct node {
    long parent;
    uint32_t region;
    int depth;
    bool recursive;
} node;

typedef struct rec {
    long node;
    uint32_t rank;
    int64_t start, end, excl;
} rec;

typedef struct builder {
    const spi_profile *profile;
    const spi_summary_options *opt;
    bool *visible;      /* [name_count] */
    node *nodes;
    size_t node_count, node_cap;
    long *hash;         /* node index + 1, 0 = empty */
    size_t hash_cap;
    rec *recs;
    size_t rec_count, rec_cap;
    trow *rows;
    size_t row_count, row_cap;
    spi_error *err;
} builder;

static int oom(builder *b) {
    return spi_error_set(b->err, SP_ERR_OUT_OF_MEMORY, "out of memory building the summary");
}

static trow *row_append(builder *b) {
    if (b->row_count == b->row_cap) {
        size_t cap = b->row_cap ? 2 * b->row_cap : 32;
        trow *rows = spi_reallocarray(b->rows, cap, sizeof *rows);
        if (!rows) return NULL;
        b->rows = rows;
        b->row_cap = cap;
    }
    trow *row = &b->rows[b->row_count++];
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

/* ---- one rank's calls into path records ---------------------------------- */

typedef struct rank_rows {
    uint32_t rank;
    size_t row;
} rank_rows;

static int cmp_rank_rows(const void *a, const void *b) {
    const rank_rows *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->row < y->row ? -1 : (x->row > y->row);
}

static int add_rank(builder *b, uint32_t rank, const size_t *rows, size_t row_count) {
    spi_rank_tree tree;
    int status = spi_rank_tree_build_rows(&tree, b->profile, rank, rows, row_count, b->err);
    if (status != SP_OK) return status;
    long *eff = spi_calloc(tree.call_count ? tree.call_count : 1, sizeof *eff);
    if (!eff) {
        spi_rank_tree_free(&tree);
        return oom(b);
    }
    for (size_t i = 0; i < tree.call_count && status == SP_OK; i++) {
        const spi_row *row = &b->profile->rows[tree.rows[i]];
        long parent_node = tree.parent[i] >= 0 ? eff[tree.parent[i]] : -1;
        if (!b->visible[row->region]) {
            /* Renest: the hidden call's children hang where it would. */
            eff[i] = parent_node;
            continue;
        }
        long id = -1;
        if (parent_node >= 0 && b->nodes[parent_node].region == row->region) {
            id = parent_node;  /* a run of one name collapses: recursion */
            b->nodes[id].recursive = true;
        } else {
            status = node_get(b, parent_node, row->region, &id);
            if (status != SP_OK) break;
        }
        eff[i] = id;
        if (b->rec_count == b->rec_cap) {
            size_t cap = b->rec_cap ? 2 * b->rec_cap : 256;
            rec *recs = spi_reallocarray(b->recs, cap, sizeof *recs);
            if (!recs) {
                status = oom(b);
                break;
            }
            b->recs = recs;
            b->rec_cap = cap;
        }
        int64_t start = row->starts[tree.calls[i]];
        b->recs[b->rec_count++] = (rec){id, rank, start, start + row->durations[tree.calls[i]],
                                        tree.exclusive[i]};
    }
    spi_free(eff);
    spi_rank_tree_free(&tree);
    return status;
}

static int cmp_rec(const void *a, const void *b) {
    const rec *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : (x->end > y->end);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

/* Sums of stored values saturate: a damaged file must not make them wrap
 * (nor trip the sanitizers); a real run is ~290 years from the limit. */
static int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* Per-rank spread of a row: mean, min and max of the totals of the ranks
 * that ran it, and the imbalance max/mean - 1 in percent (FORMAT.md 7.3). */
static void rank_spread(trow *row, const int64_t *totals, size_t ranks, int mean_slot) {
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
    row->v[mean_slot == V_RANK_MEAN ? V_IMB : V_XIMB] = imb == 0.0 ? 0.0 : (imb - 1.0) * 100.0;
    row->has |= HAS(mean_slot) | HAS(mean_slot + 1) | HAS(mean_slot + 2) |
                HAS(mean_slot == V_RANK_MEAN ? V_IMB : V_XIMB);
}

/* Pool each node's records into one table row (rows[node] = node). */
static int pool_nodes(builder *b) {
    if (b->rec_count) qsort(b->recs, b->rec_count, sizeof *b->recs, cmp_rec);
    int64_t *durations = spi_calloc(b->rec_count ? b->rec_count : 1, sizeof *durations);
    int64_t *totals = spi_calloc(b->rec_count ? b->rec_count : 1, sizeof *totals);
    int64_t *xtotals = spi_calloc(b->rec_count ? b->rec_count : 1, sizeof *xtotals);
    if (!durations || !totals || !xtotals) {
        spi_free(durations);
        spi_free(totals);
        spi_free(xtotals);
        return oom(b);
    }
    for (size_t i = 0; i < b->node_count; i++) {
        trow *row = row_append(b);
        if (!row) {
            spi_free(durations);
            spi_free(totals);
            spi_free(xtotals);
            return oom(b);
        }
        const node *n = &b->nodes[i];
        row->name = b->profile->names[n->region];
        row->parent = n->parent;
        row->depth = n->depth;
        row->recursive = n->recursive;
    }
    for (size_t a = 0; a < b->rec_count;) {
        size_t e = a;
        while (e < b->rec_count && b->recs[e].node == b->recs[a].node) e++;
        trow *row = &b->rows[b->recs[a].node];
        size_t n = e - a, ranks = 0;
        int64_t total = 0, excl = 0, coverage = 0, last_end = INT64_MIN;
        int64_t first_start = INT64_MAX;
        for (size_t i = a; i < e; i++) {
            const rec *r = &b->recs[i];
            int64_t d = r->end - r->start;  /* >= 0: checked by the call tree */
            durations[i - a] = d;
            total = sat_add(total, d);
            excl = sat_add(excl, r->excl);
            if (r->start < first_start) {
                first_start = r->start;
                row->v[V_FIRST] = (double)d;
            }
            if (r->end > last_end) {
                last_end = r->end;
                row->v[V_LAST] = (double)d;
            }
            if (i == a || r->rank != b->recs[i - 1].rank) {
                totals[ranks] = 0;
                xtotals[ranks++] = 0;
            }
            totals[ranks - 1] = sat_add(totals[ranks - 1], d);
            xtotals[ranks - 1] = sat_add(xtotals[ranks - 1], r->excl);
        }
        /* coverage: per rank, the union of the intervals (sorted by start). */
        for (size_t i = a; i < e;) {
            int64_t cs = b->recs[i].start, ce = b->recs[i].end;
            size_t j = i + 1;
            for (; j < e && b->recs[j].rank == b->recs[i].rank; j++) {
                if (b->recs[j].start <= ce) {
                    if (b->recs[j].end > ce) ce = b->recs[j].end;
                } else {
                    coverage = sat_add(coverage, ce - cs);
                    cs = b->recs[j].start;
                    ce = b->recs[j].end;
                }
            }
            coverage = sat_add(coverage, ce - cs);
            i = j;
        }
        double mean = (double)total / (double)n;
        row->v[V_CALLS] = (double)n;
        row->v[V_TOTAL] = (double)total;
        row->v[V_EXCL] = (double)excl;
        row->v[V_AVG] = mean;
        row->v[V_STD] = spi_std_values(durations, n, mean);
        qsort(durations, n, sizeof *durations, cmp_i64);
        row->v[V_MIN] = (double)durations[0];
        row->v[V_MAX] = (double)durations[n - 1];
        row->v[V_P50] = spi_percentile_sorted(durations, n, 50.0);
        row->v[V_P95] = spi_percentile_sorted(durations, n, 95.0);
        row->v[V_P99] = spi_percentile_sorted(durations, n, 99.0);
        row->v[V_RANKS] = (double)ranks;
        row->v[V_COVERAGE] = (double)coverage;
        row->start = first_start;
        row->has = HAS(V_COUNT) - 1;
        row->has &= ~(HAS(V_PERCENT) | HAS(V_PARENT_PERCENT));
        rank_spread(row, totals, ranks, V_RANK_MEAN);
        rank_spread(row, xtotals, ranks, V_XRANK_MEAN);
        a = e;
    }
    for (size_t i = 0; i < b->node_count; i++)
        if (b->rows[i].parent >= 0) b->rows[b->rows[i].parent].has_children = true;
    spi_free(durations);
    spi_free(totals);
    spi_free(xtotals);
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
} path_rec;

static int cmp_path_rec(const void *a, const void *b) {
    const path_rec *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
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
        bool selected = rank_in(ranks, rank_count, rank);
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
            if (path->recursions > 0 && id >= 0) b->nodes[id].recursive = true;
            eff[i] = id;
            recs[rec_count++] = (path_rec){id, rank, path};
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
        trow *row = row_append(b);
        const node *n = &b->nodes[i];
        row->name = p->names[n->region];
        row->parent = n->parent;
        row->depth = n->depth;
        row->recursive = n->recursive;
    }
    if (status == SP_OK && rec_count) qsort(recs, rec_count, sizeof *recs, cmp_path_rec);
    for (size_t a = 0; a < rec_count && status == SP_OK;) {
        size_t e = a, ranks_seen = 0;
        trow *row = &b->rows[recs[a].node];
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
        row->v[V_CALLS] = (double)calls;
        row->v[V_TOTAL] = (double)total;
        row->v[V_EXCL] = (double)excl;
        row->v[V_AVG] = (double)total / (double)calls;
        row->v[V_MIN] = (double)minimum;
        row->v[V_MAX] = (double)maximum;
        row->v[V_STD] = sqrt(m2 > 0 ? m2 / (double)calls : 0.0);
        row->v[V_RANKS] = (double)ranks_seen;
        /* Without the calls the union of their intervals is unknown; the
         * total is its upper bound (exact for a path of one thread that
         * does not recurse). */
        row->v[V_COVERAGE] = (double)total;
        row->has = HAS(V_CALLS) | HAS(V_TOTAL) | HAS(V_EXCL) | HAS(V_AVG) | HAS(V_MIN) |
                   HAS(V_MAX) | HAS(V_STD) | HAS(V_RANKS) | HAS(V_COVERAGE);
        rank_spread(row, totals, ranks_seen, V_RANK_MEAN);
        rank_spread(row, xtotals, ranks_seen, V_XRANK_MEAN);
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

/* Union of a region's call intervals per rank, summed (flat rows), over
 * the region's selected rows. */
static int64_t region_coverage(const spi_profile *p, const size_t *rows, size_t row_count,
                               bool *ok) {
    int64_t coverage = 0;
    *ok = true;
    for (size_t k = 0; k < row_count; k++) {
        const spi_row *row = &p->rows[rows[k]];
        if (row->count == 0) continue;
        if (!row->starts || !row->durations) {
            *ok = false;
            return 0;
        }
        int64_t *pairs = spi_calloc((size_t)row->count * 2, sizeof *pairs);
        if (!pairs) {
            *ok = false;
            return 0;
        }
        /* Sort (start, end) pairs by start via an index-free trick: two
         * int64 per element compared on the first. */
        for (uint64_t i = 0; i < row->count; i++) {
            pairs[2 * i] = row->starts[i];
            if (row->durations[i] < 0 ||
                __builtin_add_overflow(row->starts[i], row->durations[i], &pairs[2 * i + 1])) {
                spi_free(pairs);
                *ok = false;  /* a damaged row: the total stands in */
                return 0;
            }
        }
        qsort(pairs, (size_t)row->count, 2 * sizeof *pairs, cmp_i64);
        int64_t cs = pairs[0], ce = pairs[1];
        for (uint64_t i = 1; i < row->count; i++) {
            if (pairs[2 * i] <= ce) {
                if (pairs[2 * i + 1] > ce) ce = pairs[2 * i + 1];
            } else {
                coverage = sat_add(coverage, ce - cs);
                cs = pairs[2 * i];
                ce = pairs[2 * i + 1];
            }
        }
        coverage = sat_add(coverage, ce - cs);
        spi_free(pairs);
    }
    return coverage;
}

static void flat_row_values(trow *row, const spi_region_stats *s) {
    row->v[V_CALLS] = (double)s->calls;
    row->v[V_TOTAL] = (double)s->total_ns;
    row->v[V_AVG] = s->mean_ns;
    row->v[V_IMB] = s->rank_imbalance_pct;
    row->v[V_RANKS] = (double)s->ranks_called;
    row->v[V_RANK_MEAN] = s->rank_mean_ns;
    row->v[V_RANK_MIN] = (double)s->rank_min_ns;
    row->v[V_RANK_MAX] = (double)s->rank_max_ns;
    row->has = HAS(V_CALLS) | HAS(V_TOTAL) | HAS(V_AVG) | HAS(V_IMB) | HAS(V_RANKS) |
               HAS(V_RANK_MEAN) | HAS(V_RANK_MIN) | HAS(V_RANK_MAX);
    if (s->available & SPI_STAT_EXCLUSIVE) {
        row->v[V_EXCL] = (double)s->exclusive_ns;
        row->has |= HAS(V_EXCL);
    }
    if (s->available & SPI_STAT_MIN_MAX) {
        row->v[V_MIN] = (double)s->min_ns;
        row->v[V_MAX] = (double)s->max_ns;
        row->has |= HAS(V_MIN) | HAS(V_MAX);
    }
    if (s->available & SPI_STAT_STD) {
        row->v[V_STD] = s->std_ns;
        row->has |= HAS(V_STD);
    }
    if (s->available & SPI_STAT_PERCENTILES) {
        row->v[V_P50] = s->p50_ns;
        row->v[V_P95] = s->p95_ns;
        row->v[V_P99] = s->p99_ns;
        row->has |= HAS(V_P50) | HAS(V_P95) | HAS(V_P99);
    }
    if (s->available & SPI_STAT_FIRST_LAST) {
        row->v[V_FIRST] = (double)s->first_ns;
        row->v[V_LAST] = (double)s->last_ns;
        row->has |= HAS(V_FIRST) | HAS(V_LAST);
    }
    if ((s->available & SPI_STAT_START_END) && s->calls) row->start = s->first_start_ns;
}

/* One flat row per visible region (all of them when flat, else only those
 * without a tree row). A NESTING status leaves the row without exclusive
 * time and is passed on. Linear in rows and regions: the rows are grouped
 * by region once, and every row's exclusive time is computed once (one
 * call tree per rank that needs one) only when some row has to be shown. */
static int add_flat_rows(builder *b, bool only_missing, int *nesting) {
    const spi_profile *p = b->profile;
    spi_region_rows index;
    bool *in_tree = spi_calloc(p->name_count + 1, sizeof *in_tree);
    int64_t *exclusive = spi_calloc(p->row_count + 1, sizeof *exclusive);
    bool *exclusive_ok = spi_calloc(p->row_count + 1, sizeof *exclusive_ok);
    int status = spi_region_rows_build(&index, p, b->opt->ranks, b->opt->rank_count);
    if (status != SP_OK || !in_tree || !exclusive || !exclusive_ok) {
        if (status == SP_OK) spi_region_rows_free(&index);
        spi_free(in_tree);
        spi_free(exclusive);
        spi_free(exclusive_ok);
        return oom(b);
    }
    for (size_t i = 0; only_missing && i < b->node_count; i++) in_tree[b->nodes[i].region] = true;
    bool have_exclusive = false;
    for (size_t region = 0; region < p->name_count && status == SP_OK; region++) {
        const size_t *rows = index.rows + index.start[region];
        size_t row_count = index.start[region + 1] - index.start[region];
        if (!b->visible[region] || row_count == 0 || in_tree[region]) continue;
        if (!have_exclusive) {
            spi_error local;
            spi_error_clear(&local);
            status = spi_rows_exclusive(p, exclusive, exclusive_ok, &local);
            if (status == SP_ERR_NESTING) {
                if (*nesting == SP_OK) {
                    *nesting = status;
                    spi_error_set(b->err, status, "%s", local.message);
                }
                status = SP_OK;
            } else if (status != SP_OK) {
                spi_error_set(b->err, status, "%s", local.message);
                break;
            }
            have_exclusive = true;
        }
        spi_region_stats s;
        status = spi_region_stats_from_rows(&s, p, rows, row_count, exclusive, exclusive_ok,
                                            b->err);
        if (status == SP_ERR_NESTING) status = SP_OK;  /* reported above */
        if (status != SP_OK) break;
        trow *row = row_append(b);
        if (!row) {
            status = oom(b);
            break;
        }
        row->name = p->names[region];
        flat_row_values(row, &s);
        bool ok;
        int64_t coverage = region_coverage(p, rows, row_count, &ok);
        row->v[V_COVERAGE] = ok ? (double)coverage : (double)s.total_ns;
        row->has |= HAS(V_COVERAGE);
        /* (own) rows exist only in the tree; per-rank exclusive is not
         * needed here. */
    }
    spi_region_rows_free(&index);
    spi_free(in_tree);
    spi_free(exclusive);
    spi_free(exclusive_ok);
    return status;
}

/* ---- ordering --------------------------------------------------------------- */

typedef struct order_ctx {
    const trow *rows;
    int key;
} order_ctx;

static int row_compare(const void *context, size_t ia, size_t ib) {
    const order_ctx *c = context;
    const trow *a = &c->rows[ia], *b = &c->rows[ib];
    if (a->parent != b->parent) return a->parent < b->parent ? -1 : 1;
    /* Descending by the key, rows without a value for it last (FORMAT.md
     * 7.5: "None last"); then by name, then by start, then by position, so
     * the order is total and the sort stable. tests/inspect checks
     * --sort total. */
    int key = c->key;
    if (key >= 0 && key < V_COUNT) {
        unsigned bit = 1u << (unsigned)key;
        int ha = (a->has & bit) ? 1 : 0, hb = (b->has & bit) ? 1 : 0;
        if (ha != hb) return hb - ha;  /* unavailable last */
        if (ha) {
            double x = a->v[key], y = b->v[key];
            if (x > y) return -1;
            if (x < y) return 1;
        }
    }
    if (key != SORT_START) {
        int by_name = strcmp(a->name, b->name);
        if (by_name) return by_name;
    }
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return ia < ib ? -1 : (ia > ib);
}

/* ---- rendering ------------------------------------------------------------- */

typedef struct glyphs {
    const char *tl, *tr, *bl, *br, *h, *v, *lt, *rt, *branch, *pipe, *rec;
} glyphs;

static const glyphs unicode_glyphs = {"\u256d", "\u256e", "\u2570", "\u256f", "\u2500",
                                      "\u2502", "\u251c", "\u2524", "\u2514\u2500 ", "\u2502 ",
                                      " \u21bb"};
static const glyphs ascii_glyphs = {"+", "+", "+", "+", "-", "|", "+", "+", "`- ", "| ", " (rec)"};

/* Display width: one column per code point (the glyphs used are narrow,
 * and names are escaped before they get here). */
static size_t text_width(const char *s) {
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

static void format_cell(char *buf, size_t len, cell_fmt fmt, double value) {
    switch (fmt) {
    case FMT_TOTAL: snprintf(buf, len, "%.6f", value / 1e9); break;
    case FMT_SCI: snprintf(buf, len, "%.3e", value / 1e9); break;
    case FMT_PCT: snprintf(buf, len, "%.1f%%", value); break;
    case FMT_IMB: snprintf(buf, len, "%.2f", value); break;
    case FMT_INT: snprintf(buf, len, "%.0f", value); break;
    }
}

static void put_repeat(FILE *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) fputs(s, out);
}

static void put_padded(FILE *out, const char *s, size_t width, bool right) {
    size_t w = text_width(s);
    if (right && w < width) put_repeat(out, " ", width - w);
    fputs(s, out);
    if (!right && w < width) put_repeat(out, " ", width - w);
}

static bool want_unicode(const spi_summary_options *o, FILE *out) {
    if (o->style == SPI_SUMMARY_STYLE_ASCII) return false;
    if (o->style == SPI_SUMMARY_STYLE_UNICODE) return true;
    int fd = fileno(out);
    if (fd < 0 || !isatty(fd)) return false;
    /* The first of LC_ALL, LC_CTYPE, LANG that is set decides the charset. */
    const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") ||
                            strstr(v, "utf8");
    }
    return false;
}

typedef struct render {
    FILE *out;
    const glyphs *g;
    int cols[MAX_COLUMNS];
    size_t col_count;
    bool calls_inline;
    char **cells;       /* [line_cap * col_count] */
    size_t line_count, line_cap;
} render;

/* The region cell: tree glyphs for `depth` levels (at most
 * MAX_PRINT_DEPTH + 1 of them, so a cell is bounded), the escaped name,
 * the recursion mark and the calls when they have no column. */
static char *region_cell(const render *r, const trow *row, int depth) {
    const glyphs *g = r->g;
    const char *name = row->own ? "(own)" : row->name ? row->name : "";
    size_t name_len = spi_text_escape(NULL, 0, name);
    char calls[48] = "";
    if (r->calls_inline && !row->own && row->v[V_CALLS] != 1.0)
        snprintf(calls, sizeof calls, " (%.0fx)", row->v[V_CALLS]);
    size_t levels = depth > 0 ? (size_t)depth : 0;
    size_t len = (levels ? (levels - 1) * strlen(g->pipe) + strlen(g->branch) : 0) + name_len +
                 (row->recursive ? strlen(g->rec) : 0) + strlen(calls) + 1;
    char *cell = spi_malloc(len);
    if (!cell) return NULL;
    size_t used = 0;
    for (size_t i = 1; i < levels; i++) used += (size_t)sprintf(cell + used, "%s", g->pipe);
    if (levels) used += (size_t)sprintf(cell + used, "%s", g->branch);
    spi_text_escape(cell + used, name_len + 1, name);
    used += name_len;
    snprintf(cell + used, len - used, "%s%s", row->recursive ? g->rec : "", calls);
    return cell;
}

static int add_line(render *r, const trow *row, const trow *owner, spi_error *err) {
    char **cells = &r->cells[r->line_count++ * r->col_count];
    int depth = row->own ? owner->depth + 1 : row->depth;
    for (size_t c = 0; c < r->col_count; c++) {
        const column_def *def = &column_defs[r->cols[c]];
        char buf[64];
        if (def->slot < 0) {
            cells[c] = region_cell(r, row, depth);
        } else {
            if (row->own && !def->on_own_row) buf[0] = '\0';
            else if (row->has & HAS(def->slot)) format_cell(buf, sizeof buf, def->fmt, row->v[def->slot]);
            else snprintf(buf, sizeof buf, "-");
            cells[c] = spi_strdup(buf);
        }
        if (!cells[c]) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return SP_OK;
}

static void emit_table(render *r, const char *title, const char *caption) {
    size_t width[MAX_COLUMNS];
    for (size_t c = 0; c < r->col_count; c++) {
        width[c] = text_width(column_defs[r->cols[c]].header);
        for (size_t i = 0; i < r->line_count; i++) {
            size_t w = text_width(r->cells[i * r->col_count + c]);
            if (w > width[c]) width[c] = w;
        }
    }
    /* Gaps: four after the region column, two between value columns. */
    size_t inner = 0;
    for (size_t c = 0; c < r->col_count; c++) {
        inner += width[c];
        if (c + 1 < r->col_count) inner += column_defs[r->cols[c]].slot < 0 ? 4 : 2;
    }
    FILE *out = r->out;
    const glyphs *g = r->g;
    if (title) fprintf(out, "  %s\n", title);
    if (caption) fprintf(out, "  %s\n", caption);
    fputs("  ", out); fputs(g->tl, out); put_repeat(out, g->h, inner + 2); fputs(g->tr, out);
    fputc('\n', out);
    for (long i = -1; i < (long)r->line_count; i++) {
        fputs("  ", out); fputs(g->v, out); fputc(' ', out);
        for (size_t c = 0; c < r->col_count; c++) {
            const column_def *def = &column_defs[r->cols[c]];
            /* The tree lives in the region column only; numbers (and
             * their headers) are right-aligned so every digit sits under
             * its header at any depth. */
            const char *cell = i < 0 ? def->header : r->cells[(size_t)i * r->col_count + c];
            put_padded(out, cell, width[c], def->slot >= 0);
            if (c + 1 < r->col_count) put_repeat(out, " ", def->slot < 0 ? 4 : 2);
        }
        fputc(' ', out); fputs(g->v, out); fputc('\n', out);
        if (i < 0) {
            fputs("  ", out); fputs(g->lt, out); put_repeat(out, g->h, inner + 2);
            fputs(g->rt, out); fputc('\n', out);
        }
    }
    fputs("  ", out); fputs(g->bl, out); put_repeat(out, g->h, inner + 2); fputs(g->br, out);
    fputc('\n', out);
}

/* ---- options --------------------------------------------------------------- */

static int compile_patterns(const char *const *patterns, size_t count, regex_t *out,
                            size_t *compiled, const char *what, spi_error *err) {
    for (size_t i = 0; i < count; i++) {
        /* Anchored at the start like Python's re.match; the group keeps an
         * alternation inside the pattern under the anchor. */
        size_t len = strlen(patterns[i]) + 4;
        char *anchored = spi_malloc(len);
        if (!anchored) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
        snprintf(anchored, len, "^(%s)", patterns[i]);
        int rc = regcomp(&out[i], anchored, REG_EXTENDED | REG_NOSUB);
        spi_free(anchored);
        if (rc != 0) {
            char msg[256];
            regerror(rc, NULL, msg, sizeof msg);
            return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "invalid %s pattern '%s': %s",
                                 what, patterns[i], msg);
        }
        (*compiled)++;
    }
    return SP_OK;
}

static int parse_columns(const char *spec, bool has_session, bool multi_rank, int *cols,
                         size_t *count, bool *calls_inline, spi_error *err) {
    *count = 0;
    if (!spec || !*spec) {
        /* FORMAT.md 7.5: without a session row the percentages mean
         * nothing, so the default shrinks to region + total. Several ranks
         * replace the sums by the per-rank spread (see the top of file). */
        static const int with_session[] = {C_REGION, C_CALLS, C_PERCENT, C_PARENT_PERCENT,
                                           C_TOTAL, C_AVG};
        static const int without[] = {C_REGION, C_TOTAL};
        static const int multi_session[] = {C_REGION, C_CALLS, C_PERCENT, C_PARENT_PERCENT,
                                            C_RANK_MEAN, C_RANK_MIN, C_RANK_MAX, C_IMB, C_RANKS};
        static const int multi_without[] = {C_REGION, C_CALLS, C_RANK_MEAN, C_RANK_MIN,
                                            C_RANK_MAX, C_IMB, C_RANKS};
        const int *src = multi_rank ? (has_session ? multi_session : multi_without)
                                    : (has_session ? with_session : without);
        size_t n = multi_rank ? (has_session ? 9 : 7) : (has_session ? 6 : 2);
        for (size_t i = 0; i < n; i++) cols[(*count)++] = src[i];
    } else {
        const char *p = spec;
        while (*p) {
            size_t len = strcspn(p, ",");
            size_t found = COLUMN_DEF_COUNT;
            for (size_t i = 0; i < COLUMN_DEF_COUNT; i++)
                if (strlen(column_defs[i].name) == len && !strncmp(column_defs[i].name, p, len))
                    found = i;
            if (len > 0) {
                if (found == COLUMN_DEF_COUNT)
                    return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                         "unknown column '%.*s' (known: %s)", (int)len, p,
                                         spi_summary_column_names);
                if (*count == MAX_COLUMNS)
                    return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "too many columns");
                cols[(*count)++] = (int)found;
            }
            p += len;
            if (*p == ',') p++;
        }
        if (*count == 0)
            return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "no columns given");
    }
    /* The tree needs its names: the region column always comes first. */
    bool has_region = false, has_calls = false;
    for (size_t i = 0; i < *count; i++) {
        has_region = has_region || cols[i] == 0;
        has_calls = has_calls || cols[i] == 1;
    }
    if (!has_region) {
        if (*count == MAX_COLUMNS) (*count)--;
        memmove(cols + 1, cols, *count * sizeof *cols);
        cols[0] = 0;
        (*count)++;
    } else if (cols[0] != 0) {
        size_t i = 0;
        while (cols[i] != 0) i++;
        memmove(cols + 1, cols, i * sizeof *cols);
        cols[0] = 0;
    }
    *calls_inline = !has_calls;
    return SP_OK;
}

static bool matches_any(const regex_t *re, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (regexec(&re[i], name, 0, NULL, 0) == 0) return true;
    return false;
}

/* ---- entry point ------------------------------------------------------------ */

int spi_summary_print(const spi_profile *profile, FILE *out, const spi_summary_options *options,
                      spi_error *err) {
    spi_summary_options defaults = {0};
    const spi_summary_options *o = options ? options : &defaults;
    if (!profile || !out)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "profile or output stream is NULL");
    if ((o->include_count && !o->include) || (o->exclude_count && !o->exclude) ||
        (o->rank_count && !o->ranks))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "a filter count without its array");

    int key = SORT_START;
    if (o->sort && *o->sort) {
        size_t i = 0, n = sizeof sort_keys / sizeof sort_keys[0];
        while (i < n && strcmp(sort_keys[i].name, o->sort) != 0) i++;
        if (i == n)
            return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                 "unknown sort key '%s' (known: start, total, calls, avg, min, "
                                 "max, first, last, std, p50, p95, p99, imbalance, exclusive, "
                                 "rank_mean, rank_min, rank_max, name)",
                                 o->sort);
        key = sort_keys[i].slot;
    }

    int status = SP_OK, nesting = SP_OK;
    builder b = {.profile = profile, .opt = o, .err = err};
    render r = {.out = out};
    size_t *order = NULL, *tmp = NULL, *display = NULL;
    uint32_t *ranks = NULL;
    rank_rows *by_rank = NULL;
    size_t nr = 0;
    regex_t *inc = spi_calloc(o->include_count + 1, sizeof *inc);
    regex_t *exc = spi_calloc(o->exclude_count + 1, sizeof *exc);
    size_t inc_n = 0, exc_n = 0;
    b.visible = spi_calloc(profile->name_count + 1, sizeof *b.visible);
    if (!inc || !exc || !b.visible) {
        status = oom(&b);
        goto done;
    }
    status = compile_patterns(o->include, o->include_count, inc, &inc_n, "include", err);
    if (status == SP_OK)
        status = compile_patterns(o->exclude, o->exclude_count, exc, &exc_n, "exclude", err);
    if (status != SP_OK) goto done;
    for (size_t i = 0; i < profile->name_count; i++) {
        const char *name = profile->names[i] ? profile->names[i] : "";
        b.visible[i] = (inc_n == 0 || matches_any(inc, inc_n, name)) &&
                       !matches_any(exc, exc_n, name);
    }

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
    size_t job_ranks = nr > profile->rank_count ? nr : profile->rank_count;
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
    bool multi_rank = job_ranks > 1;

    /* The call tree, unless flat was asked for or the data cannot give one:
     * from the calls, or from an aggregate file's stored call paths. */
    bool paths = !o->flat && profile->aggregate && profile->path_count > 0;
    bool tree = !o->flat && (paths || spi_rank_tree_possible(profile));
    if (tree) {
        if (paths) status = add_paths(&b, ranks, nr);
        size_t *rank_row_list = paths ? NULL : spi_calloc(selected_rows + 1, sizeof *rank_row_list);
        if (!paths && !rank_row_list) status = oom(&b);
        for (size_t a = 0; !paths && a < selected_rows && status == SP_OK;) {
            size_t e = a;
            for (; e < selected_rows && by_rank[e].rank == by_rank[a].rank; e++)
                rank_row_list[e - a] = by_rank[e].row;
            status = add_rank(&b, by_rank[a].rank, rank_row_list, e - a);
            a = e;
        }
        spi_free(rank_row_list);
        if (status == SP_ERR_NESTING) {
            /* Whole table falls back to flat rows (FORMAT.md 7.5). */
            nesting = status;
            status = SP_OK;
            tree = false;
            b.node_count = 0;
            b.rec_count = 0;
        }
        if (status != SP_OK) goto done;
    }
    if (tree && !paths) {
        b.row_cap = b.node_count + profile->name_count + 1;
        b.rows = spi_calloc(b.row_cap, sizeof *b.rows);
        if (!b.rows) {
            status = oom(&b);
            goto done;
        }
        status = pool_nodes(&b);
    }
    if (status == SP_OK) status = add_flat_rows(&b, tree, &nesting);
    if (status != SP_OK) goto done;

    /* % session and % parent (FORMAT.md 7.5). */
    const trow *session = NULL;
    for (size_t i = 0; i < b.row_count && !session; i++)
        if (b.rows[i].parent < 0 && !strcmp(b.rows[i].name, SESSION_REGION)) session = &b.rows[i];
    double session_total = session ? session->v[V_TOTAL] : 0.0;
    for (size_t i = 0; i < b.row_count; i++) {
        trow *row = &b.rows[i];
        if (session_total > 0) {
            int slot = o->percent_exclusive && row != session ? V_EXCL : V_COVERAGE;
            if (o->percent_exclusive && row == session) slot = V_TOTAL;
            if (row->has & HAS(slot)) {
                row->v[V_PERCENT] = 100.0 * row->v[slot] / session_total;
                row->has |= HAS(V_PERCENT);
            }
        }
        if (row->parent >= 0) {
            double pc = b.rows[row->parent].v[V_COVERAGE];
            if (pc > 0) {
                row->v[V_PARENT_PERCENT] = 100.0 * row->v[V_COVERAGE] / pc;
                row->has |= HAS(V_PARENT_PERCENT);
            }
        }
    }

    status = parse_columns(o->columns, session != NULL, multi_rank, r.cols, &r.col_count,
                           &r.calls_inline, err);
    if (status != SP_OK) goto done;

    /* Order: siblings sorted by the key, then a pre-order walk. */
    size_t n = b.row_count;
    order = spi_calloc(n + 1, sizeof *order);
    tmp = spi_calloc(n + 1, sizeof *tmp);
    display = spi_calloc(2 * n + 1, sizeof *display);  /* rows and their "(own)" */
    size_t *first_child = spi_calloc(n + 1, sizeof *first_child);
    size_t *stack = spi_calloc(n + 1, sizeof *stack);
    if (!order || !tmp || !display || !first_child || !stack) {
        spi_free(first_child);
        spi_free(stack);
        status = oom(&b);
        goto done;
    }
    for (size_t i = 0; i < n; i++) order[i] = i;
    order_ctx ctx = {b.rows, key};
    spi_sort_indices(order, tmp, n, row_compare, &ctx);
    /* order is grouped by parent (roots first, parent -1); first_child[p]
     * is where p's group starts, n when p has none. */
    for (size_t i = 0; i <= n; i++) first_child[i] = n;
    for (size_t i = n; i-- > 0;) {
        long p = b.rows[order[i]].parent;
        first_child[p < 0 ? n : (size_t)p] = i;
    }
    /* Iterative pre-order: the stack holds positions in `order`. Rows
     * deeper than MAX_PRINT_DEPTH are skipped (counted for the footer), so
     * the output stays linear in the rows shown whatever the depth. */
    size_t depth = 0, shown = 0, too_deep = 0;
    for (size_t i = 0; i < n; i++) too_deep += b.rows[i].depth >= MAX_PRINT_DEPTH;
    if (first_child[n] < n) stack[depth++] = first_child[n];
    while (depth > 0) {
        size_t pos = stack[depth - 1];
        if (pos >= n) {  /* this level is exhausted */
            depth--;
            continue;
        }
        size_t row = order[pos];
        /* advance this level to the next sibling */
        long parent = b.rows[row].parent;
        stack[depth - 1] = pos + 1 < n && b.rows[order[pos + 1]].parent == parent ? pos + 1 : n;
        display[shown++] = row;
        if (b.rows[row].has_children) {
            display[shown++] = n + row;  /* its "(own)" row */
            if (first_child[row] < n && b.rows[row].depth + 1 < MAX_PRINT_DEPTH)
                stack[depth++] = first_child[row];
        }
    }
    spi_free(first_child);
    spi_free(stack);

    r.g = want_unicode(o, out) ? &unicode_glyphs : &ascii_glyphs;
    r.line_cap = shown;
    r.cells = spi_calloc(shown * r.col_count + 1, sizeof *r.cells);
    if (!r.cells) {
        status = oom(&b);
        goto done;
    }
    for (size_t i = 0; i < shown && status == SP_OK; i++) {
        if (display[i] >= n) {
            const trow *owner = &b.rows[display[i] - n];
            trow own = {.name = "(own)", .own = true, .parent = -1};
            own.v[V_TOTAL] = owner->v[V_EXCL];
            own.v[V_AVG] = owner->v[V_CALLS] > 0 ? owner->v[V_EXCL] / owner->v[V_CALLS] : 0.0;
            own.has = HAS(V_TOTAL) | HAS(V_AVG);
            if (session_total > 0) {
                own.v[V_PERCENT] = 100.0 * owner->v[V_EXCL] / session_total;
                own.has |= HAS(V_PERCENT);
            }
            if (owner->v[V_COVERAGE] > 0) {
                own.v[V_PARENT_PERCENT] = 100.0 * owner->v[V_EXCL] / owner->v[V_COVERAGE];
                own.has |= HAS(V_PARENT_PERCENT);
            }
            /* per rank: the owner's exclusive totals, spread the same way */
            static const int from[] = {V_XRANK_MEAN, V_XRANK_MIN, V_XRANK_MAX, V_XIMB};
            static const int to[] = {V_RANK_MEAN, V_RANK_MIN, V_RANK_MAX, V_IMB};
            for (size_t k = 0; k < 4; k++)
                if (owner->has & HAS(from[k])) {
                    own.v[to[k]] = owner->v[from[k]];
                    own.has |= HAS(to[k]);
                }
            status = add_line(&r, &own, owner, err);
        } else {
            status = add_line(&r, &b.rows[display[i]], NULL, err);
        }
    }
    if (status != SP_OK) goto done;
    char caption[256];
    if (multi_rank) {
        snprintf(caption, sizeof caption,
                 "mean over %zu%s ranks: per-rank mean/min/max of the ranks that ran each "
                 "row; calls, total, excl: sums; imbal = max/mean - 1",
                 job_ranks, o->ranks ? " selected" : "");
    }
    emit_table(&r, o->title, multi_rank ? caption : NULL);
    if (too_deep)
        fprintf(out, "  note: %zu row%s deeper than %d levels not shown (--flat lists every "
                     "region)\n",
                too_deep, too_deep == 1 ? "" : "s", MAX_PRINT_DEPTH);
    if (nesting != SP_OK) fprintf(out, "  note: %s; showing one row per region\n", err->message);
    fputc('\n', out);
    if (fflush(out) != 0 || ferror(out))
        status = spi_error_set(err, SP_ERR_OUTPUT, "cannot write the summary table");
    else
        status = nesting;

done:
    for (size_t i = 0; r.cells && i < r.line_count * r.col_count; i++) spi_free(r.cells[i]);
    spi_free(r.cells);
    for (size_t i = 0; i < inc_n; i++) regfree(&inc[i]);
    for (size_t i = 0; i < exc_n; i++) regfree(&exc[i]);
    spi_free(inc);
    spi_free(exc);
    spi_free(b.visible);
    spi_free(b.nodes);
    spi_free(b.hash);
    spi_free(b.recs);
    spi_free(b.rows);
    spi_free(ranks);
    spi_free(by_rank);
    spi_free(order);
    spi_free(tmp);
    spi_free(display);
    return status;
}
