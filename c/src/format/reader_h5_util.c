/*
 * reader_h5_util.c - defensive HDF5 access (see reader_h5_util.h).
 *
 * Strings come in two physical forms (FORMAT.md 1.11): vlen from the serial
 * writer, fixed-length null-padded from the MPI parallel writer. Both are
 * read into the same owned C strings so nothing above this file knows the
 * difference. Fixed-length buffers are sized from the file's element size
 * times the element count, checked for overflow first.
 */
#include "format/reader_h5_util.h"
#include "format/h5_chunk_stream.h"

#include <stdio.h>
#include <string.h>

#include "util/alloc.h"

/* Large enough for any "group/name" path the format uses. */
#define SPI_H5R_PATH_BYTES 512

static bool is_group(hid_t loc, const char *name) {
#if H5_VERSION_GE(1, 12, 0)
    H5O_info2_t info;
    if (H5Oget_info_by_name3(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
#else
    H5O_info_t info;
    if (H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return false;
#endif
    return info.type == H5O_TYPE_GROUP;
}

int spi_h5r_exists(hid_t loc, const char *name) {
    char partial[SPI_H5R_PATH_BYTES];
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof partial) return 0;
    memcpy(partial, name, len + 1);
    /* H5Lexists fails (rather than answering "no") when an intermediate
     * group is missing, so each prefix is checked in turn. */
    for (size_t i = 1; i <= len; i++) {
        if (partial[i] != '/' && partial[i] != '\0') continue;
        char saved = partial[i];
        partial[i] = '\0';
        htri_t exists = H5Lexists(loc, partial, H5P_DEFAULT);
        if (exists <= 0) return 0;
        if (saved != '\0' && !is_group(loc, partial)) return 0;
        partial[i] = saved;
    }
    return 1;
}

typedef struct last_error_target {
    char *buf;
    size_t bytes;
} last_error_target;

static herr_t keep_innermost(unsigned n, const H5E_error2_t *entry, void *data) {
    last_error_target *target = data;
    /* Walking downward, entry 0 is the API call and the last one the root
     * cause ("truncated file", "bad object header"): keep overwriting. */
    (void)n;
    if (entry && entry->desc) snprintf(target->buf, target->bytes, "%s", entry->desc);
    return 0;
}

void spi_h5r_last_error(char *buf, size_t buf_bytes) {
    if (buf_bytes == 0) return;
    buf[0] = '\0';
    last_error_target target = {buf, buf_bytes};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, keep_innermost, &target);
}

int spi_h5r_open_column(const spi_h5r *h, hid_t loc, const char *name, hid_t *dset,
                        hsize_t *len) {
    *dset = -1;
    if (!spi_h5r_exists(loc, name))
        return spi_error_set(h->err, SP_ERR_NOT_A_PROFILE,
                             "%s is not a scope-profiler profile: dataset %s is missing", h->path,
                             name);
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT,
                             "%s: cannot open dataset %s. The file is truncated or damaged.",
                             h->path, name);
    hid_t space = H5Dget_space(d);
    int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t dims[H5S_MAX_RANK];
    if (ndims == 1) H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0) H5Sclose(space);
    if (ndims != 1) {
        H5Dclose(d);
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: dataset %s must be one-dimensional",
                             h->path, name);
    }
    if (h->file_bytes > 0 && dims[0] / SPI_H5R_MAX_ELEMENTS_PER_BYTE > h->file_bytes) {
        H5Dclose(d);
        return spi_error_set(h->err, SP_ERR_CORRUPT,
                             "%s: dataset %s claims %llu elements, more than a file of %llu "
                             "bytes can hold. The file is truncated or damaged.",
                             h->path, name, (unsigned long long)dims[0],
                             (unsigned long long)h->file_bytes);
    }
    /* Storage actually written must be able to hold the claim: a dataset
     * whose chunks were never written reads as fill values, and a forged
     * length over unwritten storage would make every reader (and merge)
     * grind through billions of them. Compression is bounded as above. */
    hsize_t stored = H5Dget_storage_size(d);
    if (h->file_bytes > 0 && dims[0] > 0 && stored / 8 < dims[0] / SPI_H5R_MAX_ELEMENTS_PER_BYTE) {
        H5Dclose(d);
        return spi_error_set(h->err, SP_ERR_CORRUPT,
                             "%s: dataset %s claims %llu elements but stores only %llu bytes. "
                             "The file is truncated or damaged.",
                             h->path, name, (unsigned long long)dims[0],
                             (unsigned long long)stored);
    }
    *dset = d;
    *len = dims[0];
    return SP_OK;
}

