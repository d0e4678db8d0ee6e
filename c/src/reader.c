/*
 * reader.c - the reader's front door: decide what kind of file a path is,
 * hand it to the HDF5 or the trace back end, and own the helpers both use
 * to build a profile row by row.
 *
 * The kind is decided from the first bytes because users rename files; only
 * a *.spt name overrides it, so that a trace with a damaged magic is
 * reported in trace terms rather than as "not HDF5".
 */
#include "reader.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"

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

int spi_profile_read(spi_profile *out, const char *path, unsigned flags, spi_error *err) {
    if (!out || !path || (flags & ~(SPI_READ_SUMMARY_ONLY | SPI_READ_WITH_ENDS)))
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
    if (status == SP_OK) {
        out->summary_only = (flags & SPI_READ_SUMMARY_ONLY) != 0;
        if (!out->summary_only)
            status = spi_profile_compute_stats(out, path, (flags & SPI_READ_WITH_ENDS) != 0, err);
    }
    if (status != SP_OK) spi_profile_free(out);
    return status;
}

int spi_profile_intern_name(spi_profile *profile, const char *name, uint32_t *id) {
    for (size_t i = 0; i < profile->name_count; i++) {
        if (strcmp(profile->names[i], name) == 0) {
            *id = (uint32_t)i;
            return SP_OK;
        }
    }
    if (profile->name_count >= UINT32_MAX) return SP_ERR_CORRUPT;
    char *copy = spi_strdup(name);
    char **grown = copy ? spi_reallocarray(profile->names, profile->name_count + 1,
                                           sizeof *grown)
                        : NULL;
    if (!grown) {
        spi_free(copy);
        return SP_ERR_OUT_OF_MEMORY;
    }
    profile->names = grown;
    profile->names[profile->name_count] = copy;
    *id = (uint32_t)profile->name_count++;
    return SP_OK;
}

spi_row *spi_profile_append_row(spi_profile *profile) {
    /* Capacity doubles at 4, 8, 16, ...; it is implied by row_count, so no
     * capacity field is needed in the shared model. */
    size_t count = profile->row_count;
    if (count == 0 || (count >= 4 && (count & (count - 1)) == 0)) {
        size_t capacity = count ? count * 2 : 4;
        spi_row *grown = spi_reallocarray(profile->rows, capacity, sizeof *grown);
        if (!grown) return NULL;
        profile->rows = grown;
    }
    spi_row *row = &profile->rows[profile->row_count++];
    *row = (spi_row){.exclusive_total = -1, .source_line = -1, .aggregate_exclusive = -1};
    return row;
}

static bool add_overflows(int64_t a, int64_t b) {
    return (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
}

/* Exact check that no start + duration, running total of durations or GPU
 * total of a row leaves int64 (only damage can make them). */
static bool row_overflows(const spi_row *row) {
    int64_t total = 0, gpu_total = 0;
    for (uint64_t k = 0; k < row->count; k++) {
        int64_t d = row->durations[k];
        int64_t g = row->gpu_durations ? row->gpu_durations[k] : 0;
        if (add_overflows(row->starts[k], d) || add_overflows(total, d) ||
            (g > 0 && add_overflows(gpu_total, g)))
            return true;
        total += d;
        if (g > 0) gpu_total += g;
    }
    return false;
}

int spi_profile_compute_stats(spi_profile *profile, const char *path, bool with_ends,
                              spi_error *err) {
    profile->event_count = 0;
    for (size_t i = 0; i < profile->row_count; i++) {
        spi_row *row = &profile->rows[i];
        if (row->aggregate) continue;
        if (row->count > 0 && (!row->starts || !row->durations)) continue;
        if (with_ends && row->count > 0 &&
            !(row->ends = spi_malloc((size_t)row->count * sizeof *row->ends)))
            return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        /* One fused pass computes the statistics with wrapping arithmetic
         * and says whether an overflow was possible; only then (damaged
         * values) is the row checked exactly, and refused if it overflows. */
        bool safe = spi_stats_compute(&row->stats, row->starts, row->durations,
                                      row->gpu_durations, row->count, row->ends);
        if (!safe && row_overflows(row))
            return spi_error_set(err, SP_ERR_CORRUPT,
                                 "%s: region %s on rank %u has timestamps out of range. "
                                 "The file is damaged.",
                                 path,
                                 row->region < profile->name_count ? profile->names[row->region]
                                                                   : "?",
                                 row->rank);
        profile->event_count += row->count;
    }
    return SP_OK;
}
