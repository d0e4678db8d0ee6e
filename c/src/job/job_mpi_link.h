/*
 * job_mpi_link.h - what the MPI job back end (job_mpi.c) lends the
 * summary's path gather (job_mpi_paths.c): whether the job can still talk,
 * and its operations held to the deadline, so both files speak on the one
 * duplicated communicator with the same timeout and give-up rules
 * (job_bounded.h). MPI builds only. Not thread-safe: one finalize at a
 * time (as sp_finalize itself).
 */
#ifndef SPI_JOB_MPI_LINK_H
#define SPI_JOB_MPI_LINK_H

#include <mpi.h>
#include <stdbool.h>

#include "util/error.h"

/* Whether this process is one rank of a joined job whose waits never gave
 * up: only then may it exchange messages. */
bool spi_job_mpi_talking(void);

/* What a wait that gives up from now on says about the data ("the file is
 * written; only the summary is incomplete"); copied. */
void spi_job_mpi_set_where(const char *text);

/* Rank 0's *value to every rank (collective), a send and a receive on the
 * job's communicator: each held to SCOPE_PROFILER_MPI_TIMEOUT, `phase`
 * naming the step in the error. A wait that gives up breaks the job (every
 * later operation returns SP_ERR_MPI at once). SP_OK or SP_ERR_MPI. */
int spi_job_mpi_bcast_int(int *value, const char *phase, spi_error *err);
int spi_job_mpi_send(const void *buffer, int count, MPI_Datatype type, int to, int tag,
                     const char *phase, spi_error *err);
int spi_job_mpi_recv(void *buffer, int count, MPI_Datatype type, int from, int tag,
                     const char *phase, spi_error *err);

/* Free a buffer an operation used, or keep it for MPI when a wait gave up
 * (a pending operation may still touch it). NULL is ignored. */
void spi_job_mpi_release(void *buffer);

#endif /* SPI_JOB_MPI_LINK_H */
