/*
 * recorder.c - the hot path: per-thread begin/end recording (recorder.h).
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
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "record/clock.h"
#include "util/diag.h"
#include "util/error.h"
#include "record/openmp.h"
#include "record/registry.h"

/* initial-exec TLS avoids a __tls_get_addr call per access in the shared
 * library; the block fits easily in glibc's static TLS reserve. */
#define SPI_TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* The thread's hot state: everything begin and end touch, in one
 * thread-local object, each field one load from the TLS offset (GOT entry
 * -> %fs:field) rather than two (-> thread -> field).
 *
 * What the layout of the hot path is about: the vDSO's clock read is
 * ordered (rdtscp), so it waits for every earlier instruction. Out-of-order
 * execution still overlaps work that does not depend on the previous
 * reading, but two things are paid in full between two reads: the
 * arithmetic that depends on a reading (hence raw readings, clock.h) and,
 * measured to a lesser degree, the number of instructions. So sp_begin and
 * sp_end test one word, `path`, where they would otherwise test the
 * session's generation, the thread's state, the busy flag, the mode and
 * the clock.
 *
 * Only the owning thread touches the block while it records. Finalize on
 * another thread reads it through spi_thread.hot (publish_thread) and sets
 * its path to SPI_PATH_GENERAL, and a thread publishes its own before it
 * exits (thread_exited), after which its calls are no longer recorded. */
enum {
    /* not a trace call this thread can make inline: not recording (in
     * this session, or at all), aggregate mode, hooks, or an OpenMP
     * primary candidate; the out-of-line functions sort it out */
    SPI_PATH_GENERAL = 0,
    SPI_PATH_MONOTONIC = 1,  /* a trace on CLOCK_MONOTONIC, inline */
    SPI_PATH_TSC = 2,        /* a trace on the TSC, inline */
    /* inside a recording call: a signal handler that records on this
     * thread meanwhile is refused instead of corrupting the stack */
    SPI_PATH_BUSY = 3
};

typedef struct spi_hot {
    /* SPI_PATH_*: what this thread's next call does. Atomic (relaxed:
     * plain moves) because a signal handler on the thread and finalize on
     * another thread access it too; sp_setup and sp_finalize must not
     * run concurrently with recording, so nothing more is needed. */
    _Atomic int path;
    uint64_t generation;     /* the session this state belongs to */
    spi_thread *thread;      /* NULL: not recording (this generation) */
    spi_frame *top;          /* next free frame */
    spi_frame *stack_base;   /* == thread->stack */
    spi_frame *stack_end;    /* stack_base + thread->stack_capacity */
    spi_event *cursor;       /* next free event in the current chunk */
    spi_event *chunk_end;
    int64_t next_sequence;
    int64_t next_anchor;     /* TSC: take an anchor at a begin from here on */
    uint32_t known_regions;  /* handles below this were issued (a cache of
                                the registry's count) */
    bool tsc;                /* the session's clock: TSC ticks, else ns */
    /* aggregate mode, thread hooks or an OpenMP primary candidate: every
     * call takes the out-of-line path that does all of them */
    bool full;
} spi_hot;


static SPI_TLS spi_hot tls = {0};

static inline int path_of_thread(void) {
    return atomic_load_explicit(&tls.path, memory_order_relaxed);
}

static inline void set_path(spi_hot *h, int path) {
    atomic_store_explicit(&h->path, path, memory_order_relaxed);
}

static _Atomic uint64_t session_generation = 0; /* 0: not recording */
static uint64_t generation_counter = 0;         /* under session_lock */
static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static spi_session session;                     /* under session_lock */
static atomic_size_t buffer_bytes = 0;
/* The current session's thread hooks (recorder.h); NULL = none. */
static _Atomic(const spi_thread_hooks *) session_hooks = NULL;
/* The current session's mode and clock, read by threads attaching to it. */
static atomic_bool session_aggregate = false;
static atomic_bool session_tsc = false;
static _Atomic int64_t session_anchor_interval = 0; /* ticks */
static atomic_uint unmatched_reports = 0;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool exit_key_created = false;           /* set once, under exit_key_once */

#define INITIAL_STACK_FRAMES 64
#define INITIAL_CACHE_SLOTS 64
#define INITIAL_PATH_SLOTS 64
#define UNMATCHED_REPORT_LIMIT 10

/* ---- thread attach / exit ---------------------------------------------- */

/* The hot block's state into its spi_thread (the fields recorder.h marks
 * published), and the block forgotten: a thread calls this for itself
 * when it exits, finalize for the threads still alive. Under session_lock.
 * The stack and chunk pointers need no copy: their slow paths keep
 * spi_thread up to date. */
static void publish_thread(spi_thread *t) {
    const spi_hot *h = t->hot;
    if (!h) return;
    t->depth = (size_t)(h->top - h->stack_base);
    t->next_sequence = h->next_sequence;
    if (t->tail) t->tail->used = (size_t)(h->cursor - t->tail->events);
    t->hot = NULL;
}

