/*
 * pmpi_adopt.c - a program written for the profiler's own MPI setup
 * (sp_setup after MPI_Init, as the README shows), run with the PMPI
 * wrappers, which already started a session at MPI_Init: its sp_setup must
 * take that session over (issue 30), keeping the MPI calls recorded before
 * it, and the file must be the program's.
 *
 * Every mode: MPI_Init; a barrier (before the program's setup); the
 * setup; region "solve" around two allreduces; a barrier.
 *   plain     sp_setup("mine.h5"); a second sp_setup is refused (the
 *             session is the program's now); sp_finalize before MPI_Finalize
 *   options   sp_setup_with_options: mine.h5, label "adopted", aggregate
 *             mode (cannot change mid-session: one message on rank 0);
 *             the session is finalized inside MPI_Finalize
 *   missing   sp_setup("no_such_dir/mine.h5") fails (SP_ERR_OUTPUT) and the
 *             wrappers' session goes on; sp_setup("mine.h5") then takes it
 *             over; sp_finalize before MPI_Finalize
 * Prints "pmpi_adopt: rank R ok" when every profiler call returned what it
 * must, and exits 0; otherwise says what and exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

static int rank = 0, failures = 0;

static void expect(const char *what, int got, int want) {
    if (got == want) return;
    printf("pmpi_adopt: rank %d: %s returned %s, expected %s\n", rank, what,
           sp_status_name(got), sp_status_name(want));
    failures++;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "plain";
    if (!sp_is_active()) {
        printf("pmpi_adopt: rank %d: the wrappers started no session\n", rank);
        failures++;
    }
    MPI_Barrier(MPI_COMM_WORLD); /* recorded before the program's setup */

    if (strcmp(mode, "options") == 0) {
        sp_options options;
        sp_options_init(&options);
        options.file_path = "mine.h5";
        options.label = "adopted";
        options.mode = SP_MODE_AGGREGATE;
        expect("sp_setup_with_options", sp_setup_with_options(&options), SP_OK);
    } else {
        if (strcmp(mode, "missing") == 0)
            expect("sp_setup(\"no_such_dir/mine.h5\")", sp_setup("no_such_dir/mine.h5"),
                   SP_ERR_OUTPUT);
        expect("sp_setup(\"mine.h5\")", sp_setup("mine.h5"), SP_OK);
        expect("a second sp_setup", sp_setup("other.h5"), SP_ERR_ALREADY_ACTIVE);
    }
    expect("sp_is_active", sp_is_active(), 1);

    double in = 1.0, out = 0.0;
    expect("sp_region_begin", sp_region_begin("solve"), SP_OK);
    for (int i = 0; i < 2; i++) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    expect("sp_region_end", sp_region_end("solve"), SP_OK);
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "options") != 0) expect("sp_finalize", sp_finalize(), SP_OK);
    if (!failures) printf("pmpi_adopt: rank %d ok\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return failures ? 1 : 0;
}
