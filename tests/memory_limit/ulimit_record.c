/* ulimit_record OUT.h5 CALLS (issue 29 item 10): an unbounded trace
 * (SCOPE_PROFILER_BUFFER_LIMIT=0, set by check_ulimit.py) of CALLS
 * iterations of "outer" > "inner", run under `ulimit -v` so that the
 * events cannot all be mapped. "--probe" prints the process's address
 * space after setup (VmSize, KiB), which the limit is set from. */
#define _POSIX_C_SOURCE 200809L
#include <scope_profiler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long vm_size_kib(void) {
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (status && fgets(line, sizeof line, status))
        if (strncmp(line, "VmSize:", 7) == 0) kib = strtol(line + 7, NULL, 10);
    if (status) fclose(status);
    return kib;
}

int main(int argc, char **argv) {
    if (argc != 3 || sp_setup(argv[1]) != SP_OK) return 2;
    long calls = strtol(argv[2], NULL, 10);
    int outer = sp_region("outer"), inner = sp_region("inner");
    for (long i = 0; i < calls; i++) {
        sp_begin(outer);
        sp_begin(inner);
        sp_end(inner);
        sp_end(outer);
    }
    if (calls == 0) printf("vmsize_kib=%ld\n", vm_size_kib());
    fflush(stdout);
    /* calls lost to the limit make finalize say so (not SP_OK); the
     * checker compares that with the report */
    int status = sp_finalize();
    printf("finalize=%s\n", sp_status_name(status));
    return 0;
}
