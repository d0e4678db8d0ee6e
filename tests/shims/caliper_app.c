/*
 * caliper_app.c - a Caliper-annotated program, written against Caliper's
 * C API only (<caliper/cali.h>, and MPI when SP_TEST_MPI), built unchanged
 * against libscopeprofiler_caliper. check_shims.py runs it and checks the
 * file: regions, counts and nesting.
 *
 *   caliper_app plan   regions, a marked loop, an attribute, rank r: r+1
 *                      "rank_work", with OpenMP one "threaded" per thread
 *                      of a team of 2; no explicit finish (exit or
 *                      MPI_Finalize)
 *   caliper_app bad    mismatched and unmatched ends, unknown attributes,
 *                      a NULL and an over-long name: the program goes on
 */
#include <stdlib.h>
#include <string.h>

#ifdef SP_TEST_MPI
#include <mpi.h>
#endif
#include <caliper/cali.h>

static void solve(void) {
    cali_begin_region("solve");
    cali_end_region("solve");
}

static void plan(int rank) {
    cali_config_set("CALI_SERVICES_ENABLE", "aggregate,event,timestamp"); /* one message */
    CALI_MARK_FUNCTION_BEGIN;                                                /* "plan" */
    CALI_MARK_BEGIN("setup");
    CALI_MARK_END("setup");
    CALI_MARK_LOOP_BEGIN(timeloop, "timeloop");
    for (int i = 0; i < 3; i++) {
        CALI_MARK_ITERATION_BEGIN(timeloop, i);
        solve();
        CALI_MARK_ITERATION_END(timeloop);
    }
    CALI_MARK_LOOP_END(timeloop);
    cali_id_t phase = cali_create_attribute("phase", CALI_TYPE_STRING, CALI_ATTR_NESTED);
    cali_begin_string(phase, "output");
    cali_end(phase);
    for (int i = 0; i <= rank; i++) {
        CALI_MARK_BEGIN("rank_work");
        CALI_MARK_END("rank_work");
    }
#ifdef _OPENMP
    /* Each thread its own annotation stack; workers' calls land under the
     * call the team was forked in. */
#pragma omp parallel num_threads(2)
    {
        CALI_MARK_BEGIN("threaded");
        CALI_MARK_END("threaded");
    }
#endif
    CALI_MARK_FUNCTION_END;
}

static void bad(void) {
    cali_end_region("nothing_open");      /* noted, nothing changes */
    cali_begin_region("a");
    cali_begin_region("b");
    cali_end_region("a");                 /* mismatch: "b" closes (Caliper's rule) */
    cali_end_region("a");
    cali_begin(999999);                   /* unknown attribute: noted */
    cali_begin_region(NULL);              /* noted */
    static char long_name[3001];
    memset(long_name, 'n', 3000);
    cali_begin_region(long_name);         /* cut to 1024 bytes, noted */
    cali_end_region(long_name);
    cali_id_t iteration = cali_create_attribute("iteration", CALI_TYPE_INT, CALI_ATTR_ASVALUE);
    cali_set_int(iteration, 3);           /* a value, not a region: noted */
    cali_end(iteration);                  /* fine after a set */
}

int main(int argc, char **argv) {
    int rank = 0;
#ifdef SP_TEST_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    if (argc > 1 && strcmp(argv[1], "bad") == 0)
        bad();
    else
        plan(rank);
#ifdef SP_TEST_MPI
    MPI_Finalize();
#endif
    return 0;
}
