/*
 * reader.c - the reader's front door: decide what kind of file a path is,
 * hand it to the HDF5 or the trace back end, then compute every row's
 * statistics (profile/profile_build.c) once the back end filled the rows.
 *
 * The kind is decided from the first bytes because users rename files; only
 * a *.spt name overrides it, so that a trace with a damaged magic is
 * reported in trace terms rather than as "not HDF5".
 */
#include "format/reader.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util/alloc.h"

static const char trace_magic[8] = {'S', 'C', 'O', 'P', 'E', 'P', 'R', 'F'};

static bool has_suffix(const char *text, const char *suffix) {
    size_t len = strlen(text), suffix_len = strlen(suffix);
    return len >= suffix_len && strcmp(text + len - suffix_len, suffix) == 0;
}

/* 1 when the file starts with the trace magic, 0 otherwise (also when it is
 * shorter or unreadable: the back end then reports the real problem). */
static int starts_with_trace_magic(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return 0;
    char head[sizeof trace_magic];
    size_t got = fread(head, 1, sizeof head, file);
    fclose(file);
    return got == sizeof head && memcmp(head, trace_magic, sizeof head) == 0;
}

/* What every read does after its back end: the statistics of a full read,
 * or the profile released on error. */
static int finish(spi_profile *out, const char *path, unsigned flags, int status,
                  spi_error *err) {
    if (status == SP_OK) {
        out->summary_only = (flags & SPI_READ_SUMMARY_ONLY) != 0;
        if (!out->summary_only)
            status = spi_profile_compute_stats(out, path, (flags & SPI_READ_WITH_ENDS) != 0, err);
    }
    if (status != SP_OK) spi_profile_free(out);
    return status;
}

int spi_profile_read(spi_profile *out, const char *path, unsigned flags, spi_error *err) {
    if (!out || !path || (flags & ~(SPI_READ_SUMMARY_ONLY | SPI_READ_WITH_ENDS | SPI_READ_CALLS_ON_DEMAND)))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "spi_profile_read: invalid argument");
    *out = (spi_profile){0};
    bool trace = has_suffix(path, ".spt");

    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return spi_error_set(err, SP_ERR_FILE_NOT_FOUND, "%s file not found: %s",
                                 trace ? "trace" : "HDF5", path);
        return spi_error_set(err, SP_ERR_NOT_A_PROFILE, "%s: cannot access the file: %s",
                             path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return spi_error_set(err, SP_ERR_NOT_A_PROFILE,
                             "%s is not a readable HDF5 profiling file: not a regular file",
                             path);

    int status = (trace || starts_with_trace_magic(path))
                     ? spi_read_spt(out, path, flags, err)
                     : spi_read_h5(out, path, flags, err);
    return finish(out, path, flags, status, err);
}

int spi_profile_read_image(spi_profile *out, const void *image, size_t size, const char *name,
                           unsigned flags, spi_error *err) {
    if (!out || !image || !name || (flags & ~(SPI_READ_SUMMARY_ONLY | SPI_READ_WITH_ENDS | SPI_READ_CALLS_ON_DEMAND)))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "spi_profile_read_image: invalid argument");
    *out = (spi_profile){0};
    bool trace = size >= sizeof trace_magic && memcmp(image, trace_magic, sizeof trace_magic) == 0;
    int status = trace ? spi_read_spt_image(out, image, size, name, flags, err)
                       : spi_read_h5_image(out, image, size, name, flags, err);
    return finish(out, name, flags, status, err);
}
