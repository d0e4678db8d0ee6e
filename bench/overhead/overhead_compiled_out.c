/*
 * overhead_compiled_out.c - the begin/end loop of a build compiled with
 * SCOPE_PROFILER_DISABLED: every call is a macro that vanishes, so this is
 * the cost of the instrumented loop with profiling compiled out. The empty
 * asm keeps the compiler from deleting the loop itself, so the row measures
 * the loop, as the other rows do.
 */
#define SCOPE_PROFILER_DISABLED 1
#include <stdint.h>

#include "scope_profiler.h"

void compiled_out_pairs(int region, int64_t pairs);

void compiled_out_pairs(int region, int64_t pairs) {
    for (int64_t i = 0; i < pairs; i++) {
        sp_begin(region);
        sp_region_begin("bench_by_name");
        sp_region_end("bench_by_name");
        SP_REGION_BEGIN("bench_call_site");
        SP_REGION_END("bench_call_site");
        sp_end(region);
        __asm__ volatile("" : : "r"(i) : "memory");
    }
}
