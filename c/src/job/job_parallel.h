/*
 * job_parallel.h - the MPI job's second way of writing its file: every rank
 * writes its own part through parallel HDF5 (format/h5_parallel_writer.h)
 * instead of sending its calls to rank 0 (the funnel, job_mpi.c). Chosen by
 * the build: job_parallel.c when HDF5 has MPI-IO
 * (SCOPE_PROFILER_PARALLEL_HDF5), job_parallel_none.c otherwise. MPI builds
 * only; both functions are collective over the job's communicator.
 *
 * Also here: the pieces of job_mpi.c that job_parallel.c shares (the
 * gathered thread record, the region-name union, the counter gather), so
 * the two paths gather exactly the same things the same way.
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

/* ---- shared with job_mpi.c ------------------------------------------------- */

/* One thread-table row as gathered (fixed size, name truncated to 63). */
typedef struct spi_wire_thread {
    uint32_t rank;
    int8_t daemon;
    int8_t reserved[3];
    int64_t index;
    int64_t ident;
    int64_t native_id;
    int64_t start_ns;
    int64_t end_ns;
    int64_t cpu_ns;
    char name[64];
} spi_wire_thread;

/* The union of the ranks' region names, first seen first. */
typedef struct spi_name_union {
    char **names;             /* borrowed from the gathered buffer */
    size_t count;
    size_t *slots;            /* open addressing: index + 1, 0 = empty */
    size_t capacity;
} spi_name_union;

/* Index of `name` in the union, adding it if new. */
long spi_name_union_add(spi_name_union *u, char *name);
/* The profile's region names, NUL-terminated one after the other. */
char *spi_job_pack_names(const spi_profile *local, uint64_t *bytes);
/* The profile's thread table as wire records of this rank. */
spi_wire_thread *spi_job_pack_threads(const spi_profile *local);
/* The thread row a wire record stands for (the name stays in the record). */
spi_thread_row spi_wire_thread_row(const spi_wire_thread *t);
/* Every rank's counter records into `into` on rank 0 (collective). */
int spi_job_gather_counters(const spi_profile *local, spi_profile *into, int status,
                            spi_error *err);

#endif /* SPI_JOB_PARALLEL_H */
