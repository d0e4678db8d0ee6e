/*
 * profile_file.h - an independent, deliberately plain reader for the core
 * tests: it reads a written schema-3 file with the HDF5 C API directly (not
 * through the library), so the tests check the file, not the library's own
 * view of it.
 */
#ifndef SP_TEST_PROFILE_FILE_H
#define SP_TEST_PROFILE_FILE_H

#include <stdint.h>

typedef struct test_call {
    int64_t start;
    int64_t end;
    int64_t call_id;
    int64_t parent_id;
    int64_t thread_id; /* -1 when the file has no thread_ids */
    int region;        /* index into names */
} test_call;

typedef struct test_profile {
    int region_count;
    char **names;
    int row_count;
    int64_t *row_counts;     /* calls per row */
    int64_t *row_exclusive;  /* exclusive_totals */
    int *row_region;
    int64_t call_count;
    test_call *calls;        /* all calls, row by row, starts decoded */
    int has_thread_ids;
    int thread_table_rows;
} test_profile;

/* 0 on success; prints the reason and returns -1 otherwise. */
int test_profile_load(test_profile *profile, const char *path);
void test_profile_free(test_profile *profile);
/* Region index of name, or -1. */
int test_profile_region(const test_profile *profile, const char *name);
/* Number of calls of a region. */
int64_t test_profile_calls(const test_profile *profile, const char *name);
/* The call with this id, or NULL. */
const test_call *test_profile_call(const test_profile *profile, int64_t call_id);

#endif
