/*
 * Mixed languages, C main: c_outer (C) > f_middle (Fortran, in
 * mixed_fortran_middle.f90) > c_inner (C, called back from Fortran), twice,
 * all in one file. check_profile.py mixed_c_main checks the parent chain.
 */
#include <stdio.h>

#include "scope_profiler.h"

void fortran_middle(void); /* bind(C) in mixed_fortran_middle.f90 */
void c_inner(void);

/* Called from Fortran: a C region whose parent is a Fortran region. The
 * handle is resolved on first use, as a hot C routine would. */
void c_inner(void) {
    static int region = SP_INVALID_REGION;
    if (region == SP_INVALID_REGION) region = sp_region("c_inner");
    sp_begin(region);
    sp_end(region);
}

int main(void) {
    int status = sp_setup("mixed_c_main.h5");
    if (status != SP_OK) {
        fprintf(stderr, "sp_setup: %s\n", sp_error_string(status));
        return 1;
    }
    int outer = sp_region("c_outer");
    for (int k = 0; k < 2; k++) {
        sp_begin(outer);
        fortran_middle();
        sp_end(outer);
    }
    if (sp_last_error() != SP_OK) {
        fprintf(stderr, "recording failed: %s\n", sp_error_string(sp_last_error()));
        return 1;
    }
    status = sp_finalize();
    if (status != SP_OK) {
        fprintf(stderr, "sp_finalize: %s\n", sp_error_string(status));
        return 1;
    }
    return 0;
}
