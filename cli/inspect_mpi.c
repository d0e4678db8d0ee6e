/*
 * inspect_mpi.c - the MPI section of scope-inspect (public results API
 * only): the first thing an HPC user asks of a profile is how much time
 * went into MPI, in which operations, and how unevenly across ranks.
 *
 * Regions whose name starts with "mpi:" are decoded the way the Python
 * package's parse_mpi_region does: the first token is mpi:<op>, the others
 * key=value pairs; only op, kind, bytes and (sendrecv) recv_bytes are used
 * here (peer, root, tag, comm and lang are summed over). Names that lack
 * keys the package requires (older files, other writers) are still shown:
 * a missing bytes= moves nothing. One row per (op, kind):
 *   calls; bytes sent, bytes received and collective bytes (below); calls
 *   whose size is unknown (bytes=-1) counted apart; total time over the
 *   selected ranks, and the per-rank
 *   totals' min / avg / max over the ranks that have any row in the file,
 *   with the imbalance of docs/FORMAT.md 7.3 (max / mean of the non-zero
 *   per-rank totals, as a percentage over 1).
 * Then per rank: time in MPI and its share of the rank's recorded span
 * (first start to last end over all its rows, when the file has it), and
 * per enclosing region (the non-MPI region whose call directly encloses
 * MPI calls, from the stored parent ids; files with per-call ids only):
 * the MPI time inside it and its share of the region's inclusive time.
 * The enclosing lookup walks each rank's calls in start order through
 * cursors and keeps only the calls still open (see enc_rank), so its
 * memory does not grow with the calls.
 *
 * Bytes: a point-to-point message appears twice in a file, in its
 * sender's name (send, isend, ...) and in its receiver's (recv, irecv:
 * the posted size), so one sum of every name's bytes counts each message
 * twice. Sent and received are therefore kept apart, each message once in
 * each: a sendrecv's bytes are its send side, its recv_bytes its receive
 * side. Waits move nothing (the package's wait names repeat the bytes of
 * the request's call). Collectives (and other kinds) are no messages of
 * the program's: their bytes (this rank's payload, per the name) go in a
 * third column, never into sent or received.
 */
#include "inspect_mpi.h"

#include "cli_common.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct mpi_op_row {
    char op[64];
    char kind[32];
    uint64_t calls;
    uint64_t unknown_bytes_calls;  /* calls of names with bytes=-1 */
    int64_t sent, received, collective; /* bytes, see the top of the file */
    int64_t total_ns;
    int64_t *rank_ns;              /* per rank of the file (index into rank_ids) */
} mpi_op_row;

typedef struct mpi_table {
    mpi_op_row *rows;
    size_t count;
    uint32_t ranks;                /* distinct ranks with rows: memory follows the rows,
                                      never the rank numbers (rank 4294967295 exists) */
    uint32_t *rank_ids;            /* [ranks] their numbers, ascending */
    int64_t *rank_mpi_ns;          /* per rank: all MPI time */
    int64_t *rank_first, *rank_last; /* recorded span per rank (0 if none) */
    bool *rank_present;
    int64_t *enclosed_ns;          /* per region: MPI time of direct children */
    int64_t *region_ns;            /* per region: inclusive total */
} mpi_table;

/* Copy the value of token `key=` of `name` into buf; false if absent. */
static bool token_value(const char *name, const char *key, char *buf, size_t size) {
    size_t klen = strlen(key);
    for (const char *p = strchr(name, ' '); p; p = strchr(p + 1, ' ')) {
        if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '=') {
            const char *v = p + 2 + klen;
            size_t n = strcspn(v, " ");
            if (n >= size) n = size - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return true;
        }
    }
    return false;
}

/* Where a name's bytes count (see the top of the file). */
typedef enum { BYTES_NONE, BYTES_SENT, BYTES_RECEIVED, BYTES_SENDRECV, BYTES_COLLECTIVE } bytes_role;

static bytes_role role_of(const char *op, const char *kind) {
    if (!strcmp(kind, "wait")) return BYTES_NONE;
    if (strcmp(kind, "point-to-point") != 0) return BYTES_COLLECTIVE;
    if (!strcmp(op, "sendrecv")) return BYTES_SENDRECV;
    /* recv, irecv, mrecv, imrecv...: the receiving side. */
    if (strstr(op, "recv") && strncmp(op, "sendrecv", 8) != 0) return BYTES_RECEIVED;
    return BYTES_SENT;
}

