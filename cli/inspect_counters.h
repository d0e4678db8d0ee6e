/*
 * inspect_counters.h - scope-inspect's counter tables: perf-event totals
 * per rank and region (rank<N>/perf_events) with derived ratios, and the
 * LIKWID groups per rank (rank<N>/likwid): metrics and events per hardware
 * thread.
 */
#ifndef SP_INSPECT_COUNTERS_H
#define SP_INSPECT_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scope_profiler_results.h"

/* The ranks to show: all when count is 0 (scope-inspect --ranks). */
typedef struct inspect_ranks {
    const uint32_t *ranks;
    size_t count;
} inspect_ranks;

/* true when `rank` is one of the selected ranks (or all are selected). */
bool inspect_rank_selected(inspect_ranks selected, uint32_t rank);

/* Print the counter tables of `res` for the selected ranks (nothing when
 * the file has none). */
void inspect_print_counters(FILE *out, const sp_results *res, inspect_ranks selected);

/* The "counters" member of scope-inspect's --json object, written where a
 * member may start (two-space indent) and followed by ",\n":
 *   "counters": {"perf_events": [...], "likwid": [...]},
 * Always present, with empty lists when the file has no counters, so the
 * keys are stable. */
void inspect_json_counters(FILE *out, const sp_results *res, inspect_ranks selected);

#endif
