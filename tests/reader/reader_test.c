/*
 * reader_test.c - tests of the reader through the public results API.
 *
 * Usage: reader_test <test-name> <data-dir>   run one test (one ctest entry)
 *        reader_test dump <file> [summary]    print rows for check_expected.py
 *
 * Every malformed input is made by the test itself in its working
 * directory, from a fixture copy or from scratch, so no test depends on
 * another one's leftovers. Checks record a failure and continue (the
 * acutest style), printing the expression and both values with file:line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"
#include "scope_profiler_results.h"

static int failures;
static const char *data_dir;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#define CHECK_INT(a, b)                                                                   \
    do {                                                                                  \
        long long va_ = (long long)(a), vb_ = (long long)(b);                             \
        if (va_ != vb_) {                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", __FILE__,   \
                    __LINE__, #a, #b, va_, vb_);                                          \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

#define CHECK_STR(a, b)                                                                   \
    do {                                                                                  \
        const char *sa_ = (a), *sb_ = (b);                                                \
        if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n",         \
                    __FILE__, __LINE__, #a, #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static void data_path(char *buf, size_t bytes, const char *rel) {
    snprintf(buf, bytes, "%s/%s", data_dir, rel);
}

static sp_results *open_ok(const char *path, int flags) {
    char msg[1024];
    sp_results *res = NULL;
    int st = sp_results_open(path, flags, &res, msg, sizeof msg);
    if (st != SP_OK) {
        fprintf(stderr, "open %s failed: %s: %s\n", path, sp_status_name(st), msg);
        failures++;
        return NULL;
    }
    CHECK_STR(msg, "");
    return res;
}

/* ---- file helpers --------------------------------------------------------- */

