/*
 * merge_aux.c - the rank<N> groups of the inputs (FORMAT.md 1.7) into the
 * merged file.
 *
 * These groups hold counter results the merge does not interpret: perf
 * event totals per region, LIKWID results per tag, line-profiler records.
 * They are copied object by object, by value and after checks
 * (merge_copy.c: never H5Ocopy of an unchecked group), so every attribute
 * and dataset type survives exactly as its writer made it, and memory is
 * bounded by one block. Inputs are opened under the readers' open policy
 * (reader_policy.c). Rules, following merge_results:
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
#include "format/reader_h5_names.h"
#include "format/reader_h5_util.h"
#include "format/reader_policy.h"

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

/* Copy src_loc/name (src_path in the input) to out:dst unless something is
 * there already. */
static int copy_missing(const spm_copy *c, hid_t src_loc, const char *name,
                        const char *src_path, const char *dst) {
    if (spi_h5r_exists(c->out, dst) > 0) return SP_OK;
    return spm_copy_object(c, src_loc, name, src_path, dst);
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

/* Open loc/kind (src_path/kind in messages) when it exists, after the
 * link checks: *group -1 and SP_OK when there is none. */
static int open_part(const spm_copy *c, hid_t loc, const char *kind, const char *src_path,
                     char *part_path, size_t part_bytes, hid_t *group) {
    *group = -1;
    snprintf(part_path, part_bytes, "%s/%s", src_path, kind);
    if (H5Lexists(loc, kind, H5P_DEFAULT) <= 0) return SP_OK;
    return spm_copy_open_group(c, loc, kind, part_path, group);
}

/* prefix: put before each child's name in the output (NULL: none). */
static int copy_children(const spm_copy *c, hid_t rank_group, const char *rank_name,
                         const char *kind, bool renumber, const char *prefix) {
    char src_group[NAME_BYTES];
    hid_t group;
    int status = open_part(c, rank_group, kind, rank_name, src_group, sizeof src_group, &group);
    if (status != SP_OK || group < 0) return status;
    char **names = NULL;
    hsize_t count = 0;
    status = spi_h5r_list_names(c->h, group, &names, &count);
    char dst_group[NAME_BYTES], dst[2 * NAME_BYTES], src[2 * NAME_BYTES];
    snprintf(dst_group, sizeof dst_group, "%s/%s", rank_name, kind);
    hsize_t next = 0;
    if (status == SP_OK && renumber) {
        qsort(names, (size_t)count, sizeof *names, numeric_order);
        if (count_links(c->out, dst_group, &next) != SP_OK)
            status = copy_failed(c->out_path, dst_group, c->h->err);
    }
    for (hsize_t i = 0; i < count && status == SP_OK; i++) {
        int len = renumber ? snprintf(dst, sizeof dst, "%s/%llu", dst_group,
                                      (unsigned long long)next++)
                           : snprintf(dst, sizeof dst, "%s/%s%s", dst_group,
                                      prefix ? prefix : "", names[i]);
        int src_len = snprintf(src, sizeof src, "%s/%s", src_group, names[i]);
        if (len < 0 || (size_t)len >= sizeof dst || src_len < 0 || (size_t)src_len >= sizeof src) {
            status = spi_error_set(c->h->err, SP_ERR_CORRUPT, "%s: name too long in %s",
                                   c->h->path, dst_group);
            break;
        }
        status = copy_missing(c, group, names[i], src, dst);
    }
    spi_h5r_free_strings(names, count);
    H5Gclose(group);
    return status;
}

static int copy_likwid(const spm_copy *c, hid_t rank_group, const char *rank_name) {
    char src_path[NAME_BYTES], dst[NAME_BYTES];
    snprintf(dst, sizeof dst, "%s/likwid", rank_name);
    if (H5Lexists(rank_group, "likwid", H5P_DEFAULT) <= 0) return SP_OK;
    if (spi_h5r_exists(c->out, dst) <= 0)
        return copy_missing(c, rank_group, "likwid", dst, dst);
    /* A later input has LIKWID results on this rank too: add what it lacks. */
    hid_t src;
    int status = open_part(c, rank_group, "likwid", rank_name, src_path, sizeof src_path, &src);
    if (status != SP_OK) return status;
    hid_t dst_group = H5Gopen2(c->out, dst, H5P_DEFAULT);
    if (dst_group < 0) status = copy_failed(c->out_path, dst, c->h->err);
    if (status == SP_OK) status = spm_copy_attributes(c, src, dst_group, src_path);
    if (status == SP_OK) status = copy_children(c, src, dst, "regions", false, NULL);
    hsize_t regions = 0;
    char regions_path[NAME_BYTES + 16];
    snprintf(regions_path, sizeof regions_path, "%s/regions", dst);
    if (status == SP_OK && count_links(c->out, regions_path, &regions) != SP_OK)
        status = copy_failed(c->out_path, regions_path, c->h->err);
    if (status == SP_OK && H5Aexists(dst_group, "num_regions") > 0) {
        hid_t attr = H5Aopen(dst_group, "num_regions", H5P_DEFAULT);
        int64_t value = (int64_t)regions;
        if (attr < 0 || H5Awrite(attr, H5T_NATIVE_INT64, &value) < 0)
            status = copy_failed(c->out_path, "likwid/num_regions", c->h->err);
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
        /* Whole-read inputs: a trace has no rank groups; schema 1 may.
         * Opened again under the open policy: the path may name another
         * file by now. */
        if (H5Fis_hdf5(in->path) <= 0) return SP_OK;
        int opened = spi_h5r_open_checked(in->path, NULL, 0, &file, err);
        if (opened != SP_OK) return opened;
        own = true;
    }
    spi_h5r h = {.file = file, .path = in->path, .err = err};
    if (H5Fget_filesize(file, &h.file_bytes) < 0) h.file_bytes = 0;
    spm_copy c = {.h = &h, .out = out, .out_path = out_path};
    char **names = NULL;
    hsize_t count = 0;
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    int status = root >= 0 ? spi_h5r_list_names(&h, root, &names, &count)
                           : spi_error_set(err, SP_ERR_HDF5, "%s: cannot open the root group "
                                           "to copy its rank groups", in->path);
    for (hsize_t i = 0; i < count && status == SP_OK; i++) {
        if (!is_rank_group(names[i])) continue;
        hid_t group;
        status = spm_copy_open_group(&c, root, names[i], names[i], &group);
        if (status != SP_OK) break;
        if (backwards) {
            status = copy_children(&c, group, names[i], "perf_events", false, in->prefix);
            if (status == SP_OK) status = copy_likwid(&c, group, names[i]);
        } else {
            status = copy_children(&c, group, names[i], "line_profile", true, NULL);
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
