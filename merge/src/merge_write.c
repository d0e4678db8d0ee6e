/*
 * merge_write.c - pass 2 of sp_merge_files: the merged file written
 * through the writer. Every row is streamed in blocks with its call ids
 * renumbered, its thread ids shifted and its adopted root calls given the
 * new parents pass 1 left in the scratch file; parent references are
 * checked against the ids pass 1 collected. Then the rank<N> groups are
 * copied (merge_aux.c) and the file is published, or nothing is.
 *
 * Chunk copy (issue 31): where an input's chunk lands on an output chunk
 * whole (its events start at the same offset modulo the chunk size in
 * both files and belong to rows that follow each other in both) and a
 * column's values do not change in the merge (row_unchanged), the stored
 * chunk is copied as it is (H5Dread_chunk -> the writer's
 * spi_writer_put_encoded_chunk -> H5Dwrite_chunk) instead of being
 * decoded, renumbered and compressed again; that column is then not even
 * decoded (the cursor's skip mask), except the starts, which the writer
 * needs as the delta base. Only columns of the one layout
 * h5_chunk_inflate.h takes with shuffle, with the writer's chunk size,
 * filter mask 0, are copied; everything else takes the value path as
 * before, so the file holds the same values either way
 * (tests/merge/chunk_copy_test.py). SCOPE_PROFILER_MERGE_VALUE_PATH=1
 * turns it off with the decoders.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "format/h5_writer.h"
#include "merge_internal.h"

/* ---- pass 2: write ------------------------------------------------------------ */

typedef struct out_buffers {
    int64_t *call, *parent, *thread;
    spm_adoption *adopt;
    /* Lookups in the id maps of cells that are not dense (merge_ids.c):
     * one per kind of id, since each walks its own part of the map. */
    spm_id_lookup calls, parents, hosts;
    uint64_t out_pos;          /* events appended to the writer so far */
    size_t chunk_elements;     /* the writer's chunk; 0: no chunk is copied */
    unsigned copied;           /* spi_event_col bits put encoded for the chunk */
    uint64_t copied_end;       /* ... that ends here (output position) */
} out_buffers;

/* The output column of each merge column. */
static const int out_col[SPM_COL_COUNT] = {
    [SPM_START] = SPI_EV_START_DELTAS, [SPM_DURATION] = SPI_EV_DURATIONS,
    [SPM_GPU] = SPI_EV_GPU_DURATIONS,  [SPM_CALL] = SPI_EV_CALL_IDS,
    [SPM_PARENT] = SPI_EV_PARENT_IDS,  [SPM_THREAD] = SPI_EV_THREAD_IDS,
    [SPM_TASK] = SPI_EV_TASK_IDS,      [SPM_AWAIT] = SPI_EV_AWAIT_NS};

/* The columns (SPM bits) whose stored values row r of input i on rank
 * index ri keeps in the output exactly as stored, per what write_row does
 * to each: ids shifted by 0 (pass 1 refused ids below -1, so -1 stays
 * -1), no adopted parents, every thread its own lane, and start deltas
 * and durations as the writer computes them. */
static unsigned row_unchanged(const spm_merge *m, size_t i, size_t r, size_t ri) {
    const spm_input *in = &m->inputs[i];
    if (in->whole || !in->deltas) return 0;
    size_t cell = i * m->rank_count + ri, slot = m->slot_base[i] + r;
    unsigned same = 1u << SPM_START | 1u << SPM_DURATION;
    same |= in->columns & (1u << SPM_GPU | 1u << SPM_TASK | 1u << SPM_AWAIT);
    const spm_id_cell *ids = &m->ids[cell];
    bool ids_same = ids->count == 0 || (ids->dense && m->id_offset[cell] == ids->first);
    if (ids_same) same |= in->columns & (1u << SPM_CALL);
    if (ids_same && !(m->slot_adopted[slot] && m->rank_nested[ri]))
        same |= in->columns & (1u << SPM_PARENT);
    if (m->thread_column && (in->columns & (1u << SPM_THREAD))) {
        const spm_thread_set *t = &m->thread_sets[cell];
        bool lanes_same = !m->has_unknown[cell] || m->unknown_lane[cell] == -1;
        for (size_t k = 0; k < t->count && lanes_same; k++)
            lanes_same = t->lanes[k] == t->indices[k];
        if (lanes_same) same |= 1u << SPM_THREAD;
    }
    return same;
}