static unsigned char *slurp(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static int spill(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t put = fwrite(data, 1, size, f);
    fclose(f);
    return put == size ? 0 : -1;
}

static int copy_fixture(const char *rel, const char *dest) {
    char src[4096];
    data_path(src, sizeof src, rel);
    size_t size;
    unsigned char *buf = slurp(src, &size);
    if (!buf) return -1;
    int rc = spill(dest, buf, size);
    free(buf);
    return rc;
}

/* Open `path` expecting `status`; the message must name the file and
 * contain `needle` (when not NULL). */
static void expect_failure(const char *path, int flags, int status, const char *needle) {
    char msg[1024];
    sp_results *res = (sp_results *)&msg; /* must be reset to NULL */
    int st = sp_results_open(path, flags, &res, msg, sizeof msg);
    if (st != status)
        fprintf(stderr, "%s: got %s (%s), expected %s\n", path, sp_status_name(st), msg,
                sp_status_name(status));
    CHECK_INT(st, status);
    CHECK(res == NULL);
    if (!strstr(msg, path)) {
        fprintf(stderr, "message does not name the file %s: %s\n", path, msg);
        failures++;
    }
    if (needle && !strstr(msg, needle)) {
        fprintf(stderr, "message lacks \"%s\": %s\n", needle, msg);
        failures++;
    }
    if (st == SP_OK) sp_results_close(res);
}

/* ---- the golden "solve" region --------------------------------------------- */

static void check_solve(sp_results *res, int has_source, const char *source_file, int has_tag) {
    if (!res) return;
    long region = sp_results_region_find(res, "solve");
    CHECK(region >= 0);
    long row = sp_results_row_find(res, 0, (size_t)region);
    CHECK(row >= 0);
    if (region < 0 || row < 0) return;
    CHECK_INT(sp_results_row_calls(res, (size_t)row), 3);
    const int64_t *starts = sp_results_row_starts(res, (size_t)row);
    const int64_t *ends = sp_results_row_ends(res, (size_t)row);
    const int64_t *durations = sp_results_row_durations(res, (size_t)row);
    CHECK(starts && ends && durations);
    if (starts && ends && durations) {
        const int64_t want_s[3] = {10, 20, 40}, want_e[3] = {15, 33, 55};
        for (int i = 0; i < 3; i++) {
            CHECK_INT(starts[i], want_s[i]);
            CHECK_INT(ends[i], want_e[i]);
            CHECK_INT(durations[i], want_e[i] - want_s[i]);
        }
    }
    CHECK_INT(sp_results_rank_count(res), 1);
    if (has_source) {
        CHECK_INT(sp_results_row_source_line(res, (size_t)row), 7);
        CHECK_STR(sp_results_row_source_file(res, (size_t)row), source_file);
    }
    if (has_tag) {
        CHECK_INT(sp_results_row_tag_count(res, (size_t)row), 1);
        CHECK_STR(sp_results_row_tag(res, (size_t)row, 0), "golden");
    }
    sp_row_stats stats;
    CHECK_INT(sp_results_row_stats(res, (size_t)row, &stats), SP_OK);
    CHECK_INT(stats.total, 33);
    CHECK_INT(stats.minimum, 5);
    CHECK_INT(stats.maximum, 15);
    CHECK_INT(stats.start_minimum, 10);
    CHECK_INT(stats.end_maximum, 55);
    CHECK_INT(stats.source, SP_STATS_FROM_EVENTS);
}

static void test_compat_schema1(void) {
    char path[4096];
    data_path(path, sizeof path, "compat/schema1.h5");
    sp_results *res = open_ok(path, 0);
    check_solve(res, 1, "solver.py", 1);
    CHECK_INT(sp_results_schema_version(res), 1);
    long mpi = sp_results_metadata_find(res, "mpi_size");
    int64_t v = 0;
    CHECK(mpi >= 0);
    CHECK_INT(sp_results_metadata_int(res, (size_t)mpi, &v), SP_OK);
    CHECK_INT(v, 1);
    sp_results_close(res);
    /* Schema 1 has no stored statistics. */
    expect_failure(path, SP_RESULTS_SUMMARY_ONLY, SP_ERR_NO_SUMMARY, "schema-2 or newer");
}

static void test_compat_schema2(void) {
    char path[4096];
    data_path(path, sizeof path, "compat/schema2.h5");
    sp_results *res = open_ok(path, 0);
    check_solve(res, 1, "solver.py", 1);
    CHECK_INT(sp_results_schema_version(res), 2);
    sp_results_close(res);
}

static void test_compat_schema3(void) {
    char path[4096];
    data_path(path, sizeof path, "compat/schema3.h5");
    sp_results *res = open_ok(path, 0);
    check_solve(res, 1, "solver.py", 1);
    CHECK_INT(sp_results_schema_version(res), 3);
    sp_results_close(res);
    /* The schema-3 fixture has a minimal index without summary_statistics. */
    expect_failure(path, SP_RESULTS_SUMMARY_ONLY, SP_ERR_NO_SUMMARY,
                   "no fixed-size summary statistics");
}

static void test_compat_spt_v1(void) {
    char path[4096];
    data_path(path, sizeof path, "compat/native-v1.spt");
    sp_results *res = open_ok(path, 0);
    check_solve(res, 0, NULL, 0);
    CHECK_INT(sp_results_format_kind(res), SP_RESULTS_FORMAT_TRACE);
    CHECK_INT(sp_results_schema_version(res), 1);
    if (res) CHECK(sp_results_row_source_file(res, 0) == NULL);
    sp_results_close(res);
}

static void test_compat_spt_v2(void) {
    char path[4096];
    data_path(path, sizeof path, "compat/native-v2.spt");
    sp_results *res = open_ok(path, 0);
    check_solve(res, 1, "solver.c", 0);
    CHECK_INT(sp_results_schema_version(res), 2);
    sp_results_close(res);
}

/* Byte-swap every integer of the v2 fixture: the reader must detect the
 * order from the version field and give the same data. */
static void test_spt_big_endian(void) {
    const char *path = "big-endian.spt";
    /* Built by hand so the test does not depend on the fixture's layout. */
    unsigned char buf[256];
    size_t n = 0;
#define BE(v, bytes)                                                         \
    do {                                                                     \
        uint64_t x_ = (uint64_t)(v);                                         \
        for (int i_ = (bytes) - 1; i_ >= 0; i_--) buf[n++] = (unsigned char)(x_ >> (8 * i_)); \
    } while (0)
    memcpy(buf, "SCOPEPRF", 8);
    n = 8;
    BE(2, 4);
    BE(0, 4);
    BE(1, 8);
    BE(5, 4);
    memcpy(buf + n, "solve", 5);
    n += 5;
    BE(8, 4);
    memcpy(buf + n, "solver.c", 8);
    n += 8;
    BE(7, 4);
    BE(3, 8);
    BE(10, 8);
    BE(20, 8);
    BE(40, 8);
    BE(15, 8);
    BE(33, 8);
    BE(55, 8);
#undef BE
    CHECK(spill(path, buf, n) == 0);
    sp_results *res = open_ok(path, 0);
    check_solve(res, 1, "solver.c", 0);
    sp_results_close(res);
}

/* ---- malformed inputs ------------------------------------------------------ */

static void test_missing_file(void) {
    expect_failure("does-not-exist.h5", 0, SP_ERR_FILE_NOT_FOUND,
                   "HDF5 file not found: does-not-exist.h5");
}

static void test_random_bytes(void) {
    const char *path = "random.h5";
    unsigned char buf[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    CHECK(spill(path, buf, sizeof buf) == 0);
    expect_failure(path, 0, SP_ERR_NOT_A_PROFILE, "is not a readable HDF5 profiling file");
    CHECK(spill("empty.h5", "", 0) == 0);
    expect_failure("empty.h5", 0, SP_ERR_NOT_A_PROFILE, NULL);
}

/* Every prefix length of a real profile must fail cleanly (or, for a
 * length HDF5 can still read, succeed): never crash. */
static void test_truncated(void) {
    char src[4096];
    data_path(src, sizeof src, "driver/serial.h5");
    size_t size;
    unsigned char *buf = slurp(src, &size);
    CHECK(buf != NULL);
    if (!buf) return;
    const char *path = "truncated.h5";
    CHECK(spill(path, buf, size / 2) == 0);
    expect_failure(path, 0, SP_ERR_NOT_A_PROFILE, "is not a readable HDF5 profiling file");
    size_t step = size / 64 ? size / 64 : 1;
    for (size_t len = 0; len < size; len += step) {
        CHECK(spill(path, buf, len) == 0);
        char msg[1024];
        sp_results *res = NULL;
        int st = sp_results_open(path, 0, &res, msg, sizeof msg);
        if (st != SP_OK) {
            CHECK(res == NULL);
            CHECK(strstr(msg, path) != NULL);
        }
        sp_results_close(res);
    }
    free(buf);
}

static int run_python(const char *script_args) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s", SCOPE_PROFILER_PYTHON3, script_args);
    return system(cmd);
}

/* Modify a copy of schema3.h5 with h5py (the mutation is a few lines of
 * Python in mutate.py); 77 when h5py is missing. */
static int mutate(const char *fixture, const char *dest, const char *how) {
    if (copy_fixture(fixture, dest) != 0) return -1;
    char args[4096];
    snprintf(args, sizeof args, "%s/mutate.py %s %s", SCOPE_PROFILER_TEST_SOURCE_DIR, dest, how);
    int rc = run_python(args);
    if (rc != 0) fprintf(stderr, "mutate.py %s %s failed (%d)\n", dest, how, rc);
    return rc;
}

static void test_offsets_past_end(void) {
    const char *path = "past-end.h5";
    CHECK(mutate("compat/schema3.h5", path, "offset_past_end") == 0);
    char want[4200];
    snprintf(want, sizeof want,
             "%s claims 103 recorded events but its event columns hold 3. The file is "
             "truncated or damaged.",
             path);
    expect_failure(path, 0, SP_ERR_CORRUPT, want);
}

static void test_overlapping_rows(void) {
    const char *path = "overlap.h5";
    CHECK(mutate("driver/serial.h5", path, "overlap") == 0);
    char want[4200];
    snprintf(want, sizeof want,
             "%s has overlapping region rows in its event index. The file is damaged.", path);
    expect_failure(path, 0, SP_ERR_CORRUPT, want);
}

static void test_schema4(void) {
    const char *path = "schema4.h5";
    CHECK(mutate("compat/schema3.h5", path, "schema4") == 0);
    expect_failure(path, 0, SP_ERR_SCHEMA_UNSUPPORTED,
                   "Unsupported scope-profiler HDF5 schema version 4; this package supports "
                   "versions through 3. Upgrade scope-profiler to read this file.");
}

static void test_schema_not_integer(void) {
    const char *path = "schema-str.h5";
    CHECK(mutate("compat/schema3.h5", path, "schema_str") == 0);
    expect_failure(path, 0, SP_ERR_SCHEMA_UNSUPPORTED,
                   "HDF5 schema version attribute 'scope_profiler_schema' must be an integer, "
                   "got '3'");
    path = "schema-bool.h5";
    CHECK(mutate("compat/schema3.h5", path, "schema_bool") == 0);
    expect_failure(path, 0, SP_ERR_SCHEMA_UNSUPPORTED, "must be an integer, got True");
    path = "schema-zero.h5";
    CHECK(mutate("compat/schema3.h5", path, "schema_zero") == 0);
    expect_failure(path, 0, SP_ERR_SCHEMA_UNSUPPORTED, "versions must be positive");
}

static void test_region_out_of_range(void) {
    const char *path = "bad-region.h5";
    CHECK(mutate("compat/schema3.h5", path, "region_out_of_range") == 0);
    expect_failure(path, 0, SP_ERR_CORRUPT, "out-of-range region id");
}

static void test_summary_checks(void) {
    const char *path = "dup-summary.h5";
    CHECK(mutate("driver/serial.h5", path, "duplicate_row") == 0);
    expect_failure(path, SP_RESULTS_SUMMARY_ONLY, SP_ERR_NO_SUMMARY,
                   "summary index contains a duplicate rank/region row");
    path = "no-tags.h5";
    CHECK(mutate("driver/serial.h5", path, "drop_tags") == 0);
    expect_failure(path, SP_RESULTS_SUMMARY_ONLY, SP_ERR_NO_SUMMARY,
                   "schema-2 summary index is missing dataset(s): tags");
    /* The full reader tolerates the missing optional column. */
    sp_results *res = open_ok(path, 0);
    if (res) CHECK_STR(sp_results_row_tags_json(res, 0), "[]");
    sp_results_close(res);
}

static void test_spt_errors(void) {
    char src[4096];
    data_path(src, sizeof src, "compat/native-v2.spt");
    size_t size;
    unsigned char *buf = slurp(src, &size);
    CHECK(buf != NULL);
    if (!buf) return;
    unsigned char *copy = malloc(size + 8);
    CHECK(copy != NULL);
    if (!copy) {
        free(buf);
        return;
    }

    memcpy(copy, buf, size);
    memcpy(copy, "NOTATRCE", 8);
    CHECK(spill("bad-magic.spt", copy, size) == 0);
    expect_failure("bad-magic.spt", 0, SP_ERR_NOT_A_PROFILE,
                   "not a scope-profiler Fortran trace (expected b'SCOPEPRF', found b'NOTATRCE')");

    memcpy(copy, buf, size);
    copy[8] = 9;
    CHECK(spill("bad-version.spt", copy, size) == 0);
    expect_failure("bad-version.spt", 0, SP_ERR_SCHEMA_UNSUPPORTED,
                   "unsupported trace format version 9 (this scope-profiler reads versions (1, 2))");

    memcpy(copy, buf, size);
    memcpy(copy + size, "\0\0\0", 3);
    CHECK(spill("trailing.spt", copy, size + 3) == 0);
    expect_failure("trailing.spt", 0, SP_ERR_CORRUPT, "3 trailing byte(s) after the last region");

    CHECK(spill("short.spt", buf, 10) == 0);
    expect_failure("short.spt", 0, SP_ERR_NOT_A_PROFILE, "too short to be a trace file");

    /* Every truncation after the header is a clean "truncated" error. */
    for (size_t len = 24; len < size; len++) {
        CHECK(spill("cut.spt", buf, len) == 0);
        expect_failure("cut.spt", 0, SP_ERR_CORRUPT, "truncated trace file");
    }

    /* A huge call count must not allocate: it is checked against the bytes. */
    memcpy(copy, buf, size);
    size_t count_at = size - 6 * 8 - 8;
    memset(copy + count_at, 0x7f, 8);
    CHECK(spill("huge.spt", copy, size) == 0);
    expect_failure("huge.spt", 0, SP_ERR_CORRUPT, "truncated trace file");

    /* A trace renamed to .h5 is still recognised by its magic. */
    CHECK(spill("trace-named.h5", buf, size) == 0);
    sp_results *res = open_ok("trace-named.h5", 0);
    check_solve(res, 1, "solver.c", 0);
    sp_results_close(res);
    free(copy);
    free(buf);
}

/* Random byte edits of a trace must always give a status, never a crash
 * (run under AddressSanitizer in CI). HDF5 files are not fuzzed here: the
 * HDF5 1.10 library itself crashes on some damaged object headers. */
static void test_spt_fuzz(void) {
    char src[4096];
    data_path(src, sizeof src, "compat/native-v2.spt");
    size_t size;
    unsigned char *buf = slurp(src, &size);
    CHECK(buf != NULL);
    if (!buf) return;
    unsigned char *copy = malloc(size);
    uint32_t x = 2024;
    int opened = 0;
    for (int iter = 0; copy && iter < 3000; iter++) {
        memcpy(copy, buf, size);
        x = x * 1103515245u + 12345u;
        int edits = 1 + (int)((x >> 16) % 4);
        for (int e = 0; e < edits; e++) {
            x = x * 1103515245u + 12345u;
            size_t at = 8 + (x >> 8) % (size - 8); /* keep the magic */
            x = x * 1103515245u + 12345u;
            copy[at] = (unsigned char)(x >> 16);
        }
        x = x * 1103515245u + 12345u;
        size_t len = (x >> 16) % 8 == 0 ? (x >> 3) % size : size;
        CHECK(spill("fuzz.spt", copy, len) == 0);
        char msg[1024];
        sp_results *res = NULL;
        int st = sp_results_open("fuzz.spt", 0, &res, msg, sizeof msg);
        if (st == SP_OK) {
            opened++;
            for (size_t row = 0; row < sp_results_row_count(res); row++) {
                const int64_t *s = sp_results_row_starts(res, row);
                const int64_t *e = sp_results_row_ends(res, row);
                uint64_t calls = sp_results_row_calls(res, row);
                CHECK((calls == 0) == (s == NULL) && (s == NULL) == (e == NULL));
            }
        } else {
            CHECK(res == NULL && strstr(msg, "fuzz.spt") != NULL);
        }
        sp_results_close(res);
    }
    CHECK(opened > 0);
    free(copy);
    free(buf);
}

/* ---- driver fixtures: features beyond the counts ----------------------------- */

static void test_driver_serial(void) {
    char path[4096];
    data_path(path, sizeof path, "driver/serial.h5");
    sp_results *res = open_ok(path, 0);
    if (!res) return;
    CHECK_INT(sp_results_schema_version(res), 3);
    long label = sp_results_metadata_find(res, "label");
    CHECK(label >= 0);
    CHECK_STR(sp_results_metadata_string(res, (size_t)label), "driver");
    /* serial.h5 records the real call tree: ids present, parents smaller. */
    size_t with_ids = 0;
    for (size_t row = 0; row < sp_results_row_count(res); row++) {
        const int64_t *ids = sp_results_row_call_ids(res, row);
        const int64_t *parents = sp_results_row_parent_ids(res, row);
        CHECK(sp_results_row_thread_ids(res, row) == NULL);
        if (!ids) continue;
        with_ids++;
        CHECK(parents != NULL);
        for (uint64_t i = 0; parents && i < sp_results_row_calls(res, row); i++)
            CHECK(parents[i] < ids[i]);
        const int64_t *s = sp_results_row_starts(res, row), *e = sp_results_row_ends(res, row);
        for (uint64_t i = 0; s && e && i < sp_results_row_calls(res, row); i++) CHECK(e[i] >= s[i]);
    }
    CHECK(with_ids > 0);
    long solve = sp_results_region_find(res, "solve");
    long row = solve >= 0 ? sp_results_row_find(res, 0, (size_t)solve) : -1;
    CHECK(row >= 0);
    if (row >= 0) {
        CHECK_STR(sp_results_row_tags_json(res, (size_t)row), "[\"hot\"]");
        CHECK_STR(sp_results_row_tag(res, (size_t)row, 0), "hot");
        CHECK(sp_results_row_source_file(res, (size_t)row) != NULL);
        CHECK(sp_results_row_source_line(res, (size_t)row) > 0);
    }
    sp_results_close(res);
}

static void test_driver_threads(void) {
    char path[4096];
    data_path(path, sizeof path, "driver/threads.h5");
    sp_results *res = open_ok(path, 0);
    if (!res) return;
    size_t threads = sp_results_thread_count(res);
    CHECK(threads >= 3);
    for (size_t i = 0; i < threads; i++) {
        sp_thread_info info;
        CHECK_INT(sp_results_thread(res, i, &info), SP_OK);
        CHECK(info.name != NULL);
    }
    long task = sp_results_region_find(res, "worker.task");
    long row = task >= 0 ? sp_results_row_find(res, 0, (size_t)task) : -1;
    CHECK(row >= 0);
    if (row >= 0) {
        const int64_t *tid = sp_results_row_thread_ids(res, (size_t)row);
        CHECK(tid != NULL);
        for (uint64_t i = 0; tid && i < sp_results_row_calls(res, (size_t)row); i++)
            CHECK(tid[i] >= 0 && (size_t)tid[i] < threads);
    }
    sp_thread_info info;
    CHECK_INT(sp_results_thread(res, threads, &info), SP_ERR_INVALID_ARGUMENT);
    sp_results_close(res);
}

static void test_driver_perf(void) {
    char path[4096];
    data_path(path, sizeof path, "driver/perf.h5");
    sp_results *res = open_ok(path, 0);
    if (!res) return;
    size_t records = sp_results_perf_count(res);
    CHECK(records > 0);
    int saw_task_clock = 0;
    for (size_t i = 0; i < records; i++) {
        const char *region = NULL;
        size_t counters = 0;
        int64_t calls = -1;
        CHECK_INT(sp_results_perf_record(res, i, NULL, &region, &calls, &counters), SP_OK);
        CHECK(region && sp_results_region_find(res, region) >= 0);
        CHECK(calls >= 1);
        CHECK_INT(counters, 3);
        for (size_t c = 0; c < counters; c++) {
            const char *name = NULL;
            CHECK_INT(sp_results_perf_counter(res, i, c, &name, NULL), SP_OK);
            if (name && strcmp(name, "task-clock") == 0) saw_task_clock = 1;
        }
    }
    CHECK(saw_task_clock);
    sp_results_close(res);
}

static void test_driver_aggregate(void) {
    char path[4096];
    data_path(path, sizeof path, "driver/aggregate.h5");
    sp_results *res = open_ok(path, 0);
    if (!res) return;
    CHECK(sp_results_is_aggregate(res));
    CHECK(!sp_results_has_events(res));
    CHECK(sp_results_row_count(res) > 0);
    for (size_t row = 0; row < sp_results_row_count(res); row++) {
        CHECK(sp_results_row_starts(res, row) == NULL);
        CHECK(sp_results_row_calls(res, row) > 0);
        sp_row_stats st;
        CHECK_INT(sp_results_row_stats(res, row, &st), SP_OK);
        CHECK_INT(st.source, SP_STATS_AGGREGATE);
        CHECK(st.minimum <= st.maximum && st.total >= st.maximum);
    }
    sp_results_close(res);
}

static void test_driver_mpi4_strings(void) {
    /* The collective writer's fixed-length strings read like vlen ones. */
    char fixed[4096], vlen[4096];
    data_path(fixed, sizeof fixed, "driver/mpi4.h5");
    data_path(vlen, sizeof vlen, "driver/mpi4_direct.h5");
    sp_results *a = open_ok(fixed, 0), *b = open_ok(vlen, 0);
    if (a && b) {
        CHECK_INT(sp_results_region_count(a), sp_results_region_count(b));
        CHECK_INT(sp_results_rank_count(a), 4);
        for (size_t i = 0; i < sp_results_region_count(a); i++)
            CHECK(sp_results_region_find(b, sp_results_region_name(a, i)) >= 0);
        long only = sp_results_region_find(a, "rank3.only");
        CHECK(only >= 0);
        CHECK(sp_results_row_find(a, 3, (size_t)only) >= 0);
        CHECK(sp_results_row_find(a, 0, (size_t)only) < 0);
        long solve = sp_results_region_find(a, "solve");
        long row = solve >= 0 ? sp_results_row_find(a, 2, (size_t)solve) : -1;
        CHECK(row >= 0);
        if (row >= 0) CHECK_STR(sp_results_row_tag(a, (size_t)row, 0), "hot");
    }
    sp_results_close(a);
    sp_results_close(b);
}

static void test_summary_only(void) {
    /* Summary-only must agree with the full read on every stored statistic
     * and never expose per-call arrays. */
    char path[4096];
    data_path(path, sizeof path, "driver/gzip.h5");
    sp_results *full = open_ok(path, 0), *sum = open_ok(path, SP_RESULTS_SUMMARY_ONLY);
    if (full && sum) {
        CHECK(sp_results_is_summary_only(sum));
        CHECK_INT(sp_results_row_count(full), sp_results_row_count(sum));
        for (size_t row = 0; row < sp_results_row_count(sum); row++) {
            sp_row_stats a, b;
            sp_results_row_stats(full, row, &a);
            sp_results_row_stats(sum, row, &b);
            CHECK_INT(b.source, SP_STATS_STORED);
            CHECK_INT(a.count, b.count);
            CHECK_INT(a.total, b.total);
            CHECK_INT(a.minimum, b.minimum);
            CHECK_INT(a.maximum, b.maximum);
            CHECK_INT(a.first, b.first);
            CHECK_INT(a.last, b.last);
            CHECK_INT(a.start_minimum, b.start_minimum);
            CHECK_INT(a.end_maximum, b.end_maximum);
            CHECK(sp_results_row_starts(sum, row) == NULL);
            CHECK(sp_results_row_ends(sum, row) == NULL);
        }
    }
    sp_results_close(full);
    sp_results_close(sum);
}

static void test_metadata_kinds(void) {
    const char *path = "meta-kinds.h5";
    CHECK(mutate("compat/schema3.h5", path, "metadata_kinds") == 0);
    sp_results *res = open_ok(path, 0);
    if (!res) return;
    int64_t i = 0;
    double d = 0;
    long k;
    k = sp_results_metadata_find(res, "an_i32");
    CHECK_INT(sp_results_metadata_kind(res, (size_t)k), SP_META_KIND_INT);
    CHECK_INT(sp_results_metadata_int(res, (size_t)k, &i), SP_OK);
    CHECK_INT(i, -7);
    k = sp_results_metadata_find(res, "a_u8");
    CHECK_INT(sp_results_metadata_int(res, (size_t)k, &i), SP_OK);
    CHECK_INT(i, 200);
    k = sp_results_metadata_find(res, "a_float");
    CHECK_INT(sp_results_metadata_kind(res, (size_t)k), SP_META_KIND_DOUBLE);
    CHECK_INT(sp_results_metadata_double(res, (size_t)k, &d), SP_OK);
    CHECK(d == 2.5);
    k = sp_results_metadata_find(res, "a_bool");
    CHECK_INT(sp_results_metadata_kind(res, (size_t)k), SP_META_KIND_BOOL);
    CHECK_INT(sp_results_metadata_int(res, (size_t)k, &i), SP_OK);
    CHECK_INT(i, 1);
    k = sp_results_metadata_find(res, "a_list");
    CHECK_INT(sp_results_metadata_kind(res, (size_t)k), SP_META_KIND_STRING_ARRAY);
    CHECK_INT(sp_results_metadata_array_length(res, (size_t)k), 2);
    CHECK_STR(sp_results_metadata_array_item(res, (size_t)k, 1), "b");
    k = sp_results_metadata_find(res, "empty_list");
    CHECK_INT(sp_results_metadata_kind(res, (size_t)k), SP_META_KIND_STRING_ARRAY);
    CHECK_INT(sp_results_metadata_array_length(res, (size_t)k), 0);
    k = sp_results_metadata_find(res, "fixed_str");
    CHECK_STR(sp_results_metadata_string(res, (size_t)k), "fixed");
    CHECK(sp_results_metadata_find(res, "no such key") < 0);
    CHECK(sp_results_metadata_key(res, 100000) == NULL);
    sp_results_close(res);
}

static void test_api_misuse(void) {
    char msg[64];
    sp_results *res = NULL;
    CHECK_INT(sp_results_open(NULL, 0, &res, msg, sizeof msg), SP_ERR_INVALID_ARGUMENT);
    CHECK_INT(sp_results_open("x.h5", 0, NULL, msg, sizeof msg), SP_ERR_INVALID_ARGUMENT);
    CHECK_INT(sp_results_open("x.h5", 8, &res, msg, sizeof msg), SP_ERR_INVALID_ARGUMENT);
    /* A tiny error buffer is cut, never overrun. */
    char tiny[8];
    CHECK_INT(sp_results_open("does-not-exist.h5", 0, &res, tiny, sizeof tiny),
              SP_ERR_FILE_NOT_FOUND);
    CHECK_INT(strlen(tiny), 7);
    CHECK(sp_results_row_count(NULL) == 0);
    CHECK(sp_results_region_name(NULL, 0) == NULL);
    sp_results_close(NULL);
}

/* ---- dump mode for check_expected.py -------------------------------------- */

static int dump(const char *path, int flags) {
    char msg[1024];
    sp_results *res = NULL;
    int st = sp_results_open(path, flags, &res, msg, sizeof msg);
    if (st != SP_OK) {
        printf("error %s %s\n", sp_status_name(st), msg);
        return 0;
    }
    printf("num_ranks %u\n", sp_results_rank_count(res));
    printf("aggregate %d\n", sp_results_is_aggregate(res));
    for (size_t row = 0; row < sp_results_row_count(res); row++) {
        sp_row_stats stats;
        sp_results_row_stats(res, row, &stats);
        /* The name goes last: it may contain anything but a newline. */
        printf("row %u %llu %lld %s\n", sp_results_row_rank(res, row),
               (unsigned long long)sp_results_row_calls(res, row), (long long)stats.total,
               sp_results_region_name(res, sp_results_row_region(res, row)));
    }
    sp_results_close(res);
    return 0;
}

typedef struct test_entry {
    const char *name;
    void (*fn)(void);
} test_entry;

static const test_entry tests[] = {
    {"compat_schema1", test_compat_schema1},
    {"compat_schema2", test_compat_schema2},
    {"compat_schema3", test_compat_schema3},
    {"compat_spt_v1", test_compat_spt_v1},
    {"compat_spt_v2", test_compat_spt_v2},
    {"spt_big_endian", test_spt_big_endian},
    {"missing_file", test_missing_file},
    {"random_bytes", test_random_bytes},
    {"truncated", test_truncated},
    {"offsets_past_end", test_offsets_past_end},
    {"overlapping_rows", test_overlapping_rows},
    {"schema4", test_schema4},
    {"schema_not_integer", test_schema_not_integer},
    {"region_out_of_range", test_region_out_of_range},
    {"summary_checks", test_summary_checks},
    {"spt_errors", test_spt_errors},
    {"spt_fuzz", test_spt_fuzz},
    {"driver_serial", test_driver_serial},
    {"driver_threads", test_driver_threads},
    {"driver_perf", test_driver_perf},
    {"driver_aggregate", test_driver_aggregate},
    {"driver_mpi4_strings", test_driver_mpi4_strings},
    {"summary_only", test_summary_only},
    {"metadata_kinds", test_metadata_kinds},
    {"api_misuse", test_api_misuse},
};

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "dump") == 0)
        return dump(argv[2], argc >= 4 && strcmp(argv[3], "summary") == 0
                                 ? SP_RESULTS_SUMMARY_ONLY
                                 : 0);
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) printf("%s\n", tests[i].name);
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: %s <test> <data-dir> | dump <file> [summary] | list\n", argv[0]);
        return 2;
    }
    data_dir = argv[2];
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        if (strcmp(tests[i].name, argv[1]) != 0) continue;
        tests[i].fn();
        if (failures) fprintf(stderr, "%s: %d check(s) failed\n", argv[1], failures);
        return failures ? 1 : 0;
    }
    fprintf(stderr, "unknown test %s\n", argv[1]);
    return 2;
}
