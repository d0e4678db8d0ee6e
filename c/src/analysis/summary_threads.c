/*
 * summary_threads.c - the per-thread view of the summary (summary_threads.h,
 * issue 34).
 *
 * The summary table pools threads: a parallel region's row sums its team,
 * so it may outgrow its parent, and nothing says what one thread did. This
 * view splits the same call paths by thread. A trace's come from the one
 * walk the table uses (call_paths.h, asked for its (path, thread) rows: one
 * row per path a thread ran, never per call); an aggregate file's paths are
 * per thread already. Own time is per thread: the calls' total minus their
 * children's on the same thread, so on every thread own plus the children
 * (less what ran beside their parent elsewhere) is the total.
 *
 * Rows come out by rank, thread, then the tree's pre-order, so a reader
 * can indent them as the table does.
 */
#include "analysis/summary_threads.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/sort.h"
#include "profile/call_cursor.h"
#include "analysis/call_paths.h"
#include "analysis/stats.h"

/* A path table both sources fill: parents before children. */
typedef struct path_list {
    size_t count;
    int64_t *parent;          /* -1 = root */
    uint32_t *region;
    size_t *depth;
    size_t *preorder;         /* position in the tree's pre-order */
} path_list;

/* One row before its path is spelled out. */
typedef struct item {
    uint32_t rank;
    int64_t thread;
    size_t path;
    uint64_t calls;
    int64_t total, own, other;
} item;

static int oom(spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory building the threads view");
}

static int list_alloc(path_list *l, size_t count) {
    l->count = count;
    l->parent = spi_calloc(count + 1, sizeof *l->parent);
    l->region = spi_calloc(count + 1, sizeof *l->region);
    l->depth = spi_calloc(count + 1, sizeof *l->depth);
    l->preorder = spi_calloc(count + 1, sizeof *l->preorder);
    return l->parent && l->region && l->depth && l->preorder ? SP_OK : SP_ERR_OUT_OF_MEMORY;
}

static void list_free(path_list *l) {
    spi_free(l->parent);
    spi_free(l->region);
    spi_free(l->depth);
    spi_free(l->preorder);
}

/* Depths and the pre-order (siblings in index order, which is the order
 * of their first calls), without recursion: a deep tree cannot overflow
 * the stack. */
static int list_order(path_list *l) {
    size_t n = l->count;
    size_t *first = spi_calloc(n + 1, sizeof *first), *next = spi_calloc(n + 1, sizeof *next);
    size_t *stack = spi_calloc(n + 1, sizeof *stack);
    int status = first && next && stack ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    if (status == SP_OK) {
        /* first[p + 1]: p's first child + 1 (first[0]: the roots'); next: sibling + 1 */
        for (size_t i = n; i-- > 0;) {
            size_t p = l->parent[i] < 0 ? 0 : (size_t)l->parent[i] + 1;
            next[i] = first[p];
            first[p] = i + 1;
        }
        for (size_t i = 0; i < n; i++)
            l->depth[i] = l->parent[i] < 0 ? 0 : l->depth[l->parent[i]] + 1;
        /* Children (the roots first) go onto the stack reversed, so the
         * first comes out first; each path is pushed once, so the stack
         * never holds more than n entries. */
        size_t top = 0, seen = 0, parent_slot = 0;
        for (;;) {
            size_t kids = 0;
            for (size_t c = first[parent_slot]; c; c = next[c - 1]) kids++;
            size_t at = top + kids;
            for (size_t c = first[parent_slot]; c; c = next[c - 1]) stack[--at] = c - 1;
            top += kids;
            if (top == 0) break;
            size_t i = stack[--top];
            l->preorder[i] = seen++;
            parent_slot = i + 1;
        }
    }
    spi_free(first);
    spi_free(next);
    spi_free(stack);
    return status;
}

typedef struct sort_ctx {
    const item *items;
    const path_list *paths;
} sort_ctx;

static int compare_items(const void *context, size_t a, size_t b) {
    const sort_ctx *c = context;
    const item *x = &c->items[a], *y = &c->items[b];
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    size_t px = c->paths->preorder[x->path], py = c->paths->preorder[y->path];
    return px < py ? -1 : (px > py);
}

/* ---- sources ------------------------------------------------------------- */

typedef struct rank_row {
    uint32_t rank;
    size_t row;
} rank_row;

static int cmp_rank_row(const void *a, const void *b) {
    const rank_row *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->row < y->row ? -1 : (x->row > y->row);
}

