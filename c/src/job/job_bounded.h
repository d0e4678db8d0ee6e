/*
 * job_bounded.h - every message of an MPI job's finalize held to a
 * deadline (job_bounded.c). MPI builds only.
 *
 * A rank that dies or stops inside sp_finalize must not leave the others
 * blocked in a receive or a collective forever (issue 29). So finalize
 * never calls a blocking MPI operation: it starts the nonblocking one
 * (PMPI_Irecv, PMPI_Igather, ...) and polls it with PMPI_Test until it
 * completes or SCOPE_PROFILER_MPI_TIMEOUT seconds passed. On expiry the
 * wait names the phase and the ranks that did not answer, and the caller
 * gives up without further collectives on the job's communicator.
 *
 * The library calls PMPI_ entry points only, so the profiler's own MPI
 * wrappers (libscopeprofiler_pmpi) never see - and never record - the
 * profiler's traffic.
 *
 * Not thread-safe: one finalize at a time (as sp_finalize itself).
 */
#ifndef SPI_JOB_BOUNDED_H
#define SPI_JOB_BOUNDED_H

#include <mpi.h>
#include <stdbool.h>

#include "util/error.h"

/* The peer of a request in spi_job_wait: a rank, or SPI_JOB_COLLECTIVE for
 * a collective (whose missing ranks MPI does not tell). */
#define SPI_JOB_COLLECTIVE (-1)
/* A collective whose completion on this rank waits for rank `root` (a
 * broadcast from it): named as that rank, never cancelled. */
#define SPI_JOB_FROM_ROOT(root) (-2 - (root))

/* SCOPE_PROFILER_MPI_TIMEOUT in seconds (600 by default). A value that is
 * not a positive number ("abc", "0", "5s") is refused with one diagnostic
 * naming the variable, and the default is used. */
double spi_job_wait_seconds(void);

/* Wait for requests[0..count) (MPI_REQUEST_NULL entries are done) to
 * complete, polling until the deadline (spi_job_wait_seconds() from now).
 * peers[i] is the rank request i talks to, or SPI_JOB_COLLECTIVE; `phase`
 * says what is being exchanged ("gathering counts") and `where` what
 * becomes of the data when the wait gives up ("nothing was written;
 * out.h5 keeps its previous content"). Returns SP_OK, or SP_ERR_MPI with
 * err naming the phase, the timeout and the ranks that did not answer (or
 * the MPI error). After a timeout the requests still pending are left to
 * MPI (point-to-point ones cancelled): their buffers must outlive them, so
 * the caller hands them to spi_job_park instead of freeing them. */
int spi_job_wait(MPI_Request *requests, const int *peers, int count, const char *phase,
                 const char *where, spi_error *err);

/* Whether a wait of this job gave up (timeout or MPI error) since the last
 * spi_job_bounded_reset: then no further collective may be started on the
 * communicator, whichever file's wait it was. */
bool spi_job_gave_up(void);
void spi_job_bounded_reset(void);

/* Keep `buffer` (spi_malloc'd) alive for the rest of the process: a
 * request that timed out may still write into it. Bounded: one timed-out
 * phase's buffers per finalize (a job gives up once); past a fixed number
 * the buffers are simply never freed. NULL is ignored. */
void spi_job_park(void *buffer);

/* Fault injection (builds with SCOPE_PROFILER_FAULT_INJECTION, for the
 * tests): SCOPE_PROFILER_TEST_STALL="RANK:PHASE:ACTION" makes job rank RANK
 * sleep forever (ACTION "sleep") or end at once (ACTION "exit": _exit(9))
 * when it reaches the point named PHASE ("counts", "rows", "paths"; in
 * the parallel-HDF5 writer "parallel-open", "parallel-layout",
 * "parallel-events", "parallel-close"). Nothing in other builds. */
void spi_job_fault_point(int rank, const char *phase);
/* Whether SCOPE_PROFILER_TEST_STALL="RANK:PHASE:fail" names this rank and
 * point: the caller then behaves as if its allocations there failed.
 * Always false in other builds. */
bool spi_job_fault_fails(int rank, const char *phase);

#endif /* SPI_JOB_BOUNDED_H */
