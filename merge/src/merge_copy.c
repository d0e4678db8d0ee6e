/*
 * merge_copy.c - objects of an input's rank<N> groups copied into the
 * merged file by value, each after it was checked (merge_aux.c decides
 * which objects go where).
 *
 * H5Ocopy would copy whatever the input holds, unchecked: soft links (a
 * loop stays a loop), a hard link to the root (the whole file again), a
 * dataset claiming 2^40 elements over storage never written, references
 * into the input. So every object is walked here and rebuilt in the output:
 *   - only hard links, to objects linked once (a group reached twice would
 *     be a cycle or a copy of something copied elsewhere), at most
 *     COPY_MAX_DEPTH levels deep; only groups and datasets;
 *   - element types of the classes HDF5 can hold by value (integers and
 *     floats of sane sizes, strings, bitfields, opaque, enums, and
 *     compounds, arrays and variable-length sequences of those); no
 *     references, no time type;
 *   - datasets claim no more elements than the file and their written
 *     storage can hold (the reader's rule, docs/FORMAT.md 3.4.1); they are
 *     read and written in blocks of about COPY_BLOCK_BYTES along their
 *     first dimension, in their own type (so values are copied exactly),
 *     into new contiguous datasets of the same shape;
 *   - attributes the same way, byte for byte in their own type.
 * The input file itself already passed the open policy (reader_policy.c):
 * no external link, external storage or virtual dataset anywhere in it.
 */
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "merge_internal.h"
#include "format/reader_h5_names.h"
#include "format/reader_h5_util.h"

#define COPY_MAX_DEPTH 16
#define COPY_TYPE_DEPTH 8
#define COPY_BLOCK_BYTES ((size_t)8 << 20)
#define COPY_MAX_ROW_BYTES ((size_t)256 << 20)
#define COPY_MAX_TYPE_BYTES ((size_t)1 << 16)
#define NAME_BYTES 4096

static int refuse(const spm_copy *c, const char *src_path, const char *why) {
    return spi_error_set(c->h->err, SP_ERR_CORRUPT,
                         "%s: %.512s %s; scope-merge copies only objects it checked, so the "
                         "input is refused",
                         c->h->path, src_path, why);
}

static int copy_failed(const spm_copy *c, const char *what) {
    char detail[256];
    spi_h5r_last_error(detail, sizeof detail);
    return spi_error_set(c->h->err, SP_ERR_HDF5, "%s: cannot copy %.512s: %s", c->out_path,
                         what, detail);
}

/* ---- types ----------------------------------------------------------------- */

static bool type_copyable(hid_t type, int depth) {
    if (type < 0 || depth > COPY_TYPE_DEPTH) return false;
    size_t size = H5Tget_size(type);
    if (size == 0 || size > COPY_MAX_TYPE_BYTES) return false;
    H5T_class_t cls = H5Tget_class(type);
    switch (cls) {
    case H5T_INTEGER: return spi_h5r_sane_scalar_type(type, H5T_INTEGER);
    case H5T_FLOAT: return spi_h5r_sane_scalar_type(type, H5T_FLOAT);
    case H5T_STRING:
    case H5T_BITFIELD:
    case H5T_OPAQUE: return true;
    case H5T_ENUM:
    case H5T_ARRAY:
    case H5T_VLEN: {
        hid_t base = H5Tget_super(type);
        bool ok = type_copyable(base, depth + 1);
        if (base >= 0) H5Tclose(base);
        return ok;
    }
    case H5T_COMPOUND: {
        int members = H5Tget_nmembers(type);
        if (members < 0 || members > 1024) return false;
        for (int i = 0; i < members; i++) {
            hid_t member = H5Tget_member_type(type, (unsigned)i);
            bool ok = type_copyable(member, depth + 1) &&
                      H5Tget_member_offset(type, (unsigned)i) + H5Tget_size(member) <= size;
            if (member >= 0) H5Tclose(member);
            if (!ok) return false;
        }
        return true;
    }
    default: return false; /* references, time, anything unknown */
    }
}

/* Whether values of the (checked) type hold variable-length parts, which
 * HDF5 allocates on read and the copy must give back. */
static bool has_vlen(hid_t type) {
    switch (H5Tget_class(type)) {
    case H5T_VLEN: return true;
    case H5T_STRING: return H5Tis_variable_str(type) > 0;
    case H5T_ARRAY: {
        hid_t base = H5Tget_super(type);
        bool inside = base >= 0 && has_vlen(base);
        if (base >= 0) H5Tclose(base);
        return inside;
    }
    case H5T_COMPOUND: {
        int members = H5Tget_nmembers(type);
        bool inside = false;
        for (int i = 0; i < members && !inside; i++) {
            hid_t member = H5Tget_member_type(type, (unsigned)i);
            inside = member >= 0 && has_vlen(member);
            if (member >= 0) H5Tclose(member);
        }
        return inside;
    }
    default: return false;
    }
}

