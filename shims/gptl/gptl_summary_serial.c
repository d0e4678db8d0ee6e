/*
 * gptl_summary_serial.c - GPTLpr_summary and GPTLpr_summary_file in a build
 * without MPI (gptl_summary_mpi.c is the other one; the build picks). The
 * communicator is an int, as in GPTL built without MPI, and ignored: the
 * process writes the table itself.
 */
#define GPTL_NO_MPI 1 /* the int forms, whatever <mpi.h> the compiler sees */

#include <stddef.h>

#include "gptl.h"
#include "gptl_internal.h"

SPS_EXPORT int GPTLpr_summary(int comm) {
    static const char file[] = "timing.summary";
    (void)comm;
    return spg_pr_summary_n(file, sizeof file - 1, 1);
}

SPS_EXPORT int GPTLpr_summary_file(int comm, const char *outfile) {
    (void)comm;
    return spg_pr_summary_n(outfile, sps_name_len(&spg_shim, outfile), 1);
}

SPS_EXPORT int gptlpr_summary_(const int *fcomm) {
    (void)fcomm;
    return GPTLpr_summary(0);
}

SPS_EXPORT int gptlpr_summary_file_(const int *fcomm, const char *file, size_t len) {
    (void)fcomm;
    return spg_pr_summary_n(file, sps_fortran_len(&spg_shim, file, len), 1);
}
