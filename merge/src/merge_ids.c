/*
 * merge_ids.c - the numbered calls of each input on each rank (a "cell"),
 * checked and renumbered in memory that does not grow with them.
 *
 * A call's new id is its input's offset plus its rank among that input's
 * ids on the rank; repeated ids, parents that do not exist and parents
 * that do not enclose their child are refused. Pass 1 (merge_sweep.c)
 * decides most of this on the fly:
 *   - ids that arrive strictly increasing (in start order) cannot repeat,
 *     and when they have no gaps the rank of an id is id - first: no table;
 *   - a stored parent that is the innermost open call of the child's lane
 *     exists and encloses the child (the lane's stack proves it).
 * What it cannot decide - ids out of order or with gaps, parents off the
 * stack, ranks that are not nested - goes through an external sort
 * (merge_extsort.c, in SCOPE_PROFILER_MERGE_MEMORY bytes) after the rank's
 * pass 1: the undecided parent references, which pass 1 pushed, and the
 * cell's calls, read again from the input, sorted by id. One scan of the
 * sorted records finds repeated ids, joins each reference with its parent,
 * and writes the ids as ranges of consecutive ids to the map file, which
 * pass 2 searches (spm_id_rank) through a window of ranges. The refusals
 * are kept and returned in the order the whole-table checks gave them:
 * repeated ids first (input, then rank, the smallest id), then parents in
 * the order pass 2 writes the calls.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "merge_internal.h"

#define SPM_MEMORY_DEFAULT ((size_t)256 << 20)
#define SPM_MEMORY_MIN ((size_t)64 << 10)
/* Ranges per write of the map, and the smallest window of a lookup. */
#define SPM_ID_WINDOW 4096
/* A map larger than a lookup's window is read SPM_ID_STRIDE ranges at a
 * time (4 KiB: random lookups read little), found through an index of
 * every SPM_ID_STRIDE-th range's id. */
#define SPM_ID_STRIDE 256

/* A run of consecutive ids: `id` is the run's first, `rank` its rank. */
typedef struct spm_id_range {
    int64_t id, rank;
} spm_id_range;

size_t spm_memory_budget(void) {
    const char *v = getenv("SCOPE_PROFILER_MERGE_MEMORY");
    if (!v || !*v) return SPM_MEMORY_DEFAULT;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *v == '-') return SPM_MEMORY_DEFAULT;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    else if (*end == 'M' || *end == 'm') shift = 20;
    else if (*end == 'G' || *end == 'g') shift = 30;
    if (shift) end++;
    if (*end == 'i' && shift) end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return SPM_MEMORY_DEFAULT;
    if (n > (unsigned long long)(SIZE_MAX >> 1) >> shift) return SIZE_MAX >> 1;
    size_t bytes = (size_t)(n << shift);
    return bytes < SPM_MEMORY_MIN ? SPM_MEMORY_MIN : bytes;
}

static int cell_sorter(spm_merge *m, spm_id_cell *c, spi_error *err) {
    if (c->refs) return SP_OK;
    /* During pass 1 every input of the rank may need one: they share the budget. */
    return spm_sorter_new(&c->refs, &m->sort_scratch, m->memory_budget / m->input_count, err);
}

int spm_ids_refer(spm_merge *m, size_t cell, const spm_key_record *reference, spi_error *err) {
    spm_id_cell *c = &m->ids[cell];
    int status = cell_sorter(m, c, err);
    return status == SP_OK ? spm_sorter_push(c->refs, reference, err) : status;
}

int spm_ids_keep(spm_merge *m, size_t cell, const spm_key_record *call, spi_error *err) {
    return spm_ids_refer(m, cell, call, err);
}

/* ---- the kept refusals ---------------------------------------------------------- */

static bool parent_failure_before(const spm_id_failure *a, const spm_id_failure *b) {
    if (!b->set) return true;
    if (a->rank_idx != b->rank_idx) return a->rank_idx < b->rank_idx;
    if (a->input != b->input) return a->input < b->input;
    if (a->row != b->row) return a->row < b->row;
    return a->position < b->position;
}

static bool repeat_before(const spm_id_failure *a, const spm_id_failure *b) {
    if (!b->set) return true;
    if (a->input != b->input) return a->input < b->input;
    return a->rank_idx < b->rank_idx;
}

void spm_ids_keep_failures(spm_merge *m, const spm_id_failure *repeated,
                           const spm_id_failure *parent_failure) {
    if (repeated->set && repeat_before(repeated, &m->repeated)) m->repeated = *repeated;
    if (parent_failure->set && parent_failure_before(parent_failure, &m->parent_failure))
        m->parent_failure = *parent_failure;
}

