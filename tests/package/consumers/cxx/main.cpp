// cxx_consumer: records regions through the installed C++ binding and
// writes the profile named by argv[1]. Exit 0 only if every call succeeded.
#include <scope_profiler.hpp>

#include <cstdio>

static int cxx_consumer_work(int n) {
    SP_FUNCTION();
    return n * 2;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <output.h5>\n", argv[0]);
        return 2;
    }
    scope_profiler::session run(argv[1]);
    if (run.setup_status() != SP_OK) {
        std::fprintf(stderr, "sp_setup: %s\n", sp_status_name(run.setup_status()));
        return 1;
    }
    {
        static const scope_profiler::region loop("cxx_consumer_loop");
        SP_SCOPE("cxx_consumer_main");
        int sum = 0;
        for (int i = 0; i < 3; ++i) {
            SP_SCOPE(loop);
            sum += cxx_consumer_work(i);
        }
        if (sum != 6) return 1;
    } // every scope ends here, before the file is written
    if (sp_last_error() != SP_OK) {
        std::fprintf(stderr, "recording: %s\n", sp_status_name(sp_last_error()));
        return 1;
    }
    int status = run.finish();
    if (status != SP_OK) {
        std::fprintf(stderr, "sp_finalize: %s\n", sp_status_name(status));
        return 1;
    }
    return 0;
}
