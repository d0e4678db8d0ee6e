/*
 * calltree.h - the call tree of one rank: every call's parent and its
 * exclusive time (FORMAT.md 7.4 and 7.6).
 *
 * Two sources, chosen per rank: the stored call_ids/parent_ids when every
 * row of the rank that has calls carries them (they are what the recorder
 * saw, so nothing has to be guessed), otherwise nesting rebuilt from
 * timestamp containment, separately in each lane (task, thread or unknown,
 * FORMAT.md 3.3), because calls on different threads overlap freely.
 *
 * Improper nesting is a status (SP_ERR_NESTING) with a message naming the
 * two region calls involved, never a crash: analysis callers fall back to
 * flat per-region statistics.
 */
#ifndef SPI_CALLTREE_H
#define SPI_CALLTREE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"

/* One rank's calls, ordered so that a parent always comes before its
 * children (parent[i] < i). */
typedef struct spi_rank_tree {
    uint32_t rank;
    size_t call_count;
    size_t *rows;         /* [call_count] index into profile->rows */
    uint64_t *calls;      /* [call_count] call index within that row */
    int64_t *parent;      /* [call_count] index of the parent call, -1 root */
    int64_t *exclusive;   /* [call_count] duration - direct children, ns */
    int64_t *lane;        /* [call_count] lane id (FORMAT.md 3.3) */
} spi_rank_tree;

/* True when the rank has per-call data the tree can be built from (not
 * summary-only, not aggregate). */
bool spi_rank_tree_possible(const spi_profile *profile);

/* Build the tree of `rank` into *tree (zeroed on entry, released with
 * spi_rank_tree_free also on error). Statuses: SP_OK, SP_ERR_NESTING (err
 * names the regions), SP_ERR_OUT_OF_MEMORY. */
int spi_rank_tree_build(spi_rank_tree *tree, const spi_profile *profile, uint32_t rank,
                        spi_error *err);

/* The same from the rank's rows row_list[0..row_count-1] (rows of other
 * ranks are skipped): callers that visit every rank pass each rank's rows
 * so that the whole profile is not scanned once per rank. A call whose
 * end overflows int64 or whose duration is negative is SP_ERR_NESTING. */
int spi_rank_tree_build_rows(spi_rank_tree *tree, const spi_profile *profile, uint32_t rank,
                             const size_t *row_list, size_t row_count, spi_error *err);

void spi_rank_tree_free(spi_rank_tree *tree);

#endif /* SPI_CALLTREE_H */
