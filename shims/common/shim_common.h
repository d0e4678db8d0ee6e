/*
 * shim_common.h - what the GPTL, Caliper and LIKWID-marker shims share:
 * starting and finishing a session on the program's behalf, one-time
 * notes on stderr, and region names cut to one bound.
 *
 * Every shim is a small library over the public API (scope_profiler.h)
 * only. This unit is compiled into each of them (an object library with
 * hidden symbols), so each shim keeps its own state: two shims in one
 * process (a GPTL code that also has LIKWID markers) each know which
 * session they started, and neither finishes the other's.
 *
 * Thread-safety: sps_note and sps_name_len may be called from any thread;
 * sps_session_start and sps_session_finish from one thread at a time, as
 * sp_setup and sp_finalize.
 */
#ifndef SPS_SHIM_COMMON_H
#define SPS_SHIM_COMMON_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "scope_profiler.h"

/* The longest region name a shim passes on, in bytes. The core takes any
 * length; the shims bound names so that a name built from a foreign API's
 * pieces (Caliper's "iteration#<loop>") fits a buffer on the stack, and so
 * that a runaway name (an unterminated Fortran buffer, a C string without
 * its NUL) costs a bounded scan. Longer names are cut at a whole UTF-8
 * character at or below this many bytes, with one note per process. */
#define SPS_NAME_MAX 1024

/* Exported: the entry points of the foreign APIs. Everything else in a shim
 * library is hidden (C_VISIBILITY_PRESET hidden), so internal names never
 * collide with the real library's or with another shim's. */
#define SPS_EXPORT __attribute__((visibility("default")))

/* One shim's state. Statically initialised with SPS_SHIM_INIT. */
typedef struct sps_shim {
    const char *api;         /* "GPTL", "Caliper", "LIKWID markers": names the shim in notes */
    atomic_int owns_session; /* 1 while a session this shim started may still be running */
    atomic_ulong noted;      /* bit i: note i was printed (sps_note) */
} sps_shim;

#define SPS_SHIM_INIT(api_name) {api_name, 0, 0}

/*
 * Start a session for the shim unless one is running: sp_setup with the
 * defaults (SCOPE_PROFILER_FILE or profiling_data.h5, and every other
 * SCOPE_PROFILER_* variable, apply) and `language` as the metadata's
 * source_language ("c" or "fortran"). A running session (the program's own,
 * the PMPI wrappers', another shim's) is used as it is and stays its
 * owner's to finish. Returns SP_OK (started, or one was running), or what
 * sp_setup_with_options returned (the core printed why).
 */
int sps_session_start(sps_shim *shim, const char *language);

/* Whether this shim started the running session (and so must finish it). */
int sps_session_owned(sps_shim *shim);

/*
 * Finish the session this shim started, if it still runs: sp_finalize.
 * Returns SP_ERR_NOT_ACTIVE when the shim started none or it is already
 * finished (by MPI_Finalize, or by the program), else sp_finalize's status.
 */
int sps_session_finish(sps_shim *shim);

/* Forget the session without finishing it (sp_finalize_results finished it). */
void sps_session_forget(sps_shim *shim);

/*
 * Print "scope-profiler: <api>: <message>" on stderr once per process for
 * note number `which` (0..63; each shim numbers its own notes), unless
 * SCOPE_PROFILER_QUIET=1. On ranks above 0 (as the launcher numbers them)
 * "[rank N] " follows "scope-profiler: ", as in the core's own diagnostics.
 */
void sps_note(sps_shim *shim, unsigned which, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* The slow side of sps_name_len: cut a name longer than SPS_NAME_MAX
 * (`len` its length, or 0 when only "longer" is known) and note it. */
size_t sps_name_cut(sps_shim *shim, const char *name, size_t len);

/*
 * The length to record of a NUL-terminated name: at most SPS_NAME_MAX
 * bytes (a longer name is cut, with note SPS_NOTE_LONG_NAME). 0 for NULL
 * or "" (the caller reports its API's error). Inline: it is on every
 * by-name call of every shim, and the scan is the only cost it adds.
 */
static inline size_t sps_name_len(sps_shim *shim, const char *name) {
    if (!name) return 0;
    size_t len = strnlen(name, SPS_NAME_MAX + 1);
    return __builtin_expect(len > SPS_NAME_MAX, 0) ? sps_name_cut(shim, name, 0) : len;
}

/*
 * A thread's cache of the names its shim saw last, keyed by the caller's
 * pointer (a string literal is the same pointer on every call), so that a
 * begin by name costs one strcmp with the registry's text and then
 * sp_begin, instead of a bounded scan plus the core's general lookup
 * (sp_region_begin_n). Each shim keeps its own initial-exec TLS array of
 * SPS_NAME_SLOTS; a pointer whose text changed simply misses. Names that
 * were cut are never cached (their text is not the caller's).
 */
#define SPS_NAME_SLOTS 16
typedef struct sps_name_slot {
    const char *pointer;
    const char *text; /* the registry's copy: valid for the process's life */
    size_t len;
    int region;
} sps_name_slot;

/* The miss side of sps_region_of (bounded scan, cut, sp_region_n). */
int sps_region_lookup(sps_shim *shim, sps_name_slot *slot, const char *name, size_t *len);

/*
 * The region handle of a NUL-terminated name, cut as sps_name_len cuts it;
 * *len receives the length recorded. Returns SP_INVALID_REGION for NULL or
 * "" (*len = 0) or when the core could not register it (it said why).
 */
static inline int sps_region_of(sps_shim *shim, sps_name_slot *slots, const char *name,
                                size_t *len) {
    sps_name_slot *slot = &slots[((uintptr_t)name >> 4) % SPS_NAME_SLOTS];
    /* strcmp, not memcmp of the cached length: it stops at the caller's
     * NUL, so a shorter string in a reused buffer is never read past. */
    if (__builtin_expect(slot->pointer == name && name != NULL, 1) &&
        strcmp(slot->text, name) == 0) {
        *len = slot->len;
        return slot->region;
    }
    return sps_region_lookup(shim, slot, name, len);
}

/*
 * sp_end(region) with its status: sp_end reports a stop that is not the
 * thread's innermost open call only through the thread's last error, so
 * that is cleared first (when set) and read after. Returns SP_OK,
 * SP_ERR_UNMATCHED_END, SP_ERR_NESTING (nothing changed, the core printed
 * one line) or SP_ERR_BUFFER_LIMIT (closed, not stored). Cheaper than an
 * end by name, which would look the name up again.
 */
static inline int sps_end(int region) {
    if (__builtin_expect(sp_last_error() != SP_OK, 0)) sp_clear_error();
    sp_end(region);
    return sp_last_error();
}

/* The same for a Fortran name of `len` bytes: trailing blanks are not part
 * of it (Fortran pads fixed-length strings with blanks). */
size_t sps_fortran_len(sps_shim *shim, const char *name, size_t len);

/* The note numbers this unit uses; shims number theirs from SPS_NOTE_FIRST. */
enum { SPS_NOTE_LONG_NAME = 0, SPS_NOTE_FIRST = 1 };

#endif /* SPS_SHIM_COMMON_H */
