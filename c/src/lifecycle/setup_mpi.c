/*
 * setup_mpi.c - the public MPI setup variants (scope_profiler_mpi.h).
 */
#include "scope_profiler_mpi.h"

#include "util/error.h"
#include "lifecycle/profiler.h"

SP_API int sp_setup_mpi(MPI_Comm comm, const sp_options *options) {
    sp_options defaults;
    if (!options) {
        sp_options_init(&defaults);
        options = &defaults;
    }
    return spi_setup_in_job(options, &comm);
}

SP_API int sp_setup_mpi_f(MPI_Fint comm, const sp_options *options) {
    return sp_setup_mpi(MPI_Comm_f2c(comm), options);
}
