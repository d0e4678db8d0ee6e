/*
 * gptl.c - the GPTL API (gptl.h) over scope-profiler's public API.
 *
 * A GPTL timer is a region. GPTLstart finds the name's handle in the
 * thread's name cache (sps_region_of: one strcmp for a name seen before)
 * and calls sp_begin; GPTLstop does the same and closes with sps_end, which
 * gives the status GPTL's -1 needs. The _handle forms skip the name. So a
 * GPTL code pays about what a native by-name pair costs (bench/shims).
 *
 * Handles: GPTL's are ints where 0 means "not resolved yet"; ours are
 * region handles >= 0. A GPTL handle is ours + 1, so a zero-initialised
 * handle variable (the GPTL idiom: `static int h = 0;`) resolves on its
 * first use. A handle this library did not issue is refused with -1 rather
 * than recorded under another region: it is checked against the registry
 * once per thread (a small per-thread table remembers the checked ones).
 *
 * State: one word, INITIALIZED | DISABLED. The recording calls read it
 * once (relaxed: it only gates whether to record, and a call that races
 * GPTLdisable may record or not, as in GPTL). Everything else GPTL keeps
 * (options, the output tables asked for) is touched only by the lifecycle
 * calls, which GPTL already requires from one thread.
 *
 * Finishing: GPTLfinalize, or exit when the program never calls it. Tables
 * asked for by GPTLpr* need the run's results: then the session ends with
 * sp_finalize_results instead of sp_finalize, this process's table is
 * printed from them, and the job's table from the file just written (only
 * the writing rank reads it back). Otherwise nothing is kept in memory.
 */
#include "gptl.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "scope_profiler.h"
#include "scope_profiler_results.h"
#include "scope_profiler_summary.h"

#include "gptl_internal.h"

sps_shim spg_shim = SPS_SHIM_INIT("GPTL");

enum { INITIALIZED = 1, DISABLED = 2 };
static atomic_int state = 0;
static int exit_hook_set = 0;

/* Where GPTLpr and GPTLpr_summary asked for tables ("" = not asked). */
static char process_table[PATH_MAX];
static char job_table[PATH_MAX];
static int job_table_writer = 0;

/* Notes: one bit each (shim_common.h); options get one bit per known
 * option, from NOTE_OPTION on. */
enum {
    NOTE_NOT_INITIALIZED = SPS_NOTE_FIRST,
    NOTE_INIT_TWICE,
    NOTE_SETOPTION_LATE,
    NOTE_BAD_HANDLE,
    NOTE_BAD_NAME,
    NOTE_UTR,
    NOTE_RESET,
    NOTE_QUERY,
    NOTE_QUERY_FAILED,
    NOTE_TABLES_LOST,
    NOTE_TABLE_FAILED,
    NOTE_PAPI,
    NOTE_OPTION
};

/* GPTL's options: value, name, and what this library does with it (NULL:
 * nothing, noted as not implemented). */
