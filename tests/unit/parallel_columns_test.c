/*
 * parallel_columns_test.c - the collective writer's compressed event columns
 * (format/h5_parallel_writer.c, issue 31) on synthetic, reproducible calls.
 *
 *   mpirun -np N parallel_columns_test OUT_DIR [SCALE]
 *
 * Every rank builds its own profile from a seeded generator (the values do
 * not depend on a clock, so three writes of them can be compared value for
 * value) and writes:
 *   OUT_DIR/job.h5        every rank's part, through spi_h5_parallel_write
 *   OUT_DIR/rank<r>.h5    this rank alone, through the streaming writer
 *                         (spi_profile_write: libdeflate + H5Dwrite_chunk)
 *   OUT_DIR/rank<r>.raw   the uncompressed reference: int64 call count, then
 *                         starts, durations, call ids, parent ids and thread
 *                         ids, each `count` values in row order (host order)
 * check_parallel_columns.py compares them with h5py.
 *
 * Rank r has three rows, "alpha" (SCALE * (40,000 + 30,011 r) calls),
 * "beta" (1) and "gamma" (SCALE * (25,003 + 7 r)): different sizes on every
 * rank, rank boundaries inside chunks; one thread, calls one after the
 * other. With 3 ranks or more, rank 1 has no
 * rows and no calls. Each rank prints its write times ("rank R: parallel
 * WALL s wall CPU s cpu, serial WALL s wall CPU s cpu") for bench use.
 * Exits 0, or 1 after printing what failed; every rank takes part in every
 * collective call either way.
 *
 * It compiles the modules it tests (tests may include c/src).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "format/h5_parallel_writer.h"
#include "format/h5_writer.h"
#include "format/schema.h"
#include "util/error.h"

#define ROWS 3
#define WAIT_SECONDS 120.0

static const char *const region_names[ROWS] = {"alpha", "beta", "gamma"};
static const uint32_t region_map[ROWS] = {0, 1, 2};

static uint64_t next_random(uint64_t *state) { /* splitmix64 */
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The rank's calls, one array per column over all its rows. */
typedef struct rank_calls {
    uint64_t counts[ROWS];
    size_t rows;
    uint64_t total;
    int64_t *starts, *durations, *call_ids, *parent_ids, *thread_ids;
} rank_calls;

static int make_calls(rank_calls *calls, int rank, int size, uint64_t scale) {
    memset(calls, 0, sizeof *calls);
    if (size >= 3 && rank == 1) return 0; /* a rank that recorded nothing */
    calls->rows = ROWS;
    calls->counts[0] = scale * (40000 + 30011 * (uint64_t)rank);
    calls->counts[1] = 1;
    calls->counts[2] = scale * (25003 + 7 * (uint64_t)rank);
    calls->total = calls->counts[0] + calls->counts[1] + calls->counts[2];
    size_t bytes = (size_t)calls->total * sizeof(int64_t);
    calls->starts = malloc(bytes);
    calls->durations = malloc(bytes);
    calls->call_ids = malloc(bytes);
    calls->parent_ids = malloc(bytes);
    calls->thread_ids = malloc(bytes);
    if (!calls->starts || !calls->durations || !calls->call_ids || !calls->parent_ids ||
        !calls->thread_ids)
        return 1;
    uint64_t state = 1000 + (uint64_t)rank;
    int64_t t = INT64_C(1700000000000000000) + (int64_t)rank * INT64_C(1000000000);
    for (uint64_t i = 0; i < calls->total; i++) {
        /* calls one after the other on one thread (each ends before the
         * next starts), roots: a file scope-check accepts */
        t += 60 + (int64_t)(next_random(&state) % 100);
        calls->starts[i] = t;
        calls->durations[i] = 10 + (int64_t)(next_random(&state) % 50);
        calls->call_ids[i] = (int64_t)i;
        calls->parent_ids[i] = -1;
        calls->thread_ids[i] = 0;
    }
    return 0;
}

static void free_calls(rank_calls *calls) {
    free(calls->starts);
    free(calls->durations);
    free(calls->call_ids);
    free(calls->parent_ids);
    free(calls->thread_ids);
}

/* Thread 0 of `rank`, the one thread that made the calls. */
static spi_thread_row main_thread(int rank) {
    spi_thread_row thread = {.rank = (uint32_t)rank, .index = 0, .ident = 1, .native_id = 1,
                             .daemon = 0, .start_ns = 0, .end_ns = -1, .cpu_ns = 0,
                             .name = (char *)"main"};
    return thread;
}

/* A profile over the arrays (borrowed: freed by free_calls, not here). */
static int make_profile(spi_profile *profile, spi_row *rows, spi_thread_row *thread,
                        rank_calls *calls, int rank) {
    memset(profile, 0, sizeof *profile);
    memset(rows, 0, ROWS * sizeof *rows);
    profile->names = (char **)region_names;
    profile->name_count = ROWS;
    profile->rows = rows;
    profile->row_count = calls->rows;
    profile->event_columns = SPI_EV_BIT(SPI_EV_CALL_IDS) | SPI_EV_BIT(SPI_EV_PARENT_IDS) |
                             SPI_EV_BIT(SPI_EV_THREAD_IDS);
    profile->event_count = calls->total;
    profile->rank_count = 1;
    *thread = main_thread(rank);
    profile->threads = thread;
    profile->thread_count = 1;
    uint64_t first = 0;
    for (size_t r = 0; r < calls->rows; r++) {
        spi_row *row = &rows[r];
        row->region = (uint32_t)r;
        row->rank = (uint32_t)rank;
        row->count = calls->counts[r];
        row->starts = calls->starts + first;
        row->durations = calls->durations + first;
        row->call_ids = calls->call_ids + first;
        row->parent_ids = calls->parent_ids + first;
        row->thread_ids = calls->thread_ids + first;
        row->exclusive_total = -1;
        row->source_line = -1;
        first += row->count;
    }
    spi_error err;
    spi_error_clear(&err);
    int status = spi_profile_compute_stats(profile, "parallel_columns_test", false, &err);
    if (status != SP_OK) fprintf(stderr, "rank %d: statistics: %s\n", rank, err.message);
    return status;
}

