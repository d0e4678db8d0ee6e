/*
 * recorder_retire.h - what becomes of a recording thread's state when it
 * exits (recorder_retire.c), and the spill write it shares with the
 * recording threads. Internal to the record module.
 *
 * A process that starts many short-lived threads must not keep a live
 * thread's working memory per exited thread (a 64 KiB first chunk, the
 * stack of open calls, the name caches, a mapped anchor list: 72 KiB a
 * thread). An exited thread keeps its events and its thread-table entry,
 * packed: its partly filled last chunk is copied into the session's
 * compact arena at its exact size (or written to the spill file when the
 * buffer limit is reached), its anchors are kept at their exact size, and
 * in aggregate mode its call paths are added into the session's folded
 * table (spi_path_fold), which grows with the distinct paths only.
 */
#ifndef SPI_RECORDER_RETIRE_H
#define SPI_RECORDER_RETIRE_H

#include <stddef.h>

#include "record/recorder.h"

/* One block of the session's compact arena: packed spi_chunk copies (a
 * header and exactly the events used), bump-allocated, never freed one by
 * one. The whole block is mapped and counted in spi_buffer_bytes, so the
 * session's buffer limit covers it. Newest first. */
struct spi_arena_block {
    struct spi_arena_block *next; /* the block filled before this one */
    size_t bytes;                 /* mapped, for spi_unmap */
    size_t used;                  /* bytes of data[] handed out */
    _Alignas(16) unsigned char data[];
};

/* Room for one more entry at the end of t->spilled. SP_OK or
 * SP_ERR_OUT_OF_MEMORY (nothing changed). On t's own thread while the
 * session records (or under spi_session_lock as it exits). */
int spi_spilled_reserve(spi_thread *t);

/* Writes the `used` events of `chunk` to the session's spill file in one
 * append and records where they went at the end of t->spilled. Runs on
 * t's own thread (recording, or exiting under spi_session_lock) while the
 * session records; the spill file is appended to without a lock
 * (spill.h). Returns SP_OK; SP_ERR_OUT_OF_MEMORY when t->spilled cannot
 * grow (nothing written); SP_ERR_BUFFER_LIMIT when the write failed: the
 * spill is then marked failed for the whole session (one message says
 * that calls past the limit are dropped from now on) and nothing is
 * recorded in t->spilled. */
int spi_chunk_spill(spi_thread *t, const spi_chunk *chunk);

/* The calling thread, which recorded with t, is exiting; t was published
 * (spi_thread_publish) and the thread records nothing more. Gives back
 * everything t does not need for finalize:
 *   - the stack of open calls (kept at its exact depth if the thread exited
 *     inside calls: finalize names them), the name caches;
 *   - trace: the last chunk's events are copied into the session's compact
 *     arena and the chunk unmapped. When the arena needs a new block that
 *     would pass the buffer limit and the session flushes, all of t's
 *     chunks are written to the spill file instead (in order, like a
 *     recording thread's full chunks); when it cannot flush, or a write
 *     fails, the chunk is kept as it is. No call is lost on any path, so
 *     nothing is counted in t->dropped_events here;
 *   - aggregate: t's paths are added into the session's spi_path_fold and
 *     freed (t->folded says it recorded); out of memory, they stay on t,
 *     where finalize reads them as before;
 *   - anchors (TSC): moved from their mapped list into an exact-size one.
 * Never fails: whatever cannot be compacted for lack of memory stays as it
 * was. Under spi_session_lock, on the exiting thread, while t's session is
 * the live one. */
void spi_thread_retire(spi_thread *t);

/* Unmaps every block of a session's arena (the chunks in it go with it,
 * so only once no chunk of the session is read any more). NULL is fine.
 * Not thread-safe: a stopped session's owner only. */
void spi_arena_free(struct spi_arena_block *arena);

/* Frees a session's folded path table. NULL is fine. Not thread-safe: a
 * stopped session's owner only. */
void spi_path_fold_free(spi_path_fold *fold);

#endif /* SPI_RECORDER_RETIRE_H */
