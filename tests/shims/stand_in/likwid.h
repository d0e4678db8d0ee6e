/*
 * likwid.h (test stand-in) - the marker declarations of LIKWID's likwid.h,
 * for the tests on machines without LIKWID (see likwid-marker.h here).
 */
#ifndef SP_TEST_LIKWID_H
#define SP_TEST_LIKWID_H

#ifdef __cplusplus
extern "C" {
#endif
void likwid_markerInit(void);
void likwid_markerThreadInit(void);
void likwid_markerNextGroup(void);
void likwid_markerClose(void);
int likwid_markerRegisterRegion(const char *regionTag);
int likwid_markerStartRegion(const char *regionTag);
int likwid_markerStopRegion(const char *regionTag);
int likwid_markerResetRegion(const char *regionTag);
void likwid_markerGetRegion(const char *regionTag, int *nr_events, double *events, double *time,
                            int *count);
#ifdef __cplusplus
}
#endif

#endif /* SP_TEST_LIKWID_H */
