/*
 * job_parallel.c - the MPI job written through parallel HDF5 (see
 * job_parallel.h and format/h5_parallel_writer.h).
 *
 * What moves between ranks, and why it stays small:
 *   - the region names and thread tables go to rank 0 (it writes the region
 *     table and the thread table: variable-length data, which HDF5 1.10
 *     writes from one process only); rank 0 builds the union of the names
 *     exactly as the funnel does and sends each rank back its map of local
 *     region ids (MPI_Scatterv): O(regions) per rank;
 *   - the counts: an exclusive prefix sum gives each rank the place of its
 *     rows and calls in the file, all-reduces give the totals and the union
 *     of the optional event columns;
 *   - the counter records (a few KiB per rank) go to rank 0 as in the funnel.
 * No rank ever receives another rank's calls.
 */
#include "job/job_parallel.h"

#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "format/h5_file_parts.h"
#include "format/h5_parallel_writer.h"
#include "job/job_bounded.h"
#include "job/job_exchange.h"

/* Every exchange below is nonblocking and held to the deadline
 * (job_bounded.h): started only while no wait of the job gave up, then
 * polled. MPI_SUCCESS, or MPI_ERR_OTHER with err saying why. The values
 * exchanged live in static storage or in buffers parked on a timeout: a
 * collective left pending may still write them. */
#define STARTED(call) (spi_job_gave_up() ? MPI_ERR_OTHER : (call))
static int finish(int rc, MPI_Request *request, int me, const char *phase, spi_error *err) {
    if (rc != MPI_SUCCESS) return rc;
    int peer = me == 0 ? SPI_JOB_COLLECTIVE : SPI_JOB_FROM_ROOT(0);
    return spi_job_wait(request, &peer, 1, phase,
                        "nothing was written; the output path keeps what it held", err) == SP_OK
               ? MPI_SUCCESS
               : MPI_ERR_OTHER;
}

/* The parallel writer's waits (format/h5_parallel_writer.h): the same
 * deadline and message as every other exchange of the job's finalize. */
static int writer_wait(MPI_Request *request, int me, int root, const char *phase,
                       spi_error *err) {
    int peer = root < 0 || root == me ? SPI_JOB_COLLECTIVE : SPI_JOB_FROM_ROOT(root);
    return spi_job_wait(request, &peer, 1, phase,
                        "nothing was written; the output path keeps what it held", err);
}

/* Whether every rank sees the directory of `path` as rank 0 does: rank 0
 * writes a token into a temporary sibling, every rank reads it back. A
 * node-local directory (/tmp on a multi-node job) or a relative path in
 * different working directories would otherwise let each node write a
 * file of its own, and rank 0 publish one without the others' calls; the
 * funnel needs no shared file system. Collective. */
static int shared_directory(MPI_Comm comm, int me, const char *path) {
    static char probe[PATH_MAX], token[64];
    memset(probe, 0, sizeof probe);
    memset(token, 0, sizeof token);
    if (me == 0) {
        spi_error ignored = {0};
        char *temp = spi_h5_temp_sibling(path, &ignored);
        int fd = temp && strlen(temp) < sizeof probe ? open(temp, O_WRONLY) : -1;
        snprintf(token, sizeof token, "scope-profiler %ld %ld", (long)getpid(), (long)time(NULL));
        if (fd >= 0 && write(fd, token, sizeof token) == (ssize_t)sizeof token)
            memcpy(probe, temp, strlen(temp) + 1);
        if (fd >= 0) close(fd);
        if (temp && !probe[0]) unlink(temp);
        spi_free(temp);
    }
    static int ok, all;
    ok = all = 0;
    MPI_Request request;
    spi_error ignored = {0};
    if (finish(STARTED(PMPI_Ibcast(probe, sizeof probe, MPI_CHAR, 0, comm, &request)), &request,
               me, "checking the output directory", &ignored) != MPI_SUCCESS ||
        finish(STARTED(PMPI_Ibcast(token, sizeof token, MPI_CHAR, 0, comm, &request)), &request,
               me, "checking the output directory", &ignored) != MPI_SUCCESS)
        return 0;
    if (probe[0] && me == 0) ok = 1;
    if (probe[0] && me != 0) {
        char seen[sizeof token];
        int fd = open(probe, O_RDONLY);
        ok = fd >= 0 && read(fd, seen, sizeof seen) == (ssize_t)sizeof seen &&
             memcmp(seen, token, sizeof seen) == 0;
        if (fd >= 0) close(fd);
    }
    int rc = finish(STARTED(PMPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm, &request)),
                    &request, me, "checking the output directory", &ignored);
    if (me == 0 && probe[0]) unlink(probe);
    if (ignored.status != SP_OK) spi_diag("%s: %s", path, ignored.message);
    return rc == MPI_SUCCESS && all;
}

