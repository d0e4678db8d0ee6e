/*
 * merge.c - sp_merge_files: several separately recorded profiles into one
 * schema-3 file, one result set per rank (FORMAT.md 5, with the native
 * additions described in scope_profiler_merge.h).
 *
 * Plan, then two streaming passes, so that memory is bounded by blocks of
 * events and never by their number:
 *
 *   plan    open every input (merge_input.c), refuse collisions, build the
 *           union region table, the rank list, metadata and thread table.
 *   pass 1  per rank, a k-way merge of all that rank's rows (of every
 *           input) in start order, with one stack of open calls per lane.
 *           It rebuilds the nesting exactly as FORMAT.md 7.6 does, which
 *           gives the exclusive totals of the merged tree, finds for each
 *           root call of a later input the innermost enclosing call of an
 *           earlier one (its new parent), and records each input's highest
 *           call id per rank (the renumbering offsets). New parents go to
 *           an unlinked scratch file at the call's event position, so they
 *           cost disk, not memory; positions without one read back as 0.
 *   pass 2  every row streamed through the writer in blocks: ids shifted
 *           by their offsets, adopted roots given their new parent.
 *
 * Rows never need combining: a (rank, region) pair comes from exactly one
 * input, because a region name in two inputs is refused.
 *
 * Ids: inputs are ranked "driver first" (inputs whose metadata source is
 * not "native", in argument order, then the native ones). Offsets follow
 * that ranking, so a driver call adopted as parent always has a smaller id
 * than its native child, as FORMAT.md 1.5 requires of parents.
 *
 * When a rank cannot be nested (a row not in start order, or calls that
 * overlap improperly in one lane), nothing on that rank is adopted and its
 * rows keep the exclusive totals their input stored (or -1): the reader
 * then rebuilds what it can, and nothing wrong is ever stored.
 *
 * Validation (issue 19, docs/FORMAT.md 3.4): merge copies nothing
 * scope-check would reject. Pass 1 refuses, naming the input and the
 * invariant, negative durations, ends beyond int64, ids below -1, a parent
 * id not smaller than its call's, thread ids missing from the input's
 * thread table, and totals that overflow; it also keeps every numbered
 * call's (id, start, end) per input and rank (24 bytes per call), which
 * gives the refusals of repeated ids, missing parents and parents that do
 * not enclose their child, and the renumbering: a call's new id is its
 * input's offset plus its rank among that input's ids, so no input's id
 * magnitudes can shift (or wrap) another's. Statistics are always
 * recomputed from the events (stored ones may be damaged); arithmetic on
 * stored values is checked.
 */
#include "scope_profiler_merge.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "format/h5_util.h"
#include "format/h5_writer.h"
#include "merge_internal.h"
#include "format/schema.h"

/* Pass-1 read buffers of one rank share this budget (bytes). */
#define SPM_SWEEP_BUDGET_BYTES ((size_t)24 << 20)
#define SPM_SWEEP_MIN_BLOCK 1024

typedef struct merge {
    spm_input *inputs;
    size_t input_count;
    size_t *by_order;          /* inputs in id order (driver first) */
    size_t *order_of;          /* input -> its position in by_order */
    uint32_t *ranks;           /* sorted, distinct */
    size_t rank_count;
    size_t *slot_base;         /* per input: first slot of its rows */
    size_t slot_count;
    int64_t *slot_exclusive;   /* per slot, pass 1 */
    bool *slot_adopted;        /* per slot: some call got a new parent */
    uint64_t *slot_spill;      /* per slot: first event position in the scratch file */
    bool *rank_nested;         /* per rank: pass 1 rebuilt the nesting */
    int64_t *max_id;           /* [input * rank_count + rank]: highest call id, -1 none */
    struct id_table *ids;      /* same shape: the numbered calls, sorted by id */
    struct thread_set *thread_sets; /* same shape: thread indices of the table */
    size_t **rank_rows;        /* ... (row indices) */
    int64_t *id_offset;        /* same shape */
    int64_t *thread_offset;    /* same shape */
    uint32_t *region_base;     /* per input: its first id in the union table */
    FILE *spill;
    uint64_t done, total;      /* progress */
    const sp_merge_options *options;
} merge;

static int oom(spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "scope-merge: out of memory");
}

/* ---- what pass 1 keeps for validation and renumbering -------------------- */

typedef struct id_entry {
    int64_t id, start, end;
} id_entry;

typedef struct id_table {
    id_entry *entries;
    size_t count, capacity;
    bool dense;                /* ids are entries[0].id + 0 .. count-1 */
} id_table;

typedef struct thread_set {
    int64_t *indices;          /* sorted */
    size_t count;
} thread_set;

static int id_push(id_table *t, id_entry e) {
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? t->capacity * 2 : 64;
        id_entry *grown = spi_reallocarray(t->entries, capacity, sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        t->entries = grown;
        t->capacity = capacity;
    }
    t->entries[t->count++] = e;
    return SP_OK;
}

static int by_id(const void *a, const void *b) {
    const id_entry *x = a, *y = b;
    return x->id < y->id ? -1 : (x->id > y->id);
}

