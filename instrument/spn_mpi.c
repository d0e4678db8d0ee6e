/*
 * spn_mpi.c - when the instrumented program has initialised MPI (spn_mpi.h).
 *
 * The program is not asked to call anything and MPI_Init is not wrapped
 * (the PMPI wrappers or another tool may own it): the calls the hooks see
 * are this library's only sight of the program's progress. Two occasions
 * ask the core to put its MPI_Finalize hook in place, until it is done:
 *
 *  - each new function (spn_table.c): a code that initialises MPI usually
 *    goes on to call functions it did not call before (its solver);
 *  - the end of a timed call (spn_hooks.c, end_frame), at most once per
 *    SPN_MPI_PERIOD_NS: a code whose every function was met before MPI_Init
 *    (a time loop it already ran once as a warm-up, or before MPI_Init as
 *    a serial set-up) still ends calls afterwards. Calls are timed while
 *    their function is undecided for throttling (the default, until 100,000
 *    calls of it), so this costs nothing on an untimed call and, once
 *    settled, one relaxed load on a timed one, which already reads the
 *    clock twice and does four atomic updates.
 *
 * Each ask costs one PMPI_Initialized (and a thread check) until MPI runs,
 * so the period bounds that to 1,000 a second per thread of a busy
 * program; nothing
 * after. Why not a cheaper trigger: a flag tested on every hook would cost
 * every call for the rest of the run; a thread polling MPI could not
 * install the hook (only MPI's main thread may, under MPI_THREAD_SINGLE).
 *
 * Left: with throttling off (SCOPE_PROFILER_THROTTLE=off) no call is timed,
 * so only a new function asks, as before; and a program that calls no
 * instrumented function at all between MPI_Init and MPI_Finalize cannot be
 * seen. Either writes one file per rank at exit
 * (docs/guide/first-profile-without-changes.md).
 *
 * sp_mpi_notice_init exists only in MPI builds of the core and is declared
 * in scope_profiler_mpi.h, which needs <mpi.h>: a weak reference keeps this
 * library free of MPI's headers and works with either build.
 */
#include "spn_mpi.h"

#define NO_INSTRUMENT __attribute__((no_instrument_function))
/* 1 ms: the first end of a timed call after MPI_Init that comes that long
 * after the previous ask installs the hook. */
#define SPN_MPI_PERIOD_NS 1000000

extern int sp_mpi_notice_init(void) __attribute__((weak));

atomic_int spn_mpi_waiting = 1;
static atomic_flag asking = ATOMIC_FLAG_INIT; /* one thread asks at a time */
/* Per thread: only MPI's main thread can install the hook, so other
 * threads' asks must not use up its turn. Initial-exec, as the hooks'
 * own pointer (spn_hooks.c): 8 more bytes of static TLS, and no
 * __tls_get_addr call (11 instructions) on each timed call while waiting. */
static __thread int64_t next_ask_ns __attribute__((tls_model("initial-exec")));

NO_INSTRUMENT void spn_mpi_notice(void) {
    if (!atomic_load_explicit(&spn_mpi_waiting, memory_order_relaxed)) return;
    if (!sp_mpi_notice_init) {
        atomic_store_explicit(&spn_mpi_waiting, 0, memory_order_relaxed);
        return;
    }
    /* The core is asked by one thread at a time; a thread finding it busy
     * leaves this occasion to the one asking. */
    if (atomic_flag_test_and_set_explicit(&asking, memory_order_acquire)) return;
    /* 0: ask again later; 1 done; < 0 refused (said). */
    if (sp_mpi_notice_init() != 0) atomic_store_explicit(&spn_mpi_waiting, 0, memory_order_relaxed);
    atomic_flag_clear_explicit(&asking, memory_order_release);
}

NO_INSTRUMENT void spn_mpi_notice_timed(int64_t now_ns) {
    if (now_ns < next_ask_ns) return;
    next_ask_ns = now_ns + SPN_MPI_PERIOD_NS;
    spn_mpi_notice();
}
