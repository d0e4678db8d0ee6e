/*
 * build_info.c - sp_version and sp_build_info: what the library was built
 * from (version, git describe, captured at configure time into the
 * generated lifecycle/build_config.h) and with (HDF5 from its headers,
 * MPI as CMake found it).
 */
#include <scope_profiler.h>
#include <scope_profiler_version.h>

#include <hdf5.h>

#include "lifecycle/build_config.h"

#define SPI_STR2(x) #x
#define SPI_STR(x) SPI_STR2(x)

static const sp_build build = {
    .version = SCOPE_PROFILER_VERSION,
    .git_describe = SPI_BUILD_GIT_DESCRIBE,
    .hdf5_version = SPI_STR(H5_VERS_MAJOR) "." SPI_STR(H5_VERS_MINOR) "." SPI_STR(H5_VERS_RELEASE),
    .mpi_version = SPI_BUILD_MPI_VERSION,
    .parallel_hdf5 = SPI_BUILD_PARALLEL_HDF5,
};

SP_API const char *sp_version(void) { return SCOPE_PROFILER_VERSION; }

SP_API const sp_build *sp_build_info(void) { return &build; }
