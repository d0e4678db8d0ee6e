/*
 * h5_writer.c - the streaming schema-3 writer (see h5_writer.h).
 *
 * Datasets are created at their final size because every client knows the
 * totals before it writes (finalize counts its buffers, the MPI path scans
 * the ranks' counts, merge plans before it streams). Fixed sizes give files
 * like the reference writer's repacked output, need no resizing, and let
 * publish verify that exactly what was declared was written.
 *
 * Event columns are written slice by slice as rows stream in, so memory is
 * bounded by the caller's chunk. Index columns are tiny (one entry per
 * (rank, region)), so they are buffered and written at publish.
 *
 * Large event columns (>= SPI_COMPRESS_MIN_EVENTS) are chunked with shuffle
 * + deflate, as the reference writer's "auto" repack does; small ones stay
 * contiguous. Level 1 deflate: with shuffle it gets most of level 4's ratio
 * on timestamps at a fraction of the finalize time. Those chunks are not
 * compressed by HDF5 (one core) but by a few threads and stored with
 * H5Dwrite_chunk (h5_event_chunks.c); small columns go through H5Dwrite.
 */
#include "format/h5_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "format/h5_call_paths.h"
#include "format/h5_column_pool.h"
#include "format/h5_counter_groups.h"
#include "format/h5_event_chunks.h"
#include "format/h5_file_parts.h"
#include "format/h5_util.h"
#include "format/output_check.h"
#include "format/schema.h"

#define SCRATCH_EVENTS 8192

struct spi_writer {
    char *final_path;
    char *temp_path;
    hid_t file;
    spi_h5_guard guard;           /* the file driver's record of a failed write */
    spi_writer_layout layout;
    hid_t events[SPI_EV_COUNT];   /* open event datasets, -1 if not written */
    spi_event_chunks *chunks;     /* compressed columns written by chunks; NULL: H5Dwrite */
    spi_h5_silence_state silence;

    /* index rows, buffered until publish */
    uint64_t rows_written;
    spi_index_rows index_rows;
    char **source_files;
    char **source_texts;
    char **tags;
    char **event_metadata;
    /* aggregate layout: [SPI_IDX_AGGREGATE_COUNTS .. _EXCLUSIVES] per row */
    int64_t *aggregates[SPI_IDX_AGGREGATE_EXCLUSIVES - SPI_IDX_AGGREGATE_COUNTS + 1];

    /* the row being streamed */
    bool row_open;
    uint64_t event_cursor;        /* next free event index */
    uint64_t row_events;
    int64_t previous_start;       /* delta base; 0 at a row start */
    int64_t *scratch;             /* SCRATCH_EVENTS */
    int partial_slot;             /* sp_remove_partial_outputs' slot, -1 none */
};

/* ---- helpers ------------------------------------------------------------ */

/* An HDF5 call failed (spi_h5_fail says how the message is chosen); a
 * write the file driver saw fail comes first (its errno is the cause). */
static int h5_fail(spi_writer *w, spi_error *err, const char *what) {
    int status = spi_h5_guard_check(&w->guard, err, w->final_path, what);
    return status != SP_OK ? status : spi_h5_fail(err, w->final_path, what);
}

/* SP_OK unless the file driver saw a write fail (then the file is doomed). */
static int io_check(spi_writer *w, spi_error *err, const char *what) {
    return spi_h5_guard_check(&w->guard, err, w->final_path, what);
}

/* Close the doomed temporary file for good, once. The guarded driver
 * (spi_h5_guard_fapl) never lets a close fail for lack of space: a failed
 * H5Fclose in libhdf5 1.10 frees the file but keeps its identifier, and
 * any later use of it (a second close, the library's exit handler)
 * crashes the host program. Truncating first gives the space back to
 * whoever else needs it. */
static void close_discarded(spi_writer *w) {
    spi_event_chunks_close(w->chunks); /* its threads joined before anything closes */
    w->chunks = NULL;
    for (int c = 0; c < SPI_EV_COUNT; c++) {
        if (w->events[c] >= 0) H5Dclose(w->events[c]);
        w->events[c] = -1;
    }
    if (w->file < 0) return;
    if (w->temp_path) {
        int fd = open(w->temp_path, O_WRONLY);
        if (fd >= 0) {
            if (ftruncate(fd, 0) != 0) { /* best effort: the close may still work */ }
            close(fd);
        }
    }
    H5Fclose(w->file); /* whatever it returns, the identifier is gone */
    w->file = -1;
}

