// inst_app.cpp - a C++ program with no annotation, built with
// -finstrument-functions (tests/instrument): a namespace, a member
// function, a template instantiated twice; names come back demangled. A
// third instantiation runs inside a pause_scope and is absent.
#include <cstdio>

#include "scope_profiler.hpp"

namespace physics {
static volatile int sink;

template <class T> __attribute__((noinline)) T twice(T x) { return x + x + static_cast<T>(sink); }

struct Solver {
    double run(double v);
};

__attribute__((noinline)) double Solver::run(double v) { return twice(v) + twice(1); }
} // namespace physics

int main() {
    physics::Solver solver;
    std::printf("%f\n", solver.run(2.0));
    {
        scope_profiler::pause_scope quiet;
        std::printf("%f\n", static_cast<double>(physics::twice(1.5f)));
    }
    return scope_profiler::paused() ? 1 : 0;
}
