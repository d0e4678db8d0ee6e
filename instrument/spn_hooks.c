/*
 * spn_hooks.c - the hooks GCC's -finstrument-functions calls around every
 * function of gcc, g++ and gfortran builds: each call becomes a call of the
 * function's region through the public API (sp_begin / sp_end).
 *
 * The hot path keys on the function's address only: no symbol lookup and
 * no string per call. Each thread has a direct-mapped cache (address ->
 * table entry) in front of the shared table (spn_table.c), and a shadow
 * stack of the calls it recorded (frames), so that an exit always knows
 * whether its enter began a call: a call begun before its function was
 * throttled (or before sp_finalize) still ends, and an unrecorded call
 * never ends its caller's call. An exit whose function is not on top (a
 * longjmp skipped exits) ends the calls above the matching frame first; an
 * exit with no matching frame is ignored.
 *
 * Silenced functions. A function excluded by the filter (decided at its
 * first sight, before any of its calls is decided) or throttled (decided
 * once, when its count reaches the threshold) is silenced: its enter and
 * exit hooks return at once, keeping no count, and ask spn_patch.c to
 * rewrite the call that reached them into a NOP, so that site never calls
 * again (SCOPE_PROFILER_PATCH=0 keeps every site; the hooks then stay the
 * fallback). Why the shadow stack stays consistent:
 *
 *  - Calls nest, so the top frame at an unrecorded call's exit is the one
 *    that was on top at its enter (longjmp aside, below). An exit therefore
 *    pops only when the top frame is its own function's: a silenced call
 *    never finds its caller's frame there, and ignores the exit.
 *  - The one ambiguity is a silenced call of a function whose own recorded
 *    frame is on top: a recursive call made after the function was
 *    throttled inside a call recorded before. Such an enter (and one past
 *    SPN_MAX_DEPTH, the same case) counts itself in that frame's `inner`,
 *    and an exit finding its function on top with `inner` > 0 takes one
 *    back instead of popping. No other enter touches a count, so an exit
 *    that never had its enter seen (patched out) has nothing to undo.
 *  - Excluded functions never have frames: silenced from their first call.
 *    A throttled function's earlier calls were recorded frames, and an
 *    exit whose top frame is its own still pops and ends it, on any thread.
 *    A function is only throttled from the counting state, and each frame
 *    pushed while counting is counted open in the table (open_frames, made
 *    race-free against the verdict by spn_table_open_frame). Its call
 *    sites are patched only once no such frame is open anywhere: with a
 *    frame open, its exits (and the inner counts of recursion) must still
 *    reach the hooks; after, it can have no frame ever again, so no exit
 *    of it ever has to pop.
 *  - Calls deeper than SPN_MAX_DEPTH are not recorded and, like silenced
 *    ones, leave no count (but `inner` for direct recursion); at full depth
 *    an exit whose function is not on top is taken for one of them and
 *    ignored (a longjmp out of that depth is then only resolved by a later
 *    exit further down). They are never patched: their functions are not
 *    silenced.
 *  - longjmp: frames left above its target are ended by the next exit of a
 *    recorded function further down (as before). A longjmp out of a silenced
 *    recursive call leaves its `inner` count: the frame then ends at its
 *    caller's exit instead of its own, and nesting stays correct; the same
 *    for a frame whose function was throttled meanwhile (its exit, not on
 *    top, is a silenced one's and is ignored).
 *
 * The thread's block is reached through one initial-exec TLS pointer (8
 * bytes of static TLS, which a preloaded or dlopen'ed library may use);
 * the block itself is allocated at the thread's first hook and freed when
 * the thread exits (a pthread key destructor), so memory grows with live
 * threads, never with calls.
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
#include "spn_mpi.h"
#include "spn_patch.h"
#include "spn_table.h"

#define NO_INSTRUMENT __attribute__((no_instrument_function))
#define SPN_EXPORT __attribute__((visibility("default")))
#define CACHE_SLOTS 256u
#define SPN_MAX_DEPTH 1024u

typedef struct frame {
    const void *address;
    spn_function *function;
    int64_t start_ns; /* 0: not timed (throttling off or decided); timed frames
                       * are the ones counted open (spn_table_open_frame) */
    unsigned long inner; /* unrecorded calls of the same function open inside */
} frame; /* a call that began (sp_begin): its exit calls sp_end */

