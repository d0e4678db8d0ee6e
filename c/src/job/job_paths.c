/*
 * job_paths.c - summary call paths packed with their names (job_paths.h).
 * The whole name table goes along (it is small: one entry per region with
 * calls), so the offsets are computed in one pass.
 */
#include "job/job_paths.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"

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
