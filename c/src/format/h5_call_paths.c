/*
 * h5_call_paths.c - rank<N>/call_paths (h5_call_paths.h).
 *
 * The paths of one rank are a few thousand rows at most, so each rank's
 * columns are gathered into plain arrays and written whole, contiguous and
 * uncompressed, with the element types of the layout table.
 */
#include "format/h5_call_paths.h"

#include <stdio.h>
#include <string.h>

#include "format/h5_util.h"
#include "format/schema.h"
#include "util/alloc.h"

/* The column `c` of paths[0..n) into the caller's 8-byte-wide buffer. */
static void gather_column(int c, const spi_call_path *paths, size_t n, void *buffer) {
    int64_t *i64 = buffer;
    uint32_t *u32 = buffer;
    double *f64 = buffer;
    for (size_t i = 0; i < n; i++) {
        const spi_call_path *p = &paths[i];
        switch ((spi_path_col)c) {
        case SPI_PATH_PARENTS: i64[i] = p->parent; break;
        case SPI_PATH_REGION_IDS: u32[i] = p->region; break;
        case SPI_PATH_THREAD_IDS: i64[i] = p->thread; break;
        case SPI_PATH_COUNTS: i64[i] = (int64_t)p->count; break;
        case SPI_PATH_RECURSIONS: i64[i] = (int64_t)p->recursions; break;
        case SPI_PATH_TOTALS: i64[i] = p->total; break;
        case SPI_PATH_MINIMUMS: i64[i] = p->minimum; break;
        case SPI_PATH_MAXIMUMS: i64[i] = p->maximum; break;
        case SPI_PATH_EXCLUSIVES: i64[i] = p->exclusive; break;
        case SPI_PATH_M2: f64[i] = p->m2; break;
        case SPI_PATH_START_MINIMUMS: i64[i] = p->start_minimum; break;
        case SPI_PATH_END_MAXIMUMS: i64[i] = p->end_maximum; break;
        case SPI_PATH_COUNT: break;
        }
    }
}

static int write_rank(hid_t file, const spi_call_path *paths, size_t n, void *buffer) {
    char name[32];
    snprintf(name, sizeof name, "rank%u", paths[0].rank);
    hid_t rank_group = spi_h5_open_or_create_group(file, name);
    hid_t group = rank_group >= 0 ? spi_h5_create_group(rank_group, SPI_GROUP_CALL_PATHS) : -1;
    int status = group >= 0 ? SP_OK : SP_ERR_HDF5;
    for (int c = 0; c < SPI_PATH_COUNT && status == SP_OK; c++) {
        const spi_column *column = &spi_path_columns[c];
        gather_column(c, paths, n, buffer);
        hid_t file_type = spi_elem_file_type(column->elem);
        hid_t memory_type = spi_elem_memory_type(column->elem);
        hsize_t dims[1] = {n};
        status = spi_h5_write_dataset(group, column->name, file_type, memory_type, 1, dims, buffer);
        spi_elem_type_release(column->elem, file_type);
        spi_elem_type_release(column->elem, memory_type);
    }
    if (group >= 0) H5Gclose(group);
    if (rank_group >= 0) H5Gclose(rank_group);
    return status;
}

int spi_h5_write_call_paths(hid_t file, const spi_profile *profile, spi_error *err) {
    if (profile->path_count == 0) return SP_OK;
    /* The widest column element is 8 bytes. */
    void *buffer = spi_malloc(profile->path_count * sizeof(int64_t));
    if (!buffer)
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory writing the call paths");
    spi_h5_silence_state silence;
    spi_h5_silence(&silence);
    int status = SP_OK;
    for (size_t first = 0; first < profile->path_count && status == SP_OK;) {
        size_t end = first;
        while (end < profile->path_count && profile->paths[end].rank == profile->paths[first].rank)
            end++;
        status = write_rank(file, &profile->paths[first], end - first, buffer);
        first = end;
    }
    if (status != SP_OK) {
        char detail[256];
        spi_h5_last_message(detail, sizeof detail);
        status = spi_error_set(err, status, "cannot write the call paths (rank<N>/%s): %s",
                               SPI_GROUP_CALL_PATHS, detail);
    }
    spi_h5_restore(&silence);
    spi_free(buffer);
    return status;
}
