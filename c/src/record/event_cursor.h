/*
 * event_cursor.h - every event of one thread of a stopped session, in
 * recording order, batch by batch: first the chunks it wrote to the spill
 * file (read back and converted from TSC ticks), then the chunks still in
 * memory. A thread that never spilled reads exactly its chunks, without a
 * copy. Opened backward, the same batches come last first (memory chunks
 * from the tail, then the spilled ones from the last), for walks that
 * need each call's enclosing calls before the call (call_parents.h); the
 * events of a batch are then to be read from its end.
 *
 * Read-ahead (issue 31): a thread with several spilled chunks has them
 * read (O_DIRECT, spill.h spi_spill_read_block) and converted by a helper
 * thread of the cursor, SPI_EVENT_CURSOR_AHEAD chunks ahead of the
 * walker, in the order the walker takes them, so the walk never waits
 * for the disk: the spilled chunks were written with O_DIRECT and are not
 * in the page cache. The batches are the same events in the same order
 * as without it. Memory: SPI_EVENT_CURSOR_AHEAD chunk buffers for the
 * cursor's life, in place of the one buffer of the synchronous reads.
 * Started when the walker reaches its first spilled chunk (backward: its
 * last memory chunk, by which time the others are given back); if the
 * helper or its buffers cannot be had, the same reads happen on the
 * walker's thread.
 */
#ifndef SPI_EVENT_CURSOR_H
#define SPI_EVENT_CURSOR_H

#include <stdbool.h>
#include <stddef.h>

#include "record/recorder.h"

/* Spilled chunks read ahead by the helper (buffers of one chunk each). */
#define SPI_EVENT_CURSOR_AHEAD 3

/* Whether cursors read spilled chunks ahead (default true). A test switch
 * (tests/unit: the synchronous reads are what the read-ahead must match);
 * set it only while no cursor is open. */
extern bool spi_event_cursor_read_ahead;

struct spi_read_ahead; /* event_cursor.c */

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
    struct spi_read_ahead *ahead; /* the helper reading spilled chunks, or NULL */
    bool ahead_tried;         /* started once (or failed to): not again */
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
