/*
 * reader_h5.c - HDF5 profiles: version check, then the columnar (schema 2/3),
 * aggregate and summary-only readers. Schema 1 lives in reader_h5_v1.c;
 * metadata, lane tables and rank<N> groups in reader_h5_extra.c.
 *
 * Order of trust: the index columns are read and validated first (lengths,
 * region ids, then FORMAT.md 3.2: no row past the event columns, no two rows
 * overlapping). Only after that are offsets used to read events, so a
 * damaged index can never make the reader touch memory it did not size.
 *
 * Events are read column by column. Rows are visited in offset order and
 * neighbouring small rows are coalesced into one hyperslab read of at most
 * SPI_READ_BLOCK elements; a row bigger than that is read straight into its
 * own array. Memory stays at the final arrays plus one block, and files with
 * many tiny rows do not pay one HDF5 call per row. A compressed column of
 * the writers' layout is decoded by a few helper threads a few chunks
 * ahead of the reads (h5_chunk_stream.h); anything else, and any chunk
 * that is not what the layout promises, is read through H5Dread.
 *
 * The encoding is chosen by column name, not by the schema number (FORMAT.md
 * 3.1): start_deltas present = schema-3 deltas, else absolute
 * start_times/end_times. Deltas restart at every row; the prefix sum never
 * runs across rows. Sums use wrapping unsigned arithmetic so that hostile
 * values cannot cause undefined behaviour.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "format/h5_chunk_stream.h"
#include "format/h5_util.h"
#include "format/reader.h"
#include "format/reader_calls.h"
#include "format/reader_lock.h"
#include "format/reader_h5_util.h"
#include "format/reader_policy.h"
#include "format/schema.h"
#include "profile/row_stats.h"

#define SPI_READ_BLOCK ((hsize_t)1 << 20)


static const char *idx_name(spi_index_col col) { return spi_index_columns[col].name; }
static const char *ev_name(spi_event_col col) { return spi_event_columns[col].name; }

static int oom(const spi_h5r *h) {
    return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
}

/* ---- schema version (FORMAT.md 4.1) ------------------------------------- */

/* Python's repr of the offending attribute value, as far as it matters. */
static void attr_repr(hid_t attr, hid_t type, char *buf, size_t buf_bytes) {
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    unsigned char raw[16] = {0};
    snprintf(buf, buf_bytes, "<unreadable>");
    if (cls == H5T_ENUM && size <= sizeof raw && H5Aread(attr, type, raw) >= 0) {
        bool any = false;
        for (size_t i = 0; i < size; i++) any |= raw[i] != 0;
        snprintf(buf, buf_bytes, "%s", any ? "True" : "False");
    } else if (cls == H5T_FLOAT && spi_h5r_sane_scalar_type(type, H5T_FLOAT)) {
        double v;
        if (H5Aread(attr, H5T_NATIVE_DOUBLE, &v) >= 0)
            snprintf(buf, buf_bytes, v == (double)(int64_t)v ? "%.1f" : "%.17g", v);
    } else if (cls == H5T_STRING) {
        spi_h5r h = {0};
        spi_error ignored;
        spi_error_clear(&ignored);
        h.path = "";
        h.err = &ignored;
        char *text = NULL;
        if (spi_h5r_read_strings(&h, attr, true, type, 1, "", &text) == SP_OK)
            snprintf(buf, buf_bytes, "'%s'", text);
        spi_free(text);
    } else {
        snprintf(buf, buf_bytes, "<a value of HDF5 type class %d>", (int)cls);
    }
}

static int read_schema_version(const spi_h5r *h, int *version) {
    htri_t exists = H5Aexists(h->file, SPI_ATTR_SCHEMA);
    if (exists < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read the root attributes",
                             h->path);
    if (!exists) {
        *version = 1;
        return SP_OK;
    }
    hid_t attr = H5Aopen(h->file, SPI_ATTR_SCHEMA, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    hssize_t elements = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    int status = SP_OK;
    int64_t value = 0;
    if (type < 0 || elements < 0) {
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read attribute %s", h->path,
                               SPI_ATTR_SCHEMA);
    } else if (!spi_h5r_sane_scalar_type(type, H5T_INTEGER) || elements != 1) {
        char repr[256];
        attr_repr(attr, type, repr, sizeof repr);
        status = spi_error_set(h->err, SP_ERR_SCHEMA_UNSUPPORTED,
                               "%s: HDF5 schema version attribute '%s' must be an integer, got %s",
                               h->path, SPI_ATTR_SCHEMA, repr);
    } else if (H5Aread(attr, H5T_NATIVE_INT64, &value) < 0) {
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot read attribute %s", h->path,
                               SPI_ATTR_SCHEMA);
    } else if (value < 1) {
        status = spi_error_set(h->err, SP_ERR_SCHEMA_UNSUPPORTED,
                               "%s: Unsupported scope-profiler HDF5 schema version %" PRId64
                               "; versions must be positive",
                               h->path, value);
    } else if (value > SPI_SCHEMA_VERSION) {
        status = spi_error_set(h->err, SP_ERR_SCHEMA_UNSUPPORTED,
                               "%s: Unsupported scope-profiler HDF5 schema version %" PRId64
                               "; this package supports versions through %d. Upgrade "
                               "scope-profiler to read this file.",
                               h->path, value, SPI_SCHEMA_VERSION);
    }
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    if (attr >= 0) H5Aclose(attr);
    if (status == SP_OK) *version = (int)value;
    return status;
}

