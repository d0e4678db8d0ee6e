/*
 * spn_names.h - the readable region name of a raw symbol: C++ names
 * demangled, gfortran's module procedures as `module::procedure`, its main
 * program as "main program", internal procedures and compiler clones
 * without their numbered suffix; an address without a symbol as
 * `0x<offset>@<object>`.
 *
 * Thread-safety: not thread-safe (called under spn_table's lock).
 */
#ifndef SPN_NAMES_H
#define SPN_NAMES_H

#include <stddef.h>

#include "spn_symbols.h"

/* Write the readable name of `symbol` into out (out_len bytes, always
 * NUL-terminated, cut when longer). Returns the name's length. */
size_t spn_readable_name(const spn_symbol *symbol, char *out, size_t out_len);

#endif
