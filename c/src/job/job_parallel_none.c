/*
 * job_parallel_none.c - an MPI build whose HDF5 has no MPI-IO: the job
 * always writes through the rank-0 funnel (job_mpi.c). See job_parallel.h.
 */
#include "job/job_parallel.h"

bool spi_job_parallel_chosen(MPI_Comm comm, const spi_profile *local, const char *path) {
    (void)comm;
    (void)local;
    (void)path;
    return false;
}

int spi_job_parallel_write(MPI_Comm comm, const spi_profile *local, const char *path,
                           spi_job_totals *totals, spi_error *err) {
    (void)comm;
    (void)local;
    (void)totals;
    return spi_error_set(err, SP_ERR_UNSUPPORTED, "%s: this build has no parallel HDF5", path);
}