static int write_event_slice(hid_t dset, uint64_t offset, const int64_t *values, size_t count) {
    return spi_h5_write_slice(dset, H5T_NATIVE_INT64, offset, values, count, H5P_DEFAULT);
}

static int oom(spi_writer *w, spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory while writing",
                         w ? w->final_path : "profile");
}

/* ---- create ------------------------------------------------------------- */

static void free_writer(spi_writer *w) {
    spi_event_chunks_close(w->chunks);
    spi_h5_partial_forget(w->partial_slot);
    /* the row being streamed owns its copies too (a write failed in it) */
    uint64_t rows = w->rows_written + (w->row_open ? 1 : 0);
    for (uint64_t i = 0; i < rows; i++) {
        spi_free(w->source_files[i]);
        spi_free(w->source_texts[i]);
        spi_free(w->tags[i]);
        spi_free(w->event_metadata[i]);
    }
    spi_index_rows_free(&w->index_rows);
    spi_free(w->source_files);
    spi_free(w->source_texts);
    spi_free(w->tags);
    spi_free(w->event_metadata);
    for (size_t i = 0; i < sizeof w->aggregates / sizeof w->aggregates[0]; i++)
        spi_free(w->aggregates[i]);
    spi_free(w->scratch);
    spi_free(w->final_path);
    spi_free(w->temp_path);
    spi_free(w);
}

static int allocate_index(spi_writer *w) {
    size_t rows = (size_t)w->layout.row_count;
    int indexed = spi_index_rows_alloc(&w->index_rows, rows);
    w->source_files = spi_calloc(rows, sizeof *w->source_files);
    w->source_texts = spi_calloc(rows, sizeof *w->source_texts);
    w->tags = spi_calloc(rows, sizeof *w->tags);
    w->event_metadata = spi_calloc(rows, sizeof *w->event_metadata);
    w->scratch = spi_calloc(SCRATCH_EVENTS, sizeof *w->scratch);
    for (size_t i = 0; w->layout.aggregate && i < sizeof w->aggregates / sizeof w->aggregates[0];
         i++)
        if (!(w->aggregates[i] = spi_calloc(rows ? rows : 1, sizeof(int64_t))))
            return SP_ERR_OUT_OF_MEMORY;
    return indexed == SP_OK && w->source_files && w->source_texts && w->tags &&
                   w->event_metadata && w->scratch
               ? SP_OK
               : SP_ERR_OUT_OF_MEMORY;
}

int spi_writer_create(spi_writer **writer, const char *path, const spi_writer_layout *layout,
                      spi_error *err) {
    *writer = NULL;
    if (!path || !*path || !layout || (layout->aggregate && layout->event_count != 0))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "no output path given");
    int checked = spi_output_path_check(path, err);
    if (checked != SP_OK) return checked;
    spi_writer *w = spi_calloc(1, sizeof *w);
    if (!w) return oom(NULL, err);
    w->partial_slot = -1;
    for (int c = 0; c < SPI_EV_COUNT; c++) w->events[c] = -1;
    w->file = -1;
    w->layout = *layout;
    w->final_path = spi_strdup(path);
    if (!w->final_path || allocate_index(w) != SP_OK) {
        free_writer(w);
        return oom(NULL, err);
    }
    w->temp_path = spi_h5_temp_sibling(path, err);
    if (!w->temp_path) {
        free_writer(w);
        return err ? err->status : SP_ERR_OUTPUT;
    }
    w->partial_slot = spi_h5_partial_register(w->temp_path);
    spi_h5_silence(&w->silence);
    *writer = w;

    hid_t fapl = spi_h5_guard_fapl(&w->guard);
    if (fapl < 0) return h5_fail(w, err, "set up the HDF5 file driver");
    w->file = H5Fcreate(w->temp_path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (w->file < 0) return h5_fail(w, err, "create the HDF5 file");
    if (spi_h5_write_root_attributes(w->file, layout->aggregate) != SP_OK)
        return h5_fail(w, err, "write the root attributes");

    hid_t events = spi_h5_create_group(w->file, SPI_GROUP_EVENTS);
    if (events < 0) return h5_fail(w, err, "create the events group");
    /* Always the two schema-3 columns; optional ones only when declared. */
    unsigned columns = spi_h5_event_column_set(layout->event_columns);
    int status = SP_OK;
    for (int c = 0; c < SPI_EV_COUNT && status == SP_OK; c++) {
        if (!(columns & SPI_EV_BIT(c))) continue;
        w->events[c] = spi_h5_create_event_column(events, &spi_event_columns[c],
                                                 layout->event_count, H5P_DEFAULT);
        if (w->events[c] < 0) status = SP_ERR_HDF5;
    }
    H5Gclose(events);
    if (status != SP_OK) return h5_fail(w, err, "create the event columns");
    if (spi_event_chunks_wanted(layout->event_count) &&
        spi_event_chunks_open(&w->chunks, w->events, layout->event_count,
                              spi_write_threads()) != SP_OK)
        return oom(w, err);
    return io_check(w, err, "create the event columns");
}

