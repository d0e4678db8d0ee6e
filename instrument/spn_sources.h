/*
 * spn_sources.h - the source file a function was compiled from, for the
 * SCOREP_FILE_NAMES rules of a filter file: the DWARF line table's file at
 * the function's first instruction, read through elfutils' libdw, which is
 * loaded (dlopen "libdw.so.1") only when a filter has file rules.
 *
 * Off the hot path: called once per function address, at its first call,
 * under the instrument table's lock.
 *
 * Thread-safety: not thread-safe; the caller serialises (spn_table's lock).
 */
#ifndef SPN_SOURCES_H
#define SPN_SOURCES_H

#include <stddef.h>
#include <stdint.h>

/* Load libdw. Returns 1, or 0 with *message saying why the source files
 * cannot be known (message_len bytes). */
int spn_sources_open(char *message, size_t message_len);

/* The source file (as the compiler recorded it, usually an absolute path)
 * of the code at `offset` (address - load bias) in the ELF file `object`,
 * or NULL when it cannot be known: libdw not loaded, the object has no
 * DWARF line table (built without -g, stripped, debug info in a separate
 * file), or no line covers the address. The string lives until
 * spn_sources_close. */
const char *spn_sources_file(const char *object, uintptr_t offset);

/* Close every object's debug information and unload libdw. */
void spn_sources_close(void);

#endif
