/*
 * isolate_probe - drives cli_isolate.c the way a tool does, with the
 * failure planted on purpose, so the supervision is tested without a file
 * that happens to crash libhdf5 today:
 *
 *   isolate_probe segv      a fault during a read     -> exit 2, message
 *   isolate_probe hang      a read that never ends    -> exit 2 after the
 *                           timeout (SCOPE_PROFILER_READ_TIMEOUT)
 *   isolate_probe alloc     a read that allocates without end -> exit 2
 *                           (the memory limit; skipped, 77, in sanitizer
 *                           builds, which run without it)
 *   isolate_probe outside   a fault outside any read -> the same signal
 *   isolate_probe exit N    the child's exit code    -> N
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_isolate.h"

int main(int argc, char **argv) {
    if (argc < 2) return 1;
    cli_isolate_start("isolate_probe");
    const char *mode = argv[1];
    if (strcmp(mode, "exit") == 0) return argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(mode, "outside") == 0) {
        raise(SIGSEGV);
        return 0;
    }
    cli_isolate_begin_read("planted.h5", 1000, 1);
    if (strcmp(mode, "segv") == 0) raise(SIGSEGV);
    if (strcmp(mode, "hang") == 0)
        for (;;) pause();
    if (strcmp(mode, "alloc") == 0) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        return 77; /* sanitizer builds run without the memory limit: this
                    * would only exhaust the machine */
#endif
        /* Touch what is allocated, as a runaway reader would. */
        for (size_t total = 0; total < ((size_t)64 << 30); total += (size_t)64 << 20) {
            char *block = malloc((size_t)64 << 20);
            if (!block) {
                fprintf(stderr, "isolate_probe: planted.h5: damaged HDF5 file (allocation "
                                "refused under the read's memory limit)\n");
                return 2;
            }
            memset(block, 1, (size_t)64 << 20);
        }
        return 77; /* no limit applied (sanitizer build) */
    }
    cli_isolate_end_read();
    return 0;
}
