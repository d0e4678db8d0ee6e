/*
 * reader_h5_extra.c - the parts of an HDF5 profile around the timing data:
 * /metadata attributes, the thread table and the rank<N> groups.
 *
 * All of it is optional (FORMAT.md 1.2, 1.6, 1.7). Metadata takes every
 * attribute kind h5py writes (str, any integer width, float, its bool enum,
 * 1-D string arrays); an attribute of any other kind is skipped rather than
 * refused, since metadata never changes how the timing data is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "profile/profile.h"
#include "format/reader_h5_names.h"
#include "format/reader_h5_util.h"
#include "format/schema.h"

static int oom(const spi_h5r *h) {
    return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
}

/* ---- /metadata ---------------------------------------------------------- */

/* h5py stores a bool as an enum over int8 with members FALSE=0, TRUE=1. */
static bool is_bool_enum(hid_t type) {
    if (H5Tget_class(type) != H5T_ENUM || H5Tget_size(type) != 1) return false;
    return H5Tget_nmembers(type) == 2;
}

static int read_meta_attr(const spi_h5r *h, hid_t group, const char *key, spi_meta *meta) {
    hid_t attr = H5Aopen(group, key, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    hssize_t elements = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    int status = SP_OK;
    if (type < 0 || elements < 0 || ndims < 0 ||
        (h->file_bytes > 0 &&
         (hsize_t)elements / SPI_H5R_MAX_ELEMENTS_PER_BYTE > h->file_bytes)) {
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read metadata attribute %s",
                               h->path, key);
        goto done;
    }
    H5T_class_t cls = H5Tget_class(type);
    if (cls == H5T_STRING && ndims == 0) {
        char *value = NULL;
        status = spi_h5r_read_strings(h, attr, true, type, 1, key, &value);
        if (status == SP_OK && spi_meta_set_str(meta, key, value) != SP_OK) status = oom(h);
        spi_free(value);
    } else if (cls == H5T_STRING && ndims == 1) {
        char **items = spi_calloc((size_t)elements, sizeof *items);
        status = items ? spi_h5r_read_strings(h, attr, true, type, (size_t)elements, key, items)
                       : oom(h);
        if (status == SP_OK &&
            spi_meta_set_str_array(meta, key, (const char *const *)items, (size_t)elements) !=
                SP_OK)
            status = oom(h);
        spi_h5r_free_strings(items, (hsize_t)elements);
    } else if (elements != 1) {
        /* Numeric arrays are not part of the format: skipped. */
    } else if (cls == H5T_INTEGER && spi_h5r_sane_scalar_type(type, H5T_INTEGER)) {
        int64_t value = 0;
        if (H5Aread(attr, H5T_NATIVE_INT64, &value) < 0)
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read metadata attribute %s",
                                   h->path, key);
        else if (spi_meta_set_i64(meta, key, value) != SP_OK)
            status = oom(h);
    } else if (cls == H5T_FLOAT && spi_h5r_sane_scalar_type(type, H5T_FLOAT)) {
        double value = 0;
        if (H5Aread(attr, H5T_NATIVE_DOUBLE, &value) < 0)
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read metadata attribute %s",
                                   h->path, key);
        else if (spi_meta_set_f64(meta, key, value) != SP_OK)
            status = oom(h);
    } else if (is_bool_enum(type)) {
        signed char value = 0;
        if (H5Aread(attr, type, &value) < 0)
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read metadata attribute %s",
                                   h->path, key);
        else if (spi_meta_set_bool(meta, key, value != 0) != SP_OK)
            status = oom(h);
    }
done:
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
    return status;
}

/* One pass over /metadata's attributes (read_meta_entry per name). */
typedef struct meta_walk {
    const spi_h5r *h;
    spi_profile *profile;
    int status;
} meta_walk;

static herr_t read_meta_entry(hid_t group, const char *key, const H5A_info_t *info, void *data) {
    (void)info;
    meta_walk *walk = data;
    walk->status = read_meta_attr(walk->h, group, key, &walk->profile->metadata);
    return walk->status == SP_OK ? 0 : 1; /* non-zero stops the walk */
}

