/*
 * call_merge.c - a rank's calls merged from its rows in time order
 * (call_merge.h): a binary heap of row streams, each serving its row's
 * calls one run of equal starts at a time, that run sorted by the tie key.
 */
#include "analysis/call_merge.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "profile/call_cursor.h"

typedef struct row_stream {
    size_t row;
    spi_call_cursor cursor;
    bool cursor_open;
    spi_call_slice slice;
    size_t pos;               /* next unread call of the slice */
    uint64_t slice_first;     /* row index of slice call 0 */
    bool whole;               /* the row was read whole into run */
    spi_merged_call *run;     /* calls served next, in merge order */
    size_t run_len, run_pos, run_cap;
} row_stream;

/* A heap entry: a stream and the first two keys of its head call, so
 * that most comparisons read the heap alone. */
typedef struct heap_item {
    int64_t start, tie;       /* the head's start, and its id (by id) or end */
    size_t stream;
} heap_item;

struct spi_rank_merge {
    const spi_profile *profile;
    uint32_t rank;
    bool by_id;
    size_t slice_max;
    row_stream *streams;
    size_t stream_count;
    heap_item *heap;          /* streams by their heads, smallest first */
    size_t heap_len;
    spi_merged_call current;
};

static const char *region_name(const spi_profile *p, size_t row) {
    uint32_t region = p->rows[row].region;
    return region < p->name_count && p->names[region] ? p->names[region] : "?";
}

static bool row_readable(const spi_profile *p, const spi_row *row) {
    return row->count > 0 && (p->store || (row->starts && row->durations));
}

bool spi_rank_merge_has_ids(const spi_profile *p, uint32_t rank, const size_t *row_list,
                            size_t row_count) {
    for (size_t j = 0; j < row_count; j++) {
        const spi_row *row = &p->rows[row_list[j]];
        if (row->rank != rank || !row_readable(p, row)) continue;
        if (p->store) {
            unsigned both = SPI_EV_BIT(SPI_EV_CALL_IDS) | SPI_EV_BIT(SPI_EV_PARENT_IDS);
            if ((p->store->columns & both) != both) return false;
        } else if (!row->call_ids || !row->parent_ids) {
            return false;
        }
    }
    return true;
}

/* Merge order: start, then id (by_id) or the later end first, then row
 * and stored index (calltree.c's containment order within a lane). */