/* A trace: the calls folded into call paths with their (path, thread) rows. */
static int from_calls(const spi_profile *p, const uint32_t *ranks, size_t rank_count,
                      path_list *list, item **items, size_t *item_count, spi_error *err) {
    rank_row *by_rank = spi_calloc(p->row_count + 1, sizeof *by_rank);
    uint32_t *rank_list = spi_calloc(p->row_count + 1, sizeof *rank_list);
    size_t *rows = spi_calloc(p->row_count + 1, sizeof *rows);
    size_t *first = spi_calloc(p->row_count + 2, sizeof *first);
    int status = by_rank && rank_list && rows && first ? SP_OK : oom(err);
    size_t n = 0, nr = 0;
    for (size_t i = 0; status == SP_OK && i < p->row_count; i++)
        if (spi_rank_selected(ranks, rank_count, p->rows[i].rank))
            by_rank[n++] = (rank_row){p->rows[i].rank, i};
    if (status == SP_OK && n) qsort(by_rank, n, sizeof *by_rank, cmp_rank_row);
    for (size_t i = 0; status == SP_OK && i < n; i++) {
        if (i == 0 || by_rank[i].rank != by_rank[i - 1].rank) {
            first[nr] = i;
            rank_list[nr++] = by_rank[i].rank;
        }
        rows[i] = by_rank[i].row;
    }
    first[nr] = n;
    spi_path_summary *paths = NULL;
    spi_path_thread *threads = NULL;
    size_t path_count = 0, thread_count = 0;
    spi_call_paths_options options = {.thread_rows = &threads, .thread_row_count = &thread_count};
    if (status == SP_OK)
        status = spi_call_paths_build(p, rank_list, nr, rows, first, &options, &paths,
                                      &path_count, err);
    if (status == SP_OK && list_alloc(list, path_count) != SP_OK) status = oom(err);
    for (size_t i = 0; status == SP_OK && i < path_count; i++) {
        list->parent[i] = paths[i].path.parent;
        list->region[i] = paths[i].path.region;
    }
    if (status == SP_OK) {
        *items = spi_calloc(thread_count + 1, sizeof **items);
        if (!*items) status = oom(err);
    }
    for (size_t i = 0; status == SP_OK && i < thread_count; i++) {
        const spi_path_thread *t = &threads[i];
        (*items)[i] = (item){t->rank, t->thread, t->path, t->count, t->total,
                             t->exclusive > 0 ? t->exclusive : 0, t->other_threads};
    }
    if (status == SP_OK) *item_count = thread_count;
    spi_free(paths);
    spi_free(threads);
    spi_free(by_rank);
    spi_free(rank_list);
    spi_free(rows);
    spi_free(first);
    return status;
}

/* An aggregate file: its call paths are per thread already. */
static int from_paths(const spi_profile *p, const uint32_t *ranks, size_t rank_count,
                      path_list *list, item **items, size_t *item_count, spi_error *err) {
    if (list_alloc(list, p->path_count) != SP_OK) return oom(err);
    *items = spi_calloc(p->path_count + 1, sizeof **items);
    if (!*items) return oom(err);
    size_t n = 0;
    for (size_t first = 0; first < p->path_count;) {
        uint32_t rank = p->paths[first].rank;
        size_t end = first;
        while (end < p->path_count && p->paths[end].rank == rank) end++;
        bool selected = spi_rank_selected(ranks, rank_count, rank);
        for (size_t i = first; i < end; i++) {
            const spi_call_path *path = &p->paths[i];
            /* the reader checked parent < i within the rank */
            list->parent[i] = path->parent >= 0 ? (int64_t)first + path->parent : -1;
            list->region[i] = path->region;
            if (!selected || path->thread < 0) continue;
            int64_t parent_thread =
                path->parent >= 0 ? p->paths[first + (size_t)path->parent].thread : -1;
            bool beside = parent_thread >= 0 && parent_thread != path->thread;
            (*items)[n++] = (item){rank, path->thread, i, path->count, path->total,
                                   path->exclusive > 0 ? path->exclusive : 0,
                                   beside ? path->total : 0};
        }
        first = end;
    }
    *item_count = n;
    return SP_OK;
}

/* ---- entry point ------------------------------------------------------------ */

int spi_summary_thread_rows(const spi_profile *profile, const uint32_t *ranks, size_t rank_count,
                            spi_summary_thread_row **rows, size_t *count, spi_error *err) {
    *rows = NULL;
    *count = 0;
    path_list list = {0};
    item *items = NULL;
    size_t item_count = 0;
    int status;
    if (profile->path_count > 0) {
        status = from_paths(profile, ranks, rank_count, &list, &items, &item_count, err);
    } else if (spi_profile_has_calls(profile)) {
        status = from_calls(profile, ranks, rank_count, &list, &items, &item_count, err);
    } else {
        return spi_error_set(err, SP_ERR_UNSUPPORTED,
                             "the file keeps no calls and no call paths: no per-thread view");
    }
    if (status == SP_OK && list_order(&list) != SP_OK) status = oom(err);
    size_t *order = NULL, *tmp = NULL;
    if (status == SP_OK) {
        order = spi_calloc(item_count + 1, sizeof *order);
        tmp = spi_calloc(item_count + 1, sizeof *tmp);
        if (!order || !tmp) status = oom(err);
    }
    /* one block: the rows, then their paths */
    size_t regions = 0;
    for (size_t i = 0; status == SP_OK && i < item_count; i++)
        regions += list.depth[items[i].path] + 1;
    spi_summary_thread_row *out = NULL;
    if (status == SP_OK) {
        out = spi_malloc((item_count + 1) * sizeof *out + (regions + 1) * sizeof(size_t));
        if (!out) status = oom(err);
    }
    if (status == SP_OK) {
        for (size_t i = 0; i < item_count; i++) order[i] = i;
        sort_ctx ctx = {items, &list};
        spi_sort_indices(order, tmp, item_count, compare_items, &ctx);
        size_t *pool = (size_t *)(void *)(out + item_count + 1);
        for (size_t k = 0; k < item_count; k++) {
            const item *it = &items[order[k]];
            size_t depth = list.depth[it->path];
            size_t at = it->path;
            for (size_t d = depth + 1; d-- > 0;) {
                pool[d] = list.region[at];
                at = list.parent[at] >= 0 ? (size_t)list.parent[at] : at;
            }
            out[k] = (spi_summary_thread_row){.rank = it->rank, .thread = it->thread, .depth = depth,
                                      .path = pool, .calls = it->calls, .total_ns = it->total,
                                      .own_ns = it->own, .other_threads_ns = it->other};
            pool += depth + 1;
        }
        *rows = out;
        *count = item_count;
    }
    spi_free(order);
    spi_free(tmp);
    spi_free(items);
    list_free(&list);
    return status;
}
