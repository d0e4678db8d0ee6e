/*
 * halo.c - the C part of the mixed_kernel example: a "boundary exchange"
 * called from Fortran every time step. Its regions nest inside the Fortran
 * caller's open "timestep" call, because both languages record into the
 * same per-thread call stack of the one C core.
 */
#include <stddef.h>

#include "scope_profiler.h"
#ifdef SP_EXAMPLE_MPI
#include <mpi.h>
#endif

double c_halo_exchange(double *u, int n);

/* Sum of the grid's boundary (column-major n x n, as Fortran stores it),
 * globally over ranks when MPI is there. */
double c_halo_exchange(double *u, int n) {
    sp_region_begin("c.halo");
    sp_region_begin("c.pack");
    double local = 0.0;
    for (int i = 0; i < n; i++) {
        local += u[i] + u[(size_t)(n - 1) * n + i];                 /* first, last column */
        local += u[(size_t)i * n] + u[(size_t)i * n + (n - 1)];     /* first, last row */
    }
    sp_region_end("c.pack");
    double global = local;
#ifdef SP_EXAMPLE_MPI
    sp_region_begin("c.allreduce");
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    sp_region_end("c.allreduce");
#endif
    sp_region_end("c.halo");
    return global;
}
