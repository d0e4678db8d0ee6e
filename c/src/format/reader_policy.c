/*
 * reader_policy.c - the one open policy of every HDF5 read (see
 * reader_policy.h): open, then walk the whole file before anything else
 * reads from it.
 *
 * Three passes over the file, none of which follows a link:
 *   1. every link (H5Lvisit: recurses through hard links only, each group
 *      once): external and user-defined links are refused, soft links are
 *      noted;
 *   2. every object (H5Ovisit, the same way): a dataset's creation list
 *      must not name external raw-data files nor use the virtual layout;
 *   3. every soft link noted must resolve to an object of this file; a
 *      dangling link or a cycle (HDF5 stops after 16 soft links) is
 *      refused. Only now may a path cross a soft link: the file has no
 *      external link left to cross.
 * Passes 2 and 3 open objects through access lists that refuse to follow
 * an external link. Opening a dataset reads its object header only: the
 * raw data of external storage and a virtual dataset's sources are opened
 * by a read, and the walk reads nothing. (The access list keeps HDF5's
 * default external-file and virtual prefixes: libhdf5 refuses to open a
 * dataset again with other prefixes while an earlier open of the same file
 * still holds it, as a profile read on demand does.)
 */
#include "format/reader_policy.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "format/reader_h5_util.h"
#include "util/alloc.h"
#include "util/text.h"

#define SELF_CONTAINED "a profile must be one self-contained file"

/* Object names in messages: escaped and cut. */
#define NAME_SHOWN 200

typedef struct walk {
    const char *path;
    spi_error *err;
    int status;
    hid_t lapl, dapl;
    char **soft;               /* names of the soft links, for pass 3 */
    size_t soft_count, soft_cap;
} walk;

static const char *shown(const char *name, char *buf, size_t len) {
    buf[0] = '/';
    spi_text_escape(buf + 1, len - 1, name);
    return buf;
}

static int refuse(walk *w, const char *name, const char *why) {
    char buf[NAME_SHOWN];
    w->status = spi_error_set(w->err, SP_ERR_CORRUPT,
                              "%s: %s %s; the file is refused before any of its data is read",
                              w->path, shown(name, buf, sizeof buf), why);
    return 1; /* stops the visit */
}

static herr_t no_external_traversal(const char *parent_file, const char *parent_group,
                                    const char *child_file, const char *child_object,
                                    unsigned *acc_flags, hid_t fapl, void *data) {
    (void)parent_file;
    (void)parent_group;
    (void)child_file;
    (void)child_object;
    (void)acc_flags;
    (void)fapl;
    (void)data;
    return -1;
}

/* ---- pass 1: links ------------------------------------------------------- */

static int note_soft(walk *w, const char *name) {
    if (w->soft_count == w->soft_cap) {
        size_t cap = w->soft_cap ? 2 * w->soft_cap : 16;
        char **grown = spi_reallocarray(w->soft, cap, sizeof *grown);
        if (!grown) return -1;
        w->soft = grown;
        w->soft_cap = cap;
    }
    if (!(w->soft[w->soft_count] = spi_strdup(name))) return -1;
    w->soft_count++;
    return 0;
}

static int visit_link_type(walk *w, const char *name, H5L_type_t type) {
    switch (type) {
    case H5L_TYPE_HARD: return 0;
    case H5L_TYPE_SOFT:
        if (note_soft(w, name) == 0) return 0;
        w->status = spi_error_set(w->err, SP_ERR_OUT_OF_MEMORY,
                                  "%s: out of memory while checking the file's links", w->path);
        return 1;
    case H5L_TYPE_EXTERNAL:
        return refuse(w, name, "is an external link to another file (" SELF_CONTAINED ")");
    default: return refuse(w, name, "is a user-defined link (only hard and soft links are read)");
    }
}

#if H5_VERSION_GE(1, 12, 0)
static herr_t visit_link(hid_t root, const char *name, const H5L_info2_t *info, void *data) {
    (void)root;
    return visit_link_type(data, name, info->type);
}
#define VISIT_LINKS(root, w) H5Lvisit2(root, H5_INDEX_NAME, H5_ITER_NATIVE, visit_link, w)
#else
static herr_t visit_link(hid_t root, const char *name, const H5L_info_t *info, void *data) {
    (void)root;
    return visit_link_type(data, name, info->type);
}
#define VISIT_LINKS(root, w) H5Lvisit(root, H5_INDEX_NAME, H5_ITER_NATIVE, visit_link, w)
#endif

/* ---- pass 2: datasets ---------------------------------------------------- */

static int check_dataset(walk *w, hid_t root, const char *name) {
    hid_t dset = H5Dopen2(root, name, w->dapl);
    hid_t dcpl = dset >= 0 ? H5Dget_create_plist(dset) : -1;
    H5D_layout_t layout = dcpl >= 0 ? H5Pget_layout(dcpl) : H5D_LAYOUT_ERROR;
    int external = dcpl >= 0 ? H5Pget_external_count(dcpl) : -1;
    if (dcpl >= 0) H5Pclose(dcpl);
    if (dset >= 0) H5Dclose(dset);
    if (layout == H5D_VIRTUAL)
        return refuse(w, name, "is a virtual dataset, whose data come from other files ("
                               SELF_CONTAINED ")");
    if (external > 0)
        return refuse(w, name, "stores its data in external files (" SELF_CONTAINED ")");
    if (layout == H5D_LAYOUT_ERROR || external < 0) {
        char buf[NAME_SHOWN];
        w->status = spi_error_set(w->err, SP_ERR_CORRUPT,
                                  "%s: cannot read the storage layout of dataset %s. The file is "
                                  "truncated or damaged.",
                                  w->path, shown(name, buf, sizeof buf));
        return 1;
    }
    return 0;
}

