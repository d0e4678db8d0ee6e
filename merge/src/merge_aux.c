/*
 * merge_aux.c - the rank<N> groups of the inputs (FORMAT.md 1.7) into the
 * merged file.
 *
 * These groups hold counter results the merge does not interpret: perf
 * event totals per region, LIKWID results per tag, line-profiler records.
 * They are copied object by object with H5Ocopy, so every attribute and
 * dataset type survives exactly as its writer made it, and nothing has to
 * be held in memory. Rules, following merge_results:
 *   - perf_events/<region>: region names are unique across inputs (the
 *     merge refuses collisions), so these only add up; should two inputs
 *     still carry the same one, the later input wins. An input's prefix
 *     (sp_merge_options.prefixes) renames its groups as its regions.
 *   - likwid: the group attributes and regions/<tag> are a union in which
 *     later inputs overwrite the same (rank, tag); num_regions is recounted.
 *   - line_profile/<i>: records are appended, renumbered 0, 1, 2, ... in
 *     input order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "merge_internal.h"
#include "format/reader_h5_util.h"

#define NAME_BYTES 4096

static int copy_failed(const char *out_path, const char *what, spi_error *err) {
    char detail[256];
    spi_h5r_last_error(detail, sizeof detail);
    return spi_error_set(err, SP_ERR_HDF5, "%s: cannot copy %s: %s", out_path, what, detail);
}

static bool is_rank_group(const char *name) {
    if (strncmp(name, "rank", 4) != 0 || !name[4]) return false;
    for (const char *p = name + 4; *p; p++)
        if (*p < '0' || *p > '9') return false;
    return true;
}

/* Copy src_loc/name to out:dst unless something is there already. */
static int copy_missing(hid_t src_loc, const char *name, hid_t out, const char *dst,
                        const char *out_path, spi_error *err) {
    if (spi_h5r_exists(out, dst) > 0) return SP_OK;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    int ok = lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
             H5Ocopy(src_loc, name, out, dst, H5P_DEFAULT, lcpl) >= 0;
    if (lcpl >= 0) H5Pclose(lcpl);
    return ok ? SP_OK : copy_failed(out_path, dst, err);
}

typedef struct attr_copy {
    hid_t dst;
    int ok;
} attr_copy;

/* One attribute, byte for byte in its own type (vlen data reclaimed),
 * unless a later input already put one of that name there. */
static herr_t copy_attribute(hid_t src, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    attr_copy *ctx = data;
    if (H5Aexists(ctx->dst, name) > 0) return 0;
    hid_t attr = H5Aopen(src, name, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    hssize_t points = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    size_t size = type >= 0 ? H5Tget_size(type) : 0;
    void *buf = points >= 0 && size ? spi_calloc((size_t)(points ? points : 1), size) : NULL;
    int ok = buf && H5Aread(attr, type, buf) >= 0;
    if (ok) {
        hid_t out = H5Acreate2(ctx->dst, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
        ok = out >= 0 && H5Awrite(out, type, buf) >= 0;
        if (out >= 0) H5Aclose(out);
        if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0)
            H5Dvlen_reclaim(type, space, H5P_DEFAULT, buf);
    }
    spi_free(buf);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
    ctx->ok = ok;
    return ok ? 0 : -1;
}

static int count_links(hid_t loc, const char *name, hsize_t *count) {
    *count = 0;
    if (spi_h5r_exists(loc, name) <= 0) return SP_OK;
    hid_t group = H5Gopen2(loc, name, H5P_DEFAULT);
    H5G_info_t info;
    int ok = group >= 0 && H5Gget_info(group, &info) >= 0;
    if (ok) *count = info.nlinks;
    if (group >= 0) H5Gclose(group);
    return ok ? SP_OK : SP_ERR_HDF5;
}

static int numeric_order(const void *a, const void *b) {
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    unsigned long long u = strtoull(x, NULL, 10), v = strtoull(y, NULL, 10);
    if (u != v) return u < v ? -1 : 1;
    return strcmp(x, y);
}

/* prefix: put before each child's name in the output (NULL: none). */
static int copy_children(const spi_h5r *h, hid_t rank_group, const char *rank_name,
                         const char *kind, hid_t out, const char *out_path, bool renumber,
                         const char *prefix) {
    if (spi_h5r_exists(rank_group, kind) <= 0) return SP_OK;
    hid_t group = H5Gopen2(rank_group, kind, H5P_DEFAULT);
    if (group < 0) return copy_failed(out_path, kind, h->err);
    char **names = NULL;
    hsize_t count = 0;
    int status = spi_h5r_list(h, group, &names, &count);
    char dst_group[NAME_BYTES], dst[2 * NAME_BYTES];
    snprintf(dst_group, sizeof dst_group, "%s/%s", rank_name, kind);
    hsize_t next = 0;
    if (status == SP_OK && renumber) {
        qsort(names, (size_t)count, sizeof *names, numeric_order);
        if (count_links(out, dst_group, &next) != SP_OK) status = copy_failed(out_path, dst_group, h->err);
    }
    for (hsize_t i = 0; i < count && status == SP_OK; i++) {
        int len = renumber ? snprintf(dst, sizeof dst, "%s/%llu", dst_group,
                                      (unsigned long long)next++)
                           : snprintf(dst, sizeof dst, "%s/%s%s", dst_group,
                                      prefix ? prefix : "", names[i]);
        if (len < 0 || (size_t)len >= sizeof dst) {
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: name too long in %s", h->path,
                                   dst_group);
            break;
        }
        status = copy_missing(group, names[i], out, dst, out_path, h->err);
    }
    spi_h5r_free_strings(names, count);
    H5Gclose(group);
    return status;
}

