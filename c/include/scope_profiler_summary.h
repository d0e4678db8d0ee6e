/*
 * scope_profiler_summary.h - region statistics and the summary table of an
 * opened profile (libscopeprofiler).
 *
 * Overview
 * --------
 * On top of an sp_results (scope_profiler_results.h) this API gives the
 * statistics of FORMAT.md section 7:
 *   - sp_summary_region: one region pooled over all ranks or a selection
 *     (every call weighs the same; without per-call data the per-rank
 *     moments are combined exactly);
 *   - sp_summary_region_rank: one region on one rank;
 *   - sp_summary_regions, sp_summary_rows: the same for every region (or
 *     every row) in one call, linear in the file rather than quadratic;
 *   - sp_summary_percentile: any percentile (numpy "linear" method);
 *   - sp_summary_print: the region summary table, a call tree pooled over
 *     ranks by call path with "(own)" rows, as printed at the end of a run
 *     and by scope-inspect;
 *   - sp_escape_name: a name from a file made safe for a text table, the
 *     escaping sp_summary_print applies, for programs printing their own.
 *
 * Typical call sequence:
 *
 *     sp_results *res;
 *     if (sp_results_open("run.h5", 0, &res, msg, sizeof msg) != SP_OK) ...
 *     for (size_t r = 0; r < sp_results_region_count(res); r++) {
 *         sp_region_summary s;
 *         sp_summary_region(res, r, NULL, 0, &s, msg, sizeof msg);
 *         printf("%s %llu calls, %.6f s\n", sp_results_region_name(res, r),
 *                (unsigned long long)s.calls, s.total_ns / 1e9);
 *     }
 *     sp_summary_print(res, stdout, NULL, msg, sizeof msg);
 *     sp_results_close(res);
 *
 * Units: ns everywhere (int64 for sums and stored durations, double for
 * derived values such as the mean, std and percentiles). Convert to seconds
 * at the edge; the table prints seconds.
 *
 * Exclusive time = inclusive minus the direct children's durations. It
 * comes from the file's stored totals when present, else from the stored
 * call tree (call_ids/parent_ids) when every region of a rank has one, else
 * from timestamp containment within each thread/task lane. Calls that do
 * not nest give SP_ERR_NESTING with a message naming the regions; the rest
 * of the statistics are still returned.
 *
 * Thread-safety: every function only reads the results object and uses no
 * global state, so any number of threads may call them concurrently on the
 * same object (sp_summary_print on distinct FILE streams). Do not close the
 * results object meanwhile.
 */
#ifndef SCOPE_PROFILER_SUMMARY_H
#define SCOPE_PROFILER_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scope_profiler.h"
#include "scope_profiler_results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of sp_region_summary.available: which groups of fields hold data.
 * A field whose bit is clear is 0 (exclusive_ns: -1). */
#define SP_STAT_MIN_MAX     0x01u  /**< min_ns, max_ns */
#define SP_STAT_FIRST_LAST  0x02u  /**< first_ns, last_ns (not in aggregate files) */
#define SP_STAT_STD         0x04u  /**< std_ns (not in aggregate files) */
#define SP_STAT_PERCENTILES 0x08u  /**< p50/p95/p99 (needs per-call data) */
#define SP_STAT_EXCLUSIVE   0x10u  /**< exclusive_ns */
#define SP_STAT_GPU         0x20u  /**< gpu_total_ns, gpu_average_ns */
#define SP_STAT_START_END   0x40u  /**< first_start_ns, last_end_ns */

/**
 * Statistics of one region (FORMAT.md 7.1-7.3). Fields are never reordered;
 * new ones are only appended.
 */
typedef struct sp_region_summary {
    uint64_t calls;            /**< number of calls */
    uint32_t num_ranks;        /**< ranks that have a row of the region */
    int64_t total_ns;          /**< sum of durations (= inclusive) */
    int64_t exclusive_ns;      /**< total minus direct children; -1 unavailable */
    double average_ns;         /**< total / calls */
    int64_t min_ns;            /**< shortest call */
    int64_t max_ns;            /**< longest call */
    int64_t first_ns;          /**< duration of the chronologically first call */
    int64_t last_ns;           /**< duration of the call that ended last */
    double std_ns;             /**< population standard deviation */
    double p50_ns;             /**< median (numpy "linear") */
    double p95_ns;
    double p99_ns;
    double rank_imbalance;     /**< max/mean of the per-rank totals > 0; 0 with < 2 */
    double rank_imbalance_pct; /**< (rank_imbalance - 1) * 100; 0 when imbalance is 0 */
    int64_t first_start_ns;    /**< earliest start (absolute clock) */
    int64_t last_end_ns;       /**< latest end */
    int64_t gpu_total_ns;      /**< GPU time (see FORMAT.md 3.3 for the -1 quirk) */
    double gpu_average_ns;
    unsigned available;        /**< SP_STAT_* bits */
} sp_region_summary;

