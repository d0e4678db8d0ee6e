/*
 * scope_profiler.h - the recording API of libscopeprofiler.
 *
 * Overview
 * --------
 * libscopeprofiler records named regions of a program (begin/end pairs) with
 * nanosecond timestamps on CLOCK_MONOTONIC, the clock Python's
 * time.perf_counter_ns() reads, so native and Python regions of one process
 * share one timeline. Every call gets a call id and the id of the enclosing
 * open call on the same thread: the file holds the real call tree.
 * sp_finalize() writes one schema-3 HDF5 file (the layout the Python
 * scope-profiler package reads and writes) and prints a short report.
 *
 * Typical call sequence:
 *
 *     sp_setup("run.h5");               // $SCOPE_PROFILER_FILE overrides it
 *     int solve = sp_region("solve");   // resolve a handle once ...
 *     for (...) {
 *         sp_begin(solve);              // ... and use it in hot loops
 *         sp_region_begin("assemble");  // or record by name
 *         sp_region_end("assemble");
 *         sp_end(solve);
 *     }
 *     sp_finalize();
 *
 * API tiers:
 *   1. lifecycle: sp_setup, sp_setup_with_options, sp_finalize, sp_is_active
 *   2. recording by name: sp_region_begin / sp_region_end (and the *_n forms
 *      that take a pointer and a length, for Fortran and other languages)
 *   3. recording by handle: sp_region (resolve once), sp_begin / sp_end;
 *      SP_REGION_BEGIN("name") / SP_REGION_END("name") resolve a literal's
 *      handle once per call site and then take this path
 *   4. status: sp_last_error, sp_error_string, sp_status_name
 *
 * Thread-safety: every recording call (tiers 2 and 3) may be made from any
 * thread at any time; each thread records into its own buffers without locks.
 * sp_setup and sp_finalize must not run concurrently with each other or with
 * recording calls on other threads (call them from the main thread, outside
 * parallel regions).
 *
 * Signals: recording from a signal handler is refused, not merged, while
 * the handler interrupted a recording call on its thread: the handler's
 * call records nothing and returns (or, for sp_begin/sp_end, remembers)
 * SP_ERR_UNSUPPORTED, the interrupted call is never corrupted, and
 * sp_finalize reports the number of calls refused so (one line). A handler
 * that interrupts the thread anywhere else is recorded, nested correctly:
 * inside the call the thread was in (an end whose time was read just
 * before the handler ran reads it again), so every parent encloses its
 * children. The handler's calls are async-signal-safe when they use a
 * handle (sp_begin/sp_end) or a name already used on that thread, the
 * thread recorded before the signal, and the nesting stays within 64
 * levels (deeper nesting and new names allocate); event buffers come from
 * mmap, which is async-signal-safe. The cost on every call is one store
 * of a per-thread flag on each side of the recording (no atomic
 * read-modify-write).
 *
 * fork(): a child does not continue the parent's session. It records
 * nothing and writes nothing (never the parent's buffers, never the
 * parent's output path): sp_is_active() is 0 and sp_finalize returns
 * SP_ERR_NOT_ACTIVE, until the child calls sp_setup for a session of its
 * own. No lock of the library is held in the child, whatever other threads
 * of the parent were doing. The parent's session goes on unchanged.
 *
 * Safety: every call is harmless before sp_setup and after sp_finalize (it is
 * a no-op, as in an unprofiled build). The library never aborts, exits or
 * kills the program it measures; errors come back as sp_status codes, and
 * user mistakes print one line on stderr (silenced with quiet=1 or
 * SCOPE_PROFILER_QUIET=1).
 *
 * Environment:
 *   SCOPE_PROFILER_FILE     output path; overrides sp_setup's (for batch jobs)
 *   SCOPE_PROFILER_DISABLE  "1": every call becomes a no-op, no file is written
 *   SCOPE_PROFILER_QUIET    "1": no report and no diagnostics on stdout/stderr
 *   SCOPE_PROFILER_LABEL    label of the run when the options give none
 *   SCOPE_PROFILER_PERF_EVENTS  comma list of perf events (sp_options.perf_events)
 *   SCOPE_PROFILER_LIKWID   "1": LIKWID marker regions (sp_options.likwid)
 */
#ifndef SCOPE_PROFILER_H
#define SCOPE_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#include "scope_profiler_version.h"

/* SP_API marks the exported symbols; everything else in the library is
 * hidden, so internal names can never become accidental API. */
#if defined(__GNUC__) || defined(__clang__)
#define SP_API __attribute__((visibility("default")))
#else
#define SP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Status codes
 *
 * One table defines every status: its enum value, its name and its message.
 * Values are a stable contract: they are never renumbered and new codes are
 * only appended.
 * ------------------------------------------------------------------------- */
