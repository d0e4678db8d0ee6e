/*
 * pause.h - recording paused and resumed at run time (sp_pause,
 * sp_resume, SCOPE_PROFILER_START=paused), and the calls begun while
 * paused ("ghost" calls), which record nothing and must not end a call
 * that was recorded.
 *
 * The recorder asks two questions, both behind spi_calls_gated() (or this
 * thread's ghost count for an end), so that neither costs more than a load
 * when no pause and no name filter are in effect:
 *   spi_gate_begin: skip this begin? (paused, or its handle is excluded by
 *     SCOPE_PROFILER_REGIONS); a paused begin is counted as a ghost;
 *   spi_gate_end: skip this end? (its handle is excluded, or the innermost
 *     open call of the thread is a ghost).
 * A ghost is counted at the depth of the recorded stack it was begun at,
 * so the innermost open call is a ghost exactly when the count at the
 * current depth is non-zero: calls begun before a pause end cleanly during
 * it, and calls begun during it end cleanly after it.
 *
 * Thread-safety: spi_pause_set from any thread (a relaxed flag: the other
 * threads stop recording at their next begin); spi_gate_* on the recording
 * thread, inside its recording call.
 */
#ifndef SPI_PAUSE_H
#define SPI_PAUSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/region_filter.h"

/* Calls this thread began while paused that are still open. */
extern _Thread_local __attribute__((tls_model("initial-exec"))) uint32_t spi_ghost_open;

/* Pause (true) or resume (false) recording, for every thread. */
void spi_pause_set(bool paused);

/* Whether recording is paused. */
bool spi_pause_get(void);

/* Whether the begin of `region` records nothing. `depth` is the thread's
 * recorded stack depth, `generation` its session's (ghosts of an earlier
 * session are forgotten). Call only when spi_calls_gated() is non-zero. */
bool spi_gate_begin(int region, size_t depth, uint64_t generation);

/* Whether the end of `region` records nothing (and pops nothing). Call
 * only when spi_calls_gated() or spi_ghost_open is non-zero. */
bool spi_gate_end(int region, size_t depth, uint64_t generation);

#endif