/* Before the block of row on[x] that starts at row position `pos`: when
 * it starts an output chunk and the input's chunk there is the same
 * events, put the unchanged columns' stored chunks into the writer;
 * b->copied says which were taken, until b->copied_end. */
static int copy_chunks(spm_merge *m, spi_writer *w, size_t i, const size_t *on, size_t on_count,
                       size_t x, size_t ri, uint64_t pos, out_buffers *b, spi_error *err) {
    spm_input *in = &m->inputs[i];
    uint64_t chunk = b->chunk_elements;
    uint64_t file_pos = in->offsets[on[x]] + pos;
    if (chunk != SPM_BLOCK_EVENTS || b->out_pos % chunk || file_pos % chunk) return SP_OK;
    /* The chunk's events: this row's rest and the rows after it, as long
     * as they follow each other in the input file too. */
    unsigned same = row_unchanged(m, i, on[x], ri);
    uint64_t covered = in->prof.rows[on[x]].count - pos;
    for (size_t y = x; covered < chunk && same && y + 1 < on_count; y++) {
        const spi_row *row = &in->prof.rows[on[y]];
        if (in->offsets[on[y + 1]] != in->offsets[on[y]] + row->count) break;
        same &= row_unchanged(m, i, on[y + 1], ri);
        covered += in->prof.rows[on[y + 1]].count;
    }
    if (covered < chunk) return SP_OK;
    for (int k = 0; k < SPM_COL_COUNT; k++) {
        if (!(same & (1u << k))) continue;
        const void *data = NULL;
        size_t bytes = 0;
        if (spm_chunks_stored(in->chunked[k], chunk, file_pos / chunk, &data, &bytes) != SP_OK)
            return spm_oom(err);
        bool taken = false;
        int status = data ? spi_writer_put_encoded_chunk(w, out_col[k], data, bytes, &taken, err)
                          : SP_OK;
        if (status != SP_OK) return status;
        if (taken) b->copied |= 1u << k;
    }
    if (b->copied) b->copied_end = b->out_pos + chunk;
    return SP_OK;
}

/* out[k]: ids[k] renumbered (offset plus its rank among the cell's ids),
 * -1 for none. Pass 1 saw every id and merge_ids.c checked every parent,
 * so each one has a rank. */
static int renumber(const spm_merge *m, spm_id_lookup *l, size_t cell, int64_t offset,
                    const int64_t *ids, size_t n, int64_t *out, spi_error *err) {
    const spm_id_cell *c = &m->ids[cell];
    if (c->dense) {
        uint64_t shift = (uint64_t)offset - (uint64_t)c->first;
        for (size_t k = 0; k < n; k++) out[k] = ids[k] >= 0 ? (int64_t)((uint64_t)ids[k] + shift) : -1;
        return SP_OK;
    }
    for (size_t k = 0; k < n; k++) {
        int64_t rank = -1;
        if (ids[k] >= 0) {
            int status = spm_id_rank(m, l, cell, ids[k], &rank, err);
            if (status != SP_OK) return status;
        }
        out[k] = rank >= 0 ? offset + rank : -1;
    }
    return SP_OK;
}

