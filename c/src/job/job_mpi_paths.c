/*
 * job_mpi_paths.c - the end-of-run summary's call paths of an MPI job,
 * folded on rank 0 as they arrive (job.h: spi_job_gather_paths).
 *
 * Rank 0 used to Gatherv every rank's paths and names and keep them all
 * until the table was printed: ~96 B x ranks x threads x paths, the part
 * of rank 0's memory that grew with the job. Now rank 0 folds its own
 * paths into a pool of distinct paths by name (profile/path_pool.h), then
 * takes the other ranks ONE AT A TIME, in rank order, folding each into
 * the pool and freeing it before the next:
 *
 *   rank 0 -> r   "go" (1: send, 0: rank 0 takes nothing more)
 *   r -> rank 0   its status and the bytes of its paths and names
 *   rank 0 -> r   "take" (1 when rank 0 could make room for them)
 *   r -> rank 0   the paths, then the names (spi_job_paths_pack)
 *
 * Nothing is sent before rank 0 asks, so no rank's data waits unexpected
 * in rank 0's MPI buffers either: rank 0 holds one rank's paths plus the
 * pool, whatever the number of ranks.
 *
 * Why rank by rank and not a binomial tree (each rank merging its
 * children's pools, which would take the work off rank 0): the messages
 * are small (a rank's paths are a few KiB to a few MiB), rank 0 already
 * takes every rank in turn for the write just before (job_mpi.c, step
 * 4), and in a tree every inner rank would need a pool and a rank that
 * stops would take its whole subtree with it, where here the timeout
 * names exactly the rank that did not answer. The cost is one more pair of
 * round trips per rank on rank 0 (about 10^4 x 4 latencies: well under a
 * second at 10^4 ranks).
 *
 * Every step is held to SCOPE_PROFILER_MPI_TIMEOUT (job_mpi_link.h); a
 * rank waiting for its "go" waits while rank 0 takes the ranks before it,
 * as in the write. A failure on one rank never stops the protocol: a rank
 * that could not fold its calls sends nothing and is left out of the
 * pool (its regions still get flat rows), and after a failure on rank 0
 * the remaining ranks are told "go 0" so nobody waits out the timeout.
 */
#include "job/job.h"

#include <mpi.h>
#include <stdint.h>

#include "util/alloc.h"
#include "job/job_bounded.h"
#include "job/job_mpi_link.h"
#include "job/job_paths.h"

enum { TAG_PATHS_GO = 7111, TAG_PATHS_SIZES = 7112, TAG_PATHS_TAKE = 7113,
       TAG_PATHS = 7114, TAG_PATH_NAMES = 7115 };

/* What a rank says before its data: its status, then the bytes. */
enum { SIZE_STATUS, SIZE_PATHS, SIZE_NAMES, SIZE_FIELDS };

/* Rank 0: receive rank r's paths and names (sizes already checked) and
 * fold them into the pool. */
static int take_rank(spi_path_pool *pool, int r, const int64_t *sizes, spi_error *err) {
    /* the buffers exist whatever happens: a "take" promised the receive */
    static const int yes = 1, no = 0;
    spi_call_path *paths = spi_malloc((size_t)sizes[SIZE_PATHS] + 1);
    char *names = spi_malloc((size_t)sizes[SIZE_NAMES] + 1);
    int status = paths && names ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    int got = spi_job_mpi_send(status == SP_OK ? &yes : &no, 1, MPI_INT, r, TAG_PATHS_TAKE,
                               "telling a rank to send its summary paths", err);
    if (got == SP_OK && status == SP_OK)
        got = spi_job_mpi_recv(paths, (int)sizes[SIZE_PATHS], MPI_BYTE, r, TAG_PATHS,
                               "receiving a rank's summary paths", err);
    if (got == SP_OK && status == SP_OK)
        got = spi_job_mpi_recv(names, (int)sizes[SIZE_NAMES], MPI_BYTE, r, TAG_PATH_NAMES,
                               "receiving a rank's summary path names", err);
    if (got != SP_OK) status = got;
    if (status == SP_OK)
        status = spi_job_paths_pool_add(pool, (uint32_t)r, paths,
                                        (size_t)sizes[SIZE_PATHS] / sizeof *paths, names,
                                        (uint64_t)sizes[SIZE_NAMES], err);
    else if (status == SP_ERR_OUT_OF_MEMORY)
        spi_error_set(err, status, "rank 0 ran out of memory gathering the other ranks' call paths");
    spi_job_mpi_release(paths);
    spi_job_mpi_release(names);
    return status;
}

/* Rank 0: every other rank in turn. Returns the first failure; after it
 * the remaining ranks are told to send nothing. */