/* Runs when a recording thread exits: its end time and exact CPU time are
 * only available now, and its thread-local block is about to go away, so
 * its state is published and the thread records nothing more (a later
 * destructor's calls on it are ignored). */
static void thread_exited(void *unused) {
    (void)unused;
    pthread_mutex_lock(&session_lock);
    spi_thread *t = tls.thread;
    if (t && tls.generation != 0 &&
        tls.generation == atomic_load_explicit(&session_generation, memory_order_relaxed)) {
        t->end_ns = spi_clock_now_ns();
        t->cpu_ns = spi_clock_thread_cpu_ns();
        t->alive = false;
        publish_thread(t);
        set_path(&tls, SPI_PATH_GENERAL);
        tls.thread = NULL;
    }
    pthread_mutex_unlock(&session_lock);
}

/* Without the exit hook, a thread's block could vanish before finalize
 * reads it, so then only the main thread records (its block lives as
 * long as the process). */
static void create_exit_key(void) {
    exit_key_created = pthread_key_create(&exit_key, thread_exited) == 0;
    if (!exit_key_created)
        spi_diag("cannot watch thread exits (no thread-specific key left): "
                 "only the main thread is recorded");
}

/* TSC: one (ticks, ns) pair for the conversion at finalize (tick_map.h);
 * returns the tick from which a begin takes the next one. An anchor that
 * cannot be stored (out of memory) only widens the interpolation. */
static int64_t take_anchor(spi_thread *t) {
    spi_anchor a;
    spi_clock_anchor(&a.ticks, &a.ns);
    (void)spi_anchor_list_add(&t->anchors, a);
    return a.ticks + atomic_load_explicit(&session_anchor_interval, memory_order_relaxed);
}

static void free_thread(spi_thread *t) {
    for (spi_chunk *c = t->head; c;) {
        spi_chunk *next = c->next;
        spi_unmap(c, c->bytes);
        c = next;
    }
    spi_free(t->stack);
    spi_free(t->cache_hashes);
    spi_free(t->cache_handles);
    spi_free(t->spilled);
    spi_free(t->nodes);
    spi_free(t->path_keys);
    spi_free(t->path_nodes);
    spi_anchor_list_free(&t->anchors);
    if (t->hook_state) t->hooks->release(t->hook_state);
    spi_free(t);
}

static spi_thread *new_thread(void) {
    spi_thread *t = spi_calloc(1, sizeof *t);
    if (!t) return NULL;
    t->stack = spi_calloc(INITIAL_STACK_FRAMES, sizeof *t->stack);
    t->cache_hashes = spi_calloc(INITIAL_CACHE_SLOTS, sizeof *t->cache_hashes);
    t->cache_handles = spi_malloc(INITIAL_CACHE_SLOTS * sizeof *t->cache_handles);
    if (!t->stack || !t->cache_hashes || !t->cache_handles) {
        free_thread(t);
        return NULL;
    }
    t->anchors.mapped = true; /* taken at any begin, signal handlers' too */
    t->aggregate = atomic_load_explicit(&session_aggregate, memory_order_acquire);
    t->tsc = atomic_load_explicit(&session_tsc, memory_order_acquire);
    if (t->aggregate) {
        t->path_keys = spi_calloc(INITIAL_PATH_SLOTS, sizeof *t->path_keys);
        t->path_nodes = spi_malloc(INITIAL_PATH_SLOTS * sizeof *t->path_nodes);
        if (!t->path_keys || !t->path_nodes) {
            free_thread(t);
            return NULL;
        }
        memset(t->path_nodes, 0xff, INITIAL_PATH_SLOTS * sizeof *t->path_nodes);
        t->path_capacity = INITIAL_PATH_SLOTS;
    }
    t->stack_capacity = INITIAL_STACK_FRAMES;
    t->cache_capacity = INITIAL_CACHE_SLOTS;
    memset(t->cache_handles, 0xff, INITIAL_CACHE_SLOTS * sizeof *t->cache_handles);
    t->pthread = pthread_self();
    t->omp_worker = spi_omp_thread_is_worker();
    t->omp_primary_candidate = spi_omp_present() && !t->omp_worker;
    t->ident = (int64_t)(uintptr_t)t->pthread;
    t->native_id = (int64_t)syscall(SYS_gettid);
    t->is_main = t->native_id == (int64_t)getpid();
    t->start_ns = spi_clock_now_ns();
    t->end_ns = -1;
    t->alive = true;
    if (t->is_main || pthread_getname_np(t->pthread, t->name, sizeof t->name) != 0)
        snprintf(t->name, sizeof t->name, "%s", t->is_main ? "MainThread" : "thread");
    /* Hooks (counters: perf fds, LIKWID thread init) attach here, on the
     * thread itself, off the hot path. */
    t->hooks = atomic_load_explicit(&session_hooks, memory_order_acquire);
    if (t->hooks) t->hook_state = t->hooks->attach();
    return t;
}

