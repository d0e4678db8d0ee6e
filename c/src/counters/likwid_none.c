/*
 * counters/likwid_none.c - the LIKWID back end of a build without LIKWID:
 * asking for LIKWID says once that this build cannot, and nothing else
 * changes (the fake test back end in counters/likwid_fake.c still works).
 */
#include <stdio.h>

#include "counters/counters.h"

static bool none_init(char *reason, size_t reason_bytes) {
    snprintf(reason, reason_bytes,
             "this libscopeprofiler was built without LIKWID (install likwid and "
             "reconfigure with -DSCOPE_PROFILER_LIKWID=ON)");
    return false;
}

static void none_thread_init(void) {}
static void none_region(const char *tag) { (void)tag; }
static int none_collect(uint32_t rank, spi_profile *profile) {
    (void)rank;
    (void)profile;
    return SP_OK;
}

const spi_likwid_backend spi_likwid_real = {
    .name = "none",
    .init = none_init,
    .thread_init = none_thread_init,
    .start = none_region,
    .stop = none_region,
    .collect = none_collect,
};
