/*
 * setup_mpi.c - the public MPI entry points (scope_profiler_mpi.h): the
 * setup variants over a communicator, and sp_mpi_notice_init, through
 * which a session begun before MPI_Init gets its MPI_Finalize hook
 * (job/job_mpi_exit.c).
 */
#include "scope_profiler_mpi.h"

#include <stdbool.h>

#include "util/diag.h"
#include "util/error.h"
#include "job/job_mpi_exit.h"
#include "lifecycle/profiler.h"

/* Whether comm has the ranks of MPI_COMM_WORLD in the same order. */
static bool same_as_world(MPI_Comm comm) {
    int initialized = 0, finalized = 0, result = MPI_UNEQUAL;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    return initialized && !finalized && comm != MPI_COMM_NULL &&
           PMPI_Comm_compare(comm, MPI_COMM_WORLD, &result) == MPI_SUCCESS &&
           (result == MPI_IDENT || result == MPI_CONGRUENT);
}

SP_API int sp_setup_mpi(MPI_Comm comm, const sp_options *options) {
    sp_options defaults;
    if (!options) {
        sp_options_init(&defaults);
        options = &defaults;
    }
    /* Taking over a session the PMPI wrappers started (over
     * MPI_COMM_WORLD): the world's ranks in the world's order are that
     * very job; any other communicator is named to say it is not used. */
    if (spi_setup_adoptable() && same_as_world(comm)) return spi_setup_in_job(options, NULL);
    return spi_setup_in_job(options, &comm);
}

SP_API int sp_setup_mpi_f(MPI_Fint comm, const sp_options *options) {
    return sp_setup_mpi(MPI_Comm_f2c(comm), options);
}

SP_API int sp_mpi_notice_init(void) {
    spi_error err;
    spi_error_clear(&err);
    int armed = spi_job_exit_arm(&err);
    if (armed >= 0) return armed;
    /* Asked for the user by the instrumentation library: say it once here,
     * as nobody else will; the run goes on, finalized at exit. */
    spi_diag("%s; the profile is written at exit, one file per rank", err.message);
    spi_status_remember(SP_ERR_MPI);
    return SP_ERR_MPI;
}