/* The hot block of a thread that starts recording with t. */
static void start_hot(spi_thread *t, uint64_t generation) {
    tls = (spi_hot){.generation = generation, .top = t->stack, .stack_base = t->stack,
                    .stack_end = t->stack + t->stack_capacity, .tsc = t->tsc,
                    .full = t->aggregate || t->hook_state || t->omp_primary_candidate};
    if (t->tsc) tls.next_anchor = take_anchor(t);
    t->hot = &tls;
}

/* The inline path of a thread that records with t (set last in attach). */
static int inline_path(const spi_thread *t) {
    if (t->aggregate || t->hook_state || t->omp_primary_candidate) return SPI_PATH_GENERAL;
    return t->tsc ? SPI_PATH_TSC : SPI_PATH_MONOTONIC;
}

/* Slow path of the hot path's generation check: the thread has no state
 * in this session. Returns its state, NULL when it does not record. */
static __attribute__((noinline)) spi_thread *attach_thread(uint64_t generation) {
    tls = (spi_hot){.generation = generation};
    if (generation == 0) return NULL; /* not recording: fast path from now on */
    pthread_once(&exit_key_once, create_exit_key);
    spi_thread *t = new_thread();
    pthread_mutex_lock(&session_lock);
    if (atomic_load_explicit(&session_generation, memory_order_relaxed) != generation) {
        pthread_mutex_unlock(&session_lock); /* finalize won the race */
        if (t) free_thread(t);
        tls.generation = 0;
        return NULL;
    }
    if (!t) {
        pthread_mutex_unlock(&session_lock);
        tls.generation = 0; /* try again on the next call */
        spi_status_remember(SP_ERR_OUT_OF_MEMORY);
        return NULL;
    }
    bool watched = exit_key_created && pthread_setspecific(exit_key, t) == 0;
    if (!watched && !t->is_main) {
        pthread_mutex_unlock(&session_lock); /* see create_exit_key */
        free_thread(t);
        return NULL;
    }
    t->index = session.thread_count++;
    if (session.threads_tail) session.threads_tail->next = t;
    else session.threads = t;
    session.threads_tail = t;
    start_hot(t, generation);
    pthread_mutex_unlock(&session_lock);
    tls.thread = t; /* last: from here on the hot path records */
    set_path(&tls, inline_path(t));
    return t;
}

/* The calling thread's state, NULL when it does not record. One relaxed
 * load and a compare when it has state in this session. */
static inline spi_thread *current_thread(void) {
    uint64_t generation = atomic_load_explicit(&session_generation, memory_order_relaxed);
    if (__builtin_expect(generation == tls.generation, 1)) return tls.thread;
    return attach_thread(generation);
}

/* ---- buffers ------------------------------------------------------------ */

/* The buffers' slow paths below run on the recording thread itself, so
 * they update its hot block (tls) and its spi_thread together. */

static __attribute__((noinline, cold)) int grow_stack(void) {
    spi_thread *t = tls.thread;
    size_t capacity = t->stack_capacity * 2;
    spi_frame *grown = spi_reallocarray(t->stack, capacity, sizeof *grown);
    if (!grown) return SP_ERR_OUT_OF_MEMORY;
    tls.top = grown + (tls.top - tls.stack_base);
    tls.stack_base = grown;
    tls.stack_end = grown + capacity;
    t->stack = grown;
    t->stack_capacity = capacity;
    return SP_OK;
}

/* Link a fresh chunk (its bytes already counted in buffer_bytes). */
static void start_chunk(spi_thread *t, spi_chunk *chunk) {
    if (t->tsc) tls.next_anchor = take_anchor(t); /* one per chunk: thousands of events */
    tls.cursor = chunk->events;
    tls.chunk_end = chunk->events + chunk->capacity;
}

/* Flush mode, the limit reached: write the thread's full chunks to the
 * spill file in order, one write each, keep the last one's memory for the
 * next events and give the others' back. No lock: the file offset is
 * reserved atomically (spill.h). A failed write (disk full, I/O error)
 * turns flushing off for the whole session, with one message: the chunks
 * not written stay in memory and recorded, later calls past the limit are
 * dropped and counted. */
static int spill_chunks(spi_thread *t) {
    spi_spill *spill = session.spill;
    t->tail->used = (size_t)(tls.cursor - t->tail->events);
    while (t->head) {
        spi_chunk *c = t->head;
        if (c->used) {
            if (t->spilled_count == t->spilled_capacity) {
                size_t capacity = t->spilled_capacity ? t->spilled_capacity * 2 : 64;
                spi_spilled_chunk *grown = spi_reallocarray(t->spilled, capacity, sizeof *grown);
                if (!grown) return SP_ERR_OUT_OF_MEMORY;
                t->spilled = grown;
                t->spilled_capacity = capacity;
            }
            uint64_t offset;
            int error = spi_spill_append(spill, c->events, c->used * sizeof(spi_event), &offset);
            if (error) {
                if (!atomic_exchange(&spill->failed, true))
                    spi_diag("cannot write the spill file beside %s (%s): from now on calls "
                             "past the %zu-byte buffer limit are dropped and counted",
                             session.spill_label, strerror(error), session.buffer_limit_bytes);
                return SP_ERR_BUFFER_LIMIT;
            }
            t->spilled[t->spilled_count++] = (spi_spilled_chunk){offset, c->used};
        }
        if (c == t->tail) break;
        t->head = c->next;
        atomic_fetch_sub(&buffer_bytes, c->bytes);
        spi_unmap(c, c->bytes);
    }
    t->tail->used = 0;
    start_chunk(t, t->tail);
    return SP_OK;
}

