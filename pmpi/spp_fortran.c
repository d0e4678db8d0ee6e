/*
 * spp_fortran.c - the Fortran bindings of every operation of spp_ops.h,
 * generated from the table. Open MPI's Fortran entry points call the C
 * PMPI_ functions directly, never MPI_*, so the C wrappers do not see
 * Fortran calls: each binding is wrapped here under all its names
 *
 *   mpif.h and `use mpi`:  mpi_<op>_, mpi_<op>__, mpi_<op>, MPI_<OP>
 *   `use mpi_f08`:         mpi_<op>_f08_
 *
 * and calls its profiling twin (pmpi_<op>_ / pmpi_<op>_f08_) with the
 * same arguments. Those twins live in libmpi_mpifh and libmpi_usempif08,
 * which a C program does not load: they are weak references, resolved
 * when a Fortran program brings them in, so the same library can be
 * preloaded into C and Fortran programs alike. (A wrapper whose twin is
 * missing cannot be called: its program would have no Fortran MPI.)
 */
#include <mpi.h>

#include "scope_profiler.h"
#include "spp_shapes.h"

#define SPP_EXPORT __attribute__((visibility("default")))

/* One implementation per binding flavour and its exported names. */
#define SPP_F_BODY_(lower, SHAPE, twin)                                          \
    {                                                                            \
        if (!twin) {                                                             \
            if (ierr) *ierr = MPI_ERR_INTERN;                                    \
            return;                                                              \
        }                                                                        \
        if (!spp_recording(SPP_OP_##lower)) {                                    \
            twin(SPP_FA_##SHAPE);                                                \
            return;                                                              \
        }                                                                        \
        spp_key key_ = SPP_FK_##SHAPE(SPP_OP_##lower);                           \
        int region_ = spp_region_of(&key_);                                      \
        if (region_ >= 0) sp_begin(region_);                                     \
        twin(SPP_FA_##SHAPE);                                                    \
        if (region_ >= 0) sp_end(region_);                                       \
        SPP_FPOST_##SHAPE(SPP_OP_##lower);                                       \
    }

#define SPP_F_WRAPPER_(lower, Camel, UPPER, SHAPE, KIND)                              \
    extern void pmpi_##lower##_(SPP_FP_##SHAPE) __attribute__((weak));               \
    extern void pmpi_##lower##_f08_(SPP_FP_##SHAPE) __attribute__((weak));           \
    static void spp_f_##lower(SPP_FP_##SHAPE) SPP_F_BODY_(lower, SHAPE, pmpi_##lower##_) \
    static void spp_f08_##lower(SPP_FP_##SHAPE)                                      \
        SPP_F_BODY_(lower, SHAPE, pmpi_##lower##_f08_)                               \
    SPP_EXPORT void mpi_##lower##_(SPP_FP_##SHAPE) __attribute__((alias("spp_f_" #lower)));  \
    SPP_EXPORT void mpi_##lower##__(SPP_FP_##SHAPE) __attribute__((alias("spp_f_" #lower))); \
    SPP_EXPORT void mpi_##lower(SPP_FP_##SHAPE) __attribute__((alias("spp_f_" #lower)));    \
    SPP_EXPORT void MPI_##UPPER(SPP_FP_##SHAPE) __attribute__((alias("spp_f_" #lower)));    \
    SPP_EXPORT void mpi_##lower##_f08_(SPP_FP_##SHAPE)                                \
        __attribute__((alias("spp_f08_" #lower)));
SPP_OPS(SPP_F_WRAPPER_)
