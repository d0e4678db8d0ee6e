/*
 * job_paths.h - a rank's summary call paths made self-describing for the
 * trip to rank 0 (job_paths.c): each path's region becomes the offset of
 * its name in one packed block, so rank 0 needs no knowledge of the
 * rank's name table; and rank 0's folding of what arrives into the pool
 * (profile/path_pool.h). Used by job_serial.c and job_mpi_paths.c.
 */
#ifndef SPI_JOB_PATHS_H
#define SPI_JOB_PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "profile/path_pool.h"
#include "profile/profile.h"
#include "util/error.h"

/* Copies `paths` into *packed (count entries, at least one allocated) with
 * each `region` replaced by the byte offset of its name in *names, the
 * names of local->names used by the paths packed NUL-terminated (*bytes
 * long). Free both with spi_free. SP_OK, SP_ERR_UNSUPPORTED (names over
 * 4 GiB) or SP_ERR_OUT_OF_MEMORY (nothing allocated). Pure. */
int spi_job_paths_pack(const spi_call_path *paths, size_t count, const spi_profile *local,
                       spi_call_path **packed, char **names, uint64_t *bytes);

/* Fold one rank's packed paths (as spi_job_paths_pack made them) into
 * `pool`: spi_path_pool_add_rank with err filled on failure, naming the
 * rank for a damaged message. SP_OK, SP_ERR_CORRUPT (pool unchanged) or
 * SP_ERR_OUT_OF_MEMORY (pool unusable). Not thread-safe (one pool). */
int spi_job_paths_pool_add(spi_path_pool *pool, uint32_t rank, const spi_call_path *packed,
                           size_t count, const char *names, uint64_t name_bytes,
                           spi_error *err);

/* This process's own paths (rank 0, or a process alone) packed and folded
 * into `pool` as rank 0. Same results as spi_job_paths_pool_add, and
 * SP_ERR_UNSUPPORTED (names over 4 GiB). */
int spi_job_paths_pool_own(const spi_call_path *paths, size_t count, const spi_profile *local,
                           spi_path_pool *pool, spi_error *err);

#endif /* SPI_JOB_PATHS_H */