static const struct option_info {
    int value;
    const char *name;
    const char *meaning;
} option_table[] = {
    {GPTLsync_mpi, "GPTLsync_mpi", NULL},
    {GPTLwall, "GPTLwall", "wall-clock time is always recorded"},
    {GPTLcpu, "GPTLcpu", NULL},
    {GPTLabort_on_error, "GPTLabort_on_error",
     "this library never aborts: errors return -1 and the program goes on"},
    {GPTLoverhead, "GPTLoverhead", NULL},
    {GPTLdepthlimit, "GPTLdepthlimit", NULL},
    {GPTLverbose, "GPTLverbose", NULL},
    {GPTLnarrowprint, "GPTLnarrowprint", NULL},
    {GPTLpercent, "GPTLpercent", NULL},
    {GPTLpersec, "GPTLpersec", NULL},
    {GPTLmultiplex, "GPTLmultiplex", NULL},
    {GPTLdopr_preamble, "GPTLdopr_preamble", NULL},
    {GPTLdopr_threadsort, "GPTLdopr_threadsort", NULL},
    {GPTLdopr_multparent, "GPTLdopr_multparent", NULL},
    {GPTLdopr_collision, "GPTLdopr_collision", NULL},
    {GPTLprint_method, "GPTLprint_method", NULL},
    {GPTL_IPC, "GPTL_IPC", NULL},
    {GPTL_LSTPI, "GPTL_LSTPI", NULL},
    {GPTL_DCMRT, "GPTL_DCMRT", NULL},
    {GPTL_LSTPDCM, "GPTL_LSTPDCM", NULL},
    {GPTL_L2MRT, "GPTL_L2MRT", NULL},
    {GPTL_LSTPL2M, "GPTL_LSTPL2M", NULL},
    {GPTL_L3MRT, "GPTL_L3MRT", NULL},
    {GPTLdopr_memusage, "GPTLdopr_memusage", NULL},
    {GPTLtablesize, "GPTLtablesize", NULL},
    {GPTLmaxthreads, "GPTLmaxthreads", "every thread records without setup"},
    {GPTLonlyprint_rank0, "GPTLonlyprint_rank0", "the job's summary is printed by rank 0"},
};
_Static_assert(NOTE_OPTION + sizeof option_table / sizeof option_table[0] <= 64, "one note bit per option");

/* ---- lifecycle ---------------------------------------------------------- */

static int not_initialized(const char *call) {
    sps_note(&spg_shim, NOTE_NOT_INITIALIZED,
             "%s before GPTLinitialize (or after GPTLfinalize) returns -1 and records nothing",
             call);
    return -1;
}

/* The process that called GPTLinitialize: a forked child that exits runs
 * the parent's exit hooks, and must not finish (or comment on) a session
 * that is not its own. */
static pid_t initializing_process = 0;

static void at_exit(void) {
    if ((atomic_load(&state) & INITIALIZED) && getpid() == initializing_process) spg_finalize();
}

int spg_initialize(const char *language) {
    if (atomic_fetch_or(&state, INITIALIZED) & INITIALIZED) {
        sps_note(&spg_shim, NOTE_INIT_TWICE,
                 "GPTLinitialize called again before GPTLfinalize: returns -1, the running "
                 "session goes on");
        return -1;
    }
    initializing_process = getpid();
    if (!exit_hook_set) exit_hook_set = atexit(at_exit) == 0;
    /* A failed setup was explained by the core; the calls that follow
     * are then no-ops, as in a build without the profiler. */
    return sps_session_start(&spg_shim, language) == SP_OK ? 0 : -1;
}

/* One table into `path`: the process's own rank only when `own_rank` (its
 * results carry the job's size, so the caption would speak of every rank). */
static void write_table(const sp_results *results, const char *path, const char *title,
                        int own_rank) {
    FILE *out = fopen(path, "w");
    if (!out) {
        sps_note(&spg_shim, NOTE_TABLE_FAILED, "cannot write the GPTLpr table %s: %s", path,
                 strerror(errno));
        return;
    }
    sp_summary_options options;
    sp_summary_options_init(&options);
    options.style = SP_SUMMARY_STYLE_ASCII;
    options.title = title;
    uint32_t rank = 0;
    if (own_rank && sp_results_row_count(results) > 0) {
        rank = sp_results_row_rank(results, 0);
        options.ranks = &rank;
        options.rank_count = 1;
        options.columns = "region,calls,total,exclusive,avg,min,max"; /* GPTL's timing.<id> */
    }
    char message[512] = "";
    int status = sp_summary_print(results, out, &options, message, sizeof message);
    if (fclose(out) != 0 && status == SP_OK) status = SP_ERR_OUTPUT;
    /* SP_ERR_NESTING: the table was printed flat; nothing to add. */
    if (status != SP_OK && status != SP_ERR_NESTING)
        sps_note(&spg_shim, NOTE_TABLE_FAILED, "the GPTLpr table %s is incomplete: %s", path,
                 message[0] ? message : sp_error_string(status));
}

