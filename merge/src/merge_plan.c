/*
 * merge_plan.c - the plan of sp_merge_files, made once every input is open
 * and before any event is read: the rank list, the id order (driver
 * first), the union region table, the per-row slots and scratch-file
 * positions, the thread table's renumbering and the input rows grouped by
 * rank (spm_plan); the merged metadata; and, after pass 1 has collected
 * every input's numbered calls (merge_ids.c), the id offsets
 * (spm_number_ids), so that a call's new id is its input's offset plus its
 * rank among that input's ids.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/alloc.h"
#include "merge_internal.h"

/* ---- the thread sets (spm_merge.thread_sets) ---------------------------------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

int64_t spm_thread_find(const spm_thread_set *t, int64_t index) {
    /* An empty set has no array: bsearch must not see its NULL. */
    if (t->count == 0) return -1;
    const int64_t *at = bsearch(&index, t->indices, t->count, sizeof *t->indices, cmp_i64);
    return at ? (int64_t)(at - t->indices) : -1;
}

/* Sort a thread set by index, its table rows along; a (rank, index) twice
 * in one input's table is refused (scope-check rejects it: thread_ids
 * could not say which row a call ran on). */
typedef struct thread_ref {
    int64_t index;
    size_t table_row;
} thread_ref;

static int by_thread_index(const void *a, const void *b) {
    const thread_ref *x = a, *y = b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return x->table_row < y->table_row ? -1 : (x->table_row > y->table_row);
}

static int sort_thread_set(spm_thread_set *set, const spm_input *in, uint32_t rank,
                           spi_error *err) {
    if (set->count < 2) return SP_OK;
    thread_ref *refs = spi_malloc(set->count * sizeof *refs);
    if (!refs) return spm_oom(err);
    for (size_t k = 0; k < set->count; k++)
        refs[k] = (thread_ref){set->indices[k], set->table_rows[k]};
    qsort(refs, set->count, sizeof *refs, by_thread_index);
    for (size_t k = 0; k < set->count; k++) {
        set->indices[k] = refs[k].index;
        set->table_rows[k] = refs[k].table_row;
    }
    spi_free(refs);
    for (size_t k = 1; k < set->count; k++)
        if (set->indices[k] == set->indices[k - 1])
            return spi_error_set(err, SP_ERR_CORRUPT,
                                 "scope-merge: %s: rank %u: thread index %" PRId64 " appears "
                                 "twice in the thread table; scope-merge copies nothing "
                                 "scope-check rejects",
                                 in->path, rank, set->indices[k]);
    return SP_OK;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : (x > y);
}

/* Two index rows for one (rank, region) of an input: refused, as
 * scope-check refuses them (the row's calls would be counted twice). */
static int check_duplicate_rows(const spm_merge *m, spi_error *err) {
    size_t longest = 0;
    for (size_t i = 0; i < m->input_count; i++)
        if (m->inputs[i].prof.row_count > longest) longest = m->inputs[i].prof.row_count;
    uint32_t *regions = spi_malloc((longest ? longest : 1) * sizeof *regions);
    if (!regions) return spm_oom(err);
    int status = SP_OK;
    for (size_t i = 0; i < m->input_count && status == SP_OK; i++)
        for (size_t ri = 0; ri < m->rank_count && status == SP_OK; ri++) {
            size_t n = 0;
            const size_t *on = spm_rows_on_rank(m, i, m->ranks[ri], &n);
            for (size_t k = 0; k < n; k++) regions[k] = m->inputs[i].prof.rows[on[k]].region;
            qsort(regions, n, sizeof *regions, cmp_u32);
            for (size_t k = 1; k < n && status == SP_OK; k++)
                if (regions[k] == regions[k - 1])
                    status = spm_refuse(err, &m->inputs[i], m->ranks[ri], regions[k],
                                        "two index rows for one (rank, region)");
        }
    spi_free(regions);
    return status;
}

/* ---- plan ------------------------------------------------------------------ */