#define SP_STATUS_TABLE(X)                                                     \
    X(SP_OK, 0, "success")                                                     \
    X(SP_ERR_INVALID_ARGUMENT, 1, "invalid argument")                          \
    X(SP_ERR_NOT_ACTIVE, 2, "profiling is not active (sp_setup was not called or sp_finalize already ran)") \
    X(SP_ERR_ALREADY_ACTIVE, 3, "profiling is already active (sp_setup called twice)") \
    X(SP_ERR_UNMATCHED_END, 4, "region end without a matching open begin on this thread") \
    X(SP_ERR_INVALID_REGION, 5, "invalid region handle")                       \
    X(SP_ERR_OUT_OF_MEMORY, 6, "out of memory")                                \
    X(SP_ERR_BUFFER_LIMIT, 7, "buffer limit reached: later calls were not recorded") \
    X(SP_ERR_OUTPUT, 8, "cannot create or publish the output file")             \
    X(SP_ERR_HDF5, 9, "HDF5 library error")                                    \
    X(SP_ERR_OPEN_AT_FINALIZE, 10, "regions were still open at finalize and were dropped") \
    X(SP_ERR_FILE_NOT_FOUND, 11, "file not found")                             \
    X(SP_ERR_NOT_A_PROFILE, 12, "not a readable HDF5 profiling file or trace") \
    X(SP_ERR_SCHEMA_UNSUPPORTED, 13, "unsupported schema version")              \
    X(SP_ERR_CORRUPT, 14, "the file is truncated or damaged")                  \
    X(SP_ERR_NESTING, 15, "recorded calls are not properly nested")            \
    X(SP_ERR_NO_SUMMARY, 16, "the file has no fixed-size summary statistics")  \
    X(SP_ERR_REGION_COLLISION, 17, "a region name appears in more than one input") \
    X(SP_ERR_MPI, 18, "MPI error")                                             \
    X(SP_ERR_UNSUPPORTED, 19, "not supported by this build or machine")        \
    X(SP_ERR_REGION_LIMIT, 20, "too many region names (at most 8388608 per process)")

/** Status codes returned by the library (0 = success). */
typedef enum sp_status {
#define SP_STATUS_ENUM_(name, value, message) name = value,
    SP_STATUS_TABLE(SP_STATUS_ENUM_)
#undef SP_STATUS_ENUM_
    SP_STATUS_COUNT_ /* not a status; one past the last code */
} sp_status;

/** The handle value that means "no region" (sp_region's error result). */
#define SP_INVALID_REGION (-1)

/* ---------------------------------------------------------------------------
 * Lifecycle
 * ------------------------------------------------------------------------- */

/** How much run metadata goes into /metadata (FORMAT.md 1.2). */
typedef enum sp_metadata_detail {
    /** versions, platform, CPU model, thread/rank counts, times (default). */
    SP_METADATA_MINIMAL = 0,
    /** minimal plus user, hostname, uname, working directory, modules and the
     *  documented environment variables (never any other variable). */
    SP_METADATA_FULL = 1
} sp_metadata_detail;

/** What a session records (sp_options.mode). */
typedef enum sp_mode {
    /** Decided by $SCOPE_PROFILER_MODE ("trace" or "aggregate"), else trace.
     *  This is what sp_options_init sets, so the environment can switch a
     *  program that does not choose. */
    SP_MODE_AUTO = 0,
    /** Every call with its start and duration (24 bytes per call until
     *  finalize): the full timeline, the call ids and parents. */
    SP_MODE_TRACE = 1,
    /** Per thread, one accumulator per call path (count, total, minimum,
     *  maximum, exclusive time, sum of squared deviations): memory grows
     *  with the number of distinct call paths, never with the number of
     *  calls, so a run of any length fits. The file has the aggregate
     *  layout plus the call paths (docs/FORMAT.md); there is no timeline.
     *  A call of a region made directly inside a call of the same region
     *  is counted on the enclosing path (recursion is one path).
     *  OpenMP: a worker thread's outermost calls go under the main
     *  thread's innermost call begun outside a parallel region (the call
     *  its team was forked in), as in a trace; that call's exclusive time
     *  keeps the workers' time (they ran beside it). Teams forked by other
     *  threads, or nested teams, go under the main thread's call too. */
    SP_MODE_AGGREGATE = 2
} sp_mode;

/** The recording clock (sp_options.clock). Every file holds CLOCK_MONOTONIC
 *  ns whatever the choice (the Python driver's perf_counter_ns timeline). */
typedef enum sp_clock {
    /** $SCOPE_PROFILER_CLOCK ("auto", "tsc" or "monotonic"), else auto: the
     *  TSC where it is invariant and the kernel's clocksource, else
     *  CLOCK_MONOTONIC. What sp_options_init sets. */
    SP_CLOCK_AUTO = 0,
    /** Raw TSC ticks on the hot path, converted exactly at finalize through
     *  (ticks, CLOCK_MONOTONIC) anchor pairs taken along the run. Asked for
     *  on a machine without an invariant TSC: one diagnostic, and
     *  CLOCK_MONOTONIC is used. */
    SP_CLOCK_TSC = 1,
    /** clock_gettime(CLOCK_MONOTONIC) for every timestamp. */
    SP_CLOCK_MONOTONIC = 2
} sp_clock;

