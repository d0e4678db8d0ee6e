/*
 * run_paths.h - a stopped trace session's calls folded into call paths
 * (run_paths.c): what the end-of-run summary prints, in memory that grows
 * with the number of distinct paths, never with the number of calls.
 * Internal to the record module (used by the lifecycle).
 */
#ifndef SPI_RUN_PATHS_H
#define SPI_RUN_PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "record/recorder.h"

/* The call paths of every thread of `session` (a trace, its times already
 * in ns: spi_recorder_convert_ticks), tagged with `rank`, parents before
 * children, regions numbered as spi_run_collect numbers the profile's
 * names (the regions with calls, in registration order), threads pooled
 * (thread -1). The
 * session is read, not consumed: spi_run_collect may follow. *paths (free
 * with spi_free) and *count; SP_OK, SP_ERR_OUT_OF_MEMORY or SP_ERR_OUTPUT
 * (the spill file cannot be read back): then *paths is NULL. Not
 * thread-safe (one finalize). */
int spi_run_summary_paths(spi_session *session, uint32_t rank, spi_call_path **paths,
                          size_t *count);

#endif /* SPI_RUN_PATHS_H */
