/*
 * job_mpi_exit.h - the profiler's finalize run from inside MPI_Finalize
 * (MPI builds only): an attribute on MPI_COMM_SELF whose delete callback
 * MPI runs first thing in MPI_Finalize, while every MPI call still works
 * (MPI >= 2.2, "Allowing User Functions at Process Termination").
 *
 * Two ways in: a session that joins MPI at setup installs the hook at once
 * (spi_job_exit_install); a session started before MPI_Init (compiler
 * instrumentation, an sp_setup before MPI_Init) only says what to run
 * (spi_job_exit_expect) and installs it when something first sees MPI
 * initialised (spi_job_exit_arm, reached through sp_mpi_notice_init). All
 * of it is local to the process: PMPI_Comm_create_keyval and
 * PMPI_Comm_set_attr on MPI_COMM_SELF, no communication.
 *
 * Thread-safety: not thread-safe; called by the lifecycle's setup and
 * finalize, and by sp_mpi_notice_init on the thread that initialised MPI.
 */
#ifndef SPI_JOB_MPI_EXIT_H
#define SPI_JOB_MPI_EXIT_H

#include "util/error.h"

/* Remember `on_mpi_finalize` for a session that has not joined MPI yet; no
 * MPI call. NULL forgets it. */
void spi_job_exit_expect(void (*on_mpi_finalize)(void));

/* Install the hook now (MPI initialised, not finalized) running
 * `on_mpi_finalize`; a hook armed earlier is kept and runs it. SP_OK or
 * SP_ERR_MPI (err names the MPI error). */
int spi_job_exit_install(void (*on_mpi_finalize)(void), spi_error *err);

/* If a finalize is expected (spi_job_exit_expect) and MPI is initialised,
 * not finalized, and this is MPI's main thread: install the hook. Returns
 * 1 when the hook is in place (or nothing is expected any more), 0 when it
 * should be asked again later (MPI not initialised yet, another thread),
 * -1 when MPI refused (err filled). */
int spi_job_exit_arm(spi_error *err);

/* Remove the hook (outside MPI_Finalize: delete the attribute, whose
 * callback then does nothing; inside: MPI is deleting it already) and
 * forget the finalize. Safe when nothing was installed. */
void spi_job_exit_remove(void);

#endif /* SPI_JOB_MPI_EXIT_H */