/** What a trace does at its memory limit (sp_options.overflow). */
typedef enum sp_overflow {
    /** $SCOPE_PROFILER_OVERFLOW, else SP_OVERFLOW_FLUSH. */
    SP_OVERFLOW_AUTO = 0,
    /** Nothing is lost: full event chunks are written to a spill file
     *  beside the output (it has no name: it vanishes with the process,
     *  whatever ends it) and their memory is reused; the recording thread
     *  pays one write per chunk of about 32K calls, and no other thread
     *  waits. sp_finalize streams the spill file and memory into the output
     *  in bounded slices, so memory stays near the limit (plus about 64 KiB
     *  per recording thread and 48 MiB while finalizing). When the spill
     *  file cannot be created or written (disk full, no write permission):
     *  one diagnostic, then as SP_OVERFLOW_DROP, every lost call counted.
     *  With write_file 0 there is no output to spill beside: as DROP. */
    SP_OVERFLOW_FLUSH = 1,
    /** Calls that end after the limit is reached are not recorded (what
     *  fits is, however small the limit); a recorded call whose parent was
     *  not recorded becomes a root, so the file stays valid. sp_finalize
     *  reports how many and returns SP_ERR_BUFFER_LIMIT. */
    SP_OVERFLOW_DROP = 2
} sp_overflow;

/** sp_options.buffer_limit_bytes: the environment's limit, else 256 MiB. */
#define SP_BUFFER_LIMIT_DEFAULT ((size_t)-1)

/**
 * Options for sp_setup_with_options. Initialise with sp_options_init() so
 * that fields added in later versions get their defaults.
 */
typedef struct sp_options {
    /** Output path; NULL: "profiling_data.h5". $SCOPE_PROFILER_FILE, when
     *  set and not empty, overrides it, so a batch script can redirect any
     *  program. %r, %j, %p and %% are expanded (see sp_setup). Copied. */
    const char *file_path;
    /** Label of the run stored as metadata "label"; NULL: $SCOPE_PROFILER_LABEL
     *  or no label. Copied. */
    const char *label;
    /** SP_METADATA_MINIMAL (default) or SP_METADATA_FULL. */
    sp_metadata_detail metadata_detail;
    /** 0: keep results in memory only, write no file (default 1). */
    int write_file;
    /** Upper bound of the event memory of this process, in bytes (trace
     *  mode); 0 = no limit. sp_options_init sets SP_BUFFER_LIMIT_DEFAULT:
     *  $SCOPE_PROFILER_BUFFER_LIMIT (bytes, with an optional K, M or G
     *  suffix, powers of 1024; "0" = no limit), else 256 MiB when a file is
     *  written and no limit with write_file 0 (results kept in memory have
     *  nowhere to flush). What happens at the limit is sp_options.overflow's
     *  choice. */
    size_t buffer_limit_bytes;
    /** 1: print nothing (no report, no diagnostics). Default 0, or 1 when
     *  $SCOPE_PROFILER_QUIET is "1". */
    int quiet;
    /** Linux perf events counted per region and thread, as a comma list of
     *  perf's generic names ("cycles,instructions,cache-misses,
     *  cache-references,branches,branch-misses,task-clock,page-faults,
     *  context-switches,cpu-migrations", ...); inclusive totals per region,
     *  summed over threads, go to rank<N>/perf_events. NULL (default):
     *  $SCOPE_PROFILER_PERF_EVENTS, else none. Events this machine cannot
     *  count and unknown names are reported once on stderr and skipped; the
     *  run is never stopped by them. Copied at setup. */
    const char *perf_events;
    /** 1: LIKWID marker regions around every region (results in
     *  rank<N>/likwid). Needs a build with LIKWID and a run under
     *  `likwid-perfctr -m`; otherwise one notice and the run goes on without.
     *  Default 0, or 1 when $SCOPE_PROFILER_LIKWID is "1". */
    int likwid;
    /** SP_MODE_AUTO (default), SP_MODE_TRACE or SP_MODE_AGGREGATE. A value
     *  set here wins over $SCOPE_PROFILER_MODE; an unknown value makes setup
     *  fail with SP_ERR_INVALID_ARGUMENT, an unknown $SCOPE_PROFILER_MODE
     *  gives one diagnostic and trace mode. */
    sp_mode mode;
    /** SP_CLOCK_AUTO (default), SP_CLOCK_TSC or SP_CLOCK_MONOTONIC; a value
     *  set here wins over $SCOPE_PROFILER_CLOCK; an unknown value makes setup
     *  fail with SP_ERR_INVALID_ARGUMENT. The clock used is stored in the
     *  metadata ("clock": "tsc" or "monotonic"). */
    sp_clock clock;
    /** The program's language, stored as metadata "source_language"; NULL
     *  or "" (default): "c". The Fortran module's sp_setup/sp_setup_mpi pass
     *  "fortran". Copied. */
    const char *source_language;
    /** What a trace does when its event memory reaches buffer_limit_bytes.
     *  SP_OVERFLOW_AUTO (default): $SCOPE_PROFILER_OVERFLOW ("flush" or
     *  "drop"), else flush. A value set here wins over the environment; an
     *  unknown value makes setup fail with SP_ERR_INVALID_ARGUMENT. */
    sp_overflow overflow;
} sp_options;