/* The job's table, from the file the session just wrote (every rank). */
static void write_job_table(const char *profile) {
    sp_results *job = NULL;
    char message[512] = "";
    if (sp_results_open(profile, SP_RESULTS_CALLS_ON_DEMAND, &job, message, sizeof message) !=
        SP_OK) {
        sps_note(&spg_shim, NOTE_TABLE_FAILED, "cannot read %s back for the GPTLpr_summary "
                 "table: %s", profile, message);
        return;
    }
    write_table(job, job_table, "scope-profiler summary of the job (GPTLpr_summary)", 0);
    sp_results_close(job);
}

/* End the session this shim started, writing the tables asked for. */
static int finish_session(void) {
    int tables = process_table[0] || (job_table[0] && job_table_writer);
    if (!sps_session_owned(&spg_shim)) {
        sps_session_forget(&spg_shim);
        if (tables)
            sps_note(&spg_shim, NOTE_TABLES_LOST,
                     "the session ended before GPTLfinalize (inside MPI_Finalize, or by the "
                     "program): the GPTLpr tables were not written; the profile was");
        return SP_ERR_NOT_ACTIVE;
    }
    if (!tables) return sps_session_finish(&spg_shim);
    sps_session_forget(&spg_shim);
    sp_results *results = NULL;
    int status = sp_finalize_results(&results);
    if (results) {
        if (process_table[0])
            write_table(results, process_table, "scope-profiler summary of this process (GPTLpr)",
                        1);
        if (job_table[0] && job_table_writer && sp_results_path(results))
            write_job_table(sp_results_path(results));
        sp_results_close(results);
    }
    return status;
}

int spg_finalize(void) {
    if (!(atomic_fetch_and(&state, ~(INITIALIZED | DISABLED)) & INITIALIZED))
        return not_initialized("GPTLfinalize");
    int status = finish_session();
    process_table[0] = job_table[0] = '\0';
    job_table_writer = 0;
    /* Calls lost at finalize (open timers, a drop limit) were reported by
     * the core; the file was written, which is what GPTLfinalize promises. */
    return status == SP_OK || status == SP_ERR_NOT_ACTIVE || status == SP_ERR_OPEN_AT_FINALIZE ||
                   status == SP_ERR_BUFFER_LIMIT
               ? 0
               : -1;
}

SPS_EXPORT int GPTLinitialize(void) { return spg_initialize("c"); }

SPS_EXPORT int GPTLfinalize(void) { return spg_finalize(); }

SPS_EXPORT int GPTLsetoption(const int option, const int val) {
    if (atomic_load(&state) & INITIALIZED) {
        sps_note(&spg_shim, NOTE_SETOPTION_LATE,
                 "GPTLsetoption after GPTLinitialize returns -1 (GPTL's rule)");
        return -1;
    }
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; i++) {
        if (option_table[i].value != option) continue;
        if (option == GPTLwall && val) return 0; /* what happens anyway */
        if (option == GPTLabort_on_error && !val) return 0;
        if (option_table[i].meaning)
            sps_note(&spg_shim, NOTE_OPTION + (unsigned)i, "GPTLsetoption(%s, %d): %s",
                     option_table[i].name, val, option_table[i].meaning);
        else
            sps_note(&spg_shim, NOTE_OPTION + (unsigned)i,
                     "GPTLsetoption(%s): not implemented by scope-profiler, accepted and "
                     "ignored", option_table[i].name);
        return 0;
    }
    sps_note(&spg_shim, NOTE_PAPI,
             "GPTLsetoption(%d): PAPI counters are not read by the GPTL API (accepted and "
             "ignored); scope-profiler counts hardware events with SCOPE_PROFILER_PERF_EVENTS "
             "or SCOPE_PROFILER_LIKWID",
             option);
    return 0;
}

SPS_EXPORT int GPTLsetutr(const int option) {
    sps_note(&spg_shim, NOTE_UTR,
             "GPTLsetutr(%d) accepted and ignored: the clock is scope-profiler's "
             "(SCOPE_PROFILER_CLOCK)",
             option);
    return 0;
}

/* ---- timers --------------------------------------------------------------- */

