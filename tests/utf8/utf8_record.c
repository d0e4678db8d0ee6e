/*
 * utf8_record.c - records regions whose names are not valid UTF-8 (C code
 * may name a region with any bytes), from a thread whose name is not valid
 * UTF-8 either, and writes the file named by argv[1]. check_utf8.py reads
 * it back (docs/FORMAT.md 2.1: such bytes are stored as U+FFFD).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

static const char *const names[] = {
    "ok",
    "caf\xc3\xa9",    /* valid two-byte UTF-8: kept */
    "bad\xff",        /* invalid byte */
    "bad\xfe",        /* another one: equal to the previous once repaired */
    "cut\xe2\x82",    /* a three-byte sequence cut short */
    "\xc0\xaf",       /* an overlong form of '/' */
};

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: utf8_record OUT.h5\n");
        return 2;
    }
    pthread_setname_np(pthread_self(), "main\xff");
    int status = sp_setup(argv[1]);
    if (status != SP_OK) return 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        sp_region_begin(names[i]);
        sp_region_end(names[i]);
    }
    status = sp_finalize();
    return status == SP_OK ? 0 : 1;
}
