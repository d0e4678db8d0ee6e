/*
 * region_filter.h - which regions are recorded at all, by name
 * (SCOPE_PROFILER_REGIONS), decided once per handle when the registry
 * issues it; and the one word the recorder's begin and end test before
 * anything else (spi_calls_gated), which says whether any call may be
 * skipped: a name filter is set, or recording is paused (record/pause.h).
 *
 * SCOPE_PROFILER_REGIONS is a comma-separated list of shell patterns
 * (*, ?, [...]), each an include ("solve*" or "+solve*") or an exclude
 * ("-mpi_*"); the last pattern that matches a name decides. A name no
 * pattern matches is recorded when the list has no include, and excluded
 * when it has one ("solve*" alone keeps only the solve regions).
 *
 * An excluded handle's begin and end record nothing and check nothing:
 * the calls begun inside it get its caller as their parent.
 *
 * Thread-safety: spi_region_filter_decide under the registry's lock (it
 * runs before the handle is published); the rest from any thread.
 */
#ifndef SPI_REGION_FILTER_H
#define SPI_REGION_FILTER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* spi_gate_word's bits. */
#define SPI_GATE_PAUSED 1u       /* sp_pause: begins record nothing */
#define SPI_GATE_NAME_FILTER 2u  /* SCOPE_PROFILER_REGIONS excludes some handles */

/* Non-zero when a call may be skipped: the recorder's only cost when
 * neither a filter nor a pause is in effect (one relaxed load). */
extern atomic_uint spi_gate_word;

static inline unsigned spi_calls_gated(void) {
    return atomic_load_explicit(&spi_gate_word, memory_order_relaxed);
}

/* Decide whether the new handle `region` (named `name`, NUL-terminated)
 * is recorded, from SCOPE_PROFILER_REGIONS (read once per process, at the
 * first handle; a pattern list that does not parse is reported once and
 * ignored). */
void spi_region_filter_decide(int region, const char *name);

/* Whether `region` was excluded by SCOPE_PROFILER_REGIONS. */
bool spi_region_excluded(int region);

#endif