static int write_row(spm_merge *m, spi_writer *w, size_t input, const size_t *on,
                     size_t on_count, size_t x, size_t rank_idx, out_buffers *b,
                     spi_error *err) {
    size_t r = on[x];
    spm_input *in = &m->inputs[input];
    const spi_row *row = &in->prof.rows[r];
    size_t slot = m->slot_base[input] + r;
    spi_row_header header = {
        .region = m->region_base[input] + row->region,
        .rank = row->rank,
        /* Not nested: "not computed" rather than the input's value, which
         * nothing here has checked against the tree. */
        .exclusive_total = !m->rank_nested[rank_idx] ? -1
                           : m->rank_joint[rank_idx] ? m->slot_exclusive[slot]
                                                     : m->slot_exclusive_alone[slot],
        .source_line = row->source_line,
        .source_file = row->source_file,
        .source_text = row->source_text,
        .tags_json = row->tags_json,
        .event_metadata_json = row->event_metadata_json,
        .stats = row->stats,
    };
    int status = spi_writer_begin_row(w, &header, err);
    spm_cursor cur;
    if (status == SP_OK) status = spm_cursor_init(&cur, in, r, SPM_BLOCK_EVENTS, ~0u, err);
    if (status != SP_OK) return status;
    int64_t id_offset = m->id_offset[input * m->rank_count + rank_idx];
    bool adopted = m->slot_adopted[slot], joint = m->rank_joint[rank_idx];
    bool nested = m->rank_nested[rank_idx];
    size_t cell = input * m->rank_count + rank_idx;
    bool lane_known = false;
    int64_t lane_thread = -1, lane = -1;
    for (;;) {
        if (b->copied && b->out_pos >= b->copied_end) b->copied = 0;
        if (!b->copied && !in->whole)
            status = copy_chunks(m, w, input, on, on_count, x, rank_idx, cur.next, b, err);
        /* Copied columns are not read: their values would be ignored. */
        cur.skip = b->copied;
        if (status == SP_OK) status = spm_cursor_fill(&cur, err);
        if (status != SP_OK || cur.len == 0) break;
        unsigned copied = b->copied;
        /* Whole inputs deliver a row at once; emit it in bounded pieces. */
        for (size_t done = 0; done < cur.len && status == SP_OK;) {
            size_t n = cur.len - done;
            if (n > SPM_BLOCK_EVENTS) n = SPM_BLOCK_EVENTS;
            spi_event_chunk chunk = {.count = n, .starts = cur.col[SPM_START] + done,
                                     .durations = cur.col[SPM_DURATION] + done};
            if (cur.col[SPM_GPU]) chunk.columns[SPI_EV_GPU_DURATIONS] = cur.col[SPM_GPU] + done;
            if (cur.col[SPM_TASK]) chunk.columns[SPI_EV_TASK_IDS] = cur.col[SPM_TASK] + done;
            if (cur.col[SPM_AWAIT]) chunk.columns[SPI_EV_AWAIT_NS] = cur.col[SPM_AWAIT] + done;
            if (adopted) {
                /* Pass 1's records of these calls: new parents, and the ids
                 * of calls whose input has none. Past the scratch file's
                 * end means "nothing recorded". */
                uint64_t position = m->slot_spill[slot] + cur.base + done;
                size_t bytes = n * sizeof *b->adopt;
                ssize_t got = pread(fileno(m->spill), b->adopt, bytes,
                                    (off_t)(position * sizeof *b->adopt));
                if (got < 0)
                    status = spi_error_set(err, SP_ERR_OUTPUT,
                                           "scope-merge: cannot read the scratch file: %s",
                                           strerror(errno));
                else
                    memset((char *)b->adopt + got, 0, bytes - (size_t)got);
            }
            bool numbered = cur.col[SPM_CALL] || m->number_all;
            if (copied & (1u << SPM_CALL)) {
                chunk.columns[SPI_EV_CALL_IDS] = cur.col[SPM_CALL]; /* ignored */
            } else if (cur.col[SPM_CALL]) {
                status = renumber(m, &b->calls, cell, id_offset, cur.col[SPM_CALL] + done, n,
                                  b->call, err);
                chunk.columns[SPI_EV_CALL_IDS] = b->call;
            } else if (numbered) {
                for (size_t i = 0; i < n; i++)
                    b->parent[i] = adopted ? b->adopt[i].own_id - 1 : -1;
                if (status == SP_OK)
                    status = renumber(m, &b->calls, cell, id_offset, b->parent, n, b->call, err);
                chunk.columns[SPI_EV_CALL_IDS] = b->call;
            }
            if (copied & (1u << SPM_PARENT)) {
                chunk.columns[SPI_EV_PARENT_IDS] = cur.col[SPM_PARENT]; /* ignored */
            } else if (status == SP_OK && (cur.col[SPM_PARENT] || (numbered && adopted))) {
                /* Without parent_ids every call is stored as a root. The
                 * parents exist and enclose their calls (merge_ids.c). */
                if (cur.col[SPM_PARENT])
                    status = renumber(m, &b->parents, cell, id_offset, cur.col[SPM_PARENT] + done,
                                      n, b->parent, err);
                else
                    for (size_t i = 0; i < n; i++) b->parent[i] = -1;
                /* New parents only where the rank was nested. */
                for (size_t i = 0; adopted && nested && i < n && status == SP_OK; i++) {
                    /* The new parent of the layout the rank got. */
                    size_t host_cell = cell;
                    int64_t host_id = b->adopt[i].alone_host - 1;
                    if (joint) {
                        if (b->adopt[i].host_order <= 0) continue;
                        size_t host = m->by_order[(size_t)b->adopt[i].host_order - 1];
                        host_cell = host * m->rank_count + rank_idx;
                        host_id = b->adopt[i].host_id;
                    } else if (b->adopt[i].alone_host <= 0) {
                        continue;
                    }
                    int64_t at = -1;
                    status = spm_id_rank(m, &b->hosts, host_cell, host_id, &at, err);
                    if (at >= 0) b->parent[i] = m->id_offset[host_cell] + at;
                }
                chunk.columns[SPI_EV_PARENT_IDS] = b->parent;
            }
            if (m->thread_column && (copied & (1u << SPM_THREAD))) {
                chunk.columns[SPI_EV_THREAD_IDS] = cur.col[SPM_THREAD]; /* ignored */
            } else if (m->thread_column) {
                /* Every call gets its lane's output thread (merge_lanes.c);
                 * a call without a thread too. */
                const int64_t *ids = cur.col[SPM_THREAD] ? cur.col[SPM_THREAD] + done : NULL;
                /* A row's calls mostly repeat one thread: look up changes only. */
                for (size_t i = 0; i < n; i++) {
                    int64_t thread = ids ? ids[i] : -1;
                    if (!lane_known || thread != lane_thread) {
                        lane_thread = thread;
                        lane = spm_lane_of(m, input, rank_idx, thread);
                        lane_known = true;
                    }
                    b->thread[i] = lane;
                }
                chunk.columns[SPI_EV_THREAD_IDS] = b->thread;
            }
            if (status == SP_OK) status = spi_writer_append_events(w, &chunk, err);
            b->out_pos += n;
            spm_report(m, n);
            done += n;
        }
        if (status != SP_OK) break;
    }
    spm_cursor_free(&cur);
    if (status == SP_OK) status = spi_writer_end_row(w, err);
    return status;
}

