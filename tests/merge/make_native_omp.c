/*
 * make_native_omp - record a native profile whose rank has several lanes,
 * for the merge's lane tests: "native:solve" on the main thread encloses
 * an OpenMP team (THREADS threads) in which every thread records
 * "native:omp_work" > "native:omp_inner". The workers' root calls get the
 * forking "native:solve" call as their stored parent, on another thread
 * (docs/FORMAT.md 4.2): the case the package never nests across lanes.
 *
 *   make_native_omp OUT [STEPS [THREADS]]
 */
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: make_native_omp OUT [STEPS [THREADS]]\n");
        return 2;
    }
    long steps = argc > 2 ? atol(argv[2]) : 3;
    int threads = argc > 3 ? atoi(argv[3]) : 3;
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.label = "native-omp";
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    int work = sp_region("native:omp_work"), inner = sp_region("native:omp_inner");
    volatile double sink = 0;
    for (long s = 0; s < steps; s++) {
        sp_region_begin("native:solve");
#pragma omp parallel num_threads(threads)
        {
            sp_begin(work);
            for (int k = 0; k < 2; k++) {
                sp_begin(inner);
                for (int x = 0; x < 20000; x++) sink = sink + x * 0.5;
                sp_end(inner);
            }
            sp_end(work);
        }
        sp_region_end("native:solve");
    }
    return sp_finalize() == SP_OK ? 0 : 1;
}
