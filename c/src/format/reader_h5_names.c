/*
 * reader_h5_names.c - a group's link names in one pass (reader_h5_names.h).
 *
 * Why not H5Lget_name_by_idx per index: on a group stored as a symbol
 * table (what h5py writes by default) or without a name index, each call
 * walks or sorts the group's links again, so listing n links cost O(n^2):
 * a valid file with 20,000 perf regions ran past the tools' read limit and
 * was refused as damaged (issue 29 item 9). H5Literate2 visits the links
 * once, in the same name order (H5Literate: HDF5 sorts a group without a
 * name index once per iteration, not once per name).
 */
#include "format/reader_h5_names.h"

#include <string.h>

#include "util/alloc.h"

/* HDF5 1.12 renamed the iteration (H5Literate2, H5L_info2_t); 1.10 has
 * only H5Literate with H5L_info_t. The callback uses neither's fields. */
#if H5_VERSION_GE(1, 12, 0)
typedef H5L_info2_t link_info;
#define ITERATE_LINKS H5Literate2
#else
typedef H5L_info_t link_info;
#define ITERATE_LINKS H5Literate
#endif

typedef struct name_list {
    char **names;
    hsize_t count;
    hsize_t capacity;
    int status;
} name_list;

static herr_t add_name(hid_t group, const char *name, const link_info *info, void *data) {
    (void)group;
    (void)info;
    name_list *list = data;
    if (list->count == list->capacity) {
        hsize_t capacity = list->capacity * 2;
        char **grown = spi_reallocarray(list->names, (size_t)capacity, sizeof *grown);
        if (!grown) {
            list->status = SP_ERR_OUT_OF_MEMORY;
            return 1; /* stops the iteration */
        }
        memset(grown + list->capacity, 0, (size_t)(capacity - list->capacity) * sizeof *grown);
        list->names = grown;
        list->capacity = capacity;
    }
    if (!(list->names[list->count] = spi_strdup(name))) {
        list->status = SP_ERR_OUT_OF_MEMORY;
        return 1;
    }
    list->count++;
    return 0;
}

int spi_h5r_list_names(const spi_h5r *h, hid_t group, char ***names, hsize_t *count) {
    *names = NULL;
    *count = 0;
    H5G_info_t info;
    if (H5Gget_info(group, &info) < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot list a group", h->path);
    /* room for what the group says it holds (at least one), grown if it
     * lied: the count is only a hint from the file */
    name_list list = {.capacity = info.nlinks ? info.nlinks : 1, .status = SP_OK};
    if (list.capacity > ((hsize_t)1 << 24)) list.capacity = (hsize_t)1 << 24;
    list.names = spi_calloc((size_t)list.capacity, sizeof *list.names);
    if (!list.names)
        return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
    hsize_t next = 0;
    herr_t rc = ITERATE_LINKS(group, H5_INDEX_NAME, H5_ITER_INC, &next, add_name, &list);
    int status = list.status;
    if (status == SP_OK && rc < 0)
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot list a group", h->path);
    else if (status == SP_ERR_OUT_OF_MEMORY)
        spi_error_set(h->err, status, "%s: out of memory", h->path);
    if (status != SP_OK) {
        spi_h5r_free_strings(list.names, list.count);
        return status;
    }
    *names = list.names;
    *count = list.count;
    return SP_OK;
}