int spi_h5r_read_metadata(const spi_h5r *h, spi_profile *profile) {
    if (!spi_h5r_exists(h->file, SPI_GROUP_METADATA)) return SP_OK;
    hid_t group = H5Gopen2(h->file, SPI_GROUP_METADATA, H5P_DEFAULT);
    if (group < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open group %s", h->path,
                             SPI_GROUP_METADATA);
    /* Name order: h5py tracks no creation order, and name order is what it
     * iterates, so both readers list keys alike. One iteration, not a
     * lookup by index per key: HDF5 builds the name-sorted list of a
     * group without a name index on every by-index call, which made
     * 20,000 keys cost 20,000 sorts (issue 29 item 9). */
    meta_walk walk = {.h = h, .profile = profile, .status = SP_OK};
    hsize_t next = 0;
    herr_t rc = H5Aiterate2(group, H5_INDEX_NAME, H5_ITER_INC, &next, read_meta_entry, &walk);
    int status = walk.status;
    if (rc < 0 && status == SP_OK)
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot list the metadata", h->path);
    H5Gclose(group);
    return status;
}

/* ---- /thread_table ------------------------------------------------------ */

int spi_h5r_read_threads(const spi_h5r *h, spi_profile *profile) {
    if (!spi_h5r_exists(h->file, SPI_GROUP_THREAD_TABLE)) return SP_OK;
    hid_t group = H5Gopen2(h->file, SPI_GROUP_THREAD_TABLE, H5P_DEFAULT);
    if (group < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open group %s", h->path,
                             SPI_GROUP_THREAD_TABLE);
    int64_t *ints[SPI_THR_COUNT] = {0};
    char **names = NULL;
    hsize_t rows = SPI_H5R_ANY_LENGTH;
    int status = SP_OK;
    /* Any column may be missing; the present ones must agree in length. */
    for (int col = 0; col < SPI_THR_COUNT && status == SP_OK; col++) {
        const spi_column *column = &spi_thread_columns[col];
        if (!spi_h5r_exists(group, column->name)) continue;
        hsize_t len = 0;
        if (column->elem == SPI_ELEM_STR)
            status = spi_h5r_read_string_column(h, group, column->name, rows, &names, &len);
        else
            status = spi_h5r_read_int_column(h, group, column->name, false, rows,
                                             (void **)&ints[col], &len);
        if (status == SP_OK) rows = len;
    }
    if (status == SP_OK && rows != SPI_H5R_ANY_LENGTH && rows > 0) {
        profile->threads = spi_calloc((size_t)rows, sizeof *profile->threads);
        if (!profile->threads) status = oom(h);
        else profile->thread_count = (size_t)rows;
        for (hsize_t i = 0; status == SP_OK && i < rows; i++) {
            spi_thread_row *t = &profile->threads[i];
#define COL(c) (ints[c] ? ints[c][i] : spi_thread_columns[c].missing)
            int64_t rank = COL(SPI_THR_RANKS);
            t->rank = rank < 0 || rank > UINT32_MAX ? 0 : (uint32_t)rank;
            t->index = COL(SPI_THR_INDEX);
            t->ident = COL(SPI_THR_IDENT);
            t->native_id = COL(SPI_THR_NATIVE_ID);
            t->daemon = COL(SPI_THR_DAEMON) != 0;
            t->start_ns = COL(SPI_THR_START_NS);
            t->end_ns = COL(SPI_THR_END_NS);
            t->cpu_ns = COL(SPI_THR_CPU_NS);
#undef COL
            if (names) {
                t->name = names[i];
                names[i] = NULL;
            } else if (!(t->name = spi_strdup(""))) {
                status = oom(h);
            }
        }
    }
    for (int col = 0; col < SPI_THR_COUNT; col++) spi_free(ints[col]);
    spi_h5r_free_strings(names, rows == SPI_H5R_ANY_LENGTH ? 0 : rows);
    H5Gclose(group);
    return status;
}

