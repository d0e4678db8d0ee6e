/*
 * spn_mpi.h - the instrumentation library's look at MPI: the session it
 * starts before main (so before MPI_Init) needs the core's MPI_Finalize
 * hook, which can only be installed once MPI runs.
 *
 * Thread-safety: spn_mpi_notice may be called from any thread, under the
 * instrument table's lock (spn_table.c serialises it).
 */
#ifndef SPN_MPI_H
#define SPN_MPI_H

/* Ask the core (sp_mpi_notice_init, MPI builds) to install its
 * MPI_Finalize hook if MPI is initialised now. Called at each new function
 * (off the hot path) until the core says nothing more is needed; a no-op in
 * a build without MPI. */
void spn_mpi_notice(void);

#endif
