/*
 * spill_writer.h - the thread that writes a bounded trace's full chunks to
 * its spill file, so the recording threads do not (issue 31: a recording
 * thread's own pwrite cost about 5.5 ns per event, and its timing was
 * noisy). Internal to the record module.
 *
 * One writer per session that flushes (spill.h), created at session start
 * without a thread; the thread ("sp-spill") starts at the first hand-over,
 * so a run that never reaches its buffer limit has no extra thread.
 *
 * A recording thread at the limit hands over its full chunks one by one
 * (spi_spill_writer_submit: the file offset is reserved then, and the
 * thread records the chunk at the end of its spilled list at once, so the
 * list keeps recording order) and continues in a chunk the writer wrote
 * already (spi_spill_writer_take_free: written chunks of full size are
 * recycled, not unmapped and mapped again). The writer writes queued
 * chunks in hand-over order, then puts each on the free list (a full-size
 * chunk) or unmaps it (a thread's small first chunk). Every chunk stays
 * counted in spi_buffer_bytes from its mapping to its unmapping, so the
 * queue and the free list are inside the session's memory bound.
 *
 * A failed write (ENOSPC, EIO) behaves as one on a recording thread: one
 * message, the spill marked failed (flushing is off for the session,
 * later calls past the limit are dropped and counted), the free list
 * unmapped. The chunk that failed, and every chunk queued after it, is not
 * written and not lost: it stays in memory, still counted, and becomes
 * its spilled entry's `kept` chunk (recorder.h), which readers read
 * instead of the file.
 *
 * Locking: one mutex and two condition variables, taken once per chunk
 * (a chunk holds ~87,000 events), never on the per-call path.
 * Fork: the child has no writer thread; it forgets the session's writer
 * with the session (recorder_session.c) and never calls anything here.
 */
#ifndef SPI_SPILL_WRITER_H
#define SPI_SPILL_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "record/recorder.h"

typedef struct spi_spill_writer spi_spill_writer;

/* Whether $SCOPE_PROFILER_SPILL_THREAD lets the session use a writer
 * thread: yes unless it is "0" (or "no", "off", "false"); any other value
 * than those and "1", "yes", "on", "true" gets one message and means yes.
 * Thread-safe. */
bool spi_spill_writer_wanted(void);

/* A writer for `spill` (not owned; it must outlive the writer), with no
 * thread yet. `label` (the output path) and `limit_bytes` are only named
 * in the failure message; `label` must outlive the writer. NULL when out of
 * memory: the session then writes on its recording threads. */
spi_spill_writer *spi_spill_writer_create(spi_spill *spill, const char *label, size_t limit_bytes);

/* Queues `chunk` (t's, full, already unlinked from t's list, `used`
 * events) to be written; *offset receives its reserved place in the file.
 * The caller, on t's own thread, must then record (offset, used) at index
 * `index` of t->spilled (the index the writer will name if the write
 * fails) and no longer touch the chunk. Counts the chunk in
 * t->spill_queued. Starts the writer thread on the first call.
 * The chunk is written whole from its mapping (spill.h: a block, O_DIRECT
 * where the file takes it), so *offset is its events' place in the file.
 * Returns SP_OK; SP_ERR_BUFFER_LIMIT when the writer has failed or is
 * stopping, or the chunk is no mapping of its own (bytes 0),
 * SP_ERR_OUT_OF_MEMORY when the thread cannot be started or the
 * queue entry cannot be allocated: then nothing was reserved or queued and
 * the chunk is still the caller's (it writes it itself). */
int spi_spill_writer_submit(spi_spill_writer *writer, spi_thread *t, spi_chunk *chunk,
                            size_t index, uint64_t *offset);

/* A chunk the writer has written, of SPI_CHUNK_BYTES, `used` 0, `next`
 * NULL, still counted in spi_buffer_bytes: the caller's to record into.
 * NULL when none is free (checked without the lock first, so asking costs
 * one load when the list is empty). Thread-safe. */
spi_chunk *spi_spill_writer_take_free(spi_spill_writer *writer);

/* Waits until every chunk t handed over is written (or has failed), then
 * sets t->spilled[i].kept for t's failed ones: after it, t->spilled can be
 * read. Runs on t's own thread (it is the only one that changes
 * t->spilled while t records). Returns at once when t has none pending. */
void spi_spill_writer_wait_thread(spi_spill_writer *writer, spi_thread *t);

/* Stops the writer: every queued chunk is written (or, after a failure,
 * kept), the thread joined, every failed chunk set as its thread's
 * t->spilled[i].kept, the free list unmapped, and the writer freed. NULL
 * is fine. Only after recording stopped (no submit can come any more):
 * spi_recorder_stop. */
void spi_spill_writer_finish(spi_spill_writer *writer);

#endif /* SPI_SPILL_WRITER_H */