/* Position of id in the table, or -1. */
static int64_t id_find(const id_table *t, int64_t id) {
    if (t->count == 0) return -1;
    if (t->dense) {
        if (id < t->entries[0].id) return -1;
        uint64_t k = (uint64_t)id - (uint64_t)t->entries[0].id;
        return k < t->count ? (int64_t)k : -1;
    }
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->entries[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->count && t->entries[lo].id == id ? (int64_t)lo : -1;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

static bool thread_known(const thread_set *t, int64_t index) {
    return bsearch(&index, t->indices, t->count, sizeof *t->indices, cmp_i64) != NULL;
}

/* An input's call that scope-check would reject: refused, naming it. */
__attribute__((format(printf, 5, 6))) static int refuse(spi_error *err, const spm_input *in,
                                                        uint32_t rank, uint32_t region,
                                                        const char *format, ...) {
    char what[256];
    va_list ap;
    va_start(ap, format);
    vsnprintf(what, sizeof what, format, ap);
    va_end(ap);
    return spi_error_set(err, SP_ERR_CORRUPT,
                         "scope-merge: %s: rank %u region %s: %s; scope-merge copies nothing "
                         "scope-check rejects",
                         in->path, rank,
                         region < in->prof.name_count ? in->prof.names[region] : "?", what);
}

static void report(merge *m, uint64_t events) {
    m->done += events;
    if (m->options->progress) m->options->progress(m->done, m->total, m->options->progress_user);
}

/* ---- plan ------------------------------------------------------------------ */

/* realpath of a path that may not exist yet (its directory must). */
static char *resolve(const char *path) {
    char *full = realpath(path, NULL);
    if (full) {
        char *copy = spi_strdup(full);
        free(full); /* realpath allocates with libc */
        return copy;
    }
    char *dir_copy = spi_strdup(path), *base_copy = spi_strdup(path);
    char *dir = dir_copy ? realpath(dirname(dir_copy), NULL) : NULL;
    char *out = NULL;
    if (dir && base_copy) {
        const char *base = basename(base_copy);
        size_t bytes = strlen(dir) + strlen(base) + 2;
        out = spi_malloc(bytes);
        if (out) snprintf(out, bytes, "%s/%s", dir, base);
    }
    free(dir); /* from realpath: libc's allocation */
    spi_free(dir_copy);
    spi_free(base_copy);
    return out;
}

static int check_paths(const char *const *inputs, size_t count, const char *output,
                       spi_error *err) {
    char **real = spi_calloc(count + 1, sizeof *real);
    if (!real) return oom(err);
    int status = SP_OK;
    for (size_t i = 0; i < count && status == SP_OK; i++) {
        real[i] = realpath(inputs[i], NULL);
        if (!real[i]) {
            /* Let the reader word a missing or unreadable file. */
            continue;
        }
        for (size_t j = 0; j < i && status == SP_OK; j++)
            if (real[j] && strcmp(real[i], real[j]) == 0)
                status = spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                       "%s: the same input is given twice (as %s and %s); each "
                                       "profile can be merged only once",
                                       inputs[i], inputs[j], inputs[i]);
    }
    char *out = status == SP_OK ? resolve(output) : NULL;
    for (size_t i = 0; out && i < count && status == SP_OK; i++)
        if (real[i] && strcmp(out, real[i]) == 0)
            status = spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                   "%s: the output is the input %s; merging never modifies an "
                                   "input, choose another output path",
                                   output, inputs[i]);
    spi_free(out);
    for (size_t i = 0; i < count; i++) free(real[i]);
    spi_free(real);
    return status;
}

/* Put the input's prefix before each of its region names (--prefix): done
 * right after opening, so the collision check, the region table and every
 * message see the new names. */
static int apply_prefix(spm_input *in, const char *prefix, spi_error *err) {
    if (!prefix || !*prefix) return SP_OK;
    if (strchr(prefix, '/'))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "scope-merge: the prefix '%s' for %s contains '/', which region "
                             "groups (perf_events/<region>) cannot hold",
                             prefix, in->path);
    in->prefix = prefix;
    size_t prefix_len = strlen(prefix);
    for (size_t k = 0; k < in->prof.name_count; k++) {
        size_t len = strlen(in->prof.names[k]);
        char *renamed = spi_malloc(prefix_len + len + 1);
        if (!renamed) return oom(err);
        memcpy(renamed, prefix, prefix_len);
        memcpy(renamed + prefix_len, in->prof.names[k], len + 1);
        spi_free(in->prof.names[k]);
        in->prof.names[k] = renamed;
    }
    return SP_OK;
}

typedef struct name_ref {
    const char *name;
    size_t input;
} name_ref;

static int by_name(const void *a, const void *b) {
    const name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->input < y->input ? -1 : (x->input > y->input);
}

/* Every name in more than one input, with the inputs, into *message (new
 * string) when there is any. */
static int find_collisions(const merge *m, char **message, spi_error *err) {
    size_t total = 0;
    for (size_t i = 0; i < m->input_count; i++) total += m->inputs[i].prof.name_count;
    name_ref *refs = spi_calloc(total ? total : 1, sizeof *refs);
    if (!refs) return oom(err);
    size_t n = 0;
    for (size_t i = 0; i < m->input_count; i++)
        for (size_t k = 0; k < m->inputs[i].prof.name_count; k++)
            refs[n++] = (name_ref){m->inputs[i].prof.names[k], i};
    qsort(refs, n, sizeof *refs, by_name);
    size_t bytes = 1024, used = 0, colliding = 0;
    char *text = spi_malloc(bytes);
    int status = text ? SP_OK : oom(err);
    for (size_t i = 0; i < n && status == SP_OK;) {
        size_t j = i + 1, inputs = 1;
        while (j < n && strcmp(refs[j].name, refs[i].name) == 0) {
            if (refs[j].input != refs[j - 1].input) inputs++;
            j++;
        }
        if (inputs > 1) {
            colliding++;
            size_t need = strlen(refs[i].name) + 16;
            for (size_t k = i; k < j; k++) need += strlen(m->inputs[refs[k].input].path) + 2;
            if (used + need + 1 > bytes) {
                size_t grown_bytes = (used + need + 1) * 2;
                char *grown = spi_reallocarray(text, grown_bytes, 1);
                if (!grown) {
                    status = oom(err);
                    break;
                }
                text = grown;
                bytes = grown_bytes;
            }
            used += (size_t)snprintf(text + used, bytes - used, "\n  '%s' in ", refs[i].name);
            for (size_t k = i; k < j; k++) {
                if (k > i && refs[k].input == refs[k - 1].input) continue;
                used += (size_t)snprintf(text + used, bytes - used, "%s%s", k > i ? ", " : "",
                                         m->inputs[refs[k].input].path);
            }
        }
        i = j;
    }
    spi_free(refs);
    if (status == SP_OK && colliding) {
        size_t out_bytes = used + 512;
        char *out = spi_malloc(out_bytes);
        if (!out) {
            status = oom(err);
        } else {
            snprintf(out, out_bytes,
                     "scope-merge: %zu region name%s appear%s in more than one input; merging "
                     "them would double-count %s. Give the regions distinct names (a "
                     "'fortran:' prefix, say: scope-merge --prefix INPUT=fortran:):%s",
                     colliding, colliding == 1 ? "" : "s",
                     colliding == 1 ? "s" : "", colliding == 1 ? "it" : "them", text);
            *message = out;
        }
    }
    spi_free(text);
    return status;
}

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
static const size_t *rows_on_rank(const merge *m, size_t i, uint32_t rank, size_t *count) {
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

static int plan(merge *m, spi_error *err) {
    size_t n = m->input_count, capacity = 0;
    for (size_t i = 0; i < n; i++) {
        const spi_profile *p = &m->inputs[i].prof;
        for (size_t r = 0; r < p->row_count; r++)
            if (add_rank(&m->ranks, &m->rank_count, &capacity, p->rows[r].rank) != SP_OK)
                return oom(err);
        for (size_t t = 0; t < p->thread_count; t++)
            if (add_rank(&m->ranks, &m->rank_count, &capacity, p->threads[t].rank) != SP_OK)
                return oom(err);
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
    if (!m->by_order || !m->order_of || !m->slot_base || !m->region_base || !m->max_id ||
        !m->id_offset || !m->thread_offset || !m->rank_nested)
        return oom(err);
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
    m->slot_adopted = spi_calloc(slots ? slots : 1, sizeof *m->slot_adopted);
    m->slot_spill = spi_calloc(slots ? slots : 1, sizeof *m->slot_spill);
    if (!m->slot_exclusive || !m->slot_adopted || !m->slot_spill) return oom(err);
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
        return oom(err);
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
            if (index > highest[cell]) highest[cell] = index;
            thread_set *set = &m->thread_sets[cell];
            int64_t *grown = spi_reallocarray(set->indices, set->count + 1, sizeof *grown);
            if (!grown) {
                status = oom(err);
                break;
            }
            set->indices = grown;
            set->indices[set->count++] = index;
        }
    }
    for (size_t c = 0; c < cells && status == SP_OK; c++)
        if (m->thread_sets[c].count > 1)
            qsort(m->thread_sets[c].indices, m->thread_sets[c].count, sizeof(int64_t), cmp_i64);
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
    if (!m->rank_rows) return oom(err);
    for (size_t i = 0; i < n; i++) {
        const spi_profile *p = &m->inputs[i].prof;
        m->rank_rows[i] = spi_malloc((p->row_count + 1) * sizeof **m->rank_rows);
        if (!m->rank_rows[i]) return oom(err);
        for (size_t r = 0; r < p->row_count; r++) m->rank_rows[i][r] = r;
        sort_rows_by_rank(m->rank_rows[i], p);
    }
    return SP_OK;
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
                                                {"label", "merged_labels"}};
