/*
 * merge_sweep.c - pass 1 of sp_merge_files and the time-span check it
 * enables. Per rank, a k-way merge of all that rank's rows in start order
 * with one stack of open calls per lane rebuilds the nesting (FORMAT.md
 * 7.6), once with the inputs' main lanes joint and once with every input's
 * lanes its own: it gives the exclusive totals of both layouts, finds the
 * new parent of each root call enclosed in its lane (written to the
 * scratch file), decides which layout the rank gets (merge_lanes.c),
 * validates every call, tells merge_ids.c each numbered call and the
 * parents its lane's stack cannot prove, and recomputes the rows'
 * statistics. The span check then uses
 * those statistics to refuse inputs that were not recorded together.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "merge_internal.h"

/* Pass-1 read buffers of one rank share this budget (bytes). */
#define SPM_SWEEP_BUDGET_BYTES ((size_t)24 << 20)
#define SPM_SWEEP_MIN_BLOCK 1024
/* ... and a block is at most this many events: the columns' chunks are
 * decoded ahead into their streams' rings (merge_chunks.c), and a small
 * block copied out of them stays in the cache while the sweep visits its
 * calls in turn with the other rows' (whole 64K-event blocks of six rows
 * and seven columns, 21 MiB, were read back from memory). */
#define SPM_SWEEP_MAX_BLOCK 8192
/* The timestamps the nesting rebuild takes (scope-check's limit). */
#define SPM_TIME_LIMIT (INT64_MAX / 4)

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
int spm_check_spans(const spm_merge *m, spi_error *err) {
    input_span *spans = spi_calloc(m->input_count, sizeof *spans);
    if (!spans) return spm_oom(err);
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

/* Two layouts of a rank's lanes are nested at once, in one pass, because
 * which one is written is known only at the end (merge_lanes.c):
 *   JOINT  the main lanes of all inputs (a driver's calls without a thread,
 *          a native file's thread 0) are one lane, so that the native calls
 *          a driver call encloses nest under it;
 *   ALONE  every input keeps its own lanes (unrelated runs: nothing nests
 *          across inputs).
 * Lanes other than main lanes are the same in both, so they are nested
 * once for both layouts. */
enum { MODE_JOINT = 1, MODE_ALONE = 2, MODE_BOTH = 3 };

typedef struct open_call {
    int64_t end2;              /* doubled end, as FORMAT.md 7.6 step 3 */
    int64_t duration;
    int64_t child;             /* sum of direct children's durations */
    size_t slot;
    size_t order;              /* id order of its input */
    int64_t call_id;           /* raw id, -1 if none */
} open_call;

/* A lane: calls of one input's thread, one task id, or (JOINT) the main
 * lanes of every input. `input` is -1 for lanes shared by inputs. */
typedef struct lane {
    int64_t input, which;
    unsigned modes;
    open_call *stack;
    size_t depth, capacity;
} lane;

typedef struct sweep_row {
    spm_cursor cur;
    size_t input, slot, at;
    size_t ordinal;            /* the row's place among its input's rows on the rank */
    int64_t previous_start;
    bool started;
    spm_adoption *adopt;       /* per block event: new parents, zero = none */
    size_t adopt_capacity;
    bool adopt_dirty;
    /* Memos of the last lookups, since a row's calls mostly repeat their
     * thread and lanes: the thread id last found in the table, and per
     * kind of lane (task, own, joint) the key and index last used. */
    bool thread_checked;
    int64_t checked_thread;
    bool lane_known[3];
    int64_t lane_key[3];
    size_t lane_index[3];
    /* Welford statistics for inputs that stored none */
    spi_stats stats;
    uint64_t seen;
    double mean, m2;
} sweep_row;

typedef struct sweep {
    spm_merge *m;
    size_t rank;               /* rank index */
    sweep_row *rows;
    size_t row_count;
    struct heap_entry *heap;
    size_t heap_size;
    lane *lanes;
    size_t lane_count;
    bool nested;               /* rows in start order, times within +-2^62 ns */
    unsigned failed;           /* MODE_* whose lanes do not nest as stored */
    bool parent_on_stack;      /* the visited call's stored parent is the
                                  innermost open call of one of its lanes */
    char alone_problem[512];   /* why ALONE failed: an input's own lanes */
} sweep;

#define MAIN_LANE INT64_MIN

/* A row in the heap with the key of its next call copied in, so that a
 * comparison reads two adjacent entries instead of two rows' cursors (the
 * heap orders every call of the rank: its compares are pass 1's hottest
 * loop). */
typedef struct heap_entry {
    int64_t start, end;
    size_t order;              /* id order of the row's input */
    size_t row;                /* index in sweep.rows */
} heap_entry;

static heap_entry head_of(const sweep *s, size_t row) {
    const sweep_row *r = &s->rows[row];
    int64_t start = r->cur.col[SPM_START][r->at];
    /* wrapping: visit() refuses the call if its end leaves int64 */
    int64_t end = (int64_t)((uint64_t)start + (uint64_t)r->cur.col[SPM_DURATION][r->at]);
    return (heap_entry){start, end, s->m->order_of[r->input], row};
}

/* Start ascending; on equal starts the later end first (parents before
 * children, FORMAT.md 7.6 step 2); then driver first, then file order. */
static bool heap_less(const heap_entry *x, const heap_entry *y) {
    if (x->start != y->start) return x->start < y->start;
    if (x->end != y->end) return x->end > y->end;
    if (x->order != y->order) return x->order < y->order;
    return x->row < y->row;
}

/* Entry i sifted down: the smaller child moves up into the hole until
 * the entry fits, one copy a level instead of a swap. heap_less is a total
 * order (the row breaks ties), so the calls come out in the same order
 * whatever the heap's inner arrangement. */
static void heap_down(sweep *s, size_t i) {
    heap_entry *h = s->heap;
    size_t n = s->heap_size;
    heap_entry x = h[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n) break;
        size_t best = l + 1 < n && heap_less(&h[l + 1], &h[l]) ? l + 1 : l;
        if (!heap_less(&h[best], &x)) break;
        h[i] = h[best];
        i = best;
    }
    h[i] = x;
}

