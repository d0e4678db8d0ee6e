/*
 * spn_session.c - when libscopeprofiler_instrument records: its settings
 * from the environment, the session it starts on the program's behalf,
 * and the end of that session at exit.
 *
 * The library's constructor (it runs before main and before the program's
 * own constructors, since the program depends on it, linked or preloaded)
 * reads SCOPE_PROFILER_FILTER, SCOPE_PROFILER_FILTER_STRICT,
 * SCOPE_PROFILER_THROTTLE and SCOPE_PROFILER_PATCH, and starts a session
 * with the defaults unless one runs. The session is adoptable (sp_session_adoptable), as the PMPI
 * wrappers' is: a program that also calls sp_setup itself takes it over
 * with its own path and options and keeps the calls recorded so far. At
 * exit (atexit, in the process that loaded the library: a forked child
 * exiting must not finish its parent's session) the calls the exiting
 * thread still has open end, throttled functions and patched call sites
 * are reported, and the session is finished if it still runs.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scope_profiler.h"
#include "spn_filter.h"
#include "spn_hooks.h"
#include "spn_patch.h"
#include "spn_sources.h"
#include "spn_symbols.h"
#include "spn_table.h"

#define NO_INSTRUMENT __attribute__((no_instrument_function))

/* TAU's default: more than 100,000 calls at under 10 us each. */
#define DEFAULT_THROTTLE_CALLS 100000u
#define DEFAULT_THROTTLE_US 10u

static spn_filter *filter = NULL;
static pid_t loading_process = 0;
static int started_session = 0;

NO_INSTRUMENT static int quiet(void) {
    const char *value = getenv("SCOPE_PROFILER_QUIET");
    return value && strcmp(value, "1") == 0;
}

NO_INSTRUMENT static void note(const char *text) {
    if (!quiet()) fprintf(stderr, "scope-profiler: instrument: %s\n", text);
}

/* SCOPE_PROFILER_THROTTLE: "off", or "<calls>,<us>". Returns 0 when the
 * value is not understood (the default then applies, with a note). */
NO_INSTRUMENT static int parse_throttle(const char *value, spn_table_config *config) {
    if (strcmp(value, "off") == 0 || strcmp(value, "0") == 0) {
        config->throttle_calls = 0;
        return 1;
    }
    char *end = NULL;
    unsigned long long calls = strtoull(value, &end, 10);
    if (end == value || *end != ',' || calls == 0) return 0;
    const char *us_text = end + 1;
    unsigned long long us = strtoull(us_text, &end, 10);
    if (end == us_text || *end != '\0' || us > UINT64_MAX / 1000u) return 0;
    config->throttle_calls = calls;
    config->throttle_ns = us * 1000u;
    return 1;
}