#define PER_INPUT_KEY_COUNT (sizeof per_input_keys / sizeof *per_input_keys)

static int add_per_input_metadata(const merge *m, spi_meta *meta) {
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

static int build_metadata(const merge *m, spi_meta *meta, spi_error *err) {
    int64_t largest[SIZE_KEY_COUNT] = {0};
    for (size_t i = 0; i < m->input_count; i++) {
        const spi_meta *source = &m->inputs[i].prof.metadata;
        for (size_t e = 0; e < source->count; e++)
            if (spi_meta_add_missing(meta, &source->entries[e]) != SP_OK) return oom(err);
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
            return oom(err);
    if (m->options->label && spi_meta_set_str(meta, "label", m->options->label) != SP_OK)
        return oom(err);
    if (add_per_input_metadata(m, meta) != SP_OK) return oom(err);
    return SP_OK;
}

/* ---- do the inputs belong together? ------------------------------------------ */

/* A duration for a message: the unit that keeps 1-3 digits before the
 * point, so "by 3.2 s" and "by 800 ns" both read naturally. */
static void format_ns(char *buf, size_t len, int64_t ns) {
    double v = (double)ns;
    if (ns >= 1000000000) snprintf(buf, len, "%.3f s", v / 1e9);
    else if (ns >= 1000000) snprintf(buf, len, "%.3f ms", v / 1e6);
    else if (ns >= 1000) snprintf(buf, len, "%.3f us", v / 1e3);
    else snprintf(buf, len, "%" PRId64 " ns", ns);
}

typedef struct input_span {
    size_t input;
    int64_t first_start, last_end;
} input_span;

static int by_first_start(const void *a, const void *b) {
    const input_span *x = a, *y = b;
    if (x->first_start != y->first_start) return x->first_start < y->first_start ? -1 : 1;
    return x->input < y->input ? -1 : (x->input > y->input);
}

/* Inputs recorded at different times (or on different machines' clocks)
 * do not make one timeline: their spans - first call start to last call
 * end, from the rows' statistics, which pass 1 completed for inputs that
 * stored none - must overlap or nest, so that sorted by start no gap
 * separates them. The first gap is reported with the inputs on either
 * side and its size. Inputs without calls have no span and are skipped. */
static int check_spans(const merge *m, spi_error *err) {
    input_span *spans = spi_calloc(m->input_count, sizeof *spans);
    if (!spans) return oom(err);
    size_t n = 0;
    for (size_t i = 0; i < m->input_count; i++) {
        const spi_profile *p = &m->inputs[i].prof;
        input_span s = {i, INT64_MAX, INT64_MIN};
        for (size_t r = 0; r < p->row_count; r++) {
            if (p->rows[r].count == 0) continue;
            if (p->rows[r].stats.start_minimum < s.first_start) s.first_start = p->rows[r].stats.start_minimum;
            if (p->rows[r].stats.end_maximum > s.last_end) s.last_end = p->rows[r].stats.end_maximum;
        }
        if (s.first_start <= s.last_end) spans[n++] = s;
    }
    qsort(spans, n, sizeof *spans, by_first_start);
    int status = SP_OK;
    size_t reach = 0; /* the span that ends last so far */
    for (size_t k = 1; k < n; k++) {
        if (spans[k].first_start > spans[reach].last_end) {
            char gap[64], a_len[64], b_len[64];
            format_ns(gap, sizeof gap, spans[k].first_start - spans[reach].last_end);
            format_ns(a_len, sizeof a_len, spans[reach].last_end - spans[reach].first_start);
            format_ns(b_len, sizeof b_len, spans[k].last_end - spans[k].first_start);
            status = spi_error_set(
                err, SP_ERR_INVALID_ARGUMENT,
                "scope-merge: %s (calls over %s) starts %s after %s (calls over %s) ends: "
                "inputs whose time spans neither overlap nor nest were not recorded together "
                "and make no one timeline (--allow-disjoint merges them anyway)",
                m->inputs[spans[k].input].path, b_len, gap, m->inputs[spans[reach].input].path,
                a_len);
            break;
        }
        if (spans[k].last_end > spans[reach].last_end) reach = k;
    }
    spi_free(spans);
    return status;
}

/* ---- pass 1: nesting per rank ------------------------------------------------ */

/* A root call's new parent, found in pass 1: a call of the input at
 * position host_order - 1 of the id order (0: none), by its stored id. */
typedef struct adoption {
    int64_t host_order;
    int64_t host_id;
} adoption;

typedef struct open_call {
    int64_t end2;              /* doubled end, as FORMAT.md 7.6 step 3 */
    int64_t duration;
    int64_t child;             /* sum of direct children's durations */
    size_t slot;
    size_t order;              /* id order of its input */
    int64_t call_id;           /* raw id, -1 if none */
} open_call;

typedef struct lane {
    int64_t key;
    open_call *stack;
    size_t depth, capacity;
} lane;

typedef struct sweep_row {
    spm_cursor cur;
    size_t input, slot, at;
    int64_t previous_start;
    bool started;
    adoption *adopt;           /* per block event: new parent, host_order 0 = none */
    size_t adopt_capacity;
    bool adopt_dirty;
    /* Welford statistics for inputs that stored none */
    spi_stats stats;
    uint64_t seen;
    double mean, m2;
} sweep_row;

typedef struct sweep {
    merge *m;
    size_t rank;               /* rank index */
    sweep_row *rows;
    size_t row_count;
    size_t *heap;
    size_t heap_size;
    lane *lanes;
    size_t lane_count;
    bool nested;
} sweep;

#define MAIN_LANE INT64_MIN

static int64_t head_start(const sweep_row *r) { return r->cur.col[SPM_START][r->at]; }
static int64_t head_end(const sweep_row *r) {
    return (int64_t)((uint64_t)r->cur.col[SPM_START][r->at] +
                     (uint64_t)r->cur.col[SPM_DURATION][r->at]);
}

/* Start ascending; on equal starts the later end first (parents before
 * children, FORMAT.md 7.6 step 2); then driver first, then file order. */
static bool heap_less(const sweep *s, size_t a, size_t b) {
    const sweep_row *x = &s->rows[a], *y = &s->rows[b];
    int64_t xs = head_start(x), ys = head_start(y);
    if (xs != ys) return xs < ys;
    int64_t xe = head_end(x), ye = head_end(y);
    if (xe != ye) return xe > ye;
    size_t xo = s->m->order_of[x->input], yo = s->m->order_of[y->input];
    if (xo != yo) return xo < yo;
    return a < b;
}

static void heap_down(sweep *s, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < s->heap_size && heap_less(s, s->heap[l], s->heap[best])) best = l;
        if (r < s->heap_size && heap_less(s, s->heap[r], s->heap[best])) best = r;
        if (best == i) return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[best];
        s->heap[best] = t;
        i = best;
    }
}

