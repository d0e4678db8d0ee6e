/*
 * cxx_disabled_test.cpp - SCOPE_PROFILER_DISABLE_MACROS (set by CMake on
 * this target) must turn SP_SCOPE and SP_FUNCTION into nothing: arguments
 * not evaluated (checked here), no profiler symbol referenced (checked on
 * the binary by check_no_symbols.cmake with nm).
 */
#include <scope_profiler.hpp>

#include <cstdio>

#ifndef SCOPE_PROFILER_DISABLE_MACROS
#error "this test must be compiled with SCOPE_PROFILER_DISABLE_MACROS"
#endif

static int evaluations = 0;

static const char *counted_name() {
    ++evaluations;
    return "never_recorded";
}

static int work(int n) {
    SP_FUNCTION();
    int sum = 0;
    for (int i = 0; i < n; ++i) {
        SP_SCOPE(counted_name());
        SP_SCOPE("literal"); SP_SCOPE("same_line");
        sum += i;
    }
    return sum;
}

int main() {
    if (work(4) != 6) {
        std::fprintf(stderr, "work(4) returned a wrong sum\n");
        return 1;
    }
    if (evaluations != 0) {
        std::fprintf(stderr, "SP_SCOPE evaluated its argument %d times\n", evaluations);
        return 1;
    }
    std::printf("ok: macros disabled, argument not evaluated\n");
    return 0;
}
