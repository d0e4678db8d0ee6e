/*
 * gptl.h - the GPTL timing API over scope-profiler (libscopeprofiler_gptl).
 *
 * Overview
 * --------
 * A program annotated for GPTL (the General Purpose Timing Library used by
 * climate and weather models) builds unchanged against this header and
 * links libscopeprofiler_gptl instead of libgptl: every GPTLstart/GPTLstop
 * pair becomes a call of a scope-profiler region of the same name, with the
 * real call tree, threads and MPI ranks, written to one HDF5 file per job
 * (the file the Python scope-profiler package reads). This header is ours;
 * it declares the functions GPTL codes call, with GPTL's names, arguments,
 * option values and return codes. It installs into a directory of its own
 * (include/scope_profiler/shims/gptl), so it never shadows a real GPTL.
 *
 * Typical call sequence (unchanged GPTL code):
 *
 *     GPTLinitialize();            // starts a session (SCOPE_PROFILER_FILE, else
 *                                  // profiling_data.h5); MPI_Init may come before or after
 *     GPTLstart("total");
 *     GPTLstart("step");  ...  GPTLstop("step");
 *     GPTLstop("total");
 *     GPTLpr(rank);                // our summary table into timing.<rank>
 *     GPTLfinalize();              // writes the file (collective with MPI)
 *
 * Return codes: GPTL's. Every function returns 0 on success and -1 on
 * failure; the program goes on either way (this library never aborts, also
 * when GPTLabort_on_error is set). A failure the core detects (a stop
 * without a start, stops out of nesting order) is reported by the core on
 * stderr (at most 10 lines per session); one this API detects (a call
 * before GPTLinitialize, GPTLinitialize twice, an unknown handle, an option
 * this library does not implement) is noted once per process.
 * SCOPE_PROFILER_QUIET=1 silences both.
 *
 * How GPTL concepts map:
 *   - a timer is a region; names longer than 1024 bytes are cut (noted once);
 *   - nesting: timers must nest on each thread (a GPTL call tree); a stop
 *     out of order returns -1 and changes nothing;
 *   - threads: every thread records on its own, nothing to set up
 *     (GPTLmaxthreads is accepted and ignored);
 *   - GPTLsession: GPTLinitialize starts a session unless one is running (a
 *     program that calls sp_setup itself, or the PMPI wrappers, keeps its
 *     own, which its owner finishes); GPTLfinalize finishes the session
 *     GPTLinitialize started. A program that never calls GPTLfinalize gets
 *     its file at exit (or inside MPI_Finalize, see docs/guide/mpi.md).
 *   - values while running (GPTLquery, GPTLget_wallclock) are those of
 *     the calling thread, whatever `t` says (GPTL's thread numbers are not
 *     kept; a t >= 0 is noted once); no CPU times or PAPI counters.
 *
 * Thread-safety: GPTLstart/GPTLstop (and the _handle forms), GPTLenable,
 * GPTLdisable and GPTLstamp may be called from any thread at any time.
 * GPTLsetoption, GPTLsetutr, GPTLinitialize, GPTLfinalize, GPTLpr* and
 * GPTLreset from one thread, outside parallel regions, as GPTL requires.
 *
 * Fortran: `use gptl` (module from this library, its .mod in the same
 * include directory tree) gives the same names, lower case, as integer
 * functions; see gptl.f90.
 */
#ifndef GPTL_H
#define GPTL_H

/* GPTLpr_summary takes an MPI communicator when the program has MPI: the
 * header includes <mpi.h> when the compiler can see it (mpicc, or MPI's
 * include directory given), as GPTL's own header does in an MPI build.
 * Define GPTL_NO_MPI to declare the int forms instead. */
#if !defined(GPTL_NO_MPI) && !defined(MPI_VERSION) && defined(__has_include)
#if __has_include(<mpi.h>)
#include <mpi.h>
#endif
#endif

/** Options of GPTLsetoption, with GPTL's values. Only GPTLwall (always on)
 *  and GPTLabort_on_error (never aborts) have a meaning here; every other
 *  option is accepted, and noted once as not implemented. Values that are
 *  none of these (PAPI event codes) are accepted and noted once. */