static int flush_adoptions(sweep *s, sweep_row *r, spi_error *err) {
    if (!r->adopt_dirty) return SP_OK;
    merge *m = s->m;
    if (!m->spill && !(m->spill = tmpfile()))
        return spi_error_set(err, SP_ERR_OUTPUT, "scope-merge: cannot create a scratch file: %s",
                             strerror(errno));
    uint64_t position = m->slot_spill[r->slot] + r->cur.base;
    size_t bytes = r->cur.len * sizeof *r->adopt;
    if (pwrite(fileno(m->spill), r->adopt, bytes, (off_t)(position * sizeof *r->adopt)) !=
        (ssize_t)bytes)
        return spi_error_set(err, SP_ERR_OUTPUT, "scope-merge: cannot write the scratch file: %s",
                             strerror(errno));
    m->slot_adopted[r->slot] = true;
    r->adopt_dirty = false;
    return SP_OK;
}

/* Next block of a row; false at its end. */
static int advance_block(sweep *s, sweep_row *r, bool *more, spi_error *err) {
    int status = flush_adoptions(s, r, err);
    if (status == SP_OK) {
        report(s->m, r->cur.len);
        status = spm_cursor_fill(&r->cur, err);
    }
    r->at = 0;
    *more = status == SP_OK && r->cur.len > 0;
    if (*more && r->adopt) memset(r->adopt, 0, r->cur.len * sizeof *r->adopt);
    return status;
}

static lane *find_lane(sweep *s, int64_t key, spi_error *err, int *status) {
    for (size_t i = 0; i < s->lane_count; i++)
        if (s->lanes[i].key == key) return &s->lanes[i];
    lane *grown = spi_reallocarray(s->lanes, s->lane_count + 1, sizeof *grown);
    if (!grown) {
        *status = oom(err);
        return NULL;
    }
    s->lanes = grown;
    lane *l = &s->lanes[s->lane_count++];
    *l = (lane){.key = key};
    return l;
}

static void close_call(sweep *s, const open_call *c) {
    s->m->slot_exclusive[c->slot] += c->duration - c->child;
}