/**
 * Statistics of region `region` (an index of the region table) pooled over
 * the ranks in ranks[0..rank_count-1], or over every rank when ranks is
 * NULL. Ranks without a row of the region contribute nothing.
 *
 * out:        filled on SP_OK and on SP_ERR_NESTING (then exclusive_ns is -1
 *             and SP_STAT_EXCLUSIVE is clear); untouched on other errors.
 * errbuf:     one-line message on error, "" on success; may be NULL.
 * Returns:
 *   SP_OK
 *   SP_ERR_INVALID_ARGUMENT  results or out NULL, region out of range,
 *                            rank_count > 0 with ranks NULL
 *   SP_ERR_NESTING           a rank's calls are not properly nested (the
 *                            message names both region calls)
 *   SP_ERR_OUT_OF_MEMORY
 * Thread-safety: see the overview.
 */
SP_API int sp_summary_region(const sp_results *results, size_t region, const uint32_t *ranks,
                             size_t rank_count, sp_region_summary *out, char *errbuf,
                             size_t errbuf_len);

/**
 * sp_summary_region for every region at once: out[r] for each r in
 * [0, sp_results_region_count(results)), pooled over ranks[0..rank_count-1]
 * (NULL = all). Use it rather than one sp_summary_region per region: it
 * groups the rows by region once and builds each rank's call tree at most
 * once, so it costs O(calls log calls + rows log rows + regions), where a
 * loop over sp_summary_region costs regions x rows.
 *
 * out:     region_count elements, filled on SP_OK and SP_ERR_NESTING (then
 *          the regions of a rank whose calls do not nest have exclusive_ns
 *          -1 and SP_STAT_EXCLUSIVE clear); untouched on other errors.
 * Returns: as sp_summary_region (SP_ERR_NESTING: errbuf names the first
 *          such rank).
 * Thread-safety: see the overview.
 */
SP_API int sp_summary_regions(const sp_results *results, const uint32_t *ranks,
                              size_t rank_count, sp_region_summary *out, char *errbuf,
                              size_t errbuf_len);

/**
 * Statistics of every row (one region on one rank) at once: out[i] for
 * each i in [0, sp_results_row_count(results)) equals
 * sp_summary_region_rank(results, row i's region, row i's rank), in the
 * same time as sp_summary_regions.
 * Returns and errors as sp_summary_regions.
 */
SP_API int sp_summary_rows(const sp_results *results, sp_region_summary *out, char *errbuf,
                           size_t errbuf_len);

/**
 * Statistics of region `region` on rank `rank` alone (FORMAT.md 7.1/7.2).
 * A rank without a row of the region gives calls 0 and SP_OK.
 * Returns and errors as sp_summary_region.
 */
SP_API int sp_summary_region_rank(const sp_results *results, size_t region, uint32_t rank,
                                  sp_region_summary *out, char *errbuf, size_t errbuf_len);

/**
 * The `percent`-th percentile (0..100, numpy "linear" method) of the
 * durations of region `region` pooled over ranks (NULL = all) into
 * *value_ns (0.0 when the region has no calls).
 * Returns:
 *   SP_OK
 *   SP_ERR_INVALID_ARGUMENT  NULL results/value_ns, region out of range,
 *                            percent outside [0, 100] or NaN
 *   SP_ERR_UNSUPPORTED       the results have no per-call data
 *                            (summary-only or aggregate file)
 *   SP_ERR_OUT_OF_MEMORY
 */
SP_API int sp_summary_percentile(const sp_results *results, size_t region, const uint32_t *ranks,
                                 size_t rank_count, double percent, double *value_ns);

/** sp_summary_options.style */
typedef enum sp_summary_style {
    SP_SUMMARY_STYLE_AUTO = 0,    /**< box drawing on a UTF-8 terminal, else ASCII */
    SP_SUMMARY_STYLE_ASCII = 1,   /**< + - | `- and "(rec)" */
    SP_SUMMARY_STYLE_UNICODE = 2  /**< rounded box, tree glyphs, "↻" */
} sp_summary_style;

/**
 * How sp_summary_print renders. Initialise with sp_summary_options_init so
 * that fields added later get their defaults. Pointers are borrowed for the
 * duration of the call only.
 */
typedef struct sp_summary_options {
    int style;                     /**< sp_summary_style */
    int flat;                      /**< 1: one row per region, no call tree */
    int percent_exclusive;         /**< 1: % session from exclusive time */
    const char *sort;              /**< NULL/"start" (pre-order, siblings by earliest
                                        start), "total", "calls", "avg", "min", "max",
                                        "first", "last", "std", "p50", "p95", "p99",
                                        "imbalance", "exclusive", "threads",
                                        "other_threads" (descending, among
                                        siblings), "name" (alphabetical) */
    const char *columns;           /**< comma-separated (sp_summary_column_names());
                                        NULL = region,calls,percent,parent_percent,
                                        total,avg, or region,total when the run has
                                        no "scope_profiler.session" region */
    const char *const *include;    /**< POSIX extended regexes matched at the start
                                        of region names; rows of other regions are
                                        hidden (their time still counts as child
                                        time of their parents) */
    size_t include_count;
    const char *const *exclude;    /**< regexes of regions to hide */
    size_t exclude_count;
    const uint32_t *ranks;         /**< ranks to pool, NULL = all */
    size_t rank_count;
    const char *title;             /**< line above the table, NULL = none */
} sp_summary_options;

