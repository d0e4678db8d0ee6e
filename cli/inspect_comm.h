/*
 * inspect_comm.h - scope-inspect --comm: the communication matrix of a
 * profile (views/comm_matrix.h: rank x rank bytes and messages on
 * MPI_COMM_WORLD, each message counted once at its sender) as text (the
 * top pairs and a per-rank summary) and as the "comm" member of --json.
 */
#ifndef SP_INSPECT_COMM_H
#define SP_INSPECT_COMM_H

#include <stddef.h>
#include <stdio.h>

#include "inspect_counters.h"

/* Print the matrix of `res` for the selected ranks: the `top` pairs with
 * the most bytes, per-rank totals (every rank up to 64 ranks with
 * traffic, past that the spread and the `top` largest senders), and the
 * totals of communicators the file cannot map to world ranks. Prints a
 * one-line note when the file has no point-to-point MPI regions.
 * Returns SP_OK or SP_ERR_OUT_OF_MEMORY. */
int inspect_print_comm(FILE *out, const sp_results *res, inspect_ranks selected, size_t top);

/* The "comm" member of --json, where a member may start and followed by
 * ",\n": {"basis": "send side", "world_ranks": R, "messages": M,
 * "bytes": B, "pairs": [every pair, most bytes first], "ranks": [ranks
 * with traffic], "unresolved": [per communicator]}. Returns SP_OK or
 * SP_ERR_OUT_OF_MEMORY (then nothing was written). */
int inspect_json_comm(FILE *out, const sp_results *res, inspect_ranks selected);

#endif
