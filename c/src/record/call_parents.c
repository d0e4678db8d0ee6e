/*
 * call_parents.c - parents from the nesting of a thread's events
 * (call_parents.h says why the stack below finds them).
 */
#include "record/call_parents.h"

#include "util/alloc.h"

int spi_call_parents_grow(spi_call_parents *p) {
    size_t capacity = p->capacity ? p->capacity * 2 : 64;
    spi_enclosing_call *grown = spi_reallocarray(p->stack, capacity, sizeof *grown);
    if (!grown) return SP_ERR_OUT_OF_MEMORY;
    p->stack = grown;
    p->capacity = capacity;
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

/* the cursor skips empty chunks: a batch of 0 events is the end */
int spi_call_walk_refill(spi_call_walk *w) {
    return spi_event_cursor_next(&w->cursor, &w->batch, &w->left);
}

void spi_call_walk_close(spi_call_walk *w) {
    spi_event_cursor_close(&w->cursor);
    spi_call_parents_free(&w->parents);
}
