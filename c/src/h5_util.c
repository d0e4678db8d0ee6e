/*
 * h5_util.c - see h5_util.h.
 */
#include "h5_util.h"

#include <stdio.h>
#include <string.h>

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
