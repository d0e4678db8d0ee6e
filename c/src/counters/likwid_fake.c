/*
 * counters/likwid_fake.c - a test-only LIKWID marker back end with known
 * values (SCOPE_PROFILER_LIKWID_FAKE=1 together with SCOPE_PROFILER_LIKWID=1).
 *
 * Real LIKWID needs hardware counter access that CI machines and VMs rarely
 * give, so the path from marker results to rank<N>/likwid and back could
 * otherwise never be tested. This back end counts the real start/stop calls
 * per region and per thread and derives every other value from them by
 * fixed formulas the tests recompute:
 *
 *   group "FAKE" (id 7), source "marker_api", cpus[t] = t,
 *   events  FAKE_EV0, FAKE_EV1 (counters PMC0, PMC1):
 *           events[e][t] = 1000 * (e + 1) * calls[t] + t
 *   metrics "Runtime (RDTSC) [s]", "FAKE ratio":
 *           metrics[0][t] = times[t] = 0.001 * calls[t]
 *           metrics[1][t] = events[1][t] / events[0][t]  (0 when no calls)
 *
 * A mutex serialises start/stop: this is a test path, not a hot one.
 */
#include <pthread.h>
#include <string.h>

#include "util/alloc.h"
#include "counters/counters.h"

#define FAKE_THREADS 64

typedef struct fake_region {
    char *tag;
    int64_t calls[FAKE_THREADS];
} fake_region;

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static fake_region *regions = NULL;
static size_t region_count = 0;
static int thread_count = 0;
static _Thread_local int thread_slot = -1;

static bool fake_init(char *reason, size_t reason_bytes) {
    (void)reason;
    (void)reason_bytes;
    pthread_mutex_lock(&fake_lock);
    thread_count = 0;
    pthread_mutex_unlock(&fake_lock);
    return true;
}

static void fake_thread_init(void) {
    pthread_mutex_lock(&fake_lock);
    thread_slot = thread_count < FAKE_THREADS ? thread_count++ : FAKE_THREADS - 1;
    pthread_mutex_unlock(&fake_lock);
}

static void fake_start(const char *tag) { (void)tag; }

static void fake_stop(const char *tag) {
    pthread_mutex_lock(&fake_lock);
    size_t i = 0;
    while (i < region_count && strcmp(regions[i].tag, tag) != 0) i++;
    if (i == region_count) {
        fake_region *grown = spi_reallocarray(regions, region_count + 1, sizeof *grown);
        char *copy = spi_strdup(tag);
        if (grown) regions = grown;
        if (!grown || !copy) {
            spi_free(copy);
            pthread_mutex_unlock(&fake_lock);
            return;
        }
        regions[region_count++] = (fake_region){.tag = copy};
    }
    if (thread_slot >= 0) regions[i].calls[thread_slot]++;
    pthread_mutex_unlock(&fake_lock);
}

static char **names(const char *const *items, size_t count) {
    char **copy = spi_calloc(count, sizeof *copy);
    for (size_t i = 0; copy && i < count; i++) copy[i] = spi_strdup(items[i]);
    return copy;
}

static int fill(spi_likwid_record *r, const fake_region *region, size_t threads) {
    static const char *const events[] = {"FAKE_EV0", "FAKE_EV1"};
    static const char *const counters[] = {"PMC0", "PMC1"};
    static const char *const metrics[] = {"Runtime (RDTSC) [s]", "FAKE ratio"};
    r->tag = spi_strdup(region->tag);
    r->group_id = 7;
    r->group_name = spi_strdup("FAKE");
    r->source = spi_strdup("marker_api");
    r->event_count = 2;
    r->metric_count = 2;
    r->event_names = names(events, 2);
    r->counter_names = names(counters, 2);
    r->metric_names = names(metrics, 2);
    r->thread_count = threads;
    r->cpus = spi_calloc(threads, sizeof *r->cpus);
    r->times = spi_calloc(threads, sizeof *r->times);
    r->call_counts = spi_calloc(threads, sizeof *r->call_counts);
    r->events = spi_calloc(2 * threads, sizeof *r->events);
    r->metrics = spi_calloc(2 * threads, sizeof *r->metrics);
    if (!r->tag || !r->group_name || !r->source || !r->event_names || !r->counter_names ||
        !r->metric_names || !r->cpus || !r->times || !r->call_counts || !r->events ||
        !r->metrics)
        return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < 2; i++)
        if (!r->event_names[i] || !r->counter_names[i] || !r->metric_names[i])
            return SP_ERR_OUT_OF_MEMORY;
    for (size_t t = 0; t < threads; t++) {
        int64_t calls = region->calls[t];
        r->cpus[t] = (int64_t)t;
        r->call_counts[t] = calls;
        r->times[t] = 0.001 * (double)calls;
        for (size_t e = 0; e < 2; e++)
            r->events[e * threads + t] = 1000.0 * (double)(e + 1) * (double)calls + (double)t;
        r->metrics[t] = r->times[t];
        r->metrics[threads + t] = calls ? r->events[threads + t] / r->events[t] : 0.0;
    }
    return SP_OK;
}

static int fake_collect(uint32_t rank, spi_profile *profile) {
    pthread_mutex_lock(&fake_lock);
    int status = SP_OK;
    size_t threads = (size_t)(thread_count ? thread_count : 1);
    for (size_t i = 0; i < region_count && status == SP_OK; i++) {
        spi_likwid_record *r = spi_likwid_record_add(profile, rank);
        status = r ? fill(r, &regions[i], threads) : SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < region_count; i++) spi_free(regions[i].tag);
    spi_free(regions);
    regions = NULL;
    region_count = 0;
    pthread_mutex_unlock(&fake_lock);
    if (status == SP_OK) status = spi_likwid_env_collect(rank, profile);
    return status;
}

const spi_likwid_backend spi_likwid_fake = {
    .name = "fake",
    .init = fake_init,
    .thread_init = fake_thread_init,
    .start = fake_start,
    .stop = fake_stop,
    .collect = fake_collect,
};
