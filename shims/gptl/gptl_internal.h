/*
 * gptl_internal.h - what the files of the GPTL shim share: the entry
 * points with sized names, which the C API (gptl.c) and the Fortran
 * externals (gptl_fortran.c) both call, and the summary request that the
 * MPI or serial file (gptl_summary_mpi.c / gptl_summary_serial.c) makes.
 * Return values are GPTL's: 0 or -1.
 */
#ifndef SPG_GPTL_INTERNAL_H
#define SPG_GPTL_INTERNAL_H

#include <stddef.h>

#include "shim_common.h"

extern sps_shim spg_shim;

int spg_initialize(const char *language);
int spg_finalize(void);
int spg_start_n(const char *name, size_t len);
int spg_stop_n(const char *name, size_t len);
int spg_init_handle_n(const char *name, size_t len, int *handle);
int spg_start_handle_n(const char *name, size_t len, int *handle);
int spg_stop_handle_n(const char *name, size_t len, int *handle);
/* GPTLpr_file / GPTLpr: this process's table into `file` (len bytes). */
int spg_pr_file_n(const char *file, size_t len);
/* GPTLpr_summary*: the job's table into `file`; `writer` is 1 on the
 * process that writes it (rank 0 of the communicator). */
int spg_pr_summary_n(const char *file, size_t len, int writer);
/* GPTLget_wallclock and GPTLquery for a sized name; `t` is GPTL's thread
 * argument (the calling thread is answered: gptl.c says why). */
int spg_get_wallclock_n(const char *name, size_t len, int t, double *value);
int spg_query_n(const char *name, size_t len, int t, int *count, int *onflg, double *wallclock,
                double *dusr, double *dsys, long long *papicounters_out, int maxcounters);

#endif /* SPG_GPTL_INTERNAL_H */