/* The integer of token `key=`: `absent` without the token, -1 when its
 * value is not an integer (unknown). */
static long long token_bytes(const char *name, const char *key, long long absent) {
    char text[32];
    if (!token_value(name, key, text, sizeof text)) return absent;
    char *end = NULL;
    long long b = strtoll(text, &end, 10);
    return end == text || *end ? -1 : b;
}

/* Sums and spans of accepted values held at the int64 ends instead of
 * wrapping: the reader accepts any int64 timestamps and any byte count in
 * a name, so two legal values can have a sum or a difference no int64
 * holds (issue 29 item 11). */
static int64_t add_sat(int64_t a, int64_t b) {
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

static int64_t mul_sat(int64_t bytes, uint64_t calls) {
    if (bytes <= 0 || calls == 0) return 0;
    return calls > (uint64_t)(INT64_MAX / bytes) ? INT64_MAX : bytes * (int64_t)calls;
}

/* hi - lo as an unsigned difference, 0 when hi <= lo, at most INT64_MAX. */
static int64_t span_sat(int64_t lo, int64_t hi) {
    if (hi <= lo) return 0;
    uint64_t d = (uint64_t)hi - (uint64_t)lo;
    return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

/* Add `calls` calls of name (op, kind) to r's byte columns. */
static void add_bytes(mpi_op_row *r, const char *name, const char *op, const char *kind,
                      uint64_t calls) {
    bytes_role role = role_of(op, kind);
    if (role == BYTES_NONE) return;
    long long b = token_bytes(name, "bytes", 0);
    /* A sendrecv without recv_bytes (older files: bytes were both sides)
     * cannot be split: both sides unknown. */
    long long rb = role == BYTES_SENDRECV ? token_bytes(name, "recv_bytes", -1) : 0;
    if (role == BYTES_SENDRECV && rb < 0) b = -1;
    if (b < 0 || rb < 0) {
        r->unknown_bytes_calls += calls;
        return;
    }
    int64_t total = mul_sat(b, calls);
    switch (role) {
    case BYTES_SENT: r->sent = add_sat(r->sent, total); break;
    case BYTES_RECEIVED: r->received = add_sat(r->received, total); break;
    case BYTES_SENDRECV:
        r->sent = add_sat(r->sent, total);
        r->received = add_sat(r->received, mul_sat(rb, calls));
        break;
    default: r->collective = add_sat(r->collective, total); break;
    }
}

static mpi_op_row *row_for(mpi_table *t, const char *op, const char *kind) {
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->rows[i].op, op) && !strcmp(t->rows[i].kind, kind)) return &t->rows[i];
    mpi_op_row *grown = realloc(t->rows, (t->count + 1) * sizeof *grown);
    if (!grown) return NULL;
    t->rows = grown;
    mpi_op_row *r = &t->rows[t->count];
    memset(r, 0, sizeof *r);
    r->rank_ns = calloc(t->ranks ? t->ranks : 1, sizeof *r->rank_ns);
    if (!r->rank_ns) return NULL;
    snprintf(r->op, sizeof r->op, "%s", op);
    snprintf(r->kind, sizeof r->kind, "%s", kind);
    t->count++;
    return r;
}

static void table_free(mpi_table *t) {
    for (size_t i = 0; i < t->count; i++) free(t->rows[i].rank_ns);
    free(t->rows);
    free(t->rank_ids);
    free(t->rank_mpi_ns);
    free(t->rank_first);
    free(t->rank_last);
    free(t->rank_present);
    free(t->enclosed_ns);
    free(t->region_ns);
    memset(t, 0, sizeof *t);
}

static int cmp_total(const void *a, const void *b) {
    const mpi_op_row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns < y->total_ns ? 1 : -1;
    int c = strcmp(x->op, y->op);
    return c ? c : strcmp(x->kind, y->kind);
}

static bool is_mpi_name(const char *name) { return name && strncmp(name, "mpi:", 4) == 0; }