static int add_rank(uint32_t **ranks, size_t *count, size_t *capacity, uint32_t rank) {
    if (*count == *capacity) {
        size_t grown_capacity = *capacity ? *capacity * 2 : 16;
        uint32_t *grown = spi_reallocarray(*ranks, grown_capacity, sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        *ranks = grown;
        *capacity = grown_capacity;
    }
    (*ranks)[(*count)++] = rank;
    return SP_OK;
}

static int by_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : (x > y);
}

static const spi_profile *sort_profile;

static int by_rank_then_row(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    uint32_t rx = sort_profile->rows[x].rank, ry = sort_profile->rows[y].rank;
    if (rx != ry) return rx < ry ? -1 : 1;
    return x < y ? -1 : (x > y);
}

static void sort_rows_by_rank(size_t *rows, const spi_profile *p) {
    sort_profile = p; /* merges do not run concurrently: HDF5 is serial */
    qsort(rows, p->row_count, sizeof *rows, by_rank_then_row);
    sort_profile = NULL;
}

/* The rows of input i on `rank`, in file order: rows[0 .. *count). */
const size_t *spm_rows_on_rank(const spm_merge *m, size_t i, uint32_t rank, size_t *count) {
    const spi_profile *p = &m->inputs[i].prof;
    const size_t *rows = m->rank_rows[i];
    size_t lo = 0, hi = p->row_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->rows[rows[mid]].rank < rank) lo = mid + 1;
        else hi = mid;
    }
    size_t end = lo;
    while (end < p->row_count && p->rows[rows[end]].rank == rank) end++;
    *count = end - lo;
    return rows + lo;
}

