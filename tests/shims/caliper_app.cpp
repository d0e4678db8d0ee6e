// caliper_app.cpp - a Caliper-annotated C++ program, written against
// Caliper's C++ API only (CALI_CXX_MARK_* and cali::ConfigManager from
// <caliper/cali.h>), built unchanged against libscopeprofiler_caliper.
// Every region closes when its scope ends, on every exit path (an early
// return, an exception). check_shims.py checks the file.
#include <caliper/cali.h>

#include <cstdio>
#include <stdexcept>

static int compute(int i) {
    CALI_CXX_MARK_FUNCTION; // "compute"
    if (i == 0) return 1;   // the early return closes it too
    return 2;
}

static void may_throw(int i) {
    CALI_CXX_MARK_SCOPE("may_throw");
    if (i == 1) throw std::runtime_error("thrown inside a marked scope");
}

int main(int argc, char **argv) {
    cali::ConfigManager mgr;
    mgr.add(argc > 1 ? argv[1] : "runtime-report");
    if (mgr.error()) {
        std::fprintf(stderr, "caliper_app: %s\n", mgr.error_msg().c_str());
        return 1;
    }
    mgr.start();
    CALI_CXX_MARK_FUNCTION; // "main"
    {
        CALI_CXX_MARK_SCOPE("work");
        CALI_CXX_MARK_LOOP_BEGIN(loop, "loop");
        int sum = 0;
        for (int i = 0; i < 2; i++) {
            CALI_CXX_MARK_LOOP_ITERATION(loop, i); // "iteration#loop"
            sum += compute(i);
        }
        CALI_CXX_MARK_LOOP_END(loop);
        if (sum != 3) return 1;
    }
    for (int i = 0; i < 2; i++) {
        try {
            may_throw(i);
        } catch (const std::exception &) {
        }
    }
    mgr.flush();
    return 0;
}
