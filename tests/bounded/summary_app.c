/*
 * summary_app.c - a long nested trace finalized with the default summary,
 * for check_summary_memory.py: `summary_app STEPS OUTPUT.h5` records STEPS
 * iterations of a > b > c (3 x STEPS calls), calls sp_finalize (report and
 * summary on stdout) and prints "peak_rss_kib N" (the whole process, so
 * finalize and the summary are included).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "scope_profiler.h"

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    long long steps = atoll(argv[1]);
    if (sp_setup(argv[2]) != SP_OK) return 1;
    int a = sp_region("a"), b = sp_region("b"), c = sp_region("c");
    for (long long i = 0; i < steps; i++) {
        sp_begin(a);
        sp_begin(b);
        sp_begin(c);
        sp_end(c);
        sp_end(b);
        sp_end(a);
    }
    int status = sp_finalize();
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("peak_rss_kib %ld\n", usage.ru_maxrss);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("sanitized 1\n"); /* shadow memory and quarantines: no RSS bound */
#endif
    return status == SP_OK ? 0 : 1;
}
