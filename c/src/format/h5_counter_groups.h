/*
 * h5_counter_groups.h - write a profile's counter results (perf events and
 * LIKWID, FORMAT.md 1.7) as the rank<N>/perf_events and rank<N>/likwid
 * groups of an open HDF5 file.
 */
#ifndef SPI_H5_COUNTER_GROUPS_H
#define SPI_H5_COUNTER_GROUPS_H

#include <hdf5.h>

#include "profile/profile.h"
#include "util/error.h"

/* Add the groups of every perf and LIKWID record of `profile` to `file`
 * (a writer's open file, before publish: spi_writer_file). Nothing is
 * written when the profile has no counter records. A rank<N> group that
 * exists already (another module's) is shared. Returns SP_OK, SP_ERR_HDF5
 * or SP_ERR_OUT_OF_MEMORY with err set. Not thread-safe (HDF5). */
int spi_h5_write_counter_groups(hid_t file, const spi_profile *profile, spi_error *err);

#endif /* SPI_H5_COUNTER_GROUPS_H */
