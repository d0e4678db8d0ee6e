/*
 * spp_c.c - the C bindings MPI_<Camel> of every operation of spp_ops.h,
 * generated from the table. Each one calls PMPI_<Camel> with its own
 * arguments and returns exactly what it returned; when recording, the call
 * is a region of the profiler (sp_begin/sp_end on a cached handle).
 */
#include <mpi.h>

#include "scope_profiler.h"
#include "spp_shapes.h"

#define SPP_EXPORT __attribute__((visibility("default")))

#define SPP_C_WRAPPER_(lower, Camel, UPPER, SHAPE, KIND)                         \
    SPP_EXPORT int MPI_##Camel(SPP_CP_##SHAPE) {                                 \
        if (!spp_recording(SPP_OP_##lower)) return PMPI_##Camel(SPP_CA_##SHAPE); \
        spp_key key_ = SPP_CK_##SHAPE(SPP_OP_##lower);                           \
        int region_ = spp_region_of(&key_);                                      \
        if (region_ >= 0) sp_begin(region_);                                     \
        int rc_ = PMPI_##Camel(SPP_CA_##SHAPE);                                  \
        if (region_ >= 0) sp_end(region_);                                       \
        SPP_CPOST_##SHAPE(SPP_OP_##lower);                                       \
        return rc_;                                                              \
    }
SPP_OPS(SPP_C_WRAPPER_)
