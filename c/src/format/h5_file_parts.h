/*
 * h5_file_parts.h - the pieces of a schema-3 file that every writer writes
 * the same way: the streaming writer (h5_writer.c, one process) and the
 * collective writer (h5_parallel_writer.c, every rank of an MPI job through
 * parallel HDF5). Keeping them here means both writers create the same
 * datasets with the same types, chunking and compression, and publish the
 * same way (temporary sibling, fsync, rename, fsync of the directory).
 *
 * Functions returning int give SP_OK, SP_ERR_HDF5 or SP_ERR_OUT_OF_MEMORY
 * (no message: the caller names the file); those taking spi_error fill it.
 * Not thread-safe beyond what HDF5 is.
 */
#ifndef SPI_H5_FILE_PARTS_H
#define SPI_H5_FILE_PARTS_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "format/schema.h"
#include "profile/metadata.h"
#include "profile/profile.h"

/* Event columns of at least this many calls are chunked (this many
 * elements per chunk at most) with shuffle + deflate at this level. */
#define SPI_COMPRESS_MIN_EVENTS 16384
#define SPI_EVENT_CHUNK_ELEMENTS 65536
#define SPI_DEFLATE_LEVEL 1

/* An HDF5 call on the file `path` failed. When the system refused the write
 * (a full disk, a quota, an I/O error: HDF5's file driver leaves errno set),
 * that is what the user needs to read, as SP_ERR_OUTPUT; otherwise HDF5's
 * own message, as SP_ERR_HDF5. Clear errno before the call. */
int spi_h5_fail(spi_error *err, const char *path, const char *what);

/* The event columns a file declaring `declared` (SPI_EV_BIT set) has:
 * always start_deltas and durations, never the absolute start/end times. */
unsigned spi_h5_event_column_set(unsigned declared);

/* Whole 1-D dataset of `count` elements, contiguous, in one write. */
int spi_h5_write_column(hid_t parent, const spi_column *column, const void *data, uint64_t count);

/* Whether event columns of `count` calls are chunked with shuffle + deflate
 * (large enough, and this HDF5 has the deflate filter). */
bool spi_h5_event_columns_chunked(uint64_t count);

/* A fixed-size event column; large ones chunked and compressed. `dcpl` is a
 * dataset creation list to start from (H5P_DEFAULT for none). < 0 on error. */
hid_t spi_h5_create_event_column(hid_t events, const spi_column *column, uint64_t count,
                                 hid_t dcpl);

/* `count` int64 values at [offset, offset + count) of a 1-D dataset through
 * the transfer list `dxpl`. count 0 selects nothing (a collective write in
 * which this rank has nothing left still takes part). */
int spi_h5_write_slice(hid_t dset, hid_t memory_type, uint64_t offset, const void *values,
                       size_t count, hid_t dxpl);

/* The root attributes: schema version and storage layout. */
int spi_h5_write_root_attributes(hid_t file, bool aggregate);
/* metadata/ with one attribute per entry. */
int spi_h5_write_metadata(hid_t file, const spi_meta *metadata);
/* region_table/names, repaired to UTF-8 (a name that becomes another's gets
 * "~<region id>"); SP_ERR_OUT_OF_MEMORY when the repair cannot allocate. */
int spi_h5_write_region_table(hid_t file, const char *const *names, size_t count);
/* thread_table/ (nothing when count is 0). */
int spi_h5_write_thread_table(hid_t file, const spi_thread_row *threads, size_t count);

/* The fixed-size index columns of rows (FORMAT.md 1.4), as both writers
 * hold them before writing: the streaming writer for every row until
 * publish, the collective writer for this rank's rows. */
typedef struct spi_index_rows {
    uint32_t *region_ids;
    uint32_t *ranks;
    uint64_t *offsets;
    uint64_t *counts;
    int64_t *source_lines;
    int64_t *exclusive_totals;
    spi_stats *stats;
} spi_index_rows;

/* Room for `rows` rows (at least one); SP_OK or SP_ERR_OUT_OF_MEMORY (what
 * was allocated is released by spi_index_rows_free either way). */
int spi_index_rows_alloc(spi_index_rows *rows, size_t count);
void spi_index_rows_free(spi_index_rows *rows);

/* A unique temporary sibling ".<name>.<random>.tmp" of path, created empty
 * with the permissions a plain fopen would give; NULL with err filled. The
 * caller frees it with spi_free. */
char *spi_h5_temp_sibling(const char *path, spi_error *err);

/* Register a temporary file for sp_remove_partial_outputs (async-signal
 * safe walk); returns a slot for spi_h5_partial_forget, -1 when full. */
int spi_h5_partial_register(const char *temp_path);
void spi_h5_partial_forget(int slot);

/* fsync `temp`, check `final` again (spi_output_path_check), rename temp
 * over final and fsync the directory. On failure temp is removed and err
 * names final: SP_ERR_OUTPUT or SP_ERR_INVALID_ARGUMENT. */
int spi_h5_publish_temp(const char *temp, const char *final, spi_error *err);

/* The streaming writer's file driver (h5_file_parts.c): sec2, except that
 * HDF5 is never told that a write failed (libhdf5 1.10 cannot close a file
 * whose flush failed, and a failed close crashes its exit handler later).
 * The first failure's errno lands here instead, nothing more is written,
 * and every close succeeds; the writer checks after each step. */
typedef struct spi_h5_guard {
    bool failed;
    int error;   /* errno of the first failed write, truncate or close */
} spi_h5_guard;

/* A new file access list with the guarded driver reporting to *guard
 * (which must outlive the file; it is reset here) and a STRONG close
 * degree (H5Fclose closes every object of the file with it). Caller
 * closes it; < 0 on failure. */
hid_t spi_h5_guard_fapl(spi_h5_guard *guard);

/* SP_OK, or SP_ERR_OUTPUT "PATH: cannot WHAT: <the system's reason>" when a
 * write of the guarded file failed. */
int spi_h5_guard_check(const spi_h5_guard *guard, spi_error *err, const char *path,
                       const char *what);

#endif /* SPI_H5_FILE_PARTS_H */
