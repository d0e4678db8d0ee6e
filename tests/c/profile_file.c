/*
 * profile_file.c - see profile_file.h. Reads only what the tests compare,
 * with no cleverness: every column whole, start_deltas decoded per row.
 */
#include "profile_file.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t *read_i64(hid_t file, const char *path, hsize_t *n) {
    hid_t dset = H5Dopen2(file, path, H5P_DEFAULT);
    if (dset < 0) return NULL;
    hid_t space = H5Dget_space(dset);
    hsize_t dims[1] = {0};
    H5Sget_simple_extent_dims(space, dims, NULL);
    int64_t *data = calloc(dims[0] ? dims[0] : 1, sizeof *data);
    if (dims[0]) H5Dread(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Sclose(space);
    H5Dclose(dset);
    *n = dims[0];
    return data;
}

int test_profile_load(test_profile *p, const char *path) {
    memset(p, 0, sizeof *p);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    hid_t names = H5Dopen2(file, "region_table/names", H5P_DEFAULT);
    hid_t space = H5Dget_space(names);
    hsize_t n = 0;
    H5Sget_simple_extent_dims(space, &n, NULL);
    p->region_count = (int)n;
    p->names = calloc(n ? n : 1, sizeof *p->names);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, H5T_VARIABLE);
    H5Tset_cset(str, H5T_CSET_UTF8);
    if (n) H5Dread(names, str, H5S_ALL, H5S_ALL, H5P_DEFAULT, p->names);
    H5Tclose(str);
    H5Sclose(space);
    H5Dclose(names);

    hsize_t rows = 0, tmp = 0, events = 0;
    int64_t *region_ids = read_i64(file, "rank_region_index/region_ids", &rows);
    int64_t *offsets = read_i64(file, "rank_region_index/event_offsets", &tmp);
    p->row_counts = read_i64(file, "rank_region_index/event_counts", &tmp);
    p->row_exclusive = read_i64(file, "rank_region_index/exclusive_totals", &tmp);
    int64_t *deltas = read_i64(file, "events/start_deltas", &events);
    int64_t *durations = read_i64(file, "events/durations", &tmp);
    int64_t *call_ids = read_i64(file, "events/call_ids", &tmp);
    int64_t *parent_ids = read_i64(file, "events/parent_ids", &tmp);
    p->has_thread_ids = H5Lexists(file, "events/thread_ids", H5P_DEFAULT) > 0;
    int64_t *thread_ids = p->has_thread_ids ? read_i64(file, "events/thread_ids", &tmp) : NULL;
    if (H5Lexists(file, "thread_table", H5P_DEFAULT) > 0) {
        int64_t *index = read_i64(file, "thread_table/index", &tmp);
        p->thread_table_rows = (int)tmp;
        free(index);
    }
    p->row_count = (int)rows;
    p->row_region = calloc(rows ? rows : 1, sizeof *p->row_region);
    p->call_count = (int64_t)events;
    p->calls = calloc(events ? events : 1, sizeof *p->calls);
    int ok = region_ids && offsets && p->row_counts && deltas && durations;
    for (hsize_t r = 0; ok && r < rows; r++) {
        p->row_region[r] = (int)region_ids[r];
        int64_t start = 0;
        for (int64_t i = offsets[r]; i < offsets[r] + p->row_counts[r]; i++) {
            start = (i == offsets[r]) ? deltas[i] : start + deltas[i];
            p->calls[i] = (test_call){start, start + durations[i],
                                      call_ids ? call_ids[i] : -1,
                                      parent_ids ? parent_ids[i] : -1,
                                      thread_ids ? thread_ids[i] : -1, (int)region_ids[r]};
        }
    }
    free(region_ids);
    free(offsets);
    free(deltas);
    free(durations);
    free(call_ids);
    free(parent_ids);
    free(thread_ids);
    H5Fclose(file);
    if (!ok) fprintf(stderr, "%s: missing columns\n", path);
    return ok ? 0 : -1;
}

void test_profile_free(test_profile *p) {
    for (int i = 0; i < p->region_count; i++) H5free_memory(p->names[i]);
    free(p->names);
    free(p->row_counts);
    free(p->row_exclusive);
    free(p->row_region);
    free(p->calls);
    memset(p, 0, sizeof *p);
}

int test_profile_region(const test_profile *p, const char *name) {
    for (int i = 0; i < p->region_count; i++)
        if (strcmp(p->names[i], name) == 0) return i;
    return -1;
}

int64_t test_profile_calls(const test_profile *p, const char *name) {
    int region = test_profile_region(p, name);
    int64_t calls = 0;
    for (int r = 0; r < p->row_count; r++)
        if (p->row_region[r] == region) calls += p->row_counts[r];
    return calls;
}

const test_call *test_profile_call(const test_profile *p, int64_t call_id) {
    for (int64_t i = 0; i < p->call_count; i++)
        if (p->calls[i].call_id == call_id) return &p->calls[i];
    return NULL;
}
