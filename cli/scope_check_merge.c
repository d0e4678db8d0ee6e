/*
 * scope_check_merge.c - one rank's calls in nesting order, from a heap of
 * row cursors (scope_check_merge.h).
 *
 * Why not the library's own merge (analysis/call_merge.c): scope-check is
 * a user of the public API only, so that what it checks is what any
 * reader of the format could check; and its order is the package's
 * (start, longer first), with ids only as the last tie-breaker, so that a
 * stored parent id is compared with the rebuild instead of steering it.
 */
#include "scope_check_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stream {
    size_t row, pos;
    sp_calls *cursor;       /* NULL once exhausted or for a row read whole */
    sp_call_slice slice;
    size_t at;              /* next call of the slice */
    uint64_t next_index;    /* row index of slice call `at` */
    int64_t previous_start; /* start of the call streamed before */
    const int64_t *tasks;   /* the row's task ids (in-memory objects), or NULL */
    check_call *whole;      /* a row out of start order, read whole, sorted */
    uint64_t whole_count, whole_at;
    uint64_t disorder, first_disorder;
    int saw_parents;  /* a slice carried parent_ids */
    check_call head;
} stream;

struct check_merge {
    const sp_results *res;
    stream *streams;
    size_t stream_count;
    size_t *heap;  /* indexes of streams with a head, min-heap by head */
    size_t heap_len;
    uint64_t *disorder, *first_disorder;  /* per row position */
    size_t row_count;
    int has_parents;
    check_call delivered;
};

static int cmp_call(const check_call *a, const check_call *b) {
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end > b->end ? -1 : 1;  /* longer first */
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    if (a->pos != b->pos) return a->pos < b->pos ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int cmp_call_q(const void *a, const void *b) { return cmp_call(a, b); }

static check_call call_of(const stream *s, size_t k) {
    const sp_call_slice *sl = &s->slice;
    uint64_t index = s->next_index;
    return (check_call){
        .start = sl->starts[k],
        .end = sl->ends[k],
        .duration = sl->durations[k],
        .id = sl->call_ids ? sl->call_ids[k] : -1,
        .parent = sl->parent_ids ? sl->parent_ids[k] : -1,
        .thread = sl->thread_ids ? sl->thread_ids[k] : -1,
        .task = s->tasks ? s->tasks[index] : -1,
        .pos = s->pos,
        .index = index,
    };
}

/* The next call of a streamed row into s->head; 0 at the end. */
static int stream_advance(stream *s, int *has, char *errbuf, size_t len) {
    *has = 0;
    if (s->whole) {
        if (s->whole_at == s->whole_count) return SP_OK;
        s->head = s->whole[s->whole_at++];
        *has = 1;
        return SP_OK;
    }
    if (!s->cursor) return SP_OK;
    if (s->at == s->slice.count) {
        int st = sp_calls_next(s->cursor, &s->slice, errbuf, len);
        if (st != SP_OK) return st;
        s->at = 0;
        s->saw_parents |= s->slice.parent_ids != NULL;
        if (s->slice.count == 0) {
            sp_calls_close(s->cursor);
            s->cursor = NULL;
            return SP_OK;
        }
    }
    s->head = call_of(s, s->at);
    s->at++;
    s->next_index++;
    /* The reader said this row is in start order; a file that changed
     * since it was opened must not make the merge misorder silently. */
    if (s->head.index > 0 && s->head.start < s->previous_start) {
        snprintf(errbuf, len, "the calls of a row changed order while being read");
        return SP_ERR_CORRUPT;
    }
    s->previous_start = s->head.start;
    *has = 1;
    return SP_OK;
}

/* A row out of start order: every call into memory, sorted. */
static int read_whole(stream *s, uint64_t calls, char *errbuf, size_t len) {
    s->whole = malloc((size_t)(calls ? calls : 1) * sizeof *s->whole);
    if (!s->whole) return SP_ERR_OUT_OF_MEMORY;
    int st;
    int64_t previous = 0;
    while ((st = sp_calls_next(s->cursor, &s->slice, errbuf, len)) == SP_OK && s->slice.count) {
        s->saw_parents |= s->slice.parent_ids != NULL;
        for (size_t k = 0; k < s->slice.count && s->whole_count < calls; k++) {
            check_call c = call_of(s, k);
            if (s->whole_count > 0 && c.start < previous && s->disorder++ == 0)
                s->first_disorder = s->whole_count;
            previous = c.start;
            s->whole[s->whole_count++] = c;
            s->next_index++;
        }
    }
    sp_calls_close(s->cursor);
    s->cursor = NULL;
    if (st != SP_OK) return st;
    qsort(s->whole, (size_t)s->whole_count, sizeof *s->whole, cmp_call_q);
    return SP_OK;
}

static int heap_less(const check_merge *m, size_t a, size_t b) {
    return cmp_call(&m->streams[a].head, &m->streams[b].head) < 0;
}

static void sift_down(check_merge *m, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < m->heap_len && heap_less(m, m->heap[l], m->heap[best])) best = l;
        if (r < m->heap_len && heap_less(m, m->heap[r], m->heap[best])) best = r;
        if (best == i) return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[best];
        m->heap[best] = t;
        i = best;
    }
}

