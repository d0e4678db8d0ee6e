/*
 * job_mpi_exit.c - the MPI_Finalize hook (job_mpi_exit.h).
 *
 * Why an attribute and not a wrapper of MPI_Finalize: the core library
 * must not define MPI_ symbols (the PMPI wrappers and any other tool the
 * user links own them); an attribute with a delete callback on
 * MPI_COMM_SELF is the standard's own way to run code at the start of
 * MPI_Finalize, it needs PMPI_ calls only and works whoever calls
 * MPI_Finalize (C, Fortran, a wrapper library).
 *
 * Why armed late: a session started before MPI_Init (the instrumentation
 * library's constructor, a program's sp_setup first) cannot put the
 * attribute anywhere yet. Without the hook such a program that never calls
 * sp_finalize is finished at exit, after MPI_Finalize, and each rank writes
 * its own file. So the first look at an initialised MPI (sp_mpi_notice_init,
 * asked by the instrumentation library whenever it meets a new function)
 * installs the hook; finalize then joins the job from inside MPI_Finalize,
 * collectively, as every rank is there.
 *
 * Only MPI's main thread installs it: under MPI_THREAD_FUNNELED (the usual
 * level of MPI+OpenMP codes) no other thread may call MPI; a worker that
 * meets MPI initialised first leaves the installation to a later look.
 */
#include "job/job_mpi_exit.h"

#include <mpi.h>

#include "job/job_exchange.h"

static int exit_keyval = MPI_KEYVAL_INVALID;
static void (*exit_finalize)(void) = NULL;
static int exit_running = 0;

static int on_self_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    void (*finalize)(void) = exit_finalize;
    if (finalize) {
        exit_running = 1;
        finalize(); /* ends in spi_job_exit_remove, which must not delete us again */
        exit_running = 0;
    }
    return MPI_SUCCESS;
}

void spi_job_exit_expect(void (*on_mpi_finalize)(void)) { exit_finalize = on_mpi_finalize; }

int spi_job_exit_install(void (*on_mpi_finalize)(void), spi_error *err) {
    exit_finalize = on_mpi_finalize;
    /* Armed before the session joined (or joined again at finalize, inside
     * the callback): one attribute is enough, a second would run twice. */
    if (exit_keyval != MPI_KEYVAL_INVALID) return SP_OK;
    int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_self_delete, &exit_keyval, NULL);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Comm_set_attr(MPI_COMM_SELF, exit_keyval, NULL);
        if (rc != MPI_SUCCESS) PMPI_Comm_free_keyval(&exit_keyval);
    }
    if (rc != MPI_SUCCESS) {
        exit_keyval = MPI_KEYVAL_INVALID;
        return spi_job_mpi_fail(err, rc, "installing the MPI_Finalize hook");
    }
    return SP_OK;
}

int spi_job_exit_arm(spi_error *err) {
    if (!exit_finalize || exit_keyval != MPI_KEYVAL_INVALID) return 1;
    int initialized = 0, finalized = 0, main_thread = 0;
    PMPI_Initialized(&initialized);
    if (!initialized) return 0;
    PMPI_Finalized(&finalized);
    if (finalized) return 1; /* too late: finalize at exit will say so */
    if (PMPI_Is_thread_main(&main_thread) != MPI_SUCCESS || !main_thread) return 0;
    return spi_job_exit_install(exit_finalize, err) == SP_OK ? 1 : -1;
}

void spi_job_exit_remove(void) {
    int finalized = 0;
    PMPI_Finalized(&finalized);
    if (exit_keyval != MPI_KEYVAL_INVALID && !finalized) {
        exit_finalize = NULL; /* the deletion below runs the callback: nothing to do */
        if (!exit_running) PMPI_Comm_delete_attr(MPI_COMM_SELF, exit_keyval);
        PMPI_Comm_free_keyval(&exit_keyval);
    }
    exit_keyval = MPI_KEYVAL_INVALID;
    exit_finalize = NULL;
}