#if H5_VERSION_GE(1, 12, 0)
static herr_t visit_object(hid_t root, const char *name, const H5O_info2_t *info, void *data) {
    return info->type == H5O_TYPE_DATASET ? check_dataset(data, root, name) : 0;
}
#define VISIT_OBJECTS(root, w) \
    H5Ovisit3(root, H5_INDEX_NAME, H5_ITER_NATIVE, visit_object, w, H5O_INFO_BASIC)
#else
static herr_t visit_object(hid_t root, const char *name, const H5O_info_t *info, void *data) {
    return info->type == H5O_TYPE_DATASET ? check_dataset(data, root, name) : 0;
}
#define VISIT_OBJECTS(root, w) \
    H5Ovisit2(root, H5_INDEX_NAME, H5_ITER_NATIVE, visit_object, w, H5O_INFO_BASIC)
#endif

/* ---- the three passes ---------------------------------------------------- */

/* Access lists for passes 2 and 3: no external link is followed. */
static int make_lists(walk *w) {
    w->lapl = H5Pcreate(H5P_LINK_ACCESS);
    w->dapl = H5Pcreate(H5P_DATASET_ACCESS);
    return w->lapl >= 0 && w->dapl >= 0 &&
                   H5Pset_elink_cb(w->lapl, no_external_traversal, NULL) >= 0 &&
                   H5Pset_elink_cb(w->dapl, no_external_traversal, NULL) >= 0
               ? 0
               : -1;
}

static int walk_failed(walk *w, const char *what) {
    if (w->status != SP_OK) return w->status;
    char cause[256];
    spi_h5r_last_error(cause, sizeof cause);
    return w->status = spi_error_set(w->err, SP_ERR_CORRUPT,
                                     "%s: cannot %s: %s. The file is truncated or damaged.",
                                     w->path, what, cause[0] ? cause : "HDF5 error");
}

int spi_h5r_check_policy(hid_t file, const char *path, spi_error *err) {
    walk w = {.path = path, .err = err, .status = SP_OK, .lapl = -1, .dapl = -1};
    hid_t root = H5Gopen2(file, "/", H5P_DEFAULT);
    if (root < 0) {
        walk_failed(&w, "open the root group");
    } else if (make_lists(&w) != 0) {
        w.status = spi_error_set(err, SP_ERR_HDF5, "%s: cannot set up HDF5 property lists",
                                 path);
    } else if (VISIT_LINKS(root, &w) != 0 || w.status != SP_OK) {
        walk_failed(&w, "list the file's links");
    } else if (VISIT_OBJECTS(root, &w) != 0 || w.status != SP_OK) {
        walk_failed(&w, "list the file's objects");
    }
    for (size_t i = 0; i < w.soft_count && w.status == SP_OK; i++)
        if (H5Oexists_by_name(root, w.soft[i], w.lapl) <= 0)
            refuse(&w, w.soft[i], "is a soft link that does not resolve inside the file "
                                  "(a dangling link or a cycle)");
    for (size_t i = 0; i < w.soft_count; i++) spi_free(w.soft[i]);
    spi_free(w.soft);
    if (w.lapl >= 0) H5Pclose(w.lapl);
    if (w.dapl >= 0) H5Pclose(w.dapl);
    if (root >= 0) H5Gclose(root);
    return w.status;
}

/* ---- open ---------------------------------------------------------------- */

static int not_readable(const char *path, spi_error *err) {
    char cause[256];
    spi_h5r_last_error(cause, sizeof cause);
    return spi_error_set(err, SP_ERR_NOT_A_PROFILE,
                         "%s is not a readable HDF5 profiling file. A run that was "
                         "interrupted while writing leaves a truncated file behind; the "
                         "underlying error was: %s",
                         path, cause[0] ? cause : "not an HDF5 file");
}

/* STRONG close: H5Fclose also closes any identifier an error path left
 * open, so a damaged file cannot leak handles. */
static hid_t read_fapl(void) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        H5Pclose(fapl);
        fapl = -1;
    }
    return fapl;
}

static hid_t open_path(const char *path) {
#if H5_VERSION_GE(1, 12, 0)
    htri_t is_hdf5 = H5Fis_accessible(path, H5P_DEFAULT);
#else
    htri_t is_hdf5 = H5Fis_hdf5(path);
#endif
    hid_t fapl = read_fapl();
    hid_t file = is_hdf5 > 0 && fapl >= 0 ? H5Fopen(path, H5F_ACC_RDONLY, fapl) : -1;
    if (fapl >= 0) H5Pclose(fapl);
    return file;
}

/* The core driver serves the file from memory (no backing store, so
 * nothing is ever written); H5Pset_file_image copies the caller's bytes,
 * so HDF5 never touches the caller's buffer. */
static hid_t open_image(const void *image, size_t size, const char *name) {
    hid_t fapl = read_fapl();
    hid_t file = -1;
    if (fapl >= 0 && size > 0 && H5Pset_fapl_core(fapl, 64 * 1024, false) >= 0 &&
        H5Pset_file_image(fapl, (void *)(uintptr_t)image, size) >= 0)
        file = H5Fopen(name, H5F_ACC_RDONLY, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    return file;
}

int spi_h5r_open_checked(const char *path, const void *image, size_t size, hid_t *file,
                         spi_error *err) {
    *file = image ? open_image(image, size, path) : open_path(path);
    if (*file < 0) return not_readable(path, err);
    int status = spi_h5r_check_policy(*file, path, err);
    if (status != SP_OK) {
        H5Fclose(*file);
        *file = -1;
    }
    return status;
}