static int receive_ranks(spi_path_pool *pool, spi_error *err) {
    int status = SP_OK;
    int size = (int)spi_job_size();
    for (int r = 1; r < size; r++) {
        /* static: a send left pending by a timeout may still read them */
        static int go;
        static int64_t sizes[SIZE_FIELDS];
        go = status == SP_OK;
        int got = spi_job_mpi_send(&go, 1, MPI_INT, r, TAG_PATHS_GO,
                                   "asking a rank for its summary paths", err);
        if (got == SP_OK && go)
            got = spi_job_mpi_recv(sizes, SIZE_FIELDS, MPI_INT64_T, r, TAG_PATHS_SIZES,
                                   "receiving the size of a rank's summary paths", err);
        if (got != SP_OK) return status == SP_OK ? got : status; /* the job is broken */
        if (!go || sizes[SIZE_STATUS] != SP_OK) continue;        /* nothing follows */
        if (sizes[SIZE_PATHS] < 0 || sizes[SIZE_NAMES] < 0 || sizes[SIZE_PATHS] > INT32_MAX ||
            sizes[SIZE_NAMES] > INT32_MAX || sizes[SIZE_PATHS] % (int64_t)sizeof(spi_call_path)) {
            /* the rank waits for a "take": tell it no, and stop taking */
            static const int no = 0;
            got = spi_job_mpi_send(&no, 1, MPI_INT, r, TAG_PATHS_TAKE,
                                   "telling a rank to send its summary paths", err);
            status = got != SP_OK ? got
                                  : spi_error_set(err, SP_ERR_CORRUPT,
                                                  "rank %d announced summary paths of an "
                                                  "impossible size", r);
            if (got != SP_OK) return status;
            continue;
        }
        status = take_rank(pool, r, sizes, err);
        if (status == SP_ERR_MPI) return status;
    }
    return status;
}

/* Ranks > 0: wait to be asked, then say how much and send it when rank 0
 * takes it. */
static int send_mine(int status, const spi_call_path *packed, uint64_t path_bytes,
                     const char *names, uint64_t name_bytes, spi_error *err) {
    static int go, take; /* static: a receive left pending may still write them */
    static int64_t sizes[SIZE_FIELDS];
    go = take = 0;
    int got = spi_job_mpi_recv(&go, 1, MPI_INT, 0, TAG_PATHS_GO,
                               "waiting for rank 0 to take this rank's summary paths", err);
    if (got != SP_OK) return got;
    if (!go) return status;
    sizes[SIZE_STATUS] = status;
    sizes[SIZE_PATHS] = status == SP_OK ? (int64_t)path_bytes : 0;
    sizes[SIZE_NAMES] = status == SP_OK ? (int64_t)name_bytes : 0;
    got = spi_job_mpi_send(sizes, SIZE_FIELDS, MPI_INT64_T, 0, TAG_PATHS_SIZES,
                           "sending the size of this rank's summary paths", err);
    if (got == SP_OK && status == SP_OK)
        got = spi_job_mpi_recv(&take, 1, MPI_INT, 0, TAG_PATHS_TAKE,
                               "waiting for rank 0 to take this rank's summary paths", err);
    if (got == SP_OK && status == SP_OK && take)
        got = spi_job_mpi_send(packed, (int)path_bytes, MPI_BYTE, 0, TAG_PATHS,
                               "sending this rank's summary paths", err);
    if (got == SP_OK && status == SP_OK && take)
        got = spi_job_mpi_send(names, (int)name_bytes, MPI_BYTE, 0, TAG_PATH_NAMES,
                               "sending this rank's summary path names", err);
    return got != SP_OK ? got : status;
}

int spi_job_gather_paths(const spi_call_path *mine, size_t count, const spi_profile *local,
                         int status, spi_path_pool *pool, spi_error *err) {
    int rank = (int)spi_job_rank();
    if (!spi_job_mpi_talking()) {
        /* Alone: the table is printed from this process's own paths, no
         * pool needed. A job that broke: rank 0's own paths are all it has. */
        if (rank == 0 && pool && status == SP_OK && spi_job_size() > 1)
            return spi_job_paths_pool_own(mine, count, local, pool, err);
        return status;
    }
    spi_job_mpi_set_where("the profile's file is written; only the end-of-run summary is "
                          "incomplete");
    spi_call_path *packed = NULL;
    char *names = NULL;
    uint64_t name_bytes = 0, path_bytes = (uint64_t)count * sizeof *packed;
    /* Rank 0 folds its own paths first; whether it can take the others is
     * what it tells them (a fault point may pretend it cannot). */
    int root_ready = 1;
    bool root_out_of_memory = false;
    if (rank == 0 && !pool) {
        root_ready = 0; /* no table from paths on rank 0: nobody sends */
    } else if (rank == 0) {
        root_out_of_memory = spi_job_fault_fails(rank, "paths");
        if (status == SP_OK && !root_out_of_memory) {
            status = spi_job_paths_pool_own(mine, count, local, pool, err);
            root_out_of_memory = status == SP_ERR_OUT_OF_MEMORY;
        }
        root_ready = status == SP_OK && !root_out_of_memory;
    }
    spi_job_fault_point(rank, "paths");
    int got = spi_job_mpi_bcast_int(&root_ready, "agreeing on the summary's paths", err);
    if (got == SP_OK && root_ready && rank == 0) {
        status = receive_ranks(pool, err);
    } else if (got == SP_OK && root_ready) {
        if (status == SP_OK)
            status = spi_job_paths_pack(mine, count, local, &packed, &names, &name_bytes);
        if (status == SP_OK && (path_bytes > INT32_MAX || name_bytes > INT32_MAX))
            status = SP_ERR_UNSUPPORTED;
        status = send_mine(status, packed, path_bytes, names, name_bytes, err);
    } else if (got != SP_OK && status == SP_OK) {
        status = got;
    } else if (rank == 0 && root_out_of_memory) {
        status = spi_error_set(err, SP_ERR_OUT_OF_MEMORY,
                               "rank 0 ran out of memory gathering the other ranks' call paths");
    }
    spi_job_mpi_release(packed);
    spi_job_mpi_release(names);
    return status;
}
