/*
 * gptl_app.c - a GPTL-annotated program, written against GPTL's API only
 * (gptl.h, and MPI when SP_TEST_MPI, as a GPTL code's own HAVE_MPI), built
 * unchanged against libscopeprofiler_gptl. check_shims.py runs it and
 * checks the file: regions, counts and nesting.
 *
 *   gptl_app plan   the timers of a small model run (rank r: r+1 "rank_work")
 *   gptl_app early  the same, GPTLinitialize called before MPI_Init
 *   gptl_app bad    GPTL's error cases: each call must return GPTL's code
 *
 * Each GPTL return code is checked here; a wrong one prints the call and
 * the program exits 1 (after finishing MPI, so the job ends cleanly).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef SP_TEST_MPI
#include <mpi.h>
#endif
#include <gptl.h>

static int failures = 0;

#define EXPECT(call, want)                                                            \
    do {                                                                              \
        int got_ = (call);                                                            \
        if (got_ != (want)) {                                                         \
            fprintf(stderr, "gptl_app: %s:%d: %s returned %d, expected %d\n", __FILE__, \
                    __LINE__, #call, got_, (want));                                   \
            failures++;                                                               \
        }                                                                             \
    } while (0)

static void physics(void) {
    EXPECT(GPTLstart("physics"), 0);
    EXPECT(GPTLstop("physics"), 0);
}

/* `ms` milliseconds of wall time (nanosleep resumed after a signal). */
static void nap_ms(int ms) {
    struct timespec left = {0, (long)ms * 1000000L};
    while (nanosleep(&left, &left) != 0) {
    }
}

/* Running values (GPTLquery, GPTLget_wallclock) in a time loop, as
 * adaptive time stepping reads them: inside the timer it is on and counts
 * the finished calls; after NAPS calls of known lengths the count is NAPS
 * and the wall time at least their sum. The values are printed for
 * check_shims.py, which compares them with the calls in the file. */
#define NAPS 3
static void naps(int rank) {
    for (int i = 0; i < NAPS; i++) {
        EXPECT(GPTLstart("nap"), 0);
        int count = -1, onflg = -1;
        double wall = -1, usr = -1, sys = -1;
        EXPECT(GPTLquery("nap", -1, &count, &onflg, &wall, &usr, &sys, NULL, 0), 0);
        if (count != i || onflg != 1) {
            fprintf(stderr, "gptl_app: GPTLquery inside nap %d gave count %d onflg %d\n", i,
                    count, onflg);
            failures++;
        }
        nap_ms(2 * (i + 1));
        EXPECT(GPTLstop("nap"), 0);
    }
    int count = -1, onflg = -1;
    double wall = -1, usr = -1, sys = -1, wallclock = -1;
    EXPECT(GPTLquery("nap", -1, &count, &onflg, &wall, &usr, &sys, NULL, 0), 0);
    EXPECT(GPTLget_wallclock("nap", -1, &wallclock), 0);
    if (count != NAPS || onflg != 0 || wall < 0.012 || wallclock != wall) {
        fprintf(stderr, "gptl_app: GPTLquery after the naps gave count %d onflg %d wallclock "
                "%.9f, GPTLget_wallclock %.9f\n", count, onflg, wall, wallclock);
        failures++;
    }
    printf("gptl_app: rank %d nap count %d wallclock %.9f\n", rank, count, wall);
    fflush(stdout);
}

static void setup(void) {
    EXPECT(GPTLsetoption(GPTLoverhead, 0), 0); /* accepted, noted as not implemented */
    EXPECT(GPTLsetoption(GPTLwall, 1), 0);     /* what happens anyway: silent */
    EXPECT(GPTLinitialize(), 0);
}

static void plan(int rank) {
    EXPECT(GPTLstart("total"), 0);
    static int dynamics = 0; /* GPTL's lazily resolved handle */
    for (int step = 0; step < 3; step++) {
        EXPECT(GPTLstart("step"), 0);
        physics();
        EXPECT(GPTLstart_handle("dynamics", &dynamics), 0);
        EXPECT(GPTLstop_handle("dynamics", &dynamics), 0);
        EXPECT(GPTLstop("step"), 0);
    }
    for (int i = 0; i <= rank; i++) {
        EXPECT(GPTLstart("rank_work"), 0);
        EXPECT(GPTLstop("rank_work"), 0);
    }
    naps(rank);
    EXPECT(GPTLdisable(), 0);
    EXPECT(GPTLstart("while_disabled"), 0); /* not recorded */
    EXPECT(GPTLstop("while_disabled"), 0);
    EXPECT(GPTLenable(), 0);
    EXPECT(GPTLstop("total"), 0);
    double wall = 0, usr = 0, sys = 0;
    EXPECT(GPTLstamp(&wall, &usr, &sys), 0);
    if (wall <= 0) {
        fprintf(stderr, "gptl_app: GPTLstamp gave wall %g\n", wall);
        failures++;
    }
    EXPECT(GPTLpr(rank), 0);
#ifdef SP_TEST_MPI
    EXPECT(GPTLpr_summary(MPI_COMM_WORLD), 0);
#else
    EXPECT(GPTLpr_summary(0), 0);
#endif
    EXPECT(GPTLfinalize(), 0);
}

static void bad(void) {
    EXPECT(GPTLstart("early"), -1); /* before GPTLinitialize */
    EXPECT(GPTLinitialize(), 0);
    EXPECT(GPTLinitialize(), -1);   /* twice */
    EXPECT(GPTLsetoption(GPTLverbose, 1), -1); /* after GPTLinitialize */
    EXPECT(GPTLstart("outer"), 0);
    EXPECT(GPTLstop("never_started"), -1);
    int bogus = 12345;
    EXPECT(GPTLstart_handle("bogus", &bogus), -1);
    EXPECT(GPTLstart("inner"), 0);
    EXPECT(GPTLstop("outer"), -1); /* out of nesting order: nothing changes */
    EXPECT(GPTLstop("inner"), 0);
    EXPECT(GPTLstop("outer"), 0);
    static char long_name[3001];
    memset(long_name, 'n', 3000);
    EXPECT(GPTLstart(long_name), 0); /* cut to 1024 bytes, noted once */
    EXPECT(GPTLstop(long_name), 0);
    double value = -1;
    EXPECT(GPTLget_wallclock("outer", 0, &value), 0); /* t = 0: noted, the caller's */
    if (!(value > 0)) {
        fprintf(stderr, "gptl_app: GPTLget_wallclock(\"outer\") gave %g\n", value);
        failures++;
    }
    EXPECT(GPTLget_wallclock("never_started", -1, &value), -1); /* GPTL: not found */
    EXPECT(GPTLget_wallclock("outer", -1, NULL), -1);
    EXPECT(GPTLstart(NULL), -1);
    EXPECT(GPTLfinalize(), 0);
    EXPECT(GPTLfinalize(), -1); /* not initialized any more */
}

int main(int argc, char **argv) {
    int rank = 0;
    const char *mode = argc > 1 ? argv[1] : "plan";
    /* "early": GPTLinitialize before MPI_Init (a common GPTL habit); the
     * job must still write one file, at GPTLfinalize. */
    if (strcmp(mode, "early") == 0) setup();
#ifdef SP_TEST_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    if (strcmp(mode, "bad") == 0) {
        bad();
    } else {
        if (strcmp(mode, "early") != 0) setup();
        plan(rank);
    }
#ifdef SP_TEST_MPI
    MPI_Finalize();
#endif
    if (failures) fprintf(stderr, "gptl_app: %d unexpected return codes\n", failures);
    return failures ? 1 : 0;
}
