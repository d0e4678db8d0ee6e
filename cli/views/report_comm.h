/*
 * report_comm.h - scope-report's communication section: the heat map of
 * bytes sent per (sender, receiver) pair of MPI_COMM_WORLD ranks
 * (comm_matrix.h), one cell per pair up to 128 ranks, blocks of ranks
 * past that. Called by the page (scope_report_page.c).
 */
#ifndef SP_CLI_REPORT_COMM_H
#define SP_CLI_REPORT_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scope_profiler_results.h"

/* Write the section (<h2 id="comm"> and an inline <svg id="comm-heat">,
 * or a note when no point-to-point message is on MPI_COMM_WORLD; nothing
 * when the file has no point-to-point MPI regions) for the
 * selected ranks (NULL/0: all). Returns SP_OK, SP_ERR_OUT_OF_MEMORY or
 * SP_ERR_OUTPUT (the stream failed). Not thread-safe on one `out`. */
int report_comm(FILE *out, const sp_results *res, const uint32_t *ranks, size_t rank_count);

#endif /* SP_CLI_REPORT_COMM_H */