int spm_ids_refuse(const spm_merge *m, const spm_id_failure *f, spi_error *err) {
    if (!f->set) return SP_OK;
    const spm_input *in = &m->inputs[f->input];
    uint32_t rank = m->ranks[f->rank_idx];
    if (f->kind == SPM_FAIL_REPEATED)
        return spi_error_set(err, SP_ERR_CORRUPT,
                             "scope-merge: %s: rank %u: call id %" PRId64 " appears twice; "
                             "scope-merge copies nothing scope-check rejects",
                             in->path, rank, f->id);
    size_t on_count = 0;
    const size_t *on = spm_rows_on_rank(m, f->input, rank, &on_count);
    const spi_row *row = &in->prof.rows[on[f->row]];
    if (f->kind == SPM_FAIL_MISSING_PARENT)
        return spm_refuse(err, in, row->rank, row->region,
                          "parent id %lld does not exist on the rank", (long long)f->id);
    return spm_refuse(err, in, row->rank, row->region,
                      "a call starting at %lld ns is not inside its parent, call id %lld",
                      (long long)f->start, (long long)f->id);
}

/* ---- after a rank's pass 1 --------------------------------------------------------- */

static int map_io_error(spi_error *err, const char *what) {
    return spi_error_set(err, SP_ERR_OUTPUT, "scope-merge: cannot %s the id map scratch file: %s",
                         what, strerror(errno));
}

static int write_ranges(spm_merge *m, const spm_id_range *r, size_t n, spi_error *err) {
    if (!m->id_maps && !(m->id_maps = tmpfile())) return map_io_error(err, "create");
    size_t bytes = n * sizeof *r;
    const char *p = (const char *)r;
    off_t at = (off_t)(m->id_maps_end * sizeof *r);
    while (bytes) {
        ssize_t put = pwrite(fileno(m->id_maps), p, bytes, at);
        if (put <= 0) return map_io_error(err, "write");
        p += put;
        at += put;
        bytes -= (size_t)put;
    }
    m->id_maps_end += n;
    return SP_OK;
}

/* Every numbered call of input i on rank index ri into the cell's sorter. */
static int read_calls_again(spm_merge *m, size_t i, size_t ri, spm_sorter *sorter,
                            spi_error *err) {
    spm_input *in = &m->inputs[i];
    size_t on_count = 0;
    const size_t *on = spm_rows_on_rank(m, i, m->ranks[ri], &on_count);
    int status = SP_OK;
    for (size_t k = 0; k < on_count && status == SP_OK; k++) {
        if (!in->prof.rows[on[k]].count) continue;
        spm_cursor cur;
        unsigned want = 1u << SPM_START | 1u << SPM_DURATION | 1u << SPM_CALL;
        status = spm_cursor_init(&cur, in, on[k], SPM_BLOCK_EVENTS, want, err);
        if (status != SP_OK) break;
        for (;;) {
            status = spm_cursor_fill(&cur, err);
            if (status != SP_OK || cur.len == 0) break;
            for (size_t e = 0; e < cur.len && status == SP_OK; e++) {
                int64_t id = cur.col[SPM_CALL][e];
                if (id < 0) continue;
                /* Pass 1 checked that the end fits int64. */
                int64_t start = cur.col[SPM_START][e];
                spm_key_record call = {id, start, start + cur.col[SPM_DURATION][e], -1, 0};
                status = spm_sorter_push(sorter, &call, err);
            }
            if (status != SP_OK) break;
        }
        spm_cursor_free(&cur);
    }
    return status;
}

/* The sorted calls and references of a cell: repeated ids and parent
 * checks kept as failures, the ids as ranges (in the map file unless they
 * are one run). */
