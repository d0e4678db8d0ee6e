/*
 * mpi_perf.c - an MPI job with perf events, for check_mpi_perf.py.
 *
 * Usage: mpi_perf OUTPUT. Rank r records "work" 2*(r+1) times (1 ms of CPU
 * each) and "rank.r" r+1 times, with the software events task-clock and
 * page-faults, so every rank's rank<N>/perf_events has known calls. When
 * any rank cannot open perf events, every rank prints nothing but rank 0
 * prints "SKIP: <why>" and the job exits 0 (mpirun would otherwise report
 * a non-zero rank as a failure); the driver turns that line into exit 77.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "scope_profiler.h"

static int perf_permitted(void) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.exclude_kernel = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd < 0) return 0;
    close((int)fd);
    return 1;
}

static void busy_ns(int64_t ns) {
    int64_t end = sp_now_ns() + ns;
    volatile uint64_t x = 0;
    while (sp_now_ns() < end) x += 1;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int mine = perf_permitted(), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0) printf("SKIP: perf_event_open not permitted on some rank\n");
        MPI_Finalize();
        return 0;
    }
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.perf_events = "task-clock,page-faults";
    int status = sp_setup_with_options(&options);
    if (status != SP_OK) {
        fprintf(stderr, "rank %d: setup failed: %s\n", rank, sp_error_string(status));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < 2 * (rank + 1); i++) {
        sp_region_begin("work");
        busy_ns(1000 * 1000);
        sp_region_end("work");
    }
    char own[32];
    snprintf(own, sizeof own, "rank.%d", rank);
    for (int i = 0; i <= rank; i++) {
        sp_region_begin(own);
        sp_region_end(own);
    }
    status = sp_finalize();
    if (status != SP_OK) {
        fprintf(stderr, "rank %d: finalize failed: %s\n", rank, sp_error_string(status));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
    return 0;
}
