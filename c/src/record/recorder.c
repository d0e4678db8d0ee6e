/*
 * recorder.c - the hot path: per-thread begin/end recording (recorder.h),
 * by handle and by name. A thread's attach and exit are in
 * recorder_threads.c, room for events in recorder_buffers.c, the session
 * in recorder_session.c (recorder_state.h says how they stand).
 *
 * Session liveness is one atomic generation number (0 = not recording).
 * Each thread caches the generation its state belongs to, so a stale
 * thread-local state from an earlier session is never used. sp_begin and
 * sp_end test only the thread's path word (spi_hot), which finalize, thread
 * exit and the fork child reset; the out-of-line paths compare generations.
 *
 * Ordering: sp_setup/sp_finalize are documented as not concurrent with
 * recording on other threads, so relaxed loads suffice on the hot path; the
 * session mutex orders thread attach/exit against finalize.
 */
#include "record/recorder.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#include "util/alloc.h"
#include "record/clock.h"
#include "util/diag.h"
#include "util/error.h"
#include "record/omp_runtime.h"
#include "record/pause.h"
#include "record/recorder_buffers.h"
#include "record/recorder_state.h"
#include "record/recorder_threads.h"
#include "record/registry.h"

#define UNMATCHED_REPORT_LIMIT 10

/* ---- begin / end -------------------------------------------------------- */

/* The end of a call as the session's clock gave it (the conversion is
 * left for later: clock.h says why). */
typedef union spi_reading {
    struct timespec ts;   /* CLOCK_MONOTONIC */
    int64_t ticks;        /* TSC */
} spi_reading;

/* Which clock a call reads: `clock` is SPI_PATH_MONOTONIC or SPI_PATH_TSC
 * on the inline paths (a constant, so the test folds away), or
 * SPI_PATH_GENERAL: the thread's session decides. */
static inline bool on_tsc(int clock) {
    return clock == SPI_PATH_GENERAL ? spi_tls.tsc
                                     : clock == SPI_PATH_TSC || clock == SPI_PATH_AGGREGATE_TSC;
}

static inline void read_end(spi_reading *now, int clock) {
    if (on_tsc(clock)) now->ticks = spi_clock_ticks();
    else spi_clock_read(&now->ts);
}

/* The cold parts of push_call and pop_call, out of line so the trace hot
 * path keeps few registers and no stack frame of its own. */
static __attribute__((noinline, cold)) int32_t begin_on_path(spi_thread *t, int region) {
    /* an OpenMP worker's root call goes under the path its team was
     * forked in (a stand-in node of its own table, recorder_buffers.h) */
    int32_t parent = spi_tls.top > spi_tls.stack_base ? spi_tls.top[-1].node
                     : t->omp_worker                  ? spi_path_fork_parent(t)
                                                      : -1;
    return spi_path_of(t, parent, region);
}

/* TSC: the anchor due at this begin (a thread that records keeps its map
 * exact), then the begin's own tick. */
static __attribute__((noinline, cold)) int64_t anchored_ticks(void) {
    spi_tls.next_anchor = spi_thread_take_anchor(spi_tls.thread);
    return spi_clock_ticks();
}

/* The start of a call: last, closest to the user's code, and stored as
 * read (clock.h: the vDSO writes it straight into the frame). */
static inline void begin_clock(spi_frame *frame, int clock) {
    if (on_tsc(clock)) {
        int64_t ticks = spi_clock_ticks();
        if (__builtin_expect(ticks >= spi_tls.next_anchor, 0)) ticks = anchored_ticks();
        frame->start_ticks = ticks;
    } else {
        spi_clock_read(&frame->start_ts);
    }
}

/* A begin: push the frame, then read the clock. `full` is a constant at
 * each use: false for the inlined trace path, true for the out-of-line
 * copy that also does aggregate mode, the hooks and the OpenMP flag;
 * `clock` as in on_tsc. The frame gets everything its event will need
 * now, the parent's gap included, so that end never looks below its own
 * frame. */
static __attribute__((always_inline)) inline int push_call(int region, bool full, int clock) {
    /* paused, or excluded by name (record/pause.h): nothing pushed */
    if (__builtin_expect(spi_calls_gated(), 0) &&
        spi_gate_begin(region, (size_t)(spi_tls.top - spi_tls.stack_base), spi_tls.generation))
        return SP_OK;
    spi_frame *frame = spi_tls.top;
    if (__builtin_expect(frame == spi_tls.stack_end, 0)) {
        if (spi_stack_grow() != SP_OK) return SP_ERR_OUT_OF_MEMORY;
        frame = spi_tls.top;
    }
    uint32_t region_bits = (uint32_t)region;
    spi_thread *t = spi_tls.thread;
    if (full) {
        frame->node = -1;
        frame->child_ns = 0;
        if (t->aggregate) {
            frame->node = begin_on_path(t, region);
            if (__builtin_expect(frame->node < 0, 0)) return SP_ERR_OUT_OF_MEMORY;
        }
        if (t->omp_primary_candidate && spi_omp_in_parallel())
            region_bits |= SPI_EVENT_IN_PARALLEL;
        else if (__builtin_expect(t->omp_fork_host, 0))
            spi_omp_publish_fork(t, frame->node);
    }
    frame->key = spi_event_key(spi_tls.next_sequence++, region_bits);
    frame->region = region_bits;
    spi_tls.top = frame + 1;
    /* hooks (counters): before the clock, so their cost is outside the region */
    if (full && t->hook_state) t->hooks->begin(t->hook_state, region);
    begin_clock(frame, clock);
    return SP_OK;
}

