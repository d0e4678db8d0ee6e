/*
 * event_cursor.h - every event of one thread of a stopped session, in
 * recording order, batch by batch: first the chunks it wrote to the spill
 * file (read back and converted from TSC ticks), then the chunks still in
 * memory. A thread that never spilled reads exactly its chunks, without a
 * copy. Opened backward, the same batches come last first (memory chunks
 * from the tail, then the spilled ones from the last), for walks that
 * need each call's enclosing calls before the call (call_parents.h); the
 * events of a batch are then to be read from its end.
 */
#ifndef SPI_EVENT_CURSOR_H
#define SPI_EVENT_CURSOR_H

#include <stdbool.h>
#include <stddef.h>

#include "record/recorder.h"

typedef struct spi_event_cursor {
    spi_session *session;
    spi_thread *thread;
    bool release;             /* unmap each memory chunk once it was read */
    bool backward;
    int status;               /* backward: SP_ERR_OUT_OF_MEMORY from open */
    size_t next_spilled;      /* forward: index; backward: how many are left */
    spi_chunk *chunk;         /* forward: next memory chunk */
    spi_chunk *previous;      /* memory chunk of the last batch */
    spi_chunk **chunks;       /* backward: the memory chunks, head first */
    size_t chunks_left;       /* backward: chunks[0 .. chunks_left) not read yet */
    spi_event *buffer;        /* one spilled chunk */
    size_t buffer_capacity;
} spi_event_cursor;

/* Start at the thread's first event. `release`: the thread's memory chunks
 * are given back as soon as the next batch is asked for (the thread then
 * has no events left in memory: only for the last pass over it; a chunk in
 * the session's compact arena, an exited thread's, is unlinked and goes
 * with the session). */
void spi_event_cursor_open(spi_event_cursor *cursor, spi_session *session, spi_thread *thread,
                           bool release);

/* Start at the thread's last event, batches in backward order; `release`
 * as above (the tail chunk goes first). An allocation failure here is
 * returned by the first spi_event_cursor_next. */
void spi_event_cursor_open_backward(spi_event_cursor *cursor, spi_session *session,
                                    spi_thread *thread, bool release);

/* The next batch: *events points at *count events, valid until the next
 * call. Returns SP_OK (count 0 at the end), SP_ERR_OUT_OF_MEMORY, or
 * SP_ERR_OUTPUT when the spill file cannot be read. */
int spi_event_cursor_next(spi_event_cursor *cursor, const spi_event **events, size_t *count);

void spi_event_cursor_close(spi_event_cursor *cursor);

#endif /* SPI_EVENT_CURSOR_H */
