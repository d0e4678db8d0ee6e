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
 *      same chunking and deflate as the streaming writer) from the plan,
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

/* Write `local`'s rows (read through spi_profile_row_calls, in order) as
 * this rank's part of `path`. Collective over comm. Returns SP_OK on every
 * rank, or the same error status on every rank: SP_ERR_OUTPUT (the file
 * system refused, or the path cannot be replaced), SP_ERR_HDF5, SP_ERR_MPI,
 * SP_ERR_OUT_OF_MEMORY, SP_ERR_CORRUPT (a rank's calls could not be read
 * back); err names the file (on the other ranks: which rank failed). */
int spi_h5_parallel_write(MPI_Comm comm, const char *path, const spi_parallel_plan *plan,
                          const spi_profile *local, const spi_parallel_root *root,
                          spi_error *err);

#endif /* SPI_H5_PARALLEL_WRITER_H */
