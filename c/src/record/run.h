/*
 * run.h - turn a stopped recording session into one rank's profile.
 *
 * Collects every thread's events into per-region rows, assigns call ids
 * unique per rank, resolves parents, computes exclusive totals from the
 * recorded call tree (once, here) and the summary statistics of each row.
 */
#ifndef SPI_RUN_H
#define SPI_RUN_H

#include <stdint.h>

#include "profile/profile.h"
#include "record/recorder.h"
#include "record/run_paths.h"

typedef struct spi_run_report {
    uint64_t open_calls;      /* still open at finalize, dropped */
    uint64_t dropped_events;  /* lost to the buffer limit or memory */
    int recording_threads;    /* threads with at least one call */
    char open_regions[80];    /* the first open regions' names, ", "-separated */
} spi_run_report;

/* Fill `profile` (zeroed by the caller) with rank `rank` of the session.
 * Metadata is left to the caller. Prints one line per region still open.
 * paths: NULL, or for a trace the summary's call paths folded in the same
 * walk (run_paths.h: a failure of the fold is paths->status only, never
 * the collect's); an aggregate session leaves it empty with SP_OK (its
 * paths are the profile's own). Returns SP_OK or SP_ERR_OUT_OF_MEMORY
 * (profile then freed), or for a spilled session SP_ERR_OUTPUT. */
int spi_run_collect(spi_session *session, uint32_t rank, spi_profile *profile,
                    spi_run_report *report, spi_run_paths *paths);

/* The aggregate-mode part of spi_run_collect (run_aggregate.c): call paths
 * and one aggregate row per region. report->recording_threads is added to;
 * the caller reports open calls. SP_OK or SP_ERR_OUT_OF_MEMORY (the caller
 * frees the profile). */
int spi_run_collect_aggregate(const spi_session *session, uint32_t rank, spi_profile *profile,
                              spi_run_report *report);

/* The bounded-trace part of spi_run_collect (run_stream.c), used when
 * threads wrote chunks to the session's spill file: the rows get their
 * counts, exclusive totals and names, and profile->source delivers their
 * calls in order, slice by slice, in bounded memory; the same calls, ids,
 * parents, order and statistics the in-memory path gives. Consumes the
 * session's events (memory chunks are released as they are read) and takes
 * over its spill file. SP_OK, SP_ERR_OUT_OF_MEMORY or SP_ERR_OUTPUT (the
 * spill file cannot be read or extended); the caller frees the profile.
 * paths as for spi_run_collect. The pass starts at most two helper threads
 * of its own (spilled chunks read ahead, runs sorted: event_cursor.h,
 * run_stream.c), joined before it returns; without them (no thread or
 * memory for one) the same work runs on the caller, with the same result. */
int spi_run_collect_stream(spi_session *session, uint32_t rank, spi_profile *profile,
                           spi_run_report *report, spi_run_paths *paths);

/* Report every call still open at finalize (one line each, up to the
 * diagnostics limit) and add the threads' dropped calls to `report`. */
void spi_run_report_open_calls(const spi_session *session, spi_run_report *report);

#endif /* SPI_RUN_H */
