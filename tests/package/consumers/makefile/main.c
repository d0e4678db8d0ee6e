/* make_consumer: the C API through pkg-config flags only; writes the
 * profile named by argv[1]. Exit 0 only if every call succeeded. */
#include <scope_profiler.h>

#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <output.h5>\n", argv[0]);
        return 2;
    }
    int status = sp_setup(argv[1]);
    if (status == SP_OK) status = sp_region_begin("make_consumer_outer");
    for (int i = 0; i < 2 && status == SP_OK; ++i) {
        status = sp_region_begin("make_consumer_inner");
        if (status == SP_OK) status = sp_region_end("make_consumer_inner");
    }
    if (status == SP_OK) status = sp_region_end("make_consumer_outer");
    if (status == SP_OK) status = sp_finalize();
    if (status != SP_OK) {
        fprintf(stderr, "make_consumer: %s (%s)\n", sp_status_name(status),
                sp_error_string(status));
        return 1;
    }
    return 0;
}
