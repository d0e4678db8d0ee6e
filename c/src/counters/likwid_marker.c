/*
 * counters/likwid_marker.c - the LIKWID back end over the real library
 * (built only when CMake found LIKWID's header; counters/likwid_none.c
 * otherwise).
 *
 * The library is loaded with dlopen, and only when a run asks for LIKWID
 * (SCOPE_PROFILER_LIKWID=1 or sp_options.likwid): a program built on a node
 * with LIKWID then runs on a compute node without it, and no program pays
 * for liblikwid's own dependencies (Lua, hwloc) at load time. The header
 * is still needed to build: every entry point is declared through
 * __typeof__ of LIKWID's own prototype, so a changed signature is a compile
 * error here, not a crash at run time. The library is searched as the
 * loader would (its SONAME, so LD_LIBRARY_PATH works), then at the path
 * the build found; SCOPE_PROFILER_LIKWID_LIBRARY names another file. It is
 * never unloaded: LIKWID keeps threads and exit handlers of its own.
 *
 * LIKWID's marker API only measures when the program runs under
 * `likwid-perfctr -m -g GROUP ...`, which passes the event set, the CPUs and
 * the result file in LIKWID_* variables. Without them likwid_markerInit
 * would print its own complaints and every start/stop would be a failed
 * lookup, so we check first and say once, in our own words, why LIKWID is
 * off. The library itself is never asked to do anything after a failed
 * init: timings must not suffer from counters that do not work.
 *
 * Results: likwid_markerClose writes LIKWID_FILEPATH (that is how
 * likwid-perfctr gets them); we read that file back with the perfmon API,
 * which gives every region x group with events and metrics per hardware
 * thread: source "marker_file" in FORMAT.md 1.7 terms.
 */
#include <dlfcn.h>
#include <likwid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "counters/counters.h"

/* Every LIKWID function this back end calls. */
#define LIKWID_FUNCTIONS(X)                                                    \
    X(likwid_markerInit) X(likwid_markerClose) X(likwid_markerThreadInit)     \
    X(likwid_markerStartRegion) X(likwid_markerStopRegion)                     \
    X(perfmon_getNumberOfGroups) X(perfmon_getGroupOfRegion)                   \
    X(perfmon_getEventsOfRegion) X(perfmon_getMetricsOfRegion)                 \
    X(perfmon_getThreadsOfRegion) X(perfmon_getTagOfRegion)                    \
    X(perfmon_getGroupName) X(perfmon_getCpulistOfRegion)                      \
    X(perfmon_getEventName) X(perfmon_getCounterName) X(perfmon_getMetricName) \
    X(perfmon_getTimeOfRegion) X(perfmon_getCountOfRegion)                     \
    X(perfmon_getResultOfRegionThread) X(perfmon_getMetricOfRegionThread)      \
    X(perfmon_readMarkerFile) X(perfmon_getNumberOfRegions)                    \
    X(perfmon_destroyMarkerResults)

static struct {
#define DECLARE(name) __typeof__(&name) name;
    LIKWID_FUNCTIONS(DECLARE)
#undef DECLARE
} lw;
static bool loaded = false;

