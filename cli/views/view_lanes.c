/*
 * view_lanes.c - see view_lanes.h.
 *
 * Building is one streamed pass per rank: the rank's selected rows are
 * merged by (start ascending, end descending, row, index in the row),
 * which puts a parent before the children that start with it, and each
 * call is appended to its lane, so every lane comes out in that order.
 * Nesting then comes from one stack walk per lane, as FORMAT.md 7.6
 * rebuilds it per lane, instead of from the stored parent ids: those are
 * optional (merged and foreign files lack them) and containment gives the
 * same tree whenever they exist.
 */
#include "view_lanes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* (rank, thread) packed into one key; thread + 1 so the unknown lane (-1)
 * becomes 0 and keys sort like (rank, thread). */
static uint64_t lane_key(uint32_t rank, int64_t thread) {
    return (uint64_t)rank << 32 | (uint32_t)(thread + 1);
}

typedef struct lane_map {
    uint64_t *keys; /* key + 1, 0 = empty slot */
    uint32_t *lane;
    size_t cap, used;
} lane_map;

static uint64_t hash64(uint64_t x) {
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    return x;
}

static int map_grow(lane_map *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    uint64_t *keys = calloc(cap, sizeof *keys);
    uint32_t *lane = calloc(cap, sizeof *lane);
    if (!keys || !lane) {
        free(keys);
        free(lane);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        size_t j = hash64(m->keys[i]) & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        lane[j] = m->lane[i];
    }
    free(m->keys);
    free(m->lane);
    m->keys = keys;
    m->lane = lane;
    m->cap = cap;
    return SP_OK;
}

/* The lane of key, adding it as lane number m->used when new. */
static int map_lane(lane_map *m, uint64_t key, uint32_t *out) {
    if (m->used * 2 >= m->cap && map_grow(m) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    size_t j = hash64(key + 1) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != key + 1) j = (j + 1) & (m->cap - 1);
    if (!m->keys[j]) {
        m->keys[j] = key + 1;
        m->lane[j] = (uint32_t)m->used++;
    }
    *out = m->lane[j];
    return SP_OK;
}

static int cmp_lane(const void *pa, const void *pb) {
    const view_lane *a = pa, *b = pb;
    uint64_t ka = lane_key(a->rank, a->thread), kb = lane_key(b->rank, b->thread);
    return ka < kb ? -1 : ka > kb;
}

static bool rank_in(const uint32_t *ranks, size_t n, uint32_t rank) {
    if (!ranks || n == 0) return true;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranks[mid] == rank) return true;
        if (ranks[mid] < rank) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

unsigned view_duration_bin(int64_t d) {
    unsigned b = 0;
    while (d > 0 && b < 64) {
        d >>= 1;
        b++;
    }
    return b; /* d in [2^(b-1), 2^b) */
}

/* SCOPE_PROFILER_VIEW_MEMORY (bytes, K/M/G suffix) or the default. */
static size_t memory_budget(void) {
    const char *text = getenv("SCOPE_PROFILER_VIEW_MEMORY");
    if (!text || !text[0]) return VIEW_MEMORY_DEFAULT;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    unsigned shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
                   : *end == 'G' || *end == 'g' ? 30 : 0;
    if (shift) end++;
    if (errno || end == text || *end || value > (SIZE_MAX >> shift)) return VIEW_MEMORY_DEFAULT;
    return (size_t)value << shift;
}

/* ---- one rank's rows merged by start ------------------------------------ */

/* One row's calls in merge order: streamed through a cursor when the row
 * is in start order, else read whole and sorted here. */
typedef struct row_stream {
    uint32_t row;
    sp_calls *cursor;
    sp_call_slice slice;
    size_t pos;          /* in slice, or in sorted */
    uint64_t index;      /* of the current call within the row */
    view_call *sorted;   /* a row out of start order, sorted */
    int64_t *threads;    /* its thread ids, in sorted order */
    uint64_t sorted_count;
    view_call head;      /* the current call */
    int64_t head_thread;
} row_stream;

/* Merge order: start ascending, end descending (a parent before the
 * children that start with it), then row and position in the row. */