/* One call, in start order: FORMAT.md 7.6 with a stack per lane. */
static int visit(sweep *s, sweep_row *r, spi_error *err) {
    merge *m = s->m;
    const spm_cursor *c = &r->cur;
    size_t i = r->at;
    int64_t start = c->col[SPM_START][i], duration = c->col[SPM_DURATION][i];
    int64_t call = c->col[SPM_CALL] ? c->col[SPM_CALL][i] : -1;
    int64_t parent_id = c->col[SPM_PARENT] ? c->col[SPM_PARENT][i] : -1;
    int64_t thread = c->col[SPM_THREAD] ? c->col[SPM_THREAD][i] : -1;
    int64_t task = c->col[SPM_TASK] ? c->col[SPM_TASK][i] : -1;
    size_t cell = r->input * m->rank_count + s->rank;
    spm_input *in = &m->inputs[r->input];
    const spi_row *row = &in->prof.rows[r->cur.row];
    int64_t end = 0;
    if (duration < 0)
        return refuse(err, in, row->rank, row->region, "negative duration %lld ns",
                      (long long)duration);
    if (__builtin_add_overflow(start, duration, &end))
        return refuse(err, in, row->rank, row->region, "a call starting at %lld ns ends beyond int64",
                      (long long)start);
    if (call < -1 || parent_id < -1)
        return refuse(err, in, row->rank, row->region, "invalid call id %lld or parent id %lld",
                      (long long)call, (long long)parent_id);
    if (call >= 0 && parent_id >= call)
        return refuse(err, in, row->rank, row->region,
                      "parent id %lld is not smaller than its call's id %lld (a cycle, a self "
                      "or forward reference)",
                      (long long)parent_id, (long long)call);
    if (thread != -1 && (thread < -1 || !thread_known(&m->thread_sets[cell], thread)))
        return refuse(err, in, row->rank, row->region,
                      "thread id %lld is not in the input's thread table", (long long)thread);
    if (call > m->max_id[cell]) m->max_id[cell] = call;
    if (call >= 0 && id_push(&m->ids[cell], (id_entry){call, start, end}) != SP_OK)
        return oom(err);

    {
        /* Always recomputed: stored statistics may be damaged, and the
         * output's must agree with its events. */
        spi_stats *st = &r->stats;
        int64_t gpu = c->col[SPM_GPU] ? c->col[SPM_GPU][i] : -1;
        int64_t total, gpu_total;
        if (__builtin_add_overflow(st->total, duration, &total) ||
            (gpu > 0 && __builtin_add_overflow(st->gpu_total, gpu, &gpu_total)))
            return refuse(err, in, row->rank, row->region,
                          "durations whose total leaves int64 (after %lld calls)",
                          (long long)r->seen);
        if (r->seen == 0) {
            st->first = st->minimum = st->maximum = duration;
            st->start_minimum = start;
            st->end_maximum = end;
        }
        st->last = duration;
        st->total += duration;
        if (duration < st->minimum) st->minimum = duration;
        if (duration > st->maximum) st->maximum = duration;
        if (start < st->start_minimum) st->start_minimum = start;
        if (end > st->end_maximum) st->end_maximum = end;
        if (gpu >= 0 && c->col[SPM_GPU]) {
            st->gpu_count++;
            st->gpu_total += gpu;
        }
        r->seen++;
        double delta = (double)duration - r->mean;
        r->mean += delta / (double)r->seen;
        r->m2 += delta * ((double)duration - r->mean);
    }

    if (!s->nested) return SP_OK;
    /* The k-way merge is in start order only if every row is. */
    if (duration < 0 || (r->started && start < r->previous_start)) {
        s->nested = false;
        return SP_OK;
    }
    r->started = true;
    r->previous_start = start;
    /* Only calls of one lane nest. The main thread of every input is one
     * lane (one clock, one stack); other threads and tasks stay within
     * their own input. */
    bool main_lane = thread <= 0 && task < 0;
    int64_t key = main_lane ? MAIN_LANE
                            : (int64_t)((uint64_t)(r->input + 1) << 40 |
                                        (uint64_t)(task >= 0 ? 2 * task + 1 : 2 * thread));
    int status = SP_OK;
    lane *l = find_lane(s, key, err, &status);
    if (!l) return status;
    /* Doubled times must fit int64: a rank with calls beyond +-2^62 ns
     * (146 years; only damage or a foreign clock) is not nested. */
    if (start > INT64_MAX / 2 || start < INT64_MIN / 2 || end > INT64_MAX / 2 - 1) {
        s->nested = false;
        return SP_OK;
    }
    int64_t start2 = (int64_t)((uint64_t)start * 2);
    int64_t end2 = duration == 0 ? start2 + 1 : (int64_t)((uint64_t)(start + duration) * 2);
    while (l->depth && l->stack[l->depth - 1].end2 <= start2) close_call(s, &l->stack[--l->depth]);
    if (l->depth && end2 > l->stack[l->depth - 1].end2) {
        /* An improper overlap: this rank cannot be nested. */
        s->nested = false;
        return SP_OK;
    }
    size_t order = m->order_of[r->input];
    /* The nesting must be the tree the stored parents describe: a call
     * whose enclosing call is not its stored parent (two inputs' calls
     * interleaved, or parents that disagree with the times) leaves the
     * rank un-nested, so nothing is adopted and no exclusive total is
     * derived from a tree scope-check would not see. */
    if (main_lane && parent_id >= 0 && l->depth &&
        (l->stack[l->depth - 1].order != order || l->stack[l->depth - 1].call_id != parent_id)) {
        s->nested = false;
        return SP_OK;
    }
    if (l->depth) l->stack[l->depth - 1].child += duration;
    if (main_lane && call >= 0 && parent_id < 0 && c->col[SPM_PARENT]) {
        for (size_t d = l->depth; d-- > 0;) {
            const open_call *host = &l->stack[d];
            if (host->order >= order || host->call_id < 0) continue;
            if (!r->adopt) {
                r->adopt_capacity = c->cap ? c->cap : (size_t)c->count;
                r->adopt = spi_calloc(r->adopt_capacity, sizeof *r->adopt);
                if (!r->adopt) return oom(err);
            }
            r->adopt[i] = (adoption){(int64_t)host->order + 1, host->call_id};
            r->adopt_dirty = true;
            break;
        }
    }
    if (l->depth == l->capacity) {
        size_t grown_capacity = l->capacity ? l->capacity * 2 : 64;
        open_call *grown = spi_reallocarray(l->stack, grown_capacity, sizeof *grown);
        if (!grown) return oom(err);
        l->stack = grown;
        l->capacity = grown_capacity;
    }
    l->stack[l->depth++] = (open_call){end2, duration, 0, r->slot, order, call};
    return SP_OK;
}

