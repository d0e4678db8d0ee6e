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
 * How (issue 31, measured on a 2-CPU VM with ext4, bench/bounded/RESULTS.md):
 * a whole chunk goes to the file in one write of its own mapping, with
 * O_DIRECT where the file system takes it (spi_spill_write_block): the
 * device reads the chunk's pages, so nothing is copied into the page
 * cache. That copy was what spilling cost: 7 to 100 ns of system time
 * per spilled event, the most when the page cache's pages are new to the
 * machine (a VM's host backs them on first touch), and the copy kept
 * a second image of the spilled events in memory, charged to the job's
 * memory cgroup, beside the bound the user asked for. A direct write
 * waits for the device instead of the CPU, so the writer thread's write
 * overlaps recording even when both run on one CPU. The block starts at
 * the chunk's header and is padded to SPI_SPILL_BLOCK bytes (alignment of
 * O_DIRECT); the entry's offset points past the header, and the padding
 * is never read. A file system that refuses O_DIRECT (at open or at a
 * write) gets ordinary writes of the same blocks.
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
/* Alignment of a block's address, offset and length (O_DIRECT's: the
 * logical block size, at most a page on the file systems we meet). */
#define SPI_SPILL_BLOCK ((size_t)4096)

typedef struct spi_spill {
    int fd;
    int direct_fd;               /* the same file with O_DIRECT, or -1 */
    atomic_bool direct_refused;  /* a direct write failed with EINVAL: fd only */
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

/* The size of a block holding `bytes` (a chunk's header and events):
 * rounded up to SPI_SPILL_BLOCK. */
static inline size_t spi_spill_block_bytes(size_t bytes) {
    return (bytes + SPI_SPILL_BLOCK - 1) / SPI_SPILL_BLOCK * SPI_SPILL_BLOCK;
}

/* Reserves `block_bytes` (from spi_spill_block_bytes) at the end of the
 * file, starting at a multiple of SPI_SPILL_BLOCK, and returns the start.
 * Thread-safe (a compare-and-swap loop, no lock). */
uint64_t spi_spill_reserve_block(spi_spill *spill, size_t block_bytes);

/* Writes the block at `block` (`block_bytes` from spi_spill_block_bytes;
 * address a multiple of SPI_SPILL_BLOCK, every byte of it mapped) at `at`
 * (from spi_spill_reserve_block): directly from memory where the file
 * takes O_DIRECT, otherwise through the page cache. `data_bytes` (the
 * events in it) is what the counters record. Returns 0, or the errno of
 * the failed write or allocation (ENOSPC, EIO...), leaving no record in
 * the counters. Thread-safe (no lock). */
int spi_spill_write_block(spi_spill *spill, const void *block, size_t block_bytes, uint64_t at,
                          size_t data_bytes);

/* Append `bytes` from `data`; *offset receives where they went. Thread-safe
 * (no lock). Returns 0, or the errno of the failed write (ENOSPC, EIO...);
 * a failed write leaves no record in the counters, and the space it
 * reserved is never read. */
int spi_spill_append(spi_spill *spill, const void *data, size_t bytes, uint64_t *offset);

/* Read `bytes` at `offset` into `data`. Returns 0 or an errno. Thread-safe. */
int spi_spill_read(const spi_spill *spill, uint64_t offset, void *data, size_t bytes);

/* Read `bytes` at `offset` for a reader that wants no copy in the page
 * cache (event_cursor.c's read-ahead): where *direct is true, the file
 * takes O_DIRECT and `block` is aligned to SPI_SPILL_BLOCK, the
 * SPI_SPILL_BLOCK-aligned range around the bytes is read into `block`
 * straight from the device (the spilled chunks were written that way, so
 * none of them is in the page cache: a buffered read would allocate and
 * fill page-cache pages and then copy them); otherwise, or when the file
 * refuses the direct read (*direct then set false for the next calls), an
 * ordinary read into the start of `block`. `capacity`: bytes of block, at
 * least spi_spill_read_block_bytes(bytes). *data: where the bytes are in
 * block. Returns 0 or an errno. Thread-safe (no shared state changes). */
int spi_spill_read_block(const spi_spill *spill, uint64_t offset, size_t bytes, void *block,
                         size_t capacity, bool *direct, const void **data);

/* The room spi_spill_read_block needs for `bytes`: the aligned range
 * around them may start up to a block earlier and end up to a block later. */
static inline size_t spi_spill_read_block_bytes(size_t bytes) {
    return spi_spill_block_bytes(bytes) + 2 * SPI_SPILL_BLOCK;
}

/* A hint that `bytes` at `offset` will be read soon (readahead only runs
 * forward; a backward walk asks for the chunk before). Thread-safe; a
 * refused hint changes nothing. */
void spi_spill_will_read(const spi_spill *spill, uint64_t offset, size_t bytes);

/* Close (the file vanishes with its last descriptor). NULL is fine. */
void spi_spill_close(spi_spill *spill);

#endif /* SPI_SPILL_H */
