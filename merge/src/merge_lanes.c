/*
 * merge_lanes.c - the output's lanes: which thread id each call of the
 * merged file carries, and the thread table that says what each one is.
 *
 * The Python package (our reference reader) never reads parent_ids for its
 * summary tree: it nests calls by time containment within a lane (task id,
 * else -2 - thread id, else -1 for "thread unknown"), and never across
 * lanes (docs/FORMAT.md 4.5, 5). So the lanes of a merged file decide the
 * tree the package shows, and they must be the lanes whose nesting pass 1
 * stored (merge_sweep.c):
 *
 *   - on a rank where a driver call encloses native calls (the inputs are
 *     "linked"), the linked inputs' main lanes (a driver's calls without a
 *     thread, a native file's thread 0) become ONE output thread, so the
 *     native calls nest under the driver call there too;
 *   - every other lane of every input (other threads, an input whose calls
 *     nest with no other input's, unrelated runs) gets an output thread of
 *     its own, so that calls which do not nest never share a lane, even
 *     when two inputs both recorded "thread unknown" or both a thread 0.
 *
 * Every call of the output therefore has a thread id >= 0 and every id has
 * a row in the thread table (except on a rank whose calls are all one
 * input's calls without a thread: one lane, left -1), named after what it
 * was: "<label>: main
 * thread" for a driver's calls without a thread, "<label>: thread N
 * (<name>)" for an input's thread N, several joined by " + " for a joint
 * lane (<label>: the input's metadata label, else its path). The row's
 * other columns are the input thread's own (the first native one's for a
 * joint lane); a lane without a table row gets -1 where nothing is known.
 *
 * Memory: one entry per input thread and rank, as the inputs' tables.
 */
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "merge_internal.h"

/* "<label>: " of input i: its label, else its path. */
static const char *input_label(const spm_input *in) {
    const spi_meta_entry *label = spi_meta_find(&in->prof.metadata, "label");
    return label && label->kind == SPI_META_STR && label->str[0] ? label->str : in->path;
}

/* Append "<label>: <what>" (after " + " when text is not empty). */
static char *append_part(char *text, const spm_input *in, const char *what) {
    size_t used = text ? strlen(text) : 0;
    const char *label = input_label(in);
    size_t bytes = used + strlen(label) + strlen(what) + 6;
    char *grown = spi_reallocarray(text, bytes, 1);
    if (!grown) {
        spi_free(text);
        return NULL;
    }
    snprintf(grown + used, bytes - used, "%s%s: %s", used ? " + " : "", label, what);
    return grown;
}

static char *thread_part(char *text, const spm_input *in, const spi_thread_row *t) {
    char what[128];
    const char *name = t->name && t->name[0] ? t->name : NULL;
    snprintf(what, sizeof what, "thread %lld%s%.80s%s", (long long)t->index, name ? " (" : "",
             name ? name : "", name ? ")" : "");
    return append_part(text, in, what);
}

typedef struct table {
    spi_thread_row *rows;
    size_t count, capacity;
} table;

/* A new output thread on rank `rank` (its name added by the caller). */
static spi_thread_row *add_row(table *t, uint32_t rank) {
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? t->capacity * 2 : 16;
        spi_thread_row *grown = spi_reallocarray(t->rows, capacity, sizeof *grown);
        if (!grown) return NULL;
        t->rows = grown;
        t->capacity = capacity;
    }
    spi_thread_row *row = &t->rows[t->count];
    *row = (spi_thread_row){.rank = rank, .index = (int64_t)t->count, .ident = -1,
                            .native_id = -1, .start_ns = -1, .end_ns = -1, .cpu_ns = -1};
    t->count++;
    return row;
}

/* Copy an input thread's columns (not its index or name) into row. */
static void copy_thread(spi_thread_row *row, const spi_thread_row *from) {
    row->ident = from->ident;
    row->native_id = from->native_id;
    row->daemon = from->daemon;
    row->start_ns = from->start_ns;
    row->end_ns = from->end_ns;
    row->cpu_ns = from->cpu_ns;
}

/* A rank whose calls are all one input's calls without a thread has one
 * lane, which the package already calls -1: it keeps -1 and needs no
 * table row (a driver-only rank of an MPI run, or 10^5 ranks of one
 * input, cost nothing). */
static bool single_unknown_lane(const spm_merge *m, size_t ri) {
    size_t unknown = 0;
    for (size_t i = 0; i < m->input_count; i++) {
        size_t cell = i * m->rank_count + ri;
        if (m->thread_sets[cell].count) return false;
        unknown += m->has_unknown[cell];
    }
    return unknown == 1;
}

