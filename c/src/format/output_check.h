/*
 * output_check.h - the one check of an output path, shared by every writer
 * and by sp_setup. Internal to the format module (and lifecycle).
 */
#ifndef SPI_OUTPUT_CHECK_H
#define SPI_OUTPUT_CHECK_H

#include "util/error.h"

/* Whether a profile can be published at `path`: not empty, a file name
 * (not a directory path) no longer than NAME_MAX, and, if it exists, a
 * regular file (publishing renames over it: a device, FIFO, socket or
 * directory is never replaced). SP_OK, SP_ERR_INVALID_ARGUMENT or
 * SP_ERR_OUTPUT with err naming the path. spi_writer_create checks it,
 * publish checks it again before the rename, sp_setup checks it early.
 * Thread-safe (reads only the path's metadata). */
int spi_output_path_check(const char *path, spi_error *err);

#endif /* SPI_OUTPUT_CHECK_H */