/**
 * Fill *options with the defaults described in sp_options.
 * Thread-safety: touches only *options.
 */
SP_API void sp_options_init(sp_options *options);

/**
 * Remove the temporary files of outputs being written right now (sp_finalize
 * writing its profile, sp_merge_files its merge): each is written to a
 * hidden sibling ".<name>.XXXXXX.tmp" and renamed into place only when
 * complete, so a process killed in the middle leaves that sibling behind.
 * Call this from a handler of SIGINT/SIGTERM/SIGHUP before the process
 * dies; the final files and earlier outputs are never touched.
 * Thread-safety: async-signal-safe (unlink only, no allocation, no lock).
 */
SP_API void sp_remove_partial_outputs(void);

/**
 * Start profiling with the default options and the given output path.
 *
 * file_path: the HDF5 file sp_finalize writes; NULL means
 * "profiling_data.h5". The environment variable SCOPE_PROFILER_FILE, when
 * set and not empty, overrides it (a batch script redirects the output of
 * any program without rebuilding it). In the path that applies, %r is the
 * rank (the job's rank under MPI, where one file holds every rank and rank
 * 0 writes it, so 0; otherwise the launcher's: SLURM_PROCID,
 * OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, else 0), %j the batch job id
 * (SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, JOB_ID, FLUX_JOB_ID, else "nojob"),
 * %p the process id and %% a '%'; any other '%' stays. The path is copied.
 * A path that can never be written is refused here: an empty path or one
 * ending in '/' or a file name over NAME_MAX bytes (SP_ERR_INVALID_ARGUMENT),
 * an existing path that is not a regular file, such as /dev/null or a FIFO
 * (SP_ERR_OUTPUT: publishing renames over the target and must never replace
 * a device), and a directory that does not exist or where no file can be
 * created (SP_ERR_OUTPUT, the message naming the path and the directory):
 * a run whose profile could never be written stops here, not at finalize.
 * With MPI, rank 0 (which writes the file) checks and every rank returns
 * its verdict; the message is printed once, by rank 0.
 *
 * With SCOPE_PROFILER_DISABLE=1 in the environment this returns SP_OK and
 * every later call is a no-op (nothing is recorded or written).
 *
 * A session started on the program's behalf (the PMPI wrappers start one
 * at MPI_Init; see sp_session_adoptable) is taken over instead: this path
 * and these options apply to it, and the calls it recorded are kept.
 *
 * Returns SP_OK, SP_ERR_INVALID_ARGUMENT or SP_ERR_OUTPUT (the path, as
 * above), SP_ERR_ALREADY_ACTIVE (profiling already set up; the running
 * session is unchanged) or SP_ERR_OUT_OF_MEMORY.
 * Thread-safety: call from one thread, not concurrently with other calls.
 */
SP_API int sp_setup(const char *file_path);

/**
 * Start profiling with explicit options (see sp_options).
 * Returns SP_OK, SP_ERR_INVALID_ARGUMENT (options NULL, a field out of
 * range such as write_file, quiet or likwid other than 0 or 1, or a path
 * refused as by sp_setup), SP_ERR_OUTPUT (the path is not a regular file),
 * SP_ERR_ALREADY_ACTIVE or SP_ERR_OUT_OF_MEMORY.
 * Thread-safety: as sp_setup.
 */
SP_API int sp_setup_with_options(const sp_options *options);

