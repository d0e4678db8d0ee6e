/*
 * merge_parts_assemble.c - process 0 of a merging group (merge_parts.c)
 * writes the output from the parts: the merged metadata and region table,
 * the parts' thread tables one after the other, and every part's rows in
 * order with their stored statistics and exclusive totals, then the
 * inputs' rank<N> groups; published as the merge alone publishes.
 *
 * A part's events sit at the output's offsets modulo the chunk size (its
 * leading pad row, skipped here), so a chunk that lies inside one part is
 * the output's chunk: it is copied as stored (H5Dread_chunk -> the
 * writer's put-encoded path), every column of it, and only its starts are
 * decoded (the writer's delta base). The chunks that straddle two parts,
 * one per boundary, and the last partial chunk go through the values.
 *
 * Memory: one part open at a time (its index), the output's thread table,
 * and a cursor's blocks.
 */
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "format/h5_writer.h"
#include "merge_internal.h"

/* The output column of each merge column. */
static const int out_col[SPM_COL_COUNT] = {
    [SPM_START] = SPI_EV_START_DELTAS, [SPM_DURATION] = SPI_EV_DURATIONS,
    [SPM_GPU] = SPI_EV_GPU_DURATIONS,  [SPM_CALL] = SPI_EV_CALL_IDS,
    [SPM_PARENT] = SPI_EV_PARENT_IDS,  [SPM_THREAD] = SPI_EV_THREAD_IDS,
    [SPM_TASK] = SPI_EV_TASK_IDS,      [SPM_AWAIT] = SPI_EV_AWAIT_NS};

typedef struct assembly {
    spi_writer *w;
    uint64_t out_pos;          /* events appended so far */
    size_t chunk;              /* the writer's chunk; 0: nothing is copied */
    unsigned copied;           /* SPM bits put encoded for the current chunk */
    uint64_t copied_end;
} assembly;

/* At an output chunk's start: when the part's chunk there is whole, put
 * every column's stored chunk into the writer. */
static int copy_chunk(assembly *a, spm_input *part, uint64_t part_pos, spi_error *err) {
    uint64_t c = a->chunk;
    if (c != SPM_BLOCK_EVENTS || a->out_pos % c || part_pos % c ||
        part_pos + c > part->prof.event_count)
        return SP_OK;
    for (int k = 0; k < SPM_COL_COUNT; k++) {
        if (!(part->columns & (1u << k))) continue;
        const void *data = NULL;
        size_t bytes = 0;
        if (spm_chunks_stored(part->chunked[k], c, part_pos / c, &data, &bytes) != SP_OK)
            return spm_oom(err);
        bool taken = false;
        int status = data ? spi_writer_put_encoded_chunk(a->w, out_col[k], data, bytes, &taken, err)
                          : SP_OK;
        if (status != SP_OK) return status;
        if (taken) a->copied |= 1u << k;
    }
    if (a->copied) a->copied_end = a->out_pos + c;
    return SP_OK;
}

static int copy_row(assembly *a, spm_input *part, size_t r, const spi_stats *stats,
                    spi_error *err) {
    const spi_row *row = &part->prof.rows[r];
    spi_row_header header = {
        .region = row->region, .rank = row->rank, .exclusive_total = row->exclusive_total,
        .source_line = row->source_line, .source_file = row->source_file,
        .source_text = row->source_text, .tags_json = row->tags_json,
        .event_metadata_json = row->event_metadata_json, .stats = *stats};
    int status = spi_writer_begin_row(a->w, &header, err);
    spm_cursor cur;
    if (status == SP_OK) status = spm_cursor_init(&cur, part, r, SPM_BLOCK_EVENTS, ~0u, err);
    if (status != SP_OK) return status;
    for (;;) {
        if (a->copied && a->out_pos >= a->copied_end) a->copied = 0;
        if (!a->copied && !part->whole) status = copy_chunk(a, part, part->offsets[r] + cur.next, err);
        /* Copied columns are not decoded; the starts always are. */
        cur.skip = a->copied & ~(1u << SPM_START);
        if (status == SP_OK) status = spm_cursor_fill(&cur, err);
        if (status != SP_OK || cur.len == 0) break;
        for (size_t done = 0; done < cur.len && status == SP_OK;) {
            size_t n = cur.len - done;
            if (n > SPM_BLOCK_EVENTS) n = SPM_BLOCK_EVENTS;
            spi_event_chunk chunk = {.count = n, .starts = cur.col[SPM_START] + done,
                                     .durations = cur.col[SPM_DURATION] + done};
            for (int k = SPM_GPU; k < SPM_COL_COUNT; k++)
                if (cur.col[k]) chunk.columns[out_col[k]] = cur.col[k] + done;
            status = spi_writer_append_events(a->w, &chunk, err);
            a->out_pos += n;
            done += n;
        }
        if (status != SP_OK) break;
    }
    spm_cursor_free(&cur);
    if (status == SP_OK) status = spi_writer_end_row(a->w, err);
    return status;
}

