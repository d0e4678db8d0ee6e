/*
 * h5_call_paths.h - write an aggregate-mode profile's call paths as the
 * rank<N>/call_paths groups of an open HDF5 file (docs/FORMAT.md, our
 * extension of the aggregate layout; the Python reader ignores it).
 */
#ifndef SPI_H5_CALL_PATHS_H
#define SPI_H5_CALL_PATHS_H

#include <hdf5.h>

#include "profile/profile.h"
#include "util/error.h"

/* One rank<N>/call_paths group per rank of profile->paths (consecutive per
 * rank), every column of format/schema.c's spi_path_columns. Nothing is
 * written when the profile has no paths. Returns SP_OK, SP_ERR_HDF5 or
 * SP_ERR_OUT_OF_MEMORY with err set. Not thread-safe (HDF5). */
int spi_h5_write_call_paths(hid_t file, const spi_profile *profile, spi_error *err);

#endif /* SPI_H5_CALL_PATHS_H */
