/*
 * likwid_markers.c - LIKWID's marker API over scope-profiler's public API
 * (libscopeprofiler_likwid_markers).
 *
 * A program compiled against LIKWID's own likwid-marker.h with
 * -DLIKWID_PERFMON calls these symbols; linking this library instead of
 * -llikwid (or preloading it) turns every marker region into a
 * scope-profiler region of the same name, with the real call tree,
 * threads and MPI ranks, in one HDF5 file per job. No header is installed:
 * the program keeps LIKWID's (a header of ours named like it would shadow
 * a real LIKWID installation), and the declarations below are written from
 * LIKWID's documented signatures, which they must match.
 *
 * Mapping (LIKWID's return codes: 0, or -EFAULT as LIKWID gives it):
 *   likwid_markerInit           start a session unless one runs (sp_setup,
 *                               SCOPE_PROFILER_FILE or profiling_data.h5)
 *   likwid_markerThreadInit     nothing to do: every thread records itself
 *   likwid_markerRegisterRegion resolve the name once (sp_region)
 *   likwid_markerStartRegion    sp_begin of the tag's region (found in the
 *                               thread's name cache, sps_region_of)
 *   likwid_markerStopRegion     sps_end of it (an unknown or not innermost
 *                               region: -EFAULT, the core reports it)
 *   likwid_markerResetRegion    calls are kept: accepted, noted once
 *   likwid_markerGetRegion      running values are not kept: zeros, noted once
 *   likwid_markerNextGroup      no counter groups here: nothing
 *   likwid_markerClose          finish the session Init started (write the file)
 * Calls before likwid_markerInit (or after Close) return -EFAULT, as in
 * LIKWID, and are noted once. Hardware counters: scope-profiler's own LIKWID
 * back end (SCOPE_PROFILER_LIKWID=1 under likwid-perfctr -m) or perf events.
 *
 * Thread-safety: Start/Stop/Register/Reset/Get from any thread; Init and
 * Close from one thread, outside parallel regions, as LIKWID requires.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "scope_profiler.h"
#include "shim_common.h"

#include "likwid_markers_internal.h"

void likwid_markerInit(void);
void likwid_markerThreadInit(void);
void likwid_markerNextGroup(void);
void likwid_markerClose(void);
int likwid_markerRegisterRegion(const char *regionTag);
int likwid_markerStartRegion(const char *regionTag);
int likwid_markerStopRegion(const char *regionTag);
int likwid_markerResetRegion(const char *regionTag);
void likwid_markerGetRegion(const char *regionTag, int *nr_events, double *events, double *time,
                            int *count);

sps_shim spl_shim = SPS_SHIM_INIT("LIKWID markers");

enum {
    NOTE_NOT_INITIALIZED = SPS_NOTE_FIRST,
    NOTE_INIT_TWICE,
    NOTE_BAD_NAME,
    NOTE_RESET,
    NOTE_GET
};

static atomic_int initialized = 0;

static __attribute__((noinline, cold)) int not_initialized(const char *call) {
    sps_note(&spl_shim, NOTE_NOT_INITIALIZED,
             "%s before likwid_markerInit (or after likwid_markerClose) returns -EFAULT and "
             "records nothing", call);
    return -EFAULT;
}

static __attribute__((noinline, cold)) int bad_name(const char *call) {
    sps_note(&spl_shim, NOTE_BAD_NAME, "%s with a NULL or empty region tag returns -EFAULT",
             call);
    return -EFAULT;
}

void spl_init(const char *language) {
    if (atomic_exchange(&initialized, 1)) {
        sps_note(&spl_shim, NOTE_INIT_TWICE,
                 "likwid_markerInit called again before likwid_markerClose: the running "
                 "session goes on");
        return;
    }
    sps_session_start(&spl_shim, language);
}

int spl_register_n(const char *tag, size_t len) {
    if (!atomic_load_explicit(&initialized, memory_order_relaxed))
        return not_initialized("likwid_markerRegisterRegion");
    if (len == 0) return bad_name("likwid_markerRegisterRegion");
    return sp_region_n(tag, len) == SP_INVALID_REGION ? -EFAULT : 0;
}

int spl_start_n(const char *tag, size_t len) {
    if (__builtin_expect(!atomic_load_explicit(&initialized, memory_order_relaxed), 0))
        return not_initialized("likwid_markerStartRegion");
    if (__builtin_expect(len == 0, 0)) return bad_name("likwid_markerStartRegion");
    return sp_region_begin_n(tag, len) == SP_OK ? 0 : -EFAULT;
}

int spl_stop_n(const char *tag, size_t len) {
    if (__builtin_expect(!atomic_load_explicit(&initialized, memory_order_relaxed), 0))
        return not_initialized("likwid_markerStopRegion");
    if (__builtin_expect(len == 0, 0)) return bad_name("likwid_markerStopRegion");
    int status = sp_region_end_n(tag, len);
    /* SP_ERR_BUFFER_LIMIT: the region stopped, its call was not stored. */
    return status == SP_OK || status == SP_ERR_BUFFER_LIMIT ? 0 : -EFAULT;
}

