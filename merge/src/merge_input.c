/*
 * merge_input.c - inputs of a merge, opened so that their events can be
 * streamed.
 *
 * The reader (reader.h) loads a whole profile into memory, which is what
 * analysis wants but not what a merge of two multi-gigabyte files can
 * afford. So an input is first passed through the reader in summary-only
 * mode: that runs every check the reader makes on the version, metadata,
 * region table, index and thread table, and gives the rows with their
 * stored statistics. Then this file reads what summary-only leaves out
 * (event offsets and per-call metadata), validates the offsets against the
 * event columns exactly as FORMAT.md 3.2 asks, and keeps the event columns
 * open so that cursors can read one block of one row at a time.
 *
 * Legacy inputs (schema 1, .spt traces) have no summary index and are small
 * by nature (per-rank groups, one trace per rank), so they are read whole by
 * the reader and cursors just borrow their arrays. A columnar file too old
 * to carry summary_statistics is streamed all the same; its statistics are
 * computed during the merge's first pass.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "merge_internal.h"
#include "format/reader.h"
#include "format/reader_h5_util.h"
#include "format/reader_policy.h"
#include "format/schema.h"

/* The schema column behind each cursor column, for both encodings. */
static const spi_event_col optional_cols[SPM_COL_COUNT] = {
    [SPM_GPU] = SPI_EV_GPU_DURATIONS, [SPM_CALL] = SPI_EV_CALL_IDS,
    [SPM_PARENT] = SPI_EV_PARENT_IDS, [SPM_THREAD] = SPI_EV_THREAD_IDS,
    [SPM_TASK] = SPI_EV_TASK_IDS,     [SPM_AWAIT] = SPI_EV_AWAIT_NS};

static spi_event_col schema_col(const spm_input *in, spm_col col) {
    if (col == SPM_START) return in->deltas ? SPI_EV_START_DELTAS : SPI_EV_START_TIMES;
    if (col == SPM_DURATION) return in->deltas ? SPI_EV_DURATIONS : SPI_EV_END_TIMES;
    return optional_cols[col];
}

static int oom(const char *path, spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
}

static bool starts_like_trace(const char *path) {
    size_t len = strlen(path);
    if (len >= 4 && strcmp(path + len - 4, ".spt") == 0) return true;
    FILE *f = fopen(path, "rb");
    char head[8] = {0};
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    return got == sizeof head && memcmp(head, "SCOPEPRF", 8) == 0;
}

static void note_native(spm_input *in) {
    const spi_meta_entry *source = spi_meta_find(&in->prof.metadata, "source");
    in->native = source && source->kind == SPI_META_STR && strcmp(source->str, "native") == 0;
}

/* Whole read (legacy layouts): the reader's arrays are the events. */
static int open_whole(spm_input *in, spi_error *err) {
    int status = spi_profile_read(&in->prof, in->path, 0, err);
    if (status != SP_OK) return status;
    in->whole = true;
    in->aggregate = in->prof.aggregate;
    in->has_stats = true;
    in->columns = (1u << SPM_START) | (1u << SPM_DURATION);
    for (int c = SPM_GPU; c < SPM_COL_COUNT; c++)
        if (in->prof.event_columns & SPI_EV_BIT(optional_cols[c])) in->columns |= 1u << c;
    return SP_OK;
}

typedef struct order_item {
    uint64_t offset;
    size_t row;
} order_item;

static int by_offset(const void *a, const void *b) {
    const order_item *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->row < y->row ? -1 : (x->row > y->row);
}

