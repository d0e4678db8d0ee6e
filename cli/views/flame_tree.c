/*
 * flame_tree.c - see flame_tree.h.
 *
 * Children are found through one open-addressing hash over (parent, key),
 * so building costs one probe per call whatever the fan-out; nodes live in
 * one array addressed by 32-bit indices (a tree with 4 billion distinct
 * paths is not a picture anyone can look at).
 */
#include "flame_tree.h"

#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

static uint64_t slot_hash(uint32_t parent, int64_t key) {
    uint64_t x = ((uint64_t)parent << 32) ^ (uint64_t)key * 0x9e3779b97f4a7c15ULL;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 32;
    return x;
}

static int slots_grow(flame_tree *t) {
    size_t cap = t->slot_cap ? t->slot_cap * 2 : 1024;
    uint32_t *slots = malloc(cap * sizeof *slots);
    if (!slots) return SP_ERR_OUT_OF_MEMORY;
    memset(slots, 0xff, cap * sizeof *slots);
    for (size_t n = 1; n < t->count; n++) {
        size_t j = slot_hash(t->nodes[n].parent, t->nodes[n].key) & (cap - 1);
        while (slots[j] != FLAME_NONE) j = (j + 1) & (cap - 1);
        slots[j] = (uint32_t)n;
    }
    free(t->slots);
    t->slots = slots;
    t->slot_cap = cap;
    return SP_OK;
}

static int add_node(flame_tree *t, uint32_t parent, int64_t key, uint32_t *out) {
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        if (cap > FLAME_NONE) return SP_ERR_OUT_OF_MEMORY;
        flame_node *grown = realloc(t->nodes, cap * sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        t->nodes = grown;
        t->cap = cap;
    }
    uint32_t n = (uint32_t)t->count++;
    flame_node *node = &t->nodes[n];
    memset(node, 0, sizeof *node);
    node->key = key;
    node->parent = parent;
    node->first_child = FLAME_NONE;
    node->next_sibling = FLAME_NONE;
    if (parent != FLAME_NONE) {
        node->depth = t->nodes[parent].depth + 1;
        node->next_sibling = t->nodes[parent].first_child;
        t->nodes[parent].first_child = n;
        if (node->depth > t->max_depth) t->max_depth = node->depth;
    }
    *out = n;
    return SP_OK;
}

