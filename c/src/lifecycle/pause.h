/*
 * pause.h - the lifecycle's part of pausing: the state a session starts
 * in (SCOPE_PROFILER_START). sp_pause, sp_resume and sp_is_paused
 * (scope_profiler.h) are defined in pause.c beside it.
 *
 * Thread-safety: as sp_setup (called from it).
 */
#ifndef SPI_LIFECYCLE_PAUSE_H
#define SPI_LIFECYCLE_PAUSE_H

/* Pause or resume recording as SCOPE_PROFILER_START says ("paused", or
 * "running", the default); another value is reported on stderr and the
 * session starts running. Called by sp_setup before recording starts. */
void spi_pause_at_setup(void);

#endif
