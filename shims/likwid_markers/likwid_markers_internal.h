/*
 * likwid_markers_internal.h - the entry points with sized names that the
 * C symbols (likwid_markers.c) and the Fortran ones (likwid_fortran.c)
 * share. Returns: LIKWID's (0 or -EFAULT).
 */
#ifndef SPL_LIKWID_MARKERS_INTERNAL_H
#define SPL_LIKWID_MARKERS_INTERNAL_H

#include <stddef.h>

#include "shim_common.h"

extern sps_shim spl_shim;

void spl_init(const char *language);
void spl_close(void);
int spl_register_n(const char *tag, size_t len);
int spl_start_n(const char *tag, size_t len);
int spl_stop_n(const char *tag, size_t len);
int spl_reset_n(const char *tag, size_t len);
void spl_get(const char *tag, size_t len, int *nr_events, double *events, double *time,
             int *count);

#endif /* SPL_LIKWID_MARKERS_INTERNAL_H */