/* ---- the index --------------------------------------------------------- */

/* The index columns as read, before they become rows. */
typedef struct index_cols {
    hsize_t rows;
    uint64_t *region_ids, *ranks, *offsets, *counts;
    int64_t *source_lines, *exclusive_totals;
    char **source_files, **source_texts, **tags, **event_metadata;
    uint64_t *agg_counts;
    int64_t *agg_totals, *agg_minimums, *agg_maximums, *agg_exclusives;
    spi_stats *stats;
} index_cols;

static void index_cols_free(index_cols *c) {
    spi_free(c->region_ids);
    spi_free(c->ranks);
    spi_free(c->offsets);
    spi_free(c->counts);
    spi_free(c->source_lines);
    spi_free(c->exclusive_totals);
    spi_h5r_free_strings(c->source_files, c->rows);
    spi_h5r_free_strings(c->source_texts, c->rows);
    spi_h5r_free_strings(c->tags, c->rows);
    spi_h5r_free_strings(c->event_metadata, c->rows);
    spi_free(c->agg_counts);
    spi_free(c->agg_totals);
    spi_free(c->agg_minimums);
    spi_free(c->agg_maximums);
    spi_free(c->agg_exclusives);
    spi_free(c->stats);
}

/* An optional index column: read when present with exactly R rows. A
 * length-0 column is the aggregate layout's quirk (FORMAT.md 1.8) and reads
 * as absent there; anywhere else a wrong length is damage. */
static int optional_ints(const spi_h5r *h, hid_t index, spi_index_col col, hsize_t rows,
                         bool aggregate, bool is_unsigned, void **out) {
    const char *name = idx_name(col);
    if (!spi_h5r_exists(index, name)) return SP_OK;
    if (aggregate) {
        hid_t dset;
        hsize_t len;
        int status = spi_h5r_open_column(h, index, name, &dset, &len);
        if (status != SP_OK) return status;
        H5Dclose(dset);
        if (len != rows) return SP_OK;
    }
    return spi_h5r_read_int_column(h, index, name, is_unsigned, rows, out, NULL);
}

static int optional_strings(const spi_h5r *h, hid_t index, spi_index_col col, hsize_t rows,
                            bool aggregate, char ***out) {
    const char *name = idx_name(col);
    if (!spi_h5r_exists(index, name)) return SP_OK;
    if (aggregate) {
        hid_t dset;
        hsize_t len;
        int status = spi_h5r_open_column(h, index, name, &dset, &len);
        if (status != SP_OK) return status;
        H5Dclose(dset);
        if (len != rows) return SP_OK;
    }
    return spi_h5r_read_string_column(h, index, name, rows, out, NULL);
}

/* FORMAT.md 4.4: what a summary-only read requires of the index. */
static int check_summary_index(const spi_h5r *h, hid_t index, hsize_t rows) {
    if (!spi_h5r_exists(index, idx_name(SPI_IDX_SUMMARY_STATISTICS)))
        return spi_error_set(h->err, SP_ERR_NO_SUMMARY,
                             "%s: profiling file has no fixed-size summary statistics", h->path);
    static const spi_index_col required[] = {
        SPI_IDX_REGION_IDS, SPI_IDX_RANKS, SPI_IDX_EVENT_COUNTS, SPI_IDX_SOURCE_LINES,
        SPI_IDX_SOURCE_FILES, SPI_IDX_SOURCE_TEXTS, SPI_IDX_TAGS, SPI_IDX_SUMMARY_STATISTICS};
    char missing[512] = "";
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        if (spi_h5r_exists(index, idx_name(required[i]))) continue;
        size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "",
                 idx_name(required[i]));
    }
    if (missing[0])
        return spi_error_set(h->err, SP_ERR_NO_SUMMARY,
                             "%s: schema-2 summary index is missing dataset(s): %s", h->path,
                             missing);
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        hid_t dset = H5Dopen2(index, idx_name(required[i]), H5P_DEFAULT);
        hid_t space = dset >= 0 ? H5Dget_space(dset) : -1;
        int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
        hsize_t dims[H5S_MAX_RANK] = {0};
        if (ndims > 0) H5Sget_simple_extent_dims(space, dims, NULL);
        if (space >= 0) H5Sclose(space);
        if (dset >= 0) H5Dclose(dset);
        if (ndims == 1 && dims[0] == rows) continue;
        char shape[256] = "(";
        for (int d = 0; d < ndims; d++) {
            size_t used = strlen(shape);
            snprintf(shape + used, sizeof shape - used, "%llu%s", (unsigned long long)dims[d],
                     ndims == 1 ? ",)" : (d + 1 < ndims ? ", " : ")"));
        }
        if (ndims <= 0) snprintf(shape, sizeof shape, "()");
        return spi_error_set(h->err, SP_ERR_NO_SUMMARY,
                             "%s: rank_region_index/%s must be one-dimensional with %llu rows, "
                             "got shape %s",
                             h->path, idx_name(required[i]), (unsigned long long)rows, shape);
    }
    hid_t dset = H5Dopen2(index, idx_name(SPI_IDX_SUMMARY_STATISTICS), H5P_DEFAULT);
    hid_t type = dset >= 0 ? H5Dget_type(dset) : -1;
    int status = SP_OK;
    if (type < 0 || H5Tget_class(type) != H5T_COMPOUND) {
        status = spi_error_set(h->err, SP_ERR_NO_SUMMARY,
                               "%s: summary_statistics is not a compound dataset", h->path);
    } else {
        char absent[512] = "";
        for (int i = 0; i < SPI_STATS_FIELD_COUNT; i++) {
            if (H5Tget_member_index(type, spi_stats_field_names[i]) >= 0) continue;
            size_t used = strlen(absent);
            snprintf(absent + used, sizeof absent - used, "%s%s", used ? ", " : "",
                     spi_stats_field_names[i]);
        }
        if (absent[0])
            status = spi_error_set(h->err, SP_ERR_NO_SUMMARY,
                                   "%s: summary_statistics is missing field(s): %s", h->path,
                                   absent);
    }
    if (type >= 0) H5Tclose(type);
    if (dset >= 0) H5Dclose(dset);
    return status;
}

