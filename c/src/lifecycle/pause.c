/*
 * pause.c - sp_pause, sp_resume and sp_is_paused (scope_profiler.h), and
 * the state a session starts in (SCOPE_PROFILER_START, pause.h).
 *
 * The state itself, and what a begin or end does while paused, belong to
 * the recorder (record/pause.c): this file is only the public face. The
 * calls never fail: pausing with no session is remembered until the next
 * sp_setup, which sets the state from SCOPE_PROFILER_START, so that a
 * program's run always starts as its environment says.
 */
#include "lifecycle/pause.h"

#include <stdlib.h>
#include <string.h>

#include "record/pause.h"
#include "util/diag.h"
#include "scope_profiler.h"

void spi_pause_at_setup(void) {
    const char *value = getenv("SCOPE_PROFILER_START");
    bool paused = false;
    if (value && strcmp(value, "paused") == 0)
        paused = true;
    else if (value && *value && strcmp(value, "running") != 0)
        spi_diag("SCOPE_PROFILER_START=\"%s\" is not \"paused\" or \"running\": recording "
                 "starts running", value);
    spi_pause_set(paused);
}

SP_API void sp_pause(void) { spi_pause_set(true); }

SP_API void sp_resume(void) { spi_pause_set(false); }

SP_API int sp_is_paused(void) { return spi_pause_get() ? 1 : 0; }
