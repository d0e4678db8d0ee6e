/*
 * profiler.c - the lifecycle: sp_setup, sp_finalize and the options.
 *
 * setup resolves the options (arguments, then environment, then defaults),
 * starts a recording session and remembers what finalize needs. finalize
 * stops the session, builds the rank's profile (run.c), writes it through
 * the one writer (h5_writer.c) and prints the report. Errors never stop the
 * program: they come back as a status, with one line on stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/cpus.h"
#include "record/clock.h"
#include "counters/counters.h"
#include "util/diag.h"
#include "util/error.h"
#include "format/h5_writer.h"
#include "format/output_check.h"
#include "job/job.h"
#include "lifecycle/output_path.h"
#include "lifecycle/pause.h"
#include "lifecycle/user_metadata.h"
#include "lifecycle/profiler.h"
#include "format/reader.h"
#include "analysis/results_internal.h"
#include "profile/metadata.h"
#include "lifecycle/finalize_summary.h"
#include "record/recorder.h"
#include "record/run.h"
#include "record/spill.h"

typedef struct spi_config {
    bool active;              /* between setup and finalize, not disabled */
    bool disabled;            /* SCOPE_PROFILER_DISABLE=1 at setup */
    /* started on the program's behalf (sp_session_adoptable): the
     * program's own setup takes it over; adoptable_by says by whom */
    bool adoptable;
    char *adoptable_by;
    char *file_path;
    /* the path a taken-over session began with: the recorder's spill
     * label points to it until the session is released */
    char *first_path;
    char *label;
    char *source_language;    /* NULL: "c" */
    sp_metadata_detail detail;
    bool write_file;
    bool quiet;
    bool aggregate;           /* SP_MODE_AGGREGATE after resolution */
    bool tsc;                 /* the TSC clock after resolution */
    bool path_per_process;    /* the path pattern names the rank or pid */
    /* what the recording began with, for a setup that takes it over */
    size_t buffer_limit;
    bool flush;
    char *perf_events;        /* the perf events asked for (options, then environment) */
    bool likwid;              /* LIKWID asked for */
    int64_t start_time_ns;
} spi_config;

#define DEFAULT_BUFFER_LIMIT ((size_t)256 << 20)

static spi_config config;

static bool env_flag(const char *name) {
    const char *value = getenv(name);
    return value && (strcmp(value, "1") == 0 || strcmp(value, "true") == 0 ||
                     strcmp(value, "yes") == 0 || strcmp(value, "on") == 0);
}

static const char *env_text(const char *name) {
    const char *value = getenv(name);
    return value && *value ? value : NULL;
}

/* sp_options.mode, then $SCOPE_PROFILER_MODE, then trace. */
static sp_mode resolve_mode(sp_mode asked) {
    if (asked != SP_MODE_AUTO) return asked;
    const char *value = env_text("SCOPE_PROFILER_MODE");
    if (!value || strcmp(value, "trace") == 0) return SP_MODE_TRACE;
    if (strcmp(value, "aggregate") == 0) return SP_MODE_AGGREGATE;
    spi_diag("SCOPE_PROFILER_MODE=%s is not \"trace\" or \"aggregate\"; recording a trace",
             value);
    return SP_MODE_TRACE;
}

/* sp_options.clock, then $SCOPE_PROFILER_CLOCK, then auto: the TSC only
 * where it can stand in for CLOCK_MONOTONIC (clock.h). */
static bool resolve_tsc(sp_clock asked) {
    if (asked == SP_CLOCK_AUTO) {
        const char *value = env_text("SCOPE_PROFILER_CLOCK");
        if (value && strcmp(value, "tsc") == 0) asked = SP_CLOCK_TSC;
        else if (value && strcmp(value, "monotonic") == 0) asked = SP_CLOCK_MONOTONIC;
        else if (value && strcmp(value, "auto") != 0)
            spi_diag("SCOPE_PROFILER_CLOCK=%s is not \"auto\", \"tsc\" or \"monotonic\"; "
                     "choosing automatically",
                     value);
    }
    if (asked == SP_CLOCK_MONOTONIC) return false;
    char reason[256] = "";
    bool usable = spi_clock_tsc_usable(reason, sizeof reason);
    if (!usable && asked == SP_CLOCK_TSC)
        spi_diag("the TSC clock was asked for, but %s; recording with CLOCK_MONOTONIC", reason);
    /* Left to choose, a virtual machine's TSC is trusted only where no
     * thread can move between vCPUs whose counters may disagree (clock.h):
     * a process bound to one CPU, as an MPI rank usually is. Asked for by
     * name, the TSC is used anyway (the user knows the machine). */
    if (usable && asked == SP_CLOCK_AUTO && spi_cpus_available() > 1 &&
        spi_clock_in_virtual_machine())
        return false;
    return usable;
}

