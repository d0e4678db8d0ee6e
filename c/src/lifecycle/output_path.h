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

#include <stdbool.h>

/* Whether the path pattern (as spi_output_path chooses it) names the rank
 * or the process (%r, %p): then every process has its own path anyway. */
bool spi_output_path_per_process(const char *argument);

/* The launcher's rank and size of this process (SLURM_PROCID/SLURM_NTASKS,
 * OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, PMI_RANK/PMI_SIZE,
 * PMIX_RANK/PMIX_SIZE); false when no launcher says so. */
bool spi_launcher_rank(int *rank, int *size);

/* `path` with ".rank<N>" before its extension ("run.h5" -> "run.rank3.h5"),
 * as a new string, or NULL when memory ran out: one file per process when
 * several processes of one launch would otherwise write the same path. */
char *spi_output_path_for_rank(const char *path, int rank);

#include "util/error.h"

/* Whether the directory that `path` goes into exists and this process may
 * create files in it (the writer's temporary sibling, then the rename):
 * SP_OK, or SP_ERR_OUTPUT with err naming the path and the directory.
 * sp_setup asks it (on rank 0, which writes), so a run whose profile could
 * never be written stops before it starts instead of at finalize. */
int spi_output_dir_check(const char *path, spi_error *err);

#endif /* SPI_OUTPUT_PATH_H */