void check_merge_close(check_merge *m) {
    if (!m) return;
    for (size_t i = 0; i < m->stream_count; i++) {
        sp_calls_close(m->streams[i].cursor);
        free(m->streams[i].whole);
    }
    free(m->streams);
    free(m->heap);
    free(m->disorder);
    free(m->first_disorder);
    free(m);
}

int check_merge_open(check_merge **out, const sp_results *res, const size_t *rows, size_t count,
                     char *errbuf, size_t errbuf_len) {
    *out = NULL;
    if (errbuf_len) errbuf[0] = '\0';
    check_merge *m = calloc(1, sizeof *m);
    if (!m) return SP_ERR_OUT_OF_MEMORY;
    m->res = res;
    m->row_count = count;
    m->streams = calloc(count ? count : 1, sizeof *m->streams);
    m->heap = calloc(count ? count : 1, sizeof *m->heap);
    m->disorder = calloc(count ? count : 1, sizeof *m->disorder);
    m->first_disorder = calloc(count ? count : 1, sizeof *m->first_disorder);
    if (!m->streams || !m->heap || !m->disorder || !m->first_disorder) {
        check_merge_close(m);
        return SP_ERR_OUT_OF_MEMORY;
    }
    size_t slice = CHECK_MERGE_SLICE_BYTES / ((count ? count : 1) * 7 * sizeof(int64_t));
    if (slice < 64) slice = 64;
    if (slice > 65536) slice = 65536;
    int st = SP_OK;
    for (size_t i = 0; i < count && st == SP_OK; i++) {
        uint64_t calls = sp_results_row_calls(res, rows[i]);
        if (calls == 0) continue;
        stream *s = &m->streams[m->stream_count];
        *s = (stream){.row = rows[i], .pos = i, .tasks = sp_results_row_task_ids(res, rows[i])};
        st = sp_calls_open(res, rows[i], slice, &s->cursor);
        if (st != SP_OK) break;
        m->stream_count++;
        if (!sp_results_row_in_start_order(res, rows[i])) {
            st = read_whole(s, calls, errbuf, errbuf_len);
            m->disorder[i] = s->disorder;
            m->first_disorder[i] = s->first_disorder;
        }
        int has = 0;
        if (st == SP_OK) st = stream_advance(s, &has, errbuf, errbuf_len);
        m->has_parents |= s->saw_parents;
        if (st == SP_OK && has) m->heap[m->heap_len++] = (size_t)(s - m->streams);
    }
    if (st != SP_OK) {
        check_merge_close(m);
        return st;
    }
    for (size_t i = m->heap_len; i-- > 0;) sift_down(m, i);
    *out = m;
    return SP_OK;
}

int check_merge_next(check_merge *m, const check_call **call, char *errbuf, size_t errbuf_len) {
    *call = NULL;
    if (m->heap_len == 0) return SP_OK;
    stream *s = &m->streams[m->heap[0]];
    m->delivered = s->head;
    int has = 0;
    int st = stream_advance(s, &has, errbuf, errbuf_len);
    if (st != SP_OK) return st;
    if (!has) m->heap[0] = m->heap[--m->heap_len];
    if (m->heap_len) sift_down(m, 0);
    *call = &m->delivered;
    return SP_OK;
}

void check_merge_disorder(const check_merge *m, size_t pos, uint64_t *count, uint64_t *first) {
    *count = pos < m->row_count ? m->disorder[pos] : 0;
    *first = pos < m->row_count ? m->first_disorder[pos] : 0;
}

int check_merge_has_parents(const check_merge *m) { return m->has_parents; }