/* The lanes of rank index ri, appended to t with indices from `first`. */
static int assign_rank(spm_merge *m, size_t ri, table *t, size_t first) {
    uint32_t rank = m->ranks[ri];
    bool joint = m->rank_joint[ri];
    if (single_unknown_lane(m, ri)) {
        for (size_t i = 0; i < m->input_count; i++) m->unknown_lane[i * m->rank_count + ri] = -1;
        return SP_OK;
    }
    int64_t joint_index = -1;
    size_t joint_row = 0;
    for (size_t i = 0; joint && i < m->input_count; i++) {
        size_t cell = i * m->rank_count + ri;
        if (!m->linked[cell] || m->primary[cell] == SPM_NO_PRIMARY) continue;
        if (joint_index < 0) {
            if (!add_row(t, rank)) return SP_ERR_OUT_OF_MEMORY;
            joint_row = t->count - 1;
            joint_index = (int64_t)(joint_row - first);
        }
        spm_input *in = &m->inputs[i];
        spi_thread_row *row = &t->rows[joint_row];
        if (m->primary[cell] == SPM_PRIMARY_UNKNOWN_THREAD) {
            row->name = append_part(row->name, in, "main thread");
        } else {
            const spm_thread_set *set = &m->thread_sets[cell];
            const spi_thread_row *from =
                &in->prof.threads[set->table_rows[spm_thread_find(set, m->primary[cell])]];
            if (row->ident == -1 && row->native_id == -1) copy_thread(row, from);
            row->name = thread_part(row->name, in, from);
        }
        if (!row->name) return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < m->input_count; i++) {
        size_t cell = i * m->rank_count + ri;
        spm_input *in = &m->inputs[i];
        bool in_joint = m->linked[cell] && joint_index >= 0;
        m->unknown_lane[cell] = -1;
        if (m->has_unknown[cell]) {
            if (in_joint && m->primary[cell] == SPM_PRIMARY_UNKNOWN_THREAD) {
                m->unknown_lane[cell] = joint_index;
            } else {
                spi_thread_row *row = add_row(t, rank);
                if (!row) return SP_ERR_OUT_OF_MEMORY;
                row->name = append_part(NULL, in,
                                        m->primary[cell] == SPM_PRIMARY_UNKNOWN_THREAD
                                            ? "main thread" : "thread unknown");
                if (!row->name) return SP_ERR_OUT_OF_MEMORY;
                m->unknown_lane[cell] = (int64_t)(t->count - 1 - first);
            }
        }
        spm_thread_set *set = &m->thread_sets[cell];
        for (size_t k = 0; k < set->count; k++) {
            if (in_joint && set->indices[k] == m->primary[cell]) {
                set->lanes[k] = joint_index;
                continue;
            }
            const spi_thread_row *from = &in->prof.threads[set->table_rows[k]];
            spi_thread_row *row = add_row(t, rank);
            if (!row) return SP_ERR_OUT_OF_MEMORY;
            copy_thread(row, from);
            row->name = thread_part(NULL, in, from);
            if (!row->name) return SP_ERR_OUT_OF_MEMORY;
            set->lanes[k] = (int64_t)(t->count - 1 - first);
        }
    }
    /* Indices are per rank: renumber this rank's rows from 0. */
    for (size_t k = first; k < t->count; k++) t->rows[k].index = (int64_t)(k - first);
    return SP_OK;
}

int spm_assign_lanes(spm_merge *m, spi_error *err) {
    return spm_assign_lanes_range(m, 0, m->rank_count, err);
}

int spm_assign_lanes_range(spm_merge *m, size_t first, size_t end, spi_error *err) {
    table t = {0};
    int status = SP_OK;
    for (size_t ri = first; ri < end && status == SP_OK; ri++)
        status = assign_rank(m, ri, &t, t.count);
    if (status != SP_OK) {
        for (size_t k = 0; k < t.count; k++) spi_free(t.rows[k].name);
        spi_free(t.rows);
        return spm_oom(err);
    }
    m->out_threads = t.rows;
    m->out_thread_count = t.count;
    m->thread_column = t.count > 0;
    return SP_OK;
}

int64_t spm_lane_of(const spm_merge *m, size_t i, size_t ri, int64_t thread) {
    size_t cell = i * m->rank_count + ri;
    if (thread < 0) return m->unknown_lane[cell];
    int64_t at = spm_thread_find(&m->thread_sets[cell], thread);
    return at >= 0 ? m->thread_sets[cell].lanes[at] : -1;
}
