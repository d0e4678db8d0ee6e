/*
 * event_cursor.c - a thread's events from the spill file and memory
 * (event_cursor.h). A spilled entry the spill writer failed to write has
 * its chunk kept in memory (recorder.h spi_spilled_chunk.kept): it is
 * copied and converted like one read from the file, so it comes in the
 * same place of the order with the same times.
 */
#include "record/event_cursor.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"

void spi_event_cursor_open(spi_event_cursor *c, spi_session *session, spi_thread *thread,
                           bool release) {
    *c = (spi_event_cursor){.session = session, .thread = thread, .release = release,
                            .chunk = thread->head};
    if (session->spilled_map_live) session->spilled_map.hint = 0;
}

void spi_event_cursor_open_backward(spi_event_cursor *c, spi_session *session,
                                    spi_thread *thread, bool release) {
    *c = (spi_event_cursor){.session = session, .thread = thread, .release = release,
                            .backward = true, .next_spilled = thread->spilled_count};
    if (session->spilled_map_live) session->spilled_map.hint = 0;
    size_t count = 0;
    for (const spi_chunk *k = thread->head; k; k = k->next) count++;
    if (!count) return;
    c->chunks = spi_malloc(count * sizeof *c->chunks);
    if (!c->chunks) {
        c->status = SP_ERR_OUT_OF_MEMORY;
        return;
    }
    for (spi_chunk *k = thread->head; k; k = k->next) c->chunks[c->chunks_left++] = k;
}

/* Forward, the chunk read last is the head; backward, it is the tail. */
static void release_previous(spi_event_cursor *c) {
    if (!c->release || !c->previous) return;
    spi_thread *t = c->thread;
    if (c->backward) {
        t->tail = c->chunks_left ? c->chunks[c->chunks_left - 1] : NULL;
        if (t->tail) t->tail->next = NULL;
        else t->head = NULL;
    } else {
        t->head = c->previous->next;
        if (!t->head) t->tail = NULL;
    }
    spi_chunk_unmap(c->previous); /* an arena copy stays: the session frees it */
    c->previous = NULL;
}

static int read_spilled(spi_event_cursor *c, size_t index, const spi_event **events,
                        size_t *count) {
    const spi_spilled_chunk *s = &c->thread->spilled[index];
    if (s->count > c->buffer_capacity) {
        spi_free(c->buffer);
        c->buffer = spi_malloc((size_t)s->count * sizeof *c->buffer);
        c->buffer_capacity = c->buffer ? (size_t)s->count : 0;
        if (!c->buffer) return SP_ERR_OUT_OF_MEMORY;
    }
    if (s->kept) /* the spill writer could not write it: still in memory */
        memcpy(c->buffer, s->kept->events, (size_t)s->count * sizeof *c->buffer);
    else if (spi_spill_read(c->session->spill, s->offset, c->buffer,
                            (size_t)s->count * sizeof *c->buffer) != 0)
        return SP_ERR_OUTPUT;
    /* the same conversion recorder_ticks.c gave the memory chunks */
    if (c->session->spilled_raw_ends)
        spi_event_convert_times(c->buffer, (size_t)s->count,
                                c->session->spilled_map_live ? &c->session->spilled_map : NULL);
    *events = c->buffer;
    *count = (size_t)s->count;
    return SP_OK;
}

static int next_backward(spi_event_cursor *c, const spi_event **events, size_t *count) {
    while (c->chunks_left) {
        spi_chunk *chunk = c->chunks[--c->chunks_left];
        c->previous = chunk;
        if (chunk->used) {
            *events = chunk->events;
            *count = chunk->used;
            return SP_OK;
        }
        release_previous(c);
    }
    if (!c->next_spilled) return SP_OK;
    size_t index = --c->next_spilled;
    if (index) {
        const spi_spilled_chunk *before = &c->thread->spilled[index - 1];
        spi_spill_will_read(c->session->spill, before->offset, (size_t)before->count * sizeof(spi_event));
    }
    return read_spilled(c, index, events, count);
}

int spi_event_cursor_next(spi_event_cursor *c, const spi_event **events, size_t *count) {
    *events = NULL;
    *count = 0;
    release_previous(c);
    if (c->status != SP_OK) return c->status;
    if (c->backward) return next_backward(c, events, count);
    if (c->next_spilled < c->thread->spilled_count)
        return read_spilled(c, c->next_spilled++, events, count);
    while (c->chunk && c->chunk->used == 0) {
        c->previous = c->chunk;
        c->chunk = c->chunk->next;
        release_previous(c);
    }
    if (!c->chunk) return SP_OK;
    *events = c->chunk->events;
    *count = c->chunk->used;
    c->previous = c->chunk;
    c->chunk = c->chunk->next;
    return SP_OK;
}

void spi_event_cursor_close(spi_event_cursor *c) {
    release_previous(c);
    spi_free(c->buffer);
    c->buffer = NULL;
    spi_free(c->chunks);
    c->chunks = NULL;
}