/* ---- metadata, names, threads --------------------------------------------- */

int spi_writer_write_metadata(spi_writer *w, const spi_meta *metadata, spi_error *err) {
    return spi_h5_write_metadata(w->file, metadata) == SP_OK
               ? io_check(w, err, "write the metadata")
               : h5_fail(w, err, "write the metadata");
}

int spi_writer_write_region_names(spi_writer *w, const char *const *names, size_t count,
                                  spi_error *err) {
    if (count != w->layout.region_count)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "%s: %zu region names given, %zu declared", w->final_path, count,
                             w->layout.region_count);
    int status = spi_h5_write_region_table(w->file, names, count);
    if (status == SP_ERR_OUT_OF_MEMORY) return oom(w, err);
    return status == SP_OK ? io_check(w, err, "write the region names")
                           : h5_fail(w, err, "write the region names");
}

int spi_writer_write_threads(spi_writer *w, const spi_thread_row *threads, size_t count,
                             spi_error *err) {
    int status = spi_h5_write_thread_table(w->file, threads, count);
    if (status == SP_ERR_OUT_OF_MEMORY) return oom(w, err);
    return status == SP_OK ? io_check(w, err, "write the thread table")
                           : h5_fail(w, err, "write the thread table");
}

/* ---- rows ----------------------------------------------------------------- */

static char *copy_or_default(const char *text, const char *fallback) {
    return spi_strdup(text ? text : fallback);
}

int spi_writer_begin_row(spi_writer *w, const spi_row_header *header, spi_error *err) {
    if (w->row_open || w->rows_written >= w->layout.row_count)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "%s: more rows written than the %llu declared", w->final_path,
                             (unsigned long long)w->layout.row_count);
    if (header->region >= w->layout.region_count)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "%s: region id %u out of range",
                             w->final_path, header->region);
    uint64_t r = w->rows_written;
    w->source_files[r] = copy_or_default(header->source_file, "");
    w->source_texts[r] = copy_or_default(header->source_text, "");
    w->tags[r] = copy_or_default(header->tags_json, "[]");
    w->event_metadata[r] = copy_or_default(header->event_metadata_json, "[]");
    if (!w->source_files[r] || !w->source_texts[r] || !w->tags[r] || !w->event_metadata[r]) {
        w->rows_written++; /* so free_writer releases what was copied */
        return oom(w, err);
    }
    w->index_rows.region_ids[r] = header->region;
    w->index_rows.ranks[r] = header->rank;
    w->index_rows.offsets[r] = w->event_cursor;
    w->index_rows.source_lines[r] = header->source_line;
    w->index_rows.exclusive_totals[r] = header->exclusive_total;
    w->index_rows.stats[r] = header->stats;
    if (w->layout.aggregate) {
        /* u64 counts share the i64 buffers: same width, written as U64 */
        w->aggregates[0][r] = (int64_t)header->aggregate_count;
        w->aggregates[1][r] = header->aggregate_total;
        w->aggregates[2][r] = header->aggregate_minimum;
        w->aggregates[3][r] = header->aggregate_maximum;
        w->aggregates[4][r] = header->aggregate_exclusive;
    }
    w->row_open = true;
    w->row_events = 0;
    w->previous_start = 0;
    return SP_OK;
}

/* A failure of the chunked columns, named for the user. */
static int chunks_fail(spi_writer *w, spi_error *err, int status) {
    if (status == SP_ERR_OUT_OF_MEMORY) return oom(w, err);
    if (status == SP_ERR_HDF5) return h5_fail(w, err, "write events");
    if (status == SP_ERR_OUTPUT)
        return spi_error_set(err, status, "%s: cannot compress events", w->final_path);
    return spi_error_set(err, status, "%s: %llu of %llu events were written", w->final_path,
                         (unsigned long long)w->event_cursor,
                         (unsigned long long)w->layout.event_count);
}