static __attribute__((noinline)) int push_call_full(int region) {
    return push_call(region, true, SPI_PATH_GENERAL);
}

/* A begin on the out-of-line paths. */
static inline int begin_call(int region) {
    return spi_tls.full ? push_call_full(region) : push_call(region, false, SPI_PATH_GENERAL);
}

/* Counts one report against the shared limit; true when it may be printed
 * (the last one printed says that further ones are suppressed). */
static bool may_report(const char **suffix) {
    unsigned reports = atomic_fetch_add(&spi_unmatched_reports, 1);
    *suffix = reports + 1 == UNMATCHED_REPORT_LIMIT ? "; further such messages suppressed" : "";
    return reports < UNMATCHED_REPORT_LIMIT;
}

/* A handle that sp_region never issued, reported like an unmatched end:
 * one line per call (up to the limit), SP_ERR_INVALID_REGION. */
static int report_invalid_handle(int region) {
    const char *suffix;
    if (may_report(&suffix))
        spi_diag("invalid region handle %d (not returned by sp_region; %d regions are "
                 "registered)%s", region, spi_registry_count(), suffix);
    return SP_ERR_INVALID_REGION;
}

/* An end that does not close the innermost open call (cold path). Three
 * cases, each with its own status: a handle that was never issued; a
 * region that is open further down the stack, so the calls begun inside it
 * are still open (SP_ERR_NESTING, naming the innermost of them); a region
 * not open at all (SP_ERR_UNMATCHED_END). The stack is left alone in every
 * case, so a program that then ends the inner region goes on normally. */
static __attribute__((noinline, cold)) int report_bad_end(int region) {
    const spi_region_name *ended = spi_registry_get(region);
    if (!ended) return report_invalid_handle(region);
    bool open_below = false;
    for (const spi_frame *f = spi_tls.top; f-- > spi_tls.stack_base && !open_below;)
        open_below = SPI_FRAME_REGION(f) == (uint32_t)region;
    const spi_region_name *open =
        spi_tls.top > spi_tls.stack_base ? spi_registry_get((int)SPI_FRAME_REGION(spi_tls.top - 1)) : NULL;
    const char *suffix;
    if (open_below) {
        if (may_report(&suffix))
            spi_diag("end of region \"%s\" while \"%s\", begun inside it, is still open on "
                     "this thread (end \"%s\" first)%s",
                     ended->text, open->text, open->text, suffix);
        return SP_ERR_NESTING;
    }
    if (may_report(&suffix))
        spi_diag("end of region \"%s\" without a matching begin on this thread "
                 "(innermost open region: %s%s%s)%s",
                 ended->text, open ? "\"" : "", open ? open->text : "none", open ? "\"" : "",
                 suffix);
    return SP_ERR_UNMATCHED_END;
}

/* Aggregate mode's end: the call into its path's accumulator (the frame
 * is already popped: its parent, if any, is the new top). `clock` as in
 * on_tsc; the times are ns or ticks as the session records. */
static __attribute__((always_inline)) inline void add_to_path(spi_thread *t,
                                                              const spi_frame *frame,
                                                              const spi_reading *now, int clock) {
    int64_t start_ns, now_ns;
    if (on_tsc(clock)) {
        start_ns = frame->start_ticks;
        now_ns = now->ticks;
    } else {
        start_ns = spi_clock_ns(&frame->start_ts);
        now_ns = spi_clock_ns(&now->ts);
    }
    int64_t d = now_ns - start_ns;
    spi_path_node *n = &t->nodes[frame->node];
    n->count++;
    n->total_ns += d;
    n->exclusive_ns += d - frame->child_ns;
    n->min_ns = d < n->min_ns ? d : n->min_ns;
    n->max_ns = d > n->max_ns ? d : n->max_ns;
    n->sum_squares += (spi_u128)(uint64_t)d * (uint64_t)d;
    /* ends come in time order on a thread; starts do not (recursion) */
    n->start_min_ns = start_ns < n->start_min_ns ? start_ns : n->start_min_ns;
    n->end_max_ns = now_ns;
    if (spi_tls.top > spi_tls.stack_base) spi_tls.top[-1].child_ns += d;
}

static __attribute__((noinline)) void end_on_path(spi_thread *t, const spi_frame *frame,
                                                  const spi_reading *now) {
    add_to_path(t, frame, now, SPI_PATH_GENERAL);
}

/* A full chunk: a new one (or flushed and reused); the call is dropped and
 * counted when none can be had. */
static __attribute__((noinline, cold)) int next_chunk(spi_thread *t) {
    int status = spi_chunk_add(t);
    if (status != SP_OK) t->dropped_events++;
    return status;
}

/* An end, its time already read: pop the frame, append its event. `full`
 * as in push_call. The event's times stay raw (spi_event): its start is
 * converted from the frame, which does not wait for this end's reading,
 * and the reading is only stored. */
