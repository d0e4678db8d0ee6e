/* omp_aggregate OUT.h5 (issue 28): OpenMP teams forked from two different
 * paths of the main thread, with nested regions inside the parallel
 * regions, and one team forked outside any call:
 *
 *   step > stencil > [parallel] row_block > cell
 *   step > halo    > [parallel] pack
 *   [parallel, no enclosing call] loose
 *
 * check_omp_aggregate.py runs it in trace and in aggregate mode and
 * compares the call paths: the workers' calls must hang under the forking
 * path in both, with the same counts. */
#include <omp.h>
#include <scope_profiler.h>
#include <stdio.h>

static double spin(long n) {
    double sink = 0; /* per call: the team never shares it */
    for (long i = 0; i < n; i++) sink += (double)i * 0.5;
    return sink;
}

int main(int argc, char **argv) {
    if (argc != 2 || sp_setup(argv[1]) != SP_OK) return 2;
    double total = 0;
    for (int step = 0; step < 3; step++) {
        sp_region_begin("step");
        sp_region_begin("stencil");
#pragma omp parallel num_threads(4) reduction(+ : total)
        {
#pragma omp for schedule(static)
            for (int row = 0; row < 16; row++) {
                sp_region_begin("row_block");
                for (int c = 0; c < 2; c++) {
                    sp_region_begin("cell");
                    total += spin(2000);
                    sp_region_end("cell");
                }
                sp_region_end("row_block");
            }
        }
        sp_region_end("stencil");
        sp_region_begin("halo");
#pragma omp parallel num_threads(4) reduction(+ : total)
        {
            sp_region_begin("pack");
            total += spin(1000);
            sp_region_end("pack");
        }
        sp_region_end("halo");
        sp_region_end("step");
    }
#pragma omp parallel num_threads(4) reduction(+ : total)
    {
        sp_region_begin("loose");
        total += spin(1000);
        sp_region_end("loose");
    }
    printf("total=%g\n", total);
    return sp_finalize() == SP_OK ? 0 : 1;
}