/**
 * Stop profiling: collect every thread's calls, write the file (unless
 * write_file was 0), print a one-paragraph report and the call-tree summary
 * table on stdout (unless quiet; SCOPE_PROFILER_SUMMARY=0 keeps only the
 * report) and release the buffers. Handles stay valid; sp_setup may be
 * called again. sp_finalize_results (scope_profiler_results.h) does the
 * same and hands back the results in memory.
 *
 * With MPI (scope_profiler_mpi.h) this is collective: every rank calls it,
 * rank 0 writes ONE file for all ranks and alone prints; every rank gets
 * the same status. If the program calls MPI_Finalize first, the profiler
 * finalizes from inside MPI_Finalize, and a later sp_finalize returns
 * SP_ERR_NOT_ACTIVE.
 *
 * The file is published atomically: it is written to a temporary sibling
 * (.<name>.<random>.tmp), flushed and renamed over file_path. On failure no
 * file is left behind and an existing file_path is untouched.
 *
 * Calls still open are reported by name on stderr and dropped (their
 * completed children are kept, as roots): at most 10 lines name them,
 * then one line gives the total.
 *
 * A trace keeps 96 MiB of address space (not memory: nothing is touched)
 * free while it records and gives it back here, so that finalize can
 * still run under an address-space limit (ulimit -v) the events filled.
 * When no more event memory can be had, further calls are dropped and
 * counted (the report says how many) and the thread asks again only after
 * a growing number of calls; a large trace's rows are then sorted through
 * a temporary file beside the output, its events released as they are
 * read, so finalize does not need their memory twice.
 *
 * Returns SP_OK; SP_ERR_NOT_ACTIVE when profiling was not set up (harmless);
 * SP_ERR_OUTPUT (the file could not be created, e.g. a missing directory);
 * SP_ERR_HDF5; SP_ERR_OUT_OF_MEMORY; or, when the file was written but some
 * calls were lost, SP_ERR_OPEN_AT_FINALIZE or SP_ERR_BUFFER_LIMIT.
 * Thread-safety: call from one thread after every other thread has stopped
 * recording.
 */
SP_API int sp_finalize(void);

/**
 * For a tool that starts a session on a program's behalf (the PMPI
 * wrappers do, at MPI_Init): the active session may be taken over by the
 * program's own next sp_setup, sp_setup_with_options or sp_setup_mpi,
 * which then returns SP_OK instead of SP_ERR_ALREADY_ACTIVE. The calls
 * recorded so far are kept; the program's output path (checked as
 * sp_setup checks it), label, source language, metadata detail and quiet
 * apply. What cannot change once calls are recorded stays as the session
 * began: mode, clock, buffer limit, overflow, counters, write_file and the
 * MPI job (MPI_COMM_WORLD); when the program asked otherwise, rank 0 says
 * so in one line naming `started_by` (copied; NULL: "a tool"). If that
 * setup fails (a bad path), the session goes on unchanged and may still be
 * taken over. Returns SP_OK, SP_ERR_NOT_ACTIVE (no session) or
 * SP_ERR_OUT_OF_MEMORY. Thread-safety: as sp_setup.
 */
SP_API int sp_session_adoptable(const char *started_by);

/**
 * 1 when profiling is set up and recording (between sp_setup and
 * sp_finalize, and not disabled by SCOPE_PROFILER_DISABLE), else 0.
 * Thread-safety: safe from any thread.
 */
SP_API int sp_is_active(void);

/**
 * The current time in ns on the recording clock (CLOCK_MONOTONIC), the value
 * Python's time.perf_counter_ns() returns at the same instant.
 * Thread-safety: safe from any thread.
 */
SP_API int64_t sp_now_ns(void);

/**
 * The version of the running library, "MAJOR.MINOR.PATCH" (e.g. "0.1.0"):
 * the SCOPE_PROFILER_VERSION of the build the library came from, which may
 * differ from the header's SCOPE_PROFILER_VERSION when a program runs with
 * another build of the shared library. Also stored in every file's
 * metadata as scope_profiler_version.
 * Never fails; works before sp_setup and after sp_finalize; the string is
 * static (never freed). Thread-safety: safe from any thread.
 */
SP_API const char *sp_version(void);

/** What the library was built from and with (sp_build_info). Every member
 *  is a static, never-NULL string ("" when unknown). */
typedef struct sp_build {
    const char *version;       /**< as sp_version() */
    const char *git_describe;  /**< `git describe --always --dirty --tags` of the source at
                                *   configure time; "" when not built from a git tree */
    const char *hdf5_version;  /**< the HDF5 headers compiled against, e.g. "1.10.8" */
    const char *mpi_version;   /**< the MPI library (its version string, else the MPI standard
                                *   version) found at configure time; "" without MPI */
    int parallel_hdf5;         /**< 1 when MPI jobs can write through parallel HDF5 */
} sp_build;

/**
 * What the running library was built from and with: version, git
 * describe, HDF5 and MPI versions (sp_build). Never fails and never NULL;
 * works before sp_setup and after sp_finalize; the struct and its strings
 * are static. Thread-safety: safe from any thread.
 */
SP_API const sp_build *sp_build_info(void);

/* ---------------------------------------------------------------------------
 * Recording by name
 * ------------------------------------------------------------------------- */

