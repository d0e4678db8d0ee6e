/*
 * call_parents.h - each recorded call's parent, recovered from the events.
 *
 * The hot path stores no parent (spi_event): every event is a pop of its
 * thread's call stack, so a thread's calls nest, and the parent of a call
 * X is the call that began last among those that began before X and ended
 * after it. Walking the thread's events from the last ended to the first
 * (event_cursor.h, backward), the calls that ended after X are the ones
 * already visited. Those that began before X enclose it; the walk keeps
 * them on a stack whose sequences increase towards the top, so X's parent
 * is the top once the calls that began after X are popped (a popped call
 * began after X ended, so it encloses no call visited later). Amortized
 * constant time per event; the stack is as deep as the call tree.
 *
 * A call missing from the events is never on the stack: a call still open
 * at finalize (its ancestors are open too, so its completed children
 * become roots), a call past a buffer limit (every later end is dropped as
 * well: the same), or a call lost to a failed flush or allocation after
 * which the thread recorded again (its children attach to its nearest
 * recorded ancestor).
 */
#ifndef SPI_CALL_PARENTS_H
#define SPI_CALL_PARENTS_H

#include <stddef.h>
#include <stdint.h>

#include "record/event_cursor.h"
#include "record/recorder.h"
#include "util/error.h"

typedef struct spi_enclosing_call {
    int64_t sequence;
    uint32_t region;     /* handle */
    int32_t path;        /* the walker's own tag (run_paths.c: the call's
                            path); -1 until the walker sets it */
} spi_enclosing_call;

typedef struct spi_call_parents {
    spi_enclosing_call *stack;
    size_t depth;
    size_t capacity;
} spi_call_parents;

/* Room for one more call (out of line: rare). SP_OK or SP_ERR_OUT_OF_MEMORY. */
int spi_call_parents_grow(spi_call_parents *p);

/* The parent of `e`, the next event of a thread in backward order: *parent
 * is the parent call (valid until the next visit), or NULL for a root.
 * Then e encloses the events still to come until it is popped. SP_OK or
 * SP_ERR_OUT_OF_MEMORY (nothing changed). Inline: finalize visits every
 * call. */
static inline int spi_call_parents_visit(spi_call_parents *p, const spi_event *e,
                                         const spi_enclosing_call **parent) {
    if (p->depth == p->capacity) { /* before any change: a failure leaves none */
        int status = spi_call_parents_grow(p);
        if (status != SP_OK) return status;
    }
    int64_t sequence = spi_event_sequence(e);
    while (p->depth && p->stack[p->depth - 1].sequence > sequence) p->depth--;
    p->stack[p->depth] = (spi_enclosing_call){sequence, spi_event_region(e), -1};
    *parent = p->depth ? &p->stack[p->depth - 1] : NULL;
    p->depth++;
    return SP_OK;
}

/* Forget the calls of the previous thread (before walking another). */
void spi_call_parents_reset(spi_call_parents *p);

void spi_call_parents_free(spi_call_parents *p);

/* A thread's events, last ended first, each with its parent: what every
 * pass over a stopped session that needs parents walks. */
typedef struct spi_call_walk {
    spi_event_cursor cursor;
    spi_call_parents parents;
    const spi_event *batch;
    size_t left;              /* events of the batch not yet given */
} spi_call_walk;

/* `release` as for spi_event_cursor_open_backward. */
void spi_call_walk_open(spi_call_walk *w, spi_session *session, spi_thread *thread, bool release);

/* The next batch into w->batch / w->left (left 0 at the end); the
 * out-of-line part of spi_call_walk_next. */
int spi_call_walk_refill(spi_call_walk *w);

/* The next event (*event NULL at the end) and its parent (NULL: a root),
 * both valid until the next call. SP_OK, SP_ERR_OUT_OF_MEMORY, or
 * SP_ERR_OUTPUT (the spill file cannot be read). */
static inline int spi_call_walk_next(spi_call_walk *w, const spi_event **event,
                                     const spi_enclosing_call **parent) {
    *event = NULL;
    *parent = NULL;
    if (!w->left) {
        int status = spi_call_walk_refill(w);
        if (status != SP_OK || !w->left) return status;
    }
    const spi_event *e = &w->batch[w->left - 1];
    int status = spi_call_parents_visit(&w->parents, e, parent);
    if (status != SP_OK) return status;
    w->left--;
    *event = e;
    return SP_OK;
}

void spi_call_walk_close(spi_call_walk *w);

/* The entry of the event spi_call_walk_next just gave (the top of the
 * enclosing stack): a walker tags it (`path`) for the calls inside it. */
static inline spi_enclosing_call *spi_call_walk_top(spi_call_walk *w) {
    return &w->parents.stack[w->parents.depth - 1];
}

/* Exclusive time per region (indexed by handle) from walked calls: a call
 * adds its duration to its own region and takes it from its parent's, so
 * each region ends with its calls' durations minus their direct
 * children's: exact for the recorded tree, in any order of the calls. */
static inline void spi_exclusive_add(int64_t *exclusive, const spi_event *e,
                                     const spi_enclosing_call *parent) {
    exclusive[spi_event_region(e)] += e->duration_ns;
    if (parent) exclusive[parent->region] -= e->duration_ns;
}

#endif /* SPI_CALL_PARENTS_H */