/* Part p's thread table appended to *rows (names copied). */
static int take_threads(const spm_input *part, spi_thread_row **rows, size_t *count,
                        spi_error *err) {
    size_t n = part->prof.thread_count;
    if (n == 0) return SP_OK;
    spi_thread_row *grown = spi_reallocarray(*rows, *count + n, sizeof *grown);
    if (!grown) return spm_oom(err);
    *rows = grown;
    for (size_t k = 0; k < n; k++) {
        spi_thread_row t = part->prof.threads[k];
        t.name = t.name ? spi_strdup(t.name) : NULL;
        grown[*count] = t;
        (*count)++;
        if (part->prof.threads[k].name && !t.name) return spm_oom(err);
    }
    return SP_OK;
}

int spm_assemble_parts(spm_merge *m, const char *output, char *const *parts,
                       const uint64_t *pads, const size_t *first, size_t part_count,
                       uint64_t thread_count, spi_error *err) {
    spi_meta meta = {0};
    const char **names = NULL;
    spi_writer_layout layout;
    spi_thread_row *threads = NULL;
    size_t thread_rows = 0;
    spm_input part = {.file = -1};
    bool part_open = false;
    int status = spm_output_layout(m, &layout, &names, err);
    /* The thread tables first: the writer takes the table before rows. */
    for (size_t p = 0; p < part_count && status == SP_OK; p++) {
        if (!parts[p]) continue;
        status = spm_input_open(&part, parts[p], p, err);
        if (status == SP_OK) status = take_threads(&part, &threads, &thread_rows, err);
        spm_input_close(&part);
    }
    if (status == SP_OK && thread_rows != thread_count)
        status = spi_error_set(err, SP_ERR_CORRUPT,
                               "scope-merge: the parts of %s hold %zu thread rows, not %llu",
                               output, thread_rows, (unsigned long long)thread_count);
    layout.thread_count = thread_rows;
    if (status == SP_OK) status = spm_build_metadata(m, &meta, err);
    assembly a = {0};
    if (status == SP_OK) status = spi_writer_create(&a.w, output, &layout, err);
    if (status == SP_OK && !spm_chunks_disabled()) a.chunk = spi_writer_event_chunk_elements(a.w);
    if (status == SP_OK) status = spi_writer_write_metadata(a.w, &meta, err);
    if (status == SP_OK)
        status = spi_writer_write_region_names(a.w, names, layout.region_count, err);
    if (status == SP_OK) status = spi_writer_write_threads(a.w, threads, thread_rows, err);
    for (size_t p = 0; p < part_count && status == SP_OK; p++) {
        if (!parts[p]) continue;
        status = spm_input_open(&part, parts[p], p, err);
        part_open = true;
        /* The pad row, when there is one, is the part's first. */
        size_t r = 0;
        if (status == SP_OK && pads[p]) {
            if (part.prof.row_count == 0 || part.prof.rows[0].count != pads[p] ||
                part.offsets[0] != 0)
                status = spi_error_set(err, SP_ERR_CORRUPT, "scope-merge: %s: no pad row",
                                       parts[p]);
            r = 1;
        }
        /* The part's rows are the block's, in the order merge_write.c
         * wrote them; their statistics are the inputs' rows' (pass 1
         * completed them everywhere, merge_parts.c): a summary read of the
         * part does not give back all of them (mean, m2). */
        for (size_t ri = first[p]; ri < first[p + 1] && status == SP_OK; ri++)
            for (size_t i = 0; i < m->input_count && status == SP_OK; i++) {
                size_t on_count = 0;
                const size_t *on = spm_rows_on_rank(m, i, m->ranks[ri], &on_count);
                for (size_t x = 0; x < on_count && status == SP_OK; x++, r++) {
                    if (r >= part.prof.row_count) {
                        status = spi_error_set(err, SP_ERR_CORRUPT,
                                               "scope-merge: %s: rows missing", parts[p]);
                        break;
                    }
                    status = copy_row(&a, &part, r, &m->inputs[i].prof.rows[on[x]].stats, err);
                }
            }
        if (status == SP_OK && r != part.prof.row_count)
            status = spi_error_set(err, SP_ERR_CORRUPT, "scope-merge: %s: rows left over",
                                   parts[p]);
        spm_input_close(&part);
        part_open = false;
    }
    if (part_open) spm_input_close(&part);
    if (status == SP_OK)
        status = spm_copy_aux(m->inputs, m->input_count, spi_writer_file(a.w), output, err);
    if (status == SP_OK) status = spi_writer_publish(a.w, err);
    else if (a.w) spi_writer_abort(a.w);
    spi_meta_free(&meta);
    spi_free(names);
    for (size_t k = 0; k < thread_rows; k++) spi_free(threads[k].name);
    spi_free(threads);
    return status;
}