static int sweep_rank(merge *m, size_t rank_idx, spi_error *err) {
    sweep s = {.m = m, .rank = rank_idx, .nested = true};
    uint32_t rank = m->ranks[rank_idx];
    size_t rows = 0, columns = 0;
    for (size_t i = 0; i < m->input_count; i++) {
        size_t n = 0;
        const size_t *on = rows_on_rank(m, i, rank, &n);
        for (size_t k = 0; k < n; k++)
            if (m->inputs[i].prof.rows[on[k]].count) rows++;
    }
    s.rows = spi_calloc(rows ? rows : 1, sizeof *s.rows);
    s.heap = spi_calloc(rows ? rows : 1, sizeof *s.heap);
    int status = s.rows && s.heap ? SP_OK : oom(err);
    unsigned want = 1u << SPM_START | 1u << SPM_DURATION | 1u << SPM_CALL | 1u << SPM_PARENT |
                    1u << SPM_THREAD | 1u << SPM_TASK;
    columns = 7; /* the columns above, plus GPU when statistics are computed */
    size_t cap = rows ? SPM_SWEEP_BUDGET_BYTES / (rows * columns * sizeof(int64_t)) : 1;
    if (cap > SPM_BLOCK_EVENTS) cap = SPM_BLOCK_EVENTS;
    if (cap < SPM_SWEEP_MIN_BLOCK) cap = SPM_SWEEP_MIN_BLOCK;
    for (size_t i = 0; i < m->input_count && status == SP_OK; i++) {
        spm_input *in = &m->inputs[i];
        size_t on_count = 0;
        const size_t *on = rows_on_rank(m, i, rank, &on_count);
        for (size_t k = 0; k < on_count && status == SP_OK; k++) {
            size_t r = on[k];
            if (!in->prof.rows[r].count) continue;
            sweep_row *row = &s.rows[s.row_count];
            row->input = i;
            row->slot = m->slot_base[i] + r;
            status = spm_cursor_init(&row->cur, in, r,
                                     cap, want | 1u << SPM_GPU, err);
            if (status != SP_OK) break;
            s.row_count++;
            bool more = false;
            status = spm_cursor_fill(&row->cur, err);
            more = status == SP_OK && row->cur.len > 0;
            if (more) s.heap[s.heap_size++] = s.row_count - 1;
        }
    }
    for (size_t i = s.heap_size; i-- > 0;) heap_down(&s, i);
    while (status == SP_OK && s.heap_size) {
        sweep_row *r = &s.rows[s.heap[0]];
        status = visit(&s, r, err);
        if (status != SP_OK) break;
        if (++r->at == r->cur.len) {
            bool more = false;
            status = advance_block(&s, r, &more, err);
            if (!more) s.heap[0] = s.heap[--s.heap_size];
        }
        heap_down(&s, 0);
    }
    for (size_t l = 0; l < s.lane_count; l++) {
        lane *ln = &s.lanes[l];
        while (status == SP_OK && ln->depth) close_call(&s, &ln->stack[--ln->depth]);
        spi_free(ln->stack);
    }
    for (size_t i = 0; i < s.row_count; i++) {
        sweep_row *r = &s.rows[i];
        spm_input *in = &m->inputs[r->input];
        if (status == SP_OK && r->seen) {
            r->stats.mean = r->mean;
            r->stats.m2 = r->m2;
            in->prof.rows[r->cur.row].stats = r->stats;
            in->has_stats = true;
        }
        spm_cursor_free(&r->cur);
        spi_free(r->adopt);
    }
    m->rank_nested[rank_idx] = status == SP_OK && s.nested;
    if (!m->rank_nested[rank_idx])
        for (size_t i = 0; i < s.row_count; i++) m->slot_adopted[s.rows[i].slot] = false;
    spi_free(s.lanes);
    spi_free(s.rows);
    spi_free(s.heap);
    return status;
}

/* ---- pass 2: write ------------------------------------------------------------ */

typedef struct out_buffers {
    int64_t *call, *parent, *thread;
    adoption *adopt;
} out_buffers;