bool spi_job_parallel_chosen(MPI_Comm comm, const spi_profile *local, const char *path) {
    int me = 0;
    PMPI_Comm_rank(comm, &me);
    /* rank 0 decides the writer, so every rank agrees even when the
     * environment differs between ranks */
    const char *writer = me == 0 ? getenv("SCOPE_PROFILER_MPI_WRITER") : NULL;
    static int mine;
    mine = !local->aggregate && !(writer && strcmp(writer, "funnel") == 0);
    static int all; /* static: see STARTED */
    all = 0;
    MPI_Request request;
    spi_error err = {0};
    int rc = finish(STARTED(PMPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm, &request)),
                    &request, me, "choosing the writer", &err);
    if (err.status != SP_OK) spi_diag("%s: %s", path, err.message);
    if (rc != MPI_SUCCESS || !all) return false;
    return shared_directory(comm, me, path);
}

static int mpi_fail(spi_error *err, int code, const char *path, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", code);
    return spi_error_set(err, SP_ERR_MPI, "%s: MPI error while %s: %s", path, what, text);
}

/* What rank 0 gathers before the write; freed by release. */
typedef struct job_gather {
    int *layout;              /* 6 per rank: count and displacement of the
                                 name bytes, the thread bytes, the names */
    char *names;              /* every rank's names, one after the other */
    spi_wire_thread *threads;
    size_t thread_count;
    spi_name_union names_union;
    uint32_t *maps;           /* every rank's local -> job region ids */
    spi_thread_row *thread_rows;
    spi_profile counters;     /* only its counter records are used */
} job_gather;

static void release(job_gather *g) {
    if (spi_job_gave_up()) { /* a collective left pending may still use them */
        spi_job_park(g->layout);
        spi_job_park(g->names);
        spi_job_park(g->threads);
        spi_job_park(g->maps);
        g->layout = NULL;
        g->names = NULL;
        g->threads = NULL;
        g->maps = NULL;
    }
    spi_free(g->layout);
    spi_free(g->names);
    spi_free(g->threads);
    spi_free(g->names_union.names);
    spi_free(g->names_union.slots);
    spi_free(g->maps);
    spi_free(g->thread_rows);
    spi_profile_free(&g->counters);
}

/* Column `field` (0 name bytes, 1 thread bytes, 2 names) of the per-rank
 * counts, as counts and displacements for a Gatherv/Scatterv. */
static int *counts_of(job_gather *g, int size, int field) { return g->layout + (size_t)field * 2 * (size_t)size; }
static int *displs_of(job_gather *g, int size, int field) { return counts_of(g, size, field) + size; }

/* Rank 0 lays out and allocates what it will receive; SP_ERR_UNSUPPORTED
 * past the int limit of MPI-3 counts. */
static int root_prepare(job_gather *g, int size, const int *triples) {
    uint64_t totals[3] = {0, 0, 0};
    for (int field = 0; field < 3; field++)
        for (int r = 0; r < size; r++) {
            counts_of(g, size, field)[r] = triples[3 * r + field];
            displs_of(g, size, field)[r] = (int)totals[field];
            totals[field] += (uint64_t)triples[3 * r + field];
            if (totals[field] > (uint64_t)INT32_MAX) return SP_ERR_UNSUPPORTED;
        }
    g->names = spi_malloc(totals[0] + 1);
    g->threads = spi_malloc(totals[1] + 1);
    g->thread_count = (size_t)(totals[1] / sizeof(spi_wire_thread));
    g->thread_rows = spi_calloc(g->thread_count + 1, sizeof *g->thread_rows);
    spi_name_union *u = &g->names_union;
    u->capacity = 64;
    while (u->capacity < totals[2] * 2 + 2) u->capacity *= 2;
    u->names = spi_calloc((size_t)totals[2] + 1, sizeof *u->names);
    u->slots = spi_calloc(u->capacity, sizeof *u->slots);
    g->maps = spi_calloc((size_t)totals[2] + 1, sizeof *g->maps);
    return g->names && g->threads && g->thread_rows && u->names && u->slots && g->maps
               ? SP_OK
               : SP_ERR_OUT_OF_MEMORY;
}

