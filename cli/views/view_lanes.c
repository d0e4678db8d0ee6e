/*
 * view_lanes.c - see view_lanes.h.
 *
 * Building is one streamed pass per rank: the rank's selected rows are
 * merged by (start ascending, end descending, row, index in the row),
 * which puts a parent before the children that start with it, and each
 * call is appended to its lane, so every lane comes out in that order.
 * Nesting then comes from one stack walk per lane: under the stored
 * parent when the file has ids (the tree scope-inspect shows), by
 * containment per lane (FORMAT.md §5) when it has none.
 *
 * A call's track is chosen while merging, from a small table of the
 * rank's calls still open (call id -> thread, track, end; calls that
 * ended are swept out whenever the table would grow): a child goes to its
 * parent's track, a stored root to the first track of its thread that is
 * free at its start. The table holds what is open at once, never every
 * call.
 */
#include "view_lanes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NO_SLOT UINT32_MAX

static uint64_t hash64(uint64_t x) {
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ULL;
    x ^= x >> 27;
    return x;
}

static uint64_t lane_hash(uint32_t rank, int64_t thread, uint32_t track) {
    return hash64(hash64((uint64_t)rank << 32 | track) ^ (uint64_t)thread);
}

/* (rank, thread, track) -> lane number: the slots hold lane numbers, the
 * key is read from the lane itself (4 bytes a slot, nothing copied). */
typedef struct lane_map {
    uint32_t *slots;
    size_t cap;
} lane_map;

static bool lane_is(const view_lane *l, uint32_t rank, int64_t thread, uint32_t track) {
    return l->rank == rank && l->thread == thread && l->track == track;
}

/* The slot of the key: its lane's, or the empty slot where it belongs. */
static size_t map_slot(const view_lanes *v, const lane_map *m, uint32_t rank, int64_t thread,
                       uint32_t track) {
    size_t j = lane_hash(rank, thread, track) & (m->cap - 1);
    while (m->slots[j] != NO_SLOT && !lane_is(&v->lanes[m->slots[j]], rank, thread, track))
        j = (j + 1) & (m->cap - 1);
    return j;
}

/* The lane records and the map are the memory that grows with the lanes:
 * past half the budget the build stops with a message instead. */
static int lanes_over_budget(view_lanes *v, size_t lanes_cap, size_t map_cap) {
    size_t bytes = lanes_cap * sizeof(view_lane) + map_cap * sizeof(uint32_t);
    /* at least 1 MiB, so a tiny budget (tests spill with 1K) still has lanes */
    if (bytes <= v->budget / 2 || bytes <= ((size_t)1 << 20)) return SP_OK;
    /* Records grow by doubling: up to 2 lane records and 4 map slots a
     * lane, twice that in budget (the other half is for calls). */
    size_t per_lane = 2 * (2 * sizeof(view_lane) + 4 * sizeof(uint32_t));
    snprintf(v->error, sizeof v->error,
             "%s: more than %zu lanes (rank, thread): their records pass half of the views' "
             "memory budget of %zu bytes; set SCOPE_PROFILER_VIEW_MEMORY higher (up to %zu "
             "bytes a lane) or select fewer ranks (--ranks)",
             sp_results_path(v->res), v->lane_count, v->budget, per_lane);
    return SP_ERR_OUT_OF_MEMORY;
}

