/*
 * finalize_summary.h - the summary table sp_finalize prints, built from call
 * paths (finalize_summary.c). Internal to the lifecycle. Not thread-safe:
 * one finalize at a time (as sp_finalize itself).
 *
 *   spi_finalize_summary_start   after the ticks are converted, before the
 *                                session is collected: this rank's paths
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
#include "util/error.h"

typedef struct spi_finalize_summary {
    bool wanted;
    bool needs_paths;         /* wanted, trace mode: rank 0 pools the ranks' paths */
    int status;               /* SP_OK, or why the paths are missing */
    bool gather_failed;       /* rank 0 could not take the other ranks' paths */
    spi_call_path *paths;     /* this rank's (trace mode) */
    size_t count;
    spi_path_pool pool;       /* rank 0: every rank's, pooled by names as they came */
    int64_t ns;               /* time spent on the summary so far */
} spi_finalize_summary;

/* Whether the table is printed: not quiet, SCOPE_PROFILER_SUMMARY not "0". */
bool spi_finalize_summary_wanted(bool quiet);

/* Fold a trace session's calls into this rank's paths (nothing for an
 * aggregate session or when !wanted). Failures are kept in s->status and
 * make the table flat; they never fail the write. */
void spi_finalize_summary_start(spi_finalize_summary *s, spi_session *session, uint32_t rank,
                                bool wanted);

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