/* "256M", "1G", "65536", "0": bytes with an optional binary suffix. */
static bool parse_bytes(const char *text, size_t *bytes) {
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    if (end == text || errno || text[0] == '-') return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'i' && shift) end++; /* "MiB" spelled "Mi" */
    if (*end == 'B' || *end == 'b') end++;
    if (*end || (shift && value > (SIZE_MAX >> shift))) return false;
    *bytes = (size_t)(value << shift);
    return true;
}

/* sp_options.buffer_limit_bytes, then $SCOPE_PROFILER_BUFFER_LIMIT, then
 * 256 MiB for a trace written to a file (it flushes beside it) and no limit
 * for results kept in memory (nowhere to flush: a default bound would drop
 * calls the program asked to keep). */
static size_t resolve_buffer_limit(size_t asked, bool write_file) {
    if (asked != SP_BUFFER_LIMIT_DEFAULT) return asked;
    const char *value = env_text("SCOPE_PROFILER_BUFFER_LIMIT");
    size_t bytes;
    if (!value) return write_file ? DEFAULT_BUFFER_LIMIT : 0;
    if (parse_bytes(value, &bytes)) return bytes;
    spi_diag("SCOPE_PROFILER_BUFFER_LIMIT=%s is not a size in bytes (e.g. 256M, 1G, 0 for no "
             "limit); using 256 MiB", value);
    return DEFAULT_BUFFER_LIMIT;
}

/* sp_options.overflow, then $SCOPE_PROFILER_OVERFLOW, then flush. */
static bool resolve_flush(sp_overflow asked) {
    if (asked != SP_OVERFLOW_AUTO) return asked == SP_OVERFLOW_FLUSH;
    const char *value = env_text("SCOPE_PROFILER_OVERFLOW");
    if (!value || strcmp(value, "flush") == 0) return true;
    if (strcmp(value, "drop") == 0) return false;
    spi_diag("SCOPE_PROFILER_OVERFLOW=%s is not \"flush\" or \"drop\"; flushing", value);
    return true;
}

SP_API void sp_options_init(sp_options *options) {
    if (!options) return;
    *options = (sp_options){0};
    options->metadata_detail = SP_METADATA_MINIMAL;
    options->write_file = 1;
    options->buffer_limit_bytes = SP_BUFFER_LIMIT_DEFAULT;
    options->quiet = env_flag("SCOPE_PROFILER_QUIET");
    options->perf_events = NULL; /* counters.c reads $SCOPE_PROFILER_PERF_EVENTS */
    options->likwid = env_flag("SCOPE_PROFILER_LIKWID");
}

static void release_config(void) {
    spi_free(config.adoptable_by);
    spi_free(config.file_path);
    spi_free(config.first_path);
    spi_free(config.label);
    spi_free(config.source_language);
    spi_free(config.perf_events);
    config = (spi_config){0};
}

static void finalize_inside_mpi_finalize(void) { sp_finalize(); }

/* "[rank N]" on the diagnostics of ranks > 0: the job's rank, or, while
 * the process is alone, the launcher's (a setup before MPI_Init). */
static void label_diagnostics(void) {
    int rank = (int)spi_job_rank(), size = (int)spi_job_size();
    if (size == 1 && !spi_launcher_rank(&rank, &size)) rank = 0;
    spi_diag_set_rank(size > 1 ? rank : 0);
}

/* Finalize of a process that is not (or no longer) in an MPI job: a setup
 * before MPI_Init joins MPI_COMM_WORLD now if MPI still runs. When it
 * cannot, and the launcher started several processes, each writes its own
 * file named with its rank (never several processes one path), saying so.
 * SP_OK or an error from joining (err filled). */
static int settle_job(spi_error *err) {
    const char *why_alone = NULL;
    int status = spi_job_join_late(&why_alone, err);
    label_diagnostics();
    int rank, size;
    /* also after a failed join: alone, whatever the reason */
    if (spi_job_size() > 1 || !config.write_file || config.path_per_process ||
        !spi_launcher_rank(&rank, &size) || size < 2)
        return status;
    char *own = spi_output_path_for_rank(config.file_path, rank);
    if (!own) return status != SP_OK ? status : spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    spi_diag("this process is rank %d of %d launched together, but the profile is not an MPI "
             "job's (%s): it writes %s for this rank alone (set up after MPI_Init and finalize "
             "before MPI_Finalize for one file of the whole job)",
             rank, size, why_alone ? why_alone : "sp_setup ran without MPI", own);
    spi_free(config.file_path);
    config.file_path = own;
    return status;
}