/* The stored compound before HDF5 converts it: at most a few dozen members,
 * each an integer or float HDF5 can convert, inside the compound's size.
 * Damaged member offsets or sizes otherwise reach HDF5's compound
 * conversion, which trusts them. */
static bool stats_type_sane(hid_t dset) {
    hid_t type = H5Dget_type(dset);
    bool ok = type >= 0 && H5Tget_class(type) == H5T_COMPOUND;
    size_t size = ok ? H5Tget_size(type) : 0;
    int members = ok ? H5Tget_nmembers(type) : -1;
    ok = ok && size > 0 && size <= 4096 && members > 0 && members <= 64;
    for (int i = 0; ok && i < members; i++) {
        hid_t member = H5Tget_member_type(type, (unsigned)i);
        size_t offset = H5Tget_member_offset(type, (unsigned)i);
        H5T_class_t cls = member >= 0 ? H5Tget_class(member) : H5T_NO_CLASS;
        ok = (spi_h5r_sane_scalar_type(member, H5T_INTEGER) ||
              spi_h5r_sane_scalar_type(member, H5T_FLOAT)) &&
             (cls == H5T_INTEGER || cls == H5T_FLOAT) && offset <= size &&
             H5Tget_size(member) <= size - offset;
        if (member >= 0) H5Tclose(member);
    }
    if (type >= 0) H5Tclose(type);
    return ok;
}

static int read_stats(const spi_h5r *h, hid_t index, hsize_t rows, spi_stats **out) {
    hid_t dset = H5Dopen2(index, idx_name(SPI_IDX_SUMMARY_STATISTICS), H5P_DEFAULT);
    hid_t mem = spi_stats_memory_type();
    spi_stats *stats = spi_calloc((size_t)rows ? (size_t)rows : 1, sizeof *stats);
    int status = SP_OK;
    bool range = false;
    hid_t dxpl = spi_h5r_strict_dxpl(&range);
    if (!stats) status = oom(h);
    else if (dset < 0 || !stats_type_sane(dset))
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s: rank_region_index/summary_statistics has a damaged "
                               "compound type",
                               h->path);
    /* The memory type names the fields, so HDF5 matches them by name and
     * the file's field order does not matter (FORMAT.md 2.1). */
    else if (mem < 0 || dxpl < 0 ||
             (rows > 0 && H5Dread(dset, mem, H5S_ALL, H5S_ALL, dxpl, stats) < 0))
        status = spi_error_set(h->err, SP_ERR_CORRUPT,
                               "%s: cannot read rank_region_index/summary_statistics%s. The file "
                               "is truncated or damaged.",
                               h->path, range ? " (a value out of range)" : "");
    /* A mean or m2 that is not finite (or a negative m2) cannot come from
     * any set of durations, and would print as invalid JSON. */
    for (hsize_t i = 0; status == SP_OK && i < rows; i++) {
        const char *why = NULL;
        if (!spi_stats_stored_valid(&stats[i], &why))
            status = spi_error_set(h->err, SP_ERR_CORRUPT,
                                   "%s: rank_region_index/summary_statistics row %llu: %s",
                                   h->path, (unsigned long long)i, why);
    }
    if (dxpl >= 0) H5Pclose(dxpl);
    if (mem >= 0) H5Tclose(mem);
    if (dset >= 0) H5Dclose(dset);
    if (status != SP_OK) {
        spi_free(stats);
        return status;
    }
    *out = stats;
    return SP_OK;
}

