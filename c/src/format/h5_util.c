/*
 * h5_util.c - see h5_util.h.
 */
#include "format/h5_util.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "format/schema.h"
#include "scope_profiler.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/text.h"

void spi_h5_silence(spi_h5_silence_state *saved) {
    H5Eget_auto2(H5E_DEFAULT, &saved->func, &saved->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void spi_h5_restore(const spi_h5_silence_state *saved) {
    H5Eset_auto2(H5E_DEFAULT, saved->func, saved->data);
}

typedef struct last_message {
    char *buf;
    size_t buf_bytes;
} last_message;

static herr_t keep_message(unsigned depth, const H5E_error2_t *entry, void *data) {
    (void)depth;
    last_message *out = data;
    /* The walk goes from the innermost frame outwards: keep the first. */
    if (out->buf[0] == '\0' && entry->desc)
        snprintf(out->buf, out->buf_bytes, "%s (in %s)", entry->desc,
                 entry->func_name ? entry->func_name : "HDF5");
    return 0;
}

void spi_h5_last_message(char *buf, size_t buf_bytes) {
    if (!buf_bytes) return;
    buf[0] = '\0';
    last_message out = {buf, buf_bytes};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_message, &out);
    if (buf[0] == '\0') snprintf(buf, buf_bytes, "unknown HDF5 error");
}

/* ---- writing ----------------------------------------------------------- */

static int write_scalar_attr(hid_t object, const char *name, hid_t file_type,
                             hid_t memory_type, const void *value) {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = space >= 0 ? H5Acreate2(object, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT)
                            : -1;
    int ok = attr >= 0 && H5Awrite(attr, memory_type, value) >= 0;
    if (attr >= 0) H5Aclose(attr);
    if (space >= 0) H5Sclose(space);
    return ok ? SP_OK : SP_ERR_HDF5;
}

static atomic_bool utf8_repair_said;

const char **spi_h5_utf8_strings(const char *const *items, size_t count) {
    size_t first_bad = count;
    for (size_t i = 0; i < count && first_bad == count; i++)
        if (!spi_text_is_utf8(items[i])) first_bad = i;
    if (first_bad == count) return (const char **)items;
    const char **stored = spi_calloc(count ? count : 1, sizeof *stored);
    bool ok = stored != NULL;
    for (size_t i = 0; ok && i < count; i++) {
        stored[i] = items[i] ? items[i] : "";
        if (i >= first_bad && !spi_text_is_utf8(stored[i]))
            ok = (stored[i] = spi_text_utf8_repair(stored[i])) != NULL;
    }
    if (!ok) {
        spi_h5_utf8_release(stored, items, count);
        return NULL;
    }
    if (!atomic_exchange(&utf8_repair_said, true)) {
        char shown[96];
        spi_text_escape(shown, sizeof shown, items[first_bad]);
        spi_diag("a name or text that is not valid UTF-8 (\"%s\") is stored with U+FFFD in "
                 "place of each invalid byte", shown);
    }
    return stored;
}

void spi_h5_utf8_release(const char **stored, const char *const *items, size_t count) {
    if (!stored || stored == (const char **)items) return;
    for (size_t i = 0; i < count; i++)
        if (items[i] && stored[i] != items[i]) spi_free((char *)stored[i]);
    spi_free(stored);
}

int spi_h5_write_attr_string(hid_t object, const char *name, const char *value) {
    const char *text = value ? value : "";
    const char **stored = spi_h5_utf8_strings(&text, 1);
    if (!stored) return SP_ERR_OUT_OF_MEMORY;
    hid_t type = spi_elem_file_type(SPI_ELEM_STR);
    int status = type >= 0 ? write_scalar_attr(object, name, type, type, stored) : SP_ERR_HDF5;
    spi_elem_type_release(SPI_ELEM_STR, type);
    spi_h5_utf8_release(stored, &text, 1);
    return status;
}

int spi_h5_write_attr_i64(hid_t object, const char *name, int64_t value) {
    return write_scalar_attr(object, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

int spi_h5_write_attr_f64(hid_t object, const char *name, double value) {
    return write_scalar_attr(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

int spi_h5_write_attr_bool(hid_t object, const char *name, int64_t value) {
    hid_t type = H5Tenum_create(H5T_NATIVE_INT8);
    int8_t false_value = 0, true_value = 1, stored = value ? 1 : 0;
    int ok = type >= 0 && H5Tenum_insert(type, "FALSE", &false_value) >= 0 &&
             H5Tenum_insert(type, "TRUE", &true_value) >= 0 &&
             write_scalar_attr(object, name, type, type, &stored) == SP_OK;
    if (type >= 0) H5Tclose(type);
    return ok ? SP_OK : SP_ERR_HDF5;
}

int spi_h5_write_attr_strings(hid_t object, const char *name, char *const *items, size_t count) {
    hid_t type = spi_elem_file_type(SPI_ELEM_STR);
    hsize_t dims[1] = {count};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t attr = (type >= 0 && space >= 0)
                     ? H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT)
                     : -1;
    const char **stored = spi_h5_utf8_strings((const char *const *)items, count);
    int ok = attr >= 0 && (count == 0 || (stored && H5Awrite(attr, type, stored) >= 0));
    spi_h5_utf8_release(stored, (const char *const *)items, count);
    if (attr >= 0) H5Aclose(attr);
    if (space >= 0) H5Sclose(space);
    spi_elem_type_release(SPI_ELEM_STR, type);
    return ok ? SP_OK : SP_ERR_HDF5;
}

int spi_h5_write_dataset(hid_t parent, const char *name, hid_t file_type, hid_t memory_type,
                         int rank, const hsize_t *dims, const void *data) {
    hid_t space = H5Screate_simple(rank, dims, NULL);
    hid_t dset = space >= 0 ? H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT,
                                         H5P_DEFAULT, H5P_DEFAULT)
                            : -1;
    hsize_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    int ok = dset >= 0 && (n == 0 || H5Dwrite(dset, memory_type, H5S_ALL, H5S_ALL,
                                              H5P_DEFAULT, data) >= 0);
    if (dset >= 0) H5Dclose(dset);
    if (space >= 0) H5Sclose(space);
    return ok ? SP_OK : SP_ERR_HDF5;
}

hid_t spi_h5_create_group(hid_t parent, const char *name) {
    return H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

hid_t spi_h5_open_or_create_group(hid_t parent, const char *name) {
    if (H5Lexists(parent, name, H5P_DEFAULT) > 0) return H5Gopen2(parent, name, H5P_DEFAULT);
    return spi_h5_create_group(parent, name);
}
