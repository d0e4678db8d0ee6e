/*
 * job.h - the job this process belongs to: alone, or one rank of an MPI
 * communicator. Two back ends implement it, chosen by the build:
 * job/job_serial.c (no MPI) and job/job_mpi.c (MPI; also correct when the
 * program never initialises MPI, which makes it the serial case), with
 * job/job_mpi_paths.c for the summary's paths.
 *
 * With MPI, spi_job_start and spi_job_write are collective over the
 * communicator: every rank must call them.
 */
#ifndef SPI_JOB_H
#define SPI_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/path_pool.h"
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

/* Join the job at finalize when the session began before MPI_Init
 * (spi_job_start then found no MPI): if MPI is initialised and not yet
 * finalized now, the job becomes MPI_COMM_WORLD. Collective then over
 * MPI_COMM_WORLD (every rank calls sp_finalize). Otherwise nothing
 * changes. *why_alone receives why the process stays alone when it does
 * ("MPI was finalized before sp_finalize", ...). SP_OK or SP_ERR_MPI. */
int spi_job_join_late(const char **why_alone, spi_error *err);

/* Setup's verdict for the whole job, so that every rank starts a session
 * or none does: each rank passes its own status and every rank gets rank
 * 0's when it failed (rank 0 checks the output path: it writes the file),
 * else any other rank's failure, else SP_OK. Collective over the job's
 * communicator (every rank of a joined job calls it once after
 * spi_job_start), bounded like joining by SCOPE_PROFILER_MPI_TIMEOUT: a
 * rank that does not come within it gives SP_ERR_MPI with err filled, never
 * a hang. A process alone gets its own status. */
int spi_job_agree(int status, spi_error *err);

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

/* What one rank's finalize has to tell: rank 0's report speaks for the
 * whole job. */
typedef struct spi_rank_report {
    uint64_t calls;
    uint64_t open_calls;      /* still open at finalize, dropped */
    uint64_t dropped_events;  /* lost to the buffer limit or memory */
    uint64_t bad_ends;        /* ends without a matching begin */
    uint64_t flushed_bytes;   /* bounded trace: written to the spill file */
    uint64_t flushes;
    char open_regions[80];    /* the first open regions' names */
} spi_rank_report;

/* Gather every rank's report to rank 0 (collective with MPI: every rank
 * calls it). *all receives spi_job_size() entries on rank 0 (spi_free),
 * NULL elsewhere. SP_OK, SP_ERR_MPI or SP_ERR_OUT_OF_MEMORY. */
int spi_job_gather_reports(const spi_rank_report *mine, spi_rank_report **all, spi_error *err);

/* Every rank's summary call paths folded on rank 0 into `pool` (the
 * end-of-run summary of a multi-rank trace; run_paths.h, path_pool.h).
 * `mine` are this rank's paths, their region indexing local->names.
 * `pool` is initialised by the caller (spi_path_pool_init), or NULL on
 * rank 0 when it prints no table from paths (summary off, aggregate mode):
 * then one broadcast tells the others and nothing is sent. On rank 0 it
 * receives every rank's paths pooled by their names, in rank order, and
 * grows with the distinct paths only: rank 0 takes the ranks one at a
 * time and keeps none of them. Other ranks, and a process alone (its
 * table comes from its own paths), leave it empty. Collective
 * with MPI: every rank calls it, whatever its status (`status` is
 * returned unless a new error comes). SP_OK, SP_ERR_MPI,
 * SP_ERR_UNSUPPORTED (a rank's paths over 2 GiB), SP_ERR_CORRUPT (a
 * rank's paths arrived damaged) or SP_ERR_OUT_OF_MEMORY (the pool is then
 * incomplete: free it and print without it). Not thread-safe. */
int spi_job_gather_paths(const spi_call_path *mine, size_t count, const spi_profile *local,
                         int status, spi_path_pool *pool, spi_error *err);

/* Leave the job (releases the duplicated communicator and the finalize
 * hook). Safe to call when not started. */
void spi_job_stop(void);

#endif /* SPI_JOB_H */