/* The events of a chunked file: into the chunks' buffers directly, in
 * pieces that end at chunk boundaries (h5_event_chunks.h). */
static int append_chunked(spi_writer *w, const spi_event_chunk *chunk, spi_error *err) {
    for (size_t done = 0; done < chunk->count;) {
        size_t room, n = chunk->count - done;
        int64_t *deltas = spi_event_chunks_span(w->chunks, SPI_EV_START_DELTAS, &room);
        if (n > room) n = room;
        if (!deltas) /* put encoded (spi_writer_put_encoded_chunk): only the delta base */
            w->previous_start = chunk->starts[done + n - 1];
        for (size_t i = 0; deltas && i < n; i++) {
            int64_t start = chunk->starts[done + i];
            deltas[i] = start - w->previous_start; /* a row's first: its absolute start */
            w->previous_start = start;
        }
        for (int c = 0; c < SPI_EV_COUNT; c++) {
            if (c == SPI_EV_START_DELTAS || w->events[c] < 0) continue;
            int64_t *span = spi_event_chunks_span(w->chunks, c, &room);
            if (!span) continue; /* put encoded: no values */
            const int64_t *values = c == SPI_EV_DURATIONS ? chunk->durations : chunk->columns[c];
            if (values) memcpy(span, values + done, n * sizeof *span);
            else for (size_t i = 0; i < n; i++) span[i] = spi_event_columns[c].missing;
        }
        int status = spi_event_chunks_advance(w->chunks, n);
        if (status != SP_OK) return chunks_fail(w, err, status);
        if ((status = io_check(w, err, "write events")) != SP_OK) return status;
        w->event_cursor += n;
        w->row_events += n;
        done += n;
    }
    return SP_OK;
}

int spi_writer_append_events(spi_writer *w, const spi_event_chunk *chunk, spi_error *err) {
    errno = 0; /* h5_fail reads what the file driver leaves here */
    if (!w->row_open)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "%s: events outside a row",
                             w->final_path);
    if (chunk->count > w->layout.event_count - w->event_cursor)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "%s: more events written than the %llu declared", w->final_path,
                             (unsigned long long)w->layout.event_count);
    if (w->chunks) return append_chunked(w, chunk, err);
    /* Slices of at most SCRATCH_EVENTS so the delta encoding needs no
     * allocation proportional to the chunk. */
    for (size_t done = 0; done < chunk->count;) {
        size_t n = chunk->count - done;
        if (n > SCRATCH_EVENTS) n = SCRATCH_EVENTS;
        uint64_t offset = w->event_cursor;
        for (size_t i = 0; i < n; i++) {
            int64_t start = chunk->starts[done + i];
            /* delta[0] of a row is its absolute start (previous_start = 0). */
            w->scratch[i] = start - w->previous_start;
            w->previous_start = start;
        }
        int status = write_event_slice(w->events[SPI_EV_START_DELTAS], offset, w->scratch, n);
        if (status == SP_OK)
            status = write_event_slice(w->events[SPI_EV_DURATIONS], offset,
                                       chunk->durations + done, n);
        for (int c = 0; c < SPI_EV_COUNT && status == SP_OK; c++) {
            if (c == SPI_EV_START_DELTAS || c == SPI_EV_DURATIONS || w->events[c] < 0) continue;
            const int64_t *values = chunk->columns[c] ? chunk->columns[c] + done : NULL;
            if (!values) {
                for (size_t i = 0; i < n; i++) w->scratch[i] = spi_event_columns[c].missing;
                values = w->scratch;
            }
            status = write_event_slice(w->events[c], offset, values, n);
        }
        if (status != SP_OK) return h5_fail(w, err, "write events");
        if ((status = io_check(w, err, "write events")) != SP_OK) return status;
        w->event_cursor += n;
        w->row_events += n;
        done += n;
    }
    return SP_OK;
}

int spi_writer_end_row(spi_writer *w, spi_error *err) {
    if (!w->row_open)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "%s: no row to end", w->final_path);
    w->index_rows.counts[w->rows_written] = w->row_events;
    w->rows_written++;
    w->row_open = false;
    return SP_OK;
}

