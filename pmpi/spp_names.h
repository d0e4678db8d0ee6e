/*
 * spp_names.h - region names of wrapped MPI calls (docs/FORMAT.md, "MPI
 * regions of the native library"):
 *
 *   mpi:<op> kind=point-to-point bytes=<n> peer=<p> tag=<t> comm=<c> lang=native
 *   mpi:<op> kind=collective bytes=<n> [root=<r>] comm=<c> lang=native
 *   mpi:<op> kind=wait request=<op|mixed|unknown|null> lang=native
 *
 * plus ` overflow=1` before ` lang=native` on the per-op names used once
 * SCOPE_PROFILER_MPI_MAX_NAMES distinct names exist.
 */
#ifndef SPP_NAMES_H
#define SPP_NAMES_H

#include <stddef.h>

#include "spp_core.h"

/* Slots of the key -> region cache (a power of two, > 2 x the name bound). */
#define SPP_NAME_SLOTS 8192
/* Longest name (every number at its widest fits). */
#define SPP_NAME_MAX 192

/* "send", "allreduce", ...: the <op> of the names, and what
 * SCOPE_PROFILER_MPI_FILTER is matched against. */
const char *spp_op_name(int op);

/* Write key's name into buf (NUL-terminated) and return its length. */
size_t spp_format_name(const spp_key *key, char *buf, size_t size);

#endif /* SPP_NAMES_H */
