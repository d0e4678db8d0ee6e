/*
 * finalize_summary.h - the summary table sp_finalize prints, built from call
 * paths (finalize_summary.c). Internal to the lifecycle. Not thread-safe:
 * one finalize at a time (as sp_finalize itself).
 *
 *   spi_finalize_summary_start   after the ticks are converted, before the
 *                                session is collected
 *   spi_finalize_summary_sink    what spi_run_collect folds this rank's
 *                                paths into, in the walk that builds the
 *                                rows (run_paths.h: no pass of its own)
 *   spi_finalize_summary_gather  collective: rank 0 pools every rank's
 *                                (memory grows with distinct paths, not ranks)
 *   spi_finalize_summary_print   rank 0, after the report line
 *   spi_finalize_summary_free
 */
#ifndef SPI_FINALIZE_SUMMARY_H
#define SPI_FINALIZE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/path_pool.h"
#include "profile/profile.h"
#include "record/recorder.h"
#include "record/run_paths.h"
#include "util/error.h"

typedef struct spi_finalize_summary {
    bool wanted;
    bool needs_paths;         /* wanted, trace mode: rank 0 pools the ranks' paths */
    /* this rank's paths (trace mode), as the collect folded them; .status:
     * SP_OK, or why the paths are missing (the fold's or the gather's) */
    spi_run_paths mine;
    bool gather_failed;       /* rank 0 could not take the other ranks' paths */
    spi_path_pool pool;       /* rank 0: every rank's, pooled by names as they came */
    int64_t ns;               /* time spent on the summary so far */
} spi_finalize_summary;

/* Whether the table is printed: not quiet, SCOPE_PROFILER_SUMMARY not "0". */
bool spi_finalize_summary_wanted(bool quiet);

/* Whether this rank's paths are needed: a trace session, the table
 * wanted. Folding them is the collect's (spi_finalize_summary_sink). */
void spi_finalize_summary_start(spi_finalize_summary *s, const spi_session *session,
                                bool wanted);

/* The `paths` argument of spi_run_collect: &s->mine when the paths are
 * needed, else NULL (the collect then folds nothing). Failures land in
 * s->mine.status and make the table flat; they never fail the write. */
spi_run_paths *spi_finalize_summary_sink(spi_finalize_summary *s);

/* Every rank's paths pooled on rank 0 (collective with MPI; every rank
 * calls it).
 * `local` is this rank's collected profile (its names). Returns the
 * gather's status (also kept in s->status). */
int spi_finalize_summary_gather(spi_finalize_summary *s, const spi_profile *local,
                                spi_error *err);

/* Print the table on rank 0 (nothing elsewhere or when not wanted): from
 * `local` and the paths for one rank, from the file at `path` (its index
 * only, for a trace) and the pooled paths for several. Diagnostics go
 * through spi_diag; nothing here changes the run's status. */
void spi_finalize_summary_print(spi_finalize_summary *s, const spi_profile *local,
                                uint32_t ranks, bool aggregate, const char *path, bool written);

void spi_finalize_summary_free(spi_finalize_summary *s);

#endif /* SPI_FINALIZE_SUMMARY_H */
