/*
 * scope_check.h - what the parts of scope-check share: the checker of one
 * file (where problems are reported and counted) and the entry points of
 * the per-rank sweep (scope_check_rank.c), the merge it reads calls
 * through (scope_check_merge.c) and the MPI name rule
 * (scope_check_names.c).
 *
 * The files stand in one order: scope-check.c (main, file-level checks)
 * uses scope_check_rank.c and scope_check_names.c, which use
 * scope_check_merge.c and scope_check_report.c.
 */
#ifndef SCOPE_CHECK_H
#define SCOPE_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scope_profiler_results.h"

/* Problem lines printed per file by default; the rest are counted only. */
#define CHECK_DEFAULT_LISTED 200u

/* Default bytes for the set of call ids seen on one rank (the exact
 * repeat check, 16 bytes a slot, filled to 3/4, the old table and the new
 * one together while it grows): 3M ids; see scope_check_rank.c. */
#define CHECK_DEFAULT_ID_MEMORY ((size_t)96 << 20)

/* Where problems go and how many a file had. */
typedef struct checker {
    const char *path;
    const sp_results *res;
    size_t problems;
    size_t warnings;
    size_t listed;       /* problem and warning lines printed so far */
    size_t listed_max;   /* lines printed at most; the rest are counted */
    size_t id_memory;    /* bytes the id set of one rank may take */
    bool strict;
    bool quiet;          /* no notes */
    bool failed;         /* out of memory: the verdict would be incomplete */
} checker;

/* One problem (or, with warning, a warning) of the file: a line
 * "PATH: rank R region NAME: text" (rank < 0 or region NULL leave their
 * part out), printed while fewer than listed_max lines were. */
void check_report(checker *ck, bool warning, long rank, const char *region, const char *format,
                  ...) __attribute__((format(printf, 5, 6)));

/* A note on what could not be checked, on stderr (none with quiet): not
 * a problem nor a warning, so the report and verdict lines stay as they
 * are. */
void check_note(checker *ck, long rank, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The region name of results row `row`. */
const char *check_row_name(const sp_results *res, size_t row);

/* The thread table as sorted (rank, index) keys, for lookups. */
typedef struct check_thread_key {
    uint32_t rank;
    int64_t index;
} check_thread_key;

int check_thread_key_cmp(const void *a, const void *b);

/* The events of one rank: rows[0..count) are its rows in file order.
 * Checks every per-call rule (durations, ids, parents against the
 * package's lane rule, exclusive totals, thread ids) reading the calls
 * through cursors, so memory grows with rows, lanes and nesting depth and
 * with the id set (at most ck->id_memory), never with the calls. */
void check_rank_events(checker *ck, uint32_t rank, const size_t *rows, size_t count,
                       const check_thread_key *threads, size_t thread_count);

/* Every region name "mpi:..." must parse with the package's rule
 * (docs/FORMAT.md 4.6); each one that does not is a problem. */
void check_mpi_names(checker *ck);

#endif /* SCOPE_CHECK_H */