typedef enum {
    GPTLsync_mpi = 0,        /**< barrier before MPI calls (GPTL's PMPI mode) */
    GPTLwall = 1,            /**< wall-clock time: always recorded */
    GPTLcpu = 2,             /**< CPU time per timer */
    GPTLabort_on_error = 3,  /**< abort on error: never, a profiler must not kill its program */
    GPTLoverhead = 4,        /**< estimate the timing overhead */
    GPTLdepthlimit = 5,      /**< print only this deep */
    GPTLverbose = 6,         /**< verbose output */
    GPTLnarrowprint = 7,     /**< narrow PAPI columns */
    GPTLpercent = 9,         /**< percent-of-first-timer column */
    GPTLpersec = 10,         /**< PAPI per-second column */
    GPTLmultiplex = 11,      /**< PAPI multiplexing */
    GPTLdopr_preamble = 12,  /**< print the preamble */
    GPTLdopr_threadsort = 13,/**< print sorted thread statistics */
    GPTLdopr_multparent = 14,/**< print multiple-parent information */
    GPTLdopr_collision = 15, /**< print hash collision information */
    GPTLprint_method = 16,   /**< parent/child print method (GPTL_Method) */
    GPTL_IPC = 17,           /**< derived PAPI counters, 17..26 */
    GPTL_LSTPI = 21,
    GPTL_DCMRT = 22,
    GPTL_LSTPDCM = 23,
    GPTL_L2MRT = 24,
    GPTL_LSTPL2M = 25,
    GPTL_L3MRT = 26,
    GPTLdopr_memusage = 27,  /**< memory usage when auto-instrumented */
    GPTLtablesize = 50,      /**< hash table size per thread */
    GPTLmaxthreads = 51,     /**< maximum number of threads */
    GPTLonlyprint_rank0 = 52 /**< print on rank 0 only */
} GPTL_Option;

/** Underlying timers of GPTLsetutr, with GPTL's values. None is used: the
 *  clock is scope-profiler's (SCOPE_PROFILER_CLOCK); noted once. */
typedef enum {
    GPTLgettimeofday = 1,
    GPTLnanotime = 2,
    GPTLread_real_time = 3,
    GPTLmpiwtime = 4,
    GPTLclockgettime = 5,
    GPTLpapitime = 6,
    GPTLplacebo = 7
} GPTL_Funcoption;

/** GPTLprint_method values (accepted; the summary prints the full tree). */
typedef enum {
    GPTLfirst_parent = 1,
    GPTLlast_parent = 2,
    GPTLmost_frequent = 3,
    GPTLfull_tree = 4
} GPTL_Method;

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Set an option before GPTLinitialize (see GPTL_Option).
 * Returns 0, or -1 when called after GPTLinitialize (GPTL's rule; noted
 * once). An option without a meaning here is accepted (0) and noted once.
 */
int GPTLsetoption(const int option, const int val);

/**
 * Choose GPTL's underlying timer. Accepted and noted once (returns 0): the
 * clock is scope-profiler's, chosen by SCOPE_PROFILER_CLOCK.
 */
int GPTLsetutr(const int option);

/**
 * Start timing: starts a scope-profiler session (sp_setup with the
 * environment's settings) unless one is running, which is then used.
 * Returns 0; -1 when called twice without GPTLfinalize between (noted once;
 * the running session goes on) or when the session could not be set up
 * (the core says why; every later call is then a harmless no-op).
 */
int GPTLinitialize(void);

/**
 * Stop timing: finishes the session GPTLinitialize started (writes the
 * file; collective under MPI) and writes the tables GPTLpr, GPTLpr_file and
 * GPTLpr_summary asked for. GPTLinitialize may then be called again.
 * Returns 0 (also when the session was already finished, e.g. inside
 * MPI_Finalize; the requested tables are then not written, noted once);
 * -1 before GPTLinitialize (noted once) or when the file could not be
 * written (the core says why).
 */
int GPTLfinalize(void);

/**
 * Start timer `name` on the calling thread: a call of region `name` opens,
 * nested in the thread's innermost open call.
 * Returns 0 (also while GPTLdisable is in effect: nothing is recorded);
 * -1 before GPTLinitialize (noted once), for a NULL or empty name, or for a
 * name the core could not register (out of memory, too many regions).
 */
int GPTLstart(const char *name);

/**
 * Stop timer `name`: the thread's innermost open call must be of `name`.
 * Returns 0; -1 before GPTLinitialize, or when `name` is not the innermost
 * open timer of the thread (not started, or stopped out of nesting order:
 * nothing changes, the core prints one line).
 */
int GPTLstop(const char *name);

/**
 * Resolve `name` to a handle for the _handle calls, stored in *handle
 * (never 0: 0 means "not resolved yet"). May be called before
 * GPTLinitialize. Returns 0, or -1 for a NULL handle or a NULL/empty name.
 */