int spm_output_layout(const spm_merge *m, spi_writer_layout *layout, const char ***names_out,
                      spi_error *err) {
    size_t name_count = 0;
    uint64_t rows = 0, events = 0;
    unsigned columns = 0;
    static const spi_event_col optional[SPM_COL_COUNT] = {
        [SPM_GPU] = SPI_EV_GPU_DURATIONS, [SPM_CALL] = SPI_EV_CALL_IDS,
        [SPM_PARENT] = SPI_EV_PARENT_IDS, [SPM_THREAD] = SPI_EV_THREAD_IDS,
        [SPM_TASK] = SPI_EV_TASK_IDS,     [SPM_AWAIT] = SPI_EV_AWAIT_NS};
    for (size_t i = 0; i < m->input_count; i++) {
        const spm_input *in = &m->inputs[i];
        name_count += in->prof.name_count;
        rows += in->prof.row_count;
        events += in->prof.event_count;
        for (int c = SPM_GPU; c < SPM_COL_COUNT; c++)
            if (in->columns & (1u << c)) columns |= SPI_EV_BIT(optional[c]);
    }
    /* Every call carries its lane (merge_lanes.c; without a thread table
     * every lane is -1 and the column says nothing); numbered calls carry
     * parents, the ones pass 1 found where an input stored none. */
    if (m->thread_column) columns |= SPI_EV_BIT(SPI_EV_THREAD_IDS);
    if (columns & SPI_EV_BIT(SPI_EV_CALL_IDS)) columns |= SPI_EV_BIT(SPI_EV_PARENT_IDS);
    const char **names = spi_calloc(name_count ? name_count : 1, sizeof *names);
    if (!names) return spm_oom(err);
    size_t k = 0;
    for (size_t i = 0; i < m->input_count; i++)
        for (size_t n = 0; n < m->inputs[i].prof.name_count; n++)
            names[k++] = m->inputs[i].prof.names[n];
    *layout = (spi_writer_layout){.row_count = rows, .event_count = events,
                                  .region_count = name_count,
                                  .thread_count = m->out_thread_count, .event_columns = columns};
    *names_out = names;
    return SP_OK;
}