/* FORMAT.md 3.2 against every event column the merge will read. */
static int validate_offsets(spm_input *in, const uint64_t *counts, size_t rows, spi_error *err) {
    uint64_t max_end = 0;
    order_item *order = spi_calloc(rows ? rows : 1, sizeof *order);
    if (!order) return oom(in->path, err);
    for (size_t i = 0; i < rows; i++) {
        uint64_t end = in->offsets[i] + counts[i];
        if (end < in->offsets[i]) end = UINT64_MAX;
        if (end > max_end) max_end = end;
        order[i] = (order_item){in->offsets[i], i};
    }
    int status = SP_OK;
    for (int c = 0; c < SPM_COL_COUNT && status == SP_OK && rows; c++) {
        if (in->dsets[c] < 0) continue;
        hid_t space = H5Dget_space(in->dsets[c]);
        hsize_t len = 0;
        int ndims = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
        if (ndims == 1) H5Sget_simple_extent_dims(space, &len, NULL);
        if (space >= 0) H5Sclose(space);
        if (ndims != 1 || len < max_end)
            status = spi_error_set(err, SP_ERR_CORRUPT,
                                   "%s claims %" PRIu64 " recorded events but its event column "
                                   "events/%s holds %llu. The file is truncated or damaged.",
                                   in->path, max_end, spi_event_columns[schema_col(in, c)].name,
                                   (unsigned long long)len);
    }
    if (status == SP_OK) {
        qsort(order, rows, sizeof *order, by_offset);
        for (size_t i = 1; i < rows && status == SP_OK; i++) {
            size_t prev = order[i - 1].row;
            if (order[i].offset < in->offsets[prev] + counts[prev])
                status = spi_error_set(err, SP_ERR_CORRUPT,
                                       "%s has overlapping region rows in its event index. The "
                                       "file is damaged.",
                                       in->path);
        }
    }
    spi_free(order);
    return status;
}

/* Index rows of a columnar file without summary_statistics: the reader
 * refused a summary-only read, so the rows are built here. */
static int read_rows(spm_input *in, const spi_h5r *h, hid_t index, spi_error *err) {
    uint64_t *regions = NULL, *ranks = NULL;
    int64_t *lines = NULL, *exclusive = NULL;
    char **files = NULL, **texts = NULL, **tags = NULL;
    hsize_t rows = 0;
    const char *const *col_names = NULL;
    (void)col_names;
    int status = spi_h5r_read_int_column(h, index, spi_index_columns[SPI_IDX_REGION_IDS].name,
                                         true, SPI_H5R_ANY_LENGTH, (void **)&regions, &rows);
    if (status == SP_OK)
        status = spi_h5r_read_int_column(h, index, spi_index_columns[SPI_IDX_RANKS].name, true,
                                         rows, (void **)&ranks, NULL);
#define OPT_INT(col, target)                                                                   \
    if (status == SP_OK && spi_h5r_exists(index, spi_index_columns[col].name))                 \
        status = spi_h5r_read_int_column(h, index, spi_index_columns[col].name, false, rows,     \
                                         (void **)&(target), NULL);
#define OPT_STR(col, target)                                                                   \
    if (status == SP_OK && spi_h5r_exists(index, spi_index_columns[col].name))                 \
        status = spi_h5r_read_string_column(h, index, spi_index_columns[col].name, rows,         \
                                            &(target), NULL);
    OPT_INT(SPI_IDX_SOURCE_LINES, lines)
    OPT_INT(SPI_IDX_EXCLUSIVE_TOTALS, exclusive)
    OPT_STR(SPI_IDX_SOURCE_FILES, files)
    OPT_STR(SPI_IDX_SOURCE_TEXTS, texts)
    OPT_STR(SPI_IDX_TAGS, tags)
#undef OPT_INT
#undef OPT_STR
    for (hsize_t i = 0; i < rows && status == SP_OK; i++) {
        if (regions[i] >= in->prof.name_count || ranks[i] > UINT32_MAX) {
            status = spi_error_set(err, SP_ERR_CORRUPT,
                                   "%s: row %llu has an out-of-range region id or rank",
                                   in->path, (unsigned long long)i);
            break;
        }
        spi_row *row = spi_profile_append_row(&in->prof);
        if (!row) {
            status = oom(in->path, err);
            break;
        }
        row->region = (uint32_t)regions[i];
        row->rank = (uint32_t)ranks[i];
        if (lines && lines[i] >= 0) row->source_line = lines[i];
        if (exclusive && exclusive[i] >= 0) row->exclusive_total = exclusive[i];
        /* Ownership of the strings moves to the row; "" means unknown. */
        if (files && files[i][0]) { row->source_file = files[i]; files[i] = NULL; }
        if (texts && texts[i][0]) { row->source_text = texts[i]; texts[i] = NULL; }
        if (tags && tags[i][0]) { row->tags_json = tags[i]; tags[i] = NULL; }
    }
    spi_free(regions);
    spi_free(ranks);
    spi_free(lines);
    spi_free(exclusive);
    spi_h5r_free_strings(files, files ? rows : 0);
    spi_h5r_free_strings(texts, texts ? rows : 0);
    spi_h5r_free_strings(tags, tags ? rows : 0);
    return status;
}

