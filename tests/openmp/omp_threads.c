/* omp_threads OUT.h5: the summary's threads (issue 34). The main thread's
 * "parent" call spins on its own, then forks a team of 4 whose thread k
 * makes k + 1 "child" calls (1 + 2 + 3 + 4 = 10), then spins again. No
 * thread is named by the program, so the workers are "omp worker 1..3"
 * in the thread table. check_omp_threads.py reads the file, the summary
 * sp_finalize prints, and scope-inspect's table and --threads. */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <scope_profiler.h>
#include <stdio.h>

static void spin(long n) {
    volatile unsigned long sink = 0; /* per call: the team never shares it */
    for (long i = 0; i < n; i++) sink += (unsigned long)i;
}

int main(int argc, char **argv) {
    if (argc != 2 || sp_setup(argv[1]) != SP_OK) return 2;
    sp_region_begin("parent");
    spin(100000);
    int team = 0;
#pragma omp parallel num_threads(4)
    {
#pragma omp single
        team = omp_get_num_threads();
        for (int i = 0; i <= omp_get_thread_num(); i++) {
            sp_region_begin("child");
            spin(1000000);
            sp_region_end("child");
        }
    }
    spin(100000);
    sp_region_end("parent");
    printf("team=%d\n", team);
    return sp_finalize() == SP_OK ? 0 : 1;
}
