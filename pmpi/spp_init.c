/*
 * spp_init.c - MPI_Init, MPI_Init_thread and MPI_Finalize in every binding
 * (C, mpif.h / `use mpi`, `use mpi_f08`): after a successful init the
 * profiler starts itself (sp_setup(NULL): SCOPE_PROFILER_FILE and the other
 * variables apply) unless a session is already active or
 * SCOPE_PROFILER_MPI=off; before finalize it finishes the session it
 * started (collective: every rank is in MPI_Finalize). A session the
 * program started itself is left to the program (and to the core's own
 * MPI_Finalize hook).
 *
 * The session started here is the program's to take: it is marked
 * adoptable (sp_session_adoptable), so a program that calls sp_setup after
 * MPI_Init (as one written without the wrappers does) gets its own file
 * and options applied to it, with the MPI calls recorded so far, instead
 * of SP_ERR_ALREADY_ACTIVE. If the program then finalizes before
 * MPI_Finalize, the finalize below finds no session and does nothing.
 */
#include <mpi.h>

#include "mpi/scope_profiler_mpi.h"
#include "scope_profiler.h"

#include "spp_core.h"

#define SPP_EXPORT __attribute__((visibility("default")))

static void after_init(void) {
    int initialized = 0;
    PMPI_Initialized(&initialized);
    if (!initialized) return;
    int had_session = sp_is_active();
    /* a session the program set up before MPI_Init finalizes inside
     * MPI_Finalize (one job file) only once the core's hook is in place */
    if (had_session) (void)sp_mpi_notice_init();
    spp_after_init();
    if (!had_session && sp_is_active()) sp_session_adoptable("the PMPI wrappers at MPI_Init");
}

SPP_EXPORT int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) after_init();
    return rc;
}

SPP_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) after_init();
    return rc;
}

SPP_EXPORT int MPI_Finalize(void) {
    spp_before_finalize();
    return PMPI_Finalize();
}

/* Fortran: the f08 ierror is optional (NULL when absent), so success is
 * asked of MPI rather than read from it. */
extern void pmpi_init_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
    __attribute__((weak));
extern void pmpi_finalize_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_init_f08_(MPI_Fint *ierr) __attribute__((weak));
extern void pmpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
    __attribute__((weak));
extern void pmpi_finalize_f08_(MPI_Fint *ierr) __attribute__((weak));

static void missing(MPI_Fint *ierr) {
    if (ierr) *ierr = MPI_ERR_INTERN;
}

/* The three entry points of one Fortran binding, calling the twins
 * pmpi_init<suffix>, pmpi_init_thread<suffix>, pmpi_finalize<suffix>. */
#define SPP_F_LIFECYCLE_(prefix, suffix)                                                \
    static void prefix##_init(MPI_Fint *ierr) {                                         \
        if (!pmpi_init##suffix) return missing(ierr);                                   \
        pmpi_init##suffix(ierr);                                                        \
        after_init();                                                                   \
    }                                                                                   \
    static void prefix##_init_thread(MPI_Fint *required, MPI_Fint *provided,            \
                                     MPI_Fint *ierr) {                                  \
        if (!pmpi_init_thread##suffix) return missing(ierr);                            \
        pmpi_init_thread##suffix(required, provided, ierr);                             \
        after_init();                                                                   \
    }                                                                                   \
    static void prefix##_finalize(MPI_Fint *ierr) {                                     \
        if (!pmpi_finalize##suffix) return missing(ierr);                               \
        spp_before_finalize();                                                          \
        pmpi_finalize##suffix(ierr);                                                    \
    }
SPP_F_LIFECYCLE_(f, _)
SPP_F_LIFECYCLE_(f08, _f08_)

#define SPP_F_NAMES_(lower, UPPER, impl, params)                              \
    SPP_EXPORT void mpi_##lower##_ params __attribute__((alias(#impl)));      \
    SPP_EXPORT void mpi_##lower##__ params __attribute__((alias(#impl)));     \
    SPP_EXPORT void mpi_##lower params __attribute__((alias(#impl)));         \
    SPP_EXPORT void MPI_##UPPER params __attribute__((alias(#impl)));
SPP_F_NAMES_(init, INIT, f_init, (MPI_Fint *ierr))
SPP_F_NAMES_(init_thread, INIT_THREAD, f_init_thread,
             (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr))
SPP_F_NAMES_(finalize, FINALIZE, f_finalize, (MPI_Fint *ierr))
SPP_EXPORT void mpi_init_f08_(MPI_Fint *ierr) __attribute__((alias("f08_init")));
SPP_EXPORT void mpi_init_thread_f08_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
    __attribute__((alias("f08_init_thread")));
SPP_EXPORT void mpi_finalize_f08_(MPI_Fint *ierr) __attribute__((alias("f08_finalize")));
