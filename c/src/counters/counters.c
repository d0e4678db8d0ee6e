/*
 * counters.c - the counters module's front: which back ends run in this
 * session, the per-thread state the recorder carries, and the collection of
 * per-region totals into the profile at finalize (counters.h).
 *
 * Everything here is off the hot path except spi_counters_begin/end, which
 * the recorder calls only for a thread that has counters: a session without
 * counters pays one predictable branch per begin/end in the recorder and
 * nothing here.
 */
#include "counters/counters.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "record/registry.h"

struct spi_counters_thread {
    spi_perf_thread *perf;    /* NULL: no perf events on this thread */
    bool likwid;
};

static const spi_likwid_backend *likwid = NULL; /* NULL: LIKWID off */
static bool perf_on = false;

static bool flag_on(const char *value) {
    return value && (strcmp(value, "1") == 0 || strcmp(value, "true") == 0 ||
                     strcmp(value, "yes") == 0 || strcmp(value, "on") == 0);
}

int spi_counters_configure(const sp_options *options) {
    spi_counters_shutdown();
    const char *list = options->perf_events;
    if (!list || !*list) list = getenv("SCOPE_PROFILER_PERF_EVENTS");
    if (list && *list) {
        int status = spi_perf_configure(list);
        if (status != SP_OK) return status;
        perf_on = spi_perf_event_count() > 0;
    }
    if (options->likwid || flag_on(getenv("SCOPE_PROFILER_LIKWID"))) {
        /* The fake back end is for tests of the storage path only. */
        const spi_likwid_backend *backend =
            flag_on(getenv("SCOPE_PROFILER_LIKWID_FAKE")) ? &spi_likwid_fake : &spi_likwid_real;
        char reason[512] = "";
        if (backend->init(reason, sizeof reason))
            likwid = backend;
        else
            spi_diag("LIKWID counters off: %s; timings are recorded as usual", reason);
    }
    return SP_OK;
}

bool spi_counters_active(void) { return perf_on || likwid; }

static void *thread_attach(void) {
    if (!perf_on && !likwid) return NULL;
    spi_counters_thread *t = spi_calloc(1, sizeof *t);
    if (!t) return NULL;
    if (perf_on) t->perf = spi_perf_thread_open();
    if (likwid) {
        likwid->thread_init();
        t->likwid = true;
    }
    if (!t->perf && !t->likwid) {
        spi_free(t);
        return NULL;
    }
    return t;
}

static void thread_release(void *state) {
    spi_counters_thread *t = state;
    if (!t) return;
    spi_perf_thread_close(t->perf);
    spi_free(t);
}

static void thread_begin(void *state, int region) {
    spi_counters_thread *t = state;
    /* LIKWID first, perf last: the perf reading is then the one closest to
     * the user's code, and LIKWID's own work is not in the perf deltas. */
    if (t->likwid) likwid->start(spi_registry_get(region)->text);
    if (t->perf) spi_perf_begin(t->perf);
}

static void thread_end(void *state, int region) {
    spi_counters_thread *t = state;
    if (t->perf) spi_perf_end(t->perf, region);
    if (t->likwid) likwid->stop(spi_registry_get(region)->text);
}

static const spi_thread_hooks counter_hooks = {
    .attach = thread_attach,
    .release = thread_release,
    .begin = thread_begin,
    .end = thread_end,
};

const spi_thread_hooks *spi_counters_hooks(void) {
    return perf_on || likwid ? &counter_hooks : NULL;
}

/* The counters' state of a recorded thread; NULL when it ran no counters
 * (attached before they were on, or another session's hooks). */
static const spi_counters_thread *thread_counters(const spi_thread *t) {
    return t->hooks == &counter_hooks ? t->hook_state : NULL;
}

/* Region group names cannot hold '/' (HDF5 would nest them); FORMAT.md
 * maps it to '|' for LIKWID tags and we do the same for perf regions. */
static char *group_safe_name(const char *name) {
    char *copy = spi_strdup(name);
    for (char *p = copy; p && *p; p++)
        if (*p == '/') *p = '|';
    return copy;
}

static int collect_perf(const spi_session *session, uint32_t rank, spi_profile *profile) {
    size_t k = spi_perf_event_count();
    int regions = spi_registry_count();
    for (int region = 0; region < regions; region++) {
        int64_t calls = 0;
        uint64_t sums[SPI_PERF_MAX_EVENTS] = {0};
        bool seen = false;
        for (const spi_thread *t = session->threads; t; t = t->next) {
            int64_t c;
            const uint64_t *values;
            const spi_counters_thread *counters = thread_counters(t);
            if (!counters || !spi_perf_totals(counters->perf, region, &c, &values)) continue;
            seen = true;
            calls += c;
            for (size_t i = 0; i < k; i++) sums[i] += values[i];
        }
        if (!seen) continue;
        spi_perf_record *grown =
            spi_reallocarray(profile->perf, profile->perf_count + 1, sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        profile->perf = grown;
        spi_perf_record *r = &profile->perf[profile->perf_count];
        *r = (spi_perf_record){.rank = rank, .calls = calls};
        r->region = group_safe_name(spi_registry_get(region)->text);
        r->event_names = spi_calloc(k, sizeof *r->event_names);
        r->values = spi_calloc(k, sizeof *r->values);
        profile->perf_count++; /* owned from here, freed with the profile */
        if (!r->region || !r->event_names || !r->values) return SP_ERR_OUT_OF_MEMORY;
        for (size_t i = 0; i < k; i++) {
            r->event_names[i] = spi_strdup(spi_perf_event_name(i));
            if (!r->event_names[i]) return SP_ERR_OUT_OF_MEMORY;
            r->counter_count = i + 1;
            r->values[i] = sums[i];
        }
    }
    return SP_OK;
}

int spi_counters_collect(const spi_session *session, uint32_t rank, spi_profile *profile) {
    int status = SP_OK;
    if (perf_on) status = collect_perf(session, rank, profile);
    if (likwid) {
        int likwid_status = likwid->collect(rank, profile);
        if (status == SP_OK) status = likwid_status;
    }
    return status;
}

void spi_counters_shutdown(void) {
    perf_on = false;
    likwid = NULL;
    spi_perf_reset();
}