bool spi_h5r_sane_scalar_type(hid_t type, H5T_class_t want) {
    if (type < 0 || H5Tget_class(type) != want) return false;
    size_t size = H5Tget_size(type);
    /* Integers of 1-8 bytes, floats of 4 or 8: anything else is a damaged
     * datatype message, and HDF5 would size its conversion buffers by it. */
    if (want == H5T_INTEGER) return size >= 1 && size <= 8;
    if (want == H5T_FLOAT) return size == 4 || size == 8;
    return size >= 1;
}

static int check_class(const spi_h5r *h, hid_t dset, H5T_class_t want, const char *name) {
    hid_t type = H5Dget_type(dset);
    bool ok = spi_h5r_sane_scalar_type(type, want);
    if (type >= 0) H5Tclose(type);
    if (!ok)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: dataset %s has the wrong element type",
                             h->path, name);
    return SP_OK;
}

/* HDF5 clamps a value that does not fit the memory type (a stored -1 read
 * as unsigned becomes 0, a uint64 above INT64_MAX read as int64 becomes
 * INT64_MAX) and says nothing. Every numeric read goes through a transfer
 * list whose conversion callback aborts the read instead, so a negative
 * count or id is refused rather than read as 0 (docs/FORMAT.md 3.4). */
static H5T_conv_ret_t refuse_out_of_range(H5T_conv_except_t kind, hid_t src, hid_t dst,
                                          void *src_buf, void *dst_buf, void *user) {
    (void)src;
    (void)dst;
    (void)src_buf;
    (void)dst_buf;
    if (kind == H5T_CONV_EXCEPT_RANGE_HI || kind == H5T_CONV_EXCEPT_RANGE_LOW ||
        kind == H5T_CONV_EXCEPT_TRUNCATE || kind == H5T_CONV_EXCEPT_PRECISION ||
        kind == H5T_CONV_EXCEPT_NAN || kind == H5T_CONV_EXCEPT_PINF ||
        kind == H5T_CONV_EXCEPT_NINF) {
        bool *flag = *(bool **)user;
        if (flag) *flag = true;
        return H5T_CONV_ABORT;
    }
    return H5T_CONV_UNHANDLED;
}

/* One transfer list for the whole process: creating a property list costs
 * more than reading a small slice (a file of 10^5 ranks read on demand
 * spent a third of its time in H5Pcreate). Its callback reports through
 * strict_flag, which each caller points at its own flag just before its
 * read; that is safe because every reader holds the readers' lock
 * (reader_lock.h) from here to its H5Dread. */
static hid_t strict_dxpl = -1;
static bool *strict_flag = NULL;

hid_t spi_h5r_strict_dxpl(bool *out_of_range) {
    if (strict_dxpl < 0 || H5Iis_valid(strict_dxpl) <= 0) { /* H5close() drops every id */
        strict_dxpl = H5Pcreate(H5P_DATASET_XFER);
        if (strict_dxpl >= 0 &&
            H5Pset_type_conv_cb(strict_dxpl, refuse_out_of_range, &strict_flag) < 0) {
            H5Pclose(strict_dxpl);
            strict_dxpl = -1;
        }
        if (strict_dxpl < 0) return -1;
    }
    /* The caller's H5Pclose takes back this reference; ours stays. */
    if (H5Iinc_ref(strict_dxpl) < 0) return -1;
    strict_flag = out_of_range;
    return strict_dxpl;
}

