/*
 * job_paths.c - summary call paths packed with their names (job_paths.h).
 * The whole name table goes along (it is small: one entry per region with
 * calls), so the offsets are computed in one pass.
 */
#include "job/job_paths.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "profile/path_pool.h"

int spi_job_paths_pack(const spi_call_path *paths, size_t count, const spi_profile *local,
                       spi_call_path **packed, char **names, uint64_t *bytes) {
    *packed = NULL;
    *names = NULL;
    *bytes = 0;
    uint64_t *offsets = spi_calloc(local->name_count + 1, sizeof *offsets);
    if (!offsets) return SP_ERR_OUT_OF_MEMORY;
    uint64_t total = 0;
    for (size_t i = 0; i < local->name_count; i++) {
        offsets[i] = total;
        total += strlen(local->names[i]) + 1;
    }
    if (total > UINT32_MAX) {
        spi_free(offsets);
        return SP_ERR_UNSUPPORTED;
    }
    *names = spi_malloc(total ? total : 1);
    *packed = spi_malloc((count ? count : 1) * sizeof **packed);
    if (!*names || !*packed) {
        spi_free(offsets);
        spi_free(*names);
        spi_free(*packed);
        *names = NULL;
        *packed = NULL;
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < local->name_count; i++)
        memcpy(*names + offsets[i], local->names[i], strlen(local->names[i]) + 1);
    for (size_t i = 0; i < count; i++) {
        (*packed)[i] = paths[i];
        (*packed)[i].region = paths[i].region < local->name_count
                                  ? (uint32_t)offsets[paths[i].region] : 0;
    }
    spi_free(offsets);
    *bytes = total;
    return SP_OK;
}

int spi_job_paths_pool_add(spi_path_pool *pool, uint32_t rank, const spi_call_path *packed,
                           size_t count, const char *names, uint64_t name_bytes,
                           spi_error *err) {
    int status = spi_path_pool_add_rank(pool, rank, packed, count, names, (size_t)name_bytes);
    if (status == SP_ERR_CORRUPT)
        return spi_error_set(err, status,
                             "rank %u's summary call paths arrived damaged (a name or parent "
                             "out of range)", rank);
    if (status != SP_OK)
        return spi_error_set(err, status, "out of memory while pooling the summary's paths");
    return SP_OK;
}

int spi_job_paths_pool_own(const spi_call_path *paths, size_t count, const spi_profile *local,
                           spi_path_pool *pool, spi_error *err) {
    spi_call_path *packed = NULL;
    char *names = NULL;
    uint64_t bytes = 0;
    int status = spi_job_paths_pack(paths, count, local, &packed, &names, &bytes);
    if (status == SP_OK) status = spi_job_paths_pool_add(pool, 0, packed, count, names, bytes, err);
    else if (status == SP_ERR_OUT_OF_MEMORY)
        spi_error_set(err, status, "out of memory while summarising the calls");
    else
        spi_error_set(err, status, "the summary's region names are over 4 GiB");
    spi_free(packed);
    spi_free(names);
    return status;
}
