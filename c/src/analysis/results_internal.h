/*
 * results_internal.h - building a public results object from a profile
 * already in memory (sp_finalize_results: the run's results without a
 * round trip through a file).
 */
#ifndef SPI_RESULTS_INTERNAL_H
#define SPI_RESULTS_INTERNAL_H

#include "profile/profile.h"
#include "scope_profiler_results.h"

/* Move *profile (a recorded run: full rows, absolute starts) into a new
 * results object; *profile is left empty whatever the outcome. `path` is
 * what sp_results_path reports (the configured output file). Returns SP_OK
 * or SP_ERR_OUT_OF_MEMORY (*out NULL). */
int spi_results_adopt(spi_profile *profile, const char *path, sp_results **out);

/* The profile inside a results object (read-only), for the library's own
 * views of it (summary_api.c borrows its call store). */
const spi_profile *spi_results_profile(const sp_results *results);

#endif /* SPI_RESULTS_INTERNAL_H */