/* ---- attributes ------------------------------------------------------------ */

typedef struct attr_ctx {
    const spm_copy *c;
    hid_t dst;
    const char *src_path;
    int status;
} attr_ctx;

static herr_t copy_attribute(hid_t src, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    attr_ctx *ctx = data;
    if (H5Aexists(ctx->dst, name) > 0) return 0; /* a later input put one there */
    hid_t attr = H5Aopen(src, name, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    size_t size = type >= 0 ? H5Tget_size(type) : 0;
    char where[NAME_BYTES];
    snprintf(where, sizeof where, "%s (attribute %.256s)", ctx->src_path, name);
    if (attr < 0 || type < 0 || space < 0 || points < 0)
        ctx->status = refuse(ctx->c, where, "cannot be read");
    else if (!type_copyable(type, 0))
        ctx->status = refuse(ctx->c, where, "has an element type scope-merge does not copy");
    else if (ctx->c->h->file_bytes > 0 && (hsize_t)points > ctx->c->h->file_bytes / size + 1)
        ctx->status = refuse(ctx->c, where, "claims more data than the file holds");
    void *buf = ctx->status == SP_OK ? spi_calloc((size_t)(points ? points : 1), size) : NULL;
    if (ctx->status == SP_OK && !buf) ctx->status = spm_oom(ctx->c->h->err);
    bool read = ctx->status == SP_OK && H5Aread(attr, type, buf) >= 0;
    if (ctx->status == SP_OK && !read) ctx->status = refuse(ctx->c, where, "cannot be read");
    if (read) {
        hid_t out = H5Acreate2(ctx->dst, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
        if (out < 0 || H5Awrite(out, type, buf) < 0) ctx->status = copy_failed(ctx->c, where);
        if (out >= 0) H5Aclose(out);
        if (has_vlen(type)) H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
    }
    spi_free(buf);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
    return ctx->status == SP_OK ? 0 : -1;
}

int spm_copy_attributes(const spm_copy *c, hid_t src, hid_t dst, const char *src_path) {
    attr_ctx ctx = {c, dst, src_path, SP_OK};
    hsize_t idx = 0;
    if (H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attribute, &ctx) < 0 &&
        ctx.status == SP_OK)
        ctx.status = refuse(c, src_path, "has attributes that cannot be listed");
    return ctx.status;
}

/* ---- links and objects ----------------------------------------------------- */

/* What loc/name is, after the link checks: a hard link to an object that
 * nothing else links. */
static int checked_object(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                          H5O_type_t *type) {
#if H5_VERSION_GE(1, 12, 0)
    H5L_info2_t link;
    H5O_info2_t object;
    bool linked = H5Lget_info2(loc, name, &link, H5P_DEFAULT) >= 0;
    bool known = linked && link.type == H5L_TYPE_HARD &&
                 H5Oget_info_by_name3(loc, name, &object, H5O_INFO_BASIC, H5P_DEFAULT) >= 0;
#else
    H5L_info_t link;
    H5O_info_t object;
    bool linked = H5Lget_info(loc, name, &link, H5P_DEFAULT) >= 0;
    bool known = linked && link.type == H5L_TYPE_HARD &&
                 H5Oget_info_by_name2(loc, name, &object, H5O_INFO_BASIC, H5P_DEFAULT) >= 0;
#endif
    if (!linked) return refuse(c, src_path, "cannot be read");
    if (link.type != H5L_TYPE_HARD)
        return refuse(c, src_path, "is a soft link (only objects linked by hard links are "
                                   "copied)");
    if (!known) return refuse(c, src_path, "cannot be read");
    if (object.rc != 1)
        return refuse(c, src_path, "is linked from more than one place (a hard link to an "
                                   "object reached another way: a cycle or a second copy)");
    *type = object.type;
    return SP_OK;
}

int spm_copy_open_group(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                        hid_t *group) {
    *group = -1;
    H5O_type_t type = H5O_TYPE_UNKNOWN; /* set on SP_OK; -O3 cannot see it */
    int status = checked_object(c, loc, name, src_path, &type);
    if (status != SP_OK) return status;
    if (type != H5O_TYPE_GROUP) return refuse(c, src_path, "is not a group");
    if ((*group = H5Gopen2(loc, name, H5P_DEFAULT)) < 0)
        return refuse(c, src_path, "cannot be opened");
    return SP_OK;
}

static hid_t intermediate_lcpl(void) {
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) < 0) {
        H5Pclose(lcpl);
        lcpl = -1;
    }
    return lcpl;
}

