/*
 * spn_mpi.h - the instrumentation library's look at MPI: the session it
 * starts before main (so before MPI_Init) needs the core's MPI_Finalize
 * hook, which can only be installed once MPI runs.
 *
 * Thread-safety: every function here may be called from any thread; the
 * core is asked by one thread at a time (a try-lock in spn_mpi.c: a caller
 * finding another one asking skips, the next occasion asks again).
 */
#ifndef SPN_MPI_H
#define SPN_MPI_H

#include <stdatomic.h>
#include <stdint.h>

/* Nonzero until the core says nothing more is needed (its hook is in
 * place, it refused, or the build has no MPI). Read relaxed. */
extern atomic_int spn_mpi_waiting;

/* Ask the core (sp_mpi_notice_init, MPI builds) to install its
 * MPI_Finalize hook if MPI is initialised now. Called at each new function
 * (off the hot path) until the core says nothing more is needed; a no-op in
 * a build without MPI or once settled. */
void spn_mpi_notice(void);

/* The same, asked at most once per SPN_MPI_PERIOD_NS of `now_ns` (the
 * recording clock, sp_now_ns). Out of line; called through spn_mpi_tick. */
void spn_mpi_notice_timed(int64_t now_ns);

/* At the end of a timed call (a frame counted for throttling, whose end
 * time the hooks have read anyway): ask the core again, rate-limited, while
 * it waits. Once settled this is one relaxed load on a path that already
 * does several atomic updates; untimed calls never come here. */
static inline __attribute__((no_instrument_function)) void spn_mpi_tick(int64_t now_ns) {
    if (__builtin_expect(atomic_load_explicit(&spn_mpi_waiting, memory_order_relaxed), 0))
        spn_mpi_notice_timed(now_ns);
}

#endif
