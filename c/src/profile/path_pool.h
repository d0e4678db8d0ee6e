/*
 * path_pool.h - call paths of many ranks folded into one table as they
 * arrive (path_pool.c), for the end-of-run summary of an MPI job.
 *
 * Rank 0 used to keep every rank's paths (~96 B x ranks x threads x
 * paths) and pool them when printing. The pool keeps one entry per
 * distinct path of region NAMES from the root (threads and ranks pooled),
 * with what the summary table prints for it: summed counts and times,
 * min/max, a mergeable variance, first start / last end, and the per-rank
 * spread of the path's inclusive and exclusive totals. Memory grows with
 * the distinct paths and names, never with ranks or threads.
 *
 * The pool places paths on entries exactly as the summary's table does
 * (analysis/summary_rows.c, add_paths): a path whose region is its
 * parent's is the parent's entry (recursion collapsed; the entry is marked
 * recursive), so the table built from the pool shows the same numbers as
 * one built from every rank's paths, with every region shown.
 *
 * Ranks must be added in ascending order (the spread's sums are then added
 * in the order the table would add them: the same doubles). Not
 * thread-safe: one pool, one thread.
 */
#ifndef SPI_PATH_POOL_H
#define SPI_PATH_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Over the ranks that ran a path: the per-rank totals' sum (all ranks and
 * the ranks with a total above 0, as spi_imbalance counts them), minimum
 * and maximum. */
typedef struct spi_rank_spread {
    double sum;
    double positive_sum;
    uint32_t positive_ranks;
    int64_t minimum;
    int64_t maximum;
} spi_rank_spread;

/* What a pooled path carries beside its spi_call_path. */
typedef struct spi_path_ranks {
    uint32_t ranks;           /* ranks that ran the path */
    bool recursive;           /* a path of the same region was folded in */
    spi_rank_spread inclusive;
    spi_rank_spread exclusive;
} spi_path_ranks;

/* max/mean of the per-rank totals above 0, as spi_imbalance
 * (analysis/stats.h) gives it from the totals themselves: 0 with fewer
 * than two such ranks. Pure. */
double spi_rank_spread_imbalance(const spi_rank_spread *s);

typedef struct spi_path_pool {
    /* The result: paths[i] (rank 0, thread -1, region an index of names,
     * parent an earlier entry or -1) with ranks[i]. */
    spi_call_path *paths;
    spi_path_ranks *ranks;
    size_t count;
    char **names;             /* owned copies */
    size_t name_count;
    /* private: growth, lookups and the rank being added */
    size_t capacity, name_capacity;
    size_t *slots, slot_capacity;            /* entry + 1 by (parent, name) */
    size_t *name_slots, name_slot_capacity;  /* name + 1 by text */
    double *means;            /* running mean per entry (variance pooling) */
    int64_t *rank_total, *rank_exclusive;    /* the rank being added */
    uint32_t *added_by;       /* rank + 1 that last touched the entry */
    size_t *touched, touched_count;
} spi_path_pool;

/* An empty pool (no allocation). */
void spi_path_pool_init(spi_path_pool *pool);

/* Fold one rank's paths into the pool. `paths[0..count)` are the rank's
 * in its order (parents before children, `parent` indexing among them);
 * each `region` is the byte offset of its NUL-terminated name in
 * names[0..name_bytes). Ranks come in ascending order, each once.
 * SP_OK; SP_ERR_CORRUPT when a path names an offset outside the names,
 * an unterminated name or a parent not before it (the pool is unchanged
 * then); SP_ERR_OUT_OF_MEMORY (the pool is then unusable: free it). */
int spi_path_pool_add_rank(spi_path_pool *pool, uint32_t rank, const spi_call_path *paths,
                           size_t count, const char *names, size_t name_bytes);

/* Release everything; the pool is empty again. NULL-safe members. */
void spi_path_pool_free(spi_path_pool *pool);

#endif /* SPI_PATH_POOL_H */
