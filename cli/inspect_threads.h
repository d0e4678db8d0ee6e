/*
 * inspect_threads.h - scope-inspect --threads: the summary's call paths
 * split by thread (sp_summary_threads), per thread its name and rank and
 * each path it ran with calls, total and own time on that thread, as text
 * and as the "threads" member of --json.
 */
#ifndef SP_INSPECT_THREADS_H
#define SP_INSPECT_THREADS_H

#include <stdio.h>

#include "inspect_counters.h"

/* Print the per-thread breakdown of `res` for the selected ranks, one
 * block per thread; a one-line note when the file records no threads.
 * Returns SP_OK, or the error of sp_summary_threads (message in errbuf)
 * other than SP_ERR_UNSUPPORTED, which prints the note. */
int inspect_print_threads(FILE *out, const sp_results *res, inspect_ranks selected,
                          char *errbuf, size_t errbuf_len);

/* The "threads" member of --json, where a member may start and followed
 * by ",\n": [{"rank": R, "index": T, "name": "...", "rows": [{"path":
 * [names, root first], "num_calls": N, "total_duration": s,
 * "own_duration": s, "other_threads_duration": s}, ...]}, ...], in
 * seconds; [] when the file records no threads. Returns as
 * inspect_print_threads; on an error other than SP_ERR_UNSUPPORTED
 * nothing was written. */
int inspect_json_threads(FILE *out, const sp_results *res, inspect_ranks selected,
                         char *errbuf, size_t errbuf_len);

#endif