/**
 * Open a call of the region `name` on the calling thread. The region is
 * registered on first use (any length up to 1 MiB, 1,048,576 bytes; the
 * name is copied). A longer name (for the sized variants, a length past
 * that, such as SIZE_MAX: no byte of the name is then read) is refused
 * with SP_ERR_INVALID_ARGUMENT and nothing is recorded; one message per
 * process says so. The new call's
 * parent is the innermost call still open on this thread.
 * Returns SP_OK (also when profiling is not active: a no-op),
 * SP_ERR_INVALID_ARGUMENT (name NULL, empty or too long), SP_ERR_OUT_OF_MEMORY, or
 * SP_ERR_UNSUPPORTED (from a signal handler that interrupted a recording call).
 * Thread-safety: safe from any thread, lock-free after the name was seen
 * once by this thread.
 */
SP_API int sp_region_begin(const char *name);

/**
 * Close the innermost open call of the calling thread, which must be a call
 * of `name`. Otherwise nothing changes and a one-line message goes to stderr
 * (unless quiet; at most 10 such lines per session): when `name` is open
 * further out, SP_ERR_NESTING, naming the region begun inside it that is
 * still open ("begin a; begin b; end a"); when it is not open at all,
 * SP_ERR_UNMATCHED_END.
 * Returns SP_OK (also when not active), SP_ERR_INVALID_ARGUMENT,
 * SP_ERR_NESTING, SP_ERR_UNMATCHED_END or SP_ERR_BUFFER_LIMIT (the call was
 * not stored).
 * Thread-safety: as sp_region_begin.
 */
SP_API int sp_region_end(const char *name);

/**
 * sp_region_begin for a name given as `name_len` bytes at `name` (no NUL
 * needed; trailing blanks are NOT removed here). For Fortran and other
 * languages with sized strings. Same returns as sp_region_begin.
 * Cost: the thread remembers the region last found at recent name
 * addresses (a small table per thread, one entry per address slot), so a
 * name passed again from the same address with the same length and
 * bytes (a literal, an unchanged variable) costs a compare of its bytes,
 * not a lookup; new bytes at that address are looked up as a new name.
 */
SP_API int sp_region_begin_n(const char *name, size_t name_len);

/** sp_region_end for a sized name; same returns as sp_region_end. */
SP_API int sp_region_end_n(const char *name, size_t name_len);

/* ---------------------------------------------------------------------------
 * Recording by handle (the fast path)
 * ------------------------------------------------------------------------- */

/**
 * Resolve `name` to a region handle (>= 0), registering it if new. The same
 * name always gives the same handle for the lifetime of the process; handles
 * may be resolved before sp_setup and stay valid after sp_finalize.
 * Returns the handle, or SP_INVALID_REGION when name is NULL or empty,
 * memory ran out, or the process already has 8388608 (2^23) names
 * (SP_ERR_REGION_LIMIT); sp_last_error tells which.
 * Thread-safety: safe from any thread (takes a lock for new names).
 */
SP_API int sp_region(const char *name);

/** sp_region for a sized name (`name_len` bytes, no NUL needed). */
SP_API int sp_region_n(const char *name, size_t name_len);

/**
 * Open a call of the region `region` (a handle from sp_region). An invalid
 * handle records nothing, prints one line as an unmatched end does and sets
 * sp_last_error to SP_ERR_INVALID_REGION.
 * Thread-safety: safe from any thread; lock-free, no allocation after
 * warm-up.
 */
SP_API void sp_begin(int region);

/**
 * Close the innermost open call of this thread, which must be of `region`.
 * A mismatch changes nothing, prints one line and sets sp_last_error as
 * sp_region_end returns it (SP_ERR_NESTING or SP_ERR_UNMATCHED_END); an
 * invalid handle sets SP_ERR_INVALID_REGION. Thread-safety: as sp_begin.
 */
SP_API void sp_end(int region);

/**
 * The name of a region handle (owned by the library, valid for the life of
 * the process), or NULL for an invalid handle. Thread-safety: any thread.
 */
SP_API const char *sp_region_name(int region);

/* ---------------------------------------------------------------------------
 * Recording by a literal name, resolved once per call site
 * ------------------------------------------------------------------------- */

/**
 * SP_REGION_BEGIN("solve") / SP_REGION_END("solve"): sp_begin / sp_end of
 * the region named by a string literal, its handle resolved by sp_region
 * on the call site's first execution and kept in a static variable of that
 * call site. Every later execution costs what the handle path costs plus
 * one load and one compare: no name lookup, no compare of the name's bytes
 * (sp_region_begin's cost: a compare of the name per call).
 * Only a string literal is accepted (a variable does not compile), because
 * the call site's handle never changes. Statements, not expressions: errors
 * are reported as sp_begin / sp_end report them (sp_last_error, one line on
 * stderr); a name sp_region refused (empty, SP_ERR_OUT_OF_MEMORY) is
 * resolved again at the next execution.
 * Thread-safety: as sp_begin; threads that execute a call site for the
 * first time together resolve the same handle (the same name always gives
 * the same handle) and store the same value, atomically.
 * Compilers without GCC's __atomic builtins get sp_region_begin /
 * sp_region_end, the same behaviour at the by-name cost. Not for the body
 * of a C `inline` function with external linkage (C forbids a static
 * variable there; C++ allows it).
 */
