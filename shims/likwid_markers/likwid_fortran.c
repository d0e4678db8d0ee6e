/*
 * likwid_fortran.c - the Fortran marker API: the external subroutines that
 * LIKWID's `use likwid` module declares (likwid_markerInit() and so on),
 * under the names LIKWID's own library gives them: lower case, one
 * trailing underscore, arguments by reference, each character argument's
 * length appended as a hidden size_t. A Fortran program built against
 * LIKWID's module therefore links (or runs under LD_PRELOAD) against this
 * library unchanged; no module of ours is installed, as no header is.
 *
 * Region tags: trailing blanks are not part of a tag (Fortran pads).
 * LIKWID's Fortran routines are subroutines: the status is not returned.
 */
#include <stddef.h>

#include "likwid_markers_internal.h"

#define TAG(tag, len) (tag), sps_fortran_len(&spl_shim, (tag), (len))

SPS_EXPORT void likwid_markerinit_(void) { spl_init("fortran"); }

SPS_EXPORT void likwid_markerthreadinit_(void) {}

SPS_EXPORT void likwid_markernextgroup_(void) {}

SPS_EXPORT void likwid_markerclose_(void) { spl_close(); }

SPS_EXPORT void likwid_markerregisterregion_(const char *tag, size_t len) {
    (void)spl_register_n(TAG(tag, len));
}

SPS_EXPORT void likwid_markerstartregion_(const char *tag, size_t len) {
    (void)spl_start_n(TAG(tag, len));
}

SPS_EXPORT void likwid_markerstopregion_(const char *tag, size_t len) {
    (void)spl_stop_n(TAG(tag, len));
}

SPS_EXPORT void likwid_markerresetregion_(const char *tag, size_t len) {
    (void)spl_reset_n(TAG(tag, len));
}

SPS_EXPORT void likwid_markergetregion_(const char *tag, int *nr_events, double *events,
                                        double *time, int *count, size_t len) {
    spl_get(TAG(tag, len), nr_events, events, time, count);
}
