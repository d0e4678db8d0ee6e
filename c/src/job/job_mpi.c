/*
 * job_mpi.c - the job back end of an MPI build: every rank records, rank 0
 * writes ONE schema-3 file for the whole communicator.
 *
 * Protocol of spi_job_write (all on a duplicate of the user's communicator,
 * so our messages can never match the application's):
 *   1. gather each rank's counts (rows, events, name bytes, threads, event
 *      columns) and its region names; rank 0 builds the union region table
 *      in first-seen order by rank and a per-rank id map;
 *   2. gather the thread tables (small, fixed-size records);
 *   3. rank 0 creates the file at its final size and broadcasts whether it
 *      could, so no rank streams data into a failed write;
 *   4. rank 0 writes its own rows, then for each rank r in order sends r a
 *      "go" and receives r's row headers and its events in chunks of at most
 *      CHUNK_EVENTS calls. Rank 0 never holds more than one chunk of another
 *      rank's events: memory is bounded whatever the job size;
 *   5. rank 0 publishes (or aborts) and broadcasts the final status.
 * If the writer fails half-way, rank 0 keeps receiving and discarding, so
 * the protocol always completes and no rank hangs.
 *
 * MPI_Finalize before sp_finalize: an attribute on MPI_COMM_SELF has a
 * delete callback, which MPI runs at the very start of MPI_Finalize while
 * MPI is still fully usable (MPI standard, "Allowing User Functions at
 * Process Termination"); it runs the profiler's finalize there
 * (job_mpi_exit.c, also armed later for a session begun before MPI_Init).
 */
#include "job/job.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "counters/counters.h"
#include "format/h5_call_paths.h"
#include "format/h5_counter_groups.h"
#include "format/h5_writer.h"
#include "job/job_bounded.h"
#include "job/job_exchange.h"
#include "job/job_mpi_exit.h"
#include "job/job_mpi_link.h"
#include "job/job_parallel.h"
#include "record/registry.h"
#include "format/schema.h"

#define CHUNK_EVENTS 65536
#define WIRE_COLUMNS 5 /* starts, durations, call ids, parent ids, thread ids */
enum { TAG_GO = 7101, TAG_ROWS = 7102, TAG_EVENTS = 7103, TAG_TRAILER = 7104 };

static MPI_Comm job_comm = MPI_COMM_NULL;
static int job_rank = 0;
static int job_size = 1;
static int64_t node_count = 1;
static void (*finalize_hook)(void) = NULL;
static int deferred = 0; /* started before MPI_Init: join at finalize */
static int job_broken = 0; /* a rank did not come: no more collectives */

typedef struct wire_counts {
    uint64_t rows;
    uint64_t events;
    uint64_t name_bytes;
    uint64_t threads;
    uint64_t event_columns;
    uint64_t calls;           /* = events, or the aggregate counts */
    uint64_t paths;           /* aggregate mode's call paths */
    uint64_t aggregate;       /* 1: this rank recorded in aggregate mode */
} wire_counts;

typedef struct wire_row {
    uint32_t region;          /* the sender's local region id */
    uint32_t reserved;
    uint64_t count;
    int64_t exclusive_total;
    int64_t source_line;
    spi_stats stats;
    /* aggregate layout only */
    uint64_t aggregate_count;
    int64_t aggregate_total;
    int64_t aggregate_minimum;
    int64_t aggregate_maximum;
    int64_t aggregate_exclusive;
} wire_row;

typedef spi_wire_thread wire_thread; /* job/job_parallel.h */