static int by_rank(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The most rows the input has on one rank: pass 1 reads that many rows of
 * each column in turn (merge_chunks.c sizes the column's ring by it). */
static size_t busiest_rank_rows(const spm_input *in) {
    size_t rows = in->prof.row_count, most = rows ? 1 : 0;
    uint32_t *ranks = spi_calloc(rows ? rows : 1, sizeof *ranks);
    if (!ranks) return rows; /* an upper bound will do */
    for (size_t i = 0; i < rows; i++) ranks[i] = in->prof.rows[i].rank;
    qsort(ranks, rows, sizeof *ranks, by_rank);
    for (size_t i = 1, run = 1; i < rows; i++) {
        run = ranks[i] == ranks[i - 1] ? run + 1 : 1;
        if (run > most) most = run;
    }
    spi_free(ranks);
    return most;
}

static int open_streamed(spm_input *in, bool have_summary, spi_error *err) {
    /* Opened again, so checked again (reader_policy.c): the path may name
     * another file than the summary read saw. */
    int status = spi_h5r_open_checked(in->path, NULL, 0, &in->file, err);
    if (status != SP_OK) return status;
    spi_h5r h = {.file = in->file, .path = in->path, .err = err};
    if (H5Fget_filesize(in->file, &h.file_bytes) < 0) h.file_bytes = 0;
    in->file_bytes = h.file_bytes;
    if (!have_summary) {
        hsize_t names = 0;
        status = spi_h5r_read_metadata(&h, &in->prof);
        if (status == SP_OK)
            status = spi_h5r_read_string_column(&h, in->file, SPI_DSET_REGION_NAMES,
                                                SPI_H5R_ANY_LENGTH, &in->prof.names, &names);
        in->prof.name_count = (size_t)names;
        if (status == SP_OK) status = spi_h5r_read_threads(&h, &in->prof);
    }
    hid_t index = status == SP_OK ? H5Gopen2(in->file, SPI_GROUP_INDEX, H5P_DEFAULT) : -1;
    if (status == SP_OK && index < 0)
        status = spi_error_set(err, SP_ERR_NOT_A_PROFILE,
                               "%s is not a scope-profiler profile: group %s is missing",
                               in->path, SPI_GROUP_INDEX);
    if (status == SP_OK && !have_summary) status = read_rows(in, &h, index, err);
    size_t rows = in->prof.row_count;
    uint64_t *counts = NULL;
    char **event_metadata = NULL;
    if (status == SP_OK)
        status = spi_h5r_read_int_column(&h, index, spi_index_columns[SPI_IDX_EVENT_OFFSETS].name,
                                         true, rows, (void **)&in->offsets, NULL);
    if (status == SP_OK)
        status = spi_h5r_read_int_column(&h, index, spi_index_columns[SPI_IDX_EVENT_COUNTS].name,
                                         true, rows, (void **)&counts, NULL);
    if (status == SP_OK && spi_h5r_exists(index, spi_index_columns[SPI_IDX_EVENT_METADATA].name))
        status = spi_h5r_read_string_column(&h, index,
                                            spi_index_columns[SPI_IDX_EVENT_METADATA].name, rows,
                                            &event_metadata, NULL);
    if (index >= 0) H5Gclose(index);
    for (size_t i = 0; i < rows && status == SP_OK; i++) {
        spi_row *row = &in->prof.rows[i];
        if (have_summary && row->count != counts[i])
            status = spi_error_set(err, SP_ERR_CORRUPT, "%s: the event index changed while "
                                   "it was read", in->path);
        row->count = counts[i];
        if (event_metadata && event_metadata[i][0]) {
            row->event_metadata_json = event_metadata[i];
            event_metadata[i] = NULL;
        }
        in->prof.event_count += counts[i];
    }
    spi_h5r_free_strings(event_metadata, event_metadata ? rows : 0);

    hid_t events = status == SP_OK ? H5Gopen2(in->file, SPI_GROUP_EVENTS, H5P_DEFAULT) : -1;
    if (status == SP_OK && events < 0)
        status = spi_error_set(err, SP_ERR_NOT_A_PROFILE,
                               "%s is not a scope-profiler profile: group events is missing",
                               in->path);
    size_t readers = status == SP_OK ? busiest_rank_rows(in) : 0;
    if (status == SP_OK) {
        in->deltas = spi_h5r_exists(events, spi_event_columns[SPI_EV_START_DELTAS].name) > 0;
        for (int c = 0; c < SPM_COL_COUNT && status == SP_OK; c++) {
            const char *name = spi_event_columns[schema_col(in, c)].name;
            bool required = c == SPM_START || c == SPM_DURATION;
            if (!required && spi_h5r_exists(events, name) <= 0) continue;
            hsize_t len = 0;
            status = spi_h5r_open_column(&h, events, name, &in->dsets[c], &len);
            if (status == SP_OK) {
                /* HDF5 would convert floats (and clamp) without a word. */
                hid_t type = H5Dget_type(in->dsets[c]);
                if (!spi_h5r_sane_scalar_type(type, H5T_INTEGER))
                    status = spi_error_set(err, SP_ERR_CORRUPT,
                                           "%s: dataset events/%s has the wrong element type",
                                           in->path, name);
                if (type >= 0) H5Tclose(type);
            }
            if (status == SP_OK && spm_chunks_open(in->dsets[c], readers, &in->chunked[c]) != SP_OK)
                status = oom(in->path, err);
            if (status == SP_OK) in->columns |= 1u << c;
        }
    }
    if (events >= 0) H5Gclose(events);
    if (status == SP_OK) status = validate_offsets(in, counts, rows, err);
    spi_free(counts);
    in->has_stats = have_summary;
    return status;
}

int spm_input_open(spm_input *in, const char *path, size_t arg_index, spi_error *err) {
    *in = (spm_input){.path = path, .arg_index = arg_index, .file = -1};
    for (int c = 0; c < SPM_COL_COUNT; c++) in->dsets[c] = -1;
    /* The summary-only read is the gate: every check the reader makes runs
     * before this file trusts anything, and its errors are the reader's. */
    int status = spi_profile_read(&in->prof, path, SPI_READ_SUMMARY_ONLY, err);
    if (status == SP_OK) {
        /* Aggregate: the summary read holds everything there is (rows and
         * call paths); there are no events to stream. */
        in->aggregate = in->prof.aggregate;
        if (!in->aggregate) status = open_streamed(in, true, err);
    } else if (status == SP_ERR_NO_SUMMARY) {
        spi_error_clear(err);
        status = SP_OK;
        bool columnar = false;
        if (!starts_like_trace(path)) {
            hid_t file = -1;
            status = spi_h5r_open_checked(path, NULL, 0, &file, err);
            if (status == SP_OK) {
                /* Schema 1 has no version attribute; >= 2 is columnar. */
                columnar = H5Aexists(file, SPI_ATTR_SCHEMA) > 0;
                H5Fclose(file);
            } else if (status == SP_ERR_NOT_A_PROFILE) {
                spi_error_clear(err); /* the whole read says what it is */
                status = SP_OK;
            }
        }
        if (status == SP_OK) status = columnar ? open_streamed(in, false, err) : open_whole(in, err);
    }
    if (status == SP_OK) note_native(in);
    return status;
}

void spm_input_close(spm_input *in) {
    for (int c = 0; c < SPM_COL_COUNT; c++) {
        spm_chunks_close(in->chunked[c]);
        if (in->dsets[c] >= 0) H5Dclose(in->dsets[c]);
    }
    if (in->file >= 0) H5Fclose(in->file);
    spi_free(in->offsets);
    spi_profile_free(&in->prof);
    *in = (spm_input){.file = -1};
}

/* ---- cursors ------------------------------------------------------------- */

int spm_cursor_init(spm_cursor *c, spm_input *in, size_t row, size_t cap, unsigned want,
                    spi_error *err) {
    *c = (spm_cursor){.in = in, .row = row, .count = in->prof.rows[row].count,
                      .want = (want & in->columns) | 1u << SPM_START | 1u << SPM_DURATION};
    if (in->whole) return SP_OK;
    if (cap > SPM_BLOCK_EVENTS) cap = SPM_BLOCK_EVENTS;
    if (cap > c->count) cap = (size_t)c->count;
    if (cap == 0) cap = 1;
    c->cap = cap;
    for (int k = 0; k < SPM_COL_COUNT; k++) {
        if (!(c->want & (1u << k))) continue;
        c->col[k] = spi_malloc(cap * sizeof(int64_t));
        if (!c->col[k]) {
            spm_cursor_free(c);
            return oom(in->path, err);
        }
    }
    return SP_OK;
}

int spm_cursor_fill(spm_cursor *c, spi_error *err) {
    c->base = c->next;
    c->len = 0;
    if (c->next >= c->count) return SP_OK;
    const spi_row *row = &c->in->prof.rows[c->row];
    if (c->in->whole) {
        int64_t *const arrays[SPM_COL_COUNT] = {row->starts, row->durations, row->gpu_durations,
                                               row->call_ids, row->parent_ids, row->thread_ids,
                                               row->task_ids, row->await_ns};
        for (int k = 0; k < SPM_COL_COUNT; k++)
            c->col[k] = (c->want & (1u << k)) ? arrays[k] : NULL;
        c->len = (size_t)c->count;
        c->next = c->count;
        return SP_OK;
    }
    uint64_t file_pos = c->in->offsets[c->row] + c->next;
    uint64_t n = c->count - c->next;
    if (n > c->cap) n = c->cap;
    /* Stop at a multiple of the block size in file coordinates, so that a
     * read never straddles two chunks of a chunked input. */
    uint64_t to_boundary = SPM_BLOCK_EVENTS - file_pos % SPM_BLOCK_EVENTS;
    if (n > to_boundary) n = to_boundary;
    spi_h5r h = {.file = c->in->file, .path = c->in->path, .err = err};
    unsigned read = c->want & ~(c->skip & ~(1u << SPM_START));
    for (int k = 0; k < SPM_COL_COUNT; k++) {
        if (!(read & (1u << k))) continue;
        bool decoded = false;
        if (spm_chunks_read(c->in->chunked[k], file_pos, n, c->in->offsets[c->row] + c->count,
                            c->col[k], &decoded) != SP_OK)
            return oom(c->in->path, err);
        int status = decoded ? SP_OK
                             : spi_h5r_read_int_slice(&h, c->in->dsets[k],
                                                      spi_event_columns[schema_col(c->in, k)].name,
                                                      file_pos, n, c->col[k]);
        if (status != SP_OK) return status;
    }
    int64_t *start = c->col[SPM_START], *second = c->col[SPM_DURATION];
    if (c->in->deltas) {
        /* Each row restarts from its own absolute first start (FORMAT.md
         * 3.1); wrapping unsigned sums keep hostile values defined. */
        uint64_t acc = c->next == 0 ? 0 : (uint64_t)c->acc;
        for (uint64_t i = 0; i < n; i++) {
            acc += (uint64_t)start[i];
            start[i] = (int64_t)acc;
        }
        c->acc = (int64_t)acc;
    } else {
        for (uint64_t i = 0; i < n; i++)
            second[i] = (int64_t)((uint64_t)second[i] - (uint64_t)start[i]);
    }
    c->len = (size_t)n;
    c->next += n;
    return SP_OK;
}

void spm_cursor_free(spm_cursor *c) {
    if (c->cap)
        for (int k = 0; k < SPM_COL_COUNT; k++) spi_free(c->col[k]);
    *c = (spm_cursor){0};
}
