/*
 * job_serial.c - the job back end of a build without MPI: one process,
 * rank 0 of 1, written straight through the writer.
 */
#include "job/job.h"

#include "format/h5_writer.h"
#include "util/alloc.h"

int spi_job_start(const void *mpi_comm, void (*on_mpi_finalize)(void), spi_error *err) {
    (void)on_mpi_finalize;
    if (mpi_comm)
        return spi_error_set(err, SP_ERR_UNSUPPORTED,
                             "this libscopeprofiler was built without MPI");
    return SP_OK;
}

int spi_job_join_late(const char **why_alone, spi_error *err) {
    (void)err;
    *why_alone = "this libscopeprofiler was built without MPI";
    return SP_OK;
}

int spi_job_agree(int status, spi_error *err) {
    (void)err;
    return status;
}

uint32_t spi_job_rank(void) { return 0; }
uint32_t spi_job_size(void) { return 1; }
int64_t spi_job_node_count(void) { return 1; }

int spi_job_write(const spi_profile *local, const char *path, spi_job_totals *totals,
                  spi_error *err) {
    *totals = (spi_job_totals){.ranks = 1, .rows = local->row_count,
                               .events = spi_profile_call_count(local),
                               .regions = local->name_count};
    return spi_profile_write(local, path, err);
}

int spi_job_gather_reports(const spi_rank_report *mine, spi_rank_report **all, spi_error *err) {
    *all = spi_malloc(sizeof **all);
    if (!*all) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    **all = *mine;
    return SP_OK;
}

int spi_job_gather_paths(const spi_call_path *mine, size_t count, const spi_profile *local,
                         int status, spi_path_pool *pool, spi_error *err) {
    /* one process: the table is printed from its own paths (no pool) */
    (void)mine;
    (void)count;
    (void)local;
    (void)pool;
    (void)err;
    return status;
}

void spi_job_stop(void) {}