static int flush_adoptions(sweep *s, sweep_row *r, spi_error *err) {
    if (!r->adopt_dirty) return SP_OK;
    spm_merge *m = s->m;
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
        spm_report(s->m, r->cur.len);
        status = spm_cursor_fill(&r->cur, err);
    }
    r->at = 0;
    *more = status == SP_OK && r->cur.len > 0;
    if (*more && r->adopt) memset(r->adopt, 0, r->cur.len * sizeof *r->adopt);
    return status;
}

static lane *find_lane(sweep *s, int64_t input, int64_t which, unsigned modes, spi_error *err,
                       int *status) {
    for (size_t i = 0; i < s->lane_count; i++)
        if (s->lanes[i].input == input && s->lanes[i].which == which) return &s->lanes[i];
    lane *grown = spi_reallocarray(s->lanes, s->lane_count + 1, sizeof *grown);
    if (!grown) {
        *status = spm_oom(err);
        return NULL;
    }
    s->lanes = grown;
    lane *l = &s->lanes[s->lane_count++];
    *l = (lane){.input = input, .which = which, .modes = modes};
    return l;
}

enum { LANE_TASK, LANE_OWN, LANE_JOINT };

/* find_lane through the row's memo of `kind` (inlined: up to two a call). */
static inline __attribute__((always_inline)) lane *
row_lane(sweep *s, sweep_row *r, int kind, int64_t input, int64_t which, unsigned modes,
         spi_error *err, int *status) {
    if (r->lane_known[kind] && r->lane_key[kind] == which) return &s->lanes[r->lane_index[kind]];
    lane *l = find_lane(s, input, which, modes, err, status);
    if (l) {
        r->lane_known[kind] = true;
        r->lane_key[kind] = which;
        r->lane_index[kind] = (size_t)(l - s->lanes);
    }
    return l;
}

static void close_call(sweep *s, const lane *l, const open_call *c) {
    if (l->modes & MODE_JOINT) s->m->slot_exclusive[c->slot] += c->duration - c->child;
    if (l->modes & MODE_ALONE) s->m->slot_exclusive_alone[c->slot] += c->duration - c->child;
}

/* The lane layouts in `modes` cannot store this rank's nesting. For ALONE
 * that is the input's own doing; the first reason is kept for the refusal. */