#if defined(__GNUC__) || defined(__clang__)
#define SP_REGION_BEGIN(literal) SP_SITE_CALL_(sp_begin, literal)
#define SP_REGION_END(literal) SP_SITE_CALL_(sp_end, literal)
/* The call site's handle: 0 before its first execution, else handle + 1
 * (a static starts at 0 with no initialiser, so it sits in .bss and the
 * test is one against zero). `"" literal` compiles only for a string
 * literal. */
#define SP_SITE_CALL_(call, literal)                                                 \
    do {                                                                             \
        static int sp_site_handle_plus_one_;                                         \
        int sp_site_ = __atomic_load_n(&sp_site_handle_plus_one_, __ATOMIC_RELAXED); \
        if (__builtin_expect(sp_site_ == 0, 0)) {                                    \
            sp_site_ = sp_region("" literal) + 1;                                    \
            if (sp_site_ > 0)                                                        \
                __atomic_store_n(&sp_site_handle_plus_one_, sp_site_, __ATOMIC_RELAXED); \
        }                                                                            \
        call(sp_site_ - 1);                                                          \
    } while (0)
#else
#define SP_REGION_BEGIN(literal) ((void)sp_region_begin("" literal))
#define SP_REGION_END(literal) ((void)sp_region_end("" literal))
#endif

/** A region's calls on the calling thread so far (sp_region_thread_totals). */
typedef struct sp_region_totals {
    uint64_t calls;    /**< calls of the region this thread ended and recorded */
    int64_t total_ns;  /**< the sum of their durations, ns */
    int open;          /**< calls of the region open on this thread now */
} sp_region_totals;

/**
 * What the calling thread recorded of `region` in the current session so
 * far: its completed calls, their summed duration, and how many of its
 * calls are open now (for running values in a program's own loop, as
 * GPTLquery gives them). Calls not recorded (paused, past a buffer limit,
 * an excluded name) are not counted, nor is the time of open calls.
 * Cost: a walk over the thread's open calls, plus, in a trace, the events
 * the thread recorded since its previous query (each event is read once);
 * in aggregate mode, the thread's call paths. The hot path (sp_begin,
 * sp_end) pays nothing for it. Memory: two words per region handle the
 * thread recorded, kept until the thread exits.
 * Returns SP_OK (*totals filled; zeros on a thread that recorded nothing
 * yet), SP_ERR_INVALID_ARGUMENT (totals NULL), SP_ERR_INVALID_REGION,
 * SP_ERR_NOT_ACTIVE (no session), SP_ERR_OUT_OF_MEMORY, SP_ERR_OUTPUT
 * (events of a bounded trace could not be read back from its spill file)
 * or SP_ERR_UNSUPPORTED (called from a signal handler that interrupted a
 * recording call). On an error *totals holds what was counted (possibly
 * zeros). Thread-safety: safe from any thread, about that thread only;
 * not concurrent with sp_finalize (as sp_begin).
 */
SP_API int sp_region_thread_totals(int region, sp_region_totals *totals);

/* ---------------------------------------------------------------------------
 * Pausing (recording on and off at run time)
 * ------------------------------------------------------------------------- */

/**
 * Stop recording on every thread until sp_resume: calls begun from now on
 * record nothing (their begin and end cost about as much as with profiling
 * disabled: no clock is read), and the calls begun inside them get the
 * innermost recorded call as their parent. Calls already open end cleanly,
 * during the pause or after it, and are recorded. Counters stop with the
 * calls. Pausing twice is the same as once.
 * sp_setup starts every session as $SCOPE_PROFILER_START says: "running"
 * (default) or "paused"; a pause before sp_setup does not carry over.
 * Never fails; works with or without a session.
 * Thread-safety: safe from any thread; other threads stop at their next
 * begin (a call a thread is beginning at that instant may still record).
 */
SP_API void sp_pause(void);

/** Record again after sp_pause (begins from now on record). Never fails;
 *  thread-safety as sp_pause. */
SP_API void sp_resume(void);

/** 1 while recording is paused (sp_pause, SCOPE_PROFILER_START=paused),
 *  else 0. Thread-safety: any thread. */
SP_API int sp_is_paused(void);

/**
 * Add the string `value` under `key` to the /metadata of the file the next
 * sp_finalize writes (a string attribute; docs/FORMAT.md 2.3): a tool's or
 * a program's own facts about the run (the compiler instrumentation stores
 * its throttled functions this way). Setting a key again replaces its
 * value; a key the library writes itself (label, hostname, ...) keeps the
 * library's value. Both strings are copied; the pairs are forgotten once a
 * finalize has written them.
 * Returns SP_OK, SP_ERR_INVALID_ARGUMENT (key NULL or empty, value NULL)
 * or SP_ERR_OUT_OF_MEMORY.
 * Thread-safety: safe from any thread.
 */