/* A part's leading row: `pad` events of zeros that the assembly skips. */
static int write_pad(spi_writer *w, uint32_t rank, uint64_t pad, out_buffers *b,
                     spi_error *err) {
    spi_row_header header = {.region = 0, .rank = rank, .exclusive_total = -1,
                             .source_line = -1};
    int status = spi_writer_begin_row(w, &header, err);
    /* b->call is zeroed here and refilled before any real row reads it. */
    memset(b->call, 0, SPM_BLOCK_EVENTS * sizeof *b->call);
    for (uint64_t done = 0; done < pad && status == SP_OK;) {
        size_t n = pad - done < SPM_BLOCK_EVENTS ? (size_t)(pad - done) : SPM_BLOCK_EVENTS;
        spi_event_chunk chunk = {.count = n, .starts = b->call, .durations = b->call};
        status = spi_writer_append_events(w, &chunk, err);
        done += n;
        b->out_pos += n;
    }
    if (status == SP_OK) status = spi_writer_end_row(w, err);
    return status;
}

/* Rank indices [first, end) into a file at path; part: a group's part
 * (after `pad` events, without rank<N> groups), else the whole output. */
static int write_file(spm_merge *m, const char *path, size_t first, size_t end, uint64_t pad,
                      bool part, spi_error *err) {
    spi_meta meta = {0};
    const char **names = NULL;
    spi_writer_layout layout;
    out_buffers b = {.call = spi_calloc(SPM_BLOCK_EVENTS, sizeof(int64_t)),
                     .parent = spi_calloc(SPM_BLOCK_EVENTS, sizeof(int64_t)),
                     .thread = spi_calloc(SPM_BLOCK_EVENTS, sizeof(int64_t)),
                     .adopt = spi_calloc(SPM_BLOCK_EVENTS, sizeof(spm_adoption))};
    int status = b.call && b.parent && b.thread && b.adopt ? SP_OK : spm_oom(err);
    if (status == SP_OK) status = spm_output_layout(m, &layout, &names, err);
    if (status == SP_OK && part) {
        /* Only the block's rows and events, after the pad. */
        layout.row_count = pad > 0;
        layout.event_count = pad;
        for (size_t ri = first; ri < end; ri++)
            for (size_t i = 0; i < m->input_count; i++) {
                size_t on_count = 0;
                const size_t *on = spm_rows_on_rank(m, i, m->ranks[ri], &on_count);
                layout.row_count += on_count;
                for (size_t x = 0; x < on_count; x++)
                    layout.event_count += m->inputs[i].prof.rows[on[x]].count;
            }
    }
    if (status == SP_OK) status = spm_build_metadata(m, &meta, err);
    spi_writer *w = NULL;
    if (status == SP_OK) status = spi_writer_create(&w, path, &layout, err);
    /* Chunks are copied from the decoders' columns: none on the value path. */
    if (status == SP_OK && !spm_chunks_disabled())
        b.chunk_elements = spi_writer_event_chunk_elements(w);
    if (status == SP_OK) status = spi_writer_write_metadata(w, &meta, err);
    if (status == SP_OK)
        status = spi_writer_write_region_names(w, names, layout.region_count, err);
    if (status == SP_OK)
        status = spi_writer_write_threads(w, m->out_threads, m->out_thread_count, err);
    if (status == SP_OK && pad) status = write_pad(w, m->ranks[first], pad, &b, err);
    for (size_t ri = first; ri < end && status == SP_OK; ri++)
        for (size_t i = 0; i < m->input_count && status == SP_OK; i++) {
            size_t on_count = 0;
            const size_t *on = spm_rows_on_rank(m, i, m->ranks[ri], &on_count);
            for (size_t x = 0; x < on_count && status == SP_OK; x++)
                status = write_row(m, w, i, on, on_count, x, ri, &b, err);
        }
    if (status == SP_OK && !part)
        status = spm_copy_aux(m->inputs, m->input_count, spi_writer_file(w), path, err);
    if (status == SP_OK) status = spi_writer_publish(w, err);
    else if (w) spi_writer_abort(w);
    spi_meta_free(&meta);
    spi_free(names);
    spi_free(b.call);
    spi_free(b.parent);
    spi_free(b.thread);
    spi_free(b.adopt);
    spm_id_lookup_free(&b.calls);
    spm_id_lookup_free(&b.parents);
    spm_id_lookup_free(&b.hosts);
    return status;
}

int spm_write_output(spm_merge *m, const char *output, spi_error *err) {
    return write_file(m, output, 0, m->rank_count, 0, false, err);
}

int spm_write_part(spm_merge *m, const char *path, size_t first, size_t end, uint64_t pad,
                   spi_error *err) {
    return write_file(m, path, first, end, pad, true, err);
}
