/*
 * reader_spt.c - native trace files (.spt, FORMAT.md 6).
 *
 * A trace is small and written once, so it is read whole into memory and
 * parsed from a cursor that checks every length against the bytes left
 * before using it. The byte order is the writer's: the version field decides
 * it (little-endian first, as the reference reader does), and every later
 * integer follows that choice. A call count is checked against the bytes
 * left before anything is allocated, so a corrupt count cannot ask for
 * terabytes.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "format/reader.h"

#define SPT_HEADER_BYTES 24

typedef struct spt_cursor {
    const unsigned char *data;
    size_t size;
    size_t pos;
    bool big_endian;
    const char *path;
    spi_error *err;
} spt_cursor;

static uint64_t load_uint(const unsigned char *p, size_t bytes, bool big_endian) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; i++) {
        size_t k = big_endian ? i : bytes - 1 - i;
        value = (value << 8) | p[k];
    }
    return value;
}

static int truncated(spt_cursor *c, const char *detail) {
    return spi_error_set(c->err, SP_ERR_CORRUPT, "%s: truncated trace file (%s)", c->path,
                         detail);
}

static int take_i32(spt_cursor *c, int32_t *value, const char *what) {
    if (c->size - c->pos < 4) return truncated(c, what);
    *value = (int32_t)(uint32_t)load_uint(c->data + c->pos, 4, c->big_endian);
    c->pos += 4;
    return SP_OK;
}

static int take_i64(spt_cursor *c, int64_t *value, const char *what) {
    if (c->size - c->pos < 8) return truncated(c, what);
    *value = (int64_t)load_uint(c->data + c->pos, 8, c->big_endian);
    c->pos += 8;
    return SP_OK;
}

/* A length-prefixed UTF-8 string as a new NUL-terminated copy. */
static int take_string(spt_cursor *c, char **out, const char *what) {
    int32_t len = 0; /* set by take_i32 on success; 0 keeps -O3 analysis quiet */
    int status = take_i32(c, &len, what);
    if (status != SP_OK) return status;
    if (len < 0) return truncated(c, what);
    if (c->size - c->pos < (size_t)len) return truncated(c, what);
    *out = spi_strndup((const char *)c->data + c->pos, (size_t)len);
    if (!*out) return spi_error_set(c->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", c->path);
    c->pos += (size_t)len;
    return SP_OK;
}

/* Python's repr() of a bytes object, for the wrong-magic message. */
static void bytes_repr(char *buf, size_t buf_bytes, const unsigned char *bytes, size_t len) {
    bool has_single = memchr(bytes, '\'', len) != NULL;
    bool has_double = memchr(bytes, '"', len) != NULL;
    char quote = (has_single && !has_double) ? '"' : '\'';
    size_t pos = 0;
#define PUT(...) pos += (size_t)snprintf(buf + pos, pos < buf_bytes ? buf_bytes - pos : 0, __VA_ARGS__)
    PUT("b%c", quote);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = bytes[i];
        if (ch == '\\' || ch == (unsigned char)quote) PUT("\\%c", ch);
        else if (ch == '\n') PUT("\\n");
        else if (ch == '\r') PUT("\\r");
        else if (ch == '\t') PUT("\\t");
        else if (ch < 0x20 || ch >= 0x7f) PUT("\\x%02x", ch);
        else PUT("%c", ch);
    }
    PUT("%c", quote);
#undef PUT
}

static int read_whole_file(const char *path, unsigned char **data, size_t *size,
                           spi_error *err) {
    FILE *file = fopen(path, "rb");
    if (!file)
        return spi_error_set(err, SP_ERR_NOT_A_PROFILE, "%s: cannot open the trace file", path);
    unsigned char *buf = NULL;
    size_t len = 0, capacity = 0;
    int status = SP_OK;
    for (;;) {
        if (len == capacity) {
            size_t grown_capacity = capacity ? capacity * 2 : 4096;
            unsigned char *grown = spi_reallocarray(buf, grown_capacity, 1);
            if (!grown) {
                status = spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
                break;
            }
            buf = grown;
            capacity = grown_capacity;
        }
        size_t got = fread(buf + len, 1, capacity - len, file);
        len += got;
        if (got == 0) {
            if (ferror(file))
                status = spi_error_set(err, SP_ERR_NOT_A_PROFILE,
                                       "%s: cannot read the trace file", path);
            break;
        }
    }
    fclose(file);
    if (status != SP_OK) {
        spi_free(buf);
        return status;
    }
    *data = buf;
    *size = len;
    return SP_OK;
}

