/* aggregate_record OUTPUT MODE [open]: one deterministic run recorded in
 * MODE ("trace" or "aggregate"), so that check_aggregate.py can compare an
 * aggregate file with a trace of the same program.
 *
 * Plan (per rank; rank r of an MPI build does r+1 extra "rank.work"):
 *   main thread: setup once; 6 x timestep { assemble; solve { fib(5) };
 *   every third step io.write }; a worker thread that does 4 x
 *   worker.task { assemble } while the main thread waits for it.
 *   fib(5) is 15 recursive calls of "fib" (a run of one region).
 *   With "open", a region "left.open" is begun and never ended, with one
 *   completed "inside.open" call in it.
 * Every region does a little work so that durations are not all 0. */
#include <pthread.h>
#include <scope_profiler.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef SP_TEST_MPI
#include <mpi.h>
#endif

static volatile unsigned long sink;

static void work(int units) {
    for (int i = 0; i < units * 200; i++) sink += (unsigned long)i * 2654435761u;
}

static int fib(int n) {
    sp_region_begin("fib");
    work(1);
    int r = n < 2 ? n : fib(n - 1) + fib(n - 2);
    sp_region_end("fib");
    return r;
}

static void *worker(void *unused) {
    (void)unused;
    for (int i = 0; i < 4; i++) {
        sp_region_begin("worker.task");
        sp_region_begin("assemble");
        work(3);
        sp_region_end("assemble");
        sp_region_end("worker.task");
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUTPUT trace|aggregate [open]\n", argv[0]);
        return 2;
    }
    int rank = 0;
#ifdef SP_TEST_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.mode = strcmp(argv[2], "aggregate") == 0 ? SP_MODE_AGGREGATE : SP_MODE_TRACE;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    sp_region_begin("setup");
    work(5);
    sp_region_end("setup");
    int step = sp_region("timestep");
    for (int i = 0; i < 6; i++) {
        sp_begin(step);
        sp_region_begin("assemble");
        work(2);
        sp_region_end("assemble");
        sp_region_begin("solve");
        fib(5);
        sp_region_end("solve");
        if (i % 3 == 0) {
            sp_region_begin("io.write");
            work(1);
            sp_region_end("io.write");
        }
        sp_end(step);
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
    pthread_join(thread, NULL);
    for (int i = 0; i <= rank; i++) {
        sp_region_begin("rank.work");
        work(1);
        sp_region_end("rank.work");
    }
    if (argc > 3 && strcmp(argv[3], "open") == 0) {
        sp_region_begin("left.open");
        sp_region_begin("inside.open");
        sp_region_end("inside.open");
    }
    int status = sp_finalize();
#ifdef SP_TEST_MPI
    MPI_Finalize();
#endif
    return status == SP_OK || status == SP_ERR_OPEN_AT_FINALIZE ? 0 : 1;
}