static int compare_pairs(const void *a, const void *b) {
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
    return 0;
}

/* No (region id, rank) pair may repeat in a summary index (FORMAT.md 4.4). */
static int check_no_duplicates(const spi_h5r *h, const index_cols *c) {
    if (c->rows < 2) return SP_OK;
    uint64_t *pairs = spi_calloc((size_t)c->rows, 2 * sizeof *pairs);
    if (!pairs) return oom(h);
    for (hsize_t i = 0; i < c->rows; i++) {
        pairs[2 * i] = c->region_ids[i];
        pairs[2 * i + 1] = c->ranks[i];
    }
    qsort(pairs, (size_t)c->rows, 2 * sizeof *pairs, compare_pairs);
    int status = SP_OK;
    for (hsize_t i = 1; i < c->rows && status == SP_OK; i++)
        if (compare_pairs(pairs + 2 * (i - 1), pairs + 2 * i) == 0)
            status = spi_error_set(h->err, SP_ERR_NO_SUMMARY,
                                   "%s: summary index contains a duplicate rank/region row",
                                   h->path);
    spi_free(pairs);
    return status;
}

static int read_index(const spi_h5r *h, hid_t index, bool aggregate, bool summary_only,
                      size_t name_count, index_cols *c) {
    hsize_t rows = 0;
    int status = spi_h5r_read_int_column(h, index, idx_name(SPI_IDX_REGION_IDS), true,
                                         SPI_H5R_ANY_LENGTH, (void **)&c->region_ids, &rows);
    if (status != SP_OK) return status;
    c->rows = rows;
    if (summary_only && !aggregate) {
        status = check_summary_index(h, index, rows);
        if (status != SP_OK) return status;
    }
    status = spi_h5r_read_int_column(h, index, idx_name(SPI_IDX_RANKS), true, rows,
                                     (void **)&c->ranks, NULL);
    for (hsize_t i = 0; status == SP_OK && i < rows; i++) {
        if (c->region_ids[i] >= name_count)
            status = spi_error_set(h->err, summary_only ? SP_ERR_NO_SUMMARY : SP_ERR_CORRUPT,
                                   "%s: summary index contains an out-of-range region id "
                                   "(row %llu has region id %llu, the region table has %zu names)",
                                   h->path, (unsigned long long)i,
                                   (unsigned long long)c->region_ids[i], name_count);
        else if (c->ranks[i] > UINT32_MAX)
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: row %llu has an invalid rank",
                                   h->path, (unsigned long long)i);
    }
    if (status == SP_OK && summary_only && !aggregate) status = check_no_duplicates(h, c);
    if (status != SP_OK) return status;

    if (aggregate) {
        static const spi_index_col agg[] = {SPI_IDX_AGGREGATE_COUNTS, SPI_IDX_AGGREGATE_TOTALS,
                                            SPI_IDX_AGGREGATE_MINIMUMS, SPI_IDX_AGGREGATE_MAXIMUMS,
                                            SPI_IDX_AGGREGATE_EXCLUSIVES};
        void **targets[] = {(void **)&c->agg_counts, (void **)&c->agg_totals,
                            (void **)&c->agg_minimums, (void **)&c->agg_maximums,
                            (void **)&c->agg_exclusives};
        for (size_t i = 0; i < 5 && status == SP_OK; i++) {
            /* Counts, totals, minimums and maximums are the rows' only data:
             * without them every row would read as 0 calls. Exclusives may
             * be absent (not computed). */
            if (!spi_h5r_exists(index, idx_name(agg[i]))) {
                if (agg[i] != SPI_IDX_AGGREGATE_EXCLUSIVES)
                    status = spi_error_set(h->err, SP_ERR_CORRUPT,
                                           "%s: aggregate file without rank_region_index/%s. The "
                                           "file is damaged.",
                                           h->path, idx_name(agg[i]));
                continue;
            }
            status = spi_h5r_read_int_column(h, index, idx_name(agg[i]), i == 0, rows,
                                             targets[i], NULL);
        }
    } else {
        if (!summary_only)
            status = spi_h5r_read_int_column(h, index, idx_name(SPI_IDX_EVENT_OFFSETS), true, rows,
                                             (void **)&c->offsets, NULL);
        if (status == SP_OK)
            status = spi_h5r_read_int_column(h, index, idx_name(SPI_IDX_EVENT_COUNTS), true, rows,
                                             (void **)&c->counts, NULL);
        if (status == SP_OK && summary_only) status = read_stats(h, index, rows, &c->stats);
    }
    if (status == SP_OK)
        status = optional_ints(h, index, SPI_IDX_SOURCE_LINES, rows, aggregate, false,
                               (void **)&c->source_lines);
    if (status == SP_OK)
        status = optional_ints(h, index, SPI_IDX_EXCLUSIVE_TOTALS, rows, aggregate, false,
                               (void **)&c->exclusive_totals);
    if (status == SP_OK)
        status = optional_strings(h, index, SPI_IDX_SOURCE_FILES, rows, aggregate,
                                  &c->source_files);
    if (status == SP_OK)
        status = optional_strings(h, index, SPI_IDX_SOURCE_TEXTS, rows, aggregate,
                                  &c->source_texts);
    if (status == SP_OK)
        status = optional_strings(h, index, SPI_IDX_TAGS, rows, aggregate, &c->tags);
    if (status == SP_OK && !summary_only)
        status = optional_strings(h, index, SPI_IDX_EVENT_METADATA, rows, aggregate,
                                  &c->event_metadata);
    return status;
}