/* ---- enclosing regions: a rank's calls in start order, open calls only ---
 *
 * Reading every call id of the file into one sorted table costs 24 bytes
 * per call. Instead each rank's rows are merged by start time through
 * sp_calls cursors (in memory or read from the file in slices), non-MPI
 * calls first among equal starts, and only the non-MPI calls still open
 * are kept (id -> end, region; dropped once a later start passes their
 * end): an MPI call's parent is open when it starts, since it encloses
 * it. A parent id that names no open call (damaged ids) adds nothing. */

typedef struct enc_call {
    int64_t start, end, id, parent;
} enc_call;

typedef struct enc_stream {
    size_t region;
    bool mpi;
    sp_calls *cursor;
    sp_call_slice slice;
    size_t pos;
    enc_call *all;            /* a row out of start order, read whole, sorted */
    size_t all_count, at;
} enc_stream;

typedef struct enc_open {
    int64_t id, end;
    size_t region;
} enc_open;

typedef struct enc_state {
    enc_stream *streams;
    size_t *heap, heap_len;   /* streams by (start, mpi) of their next call */
    enc_open *open;           /* open addressing by id; end INT64_MIN = empty */
    size_t open_cap, open_count;
    enc_open *ends;           /* min-heap by end of the same calls */
    size_t ends_len;
} enc_state;

static int cmp_enc(const void *a, const void *b) {
    const enc_call *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static bool enc_head(const enc_stream *s, enc_call *c) {
    if (s->all) {
        if (s->at == s->all_count) return false;
        *c = s->all[s->at];
        return true;
    }
    if (s->pos == s->slice.count) return false;
    size_t k = s->pos;
    *c = (enc_call){s->slice.starts[k], s->slice.ends[k],
                    s->slice.call_ids ? s->slice.call_ids[k] : -1,
                    s->slice.parent_ids ? s->slice.parent_ids[k] : -1};
    return true;
}

/* Step past the head; false at the end (or on a read error: the section
 * then shows what was read). */
static bool enc_advance(enc_stream *s) {
    if (s->all) return ++s->at < s->all_count;
    if (++s->pos < s->slice.count) return true;
    s->pos = 0;
    return sp_calls_next(s->cursor, &s->slice, NULL, 0) == SP_OK && s->slice.count;
}

static bool enc_less(const enc_state *e, size_t a, size_t b) {
    enc_call x = {0}, y = {0};
    enc_head(&e->streams[a], &x);
    enc_head(&e->streams[b], &y);
    if (x.start != y.start) return x.start < y.start;
    return !e->streams[a].mpi && e->streams[b].mpi;
}

static void enc_sift(enc_state *e, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < e->heap_len && enc_less(e, e->heap[l], e->heap[m])) m = l;
        if (r < e->heap_len && enc_less(e, e->heap[r], e->heap[m])) m = r;
        if (m == i) return;
        size_t t = e->heap[i];
        e->heap[i] = e->heap[m];
        e->heap[m] = t;
        i = m;
    }
}

static size_t enc_slot(const enc_state *e, int64_t id) {
    uint64_t h = (uint64_t)id * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h ^ (h >> 29)) & (e->open_cap - 1);
    while (e->open[i].end != INT64_MIN && e->open[i].id != id) i = (i + 1) & (e->open_cap - 1);
    return i;
}

/* Remove id's entry; later entries of its cluster move back (linear
 * probing's deletion, so no lookup stops at the hole). */
static void enc_remove(enc_state *e, int64_t id) {
    size_t i = enc_slot(e, id), mask = e->open_cap - 1;
    if (e->open[i].end == INT64_MIN) return;
    e->open[i].end = INT64_MIN;
    e->open_count--;
    for (size_t j = (i + 1) & mask; e->open[j].end != INT64_MIN; j = (j + 1) & mask) {
        enc_open moved = e->open[j];
        e->open[j].end = INT64_MIN;
        e->open[enc_slot(e, moved.id)] = moved;
    }
}