static int copy_likwid(const spi_h5r *h, hid_t rank_group, const char *rank_name, hid_t out,
                       const char *out_path) {
    if (spi_h5r_exists(rank_group, "likwid") <= 0) return SP_OK;
    char dst[NAME_BYTES];
    snprintf(dst, sizeof dst, "%s/likwid", rank_name);
    if (spi_h5r_exists(out, dst) <= 0)
        return copy_missing(rank_group, "likwid", out, dst, out_path, h->err);
    /* A later input has LIKWID results on this rank too: add what it lacks. */
    hid_t src = H5Gopen2(rank_group, "likwid", H5P_DEFAULT);
    hid_t dst_group = H5Gopen2(out, dst, H5P_DEFAULT);
    int status = src >= 0 && dst_group >= 0 ? SP_OK : copy_failed(out_path, dst, h->err);
    if (status == SP_OK) {
        attr_copy ctx = {dst_group, 1};
        hsize_t idx = 0;
        if (H5Aiterate2(src, H5_INDEX_NAME, H5_ITER_INC, &idx, copy_attribute, &ctx) < 0 || !ctx.ok)
            status = copy_failed(out_path, dst, h->err);
    }
    if (status == SP_OK)
        status = copy_children(h, src, dst, "regions", out, out_path, false, NULL);
    hsize_t regions = 0;
    char regions_path[NAME_BYTES + 16];
    snprintf(regions_path, sizeof regions_path, "%s/regions", dst);
    if (status == SP_OK && count_links(out, regions_path, &regions) != SP_OK)
        status = copy_failed(out_path, regions_path, h->err);
    if (status == SP_OK && H5Aexists(dst_group, "num_regions") > 0) {
        hid_t attr = H5Aopen(dst_group, "num_regions", H5P_DEFAULT);
        int64_t value = (int64_t)regions;
        if (attr < 0 || H5Awrite(attr, H5T_NATIVE_INT64, &value) < 0)
            status = copy_failed(out_path, "likwid/num_regions", h->err);
        if (attr >= 0) H5Aclose(attr);
    }
    if (dst_group >= 0) H5Gclose(dst_group);
    if (src >= 0) H5Gclose(src);
    return status;
}

/* backwards: perf events and LIKWID (later inputs first); else line
 * profiles (in input order). */
static int copy_input(spm_input *in, hid_t out, const char *out_path, bool backwards,
                      spi_error *err) {
    hid_t file = in->file;
    bool own = false;
    if (file < 0) {
        /* Whole-read inputs: a trace has no rank groups; schema 1 may. */
        if (H5Fis_hdf5(in->path) <= 0) return SP_OK;
        file = H5Fopen(in->path, H5F_ACC_RDONLY, H5P_DEFAULT);
        if (file < 0) return spi_error_set(err, SP_ERR_NOT_A_PROFILE, "%s: cannot reopen", in->path);
        own = true;
    }
    spi_h5r h = {.file = file, .path = in->path, .err = err};
    char **names = NULL;
    hsize_t count = 0;
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    int status = root >= 0 ? spi_h5r_list(&h, root, &names, &count) : SP_ERR_HDF5;
    for (hsize_t i = 0; i < count && status == SP_OK; i++) {
        if (!is_rank_group(names[i])) continue;
        hid_t group = H5Gopen2(file, names[i], H5P_DEFAULT);
        if (group < 0) {
            status = spi_error_set(err, SP_ERR_CORRUPT, "%s: cannot open %s", in->path, names[i]);
            break;
        }
        if (backwards) {
            status = copy_children(&h, group, names[i], "perf_events", out, out_path, false,
                                   in->prefix);
            if (status == SP_OK) status = copy_likwid(&h, group, names[i], out, out_path);
        } else {
            status = copy_children(&h, group, names[i], "line_profile", out, out_path, true,
                                   NULL);
        }
        H5Gclose(group);
    }
    spi_h5r_free_strings(names, count);
    if (root >= 0) H5Gclose(root);
    if (own) H5Fclose(file);
    return status;
}

int spm_copy_aux(spm_input *inputs, size_t count, hid_t out, const char *out_path,
                 spi_error *err) {
    int status = SP_OK;
    for (size_t i = count; i-- > 0 && status == SP_OK;)
        status = copy_input(&inputs[i], out, out_path, true, err);
    for (size_t i = 0; i < count && status == SP_OK; i++)
        status = copy_input(&inputs[i], out, out_path, false, err);
    return status;
}