/* dlopen LIKWID once per process; false with the reason when it cannot. */
static bool load_library(char *reason, size_t reason_bytes) {
    if (loaded) return true;
    const char *chosen = getenv("SCOPE_PROFILER_LIKWID_LIBRARY");
    const char *candidates[] = {SPI_LIKWID_SONAME, SPI_LIKWID_PATH};
    void *handle = NULL;
    if (chosen && *chosen) {
        handle = dlopen(chosen, RTLD_NOW | RTLD_GLOBAL);
    } else {
        for (size_t i = 0; !handle && i < sizeof candidates / sizeof *candidates; i++)
            handle = dlopen(candidates[i], RTLD_NOW | RTLD_GLOBAL);
    }
    if (!handle) {
        const char *why = dlerror();
        snprintf(reason, reason_bytes, "cannot load the LIKWID library (%s): %s",
                 chosen && *chosen ? chosen : SPI_LIKWID_SONAME, why ? why : "not found");
        return false;
    }
    /* memcpy: ISO C has no conversion from void * to a function pointer;
     * POSIX guarantees the representation is the same. */
#define RESOLVE(name)                                                          \
    {                                                                          \
        void *symbol = dlsym(handle, #name);                                   \
        if (!symbol) {                                                         \
            snprintf(reason, reason_bytes,                                     \
                     "the LIKWID library has no %s (another LIKWID version?)", #name); \
            dlclose(handle);                                                   \
            return false;                                                      \
        }                                                                      \
        memcpy(&lw.name, &symbol, sizeof lw.name);                             \
    }
    LIKWID_FUNCTIONS(RESOLVE)
#undef RESOLVE
    loaded = true;
    return true;
}

static bool init_done = false;

static bool real_init(char *reason, size_t reason_bytes) {
    init_done = false;
    const char *events = getenv("LIKWID_EVENTS");
    const char *file = getenv("LIKWID_FILEPATH");
    if (!events || !*events || !file || !*file) {
        snprintf(reason, reason_bytes,
                 "the marker API only measures under `likwid-perfctr -m -g GROUP` "
                 "(LIKWID_EVENTS/LIKWID_FILEPATH are not set)");
        return false;
    }
    if (!load_library(reason, reason_bytes)) return false;
    lw.likwid_markerInit();
    if (lw.perfmon_getNumberOfGroups() <= 0) {
        snprintf(reason, reason_bytes,
                 "LIKWID could not set up its counters (unsupported CPU or no access to "
                 "the counter registers)");
        lw.likwid_markerClose();
        return false;
    }
    init_done = true;
    return true;
}

static void real_thread_init(void) { lw.likwid_markerThreadInit(); }
static void real_start(const char *tag) { lw.likwid_markerStartRegion(tag); }
static void real_stop(const char *tag) { lw.likwid_markerStopRegion(tag); }

static char *copy(const char *text) { return spi_strdup(text ? text : ""); }

static int read_region(int region, spi_likwid_record *r) {
    int group = lw.perfmon_getGroupOfRegion(region);
    int events = lw.perfmon_getEventsOfRegion(region);
    int metrics = lw.perfmon_getMetricsOfRegion(region);
    int threads = lw.perfmon_getThreadsOfRegion(region);
    if (events < 0) events = 0;
    if (metrics < 0) metrics = 0;
    if (threads < 0) threads = 0;
    size_t nt = (size_t)threads, ne = (size_t)events, nm = (size_t)metrics;
    r->tag = copy(lw.perfmon_getTagOfRegion(region));
    r->group_id = group;
    r->group_name = copy(lw.perfmon_getGroupName(group));
    r->source = copy("marker_file");
    r->event_count = ne;
    r->metric_count = nm;
    r->thread_count = nt;
    r->event_names = spi_calloc(ne ? ne : 1, sizeof *r->event_names);
    r->counter_names = spi_calloc(ne ? ne : 1, sizeof *r->counter_names);
    r->metric_names = spi_calloc(nm ? nm : 1, sizeof *r->metric_names);
    r->cpus = spi_calloc(nt ? nt : 1, sizeof *r->cpus);
    r->times = spi_calloc(nt ? nt : 1, sizeof *r->times);
    r->call_counts = spi_calloc(nt ? nt : 1, sizeof *r->call_counts);
    r->events = spi_calloc(ne * nt + 1, sizeof *r->events);
    r->metrics = spi_calloc(nm * nt + 1, sizeof *r->metrics);
    int *cpulist = spi_calloc(nt ? nt : 1, sizeof *cpulist);
    int status = r->tag && r->group_name && r->source && r->event_names && r->counter_names &&
                         r->metric_names && r->cpus && r->times && r->call_counts &&
                         r->events && r->metrics && cpulist
                     ? SP_OK
                     : SP_ERR_OUT_OF_MEMORY;
    if (status == SP_OK && threads > 0) lw.perfmon_getCpulistOfRegion(region, threads, cpulist);
    for (size_t e = 0; status == SP_OK && e < ne; e++) {
        r->event_names[e] = copy(lw.perfmon_getEventName(group, (int)e));
        r->counter_names[e] = copy(lw.perfmon_getCounterName(group, (int)e));
        if (!r->event_names[e] || !r->counter_names[e]) status = SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t m = 0; status == SP_OK && m < nm; m++) {
        r->metric_names[m] = copy(lw.perfmon_getMetricName(group, (int)m));
        if (!r->metric_names[m]) status = SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t t = 0; status == SP_OK && t < nt; t++) {
        r->cpus[t] = cpulist[t];
        r->times[t] = lw.perfmon_getTimeOfRegion(region, (int)t);
        r->call_counts[t] = lw.perfmon_getCountOfRegion(region, (int)t);
        for (size_t e = 0; e < ne; e++)
            r->events[e * nt + t] = lw.perfmon_getResultOfRegionThread(region, (int)e, (int)t);
        for (size_t m = 0; m < nm; m++)
            r->metrics[m * nt + t] = lw.perfmon_getMetricOfRegionThread(region, (int)m, (int)t);
    }
    spi_free(cpulist);
    return status;
}

static int real_collect(uint32_t rank, spi_profile *profile) {
    if (!init_done) return SP_OK;
    init_done = false;
    lw.likwid_markerClose();
    const char *file = getenv("LIKWID_FILEPATH");
    if (!file || lw.perfmon_readMarkerFile(file) < 0) return SP_OK; /* nothing measured */
    int status = SP_OK;
    int regions = lw.perfmon_getNumberOfRegions();
    for (int i = 0; i < regions && status == SP_OK; i++) {
        spi_likwid_record *r = spi_likwid_record_add(profile, rank);
        status = r ? read_region(i, r) : SP_ERR_OUT_OF_MEMORY;
    }
    lw.perfmon_destroyMarkerResults();
    if (status == SP_OK) status = spi_likwid_env_collect(rank, profile);
    return status;
}

const spi_likwid_backend spi_likwid_real = {
    .name = "likwid",
    .init = real_init,
    .thread_init = real_thread_init,
    .start = real_start,
    .stop = real_stop,
    .collect = real_collect,
};