/* fork(): a child does not continue the parent's session. It records
 * nothing and writes nothing (never the parent's output path) unless it
 * calls sp_setup itself; the parent's session goes on unchanged.
 * The configuration is forgotten, not freed: another thread of the parent
 * may have been inside release_config at the fork, so the child's copy of
 * a pointer may already be freed, and a second free would corrupt the
 * child's heap. The few strings stay allocated in the child (constant
 * memory, whatever the parent did). */
static void forked_child(void) {
    spi_recorder_fork_child();
    config = (spi_config){0};
}

static pthread_once_t fork_handlers_once = PTHREAD_ONCE_INIT;
static void register_fork_handlers(void) {
    if (pthread_atfork(spi_recorder_fork_prepare, spi_recorder_fork_parent, forked_child) != 0)
        spi_diag("cannot register fork handlers: a child forked while other threads record "
                 "may block in its first recording call");
}

SP_API int sp_setup_with_options(const sp_options *options) {
    return spi_setup_in_job(options, NULL);
}

static bool options_valid(const sp_options *options) {
    return options &&
           (options->metadata_detail == SP_METADATA_MINIMAL ||
            options->metadata_detail == SP_METADATA_FULL) &&
           (options->mode == SP_MODE_AUTO || options->mode == SP_MODE_TRACE ||
            options->mode == SP_MODE_AGGREGATE) &&
           (options->clock == SP_CLOCK_AUTO || options->clock == SP_CLOCK_TSC ||
            options->clock == SP_CLOCK_MONOTONIC) &&
           (options->overflow == SP_OVERFLOW_AUTO || options->overflow == SP_OVERFLOW_FLUSH ||
            options->overflow == SP_OVERFLOW_DROP) &&
           /* documented as 0 or 1: anything else is a caller's mistake */
           (options->write_file == 0 || options->write_file == 1) &&
           (options->quiet == 0 || options->quiet == 1) &&
           (options->likwid == 0 || options->likwid == 1);
}

/* The perf events and LIKWID a setup asks for: its options, then the
 * environment (as counters.c resolves them). */
static const char *perf_request(const sp_options *options) {
    const char *list = options->perf_events;
    if (!list || !*list) list = getenv("SCOPE_PROFILER_PERF_EVENTS");
    return list && *list ? list : NULL;
}

static bool likwid_request(const sp_options *options) {
    return options->likwid || env_flag("SCOPE_PROFILER_LIKWID");
}

/* The output path `options` ask for, in this job. Every rank resolves it
 * (it needs the job's rank); rank 0, which writes the file, checks it: an
 * empty path, one that can never be published (output_check.h), a
 * directory that is missing or where no file can be created. Every rank
 * gets the job's verdict, `status` (this rank's own trouble so far) folded
 * in, so all start the session or none does. Collective like
 * spi_job_start: every rank of a joined job calls it. SP_OK with *path set
 * (spi_free), or the status with *say holding what this rank has to say
 * about it (empty unless it found the trouble itself: a refusal is said
 * once, by the rank that found it). */
static int agreed_output_path(const sp_options *options, bool write_file, int status,
                              char **path, spi_error *say) {
    *path = NULL;
    spi_error local;
    spi_error_clear(&local);
    if (status != SP_OK) spi_error_set(&local, status, "out of memory");
    bool checks = write_file && spi_job_rank() == 0 && status == SP_OK;
    /* An empty path given by the program is a mistake, not "the default":
     * refused, unless $SCOPE_PROFILER_FILE decides the path anyway. */
    if (checks && options->file_path && !options->file_path[0] &&
        !env_text("SCOPE_PROFILER_FILE"))
        spi_error_set(&local, SP_ERR_INVALID_ARGUMENT, "the output path is empty");
    if (local.status == SP_OK) {
        *path = spi_output_path(options->file_path, spi_job_rank(), spi_job_size());
        if (!*path) spi_error_set(&local, SP_ERR_OUT_OF_MEMORY, "out of memory");
        /* refused now, not after the run at finalize, when the data would be lost */
        else if (checks && spi_output_path_check(*path, &local) == SP_OK)
            spi_output_dir_check(*path, &local);
    }
    spi_error job_err;
    spi_error_clear(&job_err);
    status = spi_job_agree(local.status, &job_err);
    *say = local.status != SP_OK ? local : job_err;
    if (status != SP_OK) {
        spi_free(*path);
        *path = NULL;
    }
    return status;
}