static int scan_sorted(spm_merge *m, size_t i, size_t ri, spm_id_cell *c, spi_error *err) {
    spm_id_range *ranges = spi_malloc(SPM_ID_WINDOW * sizeof *ranges);
    if (!ranges) return spm_oom(err);
    size_t buffered = 0;
    uint64_t range_count = 0, count = 0;
    uint64_t map_at = m->id_maps_end;
    spm_key_record call = {0}, r;
    bool have_call = false, got = true;
    int status = spm_sorter_start(c->refs, err);
    while (status == SP_OK) {
        status = spm_sorter_next(c->refs, &r, &got, err);
        if (status != SP_OK || !got) break;
        if (r.row < 0) {
            if (have_call && r.id == call.id) {
                spm_id_failure f = {true, SPM_FAIL_REPEATED, i, ri, 0, 0, r.id, 0};
                if (repeat_before(&f, &m->repeated)) m->repeated = f;
                break; /* the smallest repeated id of the cell; the merge is refused */
            }
            if (!have_call || (uint64_t)r.id != (uint64_t)call.id + 1) {
                if (buffered == SPM_ID_WINDOW) {
                    status = write_ranges(m, ranges, buffered, err);
                    buffered = 0;
                }
                ranges[buffered++] = (spm_id_range){r.id, (int64_t)count};
                range_count++;
            }
            call = r;
            have_call = true;
            count++;
            continue;
        }
        int kind = !have_call || call.id != r.id ? SPM_FAIL_MISSING_PARENT
                   : call.start > r.start || call.end < r.end ? SPM_FAIL_NOT_INSIDE
                                                              : 0;
        if (kind) {
            spm_id_failure f = {true, kind, i, ri, r.row, r.position, r.id, r.start};
            if (parent_failure_before(&f, &m->parent_failure)) m->parent_failure = f;
        }
    }
    if (status == SP_OK) {
        c->count = count;
        c->dense = range_count <= 1;
        if (c->dense) {
            c->first = range_count ? ranges[0].id : 0;
        } else {
            if (buffered) status = write_ranges(m, ranges, buffered, err);
            c->map_at = map_at;
            c->map_len = range_count;
        }
    }
    spi_free(ranges);
    return status;
}

int spm_ids_finish_rank(spm_merge *m, size_t ri, spi_error *err) {
    int status = SP_OK;
    for (size_t i = 0; i < m->input_count && status == SP_OK; i++) {
        spm_id_cell *c = &m->ids[i * m->rank_count + ri];
        bool gapless = !c->unordered &&
                       (c->count == 0 || (uint64_t)c->last - (uint64_t)c->first == c->count - 1);
        if (gapless && !c->refs) {
            c->dense = true;
            continue;
        }
        status = cell_sorter(m, c, err);
        /* Pass 1's buffers are written out; this cell alone now takes the budget. */
        if (status == SP_OK) status = spm_sorter_spill(c->refs, err);
        if (status == SP_OK) spm_sorter_set_budget(c->refs, m->memory_budget);
        /* Inputs without call ids: pass 1 numbered their calls and kept them. */
        if (status == SP_OK && (m->inputs[i].columns & (1u << SPM_CALL)))
            status = read_calls_again(m, i, ri, c->refs, err);
        if (status == SP_OK) status = scan_sorted(m, i, ri, c, err);
        spm_sorter_free(c->refs);
        c->refs = NULL;
    }
    for (size_t i = 0; i < m->input_count; i++) {
        spm_id_cell *c = &m->ids[i * m->rank_count + ri];
        spm_sorter_free(c->refs);
        c->refs = NULL;
    }
    /* The runs are consumed: give their disk back. */
    if (m->sort_scratch.file && m->sort_scratch.end) {
        if (ftruncate(fileno(m->sort_scratch.file), 0) != 0 && status == SP_OK)
            status = spi_error_set(err, SP_ERR_OUTPUT,
                                   "scope-merge: cannot empty the sort scratch file: %s",
                                   strerror(errno));
        m->sort_scratch.end = 0;
    }
    return status;
}

/* ---- pass 2's lookups ------------------------------------------------------------- */

static int read_ranges(const spm_merge *m, const spm_id_cell *c, uint64_t at, size_t n,
                       spm_id_range *out, spi_error *err) {
    size_t bytes = n * sizeof *out;
    char *p = (char *)out;
    off_t pos = (off_t)((c->map_at + at) * sizeof *out);
    while (bytes) {
        ssize_t got = pread(fileno(m->id_maps), p, bytes, pos);
        if (got <= 0) {
            if (got == 0) errno = EIO;
            return map_io_error(err, "read");
        }
        p += got;
        pos += got;
        bytes -= (size_t)got;
    }
    return SP_OK;
}

/* The first id of every SPM_ID_STRIDE-th range of the cell's map, read in
 * one sequential pass (through the window's buffer), when it fits an
 * eighth of the budget; else l->index stays NULL and misses bisect the
 * map on disk. */
static int load_index(const spm_merge *m, spm_id_lookup *l, size_t cell, spi_error *err) {
    const spm_id_cell *c = &m->ids[cell];
    spi_free(l->index);
    l->index = NULL;
    l->index_cell = cell;
    uint64_t entries = (c->map_len + SPM_ID_STRIDE - 1) / SPM_ID_STRIDE;
    if (entries > m->memory_budget / 8 / sizeof *l->index) return SP_OK;
    if (!(l->index = spi_malloc((size_t)entries * sizeof *l->index))) return spm_oom(err);
    size_t per_read = l->window_capacity - l->window_capacity % SPM_ID_STRIDE;
    for (uint64_t at = 0; at < c->map_len; at += per_read) {
        uint64_t left = c->map_len - at;
        size_t n = left < per_read ? (size_t)left : per_read;
        int status = read_ranges(m, c, at, n, l->window, err);
        if (status != SP_OK) return status;
        for (size_t k = 0; k < n; k += SPM_ID_STRIDE) l->index[(at + k) / SPM_ID_STRIDE] = l->window[k].id;
    }
    l->window_len = 0; /* the buffer no longer holds a window */
    return SP_OK;
}