int spi_writer_set_row_stats(spi_writer *w, uint64_t row, const spi_stats *stats,
                             spi_error *err) {
    if (row >= w->rows_written + (w->row_open ? 1 : 0))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "%s: statistics of row %llu before it",
                             w->final_path, (unsigned long long)row);
    w->index_rows.stats[row] = *stats;
    return SP_OK;
}

/* ---- publish --------------------------------------------------------------- */

static int write_index(spi_writer *w) {
    hid_t group = spi_h5_create_group(w->file, SPI_GROUP_INDEX);
    if (group < 0) return SP_ERR_HDF5;
    const void *data[SPI_IDX_COLUMNAR_COUNT] = {
        [SPI_IDX_REGION_IDS] = w->index_rows.region_ids,
        [SPI_IDX_RANKS] = w->index_rows.ranks,
        [SPI_IDX_EVENT_OFFSETS] = w->index_rows.offsets,
        [SPI_IDX_EVENT_COUNTS] = w->index_rows.counts,
        [SPI_IDX_SOURCE_LINES] = w->index_rows.source_lines,
        [SPI_IDX_SOURCE_FILES] = w->source_files,
        [SPI_IDX_SOURCE_TEXTS] = w->source_texts,
        [SPI_IDX_TAGS] = w->tags,
        [SPI_IDX_EVENT_METADATA] = w->event_metadata,
        [SPI_IDX_EXCLUSIVE_TOTALS] = w->index_rows.exclusive_totals,
        [SPI_IDX_SUMMARY_STATISTICS] = w->index_rows.stats,
    };
    int status = SP_OK;
    /* The aggregate layout (FORMAT.md 1.8): region_ids and ranks have a
     * row each, the other columnar ones exist with length 0 as the Python
     * writer leaves them, and the five aggregate columns carry the data. */
    for (int c = 0; c < SPI_IDX_COLUMNAR_COUNT && status == SP_OK; c++) {
        bool per_row = !w->layout.aggregate || c == SPI_IDX_REGION_IDS || c == SPI_IDX_RANKS;
        status = spi_h5_write_column(group, &spi_index_columns[c], data[c], per_row ? w->rows_written : 0);
    }
    for (int c = SPI_IDX_AGGREGATE_COUNTS;
         w->layout.aggregate && c <= SPI_IDX_AGGREGATE_EXCLUSIVES && status == SP_OK; c++)
        status = spi_h5_write_column(group, &spi_index_columns[c],
                              w->aggregates[c - SPI_IDX_AGGREGATE_COUNTS], w->rows_written);
    H5Gclose(group);
    return status;
}

int spi_writer_publish(spi_writer *w, spi_error *err) {
    int status = SP_OK;
    if (w->row_open || w->rows_written != w->layout.row_count ||
        w->event_cursor != w->layout.event_count) {
        status = spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                               "%s: %llu of %llu rows and %llu of %llu events were written",
                               w->final_path, (unsigned long long)w->rows_written,
                               (unsigned long long)w->layout.row_count,
                               (unsigned long long)w->event_cursor,
                               (unsigned long long)w->layout.event_count);
    }
    errno = 0;
    if (status == SP_OK && w->chunks) {
        int chunked = spi_event_chunks_finish(w->chunks);
        if (chunked != SP_OK) status = chunks_fail(w, err, chunked);
    }
    if (status == SP_OK && write_index(w) != SP_OK) status = h5_fail(w, err, "write the index");
    for (int c = 0; c < SPI_EV_COUNT; c++) {
        if (w->events[c] >= 0) H5Dclose(w->events[c]);
        w->events[c] = -1;
    }
    if (status == SP_OK && H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0)
        status = h5_fail(w, err, "flush the file");
    if (status == SP_OK) status = io_check(w, err, "flush the file");
    if (status != SP_OK) {
        close_discarded(w); /* the file is going: never leave it half closed */
    } else {
        /* One close, whatever it returns: after a failed H5Fclose the
         * identifier must never be used again (close_discarded is not
         * called on it). */
        if (H5Fclose(w->file) < 0) status = h5_fail(w, err, "close the file");
        w->file = -1;
        if (status == SP_OK) status = io_check(w, err, "close the file");
    }
    if (status == SP_OK) status = spi_h5_publish_temp(w->temp_path, w->final_path, err);
    else unlink(w->temp_path);
    spi_h5_restore(&w->silence);
    free_writer(w);
    return status;
}