int spm_plan(spm_merge *m, spi_error *err) {
    size_t n = m->input_count, capacity = 0;
    for (size_t i = 0; i < n; i++) {
        const spi_profile *p = &m->inputs[i].prof;
        for (size_t r = 0; r < p->row_count; r++)
            if (add_rank(&m->ranks, &m->rank_count, &capacity, p->rows[r].rank) != SP_OK)
                return spm_oom(err);
        for (size_t t = 0; t < p->thread_count; t++)
            if (add_rank(&m->ranks, &m->rank_count, &capacity, p->threads[t].rank) != SP_OK)
                return spm_oom(err);
    }
    if (m->rank_count) qsort(m->ranks, m->rank_count, sizeof *m->ranks, by_u32);
    size_t distinct = 0;
    for (size_t i = 0; i < m->rank_count; i++)
        if (distinct == 0 || m->ranks[distinct - 1] != m->ranks[i]) m->ranks[distinct++] = m->ranks[i];
    m->rank_count = distinct;

    size_t cells = n * (m->rank_count ? m->rank_count : 1);
    m->by_order = spi_calloc(n, sizeof *m->by_order);
    m->order_of = spi_calloc(n, sizeof *m->order_of);
    m->slot_base = spi_calloc(n, sizeof *m->slot_base);
    m->region_base = spi_calloc(n, sizeof *m->region_base);
    m->max_id = spi_calloc(cells, sizeof *m->max_id);
    m->id_offset = spi_calloc(cells, sizeof *m->id_offset);
    m->thread_offset = spi_calloc(cells, sizeof *m->thread_offset);
    m->rank_nested = spi_calloc(m->rank_count ? m->rank_count : 1, sizeof *m->rank_nested);
    m->rank_joint = spi_calloc(m->rank_count ? m->rank_count : 1, sizeof *m->rank_joint);
    m->primary = spi_calloc(cells, sizeof *m->primary);
    m->has_unknown = spi_calloc(cells, sizeof *m->has_unknown);
    m->linked = spi_calloc(cells, sizeof *m->linked);
    m->unknown_lane = spi_calloc(cells, sizeof *m->unknown_lane);
    if (!m->by_order || !m->order_of || !m->slot_base || !m->region_base || !m->max_id ||
        !m->id_offset || !m->thread_offset || !m->rank_nested || !m->rank_joint ||
        !m->primary || !m->has_unknown || !m->linked || !m->unknown_lane)
        return spm_oom(err);
    /* When some input numbers its calls, the output stores parents, so the
     * calls of inputs without ids get ids too (pass 1, in start order):
     * otherwise their nesting could not be stored, and a stored root the
     * package nests under a call is what scope-check rejects. */
    for (size_t i = 0; i < n; i++)
        if (m->inputs[i].columns & (1u << SPM_CALL)) m->number_all = true;
    /* Driver first: ids of non-native inputs are numbered before native ones. */
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++)
            if (m->inputs[i].native == (pass == 1)) m->by_order[k++] = i;
    for (size_t o = 0; o < n; o++) m->order_of[m->by_order[o]] = o;

    uint64_t names = 0, slots = 0, spill = 0;
    for (size_t i = 0; i < n; i++) {
        m->region_base[i] = (uint32_t)names;
        names += m->inputs[i].prof.name_count;
        m->slot_base[i] = (size_t)slots;
        slots += m->inputs[i].prof.row_count;
        m->total += 2 * m->inputs[i].prof.event_count;
    }
    if (names > UINT32_MAX)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "scope-merge: too many regions");
    m->slot_count = (size_t)slots;
    m->slot_exclusive = spi_calloc(slots ? slots : 1, sizeof *m->slot_exclusive);
    m->slot_exclusive_alone = spi_calloc(slots ? slots : 1, sizeof *m->slot_exclusive_alone);
    m->slot_adopted = spi_calloc(slots ? slots : 1, sizeof *m->slot_adopted);
    m->slot_spill = spi_calloc(slots ? slots : 1, sizeof *m->slot_spill);
    if (!m->slot_exclusive || !m->slot_exclusive_alone || !m->slot_adopted || !m->slot_spill)
        return spm_oom(err);
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < m->inputs[i].prof.row_count; r++) {
            m->slot_spill[m->slot_base[i] + r] = spill;
            spill += m->inputs[i].prof.rows[r].count;
        }
    for (size_t c = 0; c < cells; c++) m->max_id[c] = -1;

    /* Thread indices are dense per rank and per input; later inputs move
     * past the indices the earlier ones use on the same rank. One pass
     * over each thread table (ranks found by bisection), so 10^5 ranks
     * cost no more than their rows. */
    m->ids = spi_calloc(cells, sizeof *m->ids);
    m->thread_sets = spi_calloc(cells, sizeof *m->thread_sets);
    int64_t *highest = spi_malloc(cells * sizeof *highest);
    if (!m->ids || !m->thread_sets || !highest) {
        spi_free(highest);
        return spm_oom(err);
    }
    for (size_t c = 0; c < cells; c++) highest[c] = -1;
    int status = SP_OK;
    for (size_t i = 0; i < n && status == SP_OK; i++) {
        const spi_profile *p = &m->inputs[i].prof;
        for (size_t t = 0; t < p->thread_count; t++) {
            uint32_t *at = bsearch(&p->threads[t].rank, m->ranks, m->rank_count,
                                   sizeof *m->ranks, by_u32);
            if (!at) continue;
            size_t cell = i * m->rank_count + (size_t)(at - m->ranks);
            int64_t index = p->threads[t].index;
            if (index < -1) {
                status = spi_error_set(err, SP_ERR_CORRUPT,
                                       "scope-merge: %s: thread table row %zu has the invalid "
                                       "index %" PRId64 "; scope-merge copies nothing "
                                       "scope-check rejects",
                                       m->inputs[i].path, t, index);
                break;
            }
            if (index < 0) continue; /* a row for "no thread" names no lane */
            if (index > highest[cell]) highest[cell] = index;
            spm_thread_set *set = &m->thread_sets[cell];
            int64_t *grown = spi_reallocarray(set->indices, set->count + 1, sizeof *grown);
            if (grown) set->indices = grown;
            size_t *grown_rows =
                grown ? spi_reallocarray(set->table_rows, set->count + 1, sizeof *grown_rows) : NULL;
            if (grown_rows) set->table_rows = grown_rows;
            if (!grown || !grown_rows) {
                status = spm_oom(err);
                break;
            }
            set->indices[set->count] = index;
            set->table_rows[set->count++] = t;
        }
    }
    for (size_t c = 0; c < cells && status == SP_OK; c++) {
        spm_thread_set *set = &m->thread_sets[c];
        status = sort_thread_set(set, &m->inputs[c / m->rank_count], m->ranks[c % m->rank_count],
                                 err);
        if (status == SP_OK && set->count) {
            set->lanes = spi_malloc(set->count * sizeof *set->lanes);
            if (!set->lanes) status = spm_oom(err);
        }
        /* The main lane: a driver file without thread_ids records its main
         * thread's calls without a thread; a native one numbers its main
         * thread 0 (the thread that attached first). */
        const spm_input *in = &m->inputs[c / m->rank_count];
        if (!(in->columns & (1u << SPM_THREAD))) m->primary[c] = SPM_PRIMARY_UNKNOWN_THREAD;
        else m->primary[c] = spm_thread_find(set, 0) >= 0 ? 0 : SPM_NO_PRIMARY;
    }
    for (size_t ri = 0; ri < m->rank_count && status == SP_OK; ri++) {
        int64_t next = 0;
        for (size_t i = 0; i < n; i++) {
            m->thread_offset[i * m->rank_count + ri] = next;
            if (__builtin_add_overflow(next, highest[i * m->rank_count + ri] + 1, &next)) {
                status = spi_error_set(err, SP_ERR_CORRUPT,
                                       "scope-merge: %s: thread indices beyond int64",
                                       m->inputs[i].path);
                break;
            }
        }
    }
    spi_free(highest);
    if (status != SP_OK) return status;
    /* Each input's rows grouped by rank, for the per-rank passes. */
    m->rank_rows = spi_calloc(n, sizeof *m->rank_rows);
    if (!m->rank_rows) return spm_oom(err);
    for (size_t i = 0; i < n; i++) {
        const spi_profile *p = &m->inputs[i].prof;
        m->rank_rows[i] = spi_malloc((p->row_count + 1) * sizeof **m->rank_rows);
        if (!m->rank_rows[i]) return spm_oom(err);
        for (size_t r = 0; r < p->row_count; r++) m->rank_rows[i][r] = r;
        sort_rows_by_rank(m->rank_rows[i], p);
    }
    return check_duplicate_rows(m, err);
}

