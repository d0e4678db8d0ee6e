/*
 * spill.h - the spill file of a bounded trace (sp_options.overflow =
 * SP_OVERFLOW_FLUSH).
 *
 * When a process's event memory reaches its limit, recording threads write
 * their full chunks here and reuse the memory; finalize reads them back in
 * bounded slices (run_stream.c). The file is created beside the output (same
 * file system, so the space it uses is the space the output will need) and
 * is unlinked from the start: it has no name while the process runs, so it
 * disappears on every exit path, SIGKILL included, and two processes (or
 * two ranks writing one output) can never share one.
 *
 * Writes reserve their offset with one atomic add and then pwrite without
 * any lock, so recording threads never wait for one another here. The file
 * is extended ahead of the writes by fallocate, SPI_SPILL_EXTENT at a
 * time: writing into allocated blocks costs a tenth of writing past the
 * end of a file on ext4 (measured here: 5.5 against 59 ns per event), and
 * a full disk shows up as an error of fallocate, before any write.
 *
 * Who writes (issue 31): by default the session's spill writer thread
 * (spill_writer.h). A recording thread at the limit hands its full chunks
 * over (their offsets reserved at once with spi_spill_reserve, so its list
 * of spilled chunks keeps recording order) and goes on in a chunk the
 * writer has already written and recycled; the writer writes them with
 * spi_spill_write_at. When no written chunk is free (the writer is behind,
 * or this is the session's first spill), the recording thread writes its
 * own current chunk here itself (spi_spill_append), as it always did:
 * back-pressure, never more memory. SCOPE_PROFILER_SPILL_THREAD=0 keeps
 * every write on the recording threads.
 *
 * The memory bound is unchanged by the writer: chunks queued for writing
 * and written chunks waiting on the free list stay counted in the
 * process's event bytes (recorder_state.h spi_buffer_bytes) until they are
 * unmapped, and a chunk changes hands only one for one (a thread hands
 * over its chunks when it takes a free one, or keeps its last one and
 * writes it itself). So event memory stays within the buffer limit plus
 * one first chunk (SPI_FIRST_CHUNK_BYTES) per recording thread, with or
 * without the writer.
 */
#ifndef SPI_SPILL_H
#define SPI_SPILL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define SPI_SPILL_EXTENT ((uint64_t)64 << 20)

typedef struct spi_spill {
    int fd;
    _Atomic uint64_t end;        /* bytes reserved so far */
    _Atomic uint64_t allocated;  /* bytes given to the file by fallocate */
    _Atomic uint64_t written;    /* bytes written (for the report) */
    _Atomic uint64_t writes;     /* chunks written */
    atomic_bool failed;          /* a write failed: recording now drops */
} spi_spill;

/* Create the spill file in the directory of `output_path`. Returns SP_OK,
 * SP_ERR_OUT_OF_MEMORY, or SP_ERR_OUTPUT with err naming the directory and
 * the reason (then *spill is NULL). */
int spi_spill_open(spi_spill **spill, const char *output_path, spi_error *err);

/* Reserves `bytes` at the end of the file and returns their offset, to be
 * written later with spi_spill_write_at (by another thread, maybe).
 * Thread-safe (one atomic add). Space reserved and never written is never
 * read. */
uint64_t spi_spill_reserve(spi_spill *spill, size_t bytes);

/* Writes `bytes` from `data` at `offset` (reserved by spi_spill_reserve),
 * extending the file's blocks ahead first. Returns 0, or the errno of the
 * failed write or allocation (ENOSPC, EIO...); a failed write leaves no
 * record in the counters. Thread-safe (no lock). */
int spi_spill_write_at(spi_spill *spill, const void *data, size_t bytes, uint64_t offset);

/* Append `bytes` from `data`; *offset receives where they went. Thread-safe
 * (no lock). Returns 0, or the errno of the failed write (ENOSPC, EIO...);
 * a failed write leaves no record in the counters, and the space it
 * reserved is never read. */
int spi_spill_append(spi_spill *spill, const void *data, size_t bytes, uint64_t *offset);

/* Read `bytes` at `offset` into `data`. Returns 0 or an errno. Thread-safe. */
int spi_spill_read(const spi_spill *spill, uint64_t offset, void *data, size_t bytes);

/* A hint that `bytes` at `offset` will be read soon (readahead only runs
 * forward; a backward walk asks for the chunk before). Thread-safe; a
 * refused hint changes nothing. */
void spi_spill_will_read(const spi_spill *spill, uint64_t offset, size_t bytes);

/* Close (the file vanishes with its last descriptor). NULL is fine. */
void spi_spill_close(spi_spill *spill);

#endif /* SPI_SPILL_H */
