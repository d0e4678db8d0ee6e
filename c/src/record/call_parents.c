/*
 * call_parents.c - parents from the nesting of a thread's events
 * (call_parents.h says why the stack below finds them).
 */
#include "record/call_parents.h"

#include "util/alloc.h"
#include "util/error.h"

int spi_call_parents_visit(spi_call_parents *p, const spi_event *e,
                           const spi_enclosing_call **parent) {
    if (p->depth == p->capacity) { /* before any change: a failure leaves none */
        size_t capacity = p->capacity ? p->capacity * 2 : 64;
        spi_enclosing_call *grown = spi_reallocarray(p->stack, capacity, sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        p->stack = grown;
        p->capacity = capacity;
    }
    int64_t sequence = spi_event_sequence(e);
    while (p->depth && p->stack[p->depth - 1].sequence > sequence) p->depth--;
    p->stack[p->depth] = (spi_enclosing_call){sequence, spi_event_region(e)};
    *parent = p->depth ? &p->stack[p->depth - 1] : NULL;
    p->depth++;
    return SP_OK;
}

void spi_call_parents_reset(spi_call_parents *p) { p->depth = 0; }

void spi_call_parents_free(spi_call_parents *p) {
    spi_free(p->stack);
    *p = (spi_call_parents){0};
}

void spi_call_walk_open(spi_call_walk *w, spi_session *session, spi_thread *thread, bool release) {
    *w = (spi_call_walk){0};
    spi_event_cursor_open_backward(&w->cursor, session, thread, release);
}

int spi_call_walk_next(spi_call_walk *w, const spi_event **event,
                       const spi_enclosing_call **parent) {
    *event = NULL;
    *parent = NULL;
    while (!w->left) {
        int status = spi_event_cursor_next(&w->cursor, &w->batch, &w->left);
        if (status != SP_OK) return status;
        if (!w->left) return SP_OK;
    }
    const spi_event *e = &w->batch[w->left - 1];
    int status = spi_call_parents_visit(&w->parents, e, parent);
    if (status != SP_OK) return status;
    w->left--;
    *event = e;
    return SP_OK;
}

void spi_call_walk_close(spi_call_walk *w) {
    spi_event_cursor_close(&w->cursor);
    spi_call_parents_free(&w->parents);
}
