/*
 * job_paths.h - a rank's summary call paths made self-describing for the
 * trip to rank 0 (job_paths.c): each path's region becomes the offset of
 * its name in one packed block, so rank 0 needs no knowledge of the
 * rank's name table. Used by job_serial.c and job_mpi.c.
 */
#ifndef SPI_JOB_PATHS_H
#define SPI_JOB_PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

/* Copies `paths` into *packed (count entries, at least one allocated) with
 * each `region` replaced by the byte offset of its name in *names, the
 * names of local->names used by the paths packed NUL-terminated (*bytes
 * long). Free both with spi_free. SP_OK, SP_ERR_UNSUPPORTED (names over
 * 4 GiB) or SP_ERR_OUT_OF_MEMORY (nothing allocated). Pure. */
int spi_job_paths_pack(const spi_call_path *paths, size_t count, const spi_profile *local,
                       spi_call_path **packed, char **names, uint64_t *bytes);

#endif /* SPI_JOB_PATHS_H */
