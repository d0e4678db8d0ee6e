/*
 * spn_table.h - instrumented function address -> what to do with its calls
 * (region handle, filtered out, throttling state), shared by every thread.
 *
 * An address is decided once, at its first call: its name is resolved
 * (spn_symbols, spn_names), the filter asked, the region registered by name
 * through the public API (sp_region_n, so instrumented functions and
 * sp_region_begin regions share one registry and one call tree). Later
 * calls find the entry without a lock; threads also keep a small cache in
 * front of it (spn_hooks.c).
 *
 * Thread-safety: spn_table_function may be called from any thread (new
 * addresses take a mutex); spn_table_configure before the first call.
 */
#ifndef SPN_TABLE_H
#define SPN_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "spn_filter.h"

/* The throttling state of a function (spn_function.state). */
enum {
    SPN_COUNTING = 0,  /* calls and time still counted toward the decision */
    SPN_KEPT = 1,      /* decided: recorded for the rest of the run */
    SPN_THROTTLED = 2, /* decided: no longer recorded */
    SPN_EXCLUDED = 3,  /* filtered out or not registered: never recorded */
};
/* A throttled or excluded function is "silenced": its hooks return at once
 * and its call sites may be patched out (spn_hooks.c, spn_patch.c). */
#define SPN_SILENCED(state) ((state) >= SPN_THROTTLED)

typedef struct spn_function {
    struct spn_function *next_in_bucket;
    struct spn_function *next_listed; /* every entry, for the throttling report */
    uintptr_t address;
    int region;         /* region handle; -1 when filtered out or not registered */
    atomic_int state;   /* SPN_COUNTING, SPN_KEPT, SPN_THROTTLED or SPN_EXCLUDED: the
                         * hooks decide on this one word (>= SPN_THROTTLED: skip) */
    atomic_uint_least64_t calls;    /* recorded while counting (and open at the verdict) */
    atomic_uint_least64_t total_ns; /* while counting */
    /* Recorded frames pushed while counting and not yet ended, on every
     * thread: a throttled function's sites are patched only at 0, so no
     * exit of a recorded call is ever patched out (spn_table_open_frame). */
    atomic_long open_frames;
    char *name;         /* the readable name */
} spn_function;

/* How the table decides. throttle_calls 0: no throttling. */
typedef struct spn_table_config {
    const spn_filter *filter;
    uint64_t throttle_calls;
    uint64_t throttle_ns;
} spn_table_config;

void spn_table_configure(const spn_table_config *config);

/* The entry of `address`, made on its first call; NULL only when memory ran
 * out (the call is then not recorded). */
spn_function *spn_table_function(const void *address);

/* The entry of `address` if one was made (never makes one). */
spn_function *spn_table_find(const void *address);

/* Before pushing the frame of a call of a counting `function` (throttling
 * on): counts the frame as open and returns 1, or returns 0 (nothing
 * counted) when the function was throttled meanwhile, so the call must not
 * be recorded. Either the throttling decision sees the frame (and patching
 * waits for it) or the caller sees the decision (sequentially consistent
 * on both sides). */
int spn_table_open_frame(spn_function *function);

/* Count one recorded call of `function` that lasted `ns` and close its
 * frame (opened by spn_table_open_frame), and decide its throttling once it
 * reached the configured number of calls. Calls that end after the verdict
 * (they were open then, on any thread) are counted too: the reported count
 * is the calls recorded. */
void spn_table_count(spn_function *function, uint64_t ns);

/* Close a frame opened by spn_table_open_frame whose call will never end
 * (its thread exited with it open): not counted. */
void spn_table_drop_frame(spn_function *function);

/* Whether the call sites of `function` may be patched out now: excluded,
 * or throttled with no recorded frame open on any thread. */
int spn_function_patchable(spn_function *function);

/* Whether throttling is on (the hooks read the clock only then). */
extern int spn_throttling;

/* Call `visit` for every function throttled so far (any order); its
 * `calls` are the calls recorded. */
void spn_table_each_throttled(void (*visit)(const spn_function *function, void *context),
                              void *context);

/* fork(): the forking thread holds the table's lock across the fork, so a
 * child never inherits it held by a thread that does not exist there
 * (pthread_atfork handlers, registered by spn_session.c). */
void spn_table_fork_prepare(void);
void spn_table_fork_parent(void);
void spn_table_fork_child(void);

/* The configured throttling threshold, for the report. */
const spn_table_config *spn_table_configuration(void);

#endif