int spi_h5r_open_event_column(const spi_h5r *h, hid_t events, const char *name, uint64_t needed,
                              hid_t *dset) {
    hsize_t len;
    int status = spi_h5r_open_column(h, events, name, dset, &len);
    if (status != SP_OK) return status;
    hid_t type = H5Dget_type(*dset);
    if (!spi_h5r_sane_scalar_type(type, H5T_INTEGER))
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s: dataset events/%s has the wrong element type", h->path, name);
    if (type >= 0) H5Tclose(type);
    if (status == SP_OK && len < needed)
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s claims %llu recorded events but its event column events/%s "
                               "holds %llu. The file is truncated or damaged.",
                               h->path, (unsigned long long)needed, name, (unsigned long long)len);
    if (status != SP_OK) {
        H5Dclose(*dset);
        *dset = -1;
    }
    return status;
}

static int length_mismatch(const spi_h5r *h, const char *name, hsize_t len, hsize_t expected) {
    return spi_error_set(h->err, SP_ERR_CORRUPT,
                         "%s: dataset %s has %llu rows, expected %llu. The file is truncated or "
                         "damaged.",
                         h->path, name, (unsigned long long)len, (unsigned long long)expected);
}

static int read_failed(const spi_h5r *h, const char *name) {
    return spi_error_set(h->err, SP_ERR_CORRUPT,
                         "%s: cannot read dataset %s. The file is truncated or damaged.", h->path,
                         name);
}

static int out_of_range(const spi_h5r *h, const char *name) {
    return spi_error_set(h->err, SP_ERR_CORRUPT,
                         "%s: dataset %s holds a value out of range for it (a negative count, "
                         "offset or id, or a value beyond int64). The file is damaged.",
                         h->path, name);
}

static int out_of_memory(const spi_h5r *h) {
    return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
}

/* A whole 1-D column of type class `type_class`, converted by HDF5 to the
 * 8-byte memory type `memory_type`. */
static int read_numeric_column(const spi_h5r *h, hid_t loc, const char *name,
                               H5T_class_t type_class, hid_t memory_type, hsize_t expected,
                               void **values, hsize_t *len) {
    *values = NULL;
    hid_t dset;
    hsize_t n = 0;
    int status = spi_h5r_open_column(h, loc, name, &dset, &n);
    if (status != SP_OK) return status;
    status = check_class(h, dset, type_class, name);
    if (status == SP_OK && expected != SPI_H5R_ANY_LENGTH && n != expected)
        status = length_mismatch(h, name, n, expected);
    void *buf = NULL;
    if (status == SP_OK) {
        buf = spi_calloc((size_t)n, 8);
        if (!buf || n > SIZE_MAX / 8) status = out_of_memory(h);
    }
    bool range = false;
    hid_t dxpl = status == SP_OK ? spi_h5r_strict_dxpl(&range) : -1;
    if (status == SP_OK && n > 0 &&
        (dxpl < 0 || H5Dread(dset, memory_type, H5S_ALL, H5S_ALL, dxpl, buf) < 0))
        status = range ? out_of_range(h, name) : read_failed(h, name);
    if (dxpl >= 0) H5Pclose(dxpl);
    H5Dclose(dset);
    if (status != SP_OK) {
        spi_free(buf);
        return status;
    }
    *values = buf;
    if (len) *len = n;
    return SP_OK;
}

int spi_h5r_read_int_column(const spi_h5r *h, hid_t loc, const char *name, bool is_unsigned,
                            hsize_t expected, void **values, hsize_t *len) {
    return read_numeric_column(h, loc, name, H5T_INTEGER,
                               is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64, expected,
                               values, len);
}

int spi_h5r_read_float_column(const spi_h5r *h, hid_t loc, const char *name, hsize_t expected,
                              double **values, hsize_t *len) {
    return read_numeric_column(h, loc, name, H5T_FLOAT, H5T_NATIVE_DOUBLE, expected,
                               (void **)values, len);
}

int spi_h5r_read_int_slice(const spi_h5r *h, hid_t dset, const char *name, hsize_t offset,
                           hsize_t count, int64_t *buf) {
    if (count == 0) return SP_OK;
    hid_t file_space = H5Dget_space(dset);
    hid_t mem_space = H5Screate_simple(1, &count, NULL);
    bool range = false;
    hid_t dxpl = spi_h5r_strict_dxpl(&range);
    int status = SP_OK;
    if (file_space < 0 || mem_space < 0 || dxpl < 0 ||
        H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &offset, NULL, &count, NULL) < 0 ||
        H5Dread(dset, H5T_NATIVE_INT64, mem_space, file_space, dxpl, buf) < 0)
        status = range ? out_of_range(h, name) : read_failed(h, name);
    if (dxpl >= 0) H5Pclose(dxpl);
    if (mem_space >= 0) H5Sclose(mem_space);
    if (file_space >= 0) H5Sclose(file_space);
    return status;
}

