/*
 * mpi_order.c - sp_setup BEFORE MPI_Init (the GPTL habit), then:
 *   mpi_order PATH normal           sp_finalize before MPI_Finalize: one file
 *                                   of the whole job
 *   mpi_order PATH late-finalize    MPI_Finalize before sp_finalize: each rank
 *                                   writes its own file, named with its rank
 * Rank r records 1000 * (r + 1) calls of "step" inside one "run"; rank 1
 * also ends a region it never began, and leaves "open.r1" open.
 */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

int main(int argc, char **argv) {
    int status = sp_setup(argc > 1 ? argv[1] : "order.h5");
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sp_region_begin("run");
    for (int i = 0; i < 1000 * (rank + 1); i++) {
        sp_region_begin("step");
        sp_region_end("step");
    }
    sp_region_end("run");
    if (rank == 1) {
        sp_region_end("never.begun");
        sp_region_begin("open.r1");
    }
    bool late = argc > 2 && strcmp(argv[2], "late-finalize") == 0;
    if (late) MPI_Finalize();
    int finalized = sp_finalize();
    if (status == SP_OK) status = finalized;
    printf("rank %d status=%d\n", rank, status);
    if (!late) MPI_Finalize();
    return 0;
}
