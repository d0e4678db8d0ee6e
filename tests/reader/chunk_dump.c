/*
 * chunk_dump - every call of a profile reduced to one line per row and
 * column (count and an FNV-1a hash of the values), read full and on
 * demand with cursors of two slice sizes, so that chunk_stream_test.py can
 * compare the chunk stream (format/h5_chunk_stream.c) with HDF5's filters
 * (SCOPE_PROFILER_READ_VALUE_PATH=1) on the same file, byte for byte of
 * output. A file that cannot be opened or read prints its status and
 * message instead (the message names the file: both paths must give the
 * same one).
 *
 *   chunk_dump FILE
 * Exit 0 (also for a refused file: the output says so), 2 usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler_results.h"

typedef struct column_hash {
    uint64_t hash;
    uint64_t count;
} column_hash;

static void hash_values(column_hash *h, const int64_t *values, size_t count) {
    if (!values) return;
    for (size_t i = 0; i < count; i++) {
        uint64_t v = (uint64_t)values[i];
        for (int b = 0; b < 8; b++) {
            h->hash ^= (v >> (8 * b)) & 0xffu;
            h->hash *= 1099511628211ull;
        }
    }
    h->count += count;
}

enum { COLUMNS = 6 };
static const char *const column_names[COLUMNS] = {"starts",   "durations",  "ends",
                                                  "call_ids", "parent_ids", "thread_ids"};

/* Every call of every row through cursors of slice_max; prints the hashes
 * or the first error. */
static void dump_cursors(const sp_results *r, const char *label, size_t slice_max) {
    for (size_t row = 0; row < sp_results_row_count(r); row++) {
        column_hash h[COLUMNS];
        for (int c = 0; c < COLUMNS; c++) h[c] = (column_hash){1469598103934665603ull, 0};
        sp_calls *calls = NULL;
        int st = sp_calls_open(r, row, slice_max, &calls);
        char msg[1024] = "";
        sp_call_slice s;
        while (st == SP_OK && (st = sp_calls_next(calls, &s, msg, sizeof msg)) == SP_OK &&
               s.count) {
            const int64_t *cols[COLUMNS] = {s.starts,   s.durations,  s.ends,
                                            s.call_ids, s.parent_ids, s.thread_ids};
            for (int c = 0; c < COLUMNS; c++) hash_values(&h[c], cols[c], s.count);
        }
        sp_calls_close(calls);
        if (st != SP_OK) {
            printf("%s row %zu: error %d: %s\n", label, row, st, msg);
            return;
        }
        for (int c = 0; c < COLUMNS; c++)
            if (h[c].count)
                printf("%s row %zu %s: %" PRIu64 " %016" PRIx64 "\n", label, row,
                       column_names[c], h[c].count, h[c].hash);
    }
}

static void dump(const char *path, int flags, const char *label) {
    sp_results *r = NULL;
    char msg[1024] = "";
    int st = sp_results_open(path, flags, &r, msg, sizeof msg);
    if (st != SP_OK) {
        printf("%s: open: error %d: %s\n", label, st, msg);
        return;
    }
    printf("%s: %zu rows\n", label, sp_results_row_count(r));
    char name[64];
    snprintf(name, sizeof name, "%s/65536", label);
    dump_cursors(r, name, 0);
    snprintf(name, sizeof name, "%s/1000", label);
    dump_cursors(r, name, 1000);
    sp_results_close(r);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: chunk_dump FILE\n");
        return 2;
    }
    dump(argv[1], 0, "full");
    dump(argv[1], SP_RESULTS_CALLS_ON_DEMAND, "demand");
    return 0;
}