static bool flushing(void) {
    return session.spill && !atomic_load_explicit(&session.spill->failed, memory_order_relaxed);
}

/* A thread whose sequences would no longer fit an event's key (recorder.h)
 * records nothing more: its later calls are dropped and counted. */
static int sequence_limit_reached(spi_thread *t) {
    static atomic_bool reported = false;
    if (!atomic_exchange(&reported, true))
        spi_diag("thread %d began %" PRId64 " calls, the most one thread can record in a "
                 "trace; its later calls are dropped and counted (aggregate mode has no "
                 "such limit)", t->index, tls.next_sequence);
    return SP_ERR_BUFFER_LIMIT;
}

static int add_chunk(spi_thread *t) {
    /* the only check: recorder.h says why it is enough */
    if (__builtin_expect(tls.next_sequence >= SPI_SEQUENCE_LIMIT, 0))
        return sequence_limit_reached(t);
    size_t bytes = t->head ? SPI_CHUNK_BYTES : SPI_FIRST_CHUNK_BYTES;
    size_t limit = session.buffer_limit_bytes;
    if (limit && flushing()) {
        /* whole chunks only (a small one would only mean more writes);
         * a thread's first chunk is granted past the limit, so every
         * thread can record: the bound is limit + 64 KiB per thread */
        size_t before = atomic_fetch_add(&buffer_bytes, bytes);
        if (t->head && before + bytes > limit) {
            atomic_fetch_sub(&buffer_bytes, bytes);
            return spill_chunks(t);
        }
    } else if (limit) {
        /* near the limit, a smaller chunk of what is left: every call that
         * fits is recorded, however small the limit */
        size_t before = atomic_load(&buffer_bytes);
        for (;;) {
            size_t left = before < limit ? limit - before : 0;
            size_t take = bytes < left ? bytes : left;
            if (take < sizeof(spi_chunk) + 64 * sizeof(spi_event)) return SP_ERR_BUFFER_LIMIT;
            if (atomic_compare_exchange_weak(&buffer_bytes, &before, before + take)) {
                bytes = take;
                break;
            }
        }
    } else {
        atomic_fetch_add(&buffer_bytes, bytes);
    }
    spi_chunk *chunk = spi_map_populated(bytes);
    if (!chunk) {
        atomic_fetch_sub(&buffer_bytes, bytes);
        return SP_ERR_OUT_OF_MEMORY;
    }
    chunk->bytes = bytes;
    chunk->capacity = (bytes - sizeof *chunk) / sizeof(spi_event);
    chunk->next = NULL;
    chunk->used = 0;
    if (t->tail) t->tail->used = (size_t)(tls.cursor - t->tail->events);
    if (t->tail) t->tail->next = chunk;
    else t->head = chunk;
    t->tail = chunk;
    start_chunk(t, chunk);
    return SP_OK;
}

/* ---- aggregate mode: call paths ----------------------------------------- */

static inline uint64_t path_key(int32_t parent, int region) {
    return ((uint64_t)(uint32_t)(parent + 1) << 32) | (uint32_t)region;
}

/* Fibonacci hashing of the two small integers: one multiply, good spread. */
static inline size_t path_slot(uint64_t key, size_t capacity) {
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (capacity - 1);
}

static int grow_path_table(spi_thread *t) {
    size_t capacity = t->path_capacity * 2;
    uint64_t *keys = spi_calloc(capacity, sizeof *keys);
    int32_t *nodes = spi_malloc(capacity * sizeof *nodes);
    if (!keys || !nodes) {
        spi_free(keys);
        spi_free(nodes);
        return SP_ERR_OUT_OF_MEMORY;
    }
    memset(nodes, 0xff, capacity * sizeof *nodes);
    for (size_t i = 0; i < t->path_capacity; i++) {
        if (t->path_nodes[i] < 0) continue;
        size_t j = path_slot(t->path_keys[i], capacity);
        while (nodes[j] >= 0) j = (j + 1) & (capacity - 1);
        keys[j] = t->path_keys[i];
        nodes[j] = t->path_nodes[i];
    }
    spi_free(t->path_keys);
    spi_free(t->path_nodes);
    t->path_keys = keys;
    t->path_nodes = nodes;
    t->path_capacity = capacity;
    return SP_OK;
}

