/*
 * call_merge.h - one rank's calls in time order, from all its rows at once,
 * in memory that does not grow with the calls.
 *
 * A rank's calls are spread over its rows (one per region), each row in
 * start order. The call tree needs them in one order in which a parent
 * comes before its children: by start, and among equal starts by call id
 * (a parent's id is below its children's) or, without ids, longer calls
 * first (FORMAT.md 7.6: a parent ends no earlier than its children). A
 * k-way merge gives that order: a heap holds one stream per row, each
 * reading its row through a call cursor (profile/call_cursor.h), so the
 * calls may be in memory or still in the file (SPI_READ_CALLS_ON_DEMAND).
 *
 * Memory: one cursor slice per row (the slice shrinks as the rows grow in
 * number, within SPI_MERGE_SLICE_BYTES per rank), plus per row the calls
 * that share one start (sorted there, since a row's stored order says
 * nothing about ties). A row whose starts are not in order (a Python file
 * can store nested calls of one region in end order; the reader notes it
 * as spi_row.out_of_start_order) is read whole and sorted: only such rows
 * cost memory per call.
 */
#ifndef SPI_CALL_MERGE_H
#define SPI_CALL_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"

/* Bytes of cursor slices one merge holds at most (besides rows read whole
 * and runs of equal starts): the slice per row is this divided over the
 * rows, between 64 and SPI_CURSOR_DEFAULT_SLICE calls. */
#define SPI_MERGE_SLICE_BYTES (8u << 20)

/* One call as the merge delivers it. */
typedef struct spi_merged_call {
    int64_t start;
    int64_t end;        /* start + duration, checked not to overflow */
    int64_t id;         /* stored call id; -1 when the merge is not by id */
    int64_t parent;     /* stored parent id; -1 likewise */
    int64_t lane;       /* FORMAT.md 5: task id if >= 0, else -2 - thread id
                           if >= 0, else -1 */
    int64_t thread;     /* thread-table index of the rank, -1 = unknown */
    size_t row;         /* index into profile->rows */
    uint64_t index;     /* the call's index in its row (stored order) */
} spi_merged_call;

typedef struct spi_rank_merge spi_rank_merge;

/* Whether the rows row_list[0..row_count) (rows of other ranks skipped)
 * all carry stored call and parent ids, so that the tree comes from them
 * (calltree.h's rule; a row without calls does not count). */
bool spi_rank_merge_has_ids(const spi_profile *profile, uint32_t rank, const size_t *row_list,
                            size_t row_count);

/* Open a merge over the rows of `rank` among row_list[0..row_count); rows
 * of other ranks and rows without readable calls are skipped. by_id: order
 * (start, id) and deliver ids; else (start, longer first). *out is NULL on
 * error. SP_OK, SP_ERR_OUT_OF_MEMORY, a read error of the calls, or
 * SP_ERR_NESTING for a call whose duration is negative or whose end
 * overflows (calltree.h's message), err filled.
 * Thread-safety: reads the profile only; one merge per thread. */
int spi_rank_merge_open(spi_rank_merge **out, const spi_profile *profile, uint32_t rank,
                        const size_t *row_list, size_t row_count, bool by_id, spi_error *err);

/* The next call into *call (valid until the next call of this function);
 * *call NULL when every call was delivered. Statuses as open, plus
 * SP_ERR_NESTING when a row said to be in start order is not (the merge
 * cannot order it), err filled. After an error the merge is only closed. */
int spi_rank_merge_next(spi_rank_merge *merge, const spi_merged_call **call, spi_error *err);

/* Release the merge (NULL ignored). */
void spi_rank_merge_close(spi_rank_merge *merge);

#endif /* SPI_CALL_MERGE_H */