static bool enc_insert(enc_state *e, enc_open call) {
    if (2 * (e->open_count + 1) > e->open_cap) {
        size_t cap = e->open_cap ? 2 * e->open_cap : 64;
        enc_open *old = e->open, *ends = realloc(e->ends, cap * sizeof *ends);
        if (!ends) return false;
        e->ends = ends;
        if (!(e->open = malloc(cap * sizeof *e->open))) {
            e->open = old;
            return false;
        }
        for (size_t i = 0; i < cap; i++) e->open[i].end = INT64_MIN;
        size_t old_cap = e->open_cap;
        e->open_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].end != INT64_MIN) e->open[enc_slot(e, old[i].id)] = old[i];
        free(old);
    }
    size_t i = enc_slot(e, call.id);
    if (e->open[i].end != INT64_MIN) return true; /* a repeated id: the first stays */
    e->open[i] = call;
    e->open_count++;
    size_t h = e->ends_len++;
    for (e->ends[h] = call; h && e->ends[h].end < e->ends[(h - 1) / 2].end; h = (h - 1) / 2) {
        enc_open t = e->ends[h];
        e->ends[h] = e->ends[(h - 1) / 2];
        e->ends[(h - 1) / 2] = t;
    }
    return true;
}

/* Drop the open calls that ended before `now`. */
static void enc_expire(enc_state *e, int64_t now) {
    while (e->ends_len && e->ends[0].end < now) {
        enc_remove(e, e->ends[0].id);
        e->ends[0] = e->ends[--e->ends_len];
        for (size_t i = 0;;) {
            size_t l = 2 * i + 1, r = l + 1, m = i;
            if (l < e->ends_len && e->ends[l].end < e->ends[m].end) m = l;
            if (r < e->ends_len && e->ends[r].end < e->ends[m].end) m = r;
            if (m == i) break;
            enc_open t = e->ends[i];
            e->ends[i] = e->ends[m];
            e->ends[m] = t;
            i = m;
        }
    }
}

