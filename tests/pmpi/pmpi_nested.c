/*
 * pmpi_nested.c - MPI calls inside a region of the program's own ("solve",
 * recorded through the public API into the session the PMPI wrappers
 * started at MPI_Init): scope-inspect's MPI section must attribute them
 * to "solve" (its "enclosing" list). Three 8-byte allreduces inside, one
 * barrier outside.
 */
#include <mpi.h>

#include "scope_profiler.h"

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    double in = 1.0, out = 0.0;
    sp_region_begin("solve");
    for (int i = 0; i < 3; i++) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sp_region_end("solve");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