/* The slow side of the recording calls: not initialized, or disabled. */
static __attribute__((noinline, cold)) int not_recording(int now, const char *call) {
    return (now & INITIALIZED) ? 0 : not_initialized(call);
}

static __attribute__((noinline, cold)) int bad_name(const char *call) {
    sps_note(&spg_shim, NOTE_BAD_NAME, "%s with a NULL or empty name returns -1", call);
    return -1;
}

static inline int start_n(const char *name, size_t len) {
    int now = atomic_load_explicit(&state, memory_order_relaxed);
    if (__builtin_expect(now != INITIALIZED, 0)) return not_recording(now, "GPTLstart");
    if (__builtin_expect(len == 0, 0)) return bad_name("GPTLstart");
    return sp_region_begin_n(name, len) == SP_OK ? 0 : -1;
}

static inline int stop_n(const char *name, size_t len) {
    int now = atomic_load_explicit(&state, memory_order_relaxed);
    if (__builtin_expect(now != INITIALIZED, 0)) return not_recording(now, "GPTLstop");
    if (__builtin_expect(len == 0, 0)) return bad_name("GPTLstop");
    int status = sp_region_end_n(name, len);
    /* SP_ERR_BUFFER_LIMIT: the timer stopped, its call was not stored. */
    return status == SP_OK || status == SP_ERR_BUFFER_LIMIT ? 0 : -1;
}

int spg_start_n(const char *name, size_t len) { return start_n(name, len); }

int spg_stop_n(const char *name, size_t len) { return stop_n(name, len); }

int spg_init_handle_n(const char *name, size_t len, int *handle) {
    if (!handle) {
        sps_note(&spg_shim, NOTE_BAD_HANDLE, "GPTLinit_handle with a NULL handle returns -1");
        return -1;
    }
    if (len == 0) return bad_name("GPTLinit_handle");
    int region = sp_region_n(name, len);
    if (region == SP_INVALID_REGION) return -1;
    *handle = region + 1;
    return 0;
}

/* Handles this thread already checked, direct-mapped by value: checking a
 * handle asks the core's registry (sp_region_name), which a hot loop
 * should not pay on every call. initial-exec TLS, as the core's own. */
#define CHECKED_SLOTS 16
static _Thread_local __attribute__((tls_model("initial-exec"))) int checked[CHECKED_SLOTS];

static __attribute__((noinline)) int check_handle(const char *call, int handle) {
    int region = handle - 1;
    if (region < 0 || !sp_region_name(region)) {
        sps_note(&spg_shim, NOTE_BAD_HANDLE,
                 "%s with handle %d, which GPTLinit_handle never gave, returns -1", call, handle);
        return SP_INVALID_REGION;
    }
    checked[region % CHECKED_SLOTS] = handle;
    return region;
}

/* The region of a GPTL handle (resolving a 0 handle from the name), or
 * SP_INVALID_REGION after a note. */
static inline int region_of(const char *call, const char *name, size_t len, int *handle) {
    if (__builtin_expect(!handle, 0)) {
        sps_note(&spg_shim, NOTE_BAD_HANDLE, "%s with a NULL handle returns -1", call);
        return SP_INVALID_REGION;
    }
    int h = *handle;
    if (__builtin_expect(h > 0 && checked[(h - 1) % CHECKED_SLOTS] == h, 1)) return h - 1;
    if (h == 0 && spg_init_handle_n(name, len, handle) != 0) return SP_INVALID_REGION;
    return check_handle(call, *handle);
}

int spg_start_handle_n(const char *name, size_t len, int *handle) {
    int now = atomic_load_explicit(&state, memory_order_relaxed);
    if (__builtin_expect(now != INITIALIZED, 0)) return not_recording(now, "GPTLstart_handle");
    int region = region_of("GPTLstart_handle", name, len, handle);
    if (region == SP_INVALID_REGION) return -1;
    sp_begin(region);
    return 0;
}