/* A new path: the only allocation of aggregate recording. */
static int32_t add_path(spi_thread *t, int32_t parent, int region, uint64_t key) {
    if (t->node_count >= INT32_MAX) return -1;
    if ((t->node_count + 1) * 2 > t->path_capacity && grow_path_table(t) != SP_OK) return -1;
    if (t->node_count == t->node_capacity) {
        size_t capacity = t->node_capacity ? t->node_capacity * 2 : 64;
        spi_path_node *grown = spi_reallocarray(t->nodes, capacity, sizeof *grown);
        if (!grown) return -1;
        t->nodes = grown;
        t->node_capacity = capacity;
    }
    int32_t node = (int32_t)t->node_count++;
    t->nodes[node] = (spi_path_node){.parent = parent, .region = (uint32_t)region,
                                     .min_ns = INT64_MAX, .max_ns = INT64_MIN,
                                     .start_min_ns = INT64_MAX, .end_max_ns = INT64_MIN};
    size_t i = path_slot(key, t->path_capacity);
    while (t->path_nodes[i] >= 0) i = (i + 1) & (t->path_capacity - 1);
    t->path_keys[i] = key;
    t->path_nodes[i] = node;
    return node;
}

/* The path of a call of `region` made inside the path `parent` (-1: none). */
static inline int32_t path_of(spi_thread *t, int32_t parent, int region) {
    /* recursion: a run of one region stays on one path (the summary
     * table's collapse), so recursion depth never creates paths */
    if (parent >= 0 && t->nodes[parent].region == (uint32_t)region) {
        t->nodes[parent].recursions++;
        return parent;
    }
    uint64_t key = path_key(parent, region);
    size_t mask = t->path_capacity - 1;
    for (size_t i = path_slot(key, t->path_capacity); t->path_nodes[i] >= 0; i = (i + 1) & mask)
        if (t->path_keys[i] == key) return t->path_nodes[i];
    return add_path(t, parent, region, key);
}

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
    return clock == SPI_PATH_GENERAL ? tls.tsc : clock == SPI_PATH_TSC;
}

static inline void read_end(spi_reading *now, int clock) {
    if (on_tsc(clock)) now->ticks = spi_clock_ticks();
    else spi_clock_read(&now->ts);
}

/* A frame's start and a reading in the session's clock (ns, or ticks). */
static inline int64_t frame_start(const spi_frame *frame) {
    return tls.tsc ? frame->start_ticks : spi_clock_ns(&frame->start_ts);
}

static inline int64_t reading_time(const spi_reading *now) {
    return tls.tsc ? now->ticks : spi_clock_ns(&now->ts);
}

/* The cold parts of push_call and pop_call, out of line so the trace hot
 * path keeps few registers and no stack frame of its own. */
static __attribute__((noinline, cold)) int32_t begin_on_path(spi_thread *t, int region) {
    return path_of(t, tls.top > tls.stack_base ? tls.top[-1].node : -1, region);
}

/* TSC: the anchor due at this begin (a thread that records keeps its map
 * exact), then the begin's own tick. */
static __attribute__((noinline, cold)) int64_t anchored_ticks(void) {
    tls.next_anchor = take_anchor(tls.thread);
    return spi_clock_ticks();
}

/* The start of a call: last, closest to the user's code, and stored as
 * read (clock.h: the vDSO writes it straight into the frame). */