typedef struct spn_thread {
    unsigned depth;
    int blocked; /* resolving a new address (busy) or spn_hooks_close_open ran */
    const void *cached_address[CACHE_SLOTS];
    spn_function *cached_function[CACHE_SLOTS];
    frame stack[SPN_MAX_DEPTH];
} spn_thread;

static __thread spn_thread *self __attribute__((tls_model("initial-exec")));
static atomic_int enabled = 0;
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* The hooks' own addresses, for spn_patch.c to recognise a call to them:
 * the exported symbols' (what other objects' GOT slots hold, unless
 * another definition interposes) and the library's own, through hidden
 * aliases (what a direct call would target). */
SPN_EXPORT void __cyg_profile_func_enter(void *function, void *call_site);
SPN_EXPORT void __cyg_profile_func_exit(void *function, void *call_site);
extern void spn_enter_alias(void *, void *)
    __attribute__((alias("__cyg_profile_func_enter"), visibility("hidden")));
extern void spn_exit_alias(void *, void *)
    __attribute__((alias("__cyg_profile_func_exit"), visibility("hidden")));

NO_INSTRUMENT static void thread_exit(void *block) {
    spn_thread *t = block;
    /* Frames still open never end: they no longer hold back patching. */
    for (unsigned d = 0; d < t->depth; d++)
        if (t->stack[d].start_ns) spn_table_drop_frame(t->stack[d].function);
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
 * compiler saves no register for them. Everything else is out of line
 * (noinline). */
#define SLOT_OF(address) ((unsigned)((uintptr_t)(address) >> 4) & (CACHE_SLOTS - 1))

/* A cache miss: the shared table (a new address is resolved there when
 * `make`; an exit only looks). */
NO_INSTRUMENT __attribute__((noinline)) static spn_function *function_miss(spn_thread *t,
                                                                          const void *address,
                                                                          int make) {
    unsigned slot = SLOT_OF(address);
    t->blocked = 1;
    spn_function *f = make ? spn_table_function(address) : spn_table_find(address);
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
    if (f->start_ns) {
        spn_table_count(f->function, (uint64_t)(end_ns - f->start_ns));
        spn_mpi_tick(end_ns); /* MPI_Init may have run since (spn_mpi.c) */
    }
}

/* A call that is not recorded: silenced, or past SPN_MAX_DEPTH. */
NO_INSTRUMENT __attribute__((noinline)) static void enter_unrecorded(spn_thread *t,
                                                                    const void *function,
                                                                    spn_function *entry,
                                                                    const void *site) {
    unsigned depth = t->depth;
    if (depth > 0 && t->stack[depth - 1].address == function) {
        t->stack[depth - 1].inner++; /* recursion inside a recorded call of it */
        return;
    }
    if (spn_patching && entry && spn_function_patchable(entry))
        spn_patch_call_site(site, (const void *)__cyg_profile_func_enter,
                            (const void *)spn_enter_alias);
}

/* Push the frame of a call that is recorded and begin it. */
NO_INSTRUMENT __attribute__((noinline)) static void enter_recorded(spn_thread *t,
                                                                  const void *function,
                                                                  spn_function *entry, int state,
                                                                  const void *site) {
    int timed = state == SPN_COUNTING && spn_throttling;
    if (timed && !spn_table_open_frame(entry)) { /* throttled meanwhile */
        enter_unrecorded(t, function, entry, site);
        return;
    }
    frame *f = &t->stack[t->depth++];
    f->address = function;
    f->function = entry;
    f->start_ns = 0;
    f->inner = 0;
    sp_begin(entry->region);
    if (timed) f->start_ns = sp_now_ns();
}

/* After the function's entry was found: record the call or not. A
 * silenced call with patching off (or its site left unpatched) returns
 * here, with no call: the fallback's cost. */
NO_INSTRUMENT static inline void enter_decided(spn_thread *t, const void *function,
                                               spn_function *entry, const void *site) {
    int state = entry ? atomic_load_explicit(&entry->state, memory_order_relaxed) : SPN_EXCLUDED;
    unsigned depth = t->depth;
    if (!SPN_SILENCED(state) && depth < SPN_MAX_DEPTH) {
        enter_recorded(t, function, entry, state, site);
        return;
    }
    if (!spn_patching && depth > 0 && t->stack[depth - 1].address != function) return;
    enter_unrecorded(t, function, entry, site);
}

/* The enter of a thread's first hook or of an address not in its cache. */
NO_INSTRUMENT __attribute__((noinline)) static void enter_slow(spn_thread *t, const void *function,
                                                              const void *site) {
    if (!t && !(t = thread_attach())) return;
    if (t->blocked) return;
    enter_decided(t, function, function_miss(t, function, 1), site);
}

SPN_EXPORT NO_INSTRUMENT void __cyg_profile_func_enter(void *function, void *call_site) {
    (void)call_site;
    spn_thread *t = self;
    unsigned slot = SLOT_OF(function);
    if (__builtin_expect(!t || t->cached_address[slot] != function, 0)) {
        enter_slow(t, function, __builtin_return_address(0));
        return;
    }
    if (t->blocked) return;
    enter_decided(t, function, t->cached_function[slot], __builtin_return_address(0));
}

/* An exit of a recorded function whose frame is not on top: a longjmp
 * skipped the exits of the frames above its own (they end first), or its
 * enter was never seen (ignored). */
NO_INSTRUMENT static void exit_unmatched(spn_thread *t, const void *function) {
    unsigned match = t->depth;
    while (match > 0 && t->stack[match - 1].address != function) match--;
    if (match == 0) return;
    while (t->depth >= match) end_frame(&t->stack[--t->depth]);
}

/* An exit whose function is not on top: a silenced call's (ignored, and
 * its site patched), one past SPN_MAX_DEPTH (ignored), or unmatched. */
NO_INSTRUMENT __attribute__((noinline)) static void exit_not_on_top(spn_thread *t,
                                                                   const void *function,
                                                                   const void *site) {
    if (t->depth >= SPN_MAX_DEPTH) return;
    unsigned slot = SLOT_OF(function);
    spn_function *entry = t->cached_address[slot] == function ? t->cached_function[slot]
                                                              : function_miss(t, function, 0);
    if (entry && SPN_SILENCED(atomic_load_explicit(&entry->state, memory_order_relaxed))) {
        if (spn_patching && spn_function_patchable(entry))
            spn_patch_call_site(site, (const void *)__cyg_profile_func_exit,
                                (const void *)spn_exit_alias);
        return;
    }
    exit_unmatched(t, function);
}

SPN_EXPORT NO_INSTRUMENT void __cyg_profile_func_exit(void *function, void *call_site) {
    (void)call_site;
    spn_thread *t = self;
    if (!t || t->blocked) return;
    unsigned depth = t->depth;
    frame *top = &t->stack[depth > 0 ? depth - 1 : 0];
    if (__builtin_expect(depth > 0 && top->address == function, 1)) {
        if (top->inner) { /* an unrecorded recursive call of it */
            top->inner--;
            return;
        }
        t->depth = depth - 1;
        end_frame(top);
        return;
    }
    unsigned slot = SLOT_OF(function);
    if (!spn_patching && depth < SPN_MAX_DEPTH && t->cached_address[slot] == function &&
        SPN_SILENCED(atomic_load_explicit(&t->cached_function[slot]->state, memory_order_relaxed)))
        return; /* a silenced call's exit, patching off: the fallback's cost */
    exit_not_on_top(t, function, __builtin_return_address(0));
}

NO_INSTRUMENT void spn_hooks_close_open(void) {
    spn_thread *t = self;
    if (!t) return;
    while (t->depth > 0) end_frame(&t->stack[--t->depth]);
    t->blocked = 1; /* closed: nothing more is recorded on this thread */
}
