/*
 * scope_check_merge.h - one rank's calls in the order the package's
 * nesting rebuild visits them (docs/FORMAT.md 5, contract 7.6): by start,
 * longer calls first among equal starts, then by call id (a parent's id
 * is below its children's), then by row and position for a fixed order.
 *
 * A k-way merge over the rank's rows, each read through a public sp_calls
 * cursor, so the calls may be in memory or still in the file
 * (SP_RESULTS_CALLS_ON_DEMAND). Memory: one slice per row, within
 * CHECK_MERGE_SLICE_BYTES per rank; a row whose starts are not in order
 * (legal, FORMAT.md 3.1; only Python files do it) is read whole and
 * sorted, so only such rows cost memory per call.
 */
#ifndef SCOPE_CHECK_MERGE_H
#define SCOPE_CHECK_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "scope_profiler_results.h"

/* Bytes of cursor slices one merge holds at most (rows read whole aside). */
#define CHECK_MERGE_SLICE_BYTES ((size_t)8 << 20)

/* One call as the merge delivers it. Optional columns the file lacks
 * read -1 (and `has_*` of the merge says whether the column exists). */
typedef struct check_call {
    int64_t start;
    int64_t end;        /* start + duration (the cursor checked the sum) */
    int64_t duration;
    int64_t id;         /* call id, -1 = not numbered or no column */
    int64_t parent;     /* parent id, -1 = root or no column */
    int64_t thread;     /* thread id, -1 = unknown or no column */
    int64_t task;       /* task id, -1 = none or no column */
    size_t pos;         /* position of the call's row in the rank's row list */
    uint64_t index;     /* the call's index in its row (stored order) */
} check_call;

typedef struct check_merge check_merge;

/* Open a merge over rows[0..count) (all of one rank). *out NULL on error.
 * Returns SP_OK, SP_ERR_OUT_OF_MEMORY or a cursor's read error (message
 * in errbuf). */
int check_merge_open(check_merge **out, const sp_results *res, const size_t *rows, size_t count,
                     char *errbuf, size_t errbuf_len);

/* The next call (valid until the next call), NULL after the last. Returns
 * SP_OK or a read error (message in errbuf). */
int check_merge_next(check_merge *m, const check_call **call, char *errbuf, size_t errbuf_len);

/* For the row at position `pos`: the calls that start before the call
 * stored before them, and the first of them (known for every row once
 * the merge was opened). */
void check_merge_disorder(const check_merge *m, size_t pos, uint64_t *count, uint64_t *first);

/* Whether the rank's rows carry parent ids (the column is whole-file). */
int check_merge_has_parents(const check_merge *m);

void check_merge_close(check_merge *m);

#endif /* SCOPE_CHECK_MERGE_H */
