/*
 * gptl_summary_mpi.c - GPTLpr_summary and GPTLpr_summary_file in a build
 * with MPI (gptl_summary_serial.c is the other one; the build picks).
 *
 * GPTL gathers every rank's timers to rank 0 of the communicator, which
 * writes "timing.summary". Here the job's profile is one file already, so
 * the call only records which process prints the table from it when the
 * session ends: rank 0 of `comm`, as in GPTL. GPTL reads a zero
 * communicator as MPI_COMM_WORLD; a process where MPI is not running (yet,
 * or any more) writes the table itself.
 */
#include <mpi.h>
#include <string.h>

#include "gptl.h"
#include "gptl_internal.h"

static int writes_job_table(MPI_Comm comm) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) return 1;
    /* MPI_Comm is a pointer in some MPIs and an int in others: compare
     * the bytes with zero to accept GPTL's 0 in both. */
    MPI_Comm zero;
    memset(&zero, 0, sizeof zero);
    if (memcmp(&comm, &zero, sizeof comm) == 0 || comm == MPI_COMM_NULL) comm = MPI_COMM_WORLD;
    int rank = 0;
    return MPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == 0;
}

SPS_EXPORT int GPTLpr_summary(MPI_Comm comm) {
    static const char file[] = "timing.summary";
    return spg_pr_summary_n(file, sizeof file - 1, writes_job_table(comm));
}

SPS_EXPORT int GPTLpr_summary_file(MPI_Comm comm, const char *outfile) {
    return spg_pr_summary_n(outfile, sps_name_len(&spg_shim, outfile), writes_job_table(comm));
}

/* Fortran (see gptl_fortran.c): the communicator as a Fortran handle. */
SPS_EXPORT int gptlpr_summary_(const MPI_Fint *fcomm) {
    return GPTLpr_summary(fcomm ? MPI_Comm_f2c(*fcomm) : MPI_COMM_WORLD);
}

SPS_EXPORT int gptlpr_summary_file_(const MPI_Fint *fcomm, const char *file, size_t len) {
    return spg_pr_summary_n(file, sps_fortran_len(&spg_shim, file, len),
                            writes_job_table(fcomm ? MPI_Comm_f2c(*fcomm) : MPI_COMM_WORLD));
}
