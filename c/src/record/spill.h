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