static bool call_before(const view_call *a, uint64_t ia, const view_call *b, uint64_t ib) {
    if (a->start != b->start) return a->start < b->start;
    if (a->end != b->end) return a->end > b->end;
    if (a->row != b->row) return a->row < b->row;
    return ia < ib;
}

/* qsort has no context argument in C11: the row being sorted is reached
 * through this file-level pointer (tools are single-threaded). */
static const view_call *sort_calls;

static int cmp_position(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    if (call_before(&sort_calls[a], a, &sort_calls[b], b)) return -1;
    return call_before(&sort_calls[b], b, &sort_calls[a], a) ? 1 : 0;
}

static int read_failed(view_lanes *v, int status, const char *msg) {
    snprintf(v->error, sizeof v->error, "%s", msg[0] ? msg : "cannot read the calls");
    return status;
}

/* Load the current call of s into s->head; false at the row's end. */
static int stream_advance(view_lanes *v, row_stream *s, bool *more) {
    if (s->sorted) {
        *more = s->pos < s->sorted_count;
        if (*more) {
            s->head = s->sorted[s->pos];
            s->head_thread = s->threads[s->pos];
            s->index = s->pos++; /* merge ties: the sorted position */
        }
        return SP_OK;
    }
    if (s->pos == s->slice.count) {
        char msg[512];
        int st = sp_calls_next(s->cursor, &s->slice, msg, sizeof msg);
        if (st != SP_OK) return read_failed(v, st, msg);
        s->pos = 0;
    }
    *more = s->pos < s->slice.count;
    if (!*more) return SP_OK;
    const sp_call_slice *sl = &s->slice;
    size_t k = s->pos++;
    s->head = (view_call){sl->starts[k], sl->ends[k], sl->call_ids ? sl->call_ids[k] : -1,
                          sl->parent_ids ? sl->parent_ids[k] : -1, s->row, 0};
    s->head_thread = sl->thread_ids ? sl->thread_ids[k] : -1;
    return SP_OK;
}

/* A row out of start order: every call read, then sorted (memory: the
 * row's calls, 56 bytes each while sorting). */
static int stream_sort_row(view_lanes *v, row_stream *s) {
    uint64_t n = sp_results_row_calls(v->res, s->row);
    size_t cap = (size_t)(n ? n : 1);
    view_call *calls = malloc(cap * sizeof *calls);
    int64_t *threads = malloc(cap * sizeof *threads);
    size_t *order = malloc(cap * sizeof *order);
    int st = calls && threads && order ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    size_t k = 0;
    for (bool more = true; st == SP_OK && k < n;) {
        if ((st = stream_advance(v, s, &more)) != SP_OK || !more) break;
        calls[k] = s->head;
        threads[k] = s->head_thread;
        order[k] = k;
        k++;
    }
    /* from here on stream_advance serves the sorted copy */
    if (st == SP_OK && (!(s->sorted = malloc(cap * sizeof *s->sorted)) ||
                        !(s->threads = malloc(cap * sizeof *s->threads))))
        st = SP_ERR_OUT_OF_MEMORY;
    if (st == SP_OK) {
        sort_calls = calls;
        qsort(order, k, sizeof *order, cmp_position);
        sort_calls = NULL;
        for (size_t i = 0; i < k; i++) {
            s->sorted[i] = calls[order[i]];
            s->threads[i] = threads[order[i]];
        }
        s->sorted_count = k;
        s->pos = 0;
        s->index = 0;
        sp_calls_close(s->cursor);
        s->cursor = NULL;
    }
    free(calls);
    free(threads);
    free(order);
    return st;
}

static void stream_close(row_stream *s) {
    sp_calls_close(s->cursor);
    free(s->sorted);
    free(s->threads);
}

/* Binary heap of streams by their head call. */
static bool stream_before(const row_stream *a, const row_stream *b) {
    return call_before(&a->head, a->index, &b->head, b->index);
}

static void heap_down(row_stream **h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && stream_before(h[l], h[m])) m = l;
        if (r < n && stream_before(h[r], h[m])) m = r;
        if (m == i) return;
        row_stream *t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* ---- lane storage --------------------------------------------------------- */