static int write_raw(const char *path, const rank_calls *calls) {
    FILE *out = fopen(path, "wb");
    if (!out) return 1;
    int64_t count = (int64_t)calls->total;
    const int64_t *columns[] = {calls->starts, calls->durations, calls->call_ids,
                                calls->parent_ids, calls->thread_ids};
    int failed = fwrite(&count, sizeof count, 1, out) != 1;
    for (size_t c = 0; c < sizeof columns / sizeof columns[0] && !failed && count; c++)
        failed = fwrite(columns[c], sizeof(int64_t), (size_t)count, out) != (size_t)count;
    return fclose(out) != 0 || failed;
}

/* The writer's deadline: poll the request for WAIT_SECONDS. */
static int wait_bounded(MPI_Request *request, int me, int root, const char *phase,
                        spi_error *err) {
    double deadline = MPI_Wtime() + WAIT_SECONDS;
    for (;;) {
        int done = 0;
        if (PMPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return spi_error_set(err, SP_ERR_MPI, "%s: MPI_Test failed on rank %d", phase, me);
        if (done) return SP_OK;
        if (MPI_Wtime() > deadline)
            return spi_error_set(err, SP_ERR_MPI, "%s: no answer within %.0f s (rank %d, root %d)",
                                 phase, WAIT_SECONDS, me, root);
        usleep(50);
    }
}

static double cpu_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: parallel_columns_test OUT_DIR [SCALE]\n");
        MPI_Finalize();
        return 2;
    }
    uint64_t scale = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (scale == 0) scale = 1;
    rank_calls calls;
    spi_profile profile;
    spi_row rows[ROWS];
    spi_thread_row thread;
    int failed = make_calls(&calls, rank, size, scale);
    if (!failed) failed = make_profile(&profile, rows, &thread, &calls, rank) != SP_OK;
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.raw", argv[1], rank);
    if (!failed && write_raw(path, &calls)) {
        fprintf(stderr, "rank %d: cannot write %s\n", rank, path);
        failed = 1;
    }
    /* The plan: totals over the ranks, this rank's place among them. A rank
     * that failed above still takes part, with an empty part. */
    uint64_t mine[2] = {failed ? 0 : calls.rows, failed ? 0 : calls.total};
    uint64_t totals[2] = {0, 0}, before[2] = {0, 0};
    MPI_Allreduce(mine, totals, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(mine, before, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) before[0] = before[1] = 0; /* MPI_Exscan leaves rank 0's undefined */
    unsigned columns = failed ? 0 : profile.event_columns, all_columns = 0;
    MPI_Allreduce(&columns, &all_columns, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD);
    spi_parallel_plan plan = {.row_count = totals[0], .event_count = totals[1],
                              .event_columns = all_columns, .first_row = before[0],
                              .first_event = before[1], .rank = (uint32_t)rank,
                              .region_map = region_map};
    spi_profile empty;
    memset(&empty, 0, sizeof empty);
    spi_meta metadata;
    memset(&metadata, 0, sizeof metadata);
    /* the job's thread table: thread 0 of every rank */
    spi_thread_row *threads = calloc((size_t)size, sizeof *threads);
    for (int r = 0; threads && r < size; r++) threads[r] = main_thread(r);
    spi_parallel_root root = {.metadata = &metadata, .names = region_names, .name_count = ROWS,
                              .threads = threads, .thread_count = threads ? (size_t)size : 0};
    spi_parallel_bounds bounds = {.wait = wait_bounded, .checkpoint = NULL};
    spi_error err;
    spi_error_clear(&err);
    snprintf(path, sizeof path, "%s/job.h5", argv[1]);
    double wall = MPI_Wtime(), cpu = cpu_seconds();
    int status = spi_h5_parallel_write(MPI_COMM_WORLD, path, &plan, failed ? &empty : &profile,
                                       &root, &bounds, &err);
    double parallel_wall = MPI_Wtime() - wall, parallel_cpu = cpu_seconds() - cpu;
    if (status != SP_OK) {
        fprintf(stderr, "rank %d: parallel write: %s\n", rank, err.message);
        failed = 1;
    }
    double serial_wall = 0, serial_cpu = 0;
    if (!failed) {
        snprintf(path, sizeof path, "%s/rank%d.h5", argv[1], rank);
        wall = MPI_Wtime();
        cpu = cpu_seconds();
        spi_error_clear(&err);
        status = spi_profile_write(&profile, path, &err);
        serial_wall = MPI_Wtime() - wall;
        serial_cpu = cpu_seconds() - cpu;
        if (status != SP_OK) {
            fprintf(stderr, "rank %d: serial write: %s\n", rank, err.message);
            failed = 1;
        }
    }
    printf("rank %d: %llu calls: parallel %.4f s wall %.4f s cpu, serial %.4f s wall %.4f s cpu\n",
           rank, (unsigned long long)calls.total, parallel_wall, parallel_cpu, serial_wall,
           serial_cpu);
    fflush(stdout);
    free_calls(&calls);
    free(threads);
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return any_failed ? 1 : 0;
}