/* Move the index columns into rows. Strings change owner (set to NULL in
 * the columns) so that the columns can be freed either way. */
static int index_to_rows(const spi_h5r *h, index_cols *c, bool aggregate, spi_profile *out) {
    if (c->rows == 0) return SP_OK;
    out->rows = spi_calloc((size_t)c->rows, sizeof *out->rows);
    if (!out->rows) return oom(h);
    out->row_count = (size_t)c->rows;
    for (hsize_t i = 0; i < c->rows; i++) {
        spi_row *row = &out->rows[i];
        *row = (spi_row){.exclusive_total = -1, .source_line = -1, .aggregate_exclusive = -1};
        row->region = (uint32_t)c->region_ids[i];
        row->rank = (uint32_t)c->ranks[i];
        if (c->counts) row->count = c->counts[i];
        if (c->stats) row->stats = c->stats[i];
        if (c->source_lines && c->source_lines[i] >= 0) row->source_line = c->source_lines[i];
        if (c->exclusive_totals && c->exclusive_totals[i] >= 0)
            row->exclusive_total = c->exclusive_totals[i];
        /* "" means unknown / not captured (FORMAT.md 2.5); "" tags and
         * event metadata mean "[]" (FORMAT.md 1.4). */
        if (c->source_files && c->source_files[i][0]) {
            row->source_file = c->source_files[i];
            c->source_files[i] = NULL;
        }
        if (c->source_texts && c->source_texts[i][0]) {
            row->source_text = c->source_texts[i];
            c->source_texts[i] = NULL;
        }
        if (c->tags && c->tags[i][0]) {
            row->tags_json = c->tags[i];
            c->tags[i] = NULL;
        }
        if (c->event_metadata && c->event_metadata[i][0]) {
            row->event_metadata_json = c->event_metadata[i];
            c->event_metadata[i] = NULL;
        }
        if (aggregate) {
            row->aggregate = true;
            row->count = 0;
            row->aggregate_count = c->agg_counts ? c->agg_counts[i] : 0;
            row->aggregate_total = c->agg_totals ? c->agg_totals[i] : 0;
            row->aggregate_minimum = c->agg_minimums ? c->agg_minimums[i] : 0;
            row->aggregate_maximum = c->agg_maximums ? c->agg_maximums[i] : 0;
            row->aggregate_exclusive = c->agg_exclusives ? c->agg_exclusives[i] : -1;
            row->stats.total = row->aggregate_total;
            row->stats.minimum = row->aggregate_minimum;
            row->stats.maximum = row->aggregate_maximum;
            if (row->aggregate_count)
                row->stats.mean = (double)row->aggregate_total / (double)row->aggregate_count;
        }
    }
    return SP_OK;
}

/* ---- events ------------------------------------------------------------- */

typedef struct row_order {
    uint64_t offset;
    size_t row;
} row_order;

static int compare_order(const void *a, const void *b) {
    const row_order *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    /* Ties keep file order: the reference check is a stable sort. */
    return x->row < y->row ? -1 : (x->row > y->row);
}

/* FORMAT.md 3.2. *max_end gets the number of events the index needs. */
static int validate_event_index(const spi_h5r *h, const index_cols *c, hsize_t start_len,
                                row_order *order, uint64_t *max_end) {
    uint64_t end_max = 0;
    for (hsize_t i = 0; i < c->rows; i++) {
        uint64_t end = c->offsets[i] + c->counts[i];
        if (end < c->offsets[i]) end = UINT64_MAX; /* wrapped: certainly past the end */
        if (end > end_max) end_max = end;
        order[i] = (row_order){c->offsets[i], (size_t)i};
    }
    if (c->rows > 0 && end_max > start_len)
        return spi_error_set(h->err, SP_ERR_CORRUPT,
                             "%s claims %" PRIu64 " recorded events but its event columns hold "
                             "%llu. The file is truncated or damaged.",
                             h->path, end_max, (unsigned long long)start_len);
    qsort(order, (size_t)c->rows, sizeof *order, compare_order);
    uint64_t previous_end = 0;
    for (hsize_t i = 0; i < c->rows; i++) {
        size_t r = order[i].row;
        if (i > 0 && c->offsets[r] < previous_end)
            return spi_error_set(h->err, SP_ERR_CORRUPT,
                                 "%s has overlapping region rows in its event index. The file "
                                 "is damaged.",
                                 h->path);
        previous_end = c->offsets[r] + c->counts[r];
    }
    *max_end = end_max;
    return SP_OK;
}