/* Write a lane's buffered calls as one block of the temporary file. */
static int lane_flush(view_lanes *v, view_lane *l, size_t calls) {
    if (calls == 0) return SP_OK;
    uint64_t *grown = realloc(l->blocks, (l->block_count + 1) * sizeof *grown);
    if (!grown) return SP_ERR_OUT_OF_MEMORY;
    l->blocks = grown;
    if (fseeko(v->spill, 0, SEEK_END) != 0) return SP_ERR_OUTPUT;
    off_t at = ftello(v->spill);
    if (at < 0 || fwrite(l->calls, sizeof *l->calls, calls, v->spill) != calls) {
        snprintf(v->error, sizeof v->error, "cannot write the temporary file of the lanes: %s",
                 strerror(errno));
        return SP_ERR_OUTPUT;
    }
    l->blocks[l->block_count++] = (uint64_t)at;
    return SP_OK;
}

static int lane_append(view_lanes *v, view_lane *l, const view_call *c) {
    size_t buffered = v->spill ? (size_t)(l->count % v->block_calls) : (size_t)l->count;
    if (buffered == l->capacity) {
        size_t cap = v->spill ? v->block_calls : l->capacity ? l->capacity * 2 : 256;
        view_call *grown = realloc(l->calls, cap * sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        l->calls = grown;
        l->capacity = cap;
    }
    l->calls[buffered] = *c;
    if (l->count == 0 || c->start < l->start_min) l->start_min = c->start;
    if (l->count == 0 || c->end > l->end_max) l->end_max = c->end;
    l->count++;
    if (v->spill && buffered + 1 == v->block_calls) return lane_flush(v, l, v->block_calls);
    return SP_OK;
}

/* A rank done: its lanes' last partial blocks go to the file. */
static int lanes_seal(view_lanes *v, size_t first_lane) {
    if (!v->spill) return SP_OK;
    for (size_t i = first_lane; i < v->lane_count; i++) {
        view_lane *l = &v->lanes[i];
        int st = lane_flush(v, l, (size_t)(l->count % v->block_calls));
        if (st != SP_OK) return st;
        free(l->calls);
        l->calls = NULL;
        l->capacity = 0;
    }
    return SP_OK;
}

/* An unlinked temporary file in $TMPDIR (else /tmp): it never has a name
 * while the tool runs, so nothing is left behind whatever ends the tool. */
static FILE *spill_file(view_lanes *v) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !dir[0]) dir = "/tmp";
    char path[4096];
    int fd = -1;
    if (snprintf(path, sizeof path, "%s/.scope-lanes-XXXXXX", dir) < (int)sizeof path)
        fd = mkstemp(path);
    FILE *file = NULL;
    if (fd >= 0) {
        unlink(path);
        if (!(file = fdopen(fd, "w+b"))) close(fd);
    }
    if (!file)
        snprintf(v->error, sizeof v->error, "cannot create a temporary file for the lanes in %s: %s",
                 dir, strerror(errno));
    return file;
}

/* ---- building ------------------------------------------------------------- */