static __attribute__((always_inline)) inline int pop_call(int region, const spi_reading *now,
                                                          bool full, int clock, bool gate_asked) {
    /* gate_asked: the caller already asked (end_inline, before its clock
     * read) and went on, so the answer is no: it changes only when this
     * thread begins or ends a call */
    if (!gate_asked && __builtin_expect(spi_calls_gated() | spi_ghost_open, 0) &&
        spi_gate_end(region, (size_t)(spi_tls.top - spi_tls.stack_base), spi_tls.generation))
        return SP_OK; /* a ghost (begun while paused) or an excluded handle */
    spi_frame *top = spi_tls.top;
    /* only the full path marks frames SPI_EVENT_IN_PARALLEL */
    if (__builtin_expect(top == spi_tls.stack_base ||
                             (full ? SPI_FRAME_REGION(top - 1) : top[-1].region) != (uint32_t)region,
                         0))
        return report_bad_end(region);
    const spi_frame *frame = --top;
    spi_tls.top = top;
    if (full) {
        spi_thread *t = spi_tls.thread;
        /* hooks (counters): after the match check, so their stack pops in step */
        if (t->hook_state) t->hooks->end(t->hook_state, region);
        if (t->aggregate) {
            end_on_path(t, frame, now);
            /* the fork path is again the parent's (begun outside a
             * parallel region too, as this call was) */
            if (__builtin_expect(t->omp_fork_host, 0) && !(frame->region & SPI_EVENT_IN_PARALLEL))
                spi_omp_publish_fork(t, top > spi_tls.stack_base ? top[-1].node : -1);
            return SP_OK;
        }
    }
    if (__builtin_expect(spi_tls.cursor == spi_tls.chunk_end, 0)) {
        int status = next_chunk(spi_tls.thread);
        if (status != SP_OK) return status;
    }
    spi_event *event = spi_tls.cursor++;
    event->key = frame->key;
    if (on_tsc(clock)) {
        event->start_ns = frame->start_ticks;
        event->duration_ns = now->ticks;
    } else {
        event->start_ns = spi_clock_ns(&frame->start_ts);
        spi_clock_store_end(&event->duration_ns, &now->ts);
    }
    return SP_OK;
}

static __attribute__((noinline)) int pop_call_full(int region, const spi_reading *now) {
    return pop_call(region, now, true, SPI_PATH_GENERAL, false);
}

/* An end on the out-of-line paths. */
static inline int end_call(int region, const spi_reading *now) {
    return spi_tls.full ? pop_call_full(region, now)
                         : pop_call(region, now, false, SPI_PATH_GENERAL, false);
}

/* Handle of a name through the thread's cache; registers on a miss. */
static int cached_handle(spi_thread *t, const char *name, size_t len, int *status) {
    uint64_t hash = spi_name_hash(name, len);
    size_t mask = t->cache_capacity - 1;
    size_t i = hash & mask;
    for (; t->cache_handles[i] >= 0; i = (i + 1) & mask) {
        if (t->cache_hashes[i] != hash) continue;
        const spi_region_name *entry = spi_registry_get(t->cache_handles[i]);
        if (entry->len == len && memcmp(entry->text, name, len) == 0) return t->cache_handles[i];
    }
    int handle = spi_registry_intern(name, len, hash, status);
    if (handle < 0) return handle;
    if ((t->cache_used + 1) * 2 > t->cache_capacity) {
        /* Rehash into a table twice the size; on OOM just skip caching. */
        size_t capacity = t->cache_capacity * 2;
        uint64_t *hashes = spi_calloc(capacity, sizeof *hashes);
        int32_t *handles = spi_malloc(capacity * sizeof *handles);
        if (!hashes || !handles) {
            spi_free(hashes);
            spi_free(handles);
            return handle;
        }
        memset(handles, 0xff, capacity * sizeof *handles);
        for (size_t j = 0; j < t->cache_capacity; j++) {
            if (t->cache_handles[j] < 0) continue;
            size_t k = t->cache_hashes[j] & (capacity - 1);
            while (handles[k] >= 0) k = (k + 1) & (capacity - 1);
            hashes[k] = t->cache_hashes[j];
            handles[k] = t->cache_handles[j];
        }
        spi_free(t->cache_hashes);
        spi_free(t->cache_handles);
        t->cache_hashes = hashes;
        t->cache_handles = handles;
        t->cache_capacity = capacity;
        mask = capacity - 1;
        i = hash & mask;
        while (t->cache_handles[i] >= 0) i = (i + 1) & mask;
    }
    t->cache_hashes[i] = hash;
    t->cache_handles[i] = handle;
    t->cache_used++;
    return handle;
}

/* The longest name a region may have (scope_profiler.h). A sized name's
 * length is the caller's word: a wrong one (SIZE_MAX, an uninitialised
 * Fortran length) would have the hash read far past the name, so a length
 * no real name reaches is refused before any byte is read, with one
 * message per process. */
#define NAME_LEN_LIMIT ((size_t)1 << 20)

static __attribute__((noinline, cold)) int refuse_long_name(size_t len) {
    static atomic_bool reported = false;
    if (!atomic_exchange(&reported, true))
        spi_diag("a region name of %zu bytes was refused (names are at most %zu bytes; "
                 "a sized name's length may be wrong); such calls record nothing",
                 len, NAME_LEN_LIMIT);
    return SP_ERR_INVALID_ARGUMENT;
}

static struct spi_recent_name *recent_slot(spi_thread *t, const char *name) {
    return &t->recent[((uintptr_t)name >> 3) & (SPI_RECENT_NAMES - 1)];
}

