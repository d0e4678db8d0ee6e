/*
 * gptl_fortran.c - the Fortran entry points of the GPTL API: the external
 * procedures `use gptl` declares (gptl.f90), named and called the way
 * GPTL's own Fortran wrappers are: lower case with one trailing
 * underscore, every argument by reference, and each character argument's
 * length appended as a hidden size_t (gfortran >= 8, ifort, ifx, flang).
 *
 * Why externals and not module procedures with bind(C): a program built
 * against GPTL's own module (or declaring `integer gptlstart; external
 * gptlstart`, the Fortran 77 way) calls exactly these symbols, so it links
 * against this library, or runs under LD_PRELOAD, unchanged. Our module
 * only declares them, as GPTL's does.
 *
 * Names: trailing blanks are not part of a name (Fortran pads).
 */
#include <stddef.h>

#include "gptl.h"
#include "gptl_internal.h"

#define NAME(name, len) (name), sps_fortran_len(&spg_shim, (name), (len))

SPS_EXPORT int gptlinitialize_(void) { return spg_initialize("fortran"); }

SPS_EXPORT int gptlfinalize_(void) { return spg_finalize(); }

SPS_EXPORT int gptlsetoption_(const int *option, const int *val) {
    return GPTLsetoption(*option, *val);
}

SPS_EXPORT int gptlsetutr_(const int *option) { return GPTLsetutr(*option); }

SPS_EXPORT int gptlstart_(const char *name, size_t len) { return spg_start_n(NAME(name, len)); }

SPS_EXPORT int gptlstop_(const char *name, size_t len) { return spg_stop_n(NAME(name, len)); }

SPS_EXPORT int gptlinit_handle_(const char *name, int *handle, size_t len) {
    return spg_init_handle_n(NAME(name, len), handle);
}

/* A resolved handle needs no name: skip the trailing-blank scan. */
SPS_EXPORT int gptlstart_handle_(const char *name, int *handle, size_t len) {
    return handle && *handle ? spg_start_handle_n(name, len, handle)
                             : spg_start_handle_n(NAME(name, len), handle);
}

SPS_EXPORT int gptlstop_handle_(const char *name, int *handle, size_t len) {
    return handle && *handle ? spg_stop_handle_n(name, len, handle)
                             : spg_stop_handle_n(NAME(name, len), handle);
}

SPS_EXPORT int gptlpr_(const int *id) { return GPTLpr(*id); }

SPS_EXPORT int gptlpr_file_(const char *file, size_t len) {
    return spg_pr_file_n(NAME(file, len));
}

SPS_EXPORT int gptlreset_(void) { return GPTLreset(); }

SPS_EXPORT int gptlenable_(void) { return GPTLenable(); }

SPS_EXPORT int gptldisable_(void) { return GPTLdisable(); }

SPS_EXPORT int gptlget_wallclock_(const char *name, const int *t, double *value, size_t len) {
    return spg_get_wallclock_n(NAME(name, len), t ? *t : -1, value);
}

SPS_EXPORT int gptlquery_(const char *name, const int *t, int *count, int *onflg,
                          double *wallclock, double *usr, double *sys, long long *papicounters_out,
                          const int *maxcounters, size_t len) {
    return spg_query_n(NAME(name, len), t ? *t : -1, count, onflg, wallclock, usr, sys, papicounters_out,
                       maxcounters ? *maxcounters : 0);
}

SPS_EXPORT int gptlstamp_(double *wall, double *usr, double *sys) {
    return GPTLstamp(wall, usr, sys);
}