static int lane_of(view_lanes *v, lane_map *map, size_t *lanes_cap, uint32_t rank,
                   int64_t thread, view_lane **out) {
    uint32_t lane;
    if (map_lane(map, lane_key(rank, thread), &lane) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    if (lane == v->lane_count) {
        if (v->lane_count == *lanes_cap) {
            size_t cap = *lanes_cap ? *lanes_cap * 2 : 16;
            view_lane *grown = realloc(v->lanes, cap * sizeof *grown);
            if (!grown) return SP_ERR_OUT_OF_MEMORY;
            v->lanes = grown;
            *lanes_cap = cap;
        }
        v->lanes[v->lane_count++] = (view_lane){.rank = rank, .thread = thread};
    }
    *out = &v->lanes[lane];
    return SP_OK;
}

/* Merge the rows rows[0..n) (one rank) into their lanes. */
static int merge_rank(view_lanes *v, const uint32_t *rows, size_t n, size_t slice_calls,
                      lane_map *map, size_t *lanes_cap) {
    row_stream *streams = calloc(n, sizeof *streams);
    row_stream **heap = calloc(n, sizeof *heap);
    int st = streams && heap ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    size_t live = 0, first_lane = v->lane_count;
    for (size_t i = 0; i < n && st == SP_OK; i++) {
        row_stream *s = &streams[i];
        s->row = rows[i];
        st = sp_calls_open(v->res, s->row, slice_calls, &s->cursor);
        if (st == SP_OK && !sp_results_row_in_start_order(v->res, s->row))
            st = stream_sort_row(v, s);
        bool more = false;
        if (st == SP_OK) st = stream_advance(v, s, &more);
        if (st == SP_OK && more) heap[live++] = s;
    }
    for (size_t i = live / 2; i-- > 0;) heap_down(heap, live, i);
    while (st == SP_OK && live > 0) {
        row_stream *s = heap[0];
        view_lane *lane;
        st = lane_of(v, map, lanes_cap, sp_results_row_rank(v->res, s->row), s->head_thread,
                     &lane);
        if (st == SP_OK) st = lane_append(v, lane, &s->head);
        if (st != SP_OK) break;
        if (s->head.call_id >= 0 && s->head.parent_id >= 0) v->parents = true;
        if (v->call_count == 0 || s->head.end > v->end_max) v->end_max = s->head.end;
        v->duration_bins[view_duration_bin(s->head.end - s->head.start)]++;
        v->call_count++;
        s->index++;
        bool more = false;
        st = stream_advance(v, s, &more);
        if (st == SP_OK && !more) heap[0] = heap[--live];
        heap_down(heap, live, 0);
    }
    for (size_t i = 0; streams && i < n; i++) stream_close(&streams[i]);
    free(streams);
    free(heap);
    if (st == SP_OK) st = lanes_seal(v, first_lane);
    return st;
}

static int cmp_u64(const void *pa, const void *pb) {
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

int view_lanes_build(view_lanes *v, const sp_results *res, const uint32_t *ranks,
                     size_t rank_count, const bool *region_on) {
    memset(v, 0, sizeof *v);
    v->res = res;
    size_t rows = sp_results_row_count(res);
    /* (rank << 32 | row), sorted: the rows rank by rank, in file order */
    uint64_t *selected = malloc((rows + 1) * sizeof *selected);
    uint32_t *rank_rows = malloc((rows + 1) * sizeof *rank_rows);
    if (!selected || !rank_rows || rows > UINT32_MAX) {
        free(rank_rows);
        free(selected);
        return SP_ERR_OUT_OF_MEMORY;
    }
    size_t n = 0;
    uint64_t calls = 0;
    bool have_origin = false;
    for (size_t r = 0; r < rows; r++) {
        uint64_t count = sp_results_row_calls(res, r);
        sp_row_stats stats;
        if (count == 0 || sp_results_row_stats(res, r, &stats) != SP_OK) continue;
        /* The origin is the earliest start of the whole file, so a
         * filtered view lines up with an unfiltered one. */
        if (!have_origin || stats.start_minimum < v->origin) v->origin = stats.start_minimum;
        have_origin = true;
        if (!rank_in(ranks, rank_count, sp_results_row_rank(res, r)) ||
            (region_on && !region_on[sp_results_row_region(res, r)]))
            continue;
        selected[n++] = (uint64_t)sp_results_row_rank(res, r) << 32 | r;
        calls += count;
    }
    qsort(selected, n, sizeof *selected, cmp_u64);

    size_t budget = memory_budget();
    v->block_calls = budget / sizeof(view_call) / 64;
    if (v->block_calls < 16) v->block_calls = 16;
    if (v->block_calls > 4096) v->block_calls = 4096;
    int st = SP_OK;
    if (calls > budget / sizeof(view_call) && !(v->spill = spill_file(v))) st = SP_ERR_OUTPUT;
    lane_map map = {0};
    size_t lanes_cap = 0;
    for (size_t first = 0; first < n && st == SP_OK;) {
        size_t end = first;
        for (; end < n && selected[end] >> 32 == selected[first] >> 32; end++)
            rank_rows[end - first] = (uint32_t)selected[end];
        /* a quarter of the budget for the rows' slices (48 bytes a call) */
        size_t slice = budget / 4 / 48 / (end - first);
        if (slice < 16) slice = 16;
        if (slice > 65536) slice = 65536;
        st = merge_rank(v, rank_rows, end - first, slice, &map, &lanes_cap);
        first = end;
    }
    free(map.keys);
    free(map.lane);
    free(selected);
    free(rank_rows);
    if (st == SP_OK && v->lane_count) qsort(v->lanes, v->lane_count, sizeof *v->lanes, cmp_lane);
    if (st == SP_OK && v->spill && fflush(v->spill) != 0) {
        snprintf(v->error, sizeof v->error, "cannot write the temporary file of the lanes: %s",
                 strerror(errno));
        st = SP_ERR_OUTPUT;
    }
    return st;
}

void view_lanes_free(view_lanes *v) {
    for (size_t i = 0; i < v->lane_count; i++) {
        free(v->lanes[i].calls);
        free(v->lanes[i].blocks);
    }
    free(v->lanes);
    if (v->spill) fclose(v->spill);
    memset(v, 0, sizeof *v);
}

void view_lane_label(const view_lane *l, char *buf, size_t len) {
    if (l->thread >= 0) snprintf(buf, len, "rank %u / thread %lld", l->rank, (long long)l->thread);
    else snprintf(buf, len, "rank %u", l->rank);
}

typedef struct open_call {
    view_call call;
    int64_t end;
} open_call;

/* The lane's calls in order: its array, or its blocks read back. */
typedef struct lane_reader {
    const view_lanes *v;
    const view_lane *l;
    view_call *buffer;
    size_t block, pos, filled;
    uint64_t taken;
} lane_reader;

static int lane_next(lane_reader *r, const view_call **out) {
    *out = NULL;
    if (r->taken == r->l->count) return SP_OK;
    if (!r->v->spill) {
        *out = &r->l->calls[r->taken++];
        return SP_OK;
    }
    if (r->pos == r->filled) {
        uint64_t left = r->l->count - r->taken;
        size_t want = left < r->v->block_calls ? (size_t)left : r->v->block_calls;
        ssize_t got = pread(fileno(r->v->spill), r->buffer, want * sizeof *r->buffer,
                            (off_t)r->l->blocks[r->block++]);
        if (got != (ssize_t)(want * sizeof *r->buffer)) return SP_ERR_OUTPUT;
        r->pos = 0;
        r->filled = want;
    }
    r->taken++;
    *out = &r->buffer[r->pos++];
    return SP_OK;
}

int view_lanes_walk(view_lanes *v, size_t lane, const view_walk_callbacks *cb, void *ctx) {
    lane_reader reader = {v, &v->lanes[lane], NULL, 0, 0, 0, 0};
    if (v->spill && !(reader.buffer = malloc(v->block_calls * sizeof *reader.buffer)))
        return SP_ERR_OUT_OF_MEMORY;
    size_t cap = 64, depth = 0;
    open_call *stack = malloc(cap * sizeof *stack);
    if (!stack) {
        free(reader.buffer);
        return SP_ERR_OUT_OF_MEMORY;
    }
    int rc = 0;
    const view_call *call;
    while (!rc && (rc = lane_next(&reader, &call)) == 0 && call) {
        int64_t start = call->start, end = call->end;
        if (end < start) end = start;
        while (depth > 0 && stack[depth - 1].end <= start && !rc) {
            depth--;
            if (cb->close) rc = cb->close(ctx, &stack[depth].call, (unsigned)depth, stack[depth].end);
        }
        if (rc) break;
        if (depth > 0 && end > stack[depth - 1].end) {
            end = stack[depth - 1].end;
            v->clamped++;
        }
        if (depth == cap) {
            open_call *grown = realloc(stack, 2 * cap * sizeof *stack);
            if (!grown) {
                rc = SP_ERR_OUT_OF_MEMORY;
                break;
            }
            stack = grown;
            cap *= 2;
        }
        if (cb->open) rc = cb->open(ctx, call, (unsigned)depth, start);
        stack[depth].call = *call;
        stack[depth].end = end;
        depth++;
    }
    if (rc == SP_ERR_OUTPUT)
        snprintf(v->error, sizeof v->error, "cannot read back the temporary file of the lanes");
    while (depth > 0 && !rc) {
        depth--;
        if (cb->close) rc = cb->close(ctx, &stack[depth].call, (unsigned)depth, stack[depth].end);
    }
    free(stack);
    free(reader.buffer);
    return rc;
}
