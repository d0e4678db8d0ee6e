/*
 * job_parallel.h - the MPI job's second way of writing its file: every rank
 * writes its own part through parallel HDF5 (format/h5_parallel_writer.h)
 * instead of sending its calls to rank 0 (the funnel, job_mpi.c). Chosen by
 * the build: job_parallel.c when HDF5 has MPI-IO
 * (SCOPE_PROFILER_PARALLEL_HDF5), job_parallel_none.c otherwise. MPI builds
 * only; both functions are collective over the job's communicator.
 *
 * What both ways gather (thread records, the region-name union, counters)
 * is in job_exchange.h, below both.
 */
#ifndef SPI_JOB_PARALLEL_H
#define SPI_JOB_PARALLEL_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "job/job.h"
#include "profile/profile.h"
#include "util/error.h"

/* Whether this job writes `path` through parallel HDF5: the build has it,
 * rank 0's SCOPE_PROFILER_MPI_WRITER is not "funnel", no rank recorded in
 * aggregate mode (its rows are per-region totals: the funnel carries them
 * cheaply), and every rank sees the file rank 0 creates beside `path` (a
 * shared file system; else the funnel, which needs none). Collective;
 * every rank gets the same answer. */
bool spi_job_parallel_chosen(MPI_Comm comm, const spi_profile *local, const char *path);

/* spi_job_write through parallel HDF5 (same contract as spi_job_write). */
int spi_job_parallel_write(MPI_Comm comm, const spi_profile *local, const char *path,
                           spi_job_totals *totals, spi_error *err);

#endif /* SPI_JOB_PARALLEL_H */