int spi_h5r_read_int_slice_streamed(const spi_h5r *h, struct spi_chunk_stream *stream, hid_t dset,
                                    const char *name, hsize_t offset, hsize_t count,
                                    uint64_t ahead_end, int64_t *buf) {
    bool done = false;
    if (stream && spi_chunk_stream_read(stream, offset, count, ahead_end, buf, &done) != SP_OK)
        return out_of_memory(h);
    if (done) return SP_OK;
    return spi_h5r_read_int_slice(h, dset, name, offset, count, buf);
}

void spi_h5r_free_strings(char **values, hsize_t len) {
    if (!values) return;
    for (hsize_t i = 0; i < len; i++) spi_free(values[i]);
    spi_free(values);
}

/* Every vlen string HDF5 allocates while reading a dataset, so that all of
 * them are released even when a conversion fails halfway on a damaged file
 * (HDF5 1.10 then leaves strings in its own buffers, out of our reach). */
typedef struct vlen_pool {
    void **blocks;
    size_t count;
    size_t capacity;
    /* vlen strings live in the file's global heap, which no filter
     * compresses: together they cannot be longer than the file (plus one
     * terminator each). A damaged heap claiming more fails the read
     * before anything of that size is allocated. 0 = no bound. */
    uint64_t budget;
    uint64_t used;
} vlen_pool;

static void *pool_alloc(size_t size, void *info) {
    vlen_pool *pool = info;
    if (pool->budget && (size > pool->budget || pool->used > pool->budget - size)) return NULL;
    pool->used += size;
    if (pool->count == pool->capacity) {
        size_t capacity = pool->capacity ? pool->capacity * 2 : 64;
        void **grown = spi_reallocarray(pool->blocks, capacity, sizeof *grown);
        if (!grown) return NULL;
        pool->blocks = grown;
        pool->capacity = capacity;
    }
    void *block = spi_malloc(size);
    if (block) pool->blocks[pool->count++] = block;
    return block;
}

/* Frees happen all at once in pool_release; HDF5's own frees are ignored
 * so that no block is released twice. */
static void pool_free(void *block, void *info) {
    (void)block;
    (void)info;
}

static void pool_release(vlen_pool *pool) {
    for (size_t i = 0; i < pool->count; i++) spi_free(pool->blocks[i]);
    spi_free(pool->blocks);
    *pool = (vlen_pool){0};
}

