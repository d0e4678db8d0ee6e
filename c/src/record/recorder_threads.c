/*
 * recorder_threads.c - a recording thread's life: attach on its first call
 * in a session (state allocated off the hot path, under the session lock),
 * exit (its state published for finalize and made small:
 * recorder_retire.h), and release.
 *
 * Without the exit hook (a pthread key's destructor), a thread's hot block
 * could vanish before finalize reads it; the key is created once per
 * process.
 */
#include "record/recorder_threads.h"

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/error.h"
#include "record/clock.h"
#include "record/omp_runtime.h"
#include "record/recorder_retire.h"
#include "record/recorder_state.h"

#define INITIAL_STACK_FRAMES 64
#define INITIAL_CACHE_SLOTS 64
#define INITIAL_PATH_SLOTS 64

static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static bool exit_key_created = false;           /* set once, under exit_key_once */

/* The hot block's state into its spi_thread (the fields recorder.h marks
 * published), and the block forgotten: a thread calls this for itself
 * when it exits, finalize for the threads still alive. Under spi_session_lock.
 * The stack and chunk pointers need no copy: their slow paths keep
 * spi_thread up to date. */
void spi_thread_publish(spi_thread *t) {
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
 * destructor's calls on it are ignored: its hot block names no thread).
 * Then what finalize does not need is given back (spi_thread_retire), so
 * that a process of many short-lived threads keeps a small record per
 * exited thread, not a live thread's buffers. */
static void thread_exited(void *unused) {
    (void)unused;
    pthread_mutex_lock(&spi_session_lock);
    spi_thread *t = spi_tls.thread;
    if (t && spi_tls.generation != 0 &&
        spi_tls.generation == atomic_load_explicit(&spi_session_generation, memory_order_relaxed)) {
        t->end_ns = spi_clock_now_ns();
        t->cpu_ns = spi_clock_thread_cpu_ns();
        t->alive = false;
        spi_thread_publish(t);
        spi_hot_set_path(&spi_tls, SPI_PATH_GENERAL);
        spi_tls.thread = NULL;
        /* the block's stack and chunk pointers go stale below; nothing
         * reads them without a thread */
        spi_thread_retire(t);
    }
    pthread_mutex_unlock(&spi_session_lock);
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
int64_t spi_thread_take_anchor(spi_thread *t) {
    spi_anchor a;
    spi_clock_anchor(&a.ticks, &a.ns);
    (void)spi_anchor_list_add(&t->anchors, a);
    return a.ticks + atomic_load_explicit(&spi_session_anchor_interval, memory_order_relaxed);
}

void spi_thread_free(spi_thread *t) {
    for (spi_chunk *c = t->head; c;) {
        spi_chunk *next = c->next;
        spi_chunk_unmap(c); /* the arena's copies go with the session */
        c = next;
    }
    spi_free(t->stack);
    spi_free(t->recent);
    spi_free(t->cache_hashes);
    spi_free(t->cache_handles);
    spi_free(t->spilled);
    spi_free(t->nodes);
    spi_path_table_free(&t->paths);
    spi_anchor_list_free(&t->anchors);
    if (t->hook_state) t->hooks->release(t->hook_state);
    spi_free(t);
}

static spi_thread *new_thread(void) {
    spi_thread *t = spi_calloc(1, sizeof *t);
    if (!t) return NULL;
    t->stack = spi_calloc(INITIAL_STACK_FRAMES, sizeof *t->stack);
    t->recent = spi_calloc(SPI_RECENT_NAMES, sizeof *t->recent);
    t->cache_hashes = spi_calloc(INITIAL_CACHE_SLOTS, sizeof *t->cache_hashes);
    t->cache_handles = spi_malloc(INITIAL_CACHE_SLOTS * sizeof *t->cache_handles);
    if (!t->stack || !t->recent || !t->cache_hashes || !t->cache_handles) {
        spi_thread_free(t);
        return NULL;
    }
    t->anchors.mapped = true; /* taken at any begin, signal handlers' too */
    t->aggregate = atomic_load_explicit(&spi_session_aggregate, memory_order_acquire);
    t->tsc = atomic_load_explicit(&spi_session_tsc, memory_order_acquire);
    /* aggregate mode: the path table's first slots now, so that a new
     * path rarely allocates more than its node */
    if (t->aggregate && spi_path_table_reserve(&t->paths, 1, INITIAL_PATH_SLOTS) != SP_OK) {
        spi_thread_free(t);
        return NULL;
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
    t->omp_fork_host = t->aggregate && t->is_main && t->omp_primary_candidate;
    t->start_ns = spi_clock_now_ns();
    t->end_ns = -1;
    t->alive = true;
    if (t->is_main || pthread_getname_np(t->pthread, t->name, sizeof t->name) != 0)
        snprintf(t->name, sizeof t->name, "%s", t->is_main ? "MainThread" : "thread");
    else
        spi_omp_thread_name(t->omp_worker, t->name, t->name, sizeof t->name);
    /* Hooks (counters: perf fds, LIKWID thread init) attach here, on the
     * thread itself, off the hot path. */
    t->hooks = atomic_load_explicit(&spi_session_hooks, memory_order_acquire);
    if (t->hooks) t->hook_state = t->hooks->attach();
    return t;
}

/* The hot block of a thread that starts recording with t. */
static void start_hot(spi_thread *t, uint64_t generation) {
    spi_tls = (spi_hot){.generation = generation, .top = t->stack, .stack_base = t->stack,
                    .stack_end = t->stack + t->stack_capacity, .tsc = t->tsc,
                    .full = t->aggregate || t->hook_state || t->omp_primary_candidate};
    if (t->tsc) spi_tls.next_anchor = spi_thread_take_anchor(t);
    t->hot = &spi_tls;
}

/* The inline path of a thread that records with t (set last in attach). */
static int inline_path(const spi_thread *t) {
    if (t->hook_state || t->omp_primary_candidate) return SPI_PATH_GENERAL;
    /* an OpenMP worker's root calls go under its team's fork path, which
     * the out-of-line begin looks up */
    if (t->aggregate)
        return t->omp_worker ? SPI_PATH_GENERAL
               : t->tsc      ? SPI_PATH_AGGREGATE_TSC
                             : SPI_PATH_AGGREGATE_MONOTONIC;
    return t->tsc ? SPI_PATH_TSC : SPI_PATH_MONOTONIC;
}

/* Slow path of the hot path's generation check: the thread has no state
 * in this spi_live_session. Returns its state, NULL when it does not record. */
__attribute__((noinline)) spi_thread *spi_thread_attach(uint64_t generation) {
    spi_tls = (spi_hot){.generation = generation};
    if (generation == 0) return NULL; /* not recording: fast path from now on */
    pthread_once(&exit_key_once, create_exit_key);
    spi_thread *t = new_thread();
    pthread_mutex_lock(&spi_session_lock);
    if (atomic_load_explicit(&spi_session_generation, memory_order_relaxed) != generation) {
        pthread_mutex_unlock(&spi_session_lock); /* finalize won the race */
        if (t) spi_thread_free(t);
        spi_tls.generation = 0;
        return NULL;
    }
    if (!t) {
        pthread_mutex_unlock(&spi_session_lock);
        spi_tls.generation = 0; /* try again on the next call */
        spi_status_remember(SP_ERR_OUT_OF_MEMORY);
        return NULL;
    }
    bool watched = exit_key_created && pthread_setspecific(exit_key, t) == 0;
    if (!watched && !t->is_main) {
        pthread_mutex_unlock(&spi_session_lock); /* see create_exit_key */
        spi_thread_free(t);
        return NULL;
    }
    t->index = spi_live_session.thread_count++;
    if (spi_live_session.threads_tail) spi_live_session.threads_tail->next = t;
    else spi_live_session.threads = t;
    spi_live_session.threads_tail = t;
    start_hot(t, generation);
    pthread_mutex_unlock(&spi_session_lock);
    spi_tls.thread = t; /* last: from here on the hot path records */
    spi_hot_set_path(&spi_tls, inline_path(t));
    return t;
}
