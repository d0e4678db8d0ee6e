/*
 * job_exchange.c - what the funnel and the collective writer gather alike
 * (job_exchange.h): region names packed and united, thread records, the
 * counter blobs. Each function is given the communicator (or rank) it
 * works on, so it holds no state of either writer.
 */
#include "job/job_exchange.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "job/job_bounded.h"
#include "counters/counters.h"
#include "record/registry.h"

int spi_job_mpi_fail(spi_error *err, int code, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", code);
    return spi_error_set(err, SP_ERR_MPI, "MPI error while %s: %s", what, text);
}

/* Index of `name` in the union, adding it if new (-1 on OOM). */
long spi_name_union_add(spi_name_union *u, char *name) {
    size_t len = strlen(name), mask = u->capacity - 1;
    size_t i = spi_name_hash(name, len) & mask;
    for (; u->slots[i]; i = (i + 1) & mask)
        if (strcmp(u->names[u->slots[i] - 1], name) == 0) return (long)(u->slots[i] - 1);
    u->names[u->count] = name;
    u->slots[i] = ++u->count;
    return (long)(u->count - 1);
}

char *spi_job_pack_names(const spi_profile *local, uint64_t *bytes) {
    *bytes = 0;
    for (size_t i = 0; i < local->name_count; i++) *bytes += strlen(local->names[i]) + 1;
    char *packed = spi_malloc(*bytes ? *bytes : 1);
    if (!packed) return NULL;
    char *cursor = packed;
    for (size_t i = 0; i < local->name_count; i++) {
        size_t len = strlen(local->names[i]) + 1;
        memcpy(cursor, local->names[i], len);
        cursor += len;
    }
    return packed;
}

spi_wire_thread *spi_job_pack_threads(const spi_profile *local, uint32_t rank) {
    spi_wire_thread *threads = spi_calloc(local->thread_count ? local->thread_count : 1, sizeof *threads);
    if (!threads) return NULL;
    for (size_t i = 0; i < local->thread_count; i++) {
        const spi_thread_row *t = &local->threads[i];
        threads[i] = (spi_wire_thread){.rank = rank, .daemon = t->daemon,
                                   .index = t->index, .ident = t->ident,
                                   .native_id = t->native_id, .start_ns = t->start_ns,
                                   .end_ns = t->end_ns, .cpu_ns = t->cpu_ns};
        snprintf(threads[i].name, sizeof threads[i].name, "%s", t->name ? t->name : "");
    }
    return threads;
}

spi_thread_row spi_wire_thread_row(const spi_wire_thread *t) {
    return (spi_thread_row){t->rank, t->index, t->ident, t->native_id, t->daemon,
                            t->start_ns, t->end_ns, t->cpu_ns, (char *)t->name};
}

/* Counter results (perf totals, LIKWID regions: a few KiB per rank) go to
 * rank 0 as one packed blob per rank (counters/records.c) and land in
 * `into`, which rank 0 writes before publish. Collective; every rank calls
 * it whatever its status. */
int spi_job_gather_counters(MPI_Comm comm, const spi_profile *local, spi_profile *into,
                            int status, spi_error *err) {
    int job_rank = 0, job_size = 1;
    PMPI_Comm_rank(comm, &job_rank);
    PMPI_Comm_size(comm, &job_size);
    unsigned char *mine = NULL, *all = NULL;
    size_t mine_len = 0;
    if (spi_counters_pack(local, &mine, &mine_len) != SP_OK && status == SP_OK)
        status = SP_ERR_OUT_OF_MEMORY;
    int len = mine_len > (size_t)INT32_MAX ? 0 : (int)mine_len;
    int *lens = job_rank == 0 ? spi_calloc((size_t)job_size, sizeof *lens) : NULL;
    int *displs = job_rank == 0 ? spi_calloc((size_t)job_size, sizeof *displs) : NULL;
    if (job_rank == 0 && (!lens || !displs) && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
    /* nonblocking and held to the deadline, like every wait of finalize */
    int peer = job_rank == 0 ? SPI_JOB_COLLECTIVE : SPI_JOB_FROM_ROOT(0);
    const char *where = "nothing was written";
    MPI_Request request;
    int rc = PMPI_Igather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm, &request);
    int got = rc == MPI_SUCCESS ? spi_job_wait(&request, &peer, 1, "gathering counter sizes", where, err)
                                : spi_job_mpi_fail(err, rc, "gathering counter sizes");
    if (got != SP_OK) {
        /* gave up: no further collective; MPI may still write these */
        spi_job_park(lens);
        spi_job_park(displs);
        spi_free(mine);
        return got; /* SP_ERR_MPI: the caller stops using the communicator */
    }
    long total = 0;
    for (int r = 0; lens && displs && r < job_size; r++) {
        displs[r] = (int)total;
        total += lens[r];
    }
    if (job_rank == 0 && total > INT32_MAX) total = 0, status = SP_ERR_UNSUPPORTED;
    if (job_rank == 0) all = spi_malloc((size_t)total + 1);
    if (job_rank == 0 && !all && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
    rc = PMPI_Igatherv(mine, len, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, comm, &request);
    got = rc == MPI_SUCCESS ? spi_job_wait(&request, &peer, 1, "gathering counters", where, err)
                            : spi_job_mpi_fail(err, rc, "gathering counters");
    if (got != SP_OK) {
        spi_job_park(mine);
        spi_job_park(all);
        spi_job_park(lens);
        spi_job_park(displs);
        return got; /* SP_ERR_MPI: the caller stops using the communicator */
    }
    for (int r = 0; job_rank == 0 && status == SP_OK && r < job_size; r++)
        status = spi_counters_unpack(all + displs[r], (size_t)lens[r], (uint32_t)r, into);
    spi_free(mine);
    spi_free(all);
    spi_free(lens);
    spi_free(displs);
    return status;
}
