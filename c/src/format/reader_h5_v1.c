/*
 * reader_h5_v1.c - schema 1, the original per-rank layout (FORMAT.md 4.3):
 * rank<N>/regions/<name>/{start_times,end_times} plus optional per-call
 * columns and source/tag attributes.
 *
 * There is no region table in this layout: it is built here by first
 * appearance, ranks in numeric order and regions in h5py member (name)
 * order, which is the order the reference reader produces. Tags were a
 * string-array attribute then; they are turned into the JSON text later
 * schemas store, so that the model has one form.
 */
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "profile/profile.h"
#include "format/reader.h"
#include "format/reader_h5_util.h"
#include "format/schema.h"

static int oom(const spi_h5r *h) {
    return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
}

/* JSON list of strings, escaped as json.dumps does (ASCII only). */
static char *tags_to_json(char **tags, size_t count) {
    size_t bytes = 3;
    for (size_t i = 0; i < count; i++) bytes += strlen(tags[i]) * 6 + 4;
    char *json = spi_malloc(bytes);
    if (!json) return NULL;
    size_t pos = 0;
    json[pos++] = '[';
    for (size_t i = 0; i < count; i++) {
        if (i) {
            json[pos++] = ',';
            json[pos++] = ' ';
        }
        json[pos++] = '"';
        for (const unsigned char *p = (const unsigned char *)tags[i]; *p; p++) {
            if (*p == '"' || *p == '\\') {
                json[pos++] = '\\';
                json[pos++] = (char)*p;
            } else if (*p < 0x20) {
                pos += (size_t)snprintf(json + pos, bytes - pos, "\\u%04x", *p);
            } else {
                /* UTF-8 passes through: JSON allows it, and decoding
                 * json.dumps' \u escapes back gives the same text. */
                json[pos++] = (char)*p;
            }
        }
        json[pos++] = '"';
    }
    json[pos++] = ']';
    json[pos] = '\0';
    return json;
}

static int read_optional_column(const spi_h5r *h, hid_t group, const char *name, uint64_t count,
                                int64_t **out) {
    if (!spi_h5r_exists(group, name)) return SP_OK;
    return spi_h5r_read_int_column(h, group, name, false, count, (void **)out, NULL);
}

static int read_region(const spi_h5r *h, hid_t group, uint32_t rank, const char *name,
                       spi_profile *out) {
    uint32_t region = 0;
    if (spi_profile_intern_name(out, name, &region) != SP_OK) return oom(h);
    spi_row *row = spi_profile_append_row(out);
    if (!row) return oom(h);
    row->rank = rank;
    row->region = region;

    hsize_t count = 0;
    int64_t *ends = NULL;
    int status = spi_h5r_read_int_column(h, group, "start_times", false, SPI_H5R_ANY_LENGTH,
                                         (void **)&row->starts, &count);
    if (status == SP_OK)
        status = spi_h5r_read_int_column(h, group, "end_times", false, count, (void **)&ends,
                                         NULL);
    if (status != SP_OK) {
        spi_free(ends);
        return status;
    }
    row->count = count;
    for (hsize_t i = 0; i < count; i++)
        ends[i] = (int64_t)((uint64_t)ends[i] - (uint64_t)row->starts[i]);
    row->durations = ends;
    if (count == 0) {
        spi_free(row->starts);
        spi_free(row->durations);
        row->starts = row->durations = NULL;
    }

    status = read_optional_column(h, group, "gpu_durations", count, &row->gpu_durations);
    if (status == SP_OK) status = read_optional_column(h, group, "call_ids", count, &row->call_ids);
    if (status == SP_OK)
        status = read_optional_column(h, group, "parent_ids", count, &row->parent_ids);
    if (row->gpu_durations) out->event_columns |= SPI_EV_BIT(SPI_EV_GPU_DURATIONS);
    if (row->call_ids) out->event_columns |= SPI_EV_BIT(SPI_EV_CALL_IDS);
    if (row->parent_ids) out->event_columns |= SPI_EV_BIT(SPI_EV_PARENT_IDS);

    bool present = false;
    char *text = NULL;
    if (status == SP_OK) status = spi_h5r_attr_string(h, group, "source_file", &text, &present);
    if (status == SP_OK && present && text[0]) {
        row->source_file = text;
        text = NULL;
    }
    spi_free(text);
    text = NULL;
    int64_t line = -1;
    if (status == SP_OK) status = spi_h5r_attr_int(h, group, "source_lineno", &line, &present);
    if (status == SP_OK && present && line >= 0) row->source_line = line;
    if (status == SP_OK) status = spi_h5r_attr_string(h, group, "source_text", &text, &present);
    if (status == SP_OK && present && text[0]) {
        row->source_text = text;
        text = NULL;
    }
    spi_free(text);
    char **tags = NULL;
    size_t tag_count = 0;
    if (status == SP_OK) status = spi_h5r_attr_strings(h, group, "tags", &tags, &tag_count, &present);
    if (status == SP_OK && present && tag_count > 0 &&
        !(row->tags_json = tags_to_json(tags, tag_count)))
        status = oom(h);
    spi_h5r_free_strings(tags, tag_count);
    return status;
}

int spi_h5r_read_schema1(const spi_h5r *h, spi_profile *out) {
    uint32_t *ranks = NULL;
    size_t rank_count = 0;
    int status = spi_h5r_rank_groups(h, &ranks, &rank_count);
    if (status != SP_OK) return status;
    out->rank_count = (uint32_t)rank_count;
    for (size_t r = 0; status == SP_OK && r < rank_count; r++) {
        char path[64];
        snprintf(path, sizeof path, "rank%u/regions", ranks[r]);
        if (!spi_h5r_exists(h->file, path)) continue;
        hid_t regions = H5Gopen2(h->file, path, H5P_DEFAULT);
        char **names = NULL;
        hsize_t n = 0;
        status = regions >= 0 ? spi_h5r_list(h, regions, &names, &n)
                              : spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open %s",
                                              h->path, path);
        for (hsize_t i = 0; status == SP_OK && i < n; i++) {
            hid_t group = H5Gopen2(regions, names[i], H5P_DEFAULT);
            if (group < 0) {
                status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open %s/%s", h->path,
                                       path, names[i]);
                break;
            }
            status = read_region(h, group, ranks[r], names[i], out);
            H5Gclose(group);
        }
        spi_h5r_free_strings(names, n);
        if (regions >= 0) H5Gclose(regions);
    }
    spi_free(ranks);
    return status;
}
