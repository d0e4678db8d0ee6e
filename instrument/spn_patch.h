/*
 * spn_patch.h - removing the hook calls of silenced functions from the
 * program's code (x86-64 Linux; elsewhere every request is a no-op and no
 * site is counted).
 *
 * A function excluded by the filter or throttled is "silenced": its hooks
 * return at once (spn_hooks.c). What is left of its cost is the two calls
 * themselves, made from every call of it. When a silenced function's hook
 * runs, spn_hooks.c asks this part to rewrite the instruction that called
 * the hook (the one ending at the hook's return address) into a NOP, as
 * LLVM's XRay does for its sleds, so that site never calls again. Every
 * site is checked first: it must be a `call` to the hook (directly or
 * through a PLT stub or GOT slot that holds the hook's address) inside a
 * loaded object's read+execute, non-writable segment. Anything else, or a
 * refused mprotect (SELinux execmem, PaX MPROTECT), leaves the site as it
 * is: the silenced hook stays its (cheap) fallback. Each site is tried at
 * most once, patched or not.
 *
 * Patches are permanent for the process: a second session after
 * sp_finalize never sees the patched calls of functions that were
 * excluded or throttled in the first one.
 *
 * Thread-safety: spn_patch_configure before the hooks are enabled (the
 * library's constructor); the rest from any thread (one mutex serialises
 * every patch, so two threads never race on one page's protection).
 */
#ifndef SPN_PATCH_H
#define SPN_PATCH_H

/* Turn patching on or off (SCOPE_PROFILER_PATCH; on by default). Off, or
 * on a platform without patching, spn_patch_call_site does nothing. */
void spn_patch_configure(int enabled);

/* Whether patching is on (the hooks skip asking otherwise). */
extern int spn_patching;

/* Remove the hook call that returns to `return_address`, if it is one:
 * `call rel32` (E8) to `hook` or to a PLT stub of it, or `call *disp(%rip)`
 * (FF 15, -fno-plt) through a GOT slot holding `hook`. `hook` and
 * `hook_alias` are two addresses the hook may have (the exported symbol as
 * the dynamic linker resolved it, and the library's own). Counts the site as
 * patched or unpatchable (once) and, when a count changed, sets the file's
 * metadata (spn_patch_publish). Errors are never reported: the site stays. */
void spn_patch_call_site(const void *return_address, const void *hook, const void *hook_alias);

/* Sites patched and sites left unpatchable so far. */
void spn_patch_counts(unsigned long *patched, unsigned long *unpatchable);

/* Set the metadata "instrument_patched" (docs/FORMAT.md 4.3):
 * "<patched> patched, <unpatchable> unpatchable", or "off". */
void spn_patch_publish(void);

/* fork(): hold the patch mutex across it (pthread_atfork, spn_session.c). */
void spn_patch_fork_prepare(void);
void spn_patch_fork_parent(void);
void spn_patch_fork_child(void);

#endif