static int compare(const spi_merged_call *x, const spi_merged_call *y, bool by_id) {
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (by_id) {
        if (x->id != y->id) return x->id < y->id ? -1 : 1;
    } else if (x->end != y->end) {
        return x->end > y->end ? -1 : 1;
    }
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

static int compare_by_id(const void *a, const void *b) { return compare(a, b, true); }
static int compare_by_end(const void *a, const void *b) { return compare(a, b, false); }

static int oom(spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory merging a rank's calls");
}

/* Append slice call k of stream s to its run, checked as calltree.c checks
 * a call (a negative duration or an end past INT64_MAX is refused). */
static int take(spi_rank_merge *m, row_stream *s, size_t k, spi_error *err) {
    if (s->run_len == s->run_cap) {
        size_t cap = s->run_cap ? 2 * s->run_cap : 8;
        spi_merged_call *run = spi_reallocarray(s->run, cap, sizeof *run);
        if (!run) return oom(err);
        s->run = run;
        s->run_cap = cap;
    }
    const spi_row *row = &m->profile->rows[s->row];
    uint64_t index = s->slice_first + k;
    spi_merged_call *c = &s->run[s->run_len];
    c->start = s->slice.starts[k];
    if (s->slice.durations[k] < 0 ||
        __builtin_add_overflow(c->start, s->slice.durations[k], &c->end))
        return spi_error_set(err, SP_ERR_NESTING,
                             "rank %u: region '%s' call %llu has a timestamp or duration out "
                             "of range",
                             m->rank, region_name(m->profile, s->row), (unsigned long long)index);
    c->id = m->by_id && s->slice.call_ids ? s->slice.call_ids[k] : -1;
    c->parent = m->by_id && s->slice.parent_ids ? s->slice.parent_ids[k] : -1;
    /* Task ids exist only in memory: a store never reads them. */
    int64_t task = !m->profile->store && row->task_ids ? row->task_ids[index] : -1;
    int64_t thread = s->slice.thread_ids ? s->slice.thread_ids[k] : -1;
    if (task >= 0) c->lane = task;
    else if (thread >= 0) c->lane = thread >= INT64_MAX - 1 ? INT64_MIN : -2 - thread;
    else c->lane = -1;
    c->thread = thread;
    c->row = s->row;
    c->index = index;
    s->run_len++;
    return SP_OK;
}

static int next_slice(row_stream *s, spi_error *err) {
    s->slice_first += s->slice.count;
    s->pos = 0;
    return spi_call_cursor_next(&s->cursor, &s->slice, err);
}

/* The stream's next run: its calls that share the next start, sorted by
 * the tie key. run_len 0 at the row's end. */
static int fill_run(spi_rank_merge *m, row_stream *s, spi_error *err) {
    s->run_len = s->run_pos = 0;
    if (s->whole) return SP_OK;  /* served once, whole */
    /* The common case: the next call starts after this one, alone in its
     * run (what the loop below finds, without its rounds). */
    if (s->pos + 1 < s->slice.count && s->slice.starts[s->pos + 1] > s->slice.starts[s->pos]) {
        int status = take(m, s, s->pos, err);
        s->pos++;
        return status;
    }
    if (s->pos == s->slice.count) {
        int status = next_slice(s, err);
        if (status != SP_OK || s->slice.count == 0) return status;
    }
    int64_t first = s->slice.starts[s->pos];
    for (;;) {
        while (s->pos < s->slice.count && s->slice.starts[s->pos] == first) {
            int status = take(m, s, s->pos, err);
            if (status != SP_OK) return status;
            s->pos++;
        }
        if (s->pos < s->slice.count) {
            if (s->slice.starts[s->pos] < first)
                return spi_error_set(err, SP_ERR_NESTING,
                                     "rank %u: region '%s' call %llu starts before the call "
                                     "stored before it; the calls cannot be ordered",
                                     m->rank, region_name(m->profile, s->row),
                                     (unsigned long long)(s->slice_first + s->pos));
            break;
        }
        int status = next_slice(s, err);
        if (status != SP_OK) return status;
        if (s->slice.count == 0) break;
    }
    if (s->run_len > 1)
        qsort(s->run, s->run_len, sizeof *s->run, m->by_id ? compare_by_id : compare_by_end);
    return SP_OK;
}

/* A row out of start order: every call read and sorted once. */
static int read_whole(spi_rank_merge *m, row_stream *s, spi_error *err) {
    const spi_row *row = &m->profile->rows[s->row];
    if (row->count > SIZE_MAX / sizeof *s->run) return oom(err);
    s->run = spi_calloc((size_t)row->count, sizeof *s->run);
    if (!s->run) return oom(err);
    s->run_cap = (size_t)row->count;
    int status;
    while ((status = next_slice(s, err)) == SP_OK && s->slice.count)
        for (size_t k = 0; k < s->slice.count && status == SP_OK; k++)
            status = take(m, s, k, err);
    if (status != SP_OK) return status;
    if (s->run_len > 1)
        qsort(s->run, s->run_len, sizeof *s->run, m->by_id ? compare_by_id : compare_by_end);
    s->whole = true;
    return SP_OK;
}

/* compare() of the two streams' heads: start and tie from the items,
 * the rest (row, index) from the calls only when those are equal. */
static inline bool heap_less(const spi_rank_merge *m, const heap_item *a, const heap_item *b) {
    if (a->start != b->start) return a->start < b->start;
    if (a->tie != b->tie) return m->by_id ? a->tie < b->tie : a->tie > b->tie;
    const row_stream *x = &m->streams[a->stream], *y = &m->streams[b->stream];
    return compare(&x->run[x->run_pos], &y->run[y->run_pos], m->by_id) < 0;
}

/* The item of stream `index`, from its head call. */
static inline heap_item item_of(const spi_rank_merge *m, size_t index) {
    const spi_merged_call *head = &m->streams[index].run[m->streams[index].run_pos];
    return (heap_item){head->start, m->by_id ? head->id : head->end, index};
}

/* Item i moved down to its place: the smaller child moves up into the
 * hole until the item is not larger than it, and the item is written once
 * (a swap per level wrote it at every level). The order of comparisons
 * and the final heap are those of the swapping form. */
static void sift_down(spi_rank_merge *m, size_t i) {
    heap_item *h = m->heap;
    heap_item item = h[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1;
        if (l >= m->heap_len) break;
        size_t child = r < m->heap_len && heap_less(m, &h[r], &h[l]) ? r : l;
        if (!heap_less(m, &h[child], &item)) break;
        h[i] = h[child];
        i = child;
    }
    h[i] = item;
}

int spi_rank_merge_open(spi_rank_merge **out, const spi_profile *p, uint32_t rank,
                        const size_t *row_list, size_t row_count, bool by_id, spi_error *err) {
    *out = NULL;
    spi_rank_merge *m = spi_calloc(1, sizeof *m);
    if (!m) return oom(err);
    m->profile = p;
    m->rank = rank;
    m->by_id = by_id;
    size_t rows = 0;
    for (size_t j = 0; j < row_count; j++)
        rows += p->rows[row_list[j]].rank == rank && row_readable(p, &p->rows[row_list[j]]);
    m->streams = spi_calloc(rows + 1, sizeof *m->streams);
    m->heap = spi_calloc(rows + 1, sizeof *m->heap);
    if (!m->streams || !m->heap) {
        spi_rank_merge_close(m);
        return oom(err);
    }
    /* five int64 columns per call in a store cursor's buffers */
    size_t per_call = 5 * sizeof(int64_t);
    m->slice_max = SPI_MERGE_SLICE_BYTES / ((rows ? rows : 1) * per_call);
    if (m->slice_max < 64) m->slice_max = 64;
    if (m->slice_max > SPI_CURSOR_DEFAULT_SLICE) m->slice_max = SPI_CURSOR_DEFAULT_SLICE;
    int status = SP_OK;
    for (size_t j = 0; j < row_count && status == SP_OK; j++) {
        const spi_row *row = &p->rows[row_list[j]];
        if (row->rank != rank || !row_readable(p, row)) continue;
        row_stream *s = &m->streams[m->stream_count++];
        s->row = row_list[j];
        status = spi_call_cursor_open(&s->cursor, p, s->row,
                                      SPI_CURSOR_STARTS | SPI_CURSOR_DURATIONS | SPI_CURSOR_IDS,
                                      m->slice_max);
        if (status != SP_OK) {
            status = oom(err);
            break;
        }
        s->cursor_open = true;
        status = row->out_of_start_order ? read_whole(m, s, err) : fill_run(m, s, err);
        if (status == SP_OK && s->run_len)
            m->heap[m->heap_len++] = item_of(m, m->stream_count - 1);
    }
    if (status != SP_OK) {
        spi_rank_merge_close(m);
        return status;
    }
    for (size_t i = m->heap_len / 2; i-- > 0;) sift_down(m, i);
    *out = m;
    return SP_OK;
}

int spi_rank_merge_next(spi_rank_merge *m, const spi_merged_call **call, spi_error *err) {
    *call = NULL;
    if (m->heap_len == 0) return SP_OK;
    size_t top = m->heap[0].stream;
    row_stream *s = &m->streams[top];
    m->current = s->run[s->run_pos++];
    if (s->run_pos == s->run_len) {
        int status = fill_run(m, s, err);
        if (status != SP_OK) return status;
    }
    if (s->run_len == 0) m->heap[0] = m->heap[--m->heap_len];
    else m->heap[0] = item_of(m, top);
    if (m->heap_len) sift_down(m, 0);
    *call = &m->current;
    return SP_OK;
}

void spi_rank_merge_close(spi_rank_merge *m) {
    if (!m) return;
    for (size_t i = 0; i < m->stream_count; i++) {
        if (m->streams[i].cursor_open) spi_call_cursor_close(&m->streams[i].cursor);
        spi_free(m->streams[i].run);
    }
    spi_free(m->streams);
    spi_free(m->heap);
    spi_free(m);
}