/* Sizes of the run: the merged run is as large as its largest part, so
 * these take the maximum over inputs instead of the first input's value. */
static const char *const size_keys[] = {"mpi_size", "num_nodes", "omp_num_threads",
                                        "total_cores"};
#define SIZE_KEY_COUNT (sizeof size_keys / sizeof *size_keys)

/* What each input said about itself, kept per input because the union
 * keeps only one value per key: merged_<key>s[i] is input i's <key>, "" when
 * it had none (FORMAT.md 1.2: a list is a 1-D string array). */
static const char *const per_input_keys[][2] = {{"source", "merged_sources"},
                                                {"source_language", "merged_source_languages"},
                                                {"label", "merged_labels"},
                                                {"scope_profiler_version", "merged_versions"}};
#define PER_INPUT_KEY_COUNT (sizeof per_input_keys / sizeof *per_input_keys)

static int add_per_input_metadata(const spm_merge *m, spi_meta *meta) {
    const char **items = spi_calloc(m->input_count, sizeof *items);
    if (!items) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < m->input_count; i++) items[i] = m->inputs[i].path;
    int status = spi_meta_set_str_array(meta, "merged_inputs", items, m->input_count);
    for (size_t k = 0; k < PER_INPUT_KEY_COUNT && status == SP_OK; k++) {
        for (size_t i = 0; i < m->input_count; i++) {
            const spi_meta_entry *e = spi_meta_find(&m->inputs[i].prof.metadata, per_input_keys[k][0]);
            items[i] = e && e->kind == SPI_META_STR ? e->str : "";
        }
        status = spi_meta_set_str_array(meta, per_input_keys[k][1], items, m->input_count);
    }
    spi_free(items);
    return status;
}

