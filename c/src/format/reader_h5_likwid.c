/*
 * reader_h5_likwid.c - rank<N>/likwid (FORMAT.md 1.7) into profile->likwid
 * and profile->likwid_env.
 *
 * A LIKWID region group holds per-hardware-thread vectors (cpus, times,
 * call_counts) and two matrices laid out [name][thread] (events, metrics).
 * The thread count is not stored anywhere on its own: `cpus` defines it and
 * every other dataset must agree with it and with its name list, because
 * the accessors hand out rows of `thread_count` doubles that a caller will
 * index without checking. A group that disagrees fails the whole read with
 * SP_ERR_CORRUPT naming the file and the group; accepting it partially
 * would show numbers under the wrong event or thread.
 *
 * Tolerated, as the Python reader tolerates them: a missing counter_names,
 * a missing tag attribute (the group name with '|' mapped back to '/'),
 * group_id missing (-1), an empty vector or matrix stored with any shape
 * (h5py writes np.asarray([]) as 1-D), attributes of the likwid group that
 * are not LIKWID_* strings.
 */
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "profile/profile.h"
#include "format/reader_h5_names.h"
#include "format/reader_h5_util.h"

/* "rank<u32>/likwid/regions/" plus a group name of up to this many bytes
 * names a region in messages; longer names are cut, never overflowed. */
#define LIKWID_PATH_BYTES 512

static int oom(const spi_h5r *h) {
    return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
}

/* ---- datasets ------------------------------------------------------------ */

static void shape_text(char *buf, size_t bytes, int ndims, const hsize_t *dims) {
    size_t used = (size_t)snprintf(buf, bytes, "(");
    for (int i = 0; i < ndims && used < bytes; i++)
        used += (size_t)snprintf(buf + used, bytes - used, "%s%llu", i ? ", " : "",
                                 (unsigned long long)dims[i]);
    /* Python's spelling, (4,) for one dimension: what h5py users see. */
    if (used < bytes) snprintf(buf + used, bytes - used, ndims == 1 ? ",)" : ")");
}

/*
 * Read the numeric dataset `name` of `group` as `mem_type` (8-byte
 * elements) into a new array. want_ndims is 1 or 2 and want[] the expected
 * dimensions; want[0] may be SPI_H5R_ANY_LENGTH for a 1-D dataset, and
 * *len then receives its length. h->path is the group's path here (the
 * caller prefixes the file), so messages name the group.
 */
static int read_numbers(const spi_h5r *h, hid_t group, const char *name, int want_ndims,
                        const hsize_t *want, hid_t mem_type, void **out, hsize_t *len) {
    *out = NULL;
    if (!spi_h5r_exists(group, name))
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: dataset %s is missing", h->path, name);
    hid_t dset = H5Dopen2(group, name, H5P_DEFAULT);
    hid_t type = dset >= 0 ? H5Dget_type(dset) : -1;
    hid_t space = dset >= 0 ? H5Dget_space(dset) : -1;
    int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t dims[H5S_MAX_RANK] = {0};
    int status = SP_OK;
    void *buf = NULL;
    if (type < 0 || ndims < 0 || ndims > H5S_MAX_RANK ||
        H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open dataset %s", h->path,
                               name);
        goto done;
    }
    H5T_class_t cls = H5Tget_class(type);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s: dataset %s has the wrong element type (not numeric)", h->path,
                               name);
        goto done;
    }
    /* Element count, overflow-checked, and bounded by what the file can hold
     * so that a damaged header cannot make us allocate for absent data. */
    hsize_t total = 1;
    bool overflow = false;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] && total > SIZE_MAX / 8 / dims[i]) overflow = true;
        total *= dims[i];
    }
    if (overflow || (h->file_bytes > 0 && total / SPI_H5R_MAX_ELEMENTS_PER_BYTE > h->file_bytes)) {
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s: dataset %s claims more elements than the file can hold",
                               h->path, name);
        goto done;
    }
    bool expected_empty = want[0] == 0 || (want_ndims == 2 && want[1] == 0);
    bool fits = ndims == want_ndims;
    for (int i = 0; fits && i < ndims; i++)
        fits = dims[i] == want[i] || (i == 0 && want[0] == SPI_H5R_ANY_LENGTH);
    /* Empty data has no meaningful shape: h5py stores [] as (0,). */
    if (!fits && total == 0 && expected_empty) fits = true;
    if (!fits) {
        char got[96], expected[96];
        shape_text(got, sizeof got, ndims, dims);
        if (want_ndims == 1 && want[0] == SPI_H5R_ANY_LENGTH)
            snprintf(expected, sizeof expected, "(nthreads,)");
        else
            shape_text(expected, sizeof expected, want_ndims, want);
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s: dataset %s has shape %s, expected %s", h->path, name, got,
                               expected);
        goto done;
    }
    buf = spi_calloc((size_t)total, 8);
    if (!buf) {
        status = oom(h);
        goto done;
    }
    if (total > 0 && H5Dread(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read dataset %s", h->path,
                               name);
        goto done;
    }
    if (len) *len = total;
    *out = buf;
    buf = NULL;
