/*
 * likwid_app.c - a program with LIKWID markers, written against LIKWID's
 * own header (likwid-marker.h, compiled with -DLIKWID_PERFMON; MPI when
 * SP_TEST_MPI), linked against libscopeprofiler_likwid_markers instead of
 * -llikwid, or linked against liblikwid and run with our library in
 * LD_PRELOAD. check_shims.py runs it and checks the file.
 *
 *   likwid_app plan   markers of a small kernel (rank r: r+1 "rank_work")
 *   likwid_app bad    LIKWID's error cases: each call must return LIKWID's code
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef SP_TEST_MPI
#include <mpi.h>
#endif
#include <likwid-marker.h>

static int failures = 0;

#define EXPECT(call, want)                                                              \
    do {                                                                                \
        int got_ = (call);                                                              \
        if (got_ != (want)) {                                                           \
            fprintf(stderr, "likwid_app: %s:%d: %s returned %d, expected %d\n", __FILE__, \
                    __LINE__, #call, got_, (want));                                     \
            failures++;                                                                 \
        }                                                                               \
    } while (0)

static void plan(int rank) {
    LIKWID_MARKER_INIT;
    LIKWID_MARKER_THREADINIT;
    LIKWID_MARKER_REGISTER("compute");
    LIKWID_MARKER_START("total");
    for (int i = 0; i < 3; i++) {
        LIKWID_MARKER_START("compute");
        LIKWID_MARKER_STOP("compute");
    }
    for (int i = 0; i <= rank; i++) {
        LIKWID_MARKER_START("rank_work");
        LIKWID_MARKER_STOP("rank_work");
    }
    LIKWID_MARKER_SWITCH;
    LIKWID_MARKER_STOP("total");
    LIKWID_MARKER_CLOSE;
}

static void bad(void) {
    EXPECT(likwid_markerStartRegion("early"), -EFAULT); /* before likwid_markerInit */
    likwid_markerInit();
    EXPECT(likwid_markerStartRegion("outer"), 0);
    EXPECT(likwid_markerStopRegion("never_started"), -EFAULT);
    EXPECT(likwid_markerStartRegion("inner"), 0);
    EXPECT(likwid_markerStopRegion("outer"), -EFAULT); /* out of nesting order */
    EXPECT(likwid_markerStopRegion("inner"), 0);
    EXPECT(likwid_markerStopRegion("outer"), 0);
    static char long_name[3001];
    memset(long_name, 'n', 3000);
    EXPECT(likwid_markerStartRegion(long_name), 0); /* cut to 1024 bytes, noted */
    EXPECT(likwid_markerStopRegion(long_name), 0);
    EXPECT(likwid_markerResetRegion("outer"), 0);   /* accepted, noted */
    int nevents = 4, count = -1;
    double events[4], time = -1;
    likwid_markerGetRegion("outer", &nevents, events, &time, &count); /* zeros, noted */
    if (nevents != 0 || count != 0 || time != 0.0) {
        fprintf(stderr, "likwid_app: likwid_markerGetRegion gave %d events, count %d\n",
                nevents, count);
        failures++;
    }
    likwid_markerClose();
    EXPECT(likwid_markerStopRegion("outer"), -EFAULT); /* after likwid_markerClose */
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
    if (failures) fprintf(stderr, "likwid_app: %d unexpected return codes\n", failures);
    return failures ? 1 : 0;
}
