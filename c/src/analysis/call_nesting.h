/*
 * call_nesting.h - the parent of each call of one rank as the calls arrive
 * in merge order (call_merge.h), keeping only the calls still open.
 *
 * Two rules, calltree.h's, chosen per rank by the caller:
 * - by id: the call named by the stored parent id, which must be open (an
 *   entry of the map id -> (end, value) that the merge's time has not
 *   passed: its end is not before the child's start). Not open, a parent
 *   id not below the call's own, or an id that is open twice: NESTING.
 * - by containment, per lane (FORMAT.md 7.6 as calltree.c applies it): the
 *   depth of a call is the number of earlier calls of its lane whose
 *   doubled end (2 end, or 2 start + 1 for a zero-length call) is past its
 *   doubled start, kept as a min-heap of those ends; its parent is the last
 *   call of depth - 1. A depth more than one below the previous call's, a
 *   child ending after its parent, or a time beyond +-INT64_MAX / 4:
 *   NESTING. This gives calltree.c's parents exactly, because that rule
 *   only ever counts earlier calls of the lane.
 *
 * Memory: the open calls and at most a few times as many closed ones not
 * yet swept out (by id: a closed call is dropped at the table's next
 * sweep, not when it closes, so a call costs constant work), or per lane
 * the open calls and the deepest nesting seen (by containment).
 */
#ifndef SPI_CALL_NESTING_H
#define SPI_CALL_NESTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"
#include "analysis/call_merge.h"

/* What the caller keeps with an open call. */
typedef struct spi_nest_value {
    long node;      /* the path its children hang under (-1: none) */
    bool own;       /* the call has a path of its own (its region is shown) */
    int64_t lane;
} spi_nest_value;

typedef struct spi_call_nesting spi_call_nesting;

/* A nesting for one rank of `profile` (for messages), by id or by
 * containment. *out NULL on error. SP_OK or SP_ERR_OUT_OF_MEMORY. */
int spi_call_nesting_open(spi_call_nesting **out, const spi_profile *profile, uint32_t rank,
                          bool by_id, spi_error *err);

/* The parent of `call` (the next call in merge order) into *parent (NULL:
 * a root; valid until the next push). Must be followed by
 * spi_call_nesting_push of the same call before the next parent query.
 * SP_OK, SP_ERR_NESTING or SP_ERR_OUT_OF_MEMORY, err filled. */
int spi_call_nesting_parent(spi_call_nesting *n, const spi_merged_call *call,
                            const spi_nest_value **parent, spi_error *err);

/* Record `call` as open with `value`. SP_OK, SP_ERR_NESTING (by id: its id
 * is already open) or SP_ERR_OUT_OF_MEMORY, err filled. */
int spi_call_nesting_push(spi_call_nesting *n, const spi_merged_call *call,
                          spi_nest_value value, spi_error *err);

/* Release (NULL ignored). Not thread-safe on one nesting; one per rank. */
void spi_call_nesting_close(spi_call_nesting *n);

#endif /* SPI_CALL_NESTING_H */