/* Names and threads to rank 0, the union built there as the funnel builds
 * it (first seen by rank), each rank's map back. Collective. Rank 0 says
 * whether it could receive before anyone sends, so a failure on rank 0
 * never leaves a message half-matched. */
static int gather_tables(MPI_Comm comm, int me, int size, const spi_profile *local,
                         job_gather *g, uint32_t *my_map, int status, spi_error *err,
                         const char *path) {
    uint64_t name_bytes = 0;
    char *names = spi_job_pack_names(local, &name_bytes);
    spi_wire_thread *threads = spi_job_pack_threads(local, (uint32_t)me);
    uint64_t thread_bytes = local->thread_count * sizeof(spi_wire_thread);
    if ((!names || !threads) && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
    if ((name_bytes > INT32_MAX || thread_bytes > INT32_MAX || local->name_count > INT32_MAX) &&
        status == SP_OK)
        status = SP_ERR_UNSUPPORTED;
    /* a rank that failed sends nothing; the agreement before the write stops the job */
    static int mine[3]; /* static: see STARTED */
    mine[0] = status == SP_OK ? (int)name_bytes : 0;
    mine[1] = status == SP_OK ? (int)thread_bytes : 0;
    mine[2] = status == SP_OK ? (int)local->name_count : 0;
    int *triples = me == 0 ? spi_calloc((size_t)size * 3, sizeof *triples) : NULL;
    if (me == 0) g->layout = spi_calloc((size_t)size * 6, sizeof *g->layout);
    if (me == 0 && (!triples || !g->layout) && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
    MPI_Request request;
    int rc = finish(STARTED(PMPI_Igather(mine, 3, MPI_INT, triples, 3, MPI_INT, 0, comm, &request)),
                    &request, me, "gathering counts", err);
    if (rc != MPI_SUCCESS && status == SP_OK) status = mpi_fail(err, rc, path, "gathering counts");
    if (me == 0 && status == SP_OK) status = root_prepare(g, size, triples);
    if (spi_job_gave_up()) spi_job_park(triples);
    else spi_free(triples);
    static int root_ok;
    root_ok = me == 0 ? status == SP_OK : 0;
    rc = finish(STARTED(PMPI_Ibcast(&root_ok, 1, MPI_INT, 0, comm, &request)), &request, me,
                "agreeing on the tables", err);
    if (rc == MPI_SUCCESS && root_ok)
        rc = finish(STARTED(PMPI_Igatherv(names, mine[0], MPI_CHAR, g->names,
                                          me == 0 ? counts_of(g, size, 0) : NULL,
                                          me == 0 ? displs_of(g, size, 0) : NULL, MPI_CHAR, 0,
                                          comm, &request)),
                    &request, me, "gathering region names", err);
    if (rc == MPI_SUCCESS && root_ok)
        rc = finish(STARTED(PMPI_Igatherv(threads, mine[1], MPI_BYTE, g->threads,
                                          me == 0 ? counts_of(g, size, 1) : NULL,
                                          me == 0 ? displs_of(g, size, 1) : NULL, MPI_BYTE, 0,
                                          comm, &request)),
                    &request, me, "gathering thread tables", err);
    if (rc != MPI_SUCCESS && status == SP_OK) status = mpi_fail(err, rc, path, "gathering tables");
    if (spi_job_gave_up()) {
        spi_job_park(names);
        spi_job_park(threads);
    } else {
        spi_free(names);
        spi_free(threads);
    }
    if (me == 0 && status == SP_OK) {
        char *cursor = g->names;
        int total = displs_of(g, size, 2)[size - 1] + counts_of(g, size, 2)[size - 1];
        for (int i = 0; i < total; i++, cursor += strlen(cursor) + 1)
            g->maps[i] = (uint32_t)spi_name_union_add(&g->names_union, cursor);
        for (size_t i = 0; i < g->thread_count; i++)
            g->thread_rows[i] = spi_wire_thread_row(&g->threads[i]);
    }
    if (rc == MPI_SUCCESS && root_ok)
        rc = finish(STARTED(PMPI_Iscatterv(g->maps, me == 0 ? counts_of(g, size, 2) : NULL,
                                           me == 0 ? displs_of(g, size, 2) : NULL, MPI_UINT32_T,
                                           my_map, mine[2], MPI_UINT32_T, 0, comm, &request)),
                    &request, me, "sending region maps", err);
    if (rc != MPI_SUCCESS && status == SP_OK) status = mpi_fail(err, rc, path, "sending region maps");
    if (!root_ok && status == SP_OK)
        status = spi_error_set(err, SP_ERR_MPI, "%s: rank 0 could not gather the job's tables "
                               "(see its message); nothing was written", path);
    return status;
}

int spi_job_parallel_write(MPI_Comm comm, const spi_profile *local, const char *path,
                           spi_job_totals *totals, spi_error *err) {
    *totals = (spi_job_totals){0};
    int me = 0, size = 1;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &size);
    job_gather g = {0};
    uint32_t *my_map = spi_calloc(local->name_count + 1, sizeof *my_map);
    int status = my_map ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    status = gather_tables(comm, me, size, local, &g, my_map ? my_map : &(uint32_t){0}, status,
                           err, path);
    status = spi_job_gather_counters(comm, local, &g.counters, status, err);

    /* Where this rank's rows and calls go, and the job's totals. */
    /* static: see STARTED */
    static uint64_t mine[2], before[2], sums[2], calls, all_calls;
    static unsigned columns, my_columns;
    mine[0] = local->row_count;
    mine[1] = local->event_count;
    before[0] = before[1] = sums[0] = sums[1] = all_calls = 0;
    calls = spi_profile_call_count(local);
    columns = 0;
    my_columns = local->event_columns;
    MPI_Request request;
    int rc = finish(STARTED(PMPI_Iexscan(mine, before, 2, MPI_UINT64_T, MPI_SUM, comm, &request)),
                    &request, me, "placing each rank's rows", err);
    if (me == 0) before[0] = before[1] = 0; /* MPI_Exscan leaves rank 0's undefined */
    if (rc == MPI_SUCCESS)
        rc = finish(STARTED(PMPI_Iallreduce(mine, sums, 2, MPI_UINT64_T, MPI_SUM, comm, &request)),
                    &request, me, "summing counts", err);
    if (rc == MPI_SUCCESS)
        rc = finish(STARTED(PMPI_Iallreduce(&my_columns, &columns, 1, MPI_UNSIGNED, MPI_BOR, comm,
                                            &request)),
                    &request, me, "summing counts", err);
    if (rc == MPI_SUCCESS)
        rc = finish(STARTED(PMPI_Ireduce(&calls, &all_calls, 1, MPI_UINT64_T, MPI_SUM, 0, comm,
                                         &request)),
                    &request, me, "summing counts", err);
    if (rc != MPI_SUCCESS && status == SP_OK) status = mpi_fail(err, rc, path, "summing counts");

    /* Nobody starts writing unless every rank is ready. */
    static int ready, all_ready;
    ready = status == SP_OK;
    all_ready = 0;
    rc = finish(STARTED(PMPI_Iallreduce(&ready, &all_ready, 1, MPI_INT, MPI_LAND, comm, &request)),
                &request, me, "agreeing to write", err);
    if (status == SP_OK && (rc != MPI_SUCCESS || !all_ready))
        status = spi_error_set(err, SP_ERR_MPI, "%s: another rank could not prepare its part "
                               "(see its message); nothing was written", path);
    if (status == SP_OK) {
        spi_parallel_plan plan = {.row_count = sums[0], .event_count = sums[1],
                                  .event_columns = columns,
                                  .first_row = before[0], .first_event = before[1],
                                  .rank = (uint32_t)me, .region_map = my_map};
        spi_parallel_root root = {.metadata = &local->metadata,
                                  .names = (const char *const *)g.names_union.names,
                                  .name_count = g.names_union.count,
                                  .threads = g.thread_rows,
                                  .thread_count = g.thread_count,
                                  .counters = &g.counters};
        spi_parallel_bounds bounds = {.wait = writer_wait, .checkpoint = spi_job_fault_point};
        status = spi_h5_parallel_write(comm, path, &plan, local, &root, &bounds, err);
        if (me == 0)
            *totals = (spi_job_totals){.ranks = (uint32_t)size, .rows = sums[0],
                                       .events = all_calls, .regions = g.names_union.count};
    }
    release(&g);
    spi_free(my_map);
    if (status == SP_ERR_OUT_OF_MEMORY && err && err->status == SP_OK)
        spi_error_set(err, status, "%s: out of memory while writing the job's profile", path);
    if (status == SP_ERR_UNSUPPORTED && err && err->status == SP_OK)
        spi_error_set(err, status, "%s: the job's tables exceed MPI's 2 GiB message limit", path);
    return status;
}
