/*
 * spp_names.h - region names of wrapped MPI calls (docs/FORMAT.md §4.6),
 * the Python package's canonical form plus ` lang=native`:
 *
 *   mpi:<op> kind=<k> bytes=<b> peer=<p> root=<r> tag=<t> comm=<c>
 *       [request=<op|mixed|unknown|null>] [recv_bytes=<n>] [overflow=1] lang=native
 *
 * every numeric key always present (-1 for "none"); request= on the waits
 * and tests, recv_bytes= on sendrecv, overflow=1 on the per-op names used
 * once SCOPE_PROFILER_MPI_MAX_NAMES distinct names exist.
 */
#ifndef SPP_NAMES_H
#define SPP_NAMES_H

#include <stddef.h>

#include "spp_core.h"

/* Slots of the key -> region cache (a power of two, > 2 x the name bound). */
#define SPP_NAME_SLOTS 8192
/* Longest name (every number at its widest, every optional key, fits). */
#define SPP_NAME_MAX 256

/* "send", "allreduce", ...: the <op> of the names, and what
 * SCOPE_PROFILER_MPI_FILTER is matched against. */
const char *spp_op_name(int op);

/* Write key's name into buf (NUL-terminated) and return its length. */
size_t spp_format_name(const spp_key *key, char *buf, size_t size);

#endif /* SPP_NAMES_H */