/* The writer stores each metadata key as one attribute of /metadata in the
 * object header, where HDF5 limits one message to 64 KiB: a string array
 * holds a 16-byte reference per item, so more than this many items cannot
 * be written. Refused up front, naming the input and the key, instead of
 * failing at the write. */
#define SPM_METADATA_MAX_ITEMS 4000

/* The merged run spans all its parts: it starts with the earliest input
 * and ends with the latest (the other keys are the first input's). */
static const char *const span_keys[2] = {"start_time_ns", "finalize_time_ns"};

int spm_build_metadata(const spm_merge *m, spi_meta *meta, spi_error *err) {
    int64_t largest[SIZE_KEY_COUNT] = {0};
    int64_t span[2] = {INT64_MAX, INT64_MIN};
    bool span_known[2] = {false, false};
    for (size_t i = 0; i < m->input_count; i++) {
        const spi_meta *source = &m->inputs[i].prof.metadata;
        for (size_t e = 0; e < source->count; e++)
            if (source->entries[e].kind == SPI_META_STR_ARRAY &&
                source->entries[e].item_count > SPM_METADATA_MAX_ITEMS)
                return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                     "scope-merge: %s: metadata key '%s' holds %zu items; a "
                                     "merged file keeps at most %d per key (one HDF5 attribute "
                                     "each)",
                                     m->inputs[i].path, source->entries[e].key,
                                     source->entries[e].item_count, SPM_METADATA_MAX_ITEMS);
        for (size_t e = 0; e < source->count; e++)
            if (spi_meta_add_missing(meta, &source->entries[e]) != SP_OK) return spm_oom(err);
        for (int k = 0; k < 2; k++) {
            const spi_meta_entry *t = spi_meta_find(source, span_keys[k]);
            if (!t || t->kind != SPI_META_I64) continue;
            if (k == 0 ? t->i64 < span[0] : t->i64 > span[1]) span[k] = t->i64;
            span_known[k] = true;
        }
        for (size_t k = 0; k < SIZE_KEY_COUNT; k++) {
            const spi_meta_entry *size = spi_meta_find(source, size_keys[k]);
            if (size && size->kind == SPI_META_I64 && size->i64 > largest[k]) largest[k] = size->i64;
        }
    }
    /* mpi_size also covers every rank that has rows. */
    if (m->rank_count && (int64_t)m->ranks[m->rank_count - 1] + 1 > largest[0])
        largest[0] = (int64_t)m->ranks[m->rank_count - 1] + 1;
    for (size_t k = 0; k < SIZE_KEY_COUNT; k++)
        if (largest[k] > 0 && spi_meta_set_i64(meta, size_keys[k], largest[k]) != SP_OK)
            return spm_oom(err);
    for (int k = 0; k < 2; k++)
        if (span_known[k] && spi_meta_set_i64(meta, span_keys[k], span[k]) != SP_OK)
            return spm_oom(err);
    if (m->options->label && spi_meta_set_str(meta, "label", m->options->label) != SP_OK)
        return spm_oom(err);
    if (add_per_input_metadata(m, meta) != SP_OK) return spm_oom(err);
    return SP_OK;
}

/* ---- renumbering -------------------------------------------------------------- */

int spm_number_ids(spm_merge *m, spi_error *err) {
    (void)err;
    /* Offsets in id order, so earlier-ranked inputs keep smaller ids;
     * each input takes as many ids as it has numbered calls, whatever
     * their values (the new id is the offset plus the call's rank among
     * its input's ids). */
    for (size_t ri = 0; ri < m->rank_count; ri++) {
        int64_t next = 0;
        for (size_t o = 0; o < m->input_count; o++) {
            size_t cell = m->by_order[o] * m->rank_count + ri;
            m->id_offset[cell] = next;
            next += (int64_t)m->ids[cell].count;
        }
    }
    return SP_OK;
}
