/*
 * h5_parallel_writer.h - the collective writer: every rank of an MPI job
 * writes its own part of ONE schema-3 file through parallel HDF5 (MPI-IO).
 * Compiled only when the HDF5 found has H5_HAVE_PARALLEL (CMake option
 * SCOPE_PROFILER_PARALLEL_HDF5); the streaming writer (h5_writer.h) and the
 * job's rank-0 funnel stay the path of a serial HDF5.
 *
 * One collective call, spi_h5_parallel_write, on every rank of `comm`:
 *   1. rank 0 creates the temporary sibling and tells every rank its name;
 *   2. every rank opens it with the MPI-IO driver and creates the layout
 *      (event columns and numeric index columns at their final sizes, the
 *      same chunking and filters as the streaming writer: shuffle, then
 *      deflate, which HDF5 runs here with zlib at level 1: 1.1-1.5x the
 *      bytes of the streaming writer's libdeflate, see the .c) from the plan,
 *      which holds identical totals on every rank;
 *   3. every rank writes its own hyperslab of each event column, slice by
 *      slice, with collective transfers (HDF5 needs collective I/O to
 *      write filtered datasets in parallel); slices end on the chunk grid,
 *      their number is the largest rank's, and a rank that has run out of
 *      calls takes part with an empty selection, so every rank makes the
 *      same sequence of calls whatever its size;
 *   4. every rank writes its rows' slice of the numeric index columns;
 *   5. the file is closed collectively and the ranks agree on a status
 *      (the first failing rank's); only when every rank succeeded does
 *      rank 0 reopen the file alone and add the small parts (root
 *      attributes, metadata, region table, thread table, the index's text
 *      columns, counter groups: HDF5 1.10 cannot write variable-length data
 *      in parallel), then publish by rename. Otherwise the temporary is
 *      removed and the previous file at the path stays.
 * Every rank returns the same status. A rank that fails locally (a call
 * that cannot be read back from its spill file) writes zeros, keeps taking
 * part in every collective call, and its failure is the job's.
 * Not thread-safe: one call at a time per process.
 */
#ifndef SPI_H5_PARALLEL_WRITER_H
#define SPI_H5_PARALLEL_WRITER_H

#include <mpi.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/profile.h"

/* What every rank must know: the totals are identical on every rank, the
 * rest is this rank's. */
typedef struct spi_parallel_plan {
    uint64_t row_count;        /* rows over all ranks */
    uint64_t event_count;      /* calls over all ranks */
    unsigned event_columns;    /* SPI_EV_BIT set, the union over the ranks */
    uint64_t first_row;        /* this rank's first row in the file */
    uint64_t first_event;      /* this rank's first call in the file */
    uint32_t rank;             /* this rank, written in the index */
    const uint32_t *region_map;/* this rank's region id -> the job's */
} spi_parallel_plan;

/* The small parts rank 0 writes alone; ignored on other ranks. */
typedef struct spi_parallel_root {
    const spi_meta *metadata;
    const char *const *names;  /* the job's region table */
    size_t name_count;
    const spi_thread_row *threads;
    size_t thread_count;
    const spi_profile *counters; /* perf/LIKWID records of every rank, or NULL */
} spi_parallel_root;

/* How the writer holds its own exchanges to the job's deadline (issue 29:
 * a rank that died or stopped must not leave the others blocked in a
 * collective HDF5 call forever). The caller (job/job_parallel.c) supplies
 * the policy, so this module knows nothing of the job's timeout. Before
 * each collective HDF5 phase (create, layout, every round of event writes,
 * close) the ranks make a nonblocking agreement and wait for it through
 * `wait`: a peer that is gone is then noticed there, with the caller's
 * timeout message, instead of inside HDF5 where nothing can time out. A
 * rank that dies INSIDE a collective HDF5 call still holds the others
 * there (HDF5 and MPI-IO offer no deadline). */
typedef struct spi_parallel_bounds {
    /* Poll *request, a nonblocking collective this rank (`me`) started on
     * the writer's communicator, until it completes or the deadline
     * passes. `root` is the rank a broadcast comes from, or -1 for an
     * exchange among all ranks. Returns SP_OK, or an error status with err
     * naming `phase`, the timeout and the ranks missing; after a failure
     * the writer starts no further collective operation and leaves the
     * request and its (static) buffers to MPI. Required. */
    int (*wait)(MPI_Request *request, int me, int root, const char *phase, spi_error *err);
    /* Called on every rank on entering each collective phase, with its
     * name ("parallel-open", "parallel-layout", "parallel-events",
     * "parallel-close"): fault injection in test builds. May be NULL. */
    void (*checkpoint)(int rank, const char *phase);
} spi_parallel_bounds;

/* Write `local`'s rows (read through spi_profile_row_calls, in order) as
 * this rank's part of `path`. Collective over comm; every exchange between
 * ranks outside HDF5 waits through bounds->wait. Returns SP_OK on every
 * rank, or the same error status on every rank: SP_ERR_OUTPUT (the file
 * system refused, or the path cannot be replaced), SP_ERR_HDF5, SP_ERR_MPI,
 * SP_ERR_OUT_OF_MEMORY, SP_ERR_CORRUPT (a rank's calls could not be read
 * back); err names the file (on the other ranks: which rank failed). After
 * a wait gave up (SP_ERR_MPI, the ranks still alive each say so), nothing
 * was published, rank 0 removed the temporary, and the MPI-IO file may
 * stay open in this process: closing it is collective and would hang on
 * the missing rank. */
int spi_h5_parallel_write(MPI_Comm comm, const char *path, const spi_parallel_plan *plan,
                          const spi_profile *local, const spi_parallel_root *root,
                          const spi_parallel_bounds *bounds, spi_error *err);

#endif /* SPI_H5_PARALLEL_WRITER_H */