static int compare_names(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

/* Distinct processor names over the communicator (collective). */
static int count_nodes(spi_error *err) {
    char host[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    memset(host, 0, sizeof host);
    PMPI_Get_processor_name(host, &len);
    char *all = spi_calloc((size_t)job_size, MPI_MAX_PROCESSOR_NAME);
    if (!all) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory counting nodes");
    int rc = PMPI_Allgather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                           MPI_CHAR, job_comm);
    if (rc != MPI_SUCCESS) {
        spi_free(all);
        return spi_job_mpi_fail(err, rc, "gathering host names");
    }
    qsort(all, (size_t)job_size, MPI_MAX_PROCESSOR_NAME, compare_names);
    node_count = job_size > 0 ? 1 : 0;
    for (int r = 1; r < job_size; r++)
        node_count += strcmp(all + (size_t)r * MPI_MAX_PROCESSOR_NAME,
                             all + (size_t)(r - 1) * MPI_MAX_PROCESSOR_NAME) != 0;
    spi_free(all);
    return SP_OK;
}

static int join(const void *mpi_comm, void (*on_mpi_finalize)(void), const char *what,
                spi_error *err);

/* A rank that never calls sp_setup (or never reaches sp_finalize) must not
 * hang the job silently: the waits for every rank are held to
 * spi_job_wait_seconds() (SCOPE_PROFILER_MPI_TIMEOUT, job_bounded.h). */
static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Complete a nonblocking collective, or give up after wait_seconds(): the
 * request is then left pending (MPI offers no way to cancel a collective;
 * MPI_Finalize tolerates it) and the caller reports the error. */
static int wait_for_every_rank(MPI_Request *request, const char *what, spi_error *err) {
    double limit = spi_job_wait_seconds(), deadline = seconds_now() + limit;
    for (;;) {
        int done = 0;
        int rc = PMPI_Test(request, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return spi_job_mpi_fail(err, rc, what);
        if (done) return SP_OK;
        if (seconds_now() > deadline)
            return spi_error_set(err, SP_ERR_MPI,
                                 "not every rank of the communicator %s within %.0f s "
                                 "(SCOPE_PROFILER_MPI_TIMEOUT); giving up without them",
                                 what, limit);
        struct timespec pause = {0, 200000}; /* 0.2 ms between tests */
        nanosleep(&pause, NULL);
    }
}

/* ---- bounded operations (job_bounded.h) -------------------------------------- */

/* What a wait that gives up says about the data (set by each phase). */
static char job_where[600] = "nothing was written";

/* Wait for one started operation against the deadline. Once a wait gave
 * up the job is broken: later operations return at once (the others are
 * giving up too), so a job never waits out the timeout twice. */
static int settle(MPI_Request *request, int rc, int peer, const char *phase, spi_error *err) {
    if (rc != MPI_SUCCESS) return spi_job_mpi_fail(err, rc, phase);
    int status = spi_job_wait(request, &peer, 1, phase, job_where, err);
    if (status != SP_OK) job_broken = 1;
    return status;
}

static int gather_bounded(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                          int recv_count, MPI_Datatype recv_type, const char *phase,
                          spi_error *err) {
    if (job_broken) return SP_ERR_MPI;
    MPI_Request request;
    int rc = PMPI_Igather(send, send_count, send_type, recv, recv_count, recv_type, 0, job_comm,
                          &request);
    return settle(&request, rc, job_rank == 0 ? SPI_JOB_COLLECTIVE : SPI_JOB_FROM_ROOT(0), phase,
                  err);
}

static int gatherv_bounded(const void *send, int send_count, MPI_Datatype send_type, void *recv,
                           const int *counts, const int *displs, MPI_Datatype recv_type,
                           const char *phase, spi_error *err) {
    if (job_broken) return SP_ERR_MPI;
    MPI_Request request;
    int rc = PMPI_Igatherv(send, send_count, send_type, recv, counts, displs, recv_type, 0,
                           job_comm, &request);
    return settle(&request, rc, job_rank == 0 ? SPI_JOB_COLLECTIVE : SPI_JOB_FROM_ROOT(0), phase,
                  err);
}

/* Rank 0's *value to every rank. The value travels through a static slot:
 * a broadcast left pending by a timeout may still write it later. */
static int bcast_int_bounded(int *value, const char *phase, spi_error *err) {
    static int slot;
    if (job_broken) return SP_ERR_MPI;
    slot = *value;
    MPI_Request request;
    int rc = PMPI_Ibcast(&slot, 1, MPI_INT, 0, job_comm, &request);
    int status = settle(&request, rc, job_rank == 0 ? SPI_JOB_COLLECTIVE : SPI_JOB_FROM_ROOT(0),
                        phase, err);
    if (status == SP_OK) *value = slot;
    return status;
}

static int send_bounded(const void *buffer, int count, MPI_Datatype type, int to, int tag,
                        const char *phase, spi_error *err) {
    if (job_broken) return SP_ERR_MPI;
    MPI_Request request;
    int rc = PMPI_Isend(buffer, count, type, to, tag, job_comm, &request);
    return settle(&request, rc, to, phase, err);
}

static int recv_bounded(void *buffer, int count, MPI_Datatype type, int from, int tag,
                        const char *phase, spi_error *err) {
    if (job_broken) return SP_ERR_MPI;
    MPI_Request request;
    int rc = PMPI_Irecv(buffer, count, type, from, tag, job_comm, &request);
    return settle(&request, rc, from, phase, err);
}

/* A buffer an operation used: freed, or kept for MPI when a wait gave up
 * (a pending operation may still touch it). */
static void release(void *buffer) {
    if (job_broken) spi_job_park(buffer);
    else spi_free(buffer);
}

int spi_job_start(const void *mpi_comm, void (*on_mpi_finalize)(void), spi_error *err) {
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    job_rank = 0;
    job_size = 1;
    node_count = 1;
    deferred = 0;
    if (!initialized || finalized) {
        if (mpi_comm)
            return spi_error_set(err, SP_ERR_MPI,
                                 "a communicator was given but MPI is not initialised");
        /* a serial run of an MPI build, or setup before MPI_Init: recording
         * does not need MPI, so the job is decided at finalize */
        deferred = !initialized;
        finalize_hook = on_mpi_finalize;
        if (deferred) spi_job_exit_expect(on_mpi_finalize); /* armed when MPI runs */
        return SP_OK;
    }
    return join(mpi_comm, on_mpi_finalize, "called sp_setup", err);
}

int spi_job_join_late(const char **why_alone, spi_error *err) {
    *why_alone = NULL;
    if (job_comm != MPI_COMM_NULL) return SP_OK;
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized) *why_alone = "MPI was not initialised";
    else if (finalized) *why_alone = "MPI was finalized before sp_finalize";
    if (!deferred || !initialized || finalized) return SP_OK;
    deferred = 0;
    return join(NULL, finalize_hook, "reached sp_finalize", err);
}

static int join(const void *mpi_comm, void (*on_mpi_finalize)(void), const char *what,
                spi_error *err) {
    MPI_Comm base = mpi_comm ? *(const MPI_Comm *)mpi_comm : MPI_COMM_WORLD;
    MPI_Request request;
    int rc = PMPI_Comm_idup(base, &job_comm, &request);
    if (rc != MPI_SUCCESS) return spi_job_mpi_fail(err, rc, "duplicating the communicator");
    int arrived = wait_for_every_rank(&request, what, err);
    if (arrived != SP_OK) {
        job_comm = MPI_COMM_NULL; /* never completed: nothing to free */
        return arrived;
    }
    /* A rank that comes after the others gave up completes the duplicate
     * they left pending, but not this reduction: it gives up too, rather
     * than block in the next collective (see spi_job_write). */
    int here = 1, everyone = 0;
    rc = PMPI_Iallreduce(&here, &everyone, 1, MPI_INT, MPI_MIN, job_comm, &request);
    arrived = rc == MPI_SUCCESS ? wait_for_every_rank(&request, what, err)
                                : spi_job_mpi_fail(err, rc, "waiting for every rank");
    if (arrived != SP_OK) {
        job_comm = MPI_COMM_NULL; /* the others never use it: left as it is */
        return arrived;
    }
    PMPI_Comm_set_errhandler(job_comm, MPI_ERRORS_RETURN);
    PMPI_Comm_rank(job_comm, &job_rank);
    PMPI_Comm_size(job_comm, &job_size);
    int status = count_nodes(err);
    if (status == SP_OK) status = spi_job_exit_install(on_mpi_finalize, err);
    finalize_hook = on_mpi_finalize;
    if (status != SP_OK) spi_job_stop();
    return status;
}

int spi_job_agree(int status, spi_error *err) {
    if (job_comm == MPI_COMM_NULL || job_broken) return status;
    /* MAX over the ranks of [rank 0's status, the others' statuses]: codes
     * are >= 0 and SP_OK is 0, so any failure shows, rank 0's first */
    int mine[2] = {job_rank == 0 ? status : SP_OK, job_rank == 0 ? SP_OK : status};
    int job[2] = {SP_OK, SP_OK};
    MPI_Request request;
    int rc = PMPI_Iallreduce(mine, job, 2, MPI_INT, MPI_MAX, job_comm, &request);
    int arrived = rc == MPI_SUCCESS ? wait_for_every_rank(&request, "checked the output path", err)
                                    : spi_job_mpi_fail(err, rc, "agreeing on the output path");
    if (arrived != SP_OK) {
        job_broken = 1; /* the others may be gone: no collective frees the communicator */
        return arrived;
    }
    return job[0] != SP_OK ? job[0] : job[1];
}

int spi_job_gather_reports(const spi_rank_report *mine, spi_rank_report **all, spi_error *err) {
    *all = NULL;
    int size = job_comm == MPI_COMM_NULL ? 1 : job_size;
    spi_rank_report *gathered = job_rank == 0 ? spi_calloc((size_t)size, sizeof *gathered) : NULL;
    int status = job_rank == 0 && !gathered ? SP_ERR_OUT_OF_MEMORY : SP_OK;
    if (job_comm == MPI_COMM_NULL || job_broken) {
        if (gathered) gathered[0] = *mine; /* alone, or the job broke: our own */
    } else {
        /* every rank takes part, whatever rank 0's allocation did: rank 0
         * first says whether it can receive (a gather into nothing would
         * write through a null pointer) */
        snprintf(job_where, sizeof job_where,
                 "the write's own outcome stands; only the end-of-run report is incomplete");
        int root_ready = job_rank != 0 || gathered != NULL;
        int got = bcast_int_bounded(&root_ready, "agreeing on the end-of-run reports", err);
        if (got == SP_OK && root_ready)
            got = gather_bounded(mine, sizeof *mine, MPI_BYTE, gathered, sizeof *mine, MPI_BYTE,
                                 "gathering the end-of-run reports", err);
        if (got != SP_OK && status == SP_OK) status = got;
    }
    if (status == SP_OK) *all = gathered;
    else release(gathered);
    if (status == SP_ERR_OUT_OF_MEMORY) spi_error_set(err, status, "out of memory");
    return status;
}

/* ---- lent to job_mpi_paths.c (job_mpi_link.h) ------------------------------- */

bool spi_job_mpi_talking(void) { return job_comm != MPI_COMM_NULL && !job_broken; }

void spi_job_mpi_set_where(const char *text) { snprintf(job_where, sizeof job_where, "%s", text); }

int spi_job_mpi_bcast_int(int *value, const char *phase, spi_error *err) {
    return bcast_int_bounded(value, phase, err);
}

int spi_job_mpi_send(const void *buffer, int count, MPI_Datatype type, int to, int tag,
                     const char *phase, spi_error *err) {
    return send_bounded(buffer, count, type, to, tag, phase, err);
}

int spi_job_mpi_recv(void *buffer, int count, MPI_Datatype type, int from, int tag,
                     const char *phase, spi_error *err) {
    return recv_bounded(buffer, count, type, from, tag, phase, err);
}

void spi_job_mpi_release(void *buffer) { release(buffer); }

uint32_t spi_job_rank(void) { return (uint32_t)job_rank; }
uint32_t spi_job_size(void) { return (uint32_t)job_size; }
int64_t spi_job_node_count(void) { return node_count; }

void spi_job_stop(void) {
    int finalized = 0;
    PMPI_Finalized(&finalized);
    spi_job_exit_remove();
    finalize_hook = NULL;
    deferred = 0;
    if (job_comm != MPI_COMM_NULL && !finalized && !job_broken) PMPI_Comm_free(&job_comm);
    job_broken = 0;
    spi_job_bounded_reset();
    job_comm = MPI_COMM_NULL;
    job_rank = 0;
    job_size = 1;
    node_count = 1;
}

/* ---- root: region table union ---------------------------------------------- */

typedef spi_name_union name_union; /* job/job_parallel.h */

/* ---- sending (ranks > 0) ------------------------------------------------------- */

/* Calls [first, first + n) of local row r into the wire layout (five
 * columns of n). A row streamed from a bounded trace's spill file may fail
 * to read back: the chunk is then zeros, so the protocol still completes,
 * and the status says why (sent with the statistics, below). */
static int pack_chunk(int64_t *buffer, const spi_profile *local, size_t r, uint64_t first,
                      size_t n, spi_error *err) {
    for (size_t done = 0; done < n;) {
        spi_call_slice slice;
        int status = spi_profile_row_calls(local, r, first + done, n - done, &slice, err);
        if (status == SP_OK && slice.count == 0)
            status = spi_error_set(err, SP_ERR_CORRUPT, "row %zu ended early", r);
        if (status != SP_OK) {
            memset(buffer, 0, sizeof(int64_t) * n * WIRE_COLUMNS);
            return status;
        }
        for (size_t i = 0; i < slice.count; i++) {
            size_t k = done + i;
            buffer[k] = slice.starts[i];
            buffer[n + k] = slice.durations[i];
            buffer[2 * n + k] = slice.call_ids ? slice.call_ids[i] : -1;
            buffer[3 * n + k] = slice.parent_ids ? slice.parent_ids[i] : -1;
            buffer[4 * n + k] = slice.thread_ids ? slice.thread_ids[i] : -1;
        }
        done += slice.count;
    }
    return SP_OK;
}

/* After a rank's events: its status and each row's final statistics (a
 * streamed row's are only known once its calls were read). */
typedef struct wire_trailer {
    int64_t status;
} wire_trailer;

static size_t trailer_bytes(uint64_t rows) { return sizeof(wire_trailer) + rows * sizeof(spi_stats); }

static int send_rows(const spi_profile *local, int64_t *buffer, spi_error *err) {
    spi_job_fault_point(job_rank, "rows");
    /* The wait for the "go" is held to the timeout like every other, and
     * it also covers rank 0 writing the ranks before this one: a job whose
     * rank 0 needs longer than SCOPE_PROFILER_MPI_TIMEOUT for them must
     * raise it. (A heartbeat from rank 0 would lift that; not done yet.)
     * static: a receive left pending by a timeout may still write it */
    static int go = 0;
    int sent = recv_bounded(&go, 1, MPI_INT, 0, TAG_GO, "waiting for rank 0 to take this rank's rows",
                            err);
    if (sent != SP_OK) return sent;
    wire_row *rows = spi_calloc(local->row_count ? local->row_count : 1, sizeof *rows);
    char *trailer = spi_calloc(1, trailer_bytes(local->row_count));
    if (!rows || !trailer) {
        spi_free(rows);
        spi_free(trailer);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory sending rows");
    }
    for (size_t r = 0; r < local->row_count; r++) {
        const spi_row *row = &local->rows[r];
        rows[r] = (wire_row){.region = row->region, .count = row->count,
                             .exclusive_total = row->exclusive_total,
                             .source_line = row->source_line, .stats = row->stats,
                             .aggregate_count = row->aggregate_count,
                             .aggregate_total = row->aggregate_total,
                             .aggregate_minimum = row->aggregate_minimum,
                             .aggregate_maximum = row->aggregate_maximum,
                             .aggregate_exclusive = row->aggregate_exclusive};
    }
    sent = send_bounded(rows, (int)(local->row_count * sizeof *rows), MPI_BYTE, 0, TAG_ROWS,
                        "sending row headers to rank 0", err);
    release(rows);
    int status = SP_OK;
    for (size_t r = 0; r < local->row_count && sent == SP_OK; r++) {
        const spi_row *row = &local->rows[r];
        for (uint64_t first = 0; first < row->count && sent == SP_OK; first += CHUNK_EVENTS) {
            size_t n = row->count - first < CHUNK_EVENTS ? (size_t)(row->count - first) : CHUNK_EVENTS;
            int packed = pack_chunk(buffer, local, r, first, n, err);
            if (status == SP_OK) status = packed;
            sent = send_bounded(buffer, (int)(n * WIRE_COLUMNS), MPI_INT64_T, 0, TAG_EVENTS,
                                "sending calls to rank 0", err);
        }
        memcpy(trailer + sizeof(wire_trailer) + r * sizeof(spi_stats),
               spi_profile_row_stats(local, r), sizeof(spi_stats));
    }
    ((wire_trailer *)trailer)->status = status;
    if (sent == SP_OK)
        sent = send_bounded(trailer, (int)trailer_bytes(local->row_count), MPI_BYTE, 0,
                            TAG_TRAILER, "sending statistics to rank 0", err);
    release(trailer);
    return sent != SP_OK ? sent : status;
}

/* ---- receiving (rank 0) ---------------------------------------------------------- */

/* Stream one row's events (local rows on rank 0, or received) into the
 * writer; `writing` false drains without writing after an earlier error. */
static int write_chunk(spi_writer *w, const int64_t *buffer, size_t n, int with_threads,
                       spi_error *err) {
    spi_event_chunk chunk = {.count = n, .starts = buffer, .durations = buffer + n};
    chunk.columns[SPI_EV_CALL_IDS] = buffer + 2 * n;
    chunk.columns[SPI_EV_PARENT_IDS] = buffer + 3 * n;
    chunk.columns[SPI_EV_THREAD_IDS] = with_threads ? buffer + 4 * n : NULL;
    return spi_writer_append_events(w, &chunk, err);
}

static int receive_rank(spi_writer *w, int status, int rank, const wire_counts *counts,
                        const long *region_map, int64_t *buffer, uint64_t *row_cursor,
                        spi_error *err) {
    static const int go = 1; /* static: a send left pending may still read it */
    int got = send_bounded(&go, 1, MPI_INT, rank, TAG_GO, "telling a rank to send its rows", err);
    if (got != SP_OK) return got;
    wire_row *rows = spi_calloc(counts->rows ? counts->rows : 1, sizeof *rows);
    if (!rows) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory receiving rows");
    got = recv_bounded(rows, (int)(counts->rows * sizeof *rows), MPI_BYTE, rank, TAG_ROWS,
                       "receiving row headers", err);
    if (got != SP_OK) status = got;
    int rc = got == SP_OK ? MPI_SUCCESS : MPI_ERR_OTHER; /* MPI_SUCCESS: keep receiving */
    int with_threads = (counts->event_columns & SPI_EV_BIT(SPI_EV_THREAD_IDS)) != 0;
    for (uint64_t r = 0; r < counts->rows && rc == MPI_SUCCESS; r++) {
        spi_row_header header = {.region = (uint32_t)region_map[rows[r].region],
                                 .rank = (uint32_t)rank,
                                 .exclusive_total = rows[r].exclusive_total,
                                 .source_line = rows[r].source_line, .stats = rows[r].stats,
                                 .aggregate_count = rows[r].aggregate_count,
                                 .aggregate_total = rows[r].aggregate_total,
                                 .aggregate_minimum = rows[r].aggregate_minimum,
                                 .aggregate_maximum = rows[r].aggregate_maximum,
                                 .aggregate_exclusive = rows[r].aggregate_exclusive};
        if (status == SP_OK) status = spi_writer_begin_row(w, &header, err);
        for (uint64_t first = 0; first < rows[r].count && rc == MPI_SUCCESS; first += CHUNK_EVENTS) {
            size_t n = rows[r].count - first < CHUNK_EVENTS ? (size_t)(rows[r].count - first)
                                                            : CHUNK_EVENTS;
            got = recv_bounded(buffer, (int)(n * WIRE_COLUMNS), MPI_INT64_T, rank, TAG_EVENTS,
                               "receiving calls", err);
            if (got != SP_OK) {
                status = got;
                rc = MPI_ERR_OTHER;
            } else if (status == SP_OK) status = write_chunk(w, buffer, n, with_threads, err);
        }
        if (status == SP_OK) status = spi_writer_end_row(w, err);
    }
    release(rows);
    char *trailer = spi_malloc(trailer_bytes(counts->rows));
    if (!trailer && status == SP_OK)
        status = spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory receiving rows");
    if (rc == MPI_SUCCESS) {
        got = recv_bounded(trailer, trailer ? (int)trailer_bytes(counts->rows) : 0, MPI_BYTE, rank,
                           TAG_TRAILER, "receiving statistics", err);
        if (got != SP_OK) rc = MPI_ERR_OTHER;
        if (got != SP_OK && status == SP_OK) status = got;
    }
    if (rc == MPI_SUCCESS && trailer && status == SP_OK) {
        int64_t sent = ((const wire_trailer *)trailer)->status;
        if (sent != SP_OK)
            status = spi_error_set(err, (int)sent, "rank %d could not read back its calls", rank);
        for (uint64_t r = 0; r < counts->rows && status == SP_OK; r++) {
            spi_stats stats;
            memcpy(&stats, trailer + sizeof(wire_trailer) + r * sizeof stats, sizeof stats);
            status = spi_writer_set_row_stats(w, *row_cursor + r, &stats, err);
        }
    }
    *row_cursor += counts->rows;
    release(trailer);
    return rc == MPI_SUCCESS ? status : (status == SP_OK ? SP_ERR_MPI : status);
}

static int write_local_rows(spi_writer *w, const spi_profile *local, const long *region_map,
                            int64_t *buffer, int with_threads, uint64_t *row_cursor,
                            spi_error *err) {
    int status = SP_OK;
    for (size_t r = 0; r < local->row_count && status == SP_OK; r++) {
        const spi_row *row = &local->rows[r];
        spi_row_header header = {.region = (uint32_t)region_map[row->region], .rank = 0,
                                 .exclusive_total = row->exclusive_total,
                                 .source_line = row->source_line, .stats = row->stats,
                                 .aggregate_count = row->aggregate_count,
                                 .aggregate_total = row->aggregate_total,
                                 .aggregate_minimum = row->aggregate_minimum,
                                 .aggregate_maximum = row->aggregate_maximum,
                                 .aggregate_exclusive = row->aggregate_exclusive};
        status = spi_writer_begin_row(w, &header, err);
        for (uint64_t first = 0; first < row->count && status == SP_OK; first += CHUNK_EVENTS) {
            size_t n = row->count - first < CHUNK_EVENTS ? (size_t)(row->count - first) : CHUNK_EVENTS;
            status = pack_chunk(buffer, local, r, first, n, err);
            if (status == SP_OK) status = write_chunk(w, buffer, n, with_threads, err);
        }
        if (status == SP_OK)
            status = spi_writer_set_row_stats(w, *row_cursor, spi_profile_row_stats(local, r), err);
        if (status == SP_OK) status = spi_writer_end_row(w, err);
        (*row_cursor)++;
    }
    return status;
}

/* ---- gathering --------------------------------------------------------------------- */

/* Counts and displacements (in bytes) for a Gatherv, checked against the
 * int limit of the MPI-3 interface. */
static int byte_layout(const wire_counts *counts, size_t field, size_t unit, int *sizes,
                       int *displs, uint64_t *total) {
    *total = 0;
    for (int r = 0; r < job_size; r++) {
        const uint64_t *value = (const uint64_t *)((const char *)&counts[r] + field);
        uint64_t bytes = *value * unit;
        if (bytes > (uint64_t)INT32_MAX || *total > (uint64_t)INT32_MAX) return SP_ERR_UNSUPPORTED;
        sizes[r] = (int)bytes;
        displs[r] = (int)*total;
        *total += bytes;
    }
    return *total > (uint64_t)INT32_MAX ? SP_ERR_UNSUPPORTED : SP_OK;
}

/* Aggregate mode's call paths (a few thousand records per rank at most) go
 * to rank 0 in one Gatherv and land in `into` with the job's region ids
 * and their rank set, ready for the writer. Collective; every rank calls
 * it whatever its status. */
static int gather_paths(const spi_profile *local, const wire_counts *counts,
                        const long *region_map, const long *region_maps, spi_profile *into,
                        int status, spi_error *err) {
    int *sizes = job_rank == 0 ? spi_calloc((size_t)job_size, sizeof *sizes) : NULL;
    int *displs = job_rank == 0 ? spi_calloc((size_t)job_size, sizeof *displs) : NULL;
    uint64_t bytes = 0;
    if (job_rank == 0 && (!sizes || !displs) && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
    if (job_rank == 0 && sizes && displs && counts) {
        int layout = byte_layout(counts, offsetof(wire_counts, paths), sizeof(spi_call_path),
                                 sizes, displs, &bytes);
        if (layout != SP_OK && status == SP_OK) status = layout;
    }
    /* The receive buffer exists whatever the status: the other ranks send
     * their paths in any case, and a collective must not be skipped. */
    if (job_rank == 0) {
        into->paths = spi_malloc((size_t)bytes + 1);
        if (!into->paths && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
    }
    size_t mine = local->path_count * sizeof(spi_call_path);
    int got = gatherv_bounded(local->paths, mine > (size_t)INT32_MAX ? 0 : (int)mine, MPI_BYTE,
                              into->paths, sizes, displs, MPI_BYTE, "gathering call paths", err);
    if (got != SP_OK && status == SP_OK) status = got;
    if (got != SP_OK && job_rank == 0) { /* MPI may still write them: kept */
        spi_job_park(into->paths);
        into->paths = NULL;
    }
    if (job_rank == 0 && status == SP_OK && into->paths) {
        into->path_count = (size_t)(bytes / sizeof(spi_call_path));
        size_t i = 0;
        for (int r = 0; r < job_size; r++)
            for (uint64_t k = 0; k < counts[r].paths; k++, i++) {
                into->paths[i].rank = (uint32_t)r;
                into->paths[i].region = (uint32_t)region_map[region_maps[r] + into->paths[i].region];
            }
    }
    release(sizes);
    release(displs);
    return status;
}

int spi_job_write(const spi_profile *local, const char *path, spi_job_totals *totals,
                  spi_error *err) {
    *totals = (spi_job_totals){0};
    if (job_comm == MPI_COMM_NULL) {
        *totals = (spi_job_totals){.ranks = 1, .rows = local->row_count,
                                   .events = spi_profile_call_count(local),
                                   .regions = local->name_count};
        return spi_profile_write(local, path, err);
    }
    /* every rank here before the first blocking collective */
    MPI_Request arrival;
    int rc = PMPI_Ibarrier(job_comm, &arrival);
    int arrived = rc == MPI_SUCCESS ? wait_for_every_rank(&arrival, "reached sp_finalize", err)
                                    : spi_job_mpi_fail(err, rc, "waiting for every rank");
    if (arrived != SP_OK) {
        job_broken = 1; /* no further collective on job_comm: it could never end */
        return arrived;
    }
    int root = job_rank == 0;
    wire_counts mine = {.rows = local->row_count, .events = local->event_count,
                        .threads = local->thread_count, .event_columns = local->event_columns,
                        .calls = spi_profile_call_count(local), .paths = local->path_count,
                        .aggregate = local->aggregate};
    char *names = spi_job_pack_names(local, &mine.name_bytes);
    wire_thread *threads = spi_job_pack_threads(local, (uint32_t)job_rank);
    int64_t *buffer = spi_malloc(sizeof(int64_t) * CHUNK_EVENTS * WIRE_COLUMNS);
    wire_counts *counts = root ? spi_calloc((size_t)job_size, sizeof *counts) : NULL;
    int *sizes = root ? spi_calloc((size_t)job_size, sizeof(int)) : NULL;
    int *displs = root ? spi_calloc((size_t)job_size, sizeof(int)) : NULL;
    char *all_names = NULL;
    wire_thread *all_threads = NULL;
    long *region_maps = NULL; /* per rank: offset into region_map_of */
    long *region_map = NULL;
    name_union u = {0};
    spi_writer *w = NULL;
    int status = names && threads && buffer && (!root || (counts && sizes && displs))
                     ? SP_OK
                     : SP_ERR_OUT_OF_MEMORY;
    /* Every rank takes part in every collective below, whatever its local
     * status, so that a failure on one rank cannot hang the others. */
    /* A second step, also nonblocking: a rank that reaches finalize after
     * the others gave up completes the barrier they left pending, but
     * never this reduction (they never post it), so it gives up too instead
     * of blocking in the gather below. (A gather would not do: it may end
     * on a non-root rank before the root joins.) */
    MPI_Request confirmed;
    int here = 1, everyone = 0;
    rc = PMPI_Iallreduce(&here, &everyone, 1, MPI_INT, MPI_MIN, job_comm, &confirmed);
    int counted = rc == MPI_SUCCESS ? wait_for_every_rank(&confirmed, "reached sp_finalize", err)
                                    : spi_job_mpi_fail(err, rc, "waiting for every rank");
    /* parallel HDF5: every rank writes its own part (job_parallel.c) */
    bool parallel = counted == SP_OK && spi_job_parallel_chosen(job_comm, local, path);
    if (counted != SP_OK || parallel) {
        job_broken = counted != SP_OK;
        spi_free(names);
        spi_free(threads);
        spi_free(buffer);
        spi_free(counts);
        spi_free(sizes);
        spi_free(displs);
        if (!parallel) return counted;
        int written = spi_job_parallel_write(job_comm, local, path, totals, err);
        if (spi_job_gave_up()) job_broken = 1; /* a wait in there gave up */
        return written;
    }
    snprintf(job_where, sizeof job_where,
             "nothing was written: %s keeps what it held, and no rank's calls are in a file", path);
    spi_job_fault_point(job_rank, "counts");
    int got = gather_bounded(&mine, sizeof mine, MPI_BYTE, counts, sizeof mine, MPI_BYTE,
                             "gathering counts", err);
    if (got != SP_OK && status == SP_OK) status = got;

    uint64_t name_total = 0, thread_total = 0, rows_total = 0, events_total = 0, calls_total = 0;
    bool aggregate = false;
    unsigned columns = 0;
    if (root && status == SP_OK) {
        status = byte_layout(counts, offsetof(wire_counts, name_bytes), 1, sizes, displs, &name_total);
        all_names = spi_malloc(name_total ? name_total : 1);
        if (!all_names) status = SP_ERR_OUT_OF_MEMORY;
    }
    got = gatherv_bounded(names, (int)mine.name_bytes, MPI_CHAR, all_names, sizes, displs,
                          MPI_CHAR, "gathering region names", err);
    if (got != SP_OK && status == SP_OK) status = got;
    if (root && status == SP_OK) {
        status = byte_layout(counts, offsetof(wire_counts, threads), sizeof(wire_thread), sizes,
                             displs, &thread_total);
        all_threads = spi_malloc(thread_total ? thread_total : 1);
        if (!all_threads) status = SP_ERR_OUT_OF_MEMORY;
    }
    got = gatherv_bounded(threads, (int)(mine.threads * sizeof(wire_thread)), MPI_BYTE,
                          all_threads, sizes, displs, MPI_BYTE, "gathering thread tables", err);
    if (got != SP_OK && status == SP_OK) status = got;
    spi_profile counters = {0}; /* only its perf/likwid records and paths are used */
    if (!job_broken) {
        status = spi_job_gather_counters(job_comm, local, &counters, status, err);
        /* a wait that gave up in there: no further collective */
        if (spi_job_gave_up()) job_broken = 1;
    } else if (status == SP_OK) {
        status = SP_ERR_MPI;
    }

    if (root && status == SP_OK) {
        /* Union of region names, first seen by rank; map each rank's ids. */
        uint64_t local_names = 0;
        for (int r = 0; r < job_size; r++) {
            rows_total += counts[r].rows;
            events_total += counts[r].events;
            calls_total += counts[r].calls;
            columns |= (unsigned)counts[r].event_columns;
            aggregate = aggregate || counts[r].aggregate;
        }
        /* One file has one layout: a job whose ranks recorded in different
         * modes (SCOPE_PROFILER_MODE set on some ranks only) cannot be
         * written as one profile. Named against rank 0's mode, so the two
         * ranks are always two different ones. */
        bool root_aggregate = counts[0].aggregate != 0;
        for (int r = 1; r < job_size && status == SP_OK; r++)
            if ((counts[r].aggregate != 0) != root_aggregate)
                status = spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                       "%s: rank 0 recorded in %s mode but rank %d in %s mode; "
                                       "set SCOPE_PROFILER_MODE on every rank",
                                       path, root_aggregate ? "aggregate" : "trace", r,
                                       root_aggregate ? "trace" : "aggregate");
        for (uint64_t b = 0; b < name_total; b++) local_names += all_names[b] == '\0';
        u.capacity = 64;
        while (u.capacity < local_names * 2 + 2) u.capacity *= 2;
        u.names = spi_calloc((size_t)local_names + 1, sizeof *u.names);
        u.slots = spi_calloc(u.capacity, sizeof *u.slots);
        region_map = spi_calloc((size_t)local_names + 1, sizeof *region_map);
        region_maps = spi_calloc((size_t)job_size + 1, sizeof *region_maps);
        if (!u.names || !u.slots || !region_map || !region_maps) status = SP_ERR_OUT_OF_MEMORY;
        /* displs now describe the thread gather: walk the names by count. */
        char *cursor = all_names;
        long mapped = 0;
        for (int r = 0; r < job_size && status == SP_OK; r++) {
            region_maps[r] = mapped;
            char *end = cursor + counts[r].name_bytes;
            for (; cursor < end; cursor += strlen(cursor) + 1)
                region_map[mapped++] = spi_name_union_add(&u, cursor);
        }
    }
    /* call paths after the region union: their ids are mapped on arrival */
    status = gather_paths(local, counts, region_map, region_maps, &counters, status, err);
    if (root && status == SP_OK) {
        spi_writer_layout layout = {.row_count = rows_total, .event_count = events_total,
                                    .region_count = u.count,
                                    .thread_count = thread_total / sizeof(wire_thread),
                                    .event_columns = columns, .aggregate = aggregate};
        status = spi_writer_create(&w, path, &layout, err);
        if (status == SP_OK) status = spi_writer_write_metadata(w, &local->metadata, err);
        if (status == SP_OK)
            status = spi_writer_write_region_names(w, (const char *const *)u.names, u.count, err);
        size_t thread_count = (size_t)(thread_total / sizeof(wire_thread));
        spi_thread_row *thread_rows = spi_calloc(thread_count ? thread_count : 1, sizeof *thread_rows);
        if (!thread_rows && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
        for (size_t i = 0; thread_rows && i < thread_count; i++) {
            thread_rows[i] = spi_wire_thread_row(&all_threads[i]);
        }
        if (status == SP_OK) status = spi_writer_write_threads(w, thread_rows, thread_count, err);
        spi_free(thread_rows);
    }
    /* Tell every rank whether rank 0 can take its data. */
    int ready = status;
    got = bcast_int_bounded(&ready, "starting the write", err);
    if (got != SP_OK && status == SP_OK) status = got;
    if (ready == SP_OK && status == SP_OK) {
        if (root) {
            int with_threads = (columns & SPI_EV_BIT(SPI_EV_THREAD_IDS)) != 0;
            uint64_t row_cursor = 0;
            status = write_local_rows(w, local, region_map + region_maps[0], buffer, with_threads,
                                      &row_cursor, err);
            for (int r = 1; r < job_size; r++) {
                int received = receive_rank(w, status, r, &counts[r], region_map + region_maps[r],
                                            buffer, &row_cursor, err);
                if (status == SP_OK) status = received;
            }
            if (status == SP_OK) status = spi_h5_write_counter_groups(spi_writer_file(w), &counters, err);
            if (status == SP_OK) status = spi_h5_write_call_paths(spi_writer_file(w), &counters, err);
            if (status == SP_OK) status = spi_writer_publish(w, err);
            else spi_writer_abort(w);
            w = NULL;
            totals->ranks = (uint32_t)job_size;
            totals->rows = rows_total;
            totals->events = calls_total;
            totals->regions = u.count;
        } else {
            status = send_rows(local, buffer, err);
        }
    } else if (root) {
        spi_writer_abort(w);
        w = NULL;
    }
    int final_status = status;
    if (!root)
        snprintf(job_where, sizeof job_where,
                 "this rank's calls were sent; whether rank 0 published %s is unknown (see its "
                 "message)", path);
    got = bcast_int_bounded(&final_status, "agreeing on the end of the write", err);
    if (got != SP_OK && status == SP_OK) status = got;
    if (!root && status == SP_OK && final_status != SP_OK)
        status = spi_error_set(err, final_status, "rank 0 could not write %s (see its message)", path);
    if (!root && ready != SP_OK && status == SP_OK)
        status = spi_error_set(err, ready, "rank 0 could not create %s (see its message)", path);

    /* after a wait gave up, MPI may still touch what was sent or received */
    release(names);
    release(threads);
    release(buffer);
    release(counts);
    release(sizes);
    release(displs);
    release(all_names);
    release(all_threads);
    spi_free(region_maps);
    spi_free(region_map);
    spi_free(u.names);
    spi_free(u.slots);
    spi_profile_free(&counters);
    if (status == SP_ERR_OUT_OF_MEMORY && err && err->status == SP_OK)
        spi_error_set(err, status, "%s: out of memory while writing the job's profile", path);
    return status;
}