int spg_stop_handle_n(const char *name, size_t len, int *handle) {
    int now = atomic_load_explicit(&state, memory_order_relaxed);
    if (__builtin_expect(now != INITIALIZED, 0)) return not_recording(now, "GPTLstop_handle");
    int region = region_of("GPTLstop_handle", name, len, handle);
    if (region == SP_INVALID_REGION) return -1;
    int status = sps_end(region);
    return status == SP_OK || status == SP_ERR_BUFFER_LIMIT ? 0 : -1;
}

/* This thread's last names (see sps_region_of): a start by a name seen
 * before is one strcmp and sp_begin. */
static _Thread_local __attribute__((tls_model("initial-exec"))) sps_name_slot
    names[SPS_NAME_SLOTS];

SPS_EXPORT int GPTLstart(const char *name) {
    int now = atomic_load_explicit(&state, memory_order_relaxed);
    if (__builtin_expect(now != INITIALIZED, 0)) return not_recording(now, "GPTLstart");
    size_t len;
    int region = sps_region_of(&spg_shim, names, name, &len);
    if (__builtin_expect(region == SP_INVALID_REGION, 0))
        return len == 0 ? bad_name("GPTLstart") : -1;
    sp_begin(region);
    return 0;
}

SPS_EXPORT int GPTLstop(const char *name) {
    int now = atomic_load_explicit(&state, memory_order_relaxed);
    if (__builtin_expect(now != INITIALIZED, 0)) return not_recording(now, "GPTLstop");
    size_t len;
    int region = sps_region_of(&spg_shim, names, name, &len);
    if (__builtin_expect(region == SP_INVALID_REGION, 0))
        return len == 0 ? bad_name("GPTLstop") : -1;
    int status = sps_end(region);
    /* SP_ERR_BUFFER_LIMIT: the timer stopped, its call was not stored. */
    return status == SP_OK || status == SP_ERR_BUFFER_LIMIT ? 0 : -1;
}

SPS_EXPORT int GPTLinit_handle(const char *name, int *handle) {
    return spg_init_handle_n(name, sps_name_len(&spg_shim, name), handle);
}

/* The name is only read to resolve a 0 handle: no scan otherwise. */
SPS_EXPORT int GPTLstart_handle(const char *name, int *handle) {
    size_t len = handle && *handle ? 0 : sps_name_len(&spg_shim, name);
    return spg_start_handle_n(name, len, handle);
}

SPS_EXPORT int GPTLstop_handle(const char *name, int *handle) {
    size_t len = handle && *handle ? 0 : sps_name_len(&spg_shim, name);
    return spg_stop_handle_n(name, len, handle);
}

SPS_EXPORT int GPTLenable(void) {
    atomic_fetch_and(&state, ~DISABLED);
    return 0;
}

SPS_EXPORT int GPTLdisable(void) {
    atomic_fetch_or(&state, DISABLED);
    return 0;
}

SPS_EXPORT int GPTLreset(void) {
    if (!(atomic_load(&state) & INITIALIZED)) return not_initialized("GPTLreset");
    sps_note(&spg_shim, NOTE_RESET,
             "GPTLreset accepted: recorded calls are part of the trace and are kept");
    return 0;
}

/* ---- output --------------------------------------------------------------- */

static int remember(char *target, const char *call, const char *file, size_t len) {
    if (!(atomic_load(&state) & INITIALIZED)) return not_initialized(call);
    if (!file || len == 0) return bad_name(call);
    if (len >= PATH_MAX) {
        sps_note(&spg_shim, NOTE_TABLE_FAILED, "%s: a file name of %zu bytes is too long", call,
                 len);
        return -1;
    }
    memcpy(target, file, len);
    target[len] = '\0';
    return 0;
}

int spg_pr_file_n(const char *file, size_t len) {
    return remember(process_table, "GPTLpr_file", file, len);
}

int spg_pr_summary_n(const char *file, size_t len, int writer) {
    int rc = remember(job_table, "GPTLpr_summary", file, len);
    if (rc == 0) job_table_writer = writer;
    return rc;
}

SPS_EXPORT int GPTLpr(const int id) {
    char file[64];
    int len = snprintf(file, sizeof file, "timing.%d", id);
    return remember(process_table, "GPTLpr", file, (size_t)len);
}

