/*
 * summary_threads.h - the summary's per-thread view (issue 34): for every
 * thread of every selected rank, the call paths it ran with its calls,
 * total and own time on that thread. Behind sp_summary_threads
 * (scope_profiler_summary.h) and scope-inspect --threads.
 */
#ifndef SPI_SUMMARY_THREADS_H
#define SPI_SUMMARY_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"

/* One call path on one thread of one rank. */
typedef struct spi_summary_thread_row {
    uint32_t rank;
    int64_t thread;           /* thread-table index of the rank */
    size_t depth;             /* path length - 1 */
    const size_t *path;       /* depth + 1 region indices, root first (owned
                                 by the rows' block) */
    uint64_t calls;
    int64_t total_ns;
    int64_t own_ns;           /* total minus the children's time on this
                                 thread, never negative */
    int64_t other_threads_ns; /* of total: calls that ran beside their parent
                                 call on another thread (OpenMP workers) */
} spi_summary_thread_row;

/*
 * The per-thread rows of `profile` on ranks[0..rank_count) (NULL = every
 * rank), sorted by rank, thread, then the call tree's pre-order (a parent
 * before its children). From the calls (their thread ids) or from an
 * aggregate file's per-thread call paths. On SP_OK *rows is one block
 * (free with spi_free) of *count rows and their paths; *count is 0 when
 * the data records no threads. SP_ERR_UNSUPPORTED (summary-only data or
 * an aggregate file without call paths: err says so), SP_ERR_NESTING (a
 * rank's calls do not nest), SP_ERR_OUT_OF_MEMORY, or the calls' read
 * error; *rows NULL, err filled.
 * Thread-safety: reads the profile only and uses no global state.
 */
int spi_summary_thread_rows(const spi_profile *profile, const uint32_t *ranks, size_t rank_count,
                            spi_summary_thread_row **rows, size_t *count, spi_error *err);

#endif /* SPI_SUMMARY_THREADS_H */