/* Open stream s over `row`; a row out of start order is read whole. */
static int enc_open_row(enc_stream *s, const sp_results *res, size_t row, size_t slice) {
    s->region = sp_results_row_region(res, row);
    s->mpi = is_mpi_name(sp_results_region_name(res, s->region));
    if (sp_calls_open(res, row, slice, &s->cursor) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    if (sp_calls_next(s->cursor, &s->slice, NULL, 0) != SP_OK || !s->slice.call_ids) {
        s->slice.count = 0; /* no ids: nothing to look up */
        return SP_OK;
    }
    if (sp_results_row_in_start_order(res, row)) return SP_OK;
    size_t n = (size_t)sp_results_row_calls(res, row);
    if (!(s->all = malloc((n ? n : 1) * sizeof *s->all))) return SP_ERR_OUT_OF_MEMORY;
    enc_call c;
    while (s->all_count < n && enc_head(s, &c)) {
        s->all[s->all_count++] = c;
        if (!enc_advance(s)) break;
    }
    qsort(s->all, s->all_count, sizeof *s->all, cmp_enc);
    return SP_OK;
}

/* One rank's rows rows[0..n): MPI time of direct children per region. */
static int enc_rank(mpi_table *t, const sp_results *res, const size_t *rows, size_t n) {
    enc_state e = {0};
    int status = SP_OK;
    e.streams = calloc(n ? n : 1, sizeof *e.streams);
    e.heap = calloc(n ? n : 1, sizeof *e.heap);
    if (!e.streams || !e.heap) status = SP_ERR_OUT_OF_MEMORY;
    size_t slice = (4u << 20) / ((n ? n : 1) * 7 * sizeof(int64_t));
    slice = slice < 64 ? 64 : slice > 65536 ? 65536 : slice;
    for (size_t i = 0; i < n && status == SP_OK; i++) {
        status = enc_open_row(&e.streams[i], res, rows[i], slice);
        enc_call c;
        if (status == SP_OK && enc_head(&e.streams[i], &c)) e.heap[e.heap_len++] = i;
    }
    for (size_t i = e.heap_len / 2; i-- > 0;) enc_sift(&e, i);
    while (status == SP_OK && e.heap_len) {
        enc_stream *s = &e.streams[e.heap[0]];
        enc_call c = {0};
        enc_head(s, &c);
        enc_expire(&e, c.start);
        if (!s->mpi) {
            if (!enc_insert(&e, (enc_open){c.id, c.end, s->region})) status = SP_ERR_OUT_OF_MEMORY;
        } else if (c.parent >= 0 && e.open_cap) {
            const enc_open *p = &e.open[enc_slot(&e, c.parent)];
            if (p->end != INT64_MIN)
                t->enclosed_ns[p->region] =
                    add_sat(t->enclosed_ns[p->region], span_sat(c.start, c.end));
        }
        if (!enc_advance(s)) e.heap[0] = e.heap[--e.heap_len];
        if (e.heap_len) enc_sift(&e, 0);
    }
    for (size_t i = 0; e.streams && i < n; i++) {
        sp_calls_close(e.streams[i].cursor);
        free(e.streams[i].all);
    }
    free(e.streams);
    free(e.heap);
    free(e.open);
    free(e.ends);
    return status;
}

static const sp_results *sort_rows_res; /* qsort has no context; single-threaded tool */

static int cmp_row_by_rank(const void *pa, const void *pb) {
    size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
    uint32_t rx = sp_results_row_rank(sort_rows_res, x), ry = sp_results_row_rank(sort_rows_res, y);
    if (rx != ry) return rx < ry ? -1 : 1;
    return (x > y) - (x < y);
}

/* enclosed_ns and region_ns (see mpi_table), rank by rank; a file without
 * call or parent ids, or without per-call data, leaves enclosed_ns all 0. */
static int enclosing_build(mpi_table *t, const sp_results *res, inspect_ranks selected) {
    size_t regions = sp_results_region_count(res), rows = sp_results_row_count(res), n = 0;
    t->enclosed_ns = calloc(regions ? regions : 1, sizeof *t->enclosed_ns);
    t->region_ns = calloc(regions ? regions : 1, sizeof *t->region_ns);
    size_t *order = calloc(rows ? rows : 1, sizeof *order);
    if (!t->enclosed_ns || !t->region_ns || !order) {
        free(order);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t row = 0; row < rows; row++) {
        uint32_t rank = sp_results_row_rank(res, row);
        if (!inspect_rank_selected(selected, rank)) continue;
        size_t region = sp_results_row_region(res, row);
        sp_row_stats st;
        if (region < regions && sp_results_row_stats(res, row, &st) == SP_OK)
            t->region_ns[region] = add_sat(t->region_ns[region], st.total);
        if (sp_results_has_events(res) && sp_results_row_calls(res, row)) order[n++] = row;
    }
    sort_rows_res = res;
    if (n) qsort(order, n, sizeof *order, cmp_row_by_rank);
    int status = SP_OK;
    for (size_t a = 0, b; a < n && status == SP_OK; a = b) {
        uint32_t rank = sp_results_row_rank(res, order[a]);
        for (b = a; b < n && sp_results_row_rank(res, order[b]) == rank;) b++;
        status = enc_rank(t, res, order + a, b - a);
    }
    free(order);
    return status;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The distinct ranks of the rows, ascending, into t->rank_ids. */
static bool rank_ids_build(mpi_table *t, const sp_results *res) {
    size_t rows = sp_results_row_count(res), n = 0;
    t->rank_ids = malloc((rows ? rows : 1) * sizeof *t->rank_ids);
    if (!t->rank_ids) return false;
    for (size_t row = 0; row < rows; row++) t->rank_ids[row] = sp_results_row_rank(res, row);
    qsort(t->rank_ids, rows, sizeof *t->rank_ids, cmp_u32);
    for (size_t i = 0; i < rows; i++)
        if (i == 0 || t->rank_ids[i] != t->rank_ids[n - 1]) t->rank_ids[n++] = t->rank_ids[i];
    t->ranks = (uint32_t)n;
    return true;
}

/* The index of `rank` in t->rank_ids (every row's rank is there). */
static uint32_t rank_index(const mpi_table *t, uint32_t rank) {
    const uint32_t *at = bsearch(&rank, t->rank_ids, t->ranks, sizeof *t->rank_ids, cmp_u32);
    return at ? (uint32_t)(at - t->rank_ids) : 0;
}

static int table_build(mpi_table *t, const sp_results *res, inspect_ranks selected) {
    memset(t, 0, sizeof *t);
    if (!rank_ids_build(t, res)) return SP_ERR_OUT_OF_MEMORY;
    size_t n = t->ranks ? t->ranks : 1;
    t->rank_mpi_ns = calloc(n, sizeof *t->rank_mpi_ns);
    t->rank_first = calloc(n, sizeof *t->rank_first);
    t->rank_last = calloc(n, sizeof *t->rank_last);
    t->rank_present = calloc(n, sizeof *t->rank_present);
    if (!t->rank_mpi_ns || !t->rank_first || !t->rank_last || !t->rank_present) {
        table_free(t);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t row = 0; row < sp_results_row_count(res); row++) {
        uint32_t file_rank = sp_results_row_rank(res, row);
        if (!inspect_rank_selected(selected, file_rank)) continue;
        uint32_t rank = rank_index(t, file_rank);
        sp_row_stats s;
        if (sp_results_row_stats(res, row, &s) != SP_OK) continue;
        if (s.count && s.end_maximum > s.start_minimum) {
            if (!t->rank_present[rank] || s.start_minimum < t->rank_first[rank])
                t->rank_first[rank] = s.start_minimum;
            if (!t->rank_present[rank] || s.end_maximum > t->rank_last[rank])
                t->rank_last[rank] = s.end_maximum;
        }
        t->rank_present[rank] = true;
        const char *name = sp_results_region_name(res, sp_results_row_region(res, row));
        if (!name || strncmp(name, "mpi:", 4) != 0) continue;
        char op[64], kind[32] = "?";
        size_t oplen = strcspn(name + 4, " ");
        if (oplen == 0 || oplen >= sizeof op) continue;
        memcpy(op, name + 4, oplen);
        op[oplen] = '\0';
        token_value(name, "kind", kind, sizeof kind);
        /* a communicator's world-rank map (FORMAT.md 4.6.1) says who is in
         * a communicator; it is no MPI call and takes no time */
        if (!strcmp(kind, "map")) continue;
        mpi_op_row *r = row_for(t, op, kind);
        if (!r) {
            table_free(t);
            return SP_ERR_OUT_OF_MEMORY;
        }
        r->calls += s.count;
        add_bytes(r, name, op, kind, s.count);
        r->total_ns = add_sat(r->total_ns, s.total);
        r->rank_ns[rank] = add_sat(r->rank_ns[rank], s.total);
        t->rank_mpi_ns[rank] = add_sat(t->rank_mpi_ns[rank], s.total);
    }
    if (t->count) qsort(t->rows, t->count, sizeof *t->rows, cmp_total);
    if (t->count && enclosing_build(t, res, selected) != SP_OK) {
        table_free(t);
        return SP_ERR_OUT_OF_MEMORY;
    }
    return SP_OK;
}

/* qsort has no context argument in C11: the MPI time per region being
 * sorted by is reachable through this file-level pointer. Tools are
 * single-threaded. */
static const int64_t *sort_enclosed;

static int cmp_enclosed(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int64_t x = sort_enclosed[a], y = sort_enclosed[b];
    if (x != y) return x > y ? -1 : 1;
    return (a > b) - (a < b);
}

/* The regions that enclose MPI calls, most MPI time first (count in *n). */
static size_t *enclosing_order(const mpi_table *t, const sp_results *res, size_t *n) {
    size_t regions = sp_results_region_count(res), m = 0;
    *n = 0;
    if (!t->enclosed_ns) return NULL;
    size_t *order = malloc((regions ? regions : 1) * sizeof *order);
    if (!order) return NULL;
    for (size_t r = 0; r < regions; r++)
        if (t->enclosed_ns[r] > 0) order[m++] = r;
    /* qsort, not insertion sort: a file can have 10^5 regions that each
     * enclose an MPI call. Ties keep the region order (index compared). */
    sort_enclosed = t->enclosed_ns;
    if (m) qsort(order, m, sizeof *order, cmp_enclosed);
    sort_enclosed = NULL;
    *n = m;
    return order;
}

/* The sums over every (op, kind) row (rank_ns left NULL). */
static mpi_op_row table_totals(const mpi_table *t) {
    mpi_op_row all;
    memset(&all, 0, sizeof all);
    for (size_t i = 0; i < t->count; i++) {
        all.calls += t->rows[i].calls;
        all.unknown_bytes_calls += t->rows[i].unknown_bytes_calls;
        all.sent = add_sat(all.sent, t->rows[i].sent);
        all.received = add_sat(all.received, t->rows[i].received);
        all.collective = add_sat(all.collective, t->rows[i].collective);
        all.total_ns = add_sat(all.total_ns, t->rows[i].total_ns);
    }
    return all;
}

static double share_pct(int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* min, avg and max of the per-rank totals over the ranks present, and the
 * imbalance in percent (docs/FORMAT.md 7.3: max / mean of the totals > 0). */
static void spread(const mpi_table *t, const int64_t *per_rank, double *min, double *avg,
                   double *max, double *imbalance_pct) {
    double lo = 0, hi = 0, sum = 0, pos_sum = 0, pos_max = 0;
    size_t present = 0, positive = 0;
    for (uint32_t r = 0; r < t->ranks; r++) {
        if (!t->rank_present[r]) continue;
        double v = (double)per_rank[r];
        lo = present == 0 || v < lo ? v : lo;
        hi = present == 0 || v > hi ? v : hi;
        sum += v;
        present++;
        if (v > 0) {
            pos_sum += v;
            pos_max = v > pos_max ? v : pos_max;
            positive++;
        }
    }
    *min = lo;
    *max = hi;
    *avg = present ? sum / (double)present : 0;
    *imbalance_pct = positive >= 2 ? (pos_max / (pos_sum / (double)positive) - 1) * 100 : 0;
}

int inspect_print_mpi(FILE *out, const sp_results *res, inspect_ranks selected) {
    mpi_table t;
    int status = table_build(&t, res, selected);
    if (status != SP_OK || t.count == 0) {
        if (status == SP_OK) table_free(&t);
        return status;
    }
    fprintf(out, "\nMPI (regions mpi:<op> ...; time in seconds; rank min/avg/max over the "
                 "ranks with rows; bytes: each message once as sent and once as received)\n");
    fprintf(out, "  %-16s %-15s %10s %13s %13s %13s  %11s %11s %11s %11s %9s\n", "operation",
            "kind", "calls", "bytes sent", "bytes recvd", "coll. bytes", "total", "rank min",
            "rank avg", "rank max", "imbalance");
    for (size_t i = 0; i < t.count; i++) {
        const mpi_op_row *r = &t.rows[i];
        double lo, avg, hi, imb;
        spread(&t, r->rank_ns, &lo, &avg, &hi, &imb);
        char op[sizeof r->op * 4], kind[sizeof r->kind * 4];
        fprintf(out,
                "  %-16s %-15s %10llu %13lld %13lld %13lld%s %11.6f %11.6f %11.6f %11.6f "
                "%8.1f%%\n",
                cli_text(r->op, op, sizeof op), cli_text(r->kind, kind, sizeof kind),
                (unsigned long long)r->calls, (long long)r->sent, (long long)r->received,
                (long long)r->collective, r->unknown_bytes_calls ? "*" : " ", r->total_ns / 1e9,
                lo / 1e9, avg / 1e9, hi / 1e9, imb);
    }
    mpi_op_row all = table_totals(&t);
    double lo, avg, hi, imb;
    spread(&t, t.rank_mpi_ns, &lo, &avg, &hi, &imb);
    fprintf(out,
            "  %-16s %-15s %10llu %13lld %13lld %13lld  %11.6f %11.6f %11.6f %11.6f %8.1f%%\n",
            "all MPI", "", (unsigned long long)all.calls, (long long)all.sent,
            (long long)all.received, (long long)all.collective, all.total_ns / 1e9, lo / 1e9,
            avg / 1e9, hi / 1e9, imb);
    for (uint32_t rank = 0; rank < t.ranks; rank++) {
        if (!t.rank_present[rank]) continue;
        int64_t span = span_sat(t.rank_first[rank], t.rank_last[rank]);
        fprintf(out, "  rank %u: %.6f s in MPI", t.rank_ids[rank], t.rank_mpi_ns[rank] / 1e9);
        if (span > 0)
            fprintf(out, " of %.6f s recorded (%.1f%%)", span / 1e9,
                    100.0 * (double)t.rank_mpi_ns[rank] / (double)span);
        fputc('\n', out);
    }
    size_t encl_n = 0;
    size_t *encl = enclosing_order(&t, res, &encl_n);
    if (encl_n) fprintf(out, "  MPI inside enclosing regions (direct children; seconds):\n");
    char name[512];
    for (size_t i = 0; i < encl_n; i++)
        fprintf(out, "    %-40s %11.6f of %11.6f (%.1f%%)\n",
                cli_text(sp_results_region_name(res, encl[i]), name, sizeof name),
                t.enclosed_ns[encl[i]] / 1e9,
                t.region_ns[encl[i]] / 1e9,
                share_pct(t.enclosed_ns[encl[i]], t.region_ns[encl[i]]));
    free(encl);
    for (size_t i = 0; i < t.count; i++)
        if (t.rows[i].unknown_bytes_calls) {
            fprintf(out, "  * some calls of this operation have an unknown size (bytes=-1): "
                         "not in the byte sums\n");
            break;
        }
    table_free(&t);
    return SP_OK;
}

int inspect_json_mpi(FILE *out, const sp_results *res, inspect_ranks selected) {
    mpi_table t;
    int status = table_build(&t, res, selected);
    if (status != SP_OK) return status;
    fputs("  \"mpi\": {\"operations\": [", out);
    for (size_t i = 0; i < t.count; i++) {
        const mpi_op_row *r = &t.rows[i];
        double lo, avg, hi, imb;
        spread(&t, r->rank_ns, &lo, &avg, &hi, &imb);
        fputs(i ? ",\n    {\"op\": " : "\n    {\"op\": ", out);
        cli_json_string(out, r->op);
        fputs(", \"kind\": ", out);
        cli_json_string(out, r->kind);
        fprintf(out,
                ", \"calls\": %llu, \"bytes_sent\": %lld, \"bytes_received\": %lld, "
                "\"bytes_collective\": %lld, \"calls_unknown_bytes\": %llu, "
                "\"total_duration\": %.9g, \"rank_min_duration\": %.9g, "
                "\"rank_avg_duration\": %.9g, \"rank_max_duration\": %.9g, "
                "\"rank_imbalance_pct\": %.6g}",
                (unsigned long long)r->calls, (long long)r->sent, (long long)r->received,
                (long long)r->collective, (unsigned long long)r->unknown_bytes_calls,
                r->total_ns / 1e9, lo / 1e9, avg / 1e9, hi / 1e9, imb);
    }
    mpi_op_row all = table_totals(&t);
    fprintf(out,
            "%s\"totals\": {\"calls\": %llu, \"bytes_sent\": %lld, \"bytes_received\": %lld, "
            "\"bytes_collective\": %lld, \"calls_unknown_bytes\": %llu, "
            "\"total_duration\": %.9g}, \"ranks\": [",
            t.count ? "\n  ], " : "], ", (unsigned long long)all.calls, (long long)all.sent,
            (long long)all.received, (long long)all.collective,
            (unsigned long long)all.unknown_bytes_calls, all.total_ns / 1e9);
    bool first = true;
    for (uint32_t rank = 0; rank < t.ranks; rank++) {
        if (!t.rank_present[rank]) continue;
        int64_t span = span_sat(t.rank_first[rank], t.rank_last[rank]);
        fprintf(out, "%s{\"rank\": %u, \"mpi_duration\": %.9g, \"recorded_span\": %.9g}",
                first ? "\n    " : ",\n    ", t.rank_ids[rank], t.rank_mpi_ns[rank] / 1e9,
                span > 0 ? span / 1e9 : 0.0);
        first = false;
    }
    fputs(first ? "], \"enclosing\": [" : "\n  ], \"enclosing\": [", out);
    size_t encl_n = 0;
    size_t *encl = enclosing_order(&t, res, &encl_n);
    for (size_t i = 0; i < encl_n; i++) {
        fputs(i ? ",\n    {\"region\": " : "\n    {\"region\": ", out);
        cli_json_string(out, sp_results_region_name(res, encl[i]));
        fprintf(out, ", \"mpi_duration\": %.9g, \"inclusive_duration\": %.9g, \"share_pct\": %.6g}",
                t.enclosed_ns[encl[i]] / 1e9, t.region_ns[encl[i]] / 1e9,
                share_pct(t.enclosed_ns[encl[i]], t.region_ns[encl[i]]));
    }
    free(encl);
    fputs(encl_n ? "\n  ]},\n" : "]},\n", out);
    table_free(&t);
    return SP_OK;
}