void spi_writer_abort(spi_writer *w) {
    if (!w) return;
    close_discarded(w);
    if (w->temp_path) unlink(w->temp_path);
    spi_h5_restore(&w->silence);
    free_writer(w);
}

hid_t spi_writer_file(const spi_writer *w) { return w->file; }

size_t spi_writer_event_chunk_elements(const spi_writer *w) {
    return w->chunks ? spi_event_chunks_chunk_elements(w->chunks) : 0;
}

int spi_writer_put_encoded_chunk(spi_writer *w, int column, const void *data, size_t bytes,
                                 bool *taken, spi_error *err) {
    *taken = false;
    if (!w->chunks || !w->row_open || column < 0 || column >= SPI_EV_COUNT) return SP_OK;
    int status = spi_event_chunks_put_encoded(w->chunks, column, data, bytes, taken);
    return status == SP_OK ? SP_OK : chunks_fail(w, err, status);
}

/* ---- whole profile ---------------------------------------------------------- */

int spi_profile_write(const spi_profile *profile, const char *path, spi_error *err) {
    spi_writer_layout layout = {
        .row_count = profile->row_count,
        .event_count = profile->event_count,
        .region_count = profile->name_count,
        .thread_count = profile->thread_count,
        .event_columns = profile->event_columns,
        .aggregate = profile->aggregate,
    };
    spi_writer *w = NULL;
    int status = spi_writer_create(&w, path, &layout, err);
    if (status == SP_OK) status = spi_writer_write_metadata(w, &profile->metadata, err);
    if (status == SP_OK)
        status = spi_writer_write_region_names(w, (const char *const *)profile->names,
                                               profile->name_count, err);
    if (status == SP_OK)
        status = spi_writer_write_threads(w, profile->threads, profile->thread_count, err);
    for (size_t r = 0; r < profile->row_count && status == SP_OK; r++) {
        const spi_row *row = &profile->rows[r];
        spi_row_header header = {
            .region = row->region,
            .rank = row->rank,
            .exclusive_total = row->exclusive_total,
            .source_line = row->source_line,
            .source_file = row->source_file,
            .source_text = row->source_text,
            .tags_json = row->tags_json,
            .event_metadata_json = row->event_metadata_json,
            .stats = row->stats,
            .aggregate_count = row->aggregate_count,
            .aggregate_total = row->aggregate_total,
            .aggregate_minimum = row->aggregate_minimum,
            .aggregate_maximum = row->aggregate_maximum,
            .aggregate_exclusive = row->aggregate_exclusive,
        };
        status = spi_writer_begin_row(w, &header, err);
        for (uint64_t first = 0; first < row->count && status == SP_OK;) {
            spi_call_slice slice;
            status = spi_profile_row_calls(profile, r, first, SCRATCH_EVENTS, &slice, err);
            if (status != SP_OK) break;
            if (slice.count == 0) {
                status = spi_error_set(err, SP_ERR_CORRUPT, "%s: row %zu ended early", path, r);
                break;
            }
            spi_event_chunk chunk = {.count = slice.count, .starts = slice.starts,
                                     .durations = slice.durations};
            /* columns only a read profile has (never a streamed one) */
            chunk.columns[SPI_EV_GPU_DURATIONS] = row->gpu_durations ? row->gpu_durations + first : NULL;
            chunk.columns[SPI_EV_TASK_IDS] = row->task_ids ? row->task_ids + first : NULL;
            chunk.columns[SPI_EV_AWAIT_NS] = row->await_ns ? row->await_ns + first : NULL;
            chunk.columns[SPI_EV_CALL_IDS] = slice.call_ids;
            chunk.columns[SPI_EV_PARENT_IDS] = slice.parent_ids;
            chunk.columns[SPI_EV_THREAD_IDS] = slice.thread_ids;
            status = spi_writer_append_events(w, &chunk, err);
            first += slice.count;
        }
        if (status == SP_OK && profile->source)
            status = spi_writer_set_row_stats(w, r, spi_profile_row_stats(profile, r), err);
        if (status == SP_OK) status = spi_writer_end_row(w, err);
    }
    /* rank<N>/perf_events and rank<N>/likwid (h5_counter_groups.c) */
    if (status == SP_OK) status = spi_h5_write_counter_groups(w->file, profile, err);
    if (status == SP_OK) status = spi_h5_write_call_paths(w->file, profile, err);
    if (status == SP_OK) return spi_writer_publish(w, err);
    spi_writer_abort(w);
    return status;
}