/* The thread's pointer-keyed slot when it holds a NUL-terminated name
 * (its handle is then the name's), or NULL when the slot is another
 * name's or the bytes at `name` changed since. Inline, byte by byte over
 * the slot's length, then the NUL (a call into strcmp would cost the
 * inline by-name path its few registers): each byte is read only after
 * the one before it matched a byte of the slot's text, which holds no
 * NUL, so a shorter string now at the same address differs at its own
 * NUL and no byte past it is read. Four bytes a step, each compare still
 * in order (a word load could read past a shorter string's end). */
static __attribute__((always_inline)) inline const struct spi_recent_name *
recent_cstr(spi_thread *t, const char *name) {
    const struct spi_recent_name *slot = recent_slot(t, name);
    if (slot->pointer != name) return NULL;
    const char *text = slot->text;
    size_t len = slot->len, i = 0;
    for (; i + 4 <= len; i += 4)
        if (name[i] != text[i] || name[i + 1] != text[i + 1] || name[i + 2] != text[i + 2] ||
            name[i + 3] != text[i + 3])
            return NULL;
    for (; i < len; i++)
        if (name[i] != text[i]) return NULL;
    return name[len] == '\0' ? slot : NULL;
}

/* A NUL-terminated name the slot did not know: checked (blank, too long),
 * then the hashed cache (strlen + hash + memcmp), and the slot remembers
 * it. */
static __attribute__((noinline)) int cstr_name_miss(spi_thread *t, const char *name,
                                                    int *status) {
    size_t len = strlen(name);
    if (len == 0 || len > NAME_LEN_LIMIT) {
        *status = len ? refuse_long_name(len) : SP_ERR_INVALID_ARGUMENT;
        return -1;
    }
    int handle = cached_handle(t, name, len, status);
    if (handle >= 0) {
        const spi_region_name *entry = spi_registry_get(handle);
        *recent_slot(t, name) = (struct spi_recent_name){name, entry->text, entry->len, handle};
    }
    return handle;
}

/* Handle of a NUL-terminated name: the slot, then the cache. */
static inline int handle_of_cstr(spi_thread *t, const char *name, int *status) {
    const struct spi_recent_name *slot = recent_cstr(t, name);
    return slot ? slot->handle : cstr_name_miss(t, name, status);
}

/* Whether `len` bytes at a and b are equal: inline, because a by-name
 * call compares its name every time and a call into libc's memcmp costs
 * more than the compare of a name this short (bench/side_by_side: Fortran
 * by name). Words of 8 bytes, then the last (overlapping) word, or two
 * overlapping halves of a short name, so a name of any length up to 16
 * costs at most two compares and no loop over its bytes. Reads only the
 * `len` bytes each side holds. */