__attribute__((format(printf, 4, 5), cold)) static void
fail_modes(sweep *s, unsigned modes, const sweep_row *r, const char *format, ...) {
    if ((modes & MODE_ALONE) && !(s->failed & MODE_ALONE)) {
        /* The row is looked up here, not by every call that might fail. */
        const spm_input *in = &s->m->inputs[r->input];
        const spi_row *row = &in->prof.rows[r->cur.row];
        char what[256];
        va_list ap;
        va_start(ap, format);
        vsnprintf(what, sizeof what, format, ap);
        va_end(ap);
        snprintf(s->alone_problem, sizeof s->alone_problem, "%s: rank %u region %s: %s",
                 in->path, row->rank,
                 row->region < in->prof.name_count ? in->prof.names[row->region] : "?", what);
    }
    s->failed |= modes;
}

/* The scratch record of the row's current call, allocated on first use. */
static spm_adoption *adoption_of(sweep_row *r) {
    if (!r->adopt) {
        r->adopt_capacity = r->cur.cap ? r->cur.cap : (size_t)r->cur.count;
        r->adopt = spi_calloc(r->adopt_capacity, sizeof *r->adopt);
        if (!r->adopt) return NULL;
    }
    r->adopt_dirty = true;
    return &r->adopt[r->at];
}

static int remember_own_id(sweep *s, sweep_row *r, int64_t id, spi_error *err) {
    (void)s;
    spm_adoption *a = adoption_of(r);
    if (!a) return spm_oom(err);
    a->own_id = id + 1;
    return SP_OK;
}

/* One call of the current row into lane l (FORMAT.md 7.6 with a stack per
 * lane): close what ended before it, check that the innermost open call is
 * what the call stores as its parent (or adopt it when the call stores
 * none), then open the call. Inlined: a call on a main lane comes here
 * twice (its own lane and the joint one), and the out-of-line call with
 * nine arguments was a fifth of it (callgrind). */
static inline __attribute__((always_inline)) int nest_call(sweep *s, sweep_row *r, lane *l,
                                                            int64_t start2, int64_t end2,
                                                            int64_t duration, int64_t call,
                                                            int64_t parent_id, spi_error *err) {
    spm_merge *m = s->m;
    while (l->depth && l->stack[l->depth - 1].end2 <= start2)
        close_call(s, l, &l->stack[--l->depth]);
    open_call *top = l->depth ? &l->stack[l->depth - 1] : NULL;
    size_t order = m->order_of[r->input];
    if (top && end2 > top->end2)
        fail_modes(s, l->modes, r,
                   "the call starting at %lld ns overlaps an enclosing call of its lane "
                   "without nesting in it",
                   (long long)(start2 / 2));
    /* The stored parent is this open call and the call ends inside it:
     * the parent exists and encloses the call (merge_ids.c need not check). */
    if (top && parent_id >= 0 && top->order == order && top->call_id == parent_id &&
        end2 <= top->end2)
        s->parent_on_stack = true;
    if (top && parent_id >= 0 && (top->order != order || top->call_id != parent_id))
        fail_modes(s, l->modes, r,
                   "call id %lld stores parent %lld, but the innermost call of its lane "
                   "that encloses it is %s %lld",
                   (long long)call, (long long)parent_id,
                   top->order == order ? "call id" : "another input's call", (long long)top->call_id);
    if (top && top->order != order) {
        /* Two inputs' calls nest: their main lanes belong together. Every
         * native call inside a driver call comes here: the enclosing
         * call's input straight from the id order, not a walk of the
         * inputs. */
        m->linked[r->input * m->rank_count + s->rank] = true;
        m->linked[m->by_order[top->order] * m->rank_count + s->rank] = true;
    }
    if (top && call >= 0 && parent_id < 0 && top->call_id >= 0) {
        /* Stored as a root (or without parent_ids), yet enclosed: its
         * parent becomes the enclosing call, which must keep the smaller
         * id (FORMAT.md 1.5): an earlier input's call, or an earlier id
         * of its own input. */
        bool adoptable = top->order < order || (top->order == order && top->call_id < call);
        if (!adoptable) {
            fail_modes(s, l->modes, r,
                       "call id %lld lies inside call id %lld of its lane, which is not an "
                       "earlier call",
                       (long long)call, (long long)top->call_id);
        } else {
            spm_adoption *a = adoption_of(r);
            if (!a) return spm_oom(err);
            if (l->modes & MODE_JOINT) {
                a->host_order = (int64_t)top->order + 1;
                a->host_id = top->call_id;
            }
            if ((l->modes & MODE_ALONE) && top->order == order) a->alone_host = top->call_id + 1;
        }
    }
    if (top) top->child += duration;
    if (l->depth == l->capacity) {
        size_t grown_capacity = l->capacity ? l->capacity * 2 : 64;
        open_call *grown = spi_reallocarray(l->stack, grown_capacity, sizeof *grown);
        if (!grown) return spm_oom(err);
        l->stack = grown;
        l->capacity = grown_capacity;
    }
    l->stack[l->depth++] = (open_call){end2, duration, 0, r->slot, order, call};
    return SP_OK;
}

