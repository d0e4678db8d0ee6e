/*
 * profiler.h - the lifecycle entry point shared by sp_setup_with_options
 * and the MPI setup variants (lifecycle/setup_mpi.c).
 */
#ifndef SPI_PROFILER_H
#define SPI_PROFILER_H

#include "scope_profiler.h"

/* sp_setup_with_options, joining the job of `mpi_comm` (a pointer to an
 * MPI_Comm, or NULL for MPI_COMM_WORLD when MPI is initialised). */
int spi_setup_in_job(const sp_options *options, const void *mpi_comm);

#include <stdbool.h>

/* Whether the active session was started on the program's behalf
 * (sp_session_adoptable), so the next setup takes it over: it keeps the
 * job that session joined (MPI_COMM_WORLD when MPI ran), and a
 * communicator given to sp_setup_mpi is compared with that one first. */
bool spi_setup_adoptable(void);

#endif /* SPI_PROFILER_H */