/* ---- rank<N> groups ----------------------------------------------------- */

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : (x > y);
}

int spi_h5r_rank_groups(const spi_h5r *h, uint32_t **ranks, size_t *count) {
    *ranks = NULL;
    *count = 0;
    char **names = NULL;
    hsize_t n = 0;
    int status = spi_h5r_list_names(h, h->file, &names, &n);
    if (status != SP_OK) return status;
    uint32_t *found = spi_calloc((size_t)n, sizeof *found);
    size_t used = 0;
    if (!found) status = oom(h);
    for (hsize_t i = 0; status == SP_OK && i < n; i++) {
        const char *name = names[i];
        if (strncmp(name, "rank", 4) != 0 || name[4] == '\0') continue;
        /* Only "rank" + digits counts (FORMAT.md 4.2): "rank_region_index"
         * must not. */
        uint64_t value = 0;
        bool digits = true;
        for (const char *p = name + 4; *p && digits; p++) {
            digits = *p >= '0' && *p <= '9';
            value = value * 10 + (uint64_t)(*p - '0');
            if (value > UINT32_MAX) digits = false;
        }
        if (!digits) continue;
        found[used++] = (uint32_t)value;
    }
    spi_h5r_free_strings(names, n);
    if (status != SP_OK) {
        spi_free(found);
        return status;
    }
    qsort(found, used, sizeof *found, compare_u32);
    *ranks = found;
    *count = used;
    return SP_OK;
}

static int read_perf_region(const spi_h5r *h, hid_t group, uint32_t rank, const char *region,
                            spi_perf_record *record) {
    *record = (spi_perf_record){.rank = rank};
    record->region = spi_strdup(region);
    if (!record->region) return oom(h);
    bool present = false;
    int status = spi_h5r_attr_int(h, group, "calls", &record->calls, &present);
    size_t name_count = 0;
    if (status == SP_OK)
        status = spi_h5r_attr_strings(h, group, "event_names", &record->event_names, &name_count,
                                      &present);
    record->counter_count = name_count;
    hsize_t value_count = 0;
    if (status == SP_OK && spi_h5r_exists(group, "values"))
        status = spi_h5r_read_int_column(h, group, "values", true, SPI_H5R_ANY_LENGTH,
                                         (void **)&record->values, &value_count);
    if (status == SP_OK && value_count != name_count)
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s: rank%u/perf_events/%s has %zu event names but %llu values",
                               h->path, rank, region, name_count,
                               (unsigned long long)value_count);
    return status;
}

int spi_h5r_read_perf(const spi_h5r *h, spi_profile *profile) {
    uint32_t *ranks = NULL;
    size_t rank_count = 0;
    int status = spi_h5r_rank_groups(h, &ranks, &rank_count);
    for (size_t r = 0; status == SP_OK && r < rank_count; r++) {
        char path[64];
        snprintf(path, sizeof path, "rank%u/perf_events", ranks[r]);
        if (!spi_h5r_exists(h->file, path)) continue;
        hid_t group = H5Gopen2(h->file, path, H5P_DEFAULT);
        char **regions = NULL;
        hsize_t n = 0;
        status = group >= 0 ? spi_h5r_list_names(h, group, &regions, &n)
                            : spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open %s",
                                            h->path, path);
        spi_perf_record *grown = NULL;
        if (status == SP_OK && n > 0) {
            grown = spi_reallocarray(profile->perf, profile->perf_count + (size_t)n,
                                     sizeof *grown);
            if (!grown) status = oom(h);
            else profile->perf = grown;
        }
        for (hsize_t i = 0; status == SP_OK && i < n; i++) {
            hid_t region = H5Gopen2(group, regions[i], H5P_DEFAULT);
            if (region < 0) continue; /* not a group: tolerated */
            spi_perf_record *record = &profile->perf[profile->perf_count++];
            status = read_perf_region(h, region, ranks[r], regions[i], record);
            H5Gclose(region);
        }
        spi_h5r_free_strings(regions, n);
        if (group >= 0) H5Gclose(group);
    }
    spi_free(ranks);
    return status;
}
