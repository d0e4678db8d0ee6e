/* c_consumer: records a few regions through the installed C API and writes
 * the profile named by argv[1]. Exit 0 only if every call succeeded. */
#include <scope_profiler.h>

#include <stdio.h>
#include <string.h>

static int failed(const char *what, int status) {
    fprintf(stderr, "c_consumer: %s: %s (%s)\n", what, sp_status_name(status),
            sp_error_string(status));
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s <output.h5>\n", argv[0]);
        return 2;
    }
#ifdef EXPECTED_VERSION /* set by the CMake consumers; a plain pkg-config build has none */
    if (strcmp(SCOPE_PROFILER_VERSION, EXPECTED_VERSION) != 0) {
        fprintf(stderr, "c_consumer: header version %s, package version %s\n",
                SCOPE_PROFILER_VERSION, EXPECTED_VERSION);
        return 1;
    }
#endif
    int status = sp_setup(argv[1]);
    if (status != SP_OK) return failed("sp_setup", status);

    int inner = sp_region("c_consumer_inner");
    if (inner == SP_INVALID_REGION) return failed("sp_region", sp_last_error());
    if ((status = sp_region_begin("c_consumer_outer")) != SP_OK)
        return failed("sp_region_begin", status);
    for (int i = 0; i < 3; ++i) {
        sp_begin(inner);
        sp_end(inner);
    }
    if ((status = sp_region_end("c_consumer_outer")) != SP_OK)
        return failed("sp_region_end", status);
    if (sp_last_error() != SP_OK) return failed("recording", sp_last_error());

    if ((status = sp_finalize()) != SP_OK) return failed("sp_finalize", status);
    return 0;
}