done:
    spi_free(buf);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    if (dset >= 0) H5Dclose(dset);
    return status;
}

/* ---- one region ---------------------------------------------------------- */

/* An optional string attribute; "" when absent so that every accessor can
 * hand out a string without a NULL case. */
static int attr_text(const spi_h5r *h, hid_t group, const char *name, char **value) {
    bool present = false;
    int status = spi_h5r_attr_string(h, group, name, value, &present);
    if (status == SP_OK && !present && !(*value = spi_strdup(""))) status = oom(h);
    return status;
}

/* A name list whose length is the first dimension of a matrix; absent =
 * empty (the matrix check then catches a non-empty matrix). */
static int attr_names(const spi_h5r *h, hid_t group, const char *name, char ***items,
                      size_t *count) {
    bool present = false;
    int status = spi_h5r_attr_strings(h, group, name, items, count, &present);
    if (status == SP_OK && !present) {
        *count = 0;
        if (!(*items = spi_calloc(1, sizeof **items))) status = oom(h);
    }
    return status;
}

static int read_region(const spi_h5r *h, hid_t group, const char *group_name,
                       spi_likwid_record *r) {
    bool present = false;
    int status = spi_h5r_attr_string(h, group, "tag", &r->tag, &present);
    if (status == SP_OK && !present) {
        /* The writer maps '/' to '|' in the group name; undo it. */
        if (!(r->tag = spi_strdup(group_name))) return oom(h);
        for (char *p = r->tag; *p; p++)
            if (*p == '|') *p = '/';
    }
    if (status == SP_OK) status = spi_h5r_attr_int(h, group, "group_id", &r->group_id, &present);
    if (status == SP_OK && !present) r->group_id = -1;
    if (status == SP_OK) status = attr_text(h, group, "group_name", &r->group_name);
    if (status == SP_OK) status = attr_text(h, group, "source", &r->source);
    /* Names and their counts are stored together so that the records'
     * free function (profile/profile.c) always sees matching lengths. */
    if (status == SP_OK)
        status = attr_names(h, group, "event_names", &r->event_names, &r->event_count);
    if (status == SP_OK)
        status = attr_names(h, group, "metric_names", &r->metric_names, &r->metric_count);
    if (status == SP_OK) {
        char **counters = NULL;
        size_t counter_count = 0;
        status = spi_h5r_attr_strings(h, group, "counter_names", &counters, &counter_count,
                                      &present);
        if (status == SP_OK && present && counter_count != r->event_count)
            status = spi_error_set(h->err, SP_ERR_CORRUPT,
                                   "%s: %zu counter_names for %zu event_names", h->path,
                                   counter_count, r->event_count);
        if (status == SP_OK) r->counter_names = counters;
        else spi_h5r_free_strings(counters, counter_count);
    }
    hsize_t threads = 0;
    hsize_t any[1] = {SPI_H5R_ANY_LENGTH};
    if (status == SP_OK)
        status = read_numbers(h, group, "cpus", 1, any, H5T_NATIVE_INT64, (void **)&r->cpus,
                              &threads);
    if (status == SP_OK) r->thread_count = (size_t)threads;
    hsize_t vector[1] = {threads};
    hsize_t events[2] = {r->event_count, threads};
    hsize_t metrics[2] = {r->metric_count, threads};
    if (status == SP_OK)
        status = read_numbers(h, group, "times", 1, vector, H5T_NATIVE_DOUBLE,
                              (void **)&r->times, NULL);
    if (status == SP_OK)
        status = read_numbers(h, group, "call_counts", 1, vector, H5T_NATIVE_INT64,
                              (void **)&r->call_counts, NULL);
    if (status == SP_OK)
        status = read_numbers(h, group, "events", 2, events, H5T_NATIVE_DOUBLE,
                              (void **)&r->events, NULL);
    if (status == SP_OK)
        status = read_numbers(h, group, "metrics", 2, metrics, H5T_NATIVE_DOUBLE,
                              (void **)&r->metrics, NULL);
    return status;
}