int spi_h5r_read_strings(const spi_h5r *h, hid_t obj, bool is_attr, hid_t type, size_t count,
                         const char *name, char **values) {
    if (count == 0) return SP_OK;
    if (H5Tget_class(type) != H5T_STRING)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: %s is not a string", h->path, name);
    int status = SP_OK;
    htri_t variable = H5Tis_variable_str(type);
    hid_t mem = H5Tcopy(H5T_C_S1);
    if (mem < 0 || variable < 0) {
        if (mem >= 0) H5Tclose(mem);
        return read_failed(h, name);
    }
    H5Tset_cset(mem, H5Tget_cset(type));
    if (variable) {
        char **raw = spi_calloc(count, sizeof *raw);
        if (!raw) status = out_of_memory(h);
        if (status == SP_OK && H5Tset_size(mem, H5T_VARIABLE) < 0) status = read_failed(h, name);
        vlen_pool pool = {0};
        if (h->file_bytes) pool.budget = (uint64_t)h->file_bytes + 2 * (uint64_t)count + 64;
        hid_t dxpl = is_attr ? -1 : H5Pcreate(H5P_DATASET_XFER);
        if (status == SP_OK && !is_attr &&
            (dxpl < 0 || H5Pset_vlen_mem_manager(dxpl, pool_alloc, &pool, pool_free, &pool) < 0))
            status = read_failed(h, name);
        if (status == SP_OK) {
            herr_t rc = is_attr ? H5Aread(obj, mem, raw)
                                : H5Dread(obj, mem, H5S_ALL, H5S_ALL, dxpl, raw);
            if (rc < 0) status = read_failed(h, name);
        }
        for (size_t i = 0; status == SP_OK && i < count; i++) {
            values[i] = spi_strdup(raw[i] ? raw[i] : "");
            if (!values[i]) status = out_of_memory(h);
        }
        if (raw && is_attr) {
            /* H5Aread takes no transfer list: its strings come from the
             * library's allocator and go back to it. */
            for (size_t i = 0; i < count; i++) H5free_memory(raw[i]);
        }
        if (dxpl >= 0) H5Pclose(dxpl);
        pool_release(&pool);
        spi_free(raw);
    } else {
        size_t width = H5Tget_size(type);
        H5T_str_t pad = H5Tget_strpad(type);
        char *raw = NULL;
        if (width == 0 || count > SIZE_MAX / width) status = read_failed(h, name);
        /* Fixed-length attribute data sits uncompressed in an object header,
         * so it cannot exceed the file; datasets may be compressed (the
         * per-byte bound of open_column applies to them). */
        else if (is_attr && h->file_bytes && (uint64_t)count * width > h->file_bytes)
            status = read_failed(h, name);
        else if (!is_attr && h->file_bytes &&
                 (uint64_t)count * width / SPI_H5R_MAX_ELEMENTS_PER_BYTE > h->file_bytes)
            status = read_failed(h, name);
        if (status == SP_OK && (raw = spi_malloc(count * width)) == NULL) status = out_of_memory(h);
        if (status == SP_OK && (H5Tset_size(mem, width) < 0 || H5Tset_strpad(mem, pad) < 0))
            status = read_failed(h, name);
        if (status == SP_OK) {
            herr_t rc = is_attr ? H5Aread(obj, mem, raw)
                                : H5Dread(obj, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw);
            if (rc < 0) status = read_failed(h, name);
        }
        for (size_t i = 0; status == SP_OK && i < count; i++) {
            const char *item = raw + i * width;
            size_t len = strnlen(item, width);
            if (pad == H5T_STR_SPACEPAD)
                while (len > 0 && item[len - 1] == ' ') len--;
            values[i] = spi_strndup(item, len);
            if (!values[i]) status = out_of_memory(h);
        }
        spi_free(raw);
    }
    H5Tclose(mem);
    return status;
}

int spi_h5r_read_string_column(const spi_h5r *h, hid_t loc, const char *name,
                               hsize_t expected, char ***values, hsize_t *len) {
    *values = NULL;
    hid_t dset;
    hsize_t n = 0;
    int status = spi_h5r_open_column(h, loc, name, &dset, &n);
    if (status != SP_OK) return status;
    status = check_class(h, dset, H5T_STRING, name);
    if (status == SP_OK && expected != SPI_H5R_ANY_LENGTH && n != expected)
        status = length_mismatch(h, name, n, expected);
    char **strings = NULL;
    if (status == SP_OK && (n > SIZE_MAX / sizeof *strings ||
                            !(strings = spi_calloc((size_t)n, sizeof *strings))))
        status = out_of_memory(h);
    if (status == SP_OK) {
        hid_t type = H5Dget_type(dset);
        if (type < 0) status = read_failed(h, name);
        else {
            status = spi_h5r_read_strings(h, dset, false, type, (size_t)n, name, strings);
            H5Tclose(type);
        }
    }
    H5Dclose(dset);
    if (status != SP_OK) {
        spi_h5r_free_strings(strings, n);
        return status;
    }
    *values = strings;
    if (len) *len = n;
    return SP_OK;
}

/* Open attribute `name` of obj and the number of its elements (1 for a
 * scalar). SP_OK with *attr < 0 when it does not exist. */
static int open_attr(const spi_h5r *h, hid_t obj, const char *name, hid_t *attr,
                     hssize_t *elements, int *ndims) {
    *attr = -1;
    htri_t exists = H5Aexists(obj, name);
    if (exists < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read attribute %s", h->path,
                             name);
    if (!exists) return SP_OK;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t space = a >= 0 ? H5Aget_space(a) : -1;
    *elements = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    *ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    if (space >= 0) H5Sclose(space);
    if (a < 0 || *elements < 0 || *ndims < 0 ||
        (h->file_bytes > 0 &&
         (hsize_t)*elements / SPI_H5R_MAX_ELEMENTS_PER_BYTE > h->file_bytes)) {
        if (a >= 0) H5Aclose(a);
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read attribute %s", h->path,
                             name);
    }
    *attr = a;
    return SP_OK;
}

