/*
 * likwid-marker.h (test stand-in) - used by the LIKWID-marker tests only
 * on machines where LIKWID is not installed, in place of LIKWID's own
 * header, so that likwid_app.c still builds as a LIKWID user's program
 * does. Written from LIKWID's documented marker macros and signatures;
 * never installed (no header of ours may be named like LIKWID's).
 */
#ifndef SP_TEST_LIKWID_MARKER_H
#define SP_TEST_LIKWID_MARKER_H

#ifdef LIKWID_PERFMON
#include "likwid.h"
#define LIKWID_MARKER_INIT likwid_markerInit()
#define LIKWID_MARKER_THREADINIT likwid_markerThreadInit()
#define LIKWID_MARKER_SWITCH likwid_markerNextGroup()
#define LIKWID_MARKER_REGISTER(regionTag) likwid_markerRegisterRegion(regionTag)
#define LIKWID_MARKER_START(regionTag) likwid_markerStartRegion(regionTag)
#define LIKWID_MARKER_STOP(regionTag) likwid_markerStopRegion(regionTag)
#define LIKWID_MARKER_CLOSE likwid_markerClose()
#define LIKWID_MARKER_RESET(regionTag) likwid_markerResetRegion(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count) \
    likwid_markerGetRegion(regionTag, nevents, events, time, count)
#else
#define LIKWID_MARKER_INIT
#define LIKWID_MARKER_THREADINIT
#define LIKWID_MARKER_SWITCH
#define LIKWID_MARKER_REGISTER(regionTag)
#define LIKWID_MARKER_START(regionTag)
#define LIKWID_MARKER_STOP(regionTag)
#define LIKWID_MARKER_CLOSE
#define LIKWID_MARKER_RESET(regionTag)
#define LIKWID_MARKER_GET(regionTag, nevents, events, time, count)
#endif

#endif /* SP_TEST_LIKWID_MARKER_H */
