/*
 * many_names.c - many_names PATH COUNT NAME_BYTES: a program that records
 * one call of each of COUNT regions, the first named by NAME_BYTES 'L's
 * and the others "r1", "r2", ..., and finalizes to PATH with the summary
 * the environment asks for (SCOPE_PROFILER_SUMMARY). Prints
 * "finalize <status>" last. round3_test.py (case summary_long_name)
 * judges how much text the summary printed (issue 29 item 3: every row
 * was padded to the longest name).
 */
#include <scope_profiler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: many_names PATH COUNT NAME_BYTES\n");
        return 2;
    }
    long count = atol(argv[2]);
    size_t bytes = (size_t)atol(argv[3]);
    char *long_name = malloc(bytes + 1);
    if (!long_name || count < 1) return 3;
    memset(long_name, 'L', bytes);
    long_name[bytes] = '\0';
    if (sp_setup(argv[1]) != SP_OK) return 4;
    sp_region_begin(long_name);
    sp_region_end(long_name);
    for (long i = 1; i < count; i++) {
        char name[32];
        snprintf(name, sizeof name, "r%ld", i);
        sp_region_begin(name);
        sp_region_end(name);
    }
    int status = sp_finalize();
    fflush(stderr);
    printf("finalize %d\n", status);
    free(long_name);
    return 0;
}
