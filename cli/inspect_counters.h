/*
 * inspect_counters.h - scope-inspect's counter tables: perf-event totals
 * per rank and region (rank<N>/perf_events) with derived ratios.
 */
#ifndef SP_INSPECT_COUNTERS_H
#define SP_INSPECT_COUNTERS_H

#include <stdio.h>

#include "scope_profiler_results.h"

/* Print the counter tables of `res` (nothing when the file has none). */
void inspect_print_counters(FILE *out, const sp_results *res);

#endif
