/*
 * many_metadata.c - many_metadata PATH COUNT: a program that stores COUNT
 * metadata keys (sp_set_metadata, "key_00000" = "value 0", ...) and one
 * region, and writes PATH at sp_finalize; prints "finalize <status>".
 * check_many_metadata.py judges the file (issue 29 item 9: the writer
 * stores the metadata group's attributes densely, so 20,000 keys are not
 * quadratic inside HDF5, and every reader still reads them).
 */
#include <scope_profiler.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: many_metadata PATH COUNT\n");
        return 2;
    }
    long count = atol(argv[2]);
    sp_options o;
    sp_options_init(&o);
    o.file_path = argv[1];
    o.quiet = 1;
    if (sp_setup_with_options(&o) != SP_OK) return 3;
    for (long i = 0; i < count; i++) {
        char key[32], value[32];
        snprintf(key, sizeof key, "key_%05ld", i);
        snprintf(value, sizeof value, "value %ld", i);
        if (sp_set_metadata(key, value) != SP_OK) return 4;
    }
    sp_region_begin("work");
    sp_region_end("work");
    printf("finalize %d\n", sp_finalize());
    return 0;
}
