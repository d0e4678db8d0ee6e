/*
 * reader_h5_names.h - a group's link names in one pass (reader_h5_names.c).
 *
 * The readers of groups that may hold many members (rank<N>/perf_events
 * with one group per region, rank<N>/likwid/regions) list them here.
 */
#ifndef SPI_READER_H5_NAMES_H
#define SPI_READER_H5_NAMES_H

#include <hdf5.h>

#include "format/reader_h5_util.h"

/* The names of the links of `group` in name order, as spi_h5r_list gives
 * them (*names: *count strings, free with spi_h5r_free_strings), read in
 * one iteration: time linear in the links (n log n where HDF5 must sort
 * them), never one lookup by index per link. SP_OK, SP_ERR_CORRUPT (the
 * group cannot be listed; h->err names the file) or SP_ERR_OUT_OF_MEMORY.
 * Thread-safety: as every HDF5 read, under the reader's lock. */
int spi_h5r_list_names(const spi_h5r *h, hid_t group, char ***names, hsize_t *count);

#endif /* SPI_READER_H5_NAMES_H */
