/*
 * flame_tree.h - the call tree behind the folded stacks, the SVG flame
 * graph and the report: one node per call path (root -> ... -> region),
 * pooled over the selected lanes, with the inclusive and the exclusive
 * (self) ns of all calls on that path.
 *
 * From per-call events the paths are the real nesting within each lane
 * (view_lanes); from an aggregate-mode file, its stored call paths
 * (docs/FORMAT.md 4.1). A Python aggregate file has no paths, only
 * per-(rank, region) totals: every region becomes a child of the root
 * weighing its exclusive total (its total when the file has no exclusive
 * column), so the picture is honest about what the file knows.
 */
#ifndef SP_CLI_FLAME_TREE_H
#define SP_CLI_FLAME_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scope_profiler_results.h"
#include "view_lanes.h"

#define FLAME_NONE UINT32_MAX

/* a + b held at INT64_MIN / INT64_MAX instead of wrapping: times pooled
 * from files with extreme stamps stay defined (and visibly saturated). */
static inline int64_t flame_add(int64_t a, int64_t b) {
    int64_t sum;
    if (!__builtin_add_overflow(a, b, &sum)) return sum;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

/* A node's label: a region id (>= 0), FLAME_KEY_ROOT, or a rank frame
 * FLAME_KEY_RANK(rank) when the tree is split per rank. */
#define FLAME_KEY_ROOT (-1)
#define FLAME_KEY_RANK(rank) (-2 - (int64_t)(rank))

typedef struct flame_node {
    int64_t key;
    uint32_t parent, first_child, next_sibling;
    uint32_t depth;
    uint64_t calls;
    int64_t total_ns; /* inclusive */
    int64_t self_ns;  /* exclusive */
} flame_node;

typedef struct flame_tree {
    const sp_results *res;
    flame_node *nodes; /* nodes[0] is the root */
    size_t count, cap;
    uint32_t *slots; /* hash (parent, key) -> node */
    size_t slot_cap;
    uint32_t max_depth;
    bool from_aggregate;
} flame_tree;

/* Build from the lanes (every lane's calls pooled; per_rank: one frame
 * "rank N" under the root per rank). Returns SP_OK or SP_ERR_OUT_OF_MEMORY. */
int flame_tree_from_lanes(flame_tree *t, view_lanes *v, bool per_rank);

/* The call paths of one lane alone (its roots under the root, no rank
 * frame, no cross-lane parents): the speedscope export's aggregated
 * profile of that lane. Returns SP_OK or SP_ERR_OUT_OF_MEMORY (or the
 * walk's read error). */
int flame_tree_from_lane(flame_tree *t, view_lanes *v, size_t lane);

/* Build from the rows of a file without per-call events (aggregate or
 * summary-only), over the selected ranks (NULL = all) and regions. */
int flame_tree_from_rows(flame_tree *t, const sp_results *res, const uint32_t *ranks,
                         size_t rank_count, const bool *region_on, bool per_rank);

/* Order every node's children by label, as flame graphs do (so the same
 * path sits in the same place in every graph). */
int flame_tree_sort(flame_tree *t);

/* The label of node n: a region name, "all" or "rank N" (buf holds the
 * latter two). */
const char *flame_node_label(const flame_tree *t, size_t n, char *buf, size_t len);

void flame_tree_free(flame_tree *t);

/* Brendan Gregg's folded stacks: "root;child;leaf weight" for every path
 * with exclusive time, weight in ns, paths from the outermost region
 * (the artificial root is left out). ';' inside a name would split a
 * frame, so it is written as ':'; line breaks and other control
 * characters as ' ', invalid UTF-8 as U+FFFD.
 *
 * Paths are printed at most FLAME_PRINT_MAX_DEPTH frames deep: the
 * exclusive time of every node below a node at that depth is summed into
 * one line "path;" FLAME_FOLDED_FRAME, so the output stays linear in the
 * nodes (a recursion 10^6 calls deep would otherwise print 10^12 frames)
 * and still valid folded stacks, with every ns accounted for.
 * *folded_nodes (may be NULL) receives how many nodes were folded that way
 * (0: the output is exact), for the caller to say so. */
/* Also the depth the SVG flame graph draws to (flamegraph_svg.c). */
#define FLAME_PRINT_MAX_DEPTH 512
#define FLAME_FOLDED_FRAME "[deeper frames folded]"
int flame_write_folded(FILE *out, const flame_tree *t, uint64_t *folded_nodes);

#endif /* SP_CLI_FLAME_TREE_H */
