/*
 * scope_report.h - the sections of scope-report's one HTML page, one file
 * each: scope_report_page.c (the page, run metadata, the summary table),
 * scope_report_imbalance.c (min/mean/max per rank of the top regions),
 * scope_report_timeline.c (every lane, sampled for large files). The flame
 * graph is flamegraph_svg.c, the same as scope-export --format svg. The
 * page calls the sections, never the reverse; what they share (the number
 * format) is report_html.c, below all three.
 *
 * Everything is inline (CSS, script, SVG, data): the page must open from
 * a laptop's disk, offline, years later.
 */
#ifndef SP_CLI_SCOPE_REPORT_H
#define SP_CLI_SCOPE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scope_profiler_results.h"
#include "view_lanes.h"

typedef struct report_options {
    const uint32_t *ranks; /* NULL = every rank */
    size_t rank_count;
    size_t top;              /* regions in the imbalance chart */
    uint64_t timeline_calls; /* most calls drawn in the timeline */
    const char *title;       /* NULL: from the label or the file name */
} report_options;

/* The whole page. Returns SP_OK, SP_ERR_OUT_OF_MEMORY, SP_ERR_OUTPUT, or
 * the error of a file whose calls cannot be read back (SP_ERR_CORRUPT,
 * SP_ERR_HDF5); `why` then gets a message naming it ("" if none). */
int report_write(FILE *out, const sp_results *res, const report_options *o, char *why,
                 size_t why_len);

/* <svg> bars of the per-rank totals (min, mean, max over the ranks that
 * ran it) of the `top` regions with the largest pooled total. */
int report_imbalance(FILE *out, const sp_results *res, const report_options *o);

/* The timeline's data (a JSON <script> element) and its drawing script.
 * Lanes with more than o->timeline_calls calls in all are thinned: only
 * calls at least as long as a threshold are kept (their depth is still
 * their true depth), and the page says which threshold. */
int report_timeline(FILE *out, view_lanes *v, const report_options *o);

#endif /* SP_CLI_SCOPE_REPORT_H */
