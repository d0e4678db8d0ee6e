/*
 * output_path.h - where sp_finalize writes: the precedence of the sources
 * of the path and the %-patterns that let one batch script name the files
 * of many runs.
 */
#ifndef SPI_OUTPUT_PATH_H
#define SPI_OUTPUT_PATH_H

#include <stdint.h>

/* The path to write, expanded, as a new string (spi_free), or NULL when
 * memory ran out. `argument` is sp_options.file_path (NULL: none);
 * `rank` and `job_size` come from the job back end. Precedence:
 * $SCOPE_PROFILER_FILE (non-empty) overrides the argument, which overrides
 * "profiling_data.h5". Then %r (rank), %j (batch job id), %p (process id)
 * and %% (a '%') are expanded; any other '%' stays as it is. */
char *spi_output_path(const char *argument, uint32_t rank, uint32_t job_size);

#endif /* SPI_OUTPUT_PATH_H */
