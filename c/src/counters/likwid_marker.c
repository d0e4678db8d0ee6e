/*
 * counters/likwid_marker.c - the LIKWID back end over the real library
 * (built only when CMake found LIKWID; counters/likwid_none.c otherwise).
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
#include <likwid.h>
#include <stdio.h>
#include <stdlib.h>

#include "../alloc.h"
#include "../counters.h"

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
    likwid_markerInit();
    if (perfmon_getNumberOfGroups() <= 0) {
        snprintf(reason, reason_bytes,
                 "LIKWID could not set up its counters (unsupported CPU or no access to "
                 "the counter registers)");
        likwid_markerClose();
        return false;
    }
    init_done = true;
    return true;
}

static void real_thread_init(void) { likwid_markerThreadInit(); }
static void real_start(const char *tag) { likwid_markerStartRegion(tag); }
static void real_stop(const char *tag) { likwid_markerStopRegion(tag); }

static char *copy(const char *text) { return spi_strdup(text ? text : ""); }

static int read_region(int region, spi_likwid_record *r) {
    int group = perfmon_getGroupOfRegion(region);
    int events = perfmon_getEventsOfRegion(region);
    int metrics = perfmon_getMetricsOfRegion(region);
    int threads = perfmon_getThreadsOfRegion(region);
    if (events < 0) events = 0;
    if (metrics < 0) metrics = 0;
    if (threads < 0) threads = 0;
    size_t nt = (size_t)threads, ne = (size_t)events, nm = (size_t)metrics;
    r->tag = copy(perfmon_getTagOfRegion(region));
    r->group_id = group;
    r->group_name = copy(perfmon_getGroupName(group));
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
    if (status == SP_OK && threads > 0) perfmon_getCpulistOfRegion(region, threads, cpulist);
    for (size_t e = 0; status == SP_OK && e < ne; e++) {
        r->event_names[e] = copy(perfmon_getEventName(group, (int)e));
        r->counter_names[e] = copy(perfmon_getCounterName(group, (int)e));
        if (!r->event_names[e] || !r->counter_names[e]) status = SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t m = 0; status == SP_OK && m < nm; m++) {
        r->metric_names[m] = copy(perfmon_getMetricName(group, (int)m));
        if (!r->metric_names[m]) status = SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t t = 0; status == SP_OK && t < nt; t++) {
        r->cpus[t] = cpulist[t];
        r->times[t] = perfmon_getTimeOfRegion(region, (int)t);
        r->call_counts[t] = perfmon_getCountOfRegion(region, (int)t);
        for (size_t e = 0; e < ne; e++)
            r->events[e * nt + t] = perfmon_getResultOfRegionThread(region, (int)e, (int)t);
        for (size_t m = 0; m < nm; m++)
            r->metrics[m * nt + t] = perfmon_getMetricOfRegionThread(region, (int)m, (int)t);
    }
    spi_free(cpulist);
    return status;
}

static int real_collect(uint32_t rank, spi_profile *profile) {
    if (!init_done) return SP_OK;
    init_done = false;
    likwid_markerClose();
    const char *file = getenv("LIKWID_FILEPATH");
    if (!file || perfmon_readMarkerFile(file) < 0) return SP_OK; /* nothing measured */
    int status = SP_OK;
    int regions = perfmon_getNumberOfRegions();
    for (int i = 0; i < regions && status == SP_OK; i++) {
        spi_likwid_record *r = spi_likwid_record_add(profile, rank);
        status = r ? read_region(i, r) : SP_ERR_OUT_OF_MEMORY;
    }
    perfmon_destroyMarkerResults();
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