/* Which array of a row receives event column `col`. */
static int64_t **row_target(spi_row *row, spi_event_col col) {
    switch (col) {
    case SPI_EV_START_DELTAS:
    case SPI_EV_START_TIMES: return &row->starts;
    case SPI_EV_DURATIONS:
    case SPI_EV_END_TIMES: return &row->durations;
    case SPI_EV_GPU_DURATIONS: return &row->gpu_durations;
    case SPI_EV_CALL_IDS: return &row->call_ids;
    case SPI_EV_PARENT_IDS: return &row->parent_ids;
    case SPI_EV_THREAD_IDS: return &row->thread_ids;
    case SPI_EV_TASK_IDS: return &row->task_ids;
    case SPI_EV_AWAIT_NS: return &row->await_ns;
    case SPI_EV_COUNT: break;
    }
    return NULL;
}

/* Read one event column into every row's array, coalescing small rows. */
static int read_event_column(const spi_h5r *h, hid_t events, spi_event_col col,
                             const row_order *order, const index_cols *c, uint64_t max_end,
                             spi_profile *out) {
    const char *name = ev_name(col);
    hid_t dset;
    int status = spi_h5r_open_event_column(h, events, name, c->rows > 0 ? max_end : 0, &dset);
    if (status != SP_OK) return status;
    /* Helpers for this column only: started and joined here, so no
     * thread outlives the read. */
    spi_inflate_pool *pool = NULL;
    spi_chunk_stream *stream = NULL;
    size_t chunk_bytes = c->rows > 0 ? spi_chunk_stream_chunk_bytes(dset) : 0;
    if (chunk_bytes) status = spi_inflate_pool_open(&pool, spi_read_threads(), chunk_bytes);
    if (status == SP_OK && pool) status = spi_chunk_stream_open(dset, pool, &stream);
    if (status != SP_OK) status = oom(h);
    int64_t *block = NULL;
    for (size_t i = 0; status == SP_OK && i < out->row_count;) {
        spi_row *row = &out->rows[order[i].row];
        uint64_t count = c->counts[order[i].row];
        if (count == 0) {
            i++;
            continue;
        }
        int64_t **target = row_target(row, col);
        *target = spi_calloc((size_t)count, sizeof **target);
        if (!*target || count > SIZE_MAX / 8) {
            status = oom(h);
            break;
        }
        uint64_t span_start = order[i].offset;
        if (count >= SPI_READ_BLOCK) {
            status = spi_h5r_read_int_slice_streamed(h, stream, dset, name, span_start, count,
                                                     max_end, *target);
            i++;
            continue;
        }
        /* Extend the span over following rows while it fits one block. */
        size_t j = i;
        uint64_t span_end = span_start + count;
        while (j + 1 < out->row_count) {
            size_t next = order[j + 1].row;
            uint64_t next_end = c->offsets[next] + c->counts[next];
            if (c->counts[next] != 0 && next_end - span_start > SPI_READ_BLOCK) break;
            j++;
            if (next_end > span_end) span_end = next_end;
        }
        if (!block && !(block = spi_calloc((size_t)SPI_READ_BLOCK, sizeof *block))) {
            status = oom(h);
            break;
        }
        status = spi_h5r_read_int_slice_streamed(h, stream, dset, name, span_start,
                                                 span_end - span_start, max_end, block);
        for (size_t k = i; status == SP_OK && k <= j; k++) {
            size_t r = order[k].row;
            if (c->counts[r] == 0) continue;
            int64_t **dst = row_target(&out->rows[r], col);
            if (!*dst && !(*dst = spi_calloc((size_t)c->counts[r], sizeof **dst))) {
                status = oom(h);
                break;
            }
            memcpy(*dst, block + (c->offsets[r] - span_start), (size_t)c->counts[r] * 8);
        }
        i = j + 1;
    }
    spi_free(block);
    spi_chunk_stream_close(stream);
    spi_inflate_pool_close(pool);
    H5Dclose(dset);
    return status;
}

/* SPI_READ_CALLS_ON_DEMAND is honoured when nothing needs the calls whole:
 * every row's exclusive total is stored (no call tree to build) and the
 * file has no GPU times (the streamed statistics do not carry them) and
 * no task ids (a call's lane is its task when it has one, docs/FORMAT.md
 * 5, and the store does not carry them: scope-check's lane rule needs
 * them from the row's arrays). */
static bool calls_may_stay(hid_t events, const spi_profile *out) {
    if (spi_h5r_exists(events, ev_name(SPI_EV_GPU_DURATIONS))) return false;
    if (spi_h5r_exists(events, ev_name(SPI_EV_TASK_IDS))) return false;
    for (size_t i = 0; i < out->row_count; i++)
        if (out->rows[i].exclusive_total < 0) return false;
    return true;
}