static int write_row(merge *m, spi_writer *w, size_t input, size_t r, size_t rank_idx,
                     out_buffers *b, spi_error *err) {
    spm_input *in = &m->inputs[input];
    const spi_row *row = &in->prof.rows[r];
    size_t slot = m->slot_base[input] + r;
    spi_row_header header = {
        .region = m->region_base[input] + row->region,
        .rank = row->rank,
        /* Not nested: "not computed" rather than the input's value, which
         * nothing here has checked against the tree. */
        .exclusive_total = m->rank_nested[rank_idx] ? m->slot_exclusive[slot] : -1,
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
    int64_t thread_offset = m->thread_offset[input * m->rank_count + rank_idx];
    bool adopted = m->slot_adopted[slot];
    for (;;) {
        status = spm_cursor_fill(&cur, err);
        if (status != SP_OK || cur.len == 0) break;
        /* Whole inputs deliver a row at once; emit it in bounded pieces. */
        for (size_t done = 0; done < cur.len && status == SP_OK;) {
            size_t n = cur.len - done;
            if (n > SPM_BLOCK_EVENTS) n = SPM_BLOCK_EVENTS;
            spi_event_chunk chunk = {.count = n, .starts = cur.col[SPM_START] + done,
                                     .durations = cur.col[SPM_DURATION] + done};
            if (cur.col[SPM_GPU]) chunk.columns[SPI_EV_GPU_DURATIONS] = cur.col[SPM_GPU] + done;
            if (cur.col[SPM_TASK]) chunk.columns[SPI_EV_TASK_IDS] = cur.col[SPM_TASK] + done;
            if (cur.col[SPM_AWAIT]) chunk.columns[SPI_EV_AWAIT_NS] = cur.col[SPM_AWAIT] + done;
            const id_table *table = &m->ids[input * m->rank_count + rank_idx];
            if (cur.col[SPM_CALL]) {
                const int64_t *ids = cur.col[SPM_CALL] + done;
                for (size_t i = 0; i < n; i++)
                    b->call[i] = ids[i] >= 0 ? id_offset + id_find(table, ids[i]) : -1;
                chunk.columns[SPI_EV_CALL_IDS] = b->call;
            }
            if (cur.col[SPM_PARENT]) {
                const int64_t *ids = cur.col[SPM_PARENT] + done;
                const int64_t *starts = cur.col[SPM_START] + done;
                const int64_t *durations = cur.col[SPM_DURATION] + done;
                for (size_t i = 0; i < n && status == SP_OK; i++) {
                    if (ids[i] < 0) {
                        b->parent[i] = -1;
                        continue;
                    }
                    int64_t at = id_find(table, ids[i]);
                    /* Pass 1 checked the call; its end cannot overflow. */
                    int64_t end = starts[i] + durations[i];
                    if (at < 0)
                        status = refuse(err, in, row->rank, row->region,
                                        "parent id %lld does not exist on the rank",
                                        (long long)ids[i]);
                    else if (table->entries[at].start > starts[i] || table->entries[at].end < end)
                        status = refuse(err, in, row->rank, row->region,
                                        "a call starting at %lld ns is not inside its parent, "
                                        "call id %lld",
                                        (long long)starts[i], (long long)ids[i]);
                    b->parent[i] = id_offset + at;
                }
                if (adopted) {
                    uint64_t position = m->slot_spill[slot] + cur.base + done;
                    size_t bytes = n * sizeof *b->adopt;
                    ssize_t got = pread(fileno(m->spill), b->adopt, bytes,
                                        (off_t)(position * sizeof *b->adopt));
                    /* Past the scratch file's end means "nothing adopted". */
                    if (got < 0)
                        status = spi_error_set(err, SP_ERR_OUTPUT,
                                               "scope-merge: cannot read the scratch file: %s",
                                               strerror(errno));
                    else
                        memset((char *)b->adopt + got, 0, bytes - (size_t)got);
                    for (size_t i = 0; i < n && status == SP_OK; i++) {
                        if (b->adopt[i].host_order <= 0) continue;
                        size_t host = m->by_order[(size_t)b->adopt[i].host_order - 1];
                        size_t host_cell = host * m->rank_count + rank_idx;
                        int64_t at = id_find(&m->ids[host_cell], b->adopt[i].host_id);
                        if (at >= 0) b->parent[i] = m->id_offset[host_cell] + at;
                    }
                }
                chunk.columns[SPI_EV_PARENT_IDS] = b->parent;
            }
            if (cur.col[SPM_THREAD]) {
                const int64_t *ids = cur.col[SPM_THREAD] + done;
                for (size_t i = 0; i < n; i++)
                    b->thread[i] = ids[i] >= 0 ? ids[i] + thread_offset : ids[i];
                chunk.columns[SPI_EV_THREAD_IDS] = b->thread;
            }
            if (status == SP_OK) status = spi_writer_append_events(w, &chunk, err);
            report(m, n);
            done += n;
        }
        if (status != SP_OK) break;
    }
    spm_cursor_free(&cur);
    if (status == SP_OK) status = spi_writer_end_row(w, err);
    return status;
}

static int write_output(merge *m, const char *output, spi_error *err) {
    spi_meta meta = {0};
    size_t name_count = 0, thread_count = 0;
    uint64_t rows = 0, events = 0;
    unsigned columns = 0;
    static const spi_event_col optional[SPM_COL_COUNT] = {
        [SPM_GPU] = SPI_EV_GPU_DURATIONS, [SPM_CALL] = SPI_EV_CALL_IDS,
        [SPM_PARENT] = SPI_EV_PARENT_IDS, [SPM_THREAD] = SPI_EV_THREAD_IDS,
        [SPM_TASK] = SPI_EV_TASK_IDS,     [SPM_AWAIT] = SPI_EV_AWAIT_NS};
    for (size_t i = 0; i < m->input_count; i++) {
        const spm_input *in = &m->inputs[i];
        name_count += in->prof.name_count;
        thread_count += in->prof.thread_count;
        rows += in->prof.row_count;
        events += in->prof.event_count;
        for (int c = SPM_GPU; c < SPM_COL_COUNT; c++)
            if (in->columns & (1u << c)) columns |= SPI_EV_BIT(optional[c]);
    }
    const char **names = spi_calloc(name_count ? name_count : 1, sizeof *names);
    spi_thread_row *threads = spi_calloc(thread_count ? thread_count : 1, sizeof *threads);
    out_buffers b = {spi_calloc(SPM_BLOCK_EVENTS, sizeof(int64_t)),
                     spi_calloc(SPM_BLOCK_EVENTS, sizeof(int64_t)),
                     spi_calloc(SPM_BLOCK_EVENTS, sizeof(int64_t)),
                     spi_calloc(SPM_BLOCK_EVENTS, sizeof(adoption))};
    int status = names && threads && b.call && b.parent && b.thread && b.adopt ? SP_OK : oom(err);
    if (status == SP_OK) status = build_metadata(m, &meta, err);
    size_t k = 0, t = 0;
    for (size_t i = 0; i < m->input_count && status == SP_OK; i++)
        for (size_t n = 0; n < m->inputs[i].prof.name_count; n++)
            names[k++] = m->inputs[i].prof.names[n];
    for (size_t ri = 0; ri < m->rank_count && status == SP_OK; ri++)
        for (size_t i = 0; i < m->input_count; i++) {
            const spi_profile *p = &m->inputs[i].prof;
            for (size_t x = 0; x < p->thread_count; x++) {
                if (p->threads[x].rank != m->ranks[ri]) continue;
                threads[t] = p->threads[x];
                if (threads[t].index >= 0)
                    threads[t].index += m->thread_offset[i * m->rank_count + ri];
                t++;
            }
        }
    spi_writer_layout layout = {.row_count = rows, .event_count = events,
                                .region_count = name_count, .thread_count = t,
                                .event_columns = columns};
    spi_writer *w = NULL;
    if (status == SP_OK) status = spi_writer_create(&w, output, &layout, err);
    if (status == SP_OK) status = spi_writer_write_metadata(w, &meta, err);
    if (status == SP_OK) status = spi_writer_write_region_names(w, names, name_count, err);
    if (status == SP_OK) status = spi_writer_write_threads(w, threads, t, err);
    for (size_t ri = 0; ri < m->rank_count && status == SP_OK; ri++)
        for (size_t i = 0; i < m->input_count && status == SP_OK; i++) {
            size_t on_count = 0;
            const size_t *on = rows_on_rank(m, i, m->ranks[ri], &on_count);
            for (size_t x = 0; x < on_count && status == SP_OK; x++)
                status = write_row(m, w, i, on[x], ri, &b, err);
        }
    if (status == SP_OK)
        status = spm_copy_aux(m->inputs, m->input_count, spi_writer_file(w), output, err);
    if (status == SP_OK) status = spi_writer_publish(w, err);
    else if (w) spi_writer_abort(w);
    spi_meta_free(&meta);
    spi_free(names);
    spi_free(threads);
    spi_free(b.call);
    spi_free(b.parent);
    spi_free(b.thread);
    spi_free(b.adopt);
    return status;
}

/* Sort each (input, rank)'s ids; a repeated id is refused. */
static int index_ids(merge *m, spi_error *err) {
    for (size_t i = 0; i < m->input_count; i++)
        for (size_t ri = 0; ri < m->rank_count; ri++) {
            id_table *t = &m->ids[i * m->rank_count + ri];
            if (t->count == 0) continue;
            qsort(t->entries, t->count, sizeof *t->entries, by_id);
            for (size_t k = 1; k < t->count; k++)
                if (t->entries[k].id == t->entries[k - 1].id)
                    return spi_error_set(err, SP_ERR_CORRUPT,
                                         "scope-merge: %s: rank %u: call id %" PRId64 " appears "
                                         "twice; scope-merge copies nothing scope-check rejects",
                                         m->inputs[i].path, m->ranks[ri], t->entries[k].id);
            t->dense = (uint64_t)t->entries[t->count - 1].id - (uint64_t)t->entries[0].id ==
                       t->count - 1;
        }
    return SP_OK;
}

/* ---- entry ----------------------------------------------------------------------- */

static void free_merge(merge *m) {
    for (size_t i = 0; m->inputs && i < m->input_count; i++) spm_input_close(&m->inputs[i]);
    spi_free(m->inputs);
    spi_free(m->by_order);
    spi_free(m->order_of);
    spi_free(m->ranks);
    spi_free(m->slot_base);
    spi_free(m->slot_exclusive);
    spi_free(m->slot_adopted);
    spi_free(m->slot_spill);
    spi_free(m->rank_nested);
    spi_free(m->max_id);
    size_t cells = m->input_count * (m->rank_count ? m->rank_count : 1);
    for (size_t c = 0; m->ids && c < cells; c++) spi_free(m->ids[c].entries);
    for (size_t c = 0; m->thread_sets && c < cells; c++) spi_free(m->thread_sets[c].indices);
    spi_free(m->ids);
    spi_free(m->thread_sets);
    for (size_t i = 0; m->rank_rows && i < m->input_count; i++) spi_free(m->rank_rows[i]);
    spi_free(m->rank_rows);
    spi_free(m->id_offset);
    spi_free(m->thread_offset);
    spi_free(m->region_base);
    if (m->spill) fclose(m->spill);
}

static int run_merge(const char *const *inputs, size_t count, const char *output,
                     const sp_merge_options *options, char **long_message, spi_error *err) {
    if (!inputs || !output || count < 2)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "scope-merge: at least two input profiles and an output path are "
                             "needed");
    for (size_t i = 0; i < count; i++)
        if (!inputs[i] || !*inputs[i])
            return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "scope-merge: empty input path");
    int status = check_paths(inputs, count, output, err);
    if (status != SP_OK) return status;
    merge m = {.options = options, .input_count = count};
    m.inputs = spi_calloc(count, sizeof *m.inputs);
    if (!m.inputs) return oom(err);
    for (size_t i = 0; i < count; i++) m.inputs[i] = (spm_input){.file = -1};
    for (size_t i = 0; i < count && status == SP_OK; i++) {
        status = spm_input_open(&m.inputs[i], inputs[i], i, err);
        if (status == SP_OK && options->prefixes)
            status = apply_prefix(&m.inputs[i], options->prefixes[i], err);
    }
    if (status == SP_OK) {
        status = find_collisions(&m, long_message, err);
        if (status == SP_OK && *long_message)
            status = spi_error_set(err, SP_ERR_REGION_COLLISION, "%s", *long_message);
    }
    if (status == SP_OK) status = plan(&m, err);
    bool aggregate = false;
    for (size_t i = 0; i < count; i++) aggregate = aggregate || m.inputs[i].aggregate;
    if (status == SP_OK && aggregate) {
        spm_aggregate_plan ap = {.ranks = m.ranks, .rank_count = m.rank_count,
                                 .by_order = m.by_order, .region_base = m.region_base,
                                 .thread_offset = m.thread_offset};
        spi_meta meta = {0};
        status = build_metadata(&m, &meta, err);
        if (status == SP_OK) status = spm_merge_aggregate(m.inputs, count, &ap, &meta, output, err);
        spi_meta_free(&meta);
        free_merge(&m);
        return status;
    }
    for (size_t ri = 0; ri < m.rank_count && status == SP_OK; ri++)
        status = sweep_rank(&m, ri, err);
    if (status == SP_OK && !options->allow_disjoint) status = check_spans(&m, err);
    if (status == SP_OK) status = index_ids(&m, err);
    if (status == SP_OK) {
        /* Offsets in id order, so earlier-ranked inputs keep smaller ids;
         * each input takes as many ids as it has numbered calls, whatever
         * their values (the new id is the offset plus the call's rank among
         * its input's ids). */
        for (size_t ri = 0; ri < m.rank_count; ri++) {
            int64_t next = 0;
            for (size_t o = 0; o < count; o++) {
                size_t cell = m.by_order[o] * m.rank_count + ri;
                m.id_offset[cell] = next;
                next += (int64_t)m.ids[cell].count;
            }
        }
        status = write_output(&m, output, err);
    }
    free_merge(&m);
    return status;
}

void sp_merge_options_init(sp_merge_options *options) {
    if (options) *options = (sp_merge_options){0};
}

int sp_merge_files(const char *const *inputs, size_t input_count, const char *output,
                   const sp_merge_options *options, char *errbuf, size_t errbuf_len) {
    sp_merge_options defaults;
    sp_merge_options_init(&defaults);
    spi_error err;
    spi_error_clear(&err);
    char *long_message = NULL;
    spi_h5_silence_state silence;
    spi_h5_silence(&silence);
    int status = run_merge(inputs, input_count, output, options ? options : &defaults,
                           &long_message, &err);
    spi_h5_restore(&silence);
    if (errbuf && errbuf_len) {
        /* The collision list can outgrow spi_error's fixed message. */
        const char *text = status == SP_OK ? "" : long_message ? long_message : err.message;
        snprintf(errbuf, errbuf_len, "%s", text);
    }
    spi_free(long_message);
    spi_status_remember(status);
    return status;
}