/* The child of `parent` labelled `key`, created when new. */
static int child(flame_tree *t, uint32_t parent, int64_t key, uint32_t *out) {
    if ((t->count + 1) * 2 >= t->slot_cap && slots_grow(t) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    size_t j = slot_hash(parent, key) & (t->slot_cap - 1);
    for (;; j = (j + 1) & (t->slot_cap - 1)) {
        uint32_t n = t->slots[j];
        if (n == FLAME_NONE) break;
        if (t->nodes[n].parent == parent && t->nodes[n].key == key) {
            *out = n;
            return SP_OK;
        }
    }
    if (add_node(t, parent, key, out) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    t->slots[j] = *out;
    return SP_OK;
}

static int tree_init(flame_tree *t, const sp_results *res) {
    memset(t, 0, sizeof *t);
    t->res = res;
    uint32_t root;
    if (add_node(t, FLAME_NONE, FLAME_KEY_ROOT, &root) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    return slots_grow(t);
}

/* ---- calls whose parent is on another lane -----------------------------------
 *
 * Within a lane, nesting comes from containment (view_lanes_walk). A lane's
 * root call may still have a stored parent on another lane: scope-merge
 * hangs the native kernels' calls under the Python driver's call
 * (cross-language parents), so "py:run_kernels > solve" is one path in
 * scope-inspect. Such roots are attached below their parent's path here,
 * so the flame graph shows the same tree. Only those few parents are
 * looked up (a small hash of (rank, call id)), not every call: the cost
 * stays one extra walk without allocation per call. */

typedef struct link {
    uint32_t rank;
    int64_t id;          /* the parent's call id */
    int64_t root_parent; /* stored parent of the root of the parent's lane, -1 none */
    uint32_t *path;      /* regions from that lane root down to the parent */
    size_t path_len;
    uint32_t node;
    int state;           /* 0 wanted, 1 path known, 2 resolving, 3 resolved */
} link;

typedef struct links {
    link *items;
    size_t cap, used;
} links;

static size_t link_slot(const links *ls, uint32_t rank, int64_t id) {
    size_t j = slot_hash(rank, id) & (ls->cap - 1);
    while (ls->items[j].state >= 0 && !(ls->items[j].rank == rank && ls->items[j].id == id))
        j = (j + 1) & (ls->cap - 1);
    return j;
}

static link *link_find(const links *ls, uint32_t rank, int64_t id) {
    if (!ls->cap) return NULL;
    size_t j = slot_hash(rank, id) & (ls->cap - 1);
    for (; ls->items[j].state >= 0; j = (j + 1) & (ls->cap - 1))
        if (ls->items[j].rank == rank && ls->items[j].id == id) return &ls->items[j];
    return NULL;
}

static int link_add(links *ls, uint32_t rank, int64_t id) {
    if (link_find(ls, rank, id)) return SP_OK;
    if ((ls->used + 1) * 2 >= ls->cap) {
        size_t cap = ls->cap ? ls->cap * 2 : 64;
        link *items = malloc(cap * sizeof *items);
        if (!items) return SP_ERR_OUT_OF_MEMORY;
        for (size_t i = 0; i < cap; i++) items[i].state = -1; /* empty */
        links grown = {items, cap, ls->used};
        for (size_t i = 0; i < ls->cap; i++)
            if (ls->items[i].state >= 0) grown.items[link_slot(&grown, ls->items[i].rank, ls->items[i].id)] = ls->items[i];
        free(ls->items);
        *ls = grown;
    }
    link *l = &ls->items[link_slot(ls, rank, id)];
    memset(l, 0, sizeof *l);
    l->rank = rank;
    l->id = id;
    l->root_parent = -1;
    ls->used++;
    return SP_OK;
}

static void links_free(links *ls) {
    for (size_t i = 0; i < ls->cap; i++)
        if (ls->items[i].state >= 0) free(ls->items[i].path);
    free(ls->items);
}

/* The walk's state: the node of every open call of the lane. */
typedef struct build_ctx {
    flame_tree *t;
    view_lanes *v;
    bool per_rank;
    uint32_t rank;       /* of the lane being walked */
    links links;
    int pass;            /* 0 collect wanted parents, 1 their paths, 2 build */
    view_call *open;     /* the open calls (passes 1, 2) */
    uint32_t *stack;     /* their nodes (pass 2) */
    int64_t *starts;
    size_t cap;
    uint32_t base;       /* the node the current lane root hangs under */
    bool attached;       /* ... a real call (a cross-lane parent), not an artificial frame */
} build_ctx;

static int default_base(build_ctx *c, uint32_t *out) {
    *out = 0;
    return c->per_rank ? child(c->t, 0, FLAME_KEY_RANK(c->rank), out) : SP_OK;
}

/* The node of the parent call behind link l (its lane root attached first,
 * recursively; a cycle or a missing parent falls back to the root). */
static int resolve(build_ctx *c, link *l, uint32_t *out) {
    if (l->state == 3) {
        *out = l->node;
        return SP_OK;
    }
    if (l->state != 1) return default_base(c, out); /* never seen, or a cycle */
    l->state = 2;
    uint32_t n;
    link *up = l->root_parent >= 0 ? link_find(&c->links, l->rank, l->root_parent) : NULL;
    int st = up ? resolve(c, up, &n) : default_base(c, &n);
    for (size_t i = 0; i < l->path_len && st == SP_OK; i++) st = child(c->t, n, l->path[i], &n);
    if (st != SP_OK) return st;
    l->node = n;
    l->state = 3;
    *out = n;
    return SP_OK;
}

static int grow_stacks(build_ctx *c, unsigned depth) {
    if (depth + 1 < c->cap) return SP_OK;
    size_t cap = c->cap * 2;
    uint32_t *s = realloc(c->stack, cap * sizeof *s);
    if (s) c->stack = s;
    int64_t *st = realloc(c->starts, cap * sizeof *st);
    if (st) c->starts = st;
    view_call *r = realloc(c->open, cap * sizeof *r);
    if (r) c->open = r;
    if (!s || !st || !r) return SP_ERR_OUT_OF_MEMORY;
    c->cap = cap;
    return SP_OK;
}

static int on_open(void *p, const view_call *call, unsigned depth, int64_t start) {
    build_ctx *c = p;
    if (grow_stacks(c, depth) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    c->open[depth] = *call;
    if (c->pass == 0) {
        int64_t parent = depth == 0 ? call->parent_id : -1;
        return parent >= 0 ? link_add(&c->links, c->rank, parent) : 0;
    }
    if (c->pass == 1) {
        link *l = link_find(&c->links, c->rank, call->call_id);
        if (!l || l->state != 0) return 0;
        l->path = malloc((depth + 1) * sizeof *l->path);
        if (!l->path) return SP_ERR_OUT_OF_MEMORY;
        for (unsigned i = 0; i <= depth; i++) l->path[i] = (uint32_t)view_call_region(c->v, &c->open[i]);
        l->path_len = depth + 1;
        l->root_parent = c->open[0].parent_id;
        l->state = 1;
        return 0;
    }
    if (depth == 0) {
        int64_t parent = call->parent_id;
        link *l = parent >= 0 ? link_find(&c->links, c->rank, parent) : NULL;
        c->attached = l && (l->state == 1 || l->state == 3);
        int st = c->attached ? resolve(c, l, &c->base) : default_base(c, &c->base);
        if (st != SP_OK) return st;
    }
    uint32_t parent = depth == 0 ? c->base : c->stack[depth - 1];
    uint32_t n;
    /* child() may move the node array: no node pointers across it. */
    if (child(c->t, parent, (int64_t)view_call_region(c->v, call), &n) != SP_OK)
        return SP_ERR_OUT_OF_MEMORY;
    c->stack[depth] = n;
    c->starts[depth] = start;
    return 0;
}

static int on_close(void *p, const view_call *call, unsigned depth, int64_t end) {
    (void)call;
    build_ctx *c = p;
    if (c->pass != 2) return 0;
    flame_node *node = &c->t->nodes[c->stack[depth]];
    uint64_t span = view_span(c->starts[depth], end);
    int64_t dur = span > INT64_MAX ? INT64_MAX : (int64_t)span;
    node->calls++;
    node->total_ns = flame_add(node->total_ns, dur);
    node->self_ns = flame_add(node->self_ns, dur);
    /* child time is not the parent's own */
    c->t->nodes[node->parent].self_ns = flame_add(c->t->nodes[node->parent].self_ns, -dur);
    if (depth == 0 && !c->attached) {
        /* Roots add up into the artificial frames above them. */
        for (uint32_t up = node->parent; up != FLAME_NONE; up = c->t->nodes[up].parent)
            c->t->nodes[up].total_ns = flame_add(c->t->nodes[up].total_ns, dur);
        c->t->nodes[node->parent].self_ns = flame_add(c->t->nodes[node->parent].self_ns, dur);
    }
    return 0;
}

/* lane_only: the one lane to build from (its roots stay roots), or
 * SIZE_MAX for every lane with cross-lane parents attached. */
static int tree_from_lanes(flame_tree *t, view_lanes *v, bool per_rank, size_t lane_only) {
    if (tree_init(t, v->res) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    build_ctx c;
    memset(&c, 0, sizeof c);
    c.t = t;
    c.v = v;
    c.per_rank = per_rank;
    c.cap = 64;
    c.stack = malloc(c.cap * sizeof *c.stack);
    c.starts = malloc(c.cap * sizeof *c.starts);
    c.open = malloc(c.cap * sizeof *c.open);
    int st = c.stack && c.starts && c.open ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    view_walk_callbacks cb = {on_open, on_close};
    /* Passes 0 and 1 only when the file stores parents and some lane root
     * has one. */
    bool parents = v->parents && lane_only == SIZE_MAX;
    size_t first = lane_only == SIZE_MAX ? 0 : lane_only;
    size_t end = lane_only == SIZE_MAX ? v->lane_count : lane_only + 1;
    for (c.pass = parents ? 0 : 2; c.pass < 3 && st == SP_OK; c.pass++) {
        if (c.pass == 1 && c.links.used == 0) continue;
        for (size_t l = first; l < end && st == SP_OK; l++) {
            c.rank = v->lanes[l].rank;
            st = view_lanes_walk(v, l, &cb, &c);
        }
    }
    links_free(&c.links);
    free(c.stack);
    free(c.starts);
    free(c.open);
    return st;
}

int flame_tree_from_lanes(flame_tree *t, view_lanes *v, bool per_rank) {
    return tree_from_lanes(t, v, per_rank, SIZE_MAX);
}

int flame_tree_from_lane(flame_tree *t, view_lanes *v, size_t lane) {
    return tree_from_lanes(t, v, false, lane);
}

/* An aggregate-mode file's call paths (sp_results_call_path): the real
 * tree. A node's self time is its paths' exclusive time; its width (total)
 * is built bottom-up from the self times, so a recursive path, whose total
 * counts its nested calls again, still draws as wide as the time it took.
 * A hidden region passes its place (and its self time) to its parent. */
static int tree_from_paths(flame_tree *t, const sp_results *res, const uint32_t *ranks,
                           size_t rank_count, const bool *region_on, bool per_rank) {
    size_t count = sp_results_call_path_count(res);
    uint32_t *node_of = malloc((count + 1) * sizeof *node_of);
    if (!node_of) return SP_ERR_OUT_OF_MEMORY;
    size_t rank_first = 0; /* parents index within their rank's paths */
    uint32_t previous_rank = 0;
    for (size_t i = 0; i < count; i++) {
        sp_call_path p;
        node_of[i] = FLAME_NONE;
        if (sp_results_call_path(res, i, &p) != SP_OK) continue;
        if (i > 0 && p.rank != previous_rank) rank_first = i;
        previous_rank = p.rank;
        bool on = !ranks || rank_count == 0;
        for (size_t k = 0; k < rank_count && !on; k++) on = ranks[k] == p.rank;
        if (!on) continue;
        uint32_t base = 0;
        if (per_rank && child(t, 0, FLAME_KEY_RANK(p.rank), &base) != SP_OK) {
            free(node_of);
            return SP_ERR_OUT_OF_MEMORY;
        }
        uint32_t parent = p.parent >= 0 ? node_of[rank_first + (size_t)p.parent] : base;
        if (parent == FLAME_NONE) parent = base;
        uint32_t n = parent;
        if ((!region_on || region_on[p.region]) &&
            child(t, parent, (int64_t)p.region, &n) != SP_OK) {
            free(node_of);
            return SP_ERR_OUT_OF_MEMORY;
        }
        node_of[i] = n;
        if (n != parent || !region_on || region_on[p.region]) t->nodes[n].calls += p.count;
        t->nodes[n].self_ns = flame_add(t->nodes[n].self_ns, p.exclusive_ns > 0 ? p.exclusive_ns : 0);
    }
    free(node_of);
    /* children come after their parents: one backwards pass sums widths */
    for (size_t n = 0; n < t->count; n++) t->nodes[n].total_ns = t->nodes[n].self_ns;
    for (size_t n = t->count; n-- > 1;)
        if (t->nodes[n].parent != FLAME_NONE)
            t->nodes[t->nodes[n].parent].total_ns =
                flame_add(t->nodes[t->nodes[n].parent].total_ns, t->nodes[n].total_ns);
    return SP_OK;
}

int flame_tree_from_rows(flame_tree *t, const sp_results *res, const uint32_t *ranks,
                         size_t rank_count, const bool *region_on, bool per_rank) {
    if (tree_init(t, res) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    t->from_aggregate = true;
    if (sp_results_call_path_count(res) > 0)
        return tree_from_paths(t, res, ranks, rank_count, region_on, per_rank);
    for (size_t r = 0; r < sp_results_row_count(res); r++) {
        uint32_t rank = sp_results_row_rank(res, r);
        size_t region = sp_results_row_region(res, r);
        bool on = !ranks || rank_count == 0;
        for (size_t i = 0; i < rank_count && !on; i++) on = ranks[i] == rank;
        if (!on || (region_on && !region_on[region])) continue;
        sp_row_stats s;
        if (sp_results_row_stats(res, r, &s) != SP_OK || s.count == 0) continue;
        int64_t self = sp_results_row_exclusive_total(res, r);
        if (self < 0) self = s.total;
        uint32_t base = 0, n;
        if (per_rank && child(t, 0, FLAME_KEY_RANK(rank), &base) != SP_OK)
            return SP_ERR_OUT_OF_MEMORY;
        if (child(t, base, (int64_t)region, &n) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
        /* Without paths, a region's frame is as wide as its own time: its
         * inclusive time would count its children twice at this level. */
        t->nodes[n].calls += s.count;
        t->nodes[n].total_ns = flame_add(t->nodes[n].total_ns, self);
        t->nodes[n].self_ns = flame_add(t->nodes[n].self_ns, self);
        for (uint32_t up = t->nodes[n].parent; up != FLAME_NONE; up = t->nodes[up].parent)
            t->nodes[up].total_ns = flame_add(t->nodes[up].total_ns, self);
    }
    return SP_OK;
}

const char *flame_node_label(const flame_tree *t, size_t n, char *buf, size_t len) {
    int64_t key = t->nodes[n].key;
    if (key >= 0) {
        const char *name = sp_results_region_name(t->res, (size_t)key);
        return name ? name : "";
    }
    if (key == FLAME_KEY_ROOT) snprintf(buf, len, "all");
    else snprintf(buf, len, "rank %lld", (long long)(-2 - key));
    return buf;
}

static const flame_tree *sort_tree;

static int cmp_label(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int64_t ka = sort_tree->nodes[a].key, kb = sort_tree->nodes[b].key;
    /* Rank frames by number, regions by name. */
    if (ka < 0 || kb < 0) return ka < kb ? 1 : ka > kb ? -1 : 0;
    int c = strcmp(sp_results_region_name(sort_tree->res, (size_t)ka),
                   sp_results_region_name(sort_tree->res, (size_t)kb));
    return c ? c : (a < b ? -1 : a > b);
}

int flame_tree_sort(flame_tree *t) {
    uint32_t *kids = malloc((t->count + 1) * sizeof *kids);
    if (!kids) return SP_ERR_OUT_OF_MEMORY;
    sort_tree = t;
    for (size_t n = 0; n < t->count; n++) {
        size_t k = 0;
        for (uint32_t c = t->nodes[n].first_child; c != FLAME_NONE; c = t->nodes[c].next_sibling)
            kids[k++] = c;
        if (k < 2) continue;
        qsort(kids, k, sizeof *kids, cmp_label);
        t->nodes[n].first_child = kids[0];
        for (size_t i = 0; i < k; i++)
            t->nodes[kids[i]].next_sibling = i + 1 < k ? kids[i + 1] : FLAME_NONE;
    }
    sort_tree = NULL;
    free(kids);
    return SP_OK;
}

void flame_tree_free(flame_tree *t) {
    free(t->nodes);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static void folded_frame(FILE *out, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = cli_utf8_length(p);
        if (n == 0) {
            fputs("\xef\xbf\xbd", out);
            p++;
        } else if (n > 1) {
            fwrite(p, 1, n, out);
            p += n;
        } else {
            fputc(*p == ';' ? ':' : (*p < 0x20 || *p == 0x7f) ? ' ' : *p, out);
            p++;
        }
    }
}

/* The node after n in a pre-order walk of the subtree of `top` (children
 * before siblings), FLAME_NONE at its end; skip_children steps over n's
 * subtree. No recursion: trees can be a million levels deep. */
static uint32_t walk_next(const flame_tree *t, uint32_t n, uint32_t top, bool skip_children) {
    if (!skip_children && t->nodes[n].first_child != FLAME_NONE) return t->nodes[n].first_child;
    while (n != top && t->nodes[n].next_sibling == FLAME_NONE) n = t->nodes[n].parent;
    return n == top ? FLAME_NONE : t->nodes[n].next_sibling;
}

/* The line of node n: its path from the outermost frame, then `extra` as
 * one more frame when not NULL, then the weight. */
static void folded_line(FILE *out, const flame_tree *t, uint32_t *path, uint32_t n,
                        const char *extra, int64_t weight) {
    char buf[64];
    size_t len = 0;
    for (uint32_t up = n; up != 0; up = t->nodes[up].parent) path[len++] = up;
    for (size_t i = len; i-- > 0;) {
        folded_frame(out, flame_node_label(t, path[i], buf, sizeof buf));
        if (i) fputc(';', out);
    }
    if (extra) {
        fputc(';', out);
        fputs(extra, out);
    }
    fprintf(out, " %lld\n", (long long)weight);
}

int flame_write_folded(FILE *out, const flame_tree *t, uint64_t *folded_nodes) {
    uint32_t cap = t->max_depth < FLAME_PRINT_MAX_DEPTH ? t->max_depth : FLAME_PRINT_MAX_DEPTH;
    uint32_t *path = malloc(((size_t)cap + 2) * sizeof *path);
    if (!path) return SP_ERR_OUT_OF_MEMORY;
    uint64_t folded = 0;
    uint32_t n = t->nodes[0].first_child;
    while (n != FLAME_NONE && !ferror(out)) {
        const flame_node *node = &t->nodes[n];
        /* Threads of one rank run side by side: children pooled from several
         * lanes under one parent can outweigh it; its own share is then 0. */
        if (node->self_ns > 0) folded_line(out, t, path, n, NULL, node->self_ns);
        bool at_cap = node->depth >= FLAME_PRINT_MAX_DEPTH && node->first_child != FLAME_NONE;
        if (at_cap) {
            /* Everything below goes into one frame under this node: every
             * line of a path d frames deep holds d frames, so printing them
             * all is depth^2 bytes for a deep recursion. The subtrees below
             * the cap are disjoint, so these walks are linear together. */
            int64_t weight = 0;
            for (uint32_t d = node->first_child; d != FLAME_NONE; d = walk_next(t, d, n, false)) {
                folded++;
                if (t->nodes[d].self_ns > 0) weight = flame_add(weight, t->nodes[d].self_ns);
            }
            if (weight > 0) folded_line(out, t, path, n, FLAME_FOLDED_FRAME, weight);
        }
        n = walk_next(t, n, 0, at_cap);
    }
    free(path);
    if (folded_nodes) *folded_nodes = folded;
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