/* Append "; <what>" (the first without "; ") to text. */
static void note_kept(char *text, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void note_kept(char *text, size_t size, const char *format, ...) {
    size_t used = strlen(text);
    if (used && used + 2 < size) {
        memcpy(text + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= size) return;
    va_list args;
    va_start(args, format);
    vsnprintf(text + used, size - used, format, args);
    va_end(args);
}

/* What the program's setup asks for that the running session cannot
 * change: it recorded calls with it. Only fields the options set are
 * compared (AUTO and the defaults resolve from the same environment the
 * session began with). */
static void describe_kept(const sp_options *options, const void *mpi_comm, char *kept,
                          size_t size) {
    kept[0] = '\0';
    const char *mode = config.aggregate ? "aggregate" : "trace";
    if (options->mode != SP_MODE_AUTO && (options->mode == SP_MODE_AGGREGATE) != config.aggregate)
        note_kept(kept, size, "mode %s (%s asked)", mode,
                  options->mode == SP_MODE_AGGREGATE ? "aggregate" : "trace");
    if (options->clock != SP_CLOCK_AUTO) {
        char reason[256] = "";
        bool tsc = options->clock == SP_CLOCK_TSC && spi_clock_tsc_usable(reason, sizeof reason);
        if (tsc != config.tsc)
            note_kept(kept, size, "clock %s (%s asked)", config.tsc ? "tsc" : "monotonic",
                      tsc ? "tsc" : "monotonic");
    }
    if (!config.aggregate && options->buffer_limit_bytes != SP_BUFFER_LIMIT_DEFAULT &&
        options->buffer_limit_bytes != config.buffer_limit)
        note_kept(kept, size, "buffer limit %zu bytes (%zu asked)", config.buffer_limit,
                  options->buffer_limit_bytes);
    if (!config.aggregate && config.buffer_limit && options->overflow != SP_OVERFLOW_AUTO &&
        (options->overflow == SP_OVERFLOW_FLUSH) != config.flush)
        note_kept(kept, size, "overflow %s (%s asked)", config.flush ? "flush" : "drop",
                  config.flush ? "drop" : "flush");
    const char *perf = perf_request(options);
    if ((perf == NULL) != (config.perf_events == NULL) ||
        (perf && strcmp(perf, config.perf_events) != 0))
        note_kept(kept, size, "perf events %s (%s asked)",
                  config.perf_events ? config.perf_events : "none", perf ? perf : "none");
    if (likwid_request(options) != config.likwid)
        note_kept(kept, size, "LIKWID %s (%s asked)", config.likwid ? "on" : "off",
                  config.likwid ? "off" : "on");
    if ((options->write_file != 0) != config.write_file)
        note_kept(kept, size, "write_file %d (%d asked)", config.write_file ? 1 : 0,
                  options->write_file);
    if (mpi_comm)
        note_kept(kept, size, "the communicator it joined (not the one sp_setup_mpi names)");
}

/* The program's own setup of a session started on its behalf
 * (sp_session_adoptable): the recording goes on, calls recorded so far
 * included; the output path, label, language, metadata detail and quiet
 * become the program's; the rest stays, said once on rank 0. With MPI the
 * session's job stays too, so this is collective like the first setup was
 * (every rank of the job calls it). On failure the session goes on
 * unchanged (and may still be taken over). */
static int take_over(const sp_options *options, const void *mpi_comm) {
    bool quiet = options->quiet || env_flag("SCOPE_PROFILER_QUIET");
    spi_diag_set_quiet(quiet);
    const char *label = options->label ? options->label : env_text("SCOPE_PROFILER_LABEL");
    const char *language = options->source_language && *options->source_language
                               ? options->source_language
                               : NULL;
    char *label_copy = label ? spi_strdup(label) : NULL;
    char *language_copy = language ? spi_strdup(language) : NULL;
    int status = (label && !label_copy) || (language && !language_copy) ? SP_ERR_OUT_OF_MEMORY
                                                                        : SP_OK;
    char *path = NULL;
    spi_error say;
    /* The job's agreement calls MPI, and those calls are not the program's:
     * the PMPI wrappers record only while sp_is_active(), so the session
     * is hidden from them meanwhile (the recorder itself goes on). */
    config.active = false;
    status = agreed_output_path(options, config.write_file, status, &path, &say);
    config.active = true;
    if (status != SP_OK) {
        spi_free(label_copy);
        spi_free(language_copy);
        if (say.status != SP_OK || spi_job_rank() == 0)
            spi_diag("%s%sthe session started by %s goes on unchanged and writes %s",
                     say.message, say.message[0] ? "; " : "", config.adoptable_by,
                     config.file_path);
        spi_diag_set_quiet(config.quiet);
        spi_status_remember(status);
        return status;
    }
    char kept[768];
    describe_kept(options, mpi_comm, kept, sizeof kept);
    if (kept[0] && spi_job_rank() == 0)
        spi_diag("sp_setup takes over the session started by %s, with the calls recorded so "
                 "far; what cannot change once calls are recorded stays as it began: %s",
                 config.adoptable_by, kept);
    spi_free(config.label);
    config.label = label_copy;
    spi_free(config.source_language);
    config.source_language = language_copy;
    config.detail = options->metadata_detail;
    config.quiet = quiet;
    /* the recorder's spill label is the first path: kept until release */
    if (config.first_path) spi_free(config.file_path);
    else config.first_path = config.file_path;
    config.file_path = path;
    config.path_per_process = spi_output_path_per_process(options->file_path);
    config.adoptable = false;
    spi_free(config.adoptable_by);
    config.adoptable_by = NULL;
    return SP_OK;
}

bool spi_setup_adoptable(void) { return config.active && config.adoptable; }

SP_API int sp_session_adoptable(const char *started_by) {
    if (!config.active) {
        spi_status_remember(SP_ERR_NOT_ACTIVE);
        return SP_ERR_NOT_ACTIVE;
    }
    char *who = spi_strdup(started_by && *started_by ? started_by : "a tool");
    if (!who) {
        spi_status_remember(SP_ERR_OUT_OF_MEMORY);
        return SP_ERR_OUT_OF_MEMORY;
    }
    spi_free(config.adoptable_by);
    config.adoptable_by = who;
    config.adoptable = true;
    return SP_OK;
}

int spi_setup_in_job(const sp_options *options, const void *mpi_comm) {
    int status = SP_OK;
    if (!options_valid(options))
        status = SP_ERR_INVALID_ARGUMENT;
    else if (config.disabled)
        return SP_OK; /* SCOPE_PROFILER_DISABLE: a no-op like every other call,
                       * not a claim that profiling is active */
    else if (config.active && config.adoptable)
        return take_over(options, mpi_comm);
    else if (config.active)
        status = SP_ERR_ALREADY_ACTIVE;
    if (status != SP_OK) {
        spi_status_remember(status);
        return status;
    }
    spi_diag_set_quiet(options->quiet || env_flag("SCOPE_PROFILER_QUIET"));
    pthread_once(&fork_handlers_once, register_fork_handlers);
    if (env_flag("SCOPE_PROFILER_DISABLE")) {
        /* Disabled: stay inactive so every call is a no-op, but remember
         * that setup ran so finalize is quiet and harmless too. */
        config.disabled = true;
        return SP_OK;
    }
    const char *label = options->label ? options->label : env_text("SCOPE_PROFILER_LABEL");
    config.label = label ? spi_strdup(label) : NULL;
    const char *language = options->source_language && *options->source_language
                               ? options->source_language
                               : NULL;
    config.source_language = language ? spi_strdup(language) : NULL;
    const char *perf = perf_request(options);
    config.perf_events = perf ? spi_strdup(perf) : NULL;
    if ((label && !config.label) || (language && !config.source_language) ||
        (perf && !config.perf_events)) {
        release_config();
        spi_status_remember(SP_ERR_OUT_OF_MEMORY);
        return SP_ERR_OUT_OF_MEMORY;
    }
    config.likwid = likwid_request(options);
    config.detail = options->metadata_detail;
    config.write_file = options->write_file != 0;
    config.quiet = options->quiet || env_flag("SCOPE_PROFILER_QUIET");
    config.aggregate = resolve_mode(options->mode) == SP_MODE_AGGREGATE;
    config.tsc = resolve_tsc(options->clock);
    spi_error err;
    spi_error_clear(&err);
    status = spi_job_start(mpi_comm, finalize_inside_mpi_finalize, &err);
    if (status != SP_OK) {
        spi_diag("%s", err.message);
        release_config();
        spi_status_remember(status);
        return status;
    }
    label_diagnostics();
    /* The path needs the job's rank: resolved once the job is joined, and
     * checked by rank 0 for the whole job. */
    spi_error say;
    status = agreed_output_path(options, config.write_file, SP_OK, &config.file_path, &say);
    if (status != SP_OK) {
        if (say.status != SP_OK) spi_diag("%s", say.message);
        spi_job_stop();
        release_config();
        spi_status_remember(status);
        return status;
    }
    config.path_per_process = spi_output_path_per_process(options->file_path);
    config.start_time_ns = spi_clock_now_ns();
    /* Counters before the recorder: threads attach their counters as soon
     * as recording starts. */
    status = spi_counters_configure(options);
    config.buffer_limit = resolve_buffer_limit(options->buffer_limit_bytes, config.write_file);
    config.flush = !config.aggregate && config.buffer_limit && resolve_flush(options->overflow);
    spi_recording recording = {.buffer_limit_bytes = config.buffer_limit,
                               .spill_label = config.file_path,
                               .aggregate = config.aggregate, .tsc = config.tsc,
                               .hooks = spi_counters_hooks()};
    /* A bounded trace that flushes: its spill file beside the output. */
    if (status == SP_OK && config.flush && config.write_file) {
        spi_error spill_err;
        spi_error_clear(&spill_err);
        if (spi_spill_open(&recording.spill, config.file_path, &spill_err) != SP_OK)
            spi_diag("%s; calls past the %zu-byte buffer limit will be dropped and counted",
                     spill_err.message, recording.buffer_limit_bytes);
    }
    if (status == SP_OK) spi_pause_at_setup(); /* SCOPE_PROFILER_START, before any call */
    if (status == SP_OK) status = spi_recorder_start(&recording);
    if (status != SP_OK) {
        spi_counters_shutdown();
        spi_job_stop();
        release_config();
        spi_status_remember(status);
        return status;
    }
    config.active = true;
    return SP_OK;
}

SP_API int sp_setup(const char *file_path) {
    sp_options options;
    sp_options_init(&options);
    options.file_path = file_path;
    return sp_setup_with_options(&options);
}

SP_API int sp_is_active(void) { return config.active ? 1 : 0; }

/* "; 3 calls still open at finalize dropped (a, b); 2 calls NOT recorded
 * ..." for one rank's (or the job's summed) problems. */
static void print_problems(const spi_rank_report *r, bool names) {
    if (r->open_calls)
        printf("; %llu call%s still open at finalize dropped%s%s%s",
               (unsigned long long)r->open_calls, r->open_calls == 1 ? "" : "s",
               names && r->open_regions[0] ? " (" : "", names ? r->open_regions : "",
               names && r->open_regions[0] ? ")" : "");
    if (r->bad_ends)
        printf("; %llu end%s without a matching begin", (unsigned long long)r->bad_ends,
               r->bad_ends == 1 ? "" : "s");
    if (r->flushes)
        printf("; flushed %.1f MiB of calls to disk in %llu write%s", r->flushed_bytes / 1048576.0,
               (unsigned long long)r->flushes, r->flushes == 1 ? "" : "s");
    if (r->dropped_events)
        printf("; %llu call%s NOT recorded (buffer limit or memory)",
               (unsigned long long)r->dropped_events, r->dropped_events == 1 ? "" : "s");
}

#define REPORTED_RANKS 8

/* Where finalize's time went, for the report: collecting the calls into
 * rows, writing the file, and the summary (its paths, gather and table). */
typedef struct phase_times {
    int64_t collect_ns;
    int64_t write_ns;
    int64_t summary_ns;
} phase_times;

/* The summary's own time, after its table (rank 0). */
static void print_summary_time(const phase_times *times, bool printed) {
    if (!printed || config.quiet || spi_job_rank() != 0) return;
    printf("scope-profiler: summary in %.1f ms\n", times->summary_ns / 1e6);
    fflush(stdout);
}

/* Rank 0's report for the whole job: the file, the totals, what went
 * wrong summed over ranks, then which ranks it was (the first few). */
static void print_report(const spi_job_totals *totals, int recording_threads,
                         const spi_rank_report *ranks, size_t rank_count,
                         const phase_times *times, const spi_error *err, bool summary_follows) {
    if (config.quiet || spi_job_rank() != 0 || !ranks) return;
    char where[1100];
    if (!config.write_file)
        snprintf(where, sizeof where, "kept the results in memory (file output off)");
    else if (err->status == SP_OK || err->status == SP_ERR_OPEN_AT_FINALIZE ||
             err->status == SP_ERR_BUFFER_LIMIT)
        snprintf(where, sizeof where, "wrote %s in %.1f ms (collect %.1f ms, write %.1f ms%s)",
                 config.file_path, (times->collect_ns + times->write_ns) / 1e6,
                 times->collect_ns / 1e6, times->write_ns / 1e6,
                 summary_follows ? "; the summary's time below" : "");
    else
        snprintf(where, sizeof where, "wrote NO file (%s)", err->message);
    printf("scope-profiler: %s: %zu region%s, %llu call%s over %u rank%s "
           "(rank 0: %d recording thread%s)",
           where, totals->regions, totals->regions == 1 ? "" : "s",
           (unsigned long long)totals->events, totals->events == 1 ? "" : "s", totals->ranks,
           totals->ranks == 1 ? "" : "s", recording_threads, recording_threads == 1 ? "" : "s");
    spi_rank_report sum = {0};
    size_t troubled = 0;
    for (size_t i = 0; i < rank_count; i++) {
        sum.open_calls += ranks[i].open_calls;
        sum.bad_ends += ranks[i].bad_ends;
        sum.flushed_bytes += ranks[i].flushed_bytes;
        sum.flushes += ranks[i].flushes;
        sum.dropped_events += ranks[i].dropped_events;
        troubled += ranks[i].open_calls || ranks[i].bad_ends || ranks[i].dropped_events ||
                    ranks[i].flushes;
    }
    if (rank_count == 1) snprintf(sum.open_regions, sizeof sum.open_regions, "%s", ranks[0].open_regions);
    print_problems(&sum, rank_count == 1);
    printf(".\n");
    /* with several ranks: who */
    size_t shown = 0;
    for (size_t i = 0; rank_count > 1 && i < rank_count && shown < REPORTED_RANKS; i++) {
        const spi_rank_report *r = &ranks[i];
        if (!(r->open_calls || r->bad_ends || r->dropped_events || r->flushes)) continue;
        printf("scope-profiler:   rank %zu: %llu call%s", i, (unsigned long long)r->calls,
               r->calls == 1 ? "" : "s");
        print_problems(r, true);
        printf("\n");
        shown++;
    }
    if (troubled > shown && rank_count > 1)
        printf("scope-profiler:   ... and %zu more rank%s\n", troubled - shown,
               troubled - shown == 1 ? "" : "s");
    fflush(stdout);
}

/* Whether finalize published the file (it may still report lost calls). */
static bool written_ok(int status) {
    return config.write_file && (status == SP_OK || status == SP_ERR_OPEN_AT_FINALIZE ||
                                 status == SP_ERR_BUFFER_LIMIT);
}

/* The one finalize: `results`, when not NULL, receives the run's profile
 * as a public results object instead of it being freed. */
static int finalize_session(sp_results **results) {
    if (config.disabled) {
        release_config();
        return SP_OK;
    }
    if (!config.active) {
        spi_status_remember(SP_ERR_NOT_ACTIVE);
        return SP_ERR_NOT_ACTIVE;
    }
    int64_t finalize_ns = spi_clock_now_ns();
    spi_session session = spi_recorder_stop();
    config.active = false;
    uint64_t flushed_bytes = session.spill ? atomic_load(&session.spill->written) : 0;
    uint64_t flushes = session.spill ? atomic_load(&session.spill->writes) : 0;
    /* TSC ticks to CLOCK_MONOTONIC ns before anything reads a time */
    int converted = spi_recorder_convert_ticks(&session);
    /* the summary's call paths are folded by the collect's own walk */
    spi_finalize_summary summary;
    spi_finalize_summary_start(&summary, &session,
                               converted == SP_OK && spi_finalize_summary_wanted(config.quiet));

    spi_error err;
    spi_error_clear(&err);
    int joined = settle_job(&err);
    if (joined != SP_OK) spi_diag("%s", err.message);
    spi_profile profile = {0};
    spi_run_report report = {0};
    uint32_t rank = spi_job_rank();
    int status = converted != SP_OK ? converted
                                     : spi_run_collect(&session, rank, &profile, &report,
                                                       spi_finalize_summary_sink(&summary));
    /* Counter totals live in the threads' state: collect before release. */
    if (status == SP_OK) status = spi_counters_collect(&session, rank, &profile);
    spi_counters_shutdown();
    spi_recorder_release(&session);
    if (status == SP_ERR_OUTPUT)
        spi_error_set(&err, status, "%s: cannot extend or read the spill file beside it while "
                      "collecting the calls (disk full?)", config.file_path);
    else if (status != SP_OK)
        spi_error_set(&err, status, "out of memory while collecting the calls");

    spi_meta_context context = {.detail = config.detail, .label = config.label,
                                .source_language = config.source_language,
                                .start_time_ns = config.start_time_ns,
                                .finalize_time_ns = finalize_ns,
                                .mpi_size = spi_job_size(),
                                .num_nodes = spi_job_node_count(), .mpi_rank = rank,
                                .clock = config.tsc ? "tsc" : "monotonic",
                                .mode = config.aggregate ? "aggregate" : "trace"};
    if (status == SP_OK && (status = spi_meta_collect(&profile.metadata, &context)) != SP_OK)
        spi_error_set(&err, status, "out of memory while collecting metadata");
    if (status == SP_OK && (status = spi_user_metadata_apply(&profile.metadata)) != SP_OK)
        spi_error_set(&err, status, "out of memory while adding sp_set_metadata's pairs");

    /* With MPI every rank must reach the collective write, even after a
     * local failure: it then contributes an empty profile. */
    int64_t write_start = spi_clock_now_ns();
    spi_job_totals totals = {.ranks = spi_job_size(), .rows = profile.row_count,
                             .events = spi_profile_call_count(&profile),
                             .regions = profile.name_count};
    if (config.write_file) {
        int local_status = status;
        if (local_status != SP_OK) spi_profile_free(&profile);
        /* alone, a failed collection writes nothing (the previous file
         * stays); in a job the others still need this rank at the write */
        int job_status = local_status != SP_OK && spi_job_size() == 1
                             ? local_status
                             : spi_job_write(&profile, config.file_path, &totals, &err);
        status = local_status != SP_OK ? local_status : job_status;
    }
    int64_t write_ns = spi_clock_now_ns() - write_start;
    if (status != SP_OK && err.message[0]) spi_diag("%s", err.message);

    /* The file is complete, but say so loudly when calls were lost. */
    if (status == SP_OK && report.dropped_events) status = SP_ERR_BUFFER_LIMIT;
    else if (status == SP_OK && report.open_calls) status = SP_ERR_OPEN_AT_FINALIZE;
    err.status = status;
    /* every rank's report to rank 0 (collective, whatever happened) */
    spi_rank_report mine = {.calls = spi_profile_call_count(&profile),
                            .open_calls = report.open_calls,
                            .dropped_events = report.dropped_events,
                            .bad_ends = spi_recorder_bad_ends(),
                            .flushed_bytes = flushed_bytes, .flushes = flushes};
    snprintf(mine.open_regions, sizeof mine.open_regions, "%s", report.open_regions);
    spi_rank_report *ranks = NULL;
    spi_error gather_err;
    spi_error_clear(&gather_err);
    if (spi_job_gather_reports(&mine, &ranks, &gather_err) != SP_OK)
        spi_diag("%s", gather_err.message);
    spi_error summary_err;
    spi_error_clear(&summary_err);
    if (spi_finalize_summary_gather(&summary, &profile, &summary_err) == SP_ERR_MPI)
        spi_diag("%s", summary_err.message);
    int64_t summary_start = spi_clock_now_ns();
    /* collect time includes folding the summary's paths: one walk does both */
    phase_times times = {.collect_ns = write_start - finalize_ns, .write_ns = write_ns};
    print_report(&totals, report.recording_threads, ranks, spi_job_size(), &times, &err,
                 summary.wanted);
    spi_free(ranks);
    spi_finalize_summary_print(&summary, &profile, spi_job_size(), config.aggregate,
                               config.file_path, written_ok(status));
    times.summary_ns = summary.ns + (spi_clock_now_ns() - summary_start);
    print_summary_time(&times, summary.wanted);
    spi_finalize_summary_free(&summary);

    /* a streamed trace's calls are in the file only: the results read it */
    if (results && profile.source) {
        spi_profile_free(&profile);
        if (written_ok(status)) {
            spi_error read_err;
            spi_error_clear(&read_err);
            int read = spi_profile_read(&profile, config.file_path, 0, &read_err);
            if (read != SP_OK) {
                spi_diag("%s", read_err.message);
                if (status == SP_OK) status = read;
            }
        }
    }
    if (results && profile.row_count + profile.name_count + profile.metadata.count > 0) {
        int adopted = spi_results_adopt(&profile, config.file_path, results);
        if (adopted != SP_OK && status == SP_OK) status = adopted;
    }
    spi_profile_free(&profile);
    spi_job_stop();
    release_config();
    spi_status_remember(status);
    return status;
}

SP_API int sp_finalize(void) { return finalize_session(NULL); }

SP_API int sp_finalize_results(sp_results **results) {
    if (!results) {
        spi_status_remember(SP_ERR_INVALID_ARGUMENT);
        return SP_ERR_INVALID_ARGUMENT;
    }
    *results = NULL;
    return finalize_session(results);
}
