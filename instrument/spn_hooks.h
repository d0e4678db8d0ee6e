/*
 * spn_hooks.h - what the session part (spn_session.c) needs of the
 * -finstrument-functions hooks (spn_hooks.c).
 *
 * Thread-safety: spn_hooks_enable before any thread other than the loading
 * one runs instrumented code (the library's constructor); spn_hooks_close_open
 * from the exiting thread.
 */
#ifndef SPN_HOOKS_H
#define SPN_HOOKS_H

/* Let the hooks record (0 until the library's constructor decided). */
void spn_hooks_enable(int enabled);

/* End the calling thread's calls still open (innermost first) and stop
 * recording on it: at exit, functions the program's exit() left open
 * (main among them) end cleanly instead of being dropped as unfinished. */
void spn_hooks_close_open(void);

#endif