/* ---- datasets -------------------------------------------------------------- */

typedef struct shape {
    H5S_class_t cls;
    int ndims;
    hsize_t dims[H5S_MAX_RANK];
    hsize_t points;
    hsize_t row_points;      /* elements per index of the first dimension */
} shape;

static int read_shape(const spm_copy *c, hid_t dset, const char *src_path, size_t elem,
                      shape *s) {
    hid_t space = H5Dget_space(dset);
    s->cls = space >= 0 ? H5Sget_simple_extent_type(space) : H5S_NO_CLASS;
    s->ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    if (s->ndims >= 0 && s->ndims <= H5S_MAX_RANK) H5Sget_simple_extent_dims(space, s->dims, NULL);
    if (space >= 0) H5Sclose(space);
    if (s->cls == H5S_NO_CLASS || s->ndims < 0 || s->ndims > H5S_MAX_RANK)
        return refuse(c, src_path, "has a dataspace that cannot be read");
    s->points = s->cls == H5S_NULL ? 0 : 1;
    s->row_points = 1;
    for (int d = 0; d < s->ndims; d++) {
        if (s->dims[d] && s->points > (hsize_t)-1 / s->dims[d])
            return refuse(c, src_path, "claims more elements than can be counted");
        s->points *= s->dims[d];
        if (d > 0) s->row_points *= s->dims[d];
    }
    if (s->ndims > 0 && s->dims[0] == 0) s->row_points = 0;
    hsize_t file_bytes = c->h->file_bytes;
    if (file_bytes > 0 && s->points / SPI_H5R_MAX_ELEMENTS_PER_BYTE > file_bytes)
        return refuse(c, src_path, "claims more elements than the file can hold");
    if (s->row_points > COPY_MAX_ROW_BYTES / elem)
        return refuse(c, src_path, "has rows too large to copy");
    return SP_OK;
}

/* One block of rows [first, first + rows) (everything for a scalar). */
static hid_t select_rows(const shape *s, hid_t space, hsize_t first, hsize_t rows) {
    if (s->ndims == 0) return H5Sselect_all(space) < 0 ? -1 : H5Screate(H5S_SCALAR);
    hsize_t start[H5S_MAX_RANK] = {0}, count[H5S_MAX_RANK];
    memcpy(count, s->dims, sizeof count);
    start[0] = first;
    count[0] = rows;
    if (H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0) return -1;
    return H5Screate_simple(s->ndims, count, NULL);
}

static int copy_rows(const spm_copy *c, hid_t src, hid_t dst, hid_t type, const shape *s,
                     const char *src_path) {
    size_t elem = H5Tget_size(type);
    hsize_t rows_total = s->ndims == 0 ? 1 : s->dims[0];
    hsize_t per_block = s->row_points ? COPY_BLOCK_BYTES / (s->row_points * elem) : 1;
    if (per_block == 0) per_block = 1;
    bool vlen = has_vlen(type);
    hid_t src_space = H5Dget_space(src), dst_space = H5Dget_space(dst);
    void *buf = spi_malloc((size_t)(per_block < rows_total ? per_block : rows_total) *
                               (size_t)(s->row_points ? s->row_points : 1) * elem + 1);
    int status = src_space >= 0 && dst_space >= 0 ? SP_OK : copy_failed(c, src_path);
    if (status == SP_OK && !buf) status = spm_oom(c->h->err);
    for (hsize_t first = 0; first < rows_total && status == SP_OK; first += per_block) {
        hsize_t rows = rows_total - first < per_block ? rows_total - first : per_block;
        hid_t memory = select_rows(s, src_space, first, rows);
        hid_t ignored = select_rows(s, dst_space, first, rows);
        if (ignored >= 0) H5Sclose(ignored);
        hsize_t vlen_bytes = 0;
        if (memory < 0) status = copy_failed(c, src_path);
        else if (vlen && (H5Dvlen_get_buf_size(src, type, src_space, &vlen_bytes) < 0 ||
                          (c->h->file_bytes > 0 && vlen_bytes > c->h->file_bytes)))
            status = refuse(c, src_path, "holds variable-length data longer than the file");
        else if (H5Dread(src, type, memory, src_space, H5P_DEFAULT, buf) < 0)
            status = refuse(c, src_path, "cannot be read");
        else {
            if (H5Dwrite(dst, type, memory, dst_space, H5P_DEFAULT, buf) < 0)
                status = copy_failed(c, src_path);
            if (vlen) H5Dvlen_reclaim(type, memory, H5P_DEFAULT, buf);
        }
        if (memory >= 0) H5Sclose(memory);
    }
    spi_free(buf);
    if (src_space >= 0) H5Sclose(src_space);
    if (dst_space >= 0) H5Sclose(dst_space);
    return status;
}