static int nest_in_lanes(sweep *s, sweep_row *r, int64_t start, int64_t end, int64_t call,
                         int64_t parent_id, int64_t thread, int64_t task, spi_error *err);

/* One call, in start order: validated, counted, then nested in its lanes. */
static int visit(sweep *s, sweep_row *r, spi_error *err) {
    spm_merge *m = s->m;
    const spm_cursor *c = &r->cur;
    size_t i = r->at;
    int64_t start = c->col[SPM_START][i], duration = c->col[SPM_DURATION][i];
    int64_t call = c->col[SPM_CALL] ? c->col[SPM_CALL][i] : -1;
    bool own_id = !c->col[SPM_CALL] && m->number_all;
    size_t cell = r->input * m->rank_count + s->rank;
    if (own_id) {
        /* Numbered in start order, so an enclosing call of the same input
         * always has the smaller id; the id goes to pass 2 through the
         * scratch file, like a new parent. */
        call = (int64_t)m->ids[cell].count;
        int status = remember_own_id(s, r, call, err);
        if (status != SP_OK) return status;
    }
    int64_t parent_id = c->col[SPM_PARENT] ? c->col[SPM_PARENT][i] : -1;
    int64_t thread = c->col[SPM_THREAD] ? c->col[SPM_THREAD][i] : -1;
    int64_t task = c->col[SPM_TASK] ? c->col[SPM_TASK][i] : -1;
    spm_input *in = &m->inputs[r->input];
    const spi_row *row = &in->prof.rows[r->cur.row];
    int64_t end = 0;
    if (duration < 0)
        return spm_refuse(err, in, row->rank, row->region, "negative duration %lld ns",
                      (long long)duration);
    if (__builtin_add_overflow(start, duration, &end))
        return spm_refuse(err, in, row->rank, row->region, "a call starting at %lld ns ends beyond int64",
                      (long long)start);
    if (call < -1 || parent_id < -1)
        return spm_refuse(err, in, row->rank, row->region, "invalid call id %lld or parent id %lld",
                      (long long)call, (long long)parent_id);
    if (call >= 0 && parent_id >= call)
        return spm_refuse(err, in, row->rank, row->region,
                      "parent id %lld is not smaller than its call's id %lld (a cycle, a self "
                      "or forward reference)",
                      (long long)parent_id, (long long)call);
    if (thread != -1 && !(r->thread_checked && r->checked_thread == thread)) {
        if (thread < -1 || spm_thread_find(&m->thread_sets[cell], thread) < 0)
            return spm_refuse(err, in, row->rank, row->region,
                              "thread id %lld is not in the input's thread table",
                              (long long)thread);
        r->thread_checked = true;
        r->checked_thread = thread;
    }
    if (thread == -1) m->has_unknown[cell] = true;
    if (call > m->max_id[cell]) m->max_id[cell] = call;
    if (call >= 0) {
        spm_ids_note(&m->ids[cell], call);
        /* Pass 1's own ids have no column to read again: kept when some
         * parent may have to be checked against them. */
        if (own_id && c->col[SPM_PARENT]) {
            spm_key_record kept = {call, start, end, -1, 0};
            int status = spm_ids_keep(m, cell, &kept, err);
            if (status != SP_OK) return status;
        }
    }

    {
        /* Always recomputed: stored statistics may be damaged, and the
         * output's must agree with its events. */
        spi_stats *st = &r->stats;
        int64_t gpu = c->col[SPM_GPU] ? c->col[SPM_GPU][i] : -1;
        int64_t total, gpu_total;
        if (__builtin_add_overflow(st->total, duration, &total) ||
            (gpu > 0 && __builtin_add_overflow(st->gpu_total, gpu, &gpu_total)))
            return spm_refuse(err, in, row->rank, row->region,
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

    s->parent_on_stack = false;
    int status = nest_in_lanes(s, r, start, end, call, parent_id, thread, task, err);
    if (status == SP_OK && parent_id >= 0 && !s->parent_on_stack) {
        spm_key_record reference = {parent_id, start, end, (int64_t)r->ordinal,
                                    (int64_t)(r->cur.base + i)};
        status = spm_ids_refer(m, cell, &reference, err);
    }
    return status;
}

/* The call nested in its lanes (when the rank still nests). */
static int nest_in_lanes(sweep *s, sweep_row *r, int64_t start, int64_t end, int64_t call,
                         int64_t parent_id, int64_t thread, int64_t task, spi_error *err) {
    spm_merge *m = s->m;
    size_t cell = r->input * m->rank_count + s->rank;
    spm_input *in = &m->inputs[r->input];
    const spi_row *row = &in->prof.rows[r->cur.row];
    int64_t duration = end - start;
    if (!s->nested) return SP_OK;
    /* The k-way merge is in start order only if every row is. */
    if (r->started && start < r->previous_start) {
        s->nested = false;
        return SP_OK;
    }
    r->started = true;
    r->previous_start = start;
    /* Doubled times must fit int64 with room (contract 7.6's rebuild):
     * scope-check refuses calls beyond +-2^61 ns (73 years; only damage
     * or a foreign clock), so merge does too. */
    if (start < -SPM_TIME_LIMIT || end > SPM_TIME_LIMIT || end < -SPM_TIME_LIMIT)
        return spm_refuse(err, in, row->rank, row->region,
                          "a call [%lld, %lld] ns beyond the +-2^61 ns the nesting rebuild takes",
                          (long long)start, (long long)end);
    int64_t start2 = (int64_t)((uint64_t)start * 2);
    int64_t end2 = duration == 0 ? start2 + 1 : (int64_t)((uint64_t)end * 2);
    /* The package's lanes (FORMAT.md 5): a task id >= 0 is the lane
     * whatever the thread (task ids are kept as stored, so one task lane
     * for all inputs); else the call's thread, per input. */
    int status = SP_OK;
    if (task >= 0) {
        lane *l = row_lane(s, r, LANE_TASK, -1, task, MODE_BOTH, err, &status);
        return l ? nest_call(s, r, l, start2, end2, duration, call, parent_id, err) : status;
    }
    bool main_lane = m->primary[cell] != SPM_NO_PRIMARY && thread == m->primary[cell];
    lane *own = row_lane(s, r, LANE_OWN, (int64_t)r->input, thread,
                         main_lane ? MODE_ALONE : MODE_BOTH, err, &status);
    if (!own) return status;
    status = nest_call(s, r, own, start2, end2, duration, call, parent_id, err);
    if (status != SP_OK || !main_lane) return status;
    lane *joint = row_lane(s, r, LANE_JOINT, -1, MAIN_LANE, MODE_JOINT, err, &status);
    return joint ? nest_call(s, r, joint, start2, end2, duration, call, parent_id, err) : status;
}
int spm_sweep_rank(spm_merge *m, size_t rank_idx, spi_error *err) {
    sweep s = {.m = m, .rank = rank_idx, .nested = true};
    uint32_t rank = m->ranks[rank_idx];
    size_t rows = 0, columns = 0;
    int status = SP_OK;
    for (size_t i = 0; i < m->input_count && status == SP_OK; i++) {
        size_t n = 0;
        const size_t *on = spm_rows_on_rank(m, i, rank, &n);
        for (size_t k = 0; k < n; k++) {
            spi_row *row = &m->inputs[i].prof.rows[on[k]];
            if (row->count) rows++;
            /* A row without calls has no statistics, whatever it stored:
             * the output's must agree with its (absent) events. */
            else row->stats = (spi_stats){0};
        }
    }
    s.rows = spi_calloc(rows ? rows : 1, sizeof *s.rows);
    s.heap = spi_calloc(rows ? rows : 1, sizeof *s.heap);
    if (status == SP_OK && !(s.rows && s.heap)) status = spm_oom(err);
    unsigned want = 1u << SPM_START | 1u << SPM_DURATION | 1u << SPM_CALL | 1u << SPM_PARENT |
                    1u << SPM_THREAD | 1u << SPM_TASK;
    columns = 7; /* the columns above, plus GPU when statistics are computed */
    size_t cap = rows ? SPM_SWEEP_BUDGET_BYTES / (rows * columns * sizeof(int64_t)) : 1;
    if (cap > SPM_SWEEP_MAX_BLOCK) cap = SPM_SWEEP_MAX_BLOCK;
    if (cap < SPM_SWEEP_MIN_BLOCK) cap = SPM_SWEEP_MIN_BLOCK;
    for (size_t i = 0; i < m->input_count && status == SP_OK; i++) {
        spm_input *in = &m->inputs[i];
        size_t on_count = 0;
        const size_t *on = spm_rows_on_rank(m, i, rank, &on_count);
        for (size_t k = 0; k < on_count && status == SP_OK; k++) {
            size_t r = on[k];
            if (!in->prof.rows[r].count) continue;
            sweep_row *row = &s.rows[s.row_count];
            row->input = i;
            row->ordinal = k;
            row->slot = m->slot_base[i] + r;
            status = spm_cursor_init(&row->cur, in, r,
                                     cap, want | 1u << SPM_GPU, err);
            if (status != SP_OK) break;
            s.row_count++;
            bool more = false;
            status = spm_cursor_fill(&row->cur, err);
            more = status == SP_OK && row->cur.len > 0;
            if (more) s.heap[s.heap_size++] = head_of(&s, s.row_count - 1);
        }
    }
    for (size_t i = s.heap_size; i-- > 0;) heap_down(&s, i);
    while (status == SP_OK && s.heap_size) {
        size_t top = s.heap[0].row;
        sweep_row *r = &s.rows[top];
        status = visit(&s, r, err);
        if (status != SP_OK) break;
        bool more = true;
        if (++r->at == r->cur.len) status = advance_block(&s, r, &more, err);
        if (more) s.heap[0] = head_of(&s, top);
        else s.heap[0] = s.heap[--s.heap_size];
        heap_down(&s, 0);
    }
    for (size_t l = 0; l < s.lane_count; l++) {
        lane *ln = &s.lanes[l];
        while (status == SP_OK && ln->depth) close_call(&s, ln, &ln->stack[--ln->depth]);
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
    bool nested = status == SP_OK && s.nested;
    size_t linked = 0;
    for (size_t i = 0; i < m->input_count; i++) linked += m->linked[i * m->rank_count + rank_idx];
    /* Joint lanes only when two inputs' main lanes really nest (a driver
     * call around native calls) and the stored trees allow it; calls that
     * do not nest across inputs (unrelated runs) keep lanes of their own.
     * When neither layout stores the package's nesting, an input's own
     * lanes disagree with its parents or overlap improperly: refused, as
     * scope-check refuses it. */
    bool joint_ok = !(s.failed & MODE_JOINT), alone_ok = !(s.failed & MODE_ALONE);
    m->rank_joint[rank_idx] = nested && joint_ok && (linked >= 2 || !alone_ok);
    if (nested && !joint_ok && !alone_ok)
        status = spi_error_set(err, SP_ERR_CORRUPT,
                               "scope-merge: %s; scope-merge copies nothing scope-check rejects",
                               s.alone_problem);
    m->rank_nested[rank_idx] = status == SP_OK && nested;
    if (!m->rank_joint[rank_idx])
        for (size_t i = 0; i < m->input_count; i++) m->linked[i * m->rank_count + rank_idx] = false;
    /* A rank that was not nested keeps its scratch records for the ids
     * given to calls without one; pass 2 ignores their new parents. */
    spi_free(s.lanes);
    /* After the last rank, the columns' rings of decoded chunks go: pass 2
     * reads the columns it does not copy, one row at a time. */
    if (rank_idx + 1 == m->rank_count)
        for (size_t i = 0; i < m->input_count; i++)
            for (int k = 0; k < SPM_COL_COUNT; k++) spm_chunks_release(m->inputs[i].chunked[k]);
    /* The ids and parents pass 1 could not decide (merge_ids.c). */
    if (status == SP_OK) status = spm_ids_finish_rank(m, rank_idx, err);
    spi_free(s.rows);
    spi_free(s.heap);
    return status;
}