/** Fill *options with the defaults (everything 0/NULL). NULL is a no-op. */
SP_API void sp_summary_options_init(sp_summary_options *options);

/** The column names sp_summary_options.columns accepts, comma-separated. */
SP_API const char *sp_summary_column_names(void);

/**
 * Print the region summary table (FORMAT.md 7.5) to `out`: the call tree
 * pooled over ranks by collapsed call path (recursion marked), an "(own)"
 * row after every row with children (its total is the parent's exclusive
 * time), or one row per region when asked (flat), when the file has no
 * per-call data, or when calls do not nest.
 *
 * options: NULL for the defaults.
 * Returns:
 *   SP_OK
 *   SP_ERR_INVALID_ARGUMENT  NULL results/out, a bad regex, sort key or
 *                            column name (nothing printed; errbuf says which)
 *   SP_ERR_NESTING           calls do not nest: the table WAS printed with
 *                            one row per region; errbuf names the regions
 *   SP_ERR_OUTPUT            writing to `out` failed
 *   SP_ERR_OUT_OF_MEMORY
 * Thread-safety: see the overview.
 */
SP_API int sp_summary_print(const sp_results *results, FILE *out,
                            const sp_summary_options *options, char *errbuf, size_t errbuf_len);

/**
 * One call path on one thread of one rank (sp_summary_threads). Fields are
 * never reordered; new ones are only appended.
 */
typedef struct sp_thread_row {
    uint32_t rank;
    int64_t thread;            /**< thread-table index of the rank
                                    (sp_thread_info.index of that rank) */
    size_t depth;              /**< path length - 1 (0 for a root) */
    const size_t *path;        /**< depth + 1 region indices, root first; owned
                                    by the array sp_summary_threads returned */
    uint64_t calls;
    int64_t total_ns;          /**< the path's calls on this thread */
    int64_t own_ns;            /**< total minus the children's time on this
                                    thread; never negative */
    int64_t other_threads_ns;  /**< of total: calls that ran beside their
                                    parent call on another thread (OpenMP
                                    workers under the call that forked them) */
} sp_thread_row;

/**
 * The summary's call paths split by thread (scope-inspect --threads): for
 * every thread of every selected rank, each call path it ran with its
 * calls, total and own time on that thread. A trace gives them from its
 * calls' thread ids (one walk, memory per path a thread ran, not per
 * call); an aggregate file from its per-thread call paths.
 *
 * ranks:   ranks to include, NULL = all.
 * rows:    on SP_OK one array of *row_count rows (free with
 *          sp_summary_threads_free), sorted by rank, thread, then the call
 *          tree's pre-order (a parent before its children); *row_count is 0
 *          when the file records no threads. NULL on error.
 * Returns:
 *   SP_OK
 *   SP_ERR_INVALID_ARGUMENT  NULL results/rows/row_count, rank_count > 0
 *                            with ranks NULL
 *   SP_ERR_UNSUPPORTED       no calls and no call paths (summary-only
 *                            reads, Python aggregate files)
 *   SP_ERR_NESTING           a rank's calls do not nest (errbuf names them)
 *   SP_ERR_OUT_OF_MEMORY, or the calls' read error of an on-demand object
 * Thread-safety: see the overview.
 */
SP_API int sp_summary_threads(const sp_results *results, const uint32_t *ranks,
                              size_t rank_count, sp_thread_row **rows, size_t *row_count,
                              char *errbuf, size_t errbuf_len);

/** Release what sp_summary_threads returned; NULL is a no-op. */
SP_API void sp_summary_threads_free(sp_thread_row *rows);

/**
 * Copy `name` (a region, event, group or metadata name read from a file)
 * into out[0..out_size-1] with every byte that could harm a terminal or a
 * text table written as the four characters \xNN: the C0 controls
 * (newline, tab, ESC, which starts ANSI escape sequences), DEL, the C1
 * controls U+0080..U+009F, and every byte that is not part of well-formed
 * UTF-8 (RFC 3629). Printable ASCII and other well-formed UTF-8 pass
 * unchanged, a backslash too: the result is safe to print, not a
 * reversible encoding (JSON and XML outputs need their own quoting). This
 * is the escaping sp_summary_print applies to names.
 *
 * out:      always NUL-terminated when out_size > 0; a result that does not
 *           fit is cut at a whole character or escape. out may be NULL when
 *           out_size is 0 (to measure).
 * name:     NULL is treated as "".
 * Returns:  the length of the whole escaped name without its NUL, as
 *           snprintf does: a result >= out_size means it was cut, and
 *           result + 1 bytes hold it. Never fails.
 * Thread-safety: reentrant, no global state.
 */
SP_API size_t sp_escape_name(const char *name, char *out, size_t out_size);

#ifdef __cplusplus
}
#endif

#endif /* SCOPE_PROFILER_SUMMARY_H */
