/*
 * spn_symbols.h - the name of a code address, read from the ELF symbol
 * tables of the object that holds it (the executable, a shared library,
 * a dlopen'ed one).
 *
 * Off the hot path: called once per function address, at its first call,
 * under the instrument table's lock (spn_table.c).
 *
 * Thread-safety: not thread-safe; the caller serialises (spn_table's lock).
 */
#ifndef SPN_SYMBOLS_H
#define SPN_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* What is known of one address. Strings point into storage that lives
 * until spn_symbols_release (the mapped symbol tables). */
typedef struct spn_symbol {
    const char *symbol;  /* raw (mangled) symbol name, or NULL when none covers the address */
    const char *object;  /* path of the object holding the address ("" unknown) */
    uintptr_t offset;    /* the address relative to the object's load address */
} spn_symbol;

/* Fill *out for `address`. Never fails: an address in no known object
 * gives symbol NULL and object "". */
void spn_symbols_lookup(const void *address, spn_symbol *out);

/* Unmap every symbol table read so far (at process exit, after the last
 * name was resolved). */
void spn_symbols_release(void);

#endif
