/*
 * profiler.h - the lifecycle entry point shared by sp_setup_with_options
 * and the MPI setup variants (job/setup_mpi.c).
 */
#ifndef SPI_PROFILER_H
#define SPI_PROFILER_H

#include "scope_profiler.h"

/* sp_setup_with_options, joining the job of `mpi_comm` (a pointer to an
 * MPI_Comm, or NULL for MPI_COMM_WORLD when MPI is initialised). */
int spi_setup_in_job(const sp_options *options, const void *mpi_comm);

#endif /* SPI_PROFILER_H */