static inline uint64_t load_bytes(const char *p, size_t n) {
    if (n == 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    if (n == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

static inline bool same_bytes(const char *a, const char *b, size_t len) {
    if (len >= 8) {
        for (size_t i = 0; i + 8 < len; i += 8)
            if (load_bytes(a + i, 8) != load_bytes(b + i, 8)) return false;
        return load_bytes(a + len - 8, 8) == load_bytes(b + len - 8, 8);
    }
    if (len >= 4)
        return load_bytes(a, 4) == load_bytes(b, 4) &&
               load_bytes(a + len - 4, 4) == load_bytes(b + len - 4, 4);
    if (len >= 2)
        return load_bytes(a, 2) == load_bytes(b, 2) &&
               load_bytes(a + len - 2, 2) == load_bytes(b + len - 2, 2);
    return len == 0 || *a == *b;
}

/* The thread's pointer-keyed slot when it holds (name, len) (its handle
 * is then the name's), or NULL when the slot is another name's or the
 * bytes at `name` changed since (a buffer reused for another name, a
 * Fortran character variable assigned a new value): the caller then looks
 * the name up. Only the slot's own fields are read: a slot that was never
 * filled has no pointer and length 0, which no name the caller passes
 * has. (The slot rather than its handle: the caller's test is then the
 * compare itself, not a second one of the handle's sign.) */
static __attribute__((always_inline)) inline const struct spi_recent_name *
recent_sized(spi_thread *t, const char *name, size_t len) {
    const struct spi_recent_name *slot = recent_slot(t, name);
    if (slot->pointer == name && slot->len == len && same_bytes(slot->text, name, len))
        return slot;
    return NULL;
}

/* A sized name the slot did not know: the hashed cache (registering the
 * name when new), and the slot remembers it. */
static __attribute__((noinline)) int sized_name_miss(spi_thread *t, const char *name, size_t len,
                                                     int *status) {
    int handle = cached_handle(t, name, len, status);
    if (handle >= 0) {
        const spi_region_name *entry = spi_registry_get(handle);
        *recent_slot(t, name) = (struct spi_recent_name){name, entry->text, entry->len, handle};
    }
    return handle;
}

/* Handle of a sized name (no NUL), with the same two levels. */
static inline int handle_of_sized(spi_thread *t, const char *name, size_t len, int *status) {
    const struct spi_recent_name *slot = recent_sized(t, name, len);
    return slot ? slot->handle : sized_name_miss(t, name, len, status);
}

static int invalid_name(void) {
    spi_status_remember(SP_ERR_INVALID_ARGUMENT);
    return SP_ERR_INVALID_ARGUMENT;
}

/* The common tail of the by-name calls: remember failures only, so the
 * success path stays free of the thread-local error store. */
static inline int finish(int status) {
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
    return status;
}

/* The reentrancy guard of the recording calls. A signal handler that
 * records on a thread interrupted inside one of them would find its stack
 * half updated; its call records nothing and returns SP_ERR_UNSUPPORTED.
 * The thread's path is SPI_PATH_BUSY meanwhile (the inline paths test
 * nothing else). The fences keep the compiler from moving the flag across
 * the work (the handler runs on the same thread: no CPU fence is needed).
 * enter gives the path to restore, or -1 when the thread is busy. */
static inline int enter(void) {
    int path = spi_hot_path();
    if (__builtin_expect(path == SPI_PATH_BUSY, 0)) return -1;
    spi_hot_set_path(&spi_tls, SPI_PATH_BUSY);
    atomic_signal_fence(memory_order_seq_cst);
    return path;
}

static inline void leave(int path) {
    atomic_signal_fence(memory_order_seq_cst);
    spi_hot_set_path(&spi_tls, path);
}

/* A begin refused because a signal handler interrupted a recording call
 * on its thread: the handler's call is lost (its end is refused too: the
 * interrupted call stays busy until the handler returns), counted here
 * and reported once at finalize (spi_run_report_open_calls). A plain
 * increment: only this thread's handlers touch the count. */
static __attribute__((noinline, cold)) int refuse_in_handler(spi_thread *t) {
    if (t) t->signal_refused++;
    return SP_ERR_UNSUPPORTED;
}

/* An end reads its time before it marks the thread busy (the lookup of a
 * name, and the busy store, are not the user's time). A signal handler
 * that records in that window pushes its call above the frame being
 * ended, with times after the reading: the parent would end before its
 * child. Every begin takes a sequence number, so a changed one says that
 * happened; the end is then read again, now that no handler can record
 * until the pop is done (the handler's call really ran inside this one). */
static inline int64_t sequence_before_end(void) {
    int64_t sequence = spi_tls.next_sequence;
    atomic_signal_fence(memory_order_seq_cst); /* taken before the reading */
    return sequence;
}

static inline void reread_if_interrupted(spi_reading *now, int64_t sequence, int clock) {
    if (__builtin_expect(spi_tls.next_sequence != sequence, 0)) read_end(now, clock);
}

/* sp_region_begin and sp_region_end when the thread's path is not an
 * inline one, or the name is NULL: every check in turn. */
static __attribute__((noinline)) int begin_cstr_general(const char *name) {
    if (!name) return invalid_name();
    spi_thread *t = spi_thread_current();
    if (!t) return name[0] ? SP_OK : invalid_name();
    int path = enter();
    if (path < 0) return finish(refuse_in_handler(t));
    int status = SP_OK;
    int handle = handle_of_cstr(t, name, &status);
    if (handle >= 0) status = begin_call(handle);
    leave(path);
    return finish(status);
}

static __attribute__((noinline)) int end_cstr_general(const char *name) {
    if (!name) return invalid_name();
    spi_thread *t = spi_thread_current();
    if (!t) return name[0] ? SP_OK : invalid_name();
    spi_reading now;
    int64_t sequence = sequence_before_end();
    read_end(&now, SPI_PATH_GENERAL); /* first: the lookup is not the user's time */
    int path = enter();
    if (path < 0) return finish(SP_ERR_UNSUPPORTED);
    reread_if_interrupted(&now, sequence, SPI_PATH_GENERAL);
    int status = SP_OK;
    int handle = handle_of_cstr(t, name, &status);
    if (handle >= 0) status = end_call(handle, &now);
    leave(path);
    return finish(status);
}

/* sp_region_begin_n and sp_region_end_n when the thread's path is not an
 * inline one (not recording, busy, hooks, OpenMP) or the name is invalid:
 * every check in turn. The inline ones are below, after aggregate mode's. */
static __attribute__((noinline)) int begin_sized_general(const char *name, size_t name_len) {
    if (!name || name_len == 0) return invalid_name();
    if (__builtin_expect(name_len > NAME_LEN_LIMIT, 0)) return finish(refuse_long_name(name_len));
    spi_thread *t = spi_thread_current();
    if (!t) return SP_OK;
    int path = enter();
    if (path < 0) return finish(refuse_in_handler(t));
    int status = SP_OK;
    int handle = handle_of_sized(t, name, name_len, &status);
    if (handle >= 0) status = begin_call(handle);
    leave(path);
    return finish(status);
}

static __attribute__((noinline)) int end_sized_general(const char *name, size_t name_len) {
    if (!name || name_len == 0) return invalid_name();
    if (__builtin_expect(name_len > NAME_LEN_LIMIT, 0)) return finish(refuse_long_name(name_len));
    spi_thread *t = spi_thread_current();
    if (!t) return SP_OK;
    spi_reading now;
    int64_t sequence = sequence_before_end();
    read_end(&now, SPI_PATH_GENERAL);
    int path = enter();
    if (path < 0) return finish(SP_ERR_UNSUPPORTED);
    reread_if_interrupted(&now, sequence, SPI_PATH_GENERAL);
    int status = SP_OK;
    int handle = handle_of_sized(t, name, name_len, &status);
    if (handle >= 0) status = end_call(handle, &now);
    leave(path);
    return finish(status);
}

/* Whether a handle was issued: against the count this thread last saw,
 * refreshed from the registry only for a handle past it (a region
 * registered since, or a bad handle). */
static __attribute__((noinline, cold)) bool handle_issued(int region) {
    spi_tls.known_regions = (uint32_t)spi_registry_count();
    return (unsigned)region < spi_tls.known_regions;
}

/* Whether the calling thread records (attaching it to the session on its
 * first call), for the calls that need the state only on slow paths. */
static inline bool recording(void) {
    uint64_t generation = atomic_load_explicit(&spi_session_generation, memory_order_relaxed);
    if (__builtin_expect(generation == spi_tls.generation, 1)) return spi_tls.thread != NULL;
    return spi_thread_attach(generation) != NULL;
}

/* sp_begin and sp_end when the thread's path is not an inline one (not
 * recording yet, or at all, aggregate mode, hooks, OpenMP, busy) or the
 * handle is past the ones the thread knows. */
static __attribute__((noinline)) void begin_general(int region) {
    if (!recording()) return;
    if (__builtin_expect((unsigned)region >= spi_tls.known_regions, 0) && !handle_issued(region)) {
        spi_status_remember(report_invalid_handle(region));
        return;
    }
    int path = enter();
    if (path < 0) {
        spi_status_remember(refuse_in_handler(spi_tls.thread));
        return;
    }
    int status = begin_call(region);
    leave(path);
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
}

static __attribute__((noinline)) void end_general(int region) {
    if (!recording()) return;
    spi_reading now;
    int64_t sequence = sequence_before_end();
    read_end(&now, SPI_PATH_GENERAL);
    int path = enter();
    if (path < 0) {
        spi_status_remember(SP_ERR_UNSUPPORTED);
        return;
    }
    reread_if_interrupted(&now, sequence, SPI_PATH_GENERAL);
    int status = end_call(region, &now);
    leave(path);
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
}

/* ---- aggregate mode, inline ----------------------------------------------
 * The thread's path is SPI_PATH_AGGREGATE_*: no hooks, no OpenMP flag or
 * fork path to keep, so a begin is the trace's push plus the call's path,
 * and an end the trace's pop plus the accumulator update (add_to_path),
 * no event written. The path comes from a memo in the parent's node (the
 * root memo in the hot block for a call with no parent): the child found
 * last below it, so a loop calling the same regions pays one compare. */

/* A memo miss: the path the out-of-line begin finds (spi_path_of, which
 * may grow the node table), remembered in the parent's memo unless it is
 * the parent itself (a recursive call, which spi_path_of counts). */
static __attribute__((noinline)) int32_t path_memo_miss(spi_thread *t, int32_t parent,
                                                        int region) {
    int32_t node = spi_path_of(t, parent, region);
    if (node < 0 || node == parent) return node;
    if (parent >= 0) {
        t->nodes[parent].memo_region = (uint32_t)region + 1;
        t->nodes[parent].memo_node = node;
    } else {
        spi_tls.root_memo_region = (uint32_t)region + 1;
        spi_tls.root_memo_node = node;
    }
    return node;
}

static __attribute__((always_inline)) inline int push_aggregate(int region, int clock) {
    if (__builtin_expect(spi_calls_gated(), 0) &&
        spi_gate_begin(region, (size_t)(spi_tls.top - spi_tls.stack_base), spi_tls.generation))
        return SP_OK;
    spi_frame *frame = spi_tls.top;
    if (__builtin_expect(frame == spi_tls.stack_end, 0)) {
        if (spi_stack_grow() != SP_OK) return SP_ERR_OUT_OF_MEMORY;
        frame = spi_tls.top;
    }
    spi_thread *t = spi_tls.thread;
    uint32_t memo = (uint32_t)region + 1;
    int32_t node;
    if (frame > spi_tls.stack_base) {
        int32_t parent = frame[-1].node;
        const spi_path_node *p = &t->nodes[parent];
        node = __builtin_expect(p->memo_region == memo, 1) ? p->memo_node
                                                           : path_memo_miss(t, parent, region);
    } else {
        node = __builtin_expect(spi_tls.root_memo_region == memo, 1)
                   ? spi_tls.root_memo_node
                   : path_memo_miss(t, -1, region);
    }
    if (__builtin_expect(node < 0, 0)) return SP_ERR_OUT_OF_MEMORY;
    frame->node = node;
    frame->child_ns = 0;
    frame->key = spi_event_key(spi_tls.next_sequence++, (uint32_t)region);
    frame->region = (uint32_t)region;
    spi_tls.top = frame + 1;
    begin_clock(frame, clock);
    return SP_OK;
}

static __attribute__((always_inline)) inline int pop_aggregate(int region, const spi_reading *now,
                                                               int clock) {
    spi_frame *top = spi_tls.top;
    if (__builtin_expect(top == spi_tls.stack_base || top[-1].region != (uint32_t)region, 0))
        return report_bad_end(region);
    const spi_frame *frame = --top;
    spi_tls.top = top;
    add_to_path(spi_tls.thread, frame, now, clock);
    return SP_OK;
}

/* The inline paths: `clock` is the thread's path, so the thread is not
 * busy and its state belongs to this session (finalize and thread exit
 * set the path back to SPI_PATH_GENERAL). One body for the trace and the
 * aggregate paths: `clock` is a constant at every call, so each caller
 * compiles to its own path with no test of the mode left. */
static __attribute__((always_inline)) inline bool aggregate_path(int clock) {
    return clock == SPI_PATH_AGGREGATE_TSC || clock == SPI_PATH_AGGREGATE_MONOTONIC;
}

static __attribute__((always_inline)) inline void begin_inline(int region, int clock) {
    spi_hot_set_path(&spi_tls, SPI_PATH_BUSY);
    atomic_signal_fence(memory_order_seq_cst);
    int status = aggregate_path(clock) ? push_aggregate(region, clock)
                                       : push_call(region, false, clock);
    leave(clock);
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
}

static __attribute__((always_inline)) inline void end_inline(int region, int clock) {
    /* a paused pair reads no clock (pop_call asks the same, unchanged) */
    if (__builtin_expect(spi_calls_gated() | spi_ghost_open, 0) &&
        spi_gate_end(region, (size_t)(spi_tls.top - spi_tls.stack_base), spi_tls.generation))
        return;
    spi_reading now;
    int64_t sequence = sequence_before_end();
    read_end(&now, clock);
    spi_hot_set_path(&spi_tls, SPI_PATH_BUSY);
    atomic_signal_fence(memory_order_seq_cst);
    reread_if_interrupted(&now, sequence, clock);
    int status = aggregate_path(clock) ? pop_aggregate(region, &now, clock)
                                       : pop_call(region, &now, false, clock, true);
    leave(clock);
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
}

/* One function per inline path, so that sp_begin and sp_end dispatch
 * with a tail call and each path saves only the registers it uses (with
 * the four bodies in one function, every path paid for the
 * CLOCK_MONOTONIC end's timespec and the aggregate end's registers). */
#define INLINE_PATHS(X)                                                        \
    X(monotonic, SPI_PATH_MONOTONIC)                                           \
    X(tsc, SPI_PATH_TSC)                                                       \
    X(aggregate_tsc, SPI_PATH_AGGREGATE_TSC)                                   \
    X(aggregate_monotonic, SPI_PATH_AGGREGATE_MONOTONIC)
#define DEFINE_HANDLE_PATH(suffix, clock)                                      \
    static __attribute__((noinline)) void begin_##suffix(int region) {         \
        begin_inline(region, clock);                                           \
    }                                                                          \
    static __attribute__((noinline)) void end_##suffix(int region) { end_inline(region, clock); }
INLINE_PATHS(DEFINE_HANDLE_PATH)
#undef DEFINE_HANDLE_PATH

SP_API void sp_begin(int region) {
    int path = spi_hot_path();
    if (__builtin_expect((unsigned)region < spi_tls.known_regions, 1)) {
#define DISPATCH(suffix, clock) \
        if (path == clock) return begin_##suffix(region);
        INLINE_PATHS(DISPATCH)
#undef DISPATCH
    }
    begin_general(region);
}

SP_API void sp_end(int region) {
    int path = spi_hot_path();
#define DISPATCH(suffix, clock) \
    if (path == clock) return end_##suffix(region);
    INLINE_PATHS(DISPATCH)
#undef DISPATCH
    end_general(region);
}

/* ---- by name, inline ------------------------------------------------------
 * sp_region_begin / sp_region_end (a NUL-terminated name) and
 * sp_region_begin_n / sp_region_end_n (a sized one: the Fortran module's
 * by-name calls) on a thread whose path is an inline one: the handle from
 * the thread's pointer-keyed slot (one pointer compare, then the name's
 * bytes: a literal, or a character variable whose value did not change,
 * hits), then the very body sp_begin and sp_end run for a handle. The
 * slot is read while the thread is busy, as every lookup is (a signal
 * handler's by-name call may fill slots). A name the slot does not hold
 * takes the hashed cache, out of line. Each path is a function of its
 * own, so the dispatch in the public functions is a tail call and no path
 * pays for another's registers. `sized` is a constant at every use: false
 * for a NUL-terminated name (len unused). */

/* A begin whose name missed the slot: looked up, then begun as the
 * out-of-line begin does (aggregate mode's full push finds the path). */
static __attribute__((noinline)) int begin_name_miss(spi_thread *t, const char *name, size_t len,
                                                     bool sized) {
    int status = SP_OK;
    int handle = sized ? sized_name_miss(t, name, len, &status) : cstr_name_miss(t, name, &status);
    return handle >= 0 ? begin_call(handle) : status;
}

/* (The reading by value: its address taken would keep the inline path's
 * reading in memory.) */
static __attribute__((noinline)) int end_name_miss(spi_thread *t, const char *name, size_t len,
                                                   bool sized, spi_reading now) {
    int status = SP_OK;
    int handle = sized ? sized_name_miss(t, name, len, &status) : cstr_name_miss(t, name, &status);
    return handle >= 0 ? end_call(handle, &now) : status;
}

static __attribute__((always_inline)) inline const struct spi_recent_name *
recent_named(const char *name, size_t len, bool sized) {
    return sized ? recent_sized(spi_tls.thread, name, len) : recent_cstr(spi_tls.thread, name);
}

static __attribute__((always_inline)) inline int begin_named_inline(const char *name, size_t len,
                                                                    bool sized, int clock) {
    spi_hot_set_path(&spi_tls, SPI_PATH_BUSY);
    atomic_signal_fence(memory_order_seq_cst);
    const struct spi_recent_name *slot = recent_named(name, len, sized);
    int status;
    if (__builtin_expect(slot != NULL, 1))
        status = aggregate_path(clock) ? push_aggregate(slot->handle, clock)
                                       : push_call(slot->handle, false, clock);
    else
        status = begin_name_miss(spi_tls.thread, name, len, sized);
    leave(clock);
    return finish(status);
}

/* Aggregate mode's pop with end_inline's gate (pop_call asks it itself). */
static __attribute__((always_inline)) inline int pop_aggregate_gated(int region,
                                                                     const spi_reading *now,
                                                                     int clock) {
    if (__builtin_expect(spi_calls_gated() | spi_ghost_open, 0) &&
        spi_gate_end(region, (size_t)(spi_tls.top - spi_tls.stack_base), spi_tls.generation))
        return SP_OK;
    return pop_aggregate(region, now, clock);
}

/* The end's time first, as every end reads it: the lookup is not the
 * user's time. */
static __attribute__((always_inline)) inline int end_named_inline(const char *name, size_t len,
                                                                  bool sized, int clock) {
    spi_reading now;
    int64_t sequence = sequence_before_end();
    read_end(&now, clock);
    spi_hot_set_path(&spi_tls, SPI_PATH_BUSY);
    atomic_signal_fence(memory_order_seq_cst);
    reread_if_interrupted(&now, sequence, clock);
    const struct spi_recent_name *slot = recent_named(name, len, sized);
    int status;
    if (__builtin_expect(slot != NULL, 1))
        status = aggregate_path(clock) ? pop_aggregate_gated(slot->handle, &now, clock)
                                       : pop_call(slot->handle, &now, false, clock, false);
    else
        status = end_name_miss(spi_tls.thread, name, len, sized, now);
    leave(clock);
    return finish(status);
}

#define DEFINE_NAMED_PATH(suffix, clock)                                                \
    static __attribute__((noinline)) int begin_sized_##suffix(const char *name, size_t len) { \
        return begin_named_inline(name, len, true, clock);                             \
    }                                                                                   \
    static __attribute__((noinline)) int end_sized_##suffix(const char *name, size_t len) {   \
        return end_named_inline(name, len, true, clock);                               \
    }                                                                                   \
    static __attribute__((noinline)) int begin_cstr_##suffix(const char *name) {      \
        return begin_named_inline(name, 0, false, clock);                              \
    }                                                                                   \
    static __attribute__((noinline)) int end_cstr_##suffix(const char *name) {        \
        return end_named_inline(name, 0, false, clock);                                \
    }