SPS_EXPORT int GPTLpr_file(const char *outfile) {
    return spg_pr_file_n(outfile, outfile ? strlen(outfile) : 0);
}

/* ---- queries -------------------------------------------------------------- */

/*
 * Running values, as GPTL keeps them per thread and timer: the calls of the
 * timer the calling thread finished, their wall time, and whether it is
 * running now. They come from the core's sp_region_thread_totals, which
 * reads what the thread recorded (each event once, however often asked), so
 * GPTLstart/GPTLstop pay nothing for them. The alternative, a sum per timer
 * kept here at every GPTLstop, would need a clock reading of our own per
 * start and stop: two more per pair, past the shim's budget of the native
 * pair + 5 ns (bench/shims), for the few timers a program ever queries.
 *
 * GPTL's `t` names a thread by GPTL's own numbering, which this shim does
 * not keep (every thread records without setup): the calling thread is
 * answered for any t, and a t >= 0 is noted once. A timer the thread never
 * started (and a name never seen) returns -1, GPTL's "not found".
 */
static int thread_totals(const char *call, const char *name, size_t len, int t,
                         sp_region_totals *totals) {
    memset(totals, 0, sizeof *totals);
    if (!(atomic_load(&state) & INITIALIZED)) return not_initialized(call);
    if (len == 0) return bad_name(call);
    if (t >= 0)
        sps_note(&spg_shim, NOTE_QUERY,
                 "%s(t = %d): values are those of the calling thread (GPTL's thread numbers "
                 "are not kept)", call, t);
    int region = sp_region_n(name, len);
    if (region == SP_INVALID_REGION) return -1;
    int status = sp_region_thread_totals(region, totals);
    if (status != SP_OK) {
        sps_note(&spg_shim, NOTE_QUERY_FAILED, "%s(\"%.*s\") returns -1: %s", call,
                 (int)(len < 64 ? len : 64), name, sp_error_string(status));
        return -1;
    }
    return totals->calls == 0 && totals->open == 0 ? -1 : 0;
}

int spg_get_wallclock_n(const char *name, size_t len, int t, double *value) {
    if (!value) return -1;
    sp_region_totals totals;
    int rc = thread_totals("GPTLget_wallclock", name, len, t, &totals);
    *value = rc == 0 ? (double)totals.total_ns * 1e-9 : 0.0;
    return rc;
}

int spg_query_n(const char *name, size_t len, int t, int *count, int *onflg,
                double *wallclock, double *dusr, double *dsys, long long *papicounters_out,
                int maxcounters) {
    sp_region_totals totals;
    int rc = thread_totals("GPTLquery", name, len, t, &totals);
    if (count) *count = totals.calls > INT_MAX ? INT_MAX : (int)totals.calls;
    if (onflg) *onflg = totals.open > 0;
    if (wallclock) *wallclock = (double)totals.total_ns * 1e-9;
    /* CPU time per timer is not recorded (GPTLcpu is not implemented) */
    if (dusr) *dusr = 0.0;
    if (dsys) *dsys = 0.0;
    for (int i = 0; papicounters_out && i < maxcounters; i++) papicounters_out[i] = 0;
    return rc;
}

SPS_EXPORT int GPTLget_wallclock(const char *name, int t, double *value) {
    return spg_get_wallclock_n(name, sps_name_len(&spg_shim, name), t, value);
}

SPS_EXPORT int GPTLquery(const char *name, int t, int *count, int *onflg, double *wallclock,
                         double *dusr, double *dsys, long long *papicounters_out,
                         const int maxcounters) {
    return spg_query_n(name, sps_name_len(&spg_shim, name), t, count, onflg, wallclock, dusr,
                       dsys, papicounters_out, maxcounters);
}

SPS_EXPORT int GPTLstamp(double *wall, double *usr, double *sys) {
    if (!wall || !usr || !sys) return -1;
    *wall = (double)sp_now_ns() * 1e-9;
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0) {
        *usr = *sys = 0.0;
        return 0;
    }
    *usr = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6;
    *sys = (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
    return 0;
}