int spi_h5r_attr_string(const spi_h5r *h, hid_t obj, const char *name, char **value,
                        bool *present) {
    *present = false;
    *value = NULL;
    hid_t attr;
    hssize_t elements = 0;
    int ndims = 0;
    int status = open_attr(h, obj, name, &attr, &elements, &ndims);
    if (status != SP_OK || attr < 0) return status;
    hid_t type = H5Aget_type(attr);
    if (type < 0 || H5Tget_class(type) != H5T_STRING || elements != 1)
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: attribute %s must be a string",
                               h->path, name);
    else
        status = spi_h5r_read_strings(h, attr, true, type, 1, name, value);
    if (type >= 0) H5Tclose(type);
    H5Aclose(attr);
    if (status == SP_OK) *present = true;
    return status;
}

int spi_h5r_attr_int(const spi_h5r *h, hid_t obj, const char *name, int64_t *value,
                     bool *present) {
    *present = false;
    hid_t attr;
    hssize_t elements = 0;
    int ndims = 0;
    int status = open_attr(h, obj, name, &attr, &elements, &ndims);
    if (status != SP_OK || attr < 0) return status;
    hid_t type = H5Aget_type(attr);
    int64_t v = 0;
    if (!spi_h5r_sane_scalar_type(type, H5T_INTEGER) || elements != 1)
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: attribute %s must be an integer",
                               h->path, name);
    else if (H5Aread(attr, H5T_NATIVE_INT64, &v) < 0)
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read attribute %s", h->path,
                               name);
    if (type >= 0) H5Tclose(type);
    H5Aclose(attr);
    if (status == SP_OK) {
        *value = v;
        *present = true;
    }
    return status;
}

int spi_h5r_attr_strings(const spi_h5r *h, hid_t obj, const char *name, char ***values,
                         size_t *count, bool *present) {
    *present = false;
    *values = NULL;
    *count = 0;
    hid_t attr;
    hssize_t elements = 0;
    int ndims = 0;
    int status = open_attr(h, obj, name, &attr, &elements, &ndims);
    if (status != SP_OK || attr < 0) return status;
    hid_t type = H5Aget_type(attr);
    char **items = NULL;
    if (type < 0 || H5Tget_class(type) != H5T_STRING || ndims > 1)
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s: attribute %s must be a list of strings", h->path, name);
    else if (!(items = spi_calloc((size_t)elements, sizeof *items)))
        status = out_of_memory(h);
    else
        status = spi_h5r_read_strings(h, attr, true, type, (size_t)elements, name, items);
    if (type >= 0) H5Tclose(type);
    H5Aclose(attr);
    if (status != SP_OK) {
        spi_h5r_free_strings(items, (hsize_t)elements);
        return status;
    }
    *values = items;
    *count = (size_t)elements;
    *present = true;
    return SP_OK;
}

int spi_h5r_list(const spi_h5r *h, hid_t group, char ***names, hsize_t *count) {
    *names = NULL;
    *count = 0;
    H5G_info_t info;
    if (H5Gget_info(group, &info) < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot list a group", h->path);
    char **list = spi_calloc((size_t)info.nlinks, sizeof *list);
    if (!list) return out_of_memory(h);
    int status = SP_OK;
    for (hsize_t i = 0; i < info.nlinks && status == SP_OK; i++) {
        ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, NULL, 0,
                                         H5P_DEFAULT);
        if (len < 0) {
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot list a group", h->path);
            break;
        }
        list[i] = spi_malloc((size_t)len + 1);
        if (!list[i]) {
            status = out_of_memory(h);
            break;
        }
        if (H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, list[i],
                               (size_t)len + 1, H5P_DEFAULT) < 0)
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot list a group", h->path);
    }
    if (status != SP_OK) {
        spi_h5r_free_strings(list, info.nlinks);
        return status;
    }
    *names = list;
    *count = info.nlinks;
    return SP_OK;
}
