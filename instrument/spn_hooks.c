/*
 * spn_hooks.c - the hooks GCC's -finstrument-functions calls around every
 * function of gcc, g++ and gfortran builds: each call becomes a call of the
 * function's region through the public API (sp_begin / sp_end).
 *
 * The hot path keys on the function's address only: no symbol lookup and
 * no string per call. Each thread has a direct-mapped cache (address ->
 * table entry) in front of the shared table (spn_table.c), and a shadow
 * stack of the calls it opened, so that an exit always knows whether its
 * enter began a call: a call begun before its function was throttled (or
 * before sp_finalize) still ends, and a filtered-out function never ends
 * its caller's call. An exit whose function is not on top (a longjmp
 * skipped exits) ends the calls above the matching frame first; an exit
 * with no matching frame is ignored.
 *
 * The thread's block is reached through one initial-exec TLS pointer (8
 * bytes of static TLS, which a preloaded or dlopen'ed library may use);
 * the block itself is allocated at the thread's first hook and freed when
 * the thread exits (a pthread key destructor), so memory grows with live
 * threads, never with calls. Calls nested deeper than SPN_MAX_DEPTH are not
 * recorded (only counted, so their exits pair up).
 *
 * Every function here is no_instrument_function: a program that adds
 * -finstrument-functions to its global flags and builds this library with
 * them must not call the hooks from inside the hooks. The per-thread busy
 * flag covers what the hooks call while resolving a new address.
 */
#include "spn_hooks.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "scope_profiler.h"
#include "spn_table.h"

#define NO_INSTRUMENT __attribute__((no_instrument_function))
#define SPN_EXPORT __attribute__((visibility("default")))
#define CACHE_SLOTS 256u
#define SPN_MAX_DEPTH 1024u

typedef struct frame {
    const void *address;
    spn_function *function;
    int64_t start_ns; /* 0: not timed (throttling off or decided) */
    int began;        /* sp_begin was called: the exit calls sp_end */
} frame;

typedef struct spn_thread {
    const void *cached_address[CACHE_SLOTS];
    spn_function *cached_function[CACHE_SLOTS];
    frame stack[SPN_MAX_DEPTH];
    unsigned depth;
    unsigned long too_deep; /* enters past SPN_MAX_DEPTH not yet exited */
    int busy;
    int closed; /* spn_hooks_close_open ran on this thread */
} spn_thread;

static __thread spn_thread *self __attribute__((tls_model("initial-exec")));
static atomic_int enabled = 0;
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

NO_INSTRUMENT static void thread_exit(void *block) {
    free(block);
    self = NULL;
}

NO_INSTRUMENT static void make_key(void) { (void)pthread_key_create(&thread_key, thread_exit); }

NO_INSTRUMENT void spn_hooks_enable(int on) { atomic_store(&enabled, on); }

NO_INSTRUMENT static spn_thread *thread_attach(void) {
    if (!atomic_load_explicit(&enabled, memory_order_relaxed)) return NULL;
    (void)pthread_once(&key_once, make_key);
    spn_thread *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    self = t;
    (void)pthread_setspecific(thread_key, t);
    return t;
}

NO_INSTRUMENT static spn_function *function_of(spn_thread *t, const void *address) {
    unsigned slot = (unsigned)((uintptr_t)address >> 4) & (CACHE_SLOTS - 1);
    if (t->cached_address[slot] == address) return t->cached_function[slot];
    t->busy = 1;
    spn_function *f = spn_table_function(address);
    t->busy = 0;
    if (f) {
        t->cached_address[slot] = address;
        t->cached_function[slot] = f;
    }
    return f;
}

/* End the call of the frame on top (it was popped by the caller). */
NO_INSTRUMENT static void end_frame(const frame *f) {
    if (!f->began) return;
    int64_t end_ns = f->start_ns ? sp_now_ns() : 0;
    sp_end(f->function->region);
    if (f->start_ns) spn_table_count(f->function, (uint64_t)(end_ns - f->start_ns));
}

SPN_EXPORT NO_INSTRUMENT void __cyg_profile_func_enter(void *function, void *call_site) {
    (void)call_site;
    spn_thread *t = self;
    if (__builtin_expect(!t, 0) && !(t = thread_attach())) return;
    if (t->busy || t->closed) return;
    if (__builtin_expect(t->depth >= SPN_MAX_DEPTH, 0)) {
        t->too_deep++;
        return;
    }
    frame *f = &t->stack[t->depth++];
    f->address = function;
    f->function = function_of(t, function);
    f->start_ns = 0;
    f->began = 0;
    if (!f->function || f->function->region < 0) return;
    int state = atomic_load_explicit(&f->function->state, memory_order_relaxed);
    if (state == SPN_THROTTLED) return;
    sp_begin(f->function->region);
    f->began = 1;
    if (state == SPN_COUNTING && spn_throttling) f->start_ns = sp_now_ns();
}

SPN_EXPORT NO_INSTRUMENT void __cyg_profile_func_exit(void *function, void *call_site) {
    (void)call_site;
    spn_thread *t = self;
    if (!t || t->busy || t->closed) return;
    if (t->too_deep) {
        t->too_deep--;
        return;
    }
    unsigned match = t->depth;
    while (match > 0 && t->stack[match - 1].address != function) match--;
    if (match == 0) return;
    /* Frames above the match lost their exits (longjmp): end them first. */
    while (t->depth >= match) end_frame(&t->stack[--t->depth]);
}

NO_INSTRUMENT void spn_hooks_close_open(void) {
    spn_thread *t = self;
    if (!t) return;
    while (t->depth > 0) end_frame(&t->stack[--t->depth]);
    t->closed = 1;
}