INLINE_PATHS(DEFINE_NAMED_PATH)
#undef DEFINE_NAMED_PATH

SP_API int sp_region_begin(const char *name) {
    int path = spi_hot_path();
    if (__builtin_expect(name != NULL, 1)) {
#define DISPATCH_BEGIN(suffix, clock) \
        if (path == clock) return begin_cstr_##suffix(name);
        INLINE_PATHS(DISPATCH_BEGIN)
#undef DISPATCH_BEGIN
    }
    return begin_cstr_general(name);
}

SP_API int sp_region_end(const char *name) {
    int path = spi_hot_path();
    if (__builtin_expect(name != NULL, 1)) {
#define DISPATCH_END(suffix, clock) \
        if (path == clock) return end_cstr_##suffix(name);
        INLINE_PATHS(DISPATCH_END)
#undef DISPATCH_END
    }
    return end_cstr_general(name);
}

/* A name the inline paths may take: not NULL, 1 to NAME_LEN_LIMIT bytes
 * (one unsigned compare for both bounds). */
static inline bool sized_name_valid(const char *name, size_t len) {
    return name != NULL && len - 1 < NAME_LEN_LIMIT;
}

SP_API int sp_region_begin_n(const char *name, size_t name_len) {
    int path = spi_hot_path();
    if (__builtin_expect(sized_name_valid(name, name_len), 1)) {
#define DISPATCH_BEGIN(suffix, clock) \
        if (path == clock) return begin_sized_##suffix(name, name_len);
        INLINE_PATHS(DISPATCH_BEGIN)
#undef DISPATCH_BEGIN
    }
    return begin_sized_general(name, name_len);
}

