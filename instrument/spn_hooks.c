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
 * Calls that are not recorded (excluded by the filter, throttled, past
 * SPN_MAX_DEPTH) are the hot case of a real code: its tiny functions. They
 * push no frame: each depth of the shadow stack has a count of the skipped
 * calls open inside its top frame, and since calls nest, an exit finds its
 * own skipped enter there first (one load, one decrement). That halves
 * what the hooks cost such a call (bench/instrument: <= 5 ns).
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
} frame; /* a call that began (sp_begin): its exit calls sp_end */

typedef struct spn_thread {
    unsigned depth;
    int blocked; /* resolving a new address (busy) or spn_hooks_close_open ran */
    const void *cached_address[CACHE_SLOTS];
    spn_function *cached_function[CACHE_SLOTS];
    /* skipped[d]: calls not recorded, open while `depth` was d (their
     * exits come before the exit of frame d - 1); skipped[SPN_MAX_DEPTH]
     * also counts the calls too deep to record. */
    unsigned long skipped[SPN_MAX_DEPTH + 1];
    frame stack[SPN_MAX_DEPTH];
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

NO_INSTRUMENT __attribute__((noinline)) static spn_thread *thread_attach(void) {
    if (!atomic_load_explicit(&enabled, memory_order_relaxed)) return NULL;
    (void)pthread_once(&key_once, make_key);
    spn_thread *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    self = t;
    (void)pthread_setspecific(thread_key, t);
    return t;
}

/* The hooks' fast paths call no function but in tail position, so the
 * compiler saves no register for them: what a skipped call costs is a few
 * loads and one store. Everything else is out of line (noinline). */
#define SLOT_OF(address) ((unsigned)((uintptr_t)(address) >> 4) & (CACHE_SLOTS - 1))

/* A cache miss: the shared table (a new address is resolved there). */
NO_INSTRUMENT __attribute__((noinline)) static spn_function *function_miss(spn_thread *t,
                                                                          const void *address) {
    unsigned slot = SLOT_OF(address);
    t->blocked = 1;
    spn_function *f = spn_table_function(address);
    t->blocked = 0;
    if (f) {
        t->cached_address[slot] = address;
        t->cached_function[slot] = f;
    }
    return f;
}

/* End the call of the frame on top (it was popped by the caller). */
NO_INSTRUMENT __attribute__((noinline)) static void end_frame(const frame *f) {
    int64_t end_ns = f->start_ns ? sp_now_ns() : 0;
    sp_end(f->function->region);
    if (f->start_ns) spn_table_count(f->function, (uint64_t)(end_ns - f->start_ns));
}

/* Push the frame of a call that is recorded and begin it. */
NO_INSTRUMENT __attribute__((noinline)) static void enter_recorded(spn_thread *t,
                                                                  const void *function,
                                                                  spn_function *entry, int state) {
    frame *f = &t->stack[t->depth++];
    f->address = function;
    f->function = entry;
    f->start_ns = 0;
    sp_begin(entry->region);
    if (state == SPN_COUNTING && spn_throttling) f->start_ns = sp_now_ns();
}

/* After the function's entry was found: record the call or skip it. */
NO_INSTRUMENT static inline void enter_decided(spn_thread *t, const void *function,
                                               spn_function *entry) {
    int state = entry ? atomic_load_explicit(&entry->state, memory_order_relaxed) : SPN_EXCLUDED;
    unsigned depth = t->depth;
    if (state < SPN_THROTTLED && depth < SPN_MAX_DEPTH) {
        enter_recorded(t, function, entry, state);
        return;
    }
    t->skipped[depth]++;
}

/* The enter of a thread's first hook or of an address not in its cache. */
NO_INSTRUMENT __attribute__((noinline)) static void enter_slow(spn_thread *t,
                                                              const void *function) {
    if (!t && !(t = thread_attach())) return;
    if (t->blocked) return;
    enter_decided(t, function, function_miss(t, function));
}

SPN_EXPORT NO_INSTRUMENT void __cyg_profile_func_enter(void *function, void *call_site) {
    (void)call_site;
    spn_thread *t = self;
    unsigned slot = SLOT_OF(function);
    if (__builtin_expect(!t || t->cached_address[slot] != function, 0)) {
        enter_slow(t, function);
        return;
    }
    if (t->blocked) return;
    enter_decided(t, function, t->cached_function[slot]);
}

/* An exit whose function is not the top frame: a longjmp skipped the
 * exits of the frames above its own (they end first, and the skipped calls
 * they had open are forgotten), or its enter was never seen (ignored). */
NO_INSTRUMENT __attribute__((noinline)) static void exit_unmatched(spn_thread *t,
                                                                  const void *function) {
    unsigned match = t->depth;
    while (match > 0 && t->stack[match - 1].address != function) match--;
    if (match == 0) return;
    while (t->depth >= match) {
        t->skipped[t->depth] = 0;
        end_frame(&t->stack[--t->depth]);
    }
}

SPN_EXPORT NO_INSTRUMENT void __cyg_profile_func_exit(void *function, void *call_site) {
    (void)call_site;
    spn_thread *t = self;
    if (!t || t->blocked) return;
    unsigned depth = t->depth;
    if (t->skipped[depth]) { /* the innermost open call was not recorded */
        t->skipped[depth]--;
        return;
    }
    if (__builtin_expect(depth > 0 && t->stack[depth - 1].address == function, 1)) {
        t->depth = depth - 1;
        end_frame(&t->stack[depth - 1]);
        return;
    }
    exit_unmatched(t, function);
}

NO_INSTRUMENT void spn_hooks_close_open(void) {
    spn_thread *t = self;
    if (!t) return;
    while (t->depth > 0) end_frame(&t->stack[--t->depth]);
    t->blocked = 1; /* closed: nothing more is recorded on this thread */
}