SP_API int sp_set_metadata(const char *key, const char *value);

/* ---------------------------------------------------------------------------
 * Status
 * ------------------------------------------------------------------------- */

/**
 * The last non-SP_OK status produced on the calling thread (by any call,
 * including the void sp_begin/sp_end), or SP_OK if none. Reading it does not
 * clear it; sp_clear_error does. Thread-safety: per thread.
 */
SP_API int sp_last_error(void);

/**
 * The detailed message of the calling thread's last diagnostic (e.g.
 * "run/out.h5: cannot create the output file: No such file or directory"),
 * or "" when there was none since sp_clear_error. Kept even when printing
 * is silenced. Valid until the thread's next profiler call.
 * Thread-safety: per thread.
 */
SP_API const char *sp_last_error_message(void);

/**
 * Turn the one-line stderr diagnostics off (0) or on (1, the default) for
 * the calling thread only; the messages are still available through
 * sp_last_error_message. For wrappers that report errors themselves (the
 * Fortran module when stat= is present). Thread-safety: per thread.
 */
SP_API void sp_set_thread_diagnostics(int enabled);

/** Reset the calling thread's sp_last_error to SP_OK. */
SP_API void sp_clear_error(void);

/**
 * A static English message for a status code ("unknown status" for values
 * outside the table). Never NULL. Thread-safety: any thread.
 */
SP_API const char *sp_error_string(int status);

/** The enum name of a status code ("SP_ERR_OUTPUT"), or "SP_UNKNOWN". */
SP_API const char *sp_status_name(int status);

#ifdef __cplusplus
}
#endif

/* ---------------------------------------------------------------------------
 * Compiled-out build
 *
 * Define SCOPE_PROFILER_DISABLED before including this header (e.g.
 * -DSCOPE_PROFILER_DISABLED) to compile every call away: arguments are not
 * evaluated, nothing is recorded or written, no library symbol is
 * referenced (the library need not even be linked), and calls that return
 * a status return SP_OK (sp_region returns 0, sp_is_active 0). For a build
 * that keeps the calls but switches profiling off at run time, use
 * SCOPE_PROFILER_DISABLE=1 instead.
 * ------------------------------------------------------------------------- */
#if defined(SCOPE_PROFILER_DISABLED) && !defined(SP_BUILDING_LIBRARY)
/* sizeof names each argument without evaluating it, so variables used only
 * in profiler calls do not become "unused" warnings in a compiled-out build. */
static inline int sp_compiled_out_(size_t ignored) { (void)ignored; return SP_OK; }
#define sp_options_init(options) ((void)sizeof(options))
#define sp_setup(file_path) sp_compiled_out_(sizeof(file_path))
#define sp_setup_with_options(options) sp_compiled_out_(sizeof(options))
#define sp_finalize() sp_compiled_out_(0)
#define sp_is_active() sp_compiled_out_(0)
#define sp_session_adoptable(started_by) sp_compiled_out_(sizeof(started_by))
#define sp_now_ns() ((int64_t)0)
#define sp_version() ("profiling compiled out")
#define sp_region_begin(name) sp_compiled_out_(sizeof(name))
#define sp_region_end(name) sp_compiled_out_(sizeof(name))
#define sp_region_begin_n(name, name_len) sp_compiled_out_(sizeof(name) + sizeof(name_len))
#define sp_region_end_n(name, name_len) sp_compiled_out_(sizeof(name) + sizeof(name_len))
#define sp_region(name) sp_compiled_out_(sizeof(name))
#define sp_region_n(name, name_len) sp_compiled_out_(sizeof(name) + sizeof(name_len))
#define sp_begin(region) ((void)sizeof(region))
#define sp_end(region) ((void)sizeof(region))
#define sp_region_name(region) ((void)sizeof(region), (const char *)0)
#define sp_region_thread_totals(region, totals) \
    sp_compiled_out_(sizeof(region) + sizeof(totals))
#define sp_pause() ((void)0)
#define sp_resume() ((void)0)
#define sp_is_paused() sp_compiled_out_(0)
#define sp_set_metadata(key, value) sp_compiled_out_(sizeof(key) + sizeof(value))
#define sp_last_error() sp_compiled_out_(0)
#define sp_clear_error() ((void)0)
#define sp_last_error_message() ("")
#define sp_set_thread_diagnostics(enabled) ((void)sizeof(enabled))
#define sp_error_string(status) ((void)sizeof(status), "profiling compiled out")
#define sp_status_name(status) ((void)sizeof(status), "SP_OK")
#undef SP_REGION_BEGIN
#undef SP_REGION_END
#define SP_REGION_BEGIN(literal) ((void)sizeof("" literal))
#define SP_REGION_END(literal) ((void)sizeof("" literal))
#endif

#endif /* SCOPE_PROFILER_H */