/* Returns 0 when the run must not record (a strict filter that failed). */
NO_INSTRUMENT static int configure(void) {
    spn_table_config config = {NULL, DEFAULT_THROTTLE_CALLS, DEFAULT_THROTTLE_US * 1000u};
    const char *throttle = getenv("SCOPE_PROFILER_THROTTLE");
    if (throttle && *throttle && !parse_throttle(throttle, &config)) {
        char text[512];
        snprintf(text, sizeof text,
                 "SCOPE_PROFILER_THROTTLE=%.200s is not \"off\" or \"<calls>,<us>\": the default "
                 "%u,%u applies", throttle, DEFAULT_THROTTLE_CALLS, DEFAULT_THROTTLE_US);
        note(text);
    }
    const char *path = getenv("SCOPE_PROFILER_FILTER");
    if (path && *path) {
        char message[4200];
        int has_file_rules = 0;
        filter = spn_filter_load(path, message, sizeof message, &has_file_rules);
        if (message[0]) {
            const char *strict = getenv("SCOPE_PROFILER_FILTER_STRICT");
            int refuse = strict && strcmp(strict, "1") == 0;
            char text[4400];
            snprintf(text, sizeof text, "%s; %s", message,
                     refuse ? "nothing is recorded (SCOPE_PROFILER_FILTER_STRICT=1)"
                            : "the run goes on unfiltered");
            /* Always said, even when quiet: the run is not what was asked. */
            fprintf(stderr, "scope-profiler: instrument: %s\n", text);
            if (refuse) return 0;
        }
        char why[512];
        if (has_file_rules && !spn_sources_open(why, sizeof why)) {
            char text[700];
            snprintf(text, sizeof text,
                     "the filter's SCOREP_FILE_NAMES rules cannot apply (%s): only its region "
                     "rules do", why);
            note(text);
        }
        config.filter = filter;
    }
    spn_table_configure(&config);
    /* SCOPE_PROFILER_PATCH=0: silenced functions keep calling their hooks. */
    const char *patch = getenv("SCOPE_PROFILER_PATCH");
    int patching = 1;
    if (patch && *patch) {
        if (strcmp(patch, "0") == 0) patching = 0;
        else if (strcmp(patch, "1") != 0) {
            char text[512];
            snprintf(text, sizeof text,
                     "SCOPE_PROFILER_PATCH=%.200s is not 0 or 1: call sites are patched (1)",
                     patch);
            note(text);
        }
    }
    spn_patch_configure(patching);
    return 1;
}

NO_INSTRUMENT static void report_one(const spn_function *function, void *context) {
    (void)context;
    if (quiet()) return;
    unsigned long long after = atomic_load(&function->calls);
    fprintf(stderr, "scope-profiler: instrument: throttled %s after %llu calls\n", function->name,
            after);
}

NO_INSTRUMENT static void at_exit(void) {
    if (getpid() != loading_process) return;
    spn_hooks_close_open();
    spn_hooks_enable(0);
    const spn_table_config *config = spn_table_configuration();
    if (config->throttle_calls > 0) spn_table_each_throttled(report_one, NULL);
    unsigned long patched, unpatchable;
    spn_patch_counts(&patched, &unpatchable);
    if (!quiet() && (patched || unpatchable))
        fprintf(stderr,
                "scope-profiler: instrument: %lu hook call sites patched out, %lu left as they "
                "were\n", patched, unpatchable);
    if (started_session && sp_is_active()) (void)sp_finalize();
    spn_filter_free(filter);
    filter = NULL;
    spn_sources_close();
    spn_symbols_release();
}

/* The program's language for the metadata: a gfortran main program
 * brings the Fortran runtime. */
NO_INSTRUMENT static const char *program_language(void) {
    return dlsym(RTLD_DEFAULT, "_gfortran_set_args") ? "fortran" : "c";
}

__attribute__((constructor)) NO_INSTRUMENT static void spn_session_load(void) {
    loading_process = getpid();
    if (!configure()) return;
    if (!sp_is_active()) {
        sp_options options;
        sp_options_init(&options);
        options.source_language = program_language();
        if (sp_setup_with_options(&options) == SP_OK && sp_is_active()) {
            started_session = 1;
            (void)sp_session_adoptable("compiler instrumentation");
        }
    }
    /* The threshold beside the throttled functions (docs/FORMAT.md 4.3). */
    const spn_table_config *config = spn_table_configuration();
    char threshold[64] = "off";
    if (config->throttle_calls > 0)
        snprintf(threshold, sizeof threshold, "%llu,%llu",
                 (unsigned long long)config->throttle_calls,
                 (unsigned long long)(config->throttle_ns / 1000u));
    (void)sp_set_metadata("instrument_throttle", threshold);
    spn_patch_publish(); /* "0 patched, 0 unpatchable", or "off" */
    (void)pthread_atfork(spn_table_fork_prepare, spn_table_fork_parent, spn_table_fork_child);
    (void)pthread_atfork(spn_patch_fork_prepare, spn_patch_fork_parent, spn_patch_fork_child);
    spn_hooks_enable(1);
    (void)atexit(at_exit);
}
