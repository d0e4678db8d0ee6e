/*
 * output_check.c - whether a profile may be published at a path (output_check.h).
 *
 * Its own unit because every writer asks it: the streaming writer when it
 * creates its temporary, the publish step of both writers just before the
 * rename (h5_file_parts.c), the collective writer, and sp_setup long before
 * any of them. It reads nothing but the path's metadata.
 */
#include "format/output_check.h"

#include <limits.h>
#include <string.h>
#include <sys/stat.h>

int spi_output_path_check(const char *path, spi_error *err) {
    if (!path || !*path)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "the output path is empty");
    size_t len = strlen(path);
    if (path[len - 1] == '/')
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "%s: the output path names a directory, not a file", path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strlen(base) > NAME_MAX)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "%s: the file name is longer than %d bytes", path, NAME_MAX);
    /* rename() would replace whatever the path names: a device node, a
     * FIFO or a socket must never be replaced by a profile (CI runs as root) */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return spi_error_set(err, SP_ERR_OUTPUT,
                             "%s exists and is not a regular file (%s); refusing to replace it",
                             path,
                             S_ISDIR(st.st_mode)    ? "a directory"
                             : S_ISCHR(st.st_mode)  ? "a character device"
                             : S_ISBLK(st.st_mode)  ? "a block device"
                             : S_ISFIFO(st.st_mode) ? "a FIFO"
                             : S_ISSOCK(st.st_mode) ? "a socket"
                                                    : "not a file");
    return SP_OK;
}