static int read_events(const spi_h5r *h, hid_t file, const index_cols *c, spi_profile *out,
                       bool on_demand) {
    if (!spi_h5r_exists(file, SPI_GROUP_EVENTS))
        return spi_error_set(h->err, SP_ERR_NOT_A_PROFILE,
                             "%s is not a scope-profiler profile: group events is missing",
                             h->path);
    hid_t events = H5Gopen2(file, SPI_GROUP_EVENTS, H5P_DEFAULT);
    if (events < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open group events", h->path);
    bool deltas = spi_h5r_exists(events, ev_name(SPI_EV_START_DELTAS));
    spi_event_col start_col = deltas ? SPI_EV_START_DELTAS : SPI_EV_START_TIMES;
    spi_event_col second_col = deltas ? SPI_EV_DURATIONS : SPI_EV_END_TIMES;

    row_order *order = spi_calloc((size_t)c->rows, sizeof *order);
    int status = order ? SP_OK : oom(h);
    hid_t dset = -1;
    hsize_t start_len = 0;
    if (status == SP_OK) status = spi_h5r_open_column(h, events, ev_name(start_col), &dset, &start_len);
    if (dset >= 0) H5Dclose(dset);
    uint64_t max_end = 0;
    if (status == SP_OK) status = validate_event_index(h, c, start_len, order, &max_end);
    if (status == SP_OK && on_demand && calls_may_stay(events, out)) {
        status = spi_h5_call_store_open(h, events, c->offsets, max_end, deltas, out);
        spi_free(order);
        H5Gclose(events);
        return status;
    }

    if (status == SP_OK) status = read_event_column(h, events, start_col, order, c, max_end, out);
    if (status == SP_OK) status = read_event_column(h, events, second_col, order, c, max_end, out);
    static const spi_event_col optional[] = {SPI_EV_GPU_DURATIONS, SPI_EV_CALL_IDS,
                                             SPI_EV_PARENT_IDS, SPI_EV_THREAD_IDS,
                                             SPI_EV_TASK_IDS, SPI_EV_AWAIT_NS};
    for (size_t i = 0; status == SP_OK && i < sizeof optional / sizeof *optional; i++) {
        if (!spi_h5r_exists(events, ev_name(optional[i]))) continue;
        out->event_columns |= SPI_EV_BIT(optional[i]);
        status = read_event_column(h, events, optional[i], order, c, max_end, out);
    }
    for (size_t i = 0; status == SP_OK && i < out->row_count; i++) {
        spi_row *row = &out->rows[i];
        if (row->count == 0) continue;
        if (deltas) {
            /* Each row restarts from its own absolute first start. */
            uint64_t acc = 0;
            for (uint64_t k = 0; k < row->count; k++) {
                acc += (uint64_t)row->starts[k];
                row->starts[k] = (int64_t)acc;
            }
        } else {
            for (uint64_t k = 0; k < row->count; k++)
                row->durations[k] = (int64_t)((uint64_t)row->durations[k] -
                                              (uint64_t)row->starts[k]);
        }
        /* A GPU slice counts only if some value in it is real (FORMAT.md 3.3). */
        if (row->gpu_durations) {
            bool any = false;
            for (uint64_t k = 0; k < row->count && !any; k++) any = row->gpu_durations[k] >= 0;
            if (!any) {
                spi_free(row->gpu_durations);
                row->gpu_durations = NULL;
            }
        }
    }
    spi_free(order);
    H5Gclose(events);
    return status;
}

/* ---- the whole file ------------------------------------------------------ */

static int compare_name_refs(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A region name is the key every tool matches on (merge, diff, the
 * summary); two regions of one name would be added up or confused, so a
 * region table with a repeated name is refused (docs/FORMAT.md 3.4). */
static int check_unique_names(const spi_h5r *h, char **names, size_t count) {
    if (count < 2) return SP_OK;
    char **sorted = spi_malloc(count * sizeof *sorted);
    if (!sorted) return oom(h);
    memcpy(sorted, names, count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, compare_name_refs);
    int status = SP_OK;
    for (size_t i = 1; i < count && status == SP_OK; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0)
            status = spi_error_set(h->err, SP_ERR_CORRUPT,
                                   "%s: region_table/names holds the name '%.200s' twice. The "
                                   "file is damaged.",
                                   h->path, sorted[i]);
    spi_free(sorted);
    return status;
}

static int read_columnar(const spi_h5r *h, spi_profile *out, unsigned flags) {
    bool summary_only = (flags & SPI_READ_SUMMARY_ONLY) != 0;
    char *layout = NULL;
    bool present = false;
    int status = spi_h5r_attr_string(h, h->file, SPI_ATTR_STORAGE_LAYOUT, &layout, &present);
    if (status != SP_OK) return status;
    out->aggregate = present && strcmp(layout, SPI_LAYOUT_AGGREGATE) == 0;
    /* docs/FORMAT.md 3.4: a layout we do not know is not read as columnar. */
    if (present && !out->aggregate && strcmp(layout, SPI_LAYOUT_COLUMNAR) != 0)
        status = spi_error_set(h->err, SP_ERR_SCHEMA_UNSUPPORTED,
                               "%s: unknown storage_layout '%.64s' (this package reads '%s' and "
                               "'%s')",
                               h->path, layout, SPI_LAYOUT_COLUMNAR, SPI_LAYOUT_AGGREGATE);
    spi_free(layout);
    if (status != SP_OK) return status;

    hsize_t name_count = 0;
    status = spi_h5r_read_string_column(h, h->file, SPI_DSET_REGION_NAMES, SPI_H5R_ANY_LENGTH,
                                        &out->names, &name_count);
    if (status != SP_OK) return status;
    out->name_count = (size_t)name_count;
    status = check_unique_names(h, out->names, out->name_count);
    if (status != SP_OK) return status;

    if (!spi_h5r_exists(h->file, SPI_GROUP_INDEX))
        return spi_error_set(h->err, SP_ERR_NOT_A_PROFILE,
                             "%s is not a scope-profiler profile: group %s is missing", h->path,
                             SPI_GROUP_INDEX);
    hid_t index = H5Gopen2(h->file, SPI_GROUP_INDEX, H5P_DEFAULT);
    if (index < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open group %s", h->path,
                             SPI_GROUP_INDEX);
    index_cols cols = {0};
    status = read_index(h, index, out->aggregate, summary_only, out->name_count, &cols);
    H5Gclose(index);
    if (status == SP_OK) status = index_to_rows(h, &cols, out->aggregate, out);
    if (status == SP_OK && !out->aggregate && !summary_only)
        status = read_events(h, h->file, &cols, out, (flags & SPI_READ_CALLS_ON_DEMAND) != 0);
    if (status == SP_OK) {
        /* num_ranks (FORMAT.md 4.2): mpi_size, widened by the highest rank. */
        const spi_meta_entry *size = spi_meta_find(&out->metadata, "mpi_size");
        int64_t ranks = size && size->kind == SPI_META_I64 && size->i64 > 0 ? size->i64 : 1;
        for (size_t i = 0; i < out->row_count; i++)
            if ((int64_t)out->rows[i].rank + 1 > ranks) ranks = (int64_t)out->rows[i].rank + 1;
        out->rank_count = out->row_count ? (uint32_t)(ranks > UINT32_MAX ? UINT32_MAX : ranks) : 0;
    }
    index_cols_free(&cols);
    return status;
}

/* Everything after the open: the same for a path and for a file image. */
static int read_open_file(spi_profile *out, hid_t file, const char *path, unsigned flags,
                          spi_error *err) {
    spi_h5r h = {.file = file, .path = path, .err = err};
    if (H5Fget_filesize(file, &h.file_bytes) < 0) h.file_bytes = 0;
    int version = 0;
    int status = read_schema_version(&h, &version);
    if (status == SP_OK) {
        out->schema_version = version;
        status = spi_h5r_read_metadata(&h, out);
    }
    if (status == SP_OK) {
        if (version == 1) {
            if (flags & SPI_READ_SUMMARY_ONLY)
                status = spi_error_set(err, SP_ERR_NO_SUMMARY,
                                       "%s: summary-only reads require a schema-2 or newer "
                                       "profiling file",
                                       path);
            else
                status = spi_h5r_read_schema1(&h, out);
        } else {
            status = read_columnar(&h, out, flags);
        }
    }
    if (status == SP_OK && version >= 2) status = spi_h5r_read_threads(&h, out);
    if (status == SP_OK) status = spi_h5r_read_perf(&h, out);
    if (status == SP_OK) status = spi_h5r_read_likwid(&h, out);
    if (status == SP_OK) status = spi_h5r_read_call_paths(&h, out);
    /* Identifiers left open by an error path go with the file. A store
     * that took the file keeps it open until the profile is released (on
     * error too: the caller frees the profile once the HDF5 lock is
     * released, and the store's release takes that lock). */
    if (!out->store) H5Fclose(file);
    return status;
}

/* image NULL: read the file at path; else read `size` bytes of image,
 * called `path` in messages. */
static int read_locked(spi_profile *out, const char *path, const void *image, size_t size,
                       unsigned flags, spi_error *err) {
    spi_h5r_lock();
    spi_h5_silence_state silence;
    spi_h5_silence(&silence);
    /* The open policy (reader_policy.c) walks the whole file before any
     * data is read: nothing here can follow it into another file. */
    hid_t file = -1;
    int status = spi_h5r_open_checked(path, image, size, &file, err);
    if (status == SP_OK) status = read_open_file(out, file, path, flags, err);
    spi_h5_restore(&silence);
    spi_h5r_unlock();
    return status;
}

int spi_read_h5(spi_profile *out, const char *path, unsigned flags, spi_error *err) {
    return read_locked(out, path, NULL, 0, flags, err);
}

int spi_read_h5_image(spi_profile *out, const void *image, size_t size, const char *name,
                      unsigned flags, spi_error *err) {
    if (!image) return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "%s: no file image", name);
    return read_locked(out, name, image, size, flags, err);
}
