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

/* The walk's state: the node of every open call of the lane. */
typedef struct build_ctx {
    flame_tree *t;
    view_lanes *v;
    uint32_t base; /* the root, or this rank's frame */
    uint32_t *stack;
    int64_t *starts;
    size_t cap;
} build_ctx;

static int on_open(void *p, uint64_t ref, unsigned depth, int64_t start) {
    build_ctx *c = p;
    if (depth + 1 >= c->cap) {
        size_t cap = c->cap * 2;
        uint32_t *s = realloc(c->stack, cap * sizeof *s);
        if (!s) return SP_ERR_OUT_OF_MEMORY;
        c->stack = s;
        int64_t *st = realloc(c->starts, cap * sizeof *st);
        if (!st) return SP_ERR_OUT_OF_MEMORY;
        c->starts = st;
        c->cap = cap;
    }
    uint32_t parent = depth == 0 ? c->base : c->stack[depth - 1];
    uint32_t n;
    /* child() may move the node array: no node pointers across it. */
    if (child(c->t, parent, (int64_t)view_ref_region(c->v, ref), &n) != SP_OK)
        return SP_ERR_OUT_OF_MEMORY;
    c->stack[depth] = n;
    c->starts[depth] = start;
    return 0;
}

static int on_close(void *p, uint64_t ref, unsigned depth, int64_t end) {
    (void)ref;
    build_ctx *c = p;
    flame_node *node = &c->t->nodes[c->stack[depth]];
    int64_t dur = end - c->starts[depth];
    node->calls++;
    node->total_ns += dur;
    node->self_ns += dur;
    c->t->nodes[node->parent].self_ns -= dur; /* child time is not the parent's own */
    if (depth == 0) {
        /* Roots add up into the artificial frames above them. */
        for (uint32_t up = node->parent; up != FLAME_NONE; up = c->t->nodes[up].parent)
            c->t->nodes[up].total_ns += dur;
        c->t->nodes[node->parent].self_ns += dur;
    }
    return 0;
}

int flame_tree_from_lanes(flame_tree *t, view_lanes *v, bool per_rank) {
    if (tree_init(t, v->res) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    build_ctx c = {t, v, 0, NULL, NULL, 64};
    c.stack = malloc(c.cap * sizeof *c.stack);
    c.starts = malloc(c.cap * sizeof *c.starts);
    int st = c.stack && c.starts ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    view_walk_callbacks cb = {on_open, on_close};
    for (size_t l = 0; l < v->lane_count && st == SP_OK; l++) {
        c.base = 0;
        if (per_rank) st = child(t, 0, FLAME_KEY_RANK(v->lanes[l].rank), &c.base);
        if (st == SP_OK) st = view_lanes_walk(v, l, &cb, &c);
    }
    free(c.stack);
    free(c.starts);
    return st;
}

int flame_tree_from_rows(flame_tree *t, const sp_results *res, const uint32_t *ranks,
                         size_t rank_count, const bool *region_on, bool per_rank) {
    if (tree_init(t, res) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    t->from_aggregate = true;
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
        t->nodes[n].total_ns += self;
        t->nodes[n].self_ns += self;
        for (uint32_t up = t->nodes[n].parent; up != FLAME_NONE; up = t->nodes[up].parent)
            t->nodes[up].total_ns += self;
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

int flame_write_folded(FILE *out, const flame_tree *t) {
    uint32_t *path = malloc((t->max_depth + 2) * sizeof *path);
    if (!path) return SP_ERR_OUT_OF_MEMORY;
    char buf[64];
    /* Pre-order walk without recursion: depth-first through the child and
     * sibling links. */
    uint32_t n = t->nodes[0].first_child;
    while (n != FLAME_NONE && !ferror(out)) {
        const flame_node *node = &t->nodes[n];
        if (node->self_ns > 0) {
            size_t len = 0;
            for (uint32_t up = n; up != 0; up = t->nodes[up].parent) path[len++] = up;
            for (size_t i = len; i-- > 0;) {
                folded_frame(out, flame_node_label(t, path[i], buf, sizeof buf));
                if (i) fputc(';', out);
            }
            fprintf(out, " %lld\n", (long long)node->self_ns);
        }
        if (node->first_child != FLAME_NONE) {
            n = node->first_child;
            continue;
        }
        while (n != FLAME_NONE && t->nodes[n].next_sibling == FLAME_NONE) {
            n = t->nodes[n].parent;
            if (n == 0) n = FLAME_NONE;
        }
        if (n != FLAME_NONE) n = t->nodes[n].next_sibling;
    }
    free(path);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
