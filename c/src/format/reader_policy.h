/*
 * reader_policy.h - the one open policy of every HDF5 read (docs/FORMAT.md
 * 3.4.2): the readers (reader_h5*.c, reader_calls.c through the reader's
 * file) and merge's inputs open files only here.
 *
 * A profile is one self-contained file. HDF5 can make a file refer to
 * others: external links, user-defined links, datasets whose raw data is
 * stored in external files (H5Pset_external) and virtual datasets mapping
 * other files' data. Followed, any of them lets a file make every tool
 * print (and scope-merge copy) bytes of another file the user can read.
 * So, right after the open and before any data is read, the whole file is
 * walked: links must be hard or soft, soft links must resolve inside the
 * file (no dangling link, no cycle), and no dataset may use external
 * storage or the virtual layout. The walk itself never follows a link
 * (HDF5's visits follow hard links only, each group once) and reads no
 * data (opening a dataset reads its header, never its storage); a refusal
 * is SP_ERR_CORRUPT naming the file and the object.
 */
#ifndef SPI_READER_POLICY_H
#define SPI_READER_POLICY_H

#include <hdf5.h>
#include <stddef.h>

#include "util/error.h"

/* Open the HDF5 file at path (image NULL), or the `size` bytes at image
 * through the core driver (no backing store; `path` names it in messages),
 * read-only with a STRONG close degree, and check it against the policy.
 * SP_OK with *file open, or *file = -1 and: SP_ERR_NOT_A_PROFILE when HDF5
 * cannot open it (the contract's "not a readable HDF5 profiling file" text
 * with HDF5's innermost error), SP_ERR_CORRUPT when the policy refuses it
 * or the walk fails (err names the file and the object). The caller
 * silences HDF5's error printing (and holds the reader's lock where it
 * shares HDF5 with other threads). */
int spi_h5r_open_checked(const char *path, const void *image, size_t size, hid_t *file,
                         spi_error *err);

/* The check alone, on a file opened by the caller: SP_OK or SP_ERR_CORRUPT
 * naming `path` and the object. */
int spi_h5r_check_policy(hid_t file, const char *path, spi_error *err);

#endif /* SPI_READER_POLICY_H */