/* Load the window of the cell's ranges that holds id (the last range
 * starting at or below it): the whole map when it fits the window's
 * budget, else the SPM_ID_STRIDE ranges around it, found through the
 * index (or by bisecting the map on disk). */
static int load_window(const spm_merge *m, spm_id_lookup *l, size_t cell, int64_t id,
                       spi_error *err) {
    const spm_id_cell *c = &m->ids[cell];
    /* Pass 2 has three lookups (calls, parents, new parents): each may
     * take a quarter of the budget, so that a map that fits is read once,
     * whatever order the ids come in. */
    size_t most = m->memory_budget / 4 / sizeof *l->window;
    size_t want = c->map_len < most ? (size_t)c->map_len : most;
    if (want < SPM_ID_WINDOW) want = SPM_ID_WINDOW;
    if (!l->window || l->window_capacity < want) {
        spm_id_range *grown = spi_reallocarray(l->window, want, sizeof *grown);
        if (!grown) return spm_oom(err);
        l->window = grown;
        l->window_capacity = want;
    }
    size_t n = (size_t)c->map_len;
    uint64_t first = 0;
    if (c->map_len > l->window_capacity) {
        if (!l->index || l->index_cell != cell) {
            int status = load_index(m, l, cell, err);
            if (status != SP_OK) return status;
        }
        uint64_t lo = 0;
        if (l->index) {
            uint64_t hi = (c->map_len + SPM_ID_STRIDE - 1) / SPM_ID_STRIDE;
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                if (l->index[mid] <= id) lo = mid;
                else hi = mid;
            }
            lo *= SPM_ID_STRIDE;
        } else {
            uint64_t hi = c->map_len;
            while (hi - lo > 1) {
                uint64_t mid = lo + (hi - lo) / 2;
                spm_id_range r;
                int status = read_ranges(m, c, mid, 1, &r, err);
                if (status != SP_OK) return status;
                if (r.id <= id) lo = mid;
                else hi = mid;
            }
        }
        first = lo - lo % SPM_ID_STRIDE;
        uint64_t left = c->map_len - first;
        n = left < SPM_ID_STRIDE ? (size_t)left : SPM_ID_STRIDE;
    }
    int status = read_ranges(m, c, first, n, l->window, err);
    if (status != SP_OK) return status;
    l->cell = cell;
    l->window_at = first;
    l->window_len = n;
    l->window_end = INT64_MAX;
    l->window_end_rank = (int64_t)c->count;
    if (first + n < c->map_len) {
        spm_id_range next;
        status = read_ranges(m, c, first + n, 1, &next, err);
        if (status != SP_OK) return status;
        l->window_end = next.id;
        l->window_end_rank = next.rank;
    }
    return SP_OK;
}

int spm_id_rank_mapped(const spm_merge *m, spm_id_lookup *l, size_t cell, int64_t id,
                       int64_t *rank, spi_error *err) {
    const spm_id_cell *c = &m->ids[cell];
    *rank = -1;
    if (c->map_len == 0) return SP_OK;
    bool loaded = l->window && l->cell == cell && l->window_len;
    if (!loaded || (id < l->window[0].id && l->window_at > 0) || id >= l->window_end) {
        int status = load_window(m, l, cell, id, err);
        if (status != SP_OK) return status;
    }
    if (id < l->window[0].id) return SP_OK;
    size_t lo = 0, hi = l->window_len;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->window[mid].id <= id) lo = mid;
        else hi = mid;
    }
    int64_t next_rank = lo + 1 < l->window_len ? l->window[lo + 1].rank : l->window_end_rank;
    uint64_t offset = (uint64_t)id - (uint64_t)l->window[lo].id;
    if (offset < (uint64_t)(next_rank - l->window[lo].rank))
        *rank = l->window[lo].rank + (int64_t)offset;
    return SP_OK;
}

void spm_id_lookup_free(spm_id_lookup *l) {
    spi_free(l->window);
    spi_free(l->index);
    l->window = NULL;
    l->index = NULL;
    l->window_len = l->window_capacity = 0;
}
