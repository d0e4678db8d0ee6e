/*
 * scope_check_rank.c - every per-call rule of one rank, in one sweep over
 * its calls in nesting order (scope_check_merge.h), in memory bounded by
 * what the file's shape asks for (rows, lanes, nesting depth), never by
 * the number of calls (issue 27).
 *
 * The package's lane rule (issue 28, docs/FORMAT.md 5): a call's lane is
 * its task id when >= 0, else -2 - thread id when >= 0, else -1; within a
 * lane a call nests in the innermost open call that encloses it (sort by
 * start, longer first; timestamps doubled and zero-length calls lengthened
 * by one tick, contract 7.6); calls of different lanes never nest. The
 * sweep keeps per lane the stack of open calls, so the containment parent
 * of each call is the stack's top when it arrives, and its exclusive time
 * (duration minus its children's) is known when it closes. A stored
 * parent must be that call, except a parent on another lane that encloses
 * the child (an OpenMP worker's root under its fork call, a native root
 * scope-merge hung under a driver call, FORMAT.md 4.2 and 4.5): the
 * package does not nest those, so they reduce no exclusive time.
 *
 * Why the parent lookups need no map of every call: an enclosing call
 * starts no later than its child, so when the child arrives its stored
 * parent, if it encloses the child, has arrived and is still on a stack
 * (same lane: exactly the containment chain; another lane: that lane's
 * chain, closed lazily). A parent id found on no stack names no call that
 * encloses the child: missing, or not enclosing; both are problems.
 *
 * Call id repeats: an exact set of the ids seen, up to ck->id_memory bytes
 * per rank. Past that the format still gives an argument: when every
 * lane's ids increase with its starts (equal starts in any order but
 * distinct) and the lanes' id ranges do not overlap (a native rank: each
 * thread numbers its calls in the order they begin, from its own base,
 * FORMAT.md 4.2), no id can repeat. When neither holds the tool says the
 * check could not be made, instead of claiming it passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_check.h"
#include "scope_check_merge.h"

/* Calls of one lane that may share a start and still be shown distinct
 * without the id set (see the top of the file). */
#define GROUP_MAX 64

/* Doubling a timestamp must not overflow (contract 7.6's rebuild). */
#define TIME_LIMIT (INT64_MAX / 4)

typedef struct open_call {
    int64_t start, end, adj_end, duration, id;
    size_t pos;
    uint64_t index;
    uint64_t child_ns;  /* wrapping: a damaged file may hold huge durations */
} open_call;

typedef struct lane {
    int64_t key;
    open_call *stack;
    size_t depth, cap;
    /* the id argument: ids increase with the starts of the lane */
    int monotonic, any_id;
    int64_t min_id, max_id;
    int64_t group_start, max_before, group_max;
    int64_t group[GROUP_MAX];
    size_t group_len;
    int any_group;
} lane;

typedef struct id_slot {
    uint64_t key;    /* id + 1; 0 = empty */
    uint64_t where;  /* row position << 40 | index in the row */
} id_slot;

typedef struct sweep {
    checker *ck;
    uint32_t rank;
    const size_t *rows;
    size_t row_count;
    const check_thread_key *threads;
    size_t thread_count;
    int has_parents;
    lane *lanes;
    size_t lane_count, lane_cap;
    size_t *slots;  /* lane key -> index + 1, linear probing */
    size_t slot_cap;
    uint64_t *exclusive;  /* per row position, wrapping sum */
    size_t overlaps;
    id_slot *set;
    size_t set_cap, set_count;
    int set_overflowed;
    uint64_t ids_in_set;
} sweep;

