/*
 * spn_mpi.c - when the instrumented program has initialised MPI (spn_mpi.h).
 *
 * The program is not asked to call anything and MPI_Init is not wrapped
 * (the PMPI wrappers or another tool may own it): the new functions the
 * hooks meet are this library's only sight of the program's progress, and
 * a code that initialises MPI goes on to call functions it did not call
 * before (its solver, its time loop). At each of those, until it is done,
 * the core is asked to put its MPI_Finalize hook in place; that costs one
 * PMPI_Initialized per new function until MPI runs, nothing after.
 *
 * sp_mpi_notice_init exists only in MPI builds of the core and is declared
 * in scope_profiler_mpi.h, which needs <mpi.h>: a weak reference keeps this
 * library free of MPI's headers and works with either build.
 *
 * A program whose every function was met before MPI_Init never gets the
 * hook this way; it still gets one file per rank, at exit, as before
 * (docs/guide/first-profile-without-changes.md).
 */
#include "spn_mpi.h"

#include <stdatomic.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))

extern int sp_mpi_notice_init(void) __attribute__((weak));

static atomic_int settled = 0;

NO_INSTRUMENT void spn_mpi_notice(void) {
    if (atomic_load_explicit(&settled, memory_order_relaxed)) return;
    if (!sp_mpi_notice_init) {
        atomic_store_explicit(&settled, 1, memory_order_relaxed);
        return;
    }
    /* 0: ask again at the next new function; 1 done; < 0 refused (said). */
    if (sp_mpi_notice_init() != 0) atomic_store_explicit(&settled, 1, memory_order_relaxed);
}
