/* The C part of mixed_fortran_main: a C region between two Fortran ones. */
#include "scope_profiler.h"

void fortran_inner(void); /* bind(C) in mixed_fortran_main.f90 */
void c_middle(void);

void c_middle(void) {
    sp_region_begin("c_middle");
    fortran_inner();
    sp_region_end("c_middle");
}