SP_API int sp_region_end_n(const char *name, size_t name_len) {
    int path = spi_hot_path();
    if (__builtin_expect(sized_name_valid(name, name_len), 1)) {
#define DISPATCH_END(suffix, clock) \
        if (path == clock) return end_sized_##suffix(name, name_len);
        INLINE_PATHS(DISPATCH_END)
#undef DISPATCH_END
    }
    return end_sized_general(name, name_len);
}

SP_API int sp_region_n(const char *name, size_t name_len) {
    int status = SP_OK;
    int handle;
    if (!name || name_len == 0 || name_len > NAME_LEN_LIMIT) {
        status = name_len > NAME_LEN_LIMIT ? refuse_long_name(name_len) : SP_ERR_INVALID_ARGUMENT;
        handle = -1;
    } else {
        /* A recording thread resolves through its lock-free caches; before
         * setup (or on a thread that never recorded) the registry's lock is
         * taken, which is fine for a once-per-site resolution. */
        spi_thread *t = spi_thread_current();
        handle = t ? handle_of_sized(t, name, name_len, &status)
                   : spi_registry_intern(name, name_len, spi_name_hash(name, name_len), &status);
    }
    if (status != SP_OK) spi_status_remember(status);
    return handle < 0 ? SP_INVALID_REGION : handle;
}

SP_API int sp_region(const char *name) {
    return sp_region_n(name, name ? strlen(name) : 0);
}

SP_API const char *sp_region_name(int region) {
    const spi_region_name *entry = spi_registry_get(region);
    return entry ? entry->text : NULL;
}

SP_API int64_t sp_now_ns(void) { return spi_clock_now_ns(); }