int spl_reset_n(const char *tag, size_t len) {
    if (!atomic_load_explicit(&initialized, memory_order_relaxed))
        return not_initialized("likwid_markerResetRegion");
    if (len == 0) return bad_name("likwid_markerResetRegion");
    sps_note(&spl_shim, NOTE_RESET,
             "likwid_markerResetRegion(\"%.*s\") accepted: recorded calls are part of the "
             "trace and are kept", (int)(len < 64 ? len : 64), tag);
    return 0;
}

void spl_get(const char *tag, size_t len, int *nr_events, double *events, double *time,
             int *count) {
    (void)events; /* *nr_events = 0: no element of it is meaningful */
    if (nr_events) *nr_events = 0;
    if (time) *time = 0.0;
    if (count) *count = 0;
    sps_note(&spl_shim, NOTE_GET,
             "likwid_markerGetRegion(\"%.*s\") gives zeros: running values are not kept (the "
             "profile written at likwid_markerClose has every call)",
             (int)(len < 64 ? len : 64), tag ? tag : "");
}

void spl_close(void) {
    if (!atomic_exchange(&initialized, 0)) {
        not_initialized("likwid_markerClose");
        return;
    }
    /* A session that was running before Init stays its owner's to finish. */
    sps_session_finish(&spl_shim);
}

SPS_EXPORT void likwid_markerInit(void) { spl_init("c"); }

SPS_EXPORT void likwid_markerThreadInit(void) {}

SPS_EXPORT void likwid_markerNextGroup(void) {}

SPS_EXPORT void likwid_markerClose(void) { spl_close(); }

SPS_EXPORT int likwid_markerRegisterRegion(const char *regionTag) {
    return spl_register_n(regionTag, sps_name_len(&spl_shim, regionTag));
}

/* This thread's last tags (see sps_region_of): a start by a tag seen
 * before is one strcmp and sp_begin. */
static _Thread_local __attribute__((tls_model("initial-exec"))) sps_name_slot
    tags[SPS_NAME_SLOTS];

SPS_EXPORT int likwid_markerStartRegion(const char *regionTag) {
    if (__builtin_expect(!atomic_load_explicit(&initialized, memory_order_relaxed), 0))
        return not_initialized("likwid_markerStartRegion");
    size_t len;
    int region = sps_region_of(&spl_shim, tags, regionTag, &len);
    if (__builtin_expect(region == SP_INVALID_REGION, 0))
        return len == 0 ? bad_name("likwid_markerStartRegion") : -EFAULT;
    sp_begin(region);
    return 0;
}

SPS_EXPORT int likwid_markerStopRegion(const char *regionTag) {
    if (__builtin_expect(!atomic_load_explicit(&initialized, memory_order_relaxed), 0))
        return not_initialized("likwid_markerStopRegion");
    size_t len;
    int region = sps_region_of(&spl_shim, tags, regionTag, &len);
    if (__builtin_expect(region == SP_INVALID_REGION, 0))
        return len == 0 ? bad_name("likwid_markerStopRegion") : -EFAULT;
    int status = sps_end(region);
    /* SP_ERR_BUFFER_LIMIT: the region stopped, its call was not stored. */
    return status == SP_OK || status == SP_ERR_BUFFER_LIMIT ? 0 : -EFAULT;
}

SPS_EXPORT int likwid_markerResetRegion(const char *regionTag) {
    return spl_reset_n(regionTag, sps_name_len(&spl_shim, regionTag));
}

SPS_EXPORT void likwid_markerGetRegion(const char *regionTag, int *nr_events, double *events,
                                       double *time, int *count) {
    spl_get(regionTag, sps_name_len(&spl_shim, regionTag), nr_events, events, time, count);
}
