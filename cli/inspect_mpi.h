/*
 * inspect_mpi.h - scope-inspect's MPI section: time in MPI by operation
 * and kind, calls, bytes sent, received (each message once in each) and
 * moved by collectives, and the per-rank spread, from the regions named
 * in the canonical MPI form (`mpi:<op> kind=<kind> bytes=<n> ...`, written
 * by libscopeprofiler_pmpi and by the Python package; docs/FORMAT.md).
 */
#ifndef SP_INSPECT_MPI_H
#define SP_INSPECT_MPI_H

#include <stdio.h>

#include "inspect_counters.h"

/* Print the MPI table of `res` for the selected ranks (nothing when the
 * file has no MPI regions). Returns SP_OK or SP_ERR_OUT_OF_MEMORY. */
int inspect_print_mpi(FILE *out, const sp_results *res, inspect_ranks selected);

/* The "mpi" member of scope-inspect's --json object, written where a member
 * may start and followed by ",\n":
 *   "mpi": {"operations": [...], "totals": {...}, "ranks": [...], "enclosing": [...]},
 * operations and totals with bytes_sent, bytes_received, bytes_collective.
 * Always present (empty lists without MPI regions), so the keys are stable.
 * Returns SP_OK or SP_ERR_OUT_OF_MEMORY (then nothing was written). */
int inspect_json_mpi(FILE *out, const sp_results *res, inspect_ranks selected);

#endif