int GPTLinit_handle(const char *name, int *handle);

/**
 * GPTLstart through a handle: when *handle is 0, `name` is resolved first
 * and the handle stored there (GPTL's lazy initialisation); otherwise the
 * handle alone says which timer (`name` is not read), which makes this the
 * cheapest call. Returns as GPTLstart; -1 also for a NULL handle or one
 * this library never issued (noted once).
 */
int GPTLstart_handle(const char *name, int *handle);

/** GPTLstop through a handle, as GPTLstart_handle. Returns as GPTLstop. */
int GPTLstop_handle(const char *name, int *handle);

/**
 * Write our summary table of this process (the call tree of its regions,
 * as sp_summary_print prints it) into "timing.<id>" when the session
 * GPTLinitialize started is finished (GPTLfinalize, or exit). The profile
 * itself goes to the HDF5 file as usual. Keeping the table needs this
 * process's calls in memory at finalize (sp_finalize_results); a very long
 * trace is better summarised from its file (scope-inspect).
 * Returns 0; -1 before GPTLinitialize (noted once).
 */
int GPTLpr(const int id);

/** GPTLpr into the file `outfile` (copied). Returns 0; -1 before
 *  GPTLinitialize or for a NULL/empty name. */
int GPTLpr_file(const char *outfile);

#ifdef MPI_VERSION
/**
 * Write our summary table of the whole job (every rank pooled, as the
 * finalize summary prints it) into "timing.summary" when the session is
 * finished; rank 0 of `comm` writes it (comm 0, or a process without MPI
 * running: this process). Collective in GPTL; here every rank just
 * records the request. Returns 0; -1 before GPTLinitialize.
 */
int GPTLpr_summary(MPI_Comm comm);
/** GPTLpr_summary into `outfile`. Returns as GPTLpr_summary, and -1 for a
 *  NULL/empty name. */
int GPTLpr_summary_file(MPI_Comm comm, const char *outfile);
#else
/** GPTLpr_summary without MPI: `comm` is ignored, this process writes. */
int GPTLpr_summary(int comm);
/** GPTLpr_summary_file without MPI. */
int GPTLpr_summary_file(int comm, const char *outfile);
#endif

/**
 * GPTL zeroes every timer here. Recorded calls are part of the trace and
 * are kept: accepted and noted once. Returns 0; -1 before GPTLinitialize.
 */
int GPTLreset(void);

/** Record again after GPTLdisable. Returns 0. Any thread. */
int GPTLenable(void);

/**
 * Stop recording until GPTLenable: GPTLstart/GPTLstop and their _handle
 * forms return 0 and record nothing (a pair must not straddle the switch,
 * as in GPTL). Returns 0. Any thread.
 */
int GPTLdisable(void);

/**
 * The wall-clock time (s) of the timer's calls the calling thread finished
 * so far, as GPTL accumulates it (a call still running is not included).
 * Read from what the thread recorded (sp_region_thread_totals in
 * scope_profiler.h): GPTLstart/GPTLstop pay nothing for it; a query costs
 * the calls the thread recorded since its previous query. `t` is read as
 * the calling thread (noted once when >= 0). Returns 0, or -1 with *value
 * 0 when the thread never started the timer, before GPTLinitialize, for a
 * NULL value or name, or when the core cannot answer (noted once).
 * Thread-safety: any thread, about itself.
 */
int GPTLget_wallclock(const char *name, int t, double *value);

/**
 * GPTL's running values of a timer on the calling thread: *count the calls
 * it finished, *onflg 1 while the timer is running on it, *wallclock their
 * time (s) as GPTLget_wallclock. *dusr, *dsys and the PAPI counters are 0
 * (not recorded per timer). Outputs may be NULL. Returns 0, or -1 (the
 * outputs 0) as GPTLget_wallclock does. Thread-safety: any thread, about
 * itself.
 */
int GPTLquery(const char *name, int t, int *count, int *onflg, double *wallclock,
              double *dusr, double *dsys, long long *papicounters_out, const int maxcounters);

/**
 * The current wall-clock time (s, on scope-profiler's clock: the timeline
 * of the file and of Python's time.perf_counter) and this process's user
 * and system CPU time (s). Returns 0; -1 when an argument is NULL.
 * Thread-safety: any thread.
 */
int GPTLstamp(double *wall, double *usr, double *sys);

#ifdef __cplusplus
}
#endif

#endif /* GPTL_H */