static inline void begin_clock(spi_frame *frame, int clock) {
    if (on_tsc(clock)) {
        int64_t ticks = spi_clock_ticks();
        if (__builtin_expect(ticks >= tls.next_anchor, 0)) ticks = anchored_ticks();
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
    spi_frame *frame = tls.top;
    if (__builtin_expect(frame == tls.stack_end, 0)) {
        if (grow_stack() != SP_OK) return SP_ERR_OUT_OF_MEMORY;
        frame = tls.top;
    }
    uint32_t region_bits = (uint32_t)region;
    spi_thread *t = tls.thread;
    if (full) {
        frame->node = -1;
        frame->child_ns = 0;
        if (t->aggregate) {
            frame->node = begin_on_path(t, region);
            if (__builtin_expect(frame->node < 0, 0)) return SP_ERR_OUT_OF_MEMORY;
        }
        if (t->omp_primary_candidate && spi_omp_in_parallel())
            region_bits |= SPI_EVENT_IN_PARALLEL;
    }
    frame->key = spi_event_key(tls.next_sequence++, region_bits);
    frame->region = region_bits;
    tls.top = frame + 1;
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
    return tls.full ? push_call_full(region) : push_call(region, false, SPI_PATH_GENERAL);
}

/* Counts one report against the shared limit; true when it may be printed
 * (the last one printed says that further ones are suppressed). */
static bool may_report(const char **suffix) {
    unsigned reports = atomic_fetch_add(&unmatched_reports, 1);
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
    for (const spi_frame *f = tls.top; f-- > tls.stack_base && !open_below;)
        open_below = SPI_FRAME_REGION(f) == (uint32_t)region;
    const spi_region_name *open =
        tls.top > tls.stack_base ? spi_registry_get((int)SPI_FRAME_REGION(tls.top - 1)) : NULL;
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
 * is already popped: its parent, if any, is the new top). */
static __attribute__((noinline)) void end_on_path(spi_thread *t, const spi_frame *frame,
                                                  const spi_reading *now) {
    int64_t start_ns = frame_start(frame), now_ns = reading_time(now);
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
    if (tls.top > tls.stack_base) tls.top[-1].child_ns += d;
}

/* A full chunk: a new one (or flushed and reused); the call is dropped and
 * counted when none can be had. */
static __attribute__((noinline, cold)) int next_chunk(spi_thread *t) {
    int status = add_chunk(t);
    if (status != SP_OK) t->dropped_events++;
    return status;
}

/* An end, its time already read: pop the frame, append its event. `full`
 * as in push_call. The event's times stay raw (spi_event): its start is
 * converted from the frame, which does not wait for this end's reading,
 * and the reading is only stored. */
static __attribute__((always_inline)) inline int pop_call(int region, const spi_reading *now,
                                                          bool full, int clock) {
    spi_frame *top = tls.top;
    /* only the full path marks frames SPI_EVENT_IN_PARALLEL */
    if (__builtin_expect(top == tls.stack_base ||
                             (full ? SPI_FRAME_REGION(top - 1) : top[-1].region) != (uint32_t)region,
                         0))
        return report_bad_end(region);
    const spi_frame *frame = --top;
    tls.top = top;
    if (full) {
        spi_thread *t = tls.thread;
        /* hooks (counters): after the match check, so their stack pops in step */
        if (t->hook_state) t->hooks->end(t->hook_state, region);
        if (t->aggregate) {
            end_on_path(t, frame, now);
            return SP_OK;
        }
    }
    if (__builtin_expect(tls.cursor == tls.chunk_end, 0)) {
        int status = next_chunk(tls.thread);
        if (status != SP_OK) return status;
    }
    spi_event *event = tls.cursor++;
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
    return pop_call(region, now, true, SPI_PATH_GENERAL);
}

/* An end on the out-of-line paths. */
static inline int end_call(int region, const spi_reading *now) {
    return tls.full ? pop_call_full(region, now) : pop_call(region, now, false, SPI_PATH_GENERAL);
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

static struct spi_recent_name *recent_slot(spi_thread *t, const char *name) {
    return &t->recent[((uintptr_t)name >> 3) & (SPI_RECENT_NAMES - 1)];
}

/* Handle of a NUL-terminated name: the pointer-keyed slot first (one
 * strcmp on a hit), then the hashed cache (strlen + hash + memcmp). */
static inline int handle_of_cstr(spi_thread *t, const char *name, int *status) {
    struct spi_recent_name *slot = recent_slot(t, name);
    if (slot->pointer == name && strcmp(slot->text, name) == 0) return slot->handle;
    size_t len = strlen(name);
    if (len == 0) {
        *status = SP_ERR_INVALID_ARGUMENT;
        return -1;
    }
    int handle = cached_handle(t, name, len, status);
    if (handle >= 0) {
        const spi_region_name *entry = spi_registry_get(handle);
        *slot = (struct spi_recent_name){name, entry->text, entry->len, handle};
    }
    return handle;
}

/* Handle of a sized name (no NUL), with the same two levels. */
static inline int handle_of_sized(spi_thread *t, const char *name, size_t len, int *status) {
    struct spi_recent_name *slot = recent_slot(t, name);
    if (slot->pointer == name && slot->len == len && memcmp(slot->text, name, len) == 0)
        return slot->handle;
    int handle = cached_handle(t, name, len, status);
    if (handle >= 0) {
        const spi_region_name *entry = spi_registry_get(handle);
        *slot = (struct spi_recent_name){name, entry->text, entry->len, handle};
    }
    return handle;
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
    int path = path_of_thread();
    if (__builtin_expect(path == SPI_PATH_BUSY, 0)) return -1;
    set_path(&tls, SPI_PATH_BUSY);
    atomic_signal_fence(memory_order_seq_cst);
    return path;
}

static inline void leave(int path) {
    atomic_signal_fence(memory_order_seq_cst);
    set_path(&tls, path);
}

SP_API int sp_region_begin(const char *name) {
    if (!name) return invalid_name();
    spi_thread *t = current_thread();
    if (!t) return name[0] ? SP_OK : invalid_name();
    int path = enter();
    if (path < 0) return finish(SP_ERR_UNSUPPORTED);
    int status = SP_OK;
    int handle = handle_of_cstr(t, name, &status);
    if (handle >= 0) status = begin_call(handle);
    leave(path);
    return finish(status);
}

SP_API int sp_region_end(const char *name) {
    if (!name) return invalid_name();
    spi_thread *t = current_thread();
    if (!t) return name[0] ? SP_OK : invalid_name();
    spi_reading now;
    read_end(&now, SPI_PATH_GENERAL); /* first: the lookup is not the user's time */
    int path = enter();
    if (path < 0) return finish(SP_ERR_UNSUPPORTED);
    int status = SP_OK;
    int handle = handle_of_cstr(t, name, &status);
    if (handle >= 0) status = end_call(handle, &now);
    leave(path);
    return finish(status);
}

SP_API int sp_region_begin_n(const char *name, size_t name_len) {
    if (!name || name_len == 0) return invalid_name();
    spi_thread *t = current_thread();
    if (!t) return SP_OK;
    int path = enter();
    if (path < 0) return finish(SP_ERR_UNSUPPORTED);
    int status = SP_OK;
    int handle = handle_of_sized(t, name, name_len, &status);
    if (handle >= 0) status = begin_call(handle);
    leave(path);
    return finish(status);
}

SP_API int sp_region_end_n(const char *name, size_t name_len) {
    if (!name || name_len == 0) return invalid_name();
    spi_thread *t = current_thread();
    if (!t) return SP_OK;
    spi_reading now;
    read_end(&now, SPI_PATH_GENERAL);
    int path = enter();
    if (path < 0) return finish(SP_ERR_UNSUPPORTED);
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
    tls.known_regions = (uint32_t)spi_registry_count();
    return (unsigned)region < tls.known_regions;
}

/* Whether the calling thread records (attaching it to the session on its
 * first call), for the calls that need the state only on slow paths. */
static inline bool recording(void) {
    uint64_t generation = atomic_load_explicit(&session_generation, memory_order_relaxed);
    if (__builtin_expect(generation == tls.generation, 1)) return tls.thread != NULL;
    return attach_thread(generation) != NULL;
}

/* sp_begin and sp_end when the thread's path is not an inline one (not
 * recording yet, or at all, aggregate mode, hooks, OpenMP, busy) or the
 * handle is past the ones the thread knows. */
static __attribute__((noinline)) void begin_general(int region) {
    if (!recording()) return;
    if (__builtin_expect((unsigned)region >= tls.known_regions, 0) && !handle_issued(region)) {
        spi_status_remember(report_invalid_handle(region));
        return;
    }
    int path = enter();
    if (path < 0) {
        spi_status_remember(SP_ERR_UNSUPPORTED);
        return;
    }
    int status = begin_call(region);
    leave(path);
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
}

static __attribute__((noinline)) void end_general(int region) {
    if (!recording()) return;
    spi_reading now;
    read_end(&now, SPI_PATH_GENERAL);
    int path = enter();
    if (path < 0) {
        spi_status_remember(SP_ERR_UNSUPPORTED);
        return;
    }
    int status = end_call(region, &now);
    leave(path);
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
}

/* The inline paths: `clock` is the thread's path, so the thread records a
 * trace, is not busy and its state belongs to this session (finalize and
 * thread exit set the path back to SPI_PATH_GENERAL). */
static __attribute__((always_inline)) inline void begin_inline(int region, int clock) {
    set_path(&tls, SPI_PATH_BUSY);
    atomic_signal_fence(memory_order_seq_cst);
    int status = push_call(region, false, clock);
    leave(clock);
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
}

static __attribute__((always_inline)) inline void end_inline(int region, int clock) {
    spi_reading now;
    read_end(&now, clock);
    set_path(&tls, SPI_PATH_BUSY);
    atomic_signal_fence(memory_order_seq_cst);
    int status = pop_call(region, &now, false, clock);
    leave(clock);
    if (__builtin_expect(status != SP_OK, 0)) spi_status_remember(status);
}

SP_API void sp_begin(int region) {
    int path = path_of_thread();
    if (__builtin_expect((unsigned)region < tls.known_regions, 1)) {
        if (__builtin_expect(path == SPI_PATH_MONOTONIC, 1)) return begin_inline(region, SPI_PATH_MONOTONIC);
        if (path == SPI_PATH_TSC) return begin_inline(region, SPI_PATH_TSC);
    }
    begin_general(region);
}

SP_API void sp_end(int region) {
    int path = path_of_thread();
    if (__builtin_expect(path == SPI_PATH_MONOTONIC, 1)) return end_inline(region, SPI_PATH_MONOTONIC);
    if (path == SPI_PATH_TSC) return end_inline(region, SPI_PATH_TSC);
    end_general(region);
}

SP_API int sp_region_n(const char *name, size_t name_len) {
    int status = SP_OK;
    int handle;
    if (!name || name_len == 0) {
        status = SP_ERR_INVALID_ARGUMENT;
        handle = -1;
    } else {
        /* A recording thread resolves through its lock-free caches; before
         * setup (or on a thread that never recorded) the registry's lock is
         * taken, which is fine for a once-per-site resolution. */
        spi_thread *t = current_thread();
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

/* ---- session ------------------------------------------------------------ */

int spi_recorder_start(const spi_recording *recording) {
    pthread_mutex_lock(&session_lock);
    session = (spi_session){.buffer_limit_bytes = recording->buffer_limit_bytes,
                            .spill = recording->spill, .spill_label = recording->spill_label,
                            .aggregate = recording->aggregate, .tsc = recording->tsc};
    if (session.tsc) {
        /* Two anchors 100 us apart give the rate that turns the anchor
         * interval into ticks (it only decides how often anchors are
         * taken; the conversion uses every anchor). */
        spi_anchor first, second;
        spi_clock_anchor(&first.ticks, &first.ns);
        do spi_clock_anchor(&second.ticks, &second.ns);
        while (second.ns - first.ns < 100000 || second.ticks <= first.ticks);
        double ticks_per_ns = (double)(second.ticks - first.ticks) / (double)(second.ns - first.ns);
        session.anchor_interval_ticks = (int64_t)(SPI_ANCHOR_INTERVAL_NS * ticks_per_ns);
        if (spi_anchor_list_add(&session.anchors, first) != SP_OK ||
            spi_anchor_list_add(&session.anchors, second) != SP_OK) {
            spi_anchor_list_free(&session.anchors);
            spi_spill_close(session.spill);
            session.spill = NULL;
            pthread_mutex_unlock(&session_lock);
            return SP_ERR_OUT_OF_MEMORY;
        }
    }
    atomic_store_explicit(&session_anchor_interval, session.anchor_interval_ticks,
                          memory_order_relaxed);
    atomic_store_explicit(&session_tsc, session.tsc, memory_order_release);
    /* release: a thread that sees the new generation sees these */
    atomic_store_explicit(&session_hooks, recording->hooks, memory_order_release);
    atomic_store_explicit(&session_aggregate, recording->aggregate, memory_order_release);
    atomic_store(&buffer_bytes, 0);
    atomic_store(&unmatched_reports, 0);
    atomic_store_explicit(&session_generation, ++generation_counter, memory_order_relaxed);
    pthread_mutex_unlock(&session_lock);
    return SP_OK;
}

spi_session spi_recorder_stop(void) {
    pthread_mutex_lock(&session_lock);
    atomic_store_explicit(&session_generation, 0, memory_order_relaxed);
    if (session.tsc) {
        spi_anchor last;
        spi_clock_anchor(&last.ticks, &last.ns);
        (void)spi_anchor_list_add(&session.anchors, last);
    }
    spi_session stopped = session;
    stopped.raw_ends = !stopped.aggregate; /* spi_event */
    session = (spi_session){0};
    /* Threads still alive: the CPU time so far (a lower bound, as the
     * format documents). A live thread cannot pass its exit hook while we
     * hold the lock, so its pthread_t is valid here. */
    for (spi_thread *t = stopped.threads; t; t = t->next) {
        if (t->hot) set_path(t->hot, SPI_PATH_GENERAL); /* see spi_hot */
        publish_thread(t);
        if (!t->alive) continue;
        if (pthread_equal(t->pthread, pthread_self())) {
            t->cpu_ns = spi_clock_thread_cpu_ns();
        } else {
            clockid_t cpu_clock;
            struct timespec ts;
            if (pthread_getcpuclockid(t->pthread, &cpu_clock) == 0 &&
                clock_gettime(cpu_clock, &ts) == 0)
                t->cpu_ns = (int64_t)ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
        }
    }
    pthread_mutex_unlock(&session_lock);
    set_path(&tls, SPI_PATH_GENERAL);
    tls.thread = NULL;
    tls.generation = 0;
    return stopped;
}

void spi_recorder_release(spi_session *stopped) {
    for (spi_thread *t = stopped->threads; t;) {
        spi_thread *next = t->next;
        free_thread(t);
        t = next;
    }
    spi_anchor_list_free(&stopped->anchors);
    if (stopped->spilled_map_live) spi_tick_map_free(&stopped->spilled_map);
    spi_spill_close(stopped->spill);
    *stopped = (spi_session){0};
}

bool spi_session_spilled(const spi_session *stopped) {
    for (const spi_thread *t = stopped->threads; t; t = t->next)
        if (t->spilled_count) return true;
    return false;
}

size_t spi_recorder_buffer_bytes(void) { return atomic_load(&buffer_bytes); }

uint64_t spi_recorder_bad_ends(void) { return atomic_load(&unmatched_reports); }

/* ---- fork ------------------------------------------------------------------- */

void spi_recorder_fork_prepare(void) {
    pthread_mutex_lock(&session_lock);
    spi_registry_fork_prepare();
}

void spi_recorder_fork_parent(void) {
    spi_registry_fork_parent();
    pthread_mutex_unlock(&session_lock);
}

void spi_recorder_fork_child(void) {
    spi_registry_fork_child();
    /* The child records nothing of the parent's session: its generation
     * ends, so every thread-local state is stale, and the copies of the
     * parent's threads and buffers are released (the child has one thread,
     * so nothing else can be using them). */
    atomic_store_explicit(&session_generation, 0, memory_order_relaxed);
    set_path(&tls, SPI_PATH_GENERAL); /* its state is released below */
    spi_session orphan = session;
    session = (spi_session){0};
    atomic_store(&buffer_bytes, 0);
    pthread_mutex_unlock(&session_lock);
    spi_recorder_release(&orphan);
}