/* ---- the likwid group of one rank ------------------------------------------ */

typedef struct env_walk {
    const spi_h5r *h;
    uint32_t rank;
    spi_profile *profile;
    int status;
} env_walk;

static herr_t env_attr(hid_t group, const char *name, const H5A_info_t *info, void *data) {
    (void)info;
    env_walk *walk = data;
    if (strncmp(name, "LIKWID_", 7) != 0) return 0;
    /* Only scalar strings are environment values; anything else under a
     * LIKWID_ name is not ours to interpret and is skipped. */
    hid_t attr = H5Aopen(group, name, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    bool is_text = type >= 0 && space >= 0 && H5Tget_class(type) == H5T_STRING &&
                   H5Sget_simple_extent_npoints(space) == 1;
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
    if (!is_text) return 0;
    char *value = NULL;
    bool present = false;
    walk->status = spi_h5r_attr_string(walk->h, group, name, &value, &present);
    if (walk->status != SP_OK) return -1;
    spi_profile *p = walk->profile;
    spi_likwid_env *grown =
        spi_reallocarray(p->likwid_env, p->likwid_env_count + 1, sizeof *grown);
    char *key = spi_strdup(name);
    if (grown) p->likwid_env = grown;
    if (!grown || !key) {
        spi_free(key);
        spi_free(value);
        walk->status = oom(walk->h);
        return -1;
    }
    p->likwid_env[p->likwid_env_count++] = (spi_likwid_env){walk->rank, key, value};
    return 0;
}

static int read_rank(const spi_h5r *h, hid_t likwid, uint32_t rank, spi_profile *profile) {
    env_walk walk = {h, rank, profile, SP_OK};
    hsize_t at = 0;
    if (H5Aiterate2(likwid, H5_INDEX_NAME, H5_ITER_INC, &at, env_attr, &walk) < 0 &&
        walk.status == SP_OK)
        walk.status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot list the attributes",
                                    h->path);
    if (walk.status != SP_OK) return walk.status;
    /* A rank may have LIKWID settings but no region: no regions group. */
    if (!spi_h5r_exists(likwid, "regions")) return SP_OK;
    hid_t regions = H5Gopen2(likwid, "regions", H5P_DEFAULT);
    if (regions < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: regions is not a group", h->path);
    char **names = NULL;
    hsize_t n = 0;
    int status = spi_h5r_list_names(h, regions, &names, &n);
    for (hsize_t i = 0; status == SP_OK && i < n; i++) {
        char path[LIKWID_PATH_BYTES];
        snprintf(path, sizeof path, "%s/regions/%s", h->path, names[i]);
        spi_h5r region_h = *h;
        region_h.path = path;
        hid_t group = H5Gopen2(regions, names[i], H5P_DEFAULT);
        if (group < 0) {
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: not a group", path);
            break;
        }
        spi_likwid_record *r = spi_likwid_record_add(profile, rank);
        status = r ? read_region(&region_h, group, names[i], r) : oom(h);
        H5Gclose(group);
    }
    spi_h5r_free_strings(names, n);
    H5Gclose(regions);
    return status;
}

int spi_h5r_read_likwid(const spi_h5r *h, spi_profile *profile) {
    uint32_t *ranks = NULL;
    size_t rank_count = 0;
    int status = spi_h5r_rank_groups(h, &ranks, &rank_count);
    for (size_t i = 0; status == SP_OK && i < rank_count; i++) {
        char path[64];
        snprintf(path, sizeof path, "rank%u/likwid", ranks[i]);
        if (!spi_h5r_exists(h->file, path)) continue;
        /* Messages below name "FILE: rank<N>/likwid/...": the helpers
         * write into a local error with the group as their "path", and the
         * file is put in front once here. */
        spi_error inner;
        spi_error_clear(&inner);
        spi_h5r group_h = {.file = h->file, .path = path, .err = &inner,
                           .file_bytes = h->file_bytes};
        hid_t likwid = H5Gopen2(h->file, path, H5P_DEFAULT);
        status = likwid >= 0 ? read_rank(&group_h, likwid, ranks[i], profile)
                             : spi_error_set(&inner, SP_ERR_CORRUPT, "%s: not a group", path);
        if (likwid >= 0) H5Gclose(likwid);
        if (status != SP_OK)
            spi_error_set(h->err, status, "%s: %s. The file is damaged.", h->path, inner.message);
    }
    spi_free(ranks);
    return status;
}