static int read_region(spt_cursor *c, spi_profile *out, uint32_t rank, int version,
                       unsigned flags) {
    char *name = NULL, *source = NULL;
    int32_t line = -1;
    int64_t calls = 0;
    int status = take_string(c, &name, "region name");
    if (status == SP_OK && version >= 2) status = take_string(c, &source, "source path");
    if (status == SP_OK && version >= 2) status = take_i32(c, &line, "source line");
    if (status == SP_OK) status = take_i64(c, &calls, "call count");
    /* Both timestamp arrays must fit in what is left; checked in two steps
     * so that the multiplication cannot overflow. */
    if (status == SP_OK && (calls < 0 || (uint64_t)calls > (c->size - c->pos) / 16))
        status = truncated(c, "timestamps");

    uint32_t region = 0;
    if (status == SP_OK) {
        status = spi_profile_intern_name(out, name, &region);
        if (status != SP_OK)
            status = spi_error_set(c->err, status, "%s: cannot store region %s", c->path, name);
    }
    spi_row *row = status == SP_OK ? spi_profile_append_row(out) : NULL;
    if (status == SP_OK && !row)
        status = spi_error_set(c->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", c->path);
    if (status == SP_OK) {
        uint64_t n = (uint64_t)calls;
        row->region = region;
        row->rank = rank;
        row->count = n;
        row->source_line = line < 0 ? -1 : line;
        if (source && *source) {
            row->source_file = source;
            source = NULL;
        }
        const unsigned char *starts = c->data + c->pos;
        const unsigned char *ends = starts + n * 8;
        c->pos += (size_t)n * 16;
        if (n > 0 && !(flags & SPI_READ_SUMMARY_ONLY)) {
            row->starts = spi_calloc(n, sizeof *row->starts);
            row->durations = spi_calloc(n, sizeof *row->durations);
            if (!row->starts || !row->durations)
                status = spi_error_set(c->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", c->path);
            for (uint64_t i = 0; status == SP_OK && i < n; i++) {
                uint64_t s = load_uint(starts + i * 8, 8, c->big_endian);
                uint64_t e = load_uint(ends + i * 8, 8, c->big_endian);
                row->starts[i] = (int64_t)s;
                /* Wrapping subtraction: a hostile end before its start must
                 * not be undefined behaviour; nesting checks catch it later. */
                row->durations[i] = (int64_t)(e - s);
            }
        }
    }
    spi_free(name);
    spi_free(source);
    return status;
}

static int no_summary(const char *path, spi_error *err) {
    return spi_error_set(err, SP_ERR_NO_SUMMARY,
                         "%s: summary-only reads require a schema-2 or newer profiling file",
                         path);
}

int spi_read_spt(spi_profile *out, const char *path, unsigned flags, spi_error *err) {
    if (flags & SPI_READ_SUMMARY_ONLY) return no_summary(path, err);
    unsigned char *data = NULL;
    size_t size = 0;
    int status = read_whole_file(path, &data, &size, err);
    if (status != SP_OK) return status;
    status = spi_read_spt_image(out, data, size, path, flags, err);
    spi_free(data);
    return status;
}

int spi_read_spt_image(spi_profile *out, const void *image, size_t size, const char *path,
                       unsigned flags, spi_error *err) {
    if (flags & SPI_READ_SUMMARY_ONLY) return no_summary(path, err);
    const unsigned char *data = image;
    spt_cursor c = {.data = data, .size = size, .path = path, .err = err};
    if (size < SPT_HEADER_BYTES)
        return spi_error_set(err, SP_ERR_NOT_A_PROFILE, "%s: too short to be a trace file", path);
    if (memcmp(data, "SCOPEPRF", 8) != 0) {
        char found[64];
        bytes_repr(found, sizeof found, data, 8);
        return spi_error_set(err, SP_ERR_NOT_A_PROFILE,
                             "%s: not a scope-profiler Fortran trace (expected b'SCOPEPRF', "
                             "found %s)",
                             path, found);
    }
    int32_t little = (int32_t)(uint32_t)load_uint(data + 8, 4, false);
    int32_t big = (int32_t)(uint32_t)load_uint(data + 8, 4, true);
    if (little == 1 || little == 2) {
        c.big_endian = false;
    } else if (big == 1 || big == 2) {
        c.big_endian = true;
    } else {
        return spi_error_set(err, SP_ERR_SCHEMA_UNSUPPORTED,
                             "%s: unsupported trace format version %" PRId32
                             " (this scope-profiler reads versions (1, 2))",
                             path, little);
    }
    c.pos = 8;
    int32_t version = 0, rank = 0;
    int64_t regions;
    take_i32(&c, &version, "version");
    take_i32(&c, &rank, "rank");
    take_i64(&c, &regions, "region count");
    if (rank < 0)
        return spi_error_set(err, SP_ERR_CORRUPT, "%s: negative rank %" PRId32 " in trace header",
                             path, rank);
    if (regions < 0) return truncated(&c, "negative region count");
    out->trace_version = version;
    out->rank_count = 1;
    int status = SP_OK;
    for (int64_t r = 0; r < regions && status == SP_OK; r++)
        status = read_region(&c, out, (uint32_t)rank, version, flags);
    if (status == SP_OK && c.pos != size)
        status = spi_error_set(err, SP_ERR_CORRUPT, "%s: %zu trailing byte(s) after the last region",
                               path, size - c.pos);
    return status;
}
