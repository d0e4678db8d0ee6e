/*
 * scope_profiler_mpi.h - MPI entry points of libscopeprofiler (installed
 * only by an MPI build; requires <mpi.h>).
 *
 * In an MPI build, sp_setup detects an initialised MPI by itself and uses
 * MPI_COMM_WORLD; these variants take a communicator. With MPI, sp_setup
 * and sp_finalize are collective over that communicator: every rank calls
 * them. sp_finalize writes ONE schema-3 file for all ranks (rank 0 writes;
 * the other ranks send their rows in bounded chunks) and only rank 0 prints.
 * A program that calls MPI_Finalize before sp_finalize still gets its file:
 * the profiler finalizes from inside MPI_Finalize.
 */
#ifndef SCOPE_PROFILER_MPI_H
#define SCOPE_PROFILER_MPI_H

#include <mpi.h>

#include "scope_profiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * sp_setup_with_options over the ranks of `comm` (duplicated internally, so
 * the profiler's messages never match the application's). Collective.
 * options may be NULL for the defaults. Returns SP_OK, SP_ERR_MPI (MPI not
 * initialised, or an MPI call failed), or the errors of
 * sp_setup_with_options. Thread-safety: as sp_setup.
 */
SP_API int sp_setup_mpi(MPI_Comm comm, const sp_options *options);

/** sp_setup_mpi for a Fortran communicator handle (MPI_Fint, the integer of
 *  `use mpi` or comm%MPI_VAL of `use mpi_f08`). */
SP_API int sp_setup_mpi_f(MPI_Fint comm, const sp_options *options);

/**
 * Tell the profiler that MPI may have been initialised since the session
 * began. A session started before MPI_Init (by the instrumentation
 * library's constructor, or a program's sp_setup before MPI_Init) joins
 * MPI_COMM_WORLD at sp_finalize; if the program never calls sp_finalize,
 * or calls it after MPI_Finalize, this call is what lets the profiler
 * finalize from inside MPI_Finalize (collectively, while MPI works), so the
 * ranks still write ONE file. Local (no communication: an attribute on
 * MPI_COMM_SELF), cheap, and safe to call any number of times, before or
 * after MPI_Init, with or without a session; tools that see the program
 * run (libscopeprofiler_instrument at each new function) call it for the
 * user. Returns 1 when nothing more is needed (the hook is in place, or no
 * session waits for MPI), 0 to be asked again later (MPI not initialised
 * yet, or the caller is not MPI's main thread), SP_ERR_MPI when MPI refused
 * the attribute (sp_last_error_message says why). Thread-safety: call from
 * one thread at a time; only MPI's main thread installs the hook.
 */
SP_API int sp_mpi_notice_init(void);

#ifdef __cplusplus
}
#endif

#endif /* SCOPE_PROFILER_MPI_H */
