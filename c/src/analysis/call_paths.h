/*
 * call_paths.h - a profile's calls folded into call paths pooled over
 * ranks, with everything the summary table shows per path, in memory that
 * grows with the paths and the calls open at one instant, never with the
 * number of calls.
 *
 * The summary table (summary_rows.c) is a tree of collapsed call paths.
 * Building it from each rank's whole call tree (calltree.c) holds every
 * call of a rank, and every call of the job as path records: on a 200M-call
 * file, gigabytes. Here each rank is walked once, its calls in time order
 * from a k-way merge of its rows (call_merge.h), and each call is placed
 * on its path when it arrives, because its parent arrived before it:
 *
 * - With stored ids (every row of the rank has call_ids and parent_ids,
 *   calltree.h's rule), a map of the calls still open (id -> path, end;
 *   an entry is dropped once the merge's time passes its end) gives the
 *   parent's path from the call's stored parent id. A parent that is not
 *   open when its child starts (it does not enclose the child, or it is
 *   not in the file) makes the rank's tree impossible: SP_ERR_NESTING, as
 *   for a repeated open id or a parent id not below the call's own.
 * - Without, the containment rule of FORMAT.md 7.6 per lane, as calltree.c
 *   applies it (doubled times, zero-length calls lengthened by one tick,
 *   depth = calls still open), kept per lane as a heap of the open calls'
 *   ends and the last call of each depth: the same parents and the same
 *   SP_ERR_NESTING cases.
 *
 * Paths are keyed by (parent path, region); a call of the same region as
 * its parent's path stays on that path (recursion collapsed, `recursive`).
 * A call of a region the caller hides (`visible`) gets no path: its
 * children take its place and its time stays child time of its parent.
 * Exclusive time is a call's duration minus its direct children's, except
 * children on another known lane (FORMAT.md 4.2: they ran alongside).
 *
 * Per path, over the selected ranks: count, total, exclusive, min, max,
 * m2 (Welford), earliest start, latest end, the duration of the first
 * call (earliest start; ties: lower rank, then earlier end) and of the
 * last (latest end; ties: lower rank, then earlier start), coverage (per
 * rank the union of the calls' intervals, summed: built as the calls come
 * in start order), per-rank totals' spread, and p50/p95/p99 from a
 * duration set (duration_sketch.h): exact up to its budget, else within
 * SPI_SKETCH_RELATIVE_ERROR. Sums saturate instead of wrapping. Per path
 * too, the threads that ran it (a (path, thread) set per rank) and the
 * time of its calls that ran beside their parent on another thread; on
 * request the per-thread rows themselves (count, total, own time).
 */
#ifndef SPI_CALL_PATHS_H
#define SPI_CALL_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"

/* Mean, min and max of the per-rank totals over the ranks that ran a
 * path, and the imbalance max/mean - 1 in percent (FORMAT.md 7.3: over the
 * totals > 0, 0 with fewer than two). */
typedef struct spi_path_spread {
    double mean;
    int64_t minimum, maximum;
    double imbalance_pct;
} spi_path_spread;

typedef struct spi_path_summary {
    /* rank: the lowest rank that ran it; parent: index among the output
     * (always below the path's own); thread -1 (threads pooled);
     * recursions: calls collapsed into the path. */
    spi_call_path path;
    int depth;                /* 0 for a root */
    bool recursive;
    uint32_t ranks;           /* ranks that ran it */
    int64_t coverage;
    int64_t first, last;      /* durations of the first and last call */
    double std;               /* population std of the durations */
    double p50, p95, p99;
    bool exact_percentiles;   /* false: within SPI_SKETCH_RELATIVE_ERROR */
    spi_path_spread inclusive, exclusive;
    uint32_t threads;         /* threads that ran it, summed over ranks; 0 when
                                 no call of it has a thread id */
    int64_t other_threads;    /* ns of its calls that ran beside their parent
                                 call on another lane (OpenMP workers under the
                                 call that forked them): in total, not child
                                 time of the parent */
} spi_path_summary;

/* One path's calls on one thread of one rank: the summary's per-thread
 * view (spi_call_paths_options.thread_rows). exclusive is the calls' time
 * outside their children on the same thread. */
typedef struct spi_path_thread {
    size_t path;              /* index among the output paths */
    uint32_t rank;
    int64_t thread;           /* thread-table index of the rank */
    uint64_t count;
    int64_t total, exclusive, other_threads;
} spi_path_thread;

typedef struct spi_call_paths_options {
    const bool *visible;      /* [name_count]; NULL = every region */
    size_t exact_per_path;    /* durations kept exactly per path; 0 = the
                                 default SPI_DURATIONS_EXACT_DEFAULT */
    size_t exact_total;       /* over all paths; 0 = SPI_CALL_PATHS_EXACT_TOTAL */
    /* NULL, or on SP_OK *thread_rows (free with spi_free) receives
     * *thread_row_count per-thread rows of the calls that have a thread id,
     * sorted by rank, thread, path (memory: one row per path a thread ran) */
    spi_path_thread **thread_rows;
    size_t *thread_row_count;
} spi_call_paths_options;

/* Durations kept exactly over all paths of one build (32 MiB). */
#define SPI_CALL_PATHS_EXACT_TOTAL ((size_t)4 << 20)

/*
 * The call paths of the calls of ranks[0..rank_count) (ascending, each
 * with rows in the profile), walked rank by rank over the rows of each
 * rank: rank_rows[rank_first[i] .. rank_first[i + 1]) are rank i's row
 * indices (rank_first has rank_count + 1 entries). The profile's calls may
 * be in arrays or in its store (SPI_READ_CALLS_ON_DEMAND); a profile
 * without calls gives no paths.
 *
 * On SP_OK *paths (free with spi_free) holds *count paths, parents before
 * children. SP_ERR_NESTING (a rank's calls do not nest, err names the
 * rank and the calls), SP_ERR_OUT_OF_MEMORY, or the calls' read error:
 * *paths NULL, err filled.
 * Thread-safety: reads the profile only and uses no global state.
 */
int spi_call_paths_build(const spi_profile *profile, const uint32_t *ranks, size_t rank_count,
                         const size_t *rank_rows, const size_t *rank_first,
                         const spi_call_paths_options *options, spi_path_summary **paths,
                         size_t *count, spi_error *err);

#endif /* SPI_CALL_PATHS_H */