static int map_grow(view_lanes *v, lane_map *m) {
    size_t cap = m->cap ? m->cap * 2 : 64;
    if (lanes_over_budget(v, v->lanes_cap, cap) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    uint32_t *slots = malloc(cap * sizeof *slots);
    if (!slots) return SP_ERR_OUT_OF_MEMORY;
    memset(slots, 0xff, cap * sizeof *slots);
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    for (size_t i = 0; i < v->lane_count; i++) {
        const view_lane *l = &v->lanes[i];
        m->slots[map_slot(v, m, l->rank, l->thread, l->track)] = (uint32_t)i;
    }
    return SP_OK;
}

/* The lane of (rank, thread, track), or NULL when it has none yet. */
static view_lane *lane_find(view_lanes *v, const lane_map *m, uint32_t rank, int64_t thread,
                            uint32_t track) {
    if (!m->cap) return NULL;
    uint32_t n = m->slots[map_slot(v, m, rank, thread, track)];
    return n == NO_SLOT ? NULL : &v->lanes[n];
}

static int cmp_lane(const void *pa, const void *pb) {
    const view_lane *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    return (a->track > b->track) - (a->track < b->track);
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

unsigned view_duration_bin(uint64_t d) {
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
    int64_t id = sl->call_ids ? sl->call_ids[k] : -1;
    /* A parent counts only beside a call id: without both there is no
     * stored tree, and containment decides. */
    int64_t parent = sl->parent_ids && id >= 0 ? sl->parent_ids[k] : VIEW_PARENT_UNKNOWN;
    if (parent < -1) parent = VIEW_PARENT_UNKNOWN;
    s->head = (view_call){sl->starts[k], sl->ends[k], id, parent, s->row, 0};
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

/* Write a lane's buffered calls as one block of the temporary file and
 * give the buffer back (a lane of a rank being merged gets a new one, as
 * small as its first calls need). */
static int lane_flush(view_lanes *v, view_lane *l) {
    if (l->pending > 0) {
        view_block *grown = realloc(l->blocks, (l->block_count + 1) * sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        l->blocks = grown;
        if (fseeko(v->spill, 0, SEEK_END) != 0) return SP_ERR_OUTPUT;
        off_t at = ftello(v->spill);
        if (at < 0 || fwrite(l->calls, sizeof *l->calls, l->pending, v->spill) != l->pending) {
            snprintf(v->error, sizeof v->error,
                     "cannot write the temporary file of the lanes: %s", strerror(errno));
            return SP_ERR_OUTPUT;
        }
        l->blocks[l->block_count++] = (view_block){(uint64_t)at, l->pending};
        l->pending = 0;
    }
    free(l->calls);
    l->calls = NULL;
    v->buffered -= l->capacity;
    l->capacity = 0;
    return SP_OK;
}

/* Every buffer of the lanes from first_lane on written out. */
static int lanes_flush(view_lanes *v, size_t first_lane) {
    for (size_t i = first_lane; i < v->lane_count; i++) {
        int st = v->lanes[i].capacity ? lane_flush(v, &v->lanes[i]) : SP_OK;
        if (st != SP_OK) return st;
    }
    return SP_OK;
}

static int lane_append(view_lanes *v, view_lane *l, const view_call *c, size_t first_lane) {
    size_t used = v->spill ? l->pending : (size_t)l->count;
    if (v->spill && used == v->block_calls) {
        int st = lane_flush(v, l);
        if (st != SP_OK) return st;
        used = 0;
    }
    if (used == l->capacity) {
        /* Buffers start small and double: a lane of one call costs one
         * call, not a block (a million threads were 4 GB). */
        size_t cap = l->capacity ? l->capacity * 2 : 1;
        if (v->spill && cap > v->block_calls) cap = v->block_calls;
        view_call *grown = realloc(l->calls, cap * sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        l->calls = grown;
        if (v->spill) v->buffered += cap - l->capacity;
        l->capacity = cap;
    }
    l->calls[used] = *c;
    if (l->count == 0 || c->start < l->start_min) l->start_min = c->start;
    if (l->count == 0 || c->end > l->end_max) l->end_max = c->end;
    l->count++;
    if (l->count > v->max_lane_calls) v->max_lane_calls = (size_t)l->count;
    if (!v->spill) return SP_OK;
    l->pending++;
    /* All buffers together stay within a quarter of the budget. */
    if (v->buffered * sizeof(view_call) > v->budget / 4) return lanes_flush(v, first_lane);
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

/* The lane of (rank, thread, track), added when new. */
static int lane_of(view_lanes *v, lane_map *map, uint32_t rank, int64_t thread, uint32_t track,
                   view_lane **out) {
    if ((v->lane_count + 1) * 2 >= map->cap && map_grow(v, map) != SP_OK)
        return SP_ERR_OUT_OF_MEMORY;
    size_t j = map_slot(v, map, rank, thread, track);
    if (map->slots[j] == NO_SLOT) {
        if (v->lane_count == v->lanes_cap) {
            size_t cap = v->lanes_cap ? v->lanes_cap * 2 : 16;
            if (lanes_over_budget(v, cap, map->cap) != SP_OK || cap > NO_SLOT)
                return SP_ERR_OUT_OF_MEMORY;
            view_lane *grown = realloc(v->lanes, cap * sizeof *grown);
            if (!grown) return SP_ERR_OUT_OF_MEMORY;
            v->lanes = grown;
            v->lanes_cap = cap;
        }
        v->lanes[v->lane_count] = (view_lane){.rank = rank, .thread = thread, .track = track};
        map->slots[j] = (uint32_t)v->lane_count++;
    }
    *out = &v->lanes[map->slots[j]];
    return SP_OK;
}

/* ---- tracks: the rank's open calls by id ----------------------------------- */

typedef struct open_entry {
    int64_t id; /* -1 = empty slot */
    int64_t end;
    int64_t thread;
    uint32_t track;
} open_entry;

typedef struct open_table {
    open_entry *slots;
    size_t cap, used;
} open_table;

static size_t open_slot(const open_table *t, int64_t id) {
    size_t j = hash64((uint64_t)id) & (t->cap - 1);
    while (t->slots[j].id >= 0 && t->slots[j].id != id) j = (j + 1) & (t->cap - 1);
    return j;
}

static const open_entry *open_find(const open_table *t, int64_t id) {
    if (!t->cap || id < 0) return NULL;
    const open_entry *e = &t->slots[open_slot(t, id)];
    return e->id == id ? e : NULL;
}

/* Add a call; when the table fills up, the calls that ended before `now`
 * (no later call can be their child) are left out of the new table, so
 * it grows with the calls open at once, not with the calls seen. */
static int open_put(open_table *t, int64_t now, const open_entry *e) {
    if ((t->used + 1) * 2 > t->cap) {
        size_t live = 0;
        for (size_t i = 0; i < t->cap; i++) live += t->slots[i].id >= 0 && t->slots[i].end >= now;
        size_t cap = 64;
        while (cap < 4 * (live + 1)) cap *= 2;
        open_table grown = {malloc(cap * sizeof *grown.slots), cap, 0};
        if (!grown.slots) return SP_ERR_OUT_OF_MEMORY;
        for (size_t i = 0; i < cap; i++) grown.slots[i].id = -1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].id >= 0 && t->slots[i].end >= now) {
                grown.slots[open_slot(&grown, t->slots[i].id)] = t->slots[i];
                grown.used++;
            }
        free(t->slots);
        *t = grown;
    }
    size_t j = open_slot(t, e->id);
    if (t->slots[j].id < 0) t->used++;
    t->slots[j] = *e;
    return SP_OK;
}

/* The track of call c of thread `thread` (see the file's comment). */
static uint32_t call_track(view_lanes *v, const lane_map *map, const open_table *open,
                           uint32_t rank, int64_t thread, const view_call *c) {
    if (c->parent_id == VIEW_PARENT_UNKNOWN) return 0;
    const open_entry *parent = open_find(open, c->parent_id);
    if (parent && parent->thread == thread) return parent->track;
    /* A parent not in the selection (--include) or not in the file: the
     * call nests by containment on the thread's first track. */
    if (c->parent_id >= 0 && !parent) return 0;
    /* A root (stored -1, or its parent on another thread): the first
     * track free at its start. */
    for (uint32_t k = 0; k < VIEW_MAX_TRACKS; k++) {
        const view_lane *l = lane_find(v, map, rank, thread, k);
        if (!l || l->count == 0 || l->end_max <= c->start) return k;
    }
    return 0;
}

/* Merge the rows rows[0..n) (one rank) into their lanes. */
static int merge_rank(view_lanes *v, const uint32_t *rows, size_t n, size_t slice_calls,
                      lane_map *map) {
    row_stream *streams = calloc(n, sizeof *streams);
    row_stream **heap = calloc(n, sizeof *heap);
    int st = streams && heap ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    size_t live = 0, first_lane = v->lane_count;
    open_table open = {0};
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
    uint32_t rank = n ? sp_results_row_rank(v->res, rows[0]) : 0;
    while (st == SP_OK && live > 0) {
        row_stream *s = heap[0];
        const view_call *c = &s->head;
        view_lane *lane;
        uint32_t track = call_track(v, map, &open, rank, s->head_thread, c);
        st = lane_of(v, map, rank, s->head_thread, track, &lane);
        if (st == SP_OK) st = lane_append(v, lane, c, first_lane);
        if (st == SP_OK && c->parent_id != VIEW_PARENT_UNKNOWN)
            st = open_put(&open, c->start,
                          &(open_entry){c->call_id, c->end, s->head_thread, track});
        if (st != SP_OK) break;
        if (c->call_id >= 0 && c->parent_id >= 0) v->parents = true;
        if (v->call_count == 0 || c->end > v->end_max) v->end_max = c->end;
        v->duration_bins[view_duration_bin(view_span(c->start, c->end))]++;
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
    free(open.slots);
    /* A rank done: its lanes' last partial blocks go to the file. */
    if (st == SP_OK && v->spill) st = lanes_flush(v, first_lane);
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
    v->budget = budget;
    v->block_calls = budget / sizeof(view_call) / 64;
    if (v->block_calls < 16) v->block_calls = 16;
    if (v->block_calls > 4096) v->block_calls = 4096;
    int st = SP_OK;
    if (calls > budget / sizeof(view_call) && !(v->spill = spill_file(v))) st = SP_ERR_OUTPUT;
    lane_map map = {0};
    for (size_t first = 0; first < n && st == SP_OK;) {
        size_t end = first;
        for (; end < n && selected[end] >> 32 == selected[first] >> 32; end++)
            rank_rows[end - first] = (uint32_t)selected[end];
        /* a quarter of the budget for the rows' slices (48 bytes a call) */
        size_t slice = budget / 4 / 48 / (end - first);
        if (slice < 16) slice = 16;
        if (slice > 65536) slice = 65536;
        st = merge_rank(v, rank_rows, end - first, slice, &map);
        first = end;
    }
    free(map.slots);
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
    char tree[24] = "";
    if (l->track > 0) snprintf(tree, sizeof tree, " / tree %u", l->track + 1);
    if (l->thread >= 0)
        snprintf(buf, len, "rank %u / thread %lld%s", l->rank, (long long)l->thread, tree);
    else snprintf(buf, len, "rank %u%s", l->rank, tree);
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
        if (r->block == r->l->block_count) return SP_ERR_OUTPUT;
        view_block b = r->l->blocks[r->block++];
        if (b.count == 0 || b.count > r->v->block_calls) return SP_ERR_OUTPUT;
        size_t bytes = (size_t)b.count * sizeof *r->buffer;
        if (pread(fileno(r->v->spill), r->buffer, bytes, (off_t)b.offset) != (ssize_t)bytes)
            return SP_ERR_OUTPUT;
        r->pos = 0;
        r->filled = (size_t)b.count;
    }
    r->taken++;
    *out = &r->buffer[r->pos++];
    return SP_OK;
}

typedef struct walk_state {
    view_lanes *v;
    const view_walk_callbacks *cb;
    void *ctx;
    open_call *stack;
    size_t depth, cap;
} walk_state;

/* Close the innermost open call at `at` (its end, or earlier when cut). */
static int walk_close(walk_state *w, int64_t at) {
    w->depth--;
    open_call *o = &w->stack[w->depth];
    if (at < o->end) {
        o->end = at;
        w->v->clamped++;
    }
    return w->cb->close ? w->cb->close(w->ctx, &o->call, (unsigned)w->depth, o->end) : 0;
}

/* Make the top of the stack the parent of a call starting at `start`:
 * close what ended; with a stored parent that is open, also cut what is
 * open above it (siblings overlapping: damaged data). What remains on top
 * is the parent (stored, or by containment when none is stored or it is
 * not open on this lane). */
static int walk_settle(walk_state *w, const view_call *call, int64_t start) {
    int64_t parent = call->parent_id;
    int rc = 0;
    while (!rc && w->depth > 0 && w->stack[w->depth - 1].end <= start &&
           !(parent >= 0 && w->stack[w->depth - 1].call.call_id == parent))
        rc = walk_close(w, w->stack[w->depth - 1].end);
    if (rc || parent < 0 || w->depth == 0 || w->stack[w->depth - 1].call.call_id == parent)
        return rc;
    size_t at = w->depth - 1;
    while (at > 0 && w->stack[at - 1].call.call_id != parent) at--;
    if (at == 0) return 0; /* not open here: containment */
    while (!rc && w->depth > at) rc = walk_close(w, start);
    return rc;
}

int view_lanes_walk(view_lanes *v, size_t lane, const view_walk_callbacks *cb, void *ctx) {
    const view_lane *l = &v->lanes[lane];
    lane_reader reader = {v, l, NULL, 0, 0, 0, 0};
    size_t buffer_calls = v->block_calls < l->count ? v->block_calls : (size_t)l->count;
    if (v->spill && !(reader.buffer = malloc((buffer_calls + 1) * sizeof *reader.buffer)))
        return SP_ERR_OUT_OF_MEMORY;
    walk_state w = {v, cb, ctx, malloc(16 * sizeof(open_call)), 0, 16};
    if (!w.stack) {
        free(reader.buffer);
        return SP_ERR_OUT_OF_MEMORY;
    }
    int rc = 0;
    const view_call *call;
    while (!rc && (rc = lane_next(&reader, &call)) == 0 && call) {
        int64_t start = call->start, end = call->end;
        if (end < start) end = start;
        if ((rc = walk_settle(&w, call, start)) != 0) break;
        if (w.depth > 0 && end > w.stack[w.depth - 1].end) {
            end = w.stack[w.depth - 1].end;
            v->clamped++;
        }
        if (w.depth == w.cap) {
            open_call *grown = realloc(w.stack, 2 * w.cap * sizeof *grown);
            if (!grown) {
                rc = SP_ERR_OUT_OF_MEMORY;
                break;
            }
            w.stack = grown;
            w.cap *= 2;
        }
        if (cb->open) rc = cb->open(ctx, call, (unsigned)w.depth, start);
        w.stack[w.depth].call = *call;
        w.stack[w.depth].end = end;
        w.depth++;
    }
    if (rc == SP_ERR_OUTPUT)
        snprintf(v->error, sizeof v->error, "cannot read back the temporary file of the lanes");
    while (w.depth > 0 && !rc) rc = walk_close(&w, w.stack[w.depth - 1].end);
    free(w.stack);
    free(reader.buffer);
    return rc;
}
