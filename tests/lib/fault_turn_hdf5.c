/*
 * fault_turn_hdf5.c - the HDF5 entry points of a profile's write path that
 * both write-path fault tests interpose (fault_turn.h): creating the file,
 * its groups, datasets and attributes, writing them, the property lists
 * and dataspaces they need, flushing and closing. Compiled into
 * write_faults (the library's own writer) and tool_faults_preload (the
 * tools' writers); each adds the calls only its subject makes.
 */
#define _GNU_SOURCE
#include "fault_turn.h"

FAULT_FORWARD(hid_t, -1, H5Fcreate, (const char *n, unsigned f, hid_t c, hid_t a), (n, f, c, a))
FAULT_FORWARD(hid_t, -1, H5Gcreate2, (hid_t l, const char *n, hid_t a, hid_t b, hid_t c),
              (l, n, a, b, c))
FAULT_FORWARD(hid_t, -1, H5Gopen2, (hid_t l, const char *n, hid_t a), (l, n, a))
FAULT_FORWARD(hid_t, -1, H5Dcreate2,
              (hid_t l, const char *n, hid_t t, hid_t s, hid_t a, hid_t b, hid_t c),
              (l, n, t, s, a, b, c))
FAULT_FORWARD(herr_t, -1, H5Dwrite, (hid_t d, hid_t m, hid_t ms, hid_t fs, hid_t p, const void *b),
              (d, m, ms, fs, p, b))
FAULT_FORWARD(hid_t, -1, H5Acreate2, (hid_t l, const char *n, hid_t t, hid_t s, hid_t a, hid_t b),
              (l, n, t, s, a, b))
FAULT_FORWARD(herr_t, -1, H5Awrite, (hid_t a, hid_t t, const void *b), (a, t, b))
FAULT_FORWARD(hid_t, -1, H5Screate_simple, (int r, const hsize_t *d, const hsize_t *m), (r, d, m))
FAULT_FORWARD(hid_t, -1, H5Pcreate, (hid_t c), (c))
FAULT_FORWARD(herr_t, -1, H5Pset_chunk, (hid_t p, int n, const hsize_t *d), (p, n, d))
FAULT_FORWARD(herr_t, -1, H5Pset_deflate, (hid_t p, unsigned l), (p, l))
FAULT_FORWARD(herr_t, -1, H5Fflush, (hid_t o, int s), (o, s))
FAULT_CLOSE(herr_t, -1, H5Fclose, hid_t)
FAULT_CLOSE(herr_t, -1, H5Dclose, hid_t)
FAULT_CLOSE(herr_t, -1, H5Gclose, hid_t)
FAULT_CLOSE(herr_t, -1, H5Aclose, hid_t)
