/*
 * write_faults.c - every HDF5 call of the library's write path failed in
 * turn (issue 29): the program records a few regions and finalizes to the
 * path given; SCOPE_PROFILER_TEST_H5_FAIL_AT=N makes the N-th HDF5 call
 * the process makes (of those listed below) fail. It prints
 *   "status=S calls=C injected=I"
 * (sp_finalize's status, HDF5 calls seen, whether the N-th came). The
 * harness (check_write_faults.py) raises N until the failure is no longer
 * reached and checks each run: no crash, the previous file intact when the
 * write failed, a complete file when it succeeded, no temporary left.
 *
 * How: this executable exports the HDF5 entry points the writer uses
 * (ENABLE_EXPORTS), so the library's calls into libhdf5 resolve here
 * first; each counts, fails when its turn comes, and otherwise forwards to
 * libhdf5 (dlsym RTLD_NEXT). Nothing in the library changes for the test,
 * and every call through these entry points is reached, whichever file of
 * the writer makes it. The counting and the interposing macros are
 * tests/lib/fault_turn.h's, and the HDF5 calls both fault tests interpose
 * are in tests/lib/fault_turn_hdf5.c; below are the ones only the
 * library's writer makes.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "fault_turn.h"
#include "scope_profiler.h"

FAULT_FORWARD(hid_t, -1, H5Dget_space, (hid_t d), (d))
FAULT_FORWARD(herr_t, -1, H5Sselect_hyperslab,
              (hid_t s, int op, const hsize_t *a, const hsize_t *b, const hsize_t *c,
               const hsize_t *d),
              (s, op, a, b, c, d))
FAULT_FORWARD(htri_t, -1, H5Lexists, (hid_t l, const char *n, hid_t a), (l, n, a))

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: write_faults OUTPUT\n");
        return 2;
    }
    int status = sp_setup(argv[1]);
    for (int i = 0; status == SP_OK && i < 50; i++) {
        sp_region_begin("outer");
        sp_region_begin("inner");
        sp_region_end("inner");
        sp_region_end("outer");
    }
    if (status == SP_OK) status = sp_finalize();
    printf("status=%d calls=%ld injected=%d\n", status, fault_turn_calls_seen(),
           fault_turn_injected());
    return 0;
}