static hid_t new_space(const shape *s) {
    if (s->cls == H5S_NULL) return H5Screate(H5S_NULL);
    if (s->cls == H5S_SCALAR || s->ndims == 0) return H5Screate(H5S_SCALAR);
    return H5Screate_simple(s->ndims, s->dims, NULL); /* fixed size: no unlimited maximum */
}

static int copy_dataset(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                        const char *dst) {
    hid_t src = H5Dopen2(loc, name, H5P_DEFAULT);
    if (src < 0) return refuse(c, src_path, "cannot be opened");
    hid_t type = H5Dget_type(src);
    int status = type_copyable(type, 0) ? SP_OK
                                        : refuse(c, src_path, "has an element type scope-merge "
                                                              "does not copy");
    shape s = {0};
    if (status == SP_OK) status = read_shape(c, src, src_path, H5Tget_size(type), &s);
    if (status == SP_OK && s.points > 0) {
        /* Storage never written reads as fill values: a forged shape over
         * it would have us copy billions of them (docs/FORMAT.md 3.4.1). */
        hsize_t stored = H5Dget_storage_size(src);
        if (stored / H5Tget_size(type) < s.points / SPI_H5R_MAX_ELEMENTS_PER_BYTE)
            status = refuse(c, src_path, "claims more elements than its written storage holds");
    }
    hid_t space = status == SP_OK ? new_space(&s) : -1;
    hid_t lcpl = status == SP_OK ? intermediate_lcpl() : -1;
    hid_t out = space >= 0 && lcpl >= 0
                    ? H5Dcreate2(c->out, dst, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT)
                    : -1;
    if (status == SP_OK && out < 0) status = copy_failed(c, dst);
    if (status == SP_OK && s.points > 0) status = copy_rows(c, src, out, type, &s, src_path);
    if (status == SP_OK) status = spm_copy_attributes(c, src, out, src_path);
    if (out >= 0) H5Dclose(out);
    if (lcpl >= 0) H5Pclose(lcpl);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    H5Dclose(src);
    return status;
}

/* ---- groups ---------------------------------------------------------------- */

static int copy_object(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                       const char *dst, int depth);

static int copy_group(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                      const char *dst, int depth) {
    hid_t src = H5Gopen2(loc, name, H5P_DEFAULT);
    if (src < 0) return refuse(c, src_path, "cannot be opened");
    hid_t lcpl = intermediate_lcpl();
    hid_t out = lcpl >= 0 ? H5Gcreate2(c->out, dst, lcpl, H5P_DEFAULT, H5P_DEFAULT) : -1;
    int status = out >= 0 ? spm_copy_attributes(c, src, out, src_path) : copy_failed(c, dst);
    char **names = NULL;
    hsize_t count = 0;
    if (status == SP_OK) status = spi_h5r_list_names(c->h, src, &names, &count);
    char child_src[NAME_BYTES], child_dst[NAME_BYTES];
    for (hsize_t i = 0; i < count && status == SP_OK; i++) {
        int a = snprintf(child_src, sizeof child_src, "%s/%s", src_path, names[i]);
        int b = snprintf(child_dst, sizeof child_dst, "%s/%s", dst, names[i]);
        if (a < 0 || b < 0 || (size_t)a >= sizeof child_src || (size_t)b >= sizeof child_dst)
            status = refuse(c, src_path, "holds a name too long to copy");
        else
            status = copy_object(c, src, names[i], child_src, child_dst, depth + 1);
    }
    spi_h5r_free_strings(names, count);
    if (out >= 0) H5Gclose(out);
    if (lcpl >= 0) H5Pclose(lcpl);
    H5Gclose(src);
    return status;
}

static int copy_object(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                       const char *dst, int depth) {
    if (depth > COPY_MAX_DEPTH) return refuse(c, src_path, "is nested too deeply");
    H5O_type_t type = H5O_TYPE_UNKNOWN; /* set on SP_OK; -O3 cannot see it */
    int status = checked_object(c, loc, name, src_path, &type);
    if (status != SP_OK) return status;
    if (type == H5O_TYPE_GROUP) return copy_group(c, loc, name, src_path, dst, depth);
    if (type == H5O_TYPE_DATASET) return copy_dataset(c, loc, name, src_path, dst);
    return refuse(c, src_path, "is neither a group nor a dataset");
}

int spm_copy_object(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                    const char *dst) {
    return copy_object(c, loc, name, src_path, dst, 0);
}
