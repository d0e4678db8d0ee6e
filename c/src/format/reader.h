/*
 * reader.h - open any supported profile file into an spi_profile.
 *
 * One entry point for every layout (FORMAT.md 1-4 and 6): HDF5 schema 1, 2
 * and 3, the aggregate layout, and native .spt traces. The kind of file is
 * told by its first bytes ("SCOPEPRF" = trace), not by its name, except that
 * a file called *.spt is always judged as a trace so that a damaged one gets
 * the trace's error messages.
 *
 * Everything read from the file is validated before it is used as an
 * offset, a length or an index: a damaged or hostile file gives a status and
 * a message naming the file, never a crash or an unbounded allocation.
 */
#ifndef SPI_READER_H
#define SPI_READER_H

#include "util/error.h"
#include "profile/profile.h"

/* Read only the index and its stored summary statistics (FORMAT.md 4.4),
 * never the event columns: memory independent of the number of calls. */
#define SPI_READ_SUMMARY_ONLY 1u
/* Also fill every row's ends (start + duration), in the same pass that
 * computes the statistics. */
#define SPI_READ_WITH_ENDS 2u
/* Keep the event columns of an HDF5 schema 2/3 columnar file in the file
 * (profile->store, format/reader_calls.c) and read them through cursors
 * (profile/call_cursor.h); the statistics come from one streamed pass.
 * Taken only when every row has a stored exclusive total (the call tree
 * is then never needed whole); any other file is read whole, and then
 * SPI_READ_WITH_ENDS applies. */
#define SPI_READ_CALLS_ON_DEMAND 4u

/* Fill *out (which must be zeroed) from the file at path. On error *out is
 * released and zeroed and err names the file and the problem. Statuses:
 * SP_OK, SP_ERR_INVALID_ARGUMENT, SP_ERR_FILE_NOT_FOUND,
 * SP_ERR_NOT_A_PROFILE, SP_ERR_SCHEMA_UNSUPPORTED, SP_ERR_CORRUPT,
 * SP_ERR_NO_SUMMARY, SP_ERR_OUT_OF_MEMORY, SP_ERR_HDF5.
 * Full reads fill each row's stats from its events; summary-only reads take
 * them from the file. Safe from several threads (HDF5 calls are serialised
 * inside). */
int spi_profile_read(spi_profile *out, const char *path, unsigned flags, spi_error *err);

/* The same from `size` bytes in memory (a whole file's image), `name`
 * standing for the path in messages: the kind of file from the first bytes
 * (no name rule), HDF5 through the core driver without a backing store.
 * Nothing touches the file system. For the fuzz harnesses (tests/fuzz) and
 * any caller that already holds a file's bytes; same statuses. */
int spi_profile_read_image(spi_profile *out, const void *image, size_t size, const char *name,
                           unsigned flags, spi_error *err);

/* The back ends, called by the two above with a zeroed profile; on error
 * they may leave partial data in *out (the caller frees it). The *_image
 * variants parse bytes in memory, `path` naming them in messages. */
int spi_read_h5(spi_profile *out, const char *path, unsigned flags, spi_error *err);
int spi_read_h5_image(spi_profile *out, const void *image, size_t size, const char *path,
                      unsigned flags, spi_error *err);
int spi_read_spt(spi_profile *out, const char *path, unsigned flags, spi_error *err);
int spi_read_spt_image(spi_profile *out, const void *image, size_t size, const char *path,
                       unsigned flags, spi_error *err);

#endif /* SPI_READER_H */