static size_t hash_u64(uint64_t key, size_t cap) {
    uint64_t h = key * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static const char *pos_name(const sweep *w, size_t pos) {
    return check_row_name(w->ck->res, w->rows[pos]);
}

/* "call id 7", or "call #2" (its position in the row) when not numbered. */
static const char *label(char *buf, size_t len, int64_t id, uint64_t index) {
    if (id >= 0) snprintf(buf, len, "call id %lld", (long long)id);
    else snprintf(buf, len, "call #%llu", (unsigned long long)index);
    return buf;
}

static void oom(sweep *w) { w->ck->failed = 1; }

/* ---- lanes ----------------------------------------------------------------- */

static lane *lane_of(sweep *w, int64_t key) {
    if (w->slot_cap) {
        for (size_t i = hash_u64((uint64_t)key, w->slot_cap); w->slots[i];
             i = (i + 1) & (w->slot_cap - 1))
            if (w->lanes[w->slots[i] - 1].key == key) return &w->lanes[w->slots[i] - 1];
    }
    if (2 * (w->lane_count + 1) > w->slot_cap) {
        size_t cap = w->slot_cap ? 2 * w->slot_cap : 16;
        size_t *slots = calloc(cap, sizeof *slots);
        if (!slots) return NULL;
        for (size_t l = 0; l < w->lane_count; l++) {
            size_t i = hash_u64((uint64_t)w->lanes[l].key, cap);
            while (slots[i]) i = (i + 1) & (cap - 1);
            slots[i] = l + 1;
        }
        free(w->slots);
        w->slots = slots;
        w->slot_cap = cap;
    }
    if (w->lane_count == w->lane_cap) {
        size_t cap = w->lane_cap ? 2 * w->lane_cap : 8;
        lane *grown = realloc(w->lanes, cap * sizeof *grown);
        if (!grown) return NULL;
        w->lanes = grown;
        w->lane_cap = cap;
    }
    lane *l = &w->lanes[w->lane_count];
    *l = (lane){.key = key, .monotonic = 1};
    size_t i = hash_u64((uint64_t)key, w->slot_cap);
    while (w->slots[i]) i = (i + 1) & (w->slot_cap - 1);
    w->slots[i] = ++w->lane_count;
    return l;
}

/* The package's lane of a call (docs/FORMAT.md 5). */
static int64_t lane_key(const check_call *c) {
    if (c->task >= 0) return c->task;
    if (c->thread >= 0) return -2 - c->thread;
    return -1;
}

static void close_top(sweep *w, lane *l) {
    open_call *top = &l->stack[--l->depth];
    w->exclusive[top->pos] += (uint64_t)top->duration - top->child_ns;
}

static int push(lane *l, const open_call *call) {
    if (l->depth == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        open_call *grown = realloc(l->stack, cap * sizeof *grown);
        if (!grown) return 0;
        l->stack = grown;
        l->cap = cap;
    }
    l->stack[l->depth++] = *call;
    return 1;
}

/* An open call with id `id` on a lane other than `own`, or NULL. */
static const open_call *find_elsewhere(const sweep *w, const lane *own, int64_t id) {
    for (size_t i = 0; i < w->lane_count; i++) {
        const lane *l = &w->lanes[i];
        if (l == own) continue;
        for (size_t d = l->depth; d-- > 0;)
            if (l->stack[d].id == id) return &l->stack[d];
    }
    return NULL;
}

static const open_call *find_in_lane(const lane *l, int64_t id) {
    for (size_t d = l->depth; d-- > 0;)
        if (l->stack[d].id == id) return &l->stack[d];
    return NULL;
}

/* ---- call ids -------------------------------------------------------------- */

/* The lane argument for ids (top of the file). */
static void lane_id_order(lane *l, const check_call *c) {
    if (!l->any_id) {
        l->min_id = l->max_id = c->id;
        l->any_id = 1;
    }
    if (c->id < l->min_id) l->min_id = c->id;
    if (c->id > l->max_id) l->max_id = c->id;
    if (!l->monotonic) return;
    if (!l->any_group) {
        l->any_group = 1;
        l->max_before = -1;  /* ids are >= 0 */
        l->group_start = c->start;
        l->group_max = -1;
    } else if (c->start != l->group_start) {
        if (l->group_max > l->max_before) l->max_before = l->group_max;
        l->group_start = c->start;
        l->group_len = 0;
        l->group_max = -1;
    }
    if (c->id <= l->max_before || l->group_len == GROUP_MAX) {
        l->monotonic = 0;
        return;
    }
    for (size_t i = 0; i < l->group_len; i++)
        if (l->group[i] == c->id) {
            l->monotonic = 0;
            return;
        }
    l->group[l->group_len++] = c->id;
    if (c->id > l->group_max) l->group_max = c->id;
}

static int set_grow(sweep *w) {
    /* Start small: a file of many ranks with few calls each must not pay
     * a large table per rank. */
    size_t cap = w->set_cap ? 2 * w->set_cap : 64;
    /* The budget holds the old table and the new one while rehashing. */
    if ((cap + w->set_cap) * sizeof(id_slot) > w->ck->id_memory) return 0;
    id_slot *set = calloc(cap, sizeof *set);
    if (!set) return 0;
    for (size_t i = 0; i < w->set_cap; i++) {
        if (!w->set[i].key) continue;
        size_t j = hash_u64(w->set[i].key, cap);
        while (set[j].key) j = (j + 1) & (cap - 1);
        set[j] = w->set[i];
    }
    free(w->set);
    w->set = set;
    w->set_cap = cap;
    return 1;
}

/* Insert the call's id; a repeat is reported at the call stored later
 * (row order, then position), naming the other. */
static void set_insert(sweep *w, const check_call *c) {
    if (w->set_overflowed) return;
    if (4 * (w->set_count + 1) > 3 * w->set_cap && !set_grow(w)) {
        /* Past the budget: drop the set, the lane argument decides. */
        free(w->set);
        w->set = NULL;
        w->set_cap = 0;
        w->set_overflowed = 1;
        w->ids_in_set = w->set_count;
        return;
    }
    uint64_t key = (uint64_t)c->id + 1, where = ((uint64_t)c->pos << 40) | c->index;
    size_t i = hash_u64(key, w->set_cap);
    for (; w->set[i].key; i = (i + 1) & (w->set_cap - 1)) {
        if (w->set[i].key != key) continue;
        uint64_t other = w->set[i].where;
        uint64_t later = other > where ? other : where, earlier = other > where ? where : other;
        size_t lpos = (size_t)(later >> 40), epos = (size_t)(earlier >> 40);
        uint64_t mask = (UINT64_C(1) << 40) - 1;
        check_report(w->ck, 0, (long)w->rank, pos_name(w, lpos),
                     "call #%llu: duplicate call id %lld (also call #%llu of region %s)",
                     (unsigned long long)(later & mask), (long long)c->id,
                     (unsigned long long)(earlier & mask), pos_name(w, epos));
        return;
    }
    w->set[i] = (id_slot){key, where};
    w->set_count++;
}

static int cmp_lane_min(const void *pa, const void *pb) {
    const lane *a = pa, *b = pb;
    return a->min_id < b->min_id ? -1 : a->min_id > b->min_id;
}

/* After the sweep: whether ids past the set's budget are shown unique. */
static void ids_verdict(sweep *w) {
    if (!w->set_overflowed) return;
    int proven = 1;
    for (size_t i = 0; i < w->lane_count && proven; i++)
        if (w->lanes[i].any_id && !w->lanes[i].monotonic) proven = 0;
    if (proven) {
        /* the lanes are not needed any more: sort them by their ids */
        qsort(w->lanes, w->lane_count, sizeof *w->lanes, cmp_lane_min);
        int64_t previous_max = 0;
        int any = 0;
        for (size_t i = 0; i < w->lane_count && proven; i++) {
            if (!w->lanes[i].any_id) continue;
            if (any && w->lanes[i].min_id <= previous_max) proven = 0;
            previous_max = w->lanes[i].max_id;
            any = 1;
        }
    }
    if (!proven)
        check_note(w->ck, (long)w->rank,
                   "call ids checked for repeats among the first %llu only (the ids of its "
                   "threads interleave, and an exact check of all needs more than "
                   "SCOPE_PROFILER_CHECK_MEMORY=%zuK)",
                   (unsigned long long)w->ids_in_set, w->ck->id_memory >> 10);
}

/* ---- one call -------------------------------------------------------------- */

static void check_local(sweep *w, const check_call *c, const char *name, const char *a) {
    checker *ck = w->ck;
    long rank = (long)w->rank;
    if (c->duration < 0)
        check_report(ck, 0, rank, name, "%s: negative duration %lld ns", a,
                     (long long)c->duration);
    if (c->id < -1)
        check_report(ck, 0, rank, name,
                     "call #%llu: invalid call id %lld (ids are >= 0, -1 = not numbered)",
                     (unsigned long long)c->index, (long long)c->id);
    if (c->parent < -1)
        check_report(ck, 0, rank, name, "%s: invalid parent id %lld (-1 = root)", a,
                     (long long)c->parent);
    if (c->thread != -1) {
        check_thread_key key = {w->rank, c->thread};
        if (c->thread < -1 || !bsearch(&key, w->threads, w->thread_count, sizeof *w->threads,
                                       check_thread_key_cmp))
            check_report(ck, 0, rank, name, "%s: thread id %lld is not in the thread table of "
                         "rank %ld", a, (long long)c->thread, rank);
    }
    if (c->id >= 0 && c->parent >= 0 && c->parent >= c->id)
        check_report(ck, 0, rank, name, "%s: parent id %lld is not smaller than the call's id",
                     a, (long long)c->parent);
}

/* The stored parent against the containment parent `p` (NULL: none). */
static void check_parent(sweep *w, const lane *l, const check_call *c, const open_call *p,
                         const char *name, const char *a) {
    checker *ck = w->ck;
    long rank = (long)w->rank;
    if (c->parent == -1) {
        if (p)
            check_report(ck, 0, rank, name,
                         "%s [%lld, %lld] is stored as a root, but call id %lld of region %s "
                         "[%lld, %lld] encloses it on its lane (the package nests it there)",
                         a, (long long)c->start, (long long)c->end, (long long)p->id,
                         pos_name(w, p->pos), (long long)p->start, (long long)p->end);
        return;
    }
    if (c->parent < 0 || (p && p->id == c->parent)) return;
    const open_call *q = find_in_lane(l, c->parent);
    if (q) {
        check_report(ck, 0, rank, name,
                     "%s: stored parent id %lld encloses it on its lane, but the innermost "
                     "call enclosing it there is %s%lld of region %s (the package's parent)",
                     a, (long long)c->parent, p && p->id >= 0 ? "call id " : "call #",
                     (long long)(p ? (p->id >= 0 ? p->id : (int64_t)p->index) : -1),
                     p ? pos_name(w, p->pos) : "?");
        return;
    }
    q = find_elsewhere(w, l, c->parent);
    if (!q) {
        check_report(ck, 0, rank, name,
                     "%s [%lld, %lld]: parent id %lld is no call of rank %ld that encloses it "
                     "(it does not exist, or starts after it or ends before it starts)",
                     a, (long long)c->start, (long long)c->end, (long long)c->parent, rank);
        return;
    }
    if (q->start > c->start || q->end < c->end) {
        check_report(ck, 0, rank, name,
                     "%s [%lld, %lld] is not inside its parent, call id %lld of region %s "
                     "[%lld, %lld]",
                     a, (long long)c->start, (long long)c->end, (long long)q->id,
                     pos_name(w, q->pos), (long long)q->start, (long long)q->end);
        return;
    }
    /* An enclosing parent on another lane: accepted (top of the file). */
}

static void sweep_call(sweep *w, const check_call *c) {
    const char *name = pos_name(w, c->pos);
    char a[64];
    label(a, sizeof a, c->id, c->index);
    check_local(w, c, name, a);
    lane *l = lane_of(w, lane_key(c));
    if (!l) {
        oom(w);
        return;
    }
    if (c->id >= 0) {
        lane_id_order(l, c);
        set_insert(w, c);
    }
    if (c->start < -TIME_LIMIT || c->end > TIME_LIMIT || c->end < -TIME_LIMIT) {
        check_report(w->ck, 0, (long)w->rank, name,
                     "%s: timestamps [%lld, %lld] out of the range the nesting rebuild takes",
                     a, (long long)c->start, (long long)c->end);
        w->overlaps++;  /* the rank's tree cannot be rebuilt */
        return;
    }
    int64_t start2 = 2 * c->start;
    while (l->depth && l->stack[l->depth - 1].adj_end <= start2) close_top(w, l);
    open_call *p = l->depth ? &l->stack[l->depth - 1] : NULL;
    if (p && c->end > p->end) {
        char b[64];
        check_report(w->ck, 0, (long)w->rank, name,
                     "%s [%lld, %lld] overlaps %s of region %s [%lld, %lld] on its lane "
                     "without nesting in it (the package refuses this rank's call tree)",
                     a, (long long)c->start, (long long)c->end, label(b, sizeof b, p->id, p->index),
                     pos_name(w, p->pos), (long long)p->start, (long long)p->end);
        w->overlaps++;
        /* Close what it overlaps, so the stack stays one nested chain. */
        while (l->depth && l->stack[l->depth - 1].end < c->end) close_top(w, l);
        p = l->depth ? &l->stack[l->depth - 1] : NULL;
    }
    if (w->has_parents) check_parent(w, l, c, p, name, a);
    if (p) p->child_ns += (uint64_t)c->duration;
    open_call o = {.start = c->start, .end = c->end, .duration = c->duration, .id = c->id,
                   .pos = c->pos, .index = c->index,
                   .adj_end = c->end == c->start ? start2 + 1 : 2 * c->end};
    if (!push(l, &o)) oom(w);
}

/* ---- the rank -------------------------------------------------------------- */

static void compare_exclusive(sweep *w) {
    const sp_results *res = w->ck->res;
    int any_stored = 0;
    for (size_t i = 0; i < w->row_count; i++)
        any_stored |= sp_results_row_exclusive_total(res, w->rows[i]) >= 0;
    if (!any_stored) return;
    if (w->overlaps) {
        check_note(w->ck, (long)w->rank,
                   "stored exclusive totals not compared: the calls of this rank do not nest "
                   "within their lanes");
        return;
    }
    for (size_t i = 0; i < w->row_count; i++) {
        int64_t stored = sp_results_row_exclusive_total(res, w->rows[i]);
        int64_t total = (int64_t)w->exclusive[i];  /* wraps back for any in-range result */
        if (stored >= 0 && total != stored)
            check_report(w->ck, 0, (long)w->rank, pos_name(w, i),
                         "stored exclusive total %lld ns, the call tree gives %lld ns "
                         "(containment per lane, the package's rule)",
                         (long long)stored, (long long)total);
    }
}

void check_rank_events(checker *ck, uint32_t rank, const size_t *rows, size_t count,
                       const check_thread_key *threads, size_t thread_count) {
    sweep w = {.ck = ck, .rank = rank, .rows = rows, .row_count = count, .threads = threads,
               .thread_count = thread_count};
    char msg[512];
    check_merge *m = NULL;
    w.exclusive = calloc(count ? count : 1, sizeof *w.exclusive);
    int st = w.exclusive ? check_merge_open(&m, ck->res, rows, count, msg, sizeof msg)
                         : SP_ERR_OUT_OF_MEMORY;
    if (st == SP_OK) {
        w.has_parents = check_merge_has_parents(m);
        for (size_t i = 0; ck->strict && i < count; i++) {
            uint64_t n, first;
            check_merge_disorder(m, i, &n, &first);
            if (n)
                check_report(ck, 1, (long)rank, pos_name(&w, i),
                             "%llu call(s) start before the call stored before them (first: "
                             "call #%llu)", (unsigned long long)n, (unsigned long long)first);
        }
        const check_call *c;
        while (!ck->failed && (st = check_merge_next(m, &c, msg, sizeof msg)) == SP_OK && c)
            sweep_call(&w, c);
    }
    if (st == SP_ERR_OUT_OF_MEMORY) {
        ck->failed = 1;
    } else if (st != SP_OK) {
        check_report(ck, 0, (long)rank, NULL, "calls cannot be read: %s",
                     msg[0] ? msg : sp_error_string(st));
    } else if (!ck->failed) {
        for (size_t i = 0; i < w.lane_count; i++)
            while (w.lanes[i].depth) close_top(&w, &w.lanes[i]);
        compare_exclusive(&w);
        ids_verdict(&w);
    }
    check_merge_close(m);
    for (size_t i = 0; i < w.lane_count; i++) free(w.lanes[i].stack);
    free(w.lanes);
    free(w.slots);
    free(w.set);
    free(w.exclusive);
}
