/*
 * job.h - the job this process belongs to: alone, or one rank of an MPI
 * communicator. Two back ends implement it, chosen by the build:
 * job/job_serial.c (no MPI) and job/job_mpi.c (MPI; also correct when the
 * program never initialises MPI, which makes it the serial case).
 *
 * With MPI, spi_job_start and spi_job_write are collective over the
 * communicator: every rank must call them.
 */
#ifndef SPI_JOB_H
#define SPI_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"

typedef struct spi_job_totals {
    uint32_t ranks;           /* ranks in the job */
    uint64_t rows;            /* (rank, region) rows written */
    uint64_t events;          /* calls over all ranks (also in aggregate mode) */
    size_t regions;           /* names in the job's region table */
} spi_job_totals;

/* Join the job. `mpi_comm` points to an MPI_Comm to use, or is NULL for
 * MPI_COMM_WORLD when MPI is initialised (else the process is alone).
 * `on_mpi_finalize` is called once from inside MPI_Finalize if the program
 * finalizes MPI before the profiler, so the profile is still written while
 * MPI works. Returns SP_OK, SP_ERR_MPI or SP_ERR_UNSUPPORTED (a
 * communicator given to a build without MPI). */
int spi_job_start(const void *mpi_comm, void (*on_mpi_finalize)(void), spi_error *err);

uint32_t spi_job_rank(void);
uint32_t spi_job_size(void);
/* Distinct host names over the job (1 when alone). */
int64_t spi_job_node_count(void);

/* Write the job's profile: `local` is this rank's (region ids index its own
 * names). Rank 0 writes one file for all ranks through the streaming
 * writer; other ranks send their rows in bounded chunks. Every rank gets the
 * same status. `totals` is filled on rank 0. */
int spi_job_write(const spi_profile *local, const char *path, spi_job_totals *totals,
                  spi_error *err);

/* Leave the job (releases the duplicated communicator and the finalize
 * hook). Safe to call when not started. */
void spi_job_stop(void);

#endif /* SPI_JOB_H */
