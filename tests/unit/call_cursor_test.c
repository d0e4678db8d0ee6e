/*
 * call_cursor_test - profile/call_cursor.c over a store that fails: the
 * slices before the failure are delivered, the failure's status and
 * message come back, and come back again on every later call (a tool
 * never mistakes a broken file for a shorter row); previous_start carries
 * the running start from slice to slice; a cursor over arrays is zero
 * copy; overflowing ends are refused naming the file.
 */
#include <stdio.h>
#include <string.h>

#include "profile/call_cursor.h"
#include "scope_profiler.h"

static int failures;
#define CHECK(cond, what)                                          \
    do {                                                           \
        if (!(cond)) {                                             \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); \
            failures++;                                            \
        }                                                          \
    } while (0)

typedef struct fake_store {
    spi_call_store base;
    uint64_t fail_from; /* reads at or past this call fail */
    int64_t huge;       /* a duration that makes the ends overflow, 0 = none */
    int64_t last_previous;
} fake_store;

/* Row 0: starts 10, 20, 30, ... (stored as deltas of 10 after the first,
 * like a schema-3 file), durations 5. */
static int fake_read(spi_call_store *base, size_t row, uint64_t first, size_t count,
                     int64_t previous_start, int64_t *starts, int64_t *durations,
                     int64_t *call_ids, int64_t *parent_ids, int64_t *thread_ids,
                     spi_error *err) {
    fake_store *s = (fake_store *)base;
    (void)row;
    (void)call_ids;
    (void)parent_ids;
    (void)thread_ids;
    s->last_previous = previous_start;
    if (first + count > s->fail_from)
        return spi_error_set(err, SP_ERR_CORRUPT, "%s: cannot read dataset events/durations",
                             base->path);
    int64_t at = first == 0 ? 0 : previous_start;
    for (size_t k = 0; k < count; k++) {
        at += 10;
        starts[k] = at;
        if (durations) durations[k] = s->huge && first + k == 5 ? s->huge : 5;
    }
    return SP_OK;
}

static void fake_release(spi_call_store *base) { (void)base; }

static void test_failure_is_sticky(void) {
    spi_row row = {.count = 10};
    fake_store store = {.base = {fake_read, fake_release, 0, "fake.h5"}, .fail_from = 7};
    spi_profile p = {.rows = &row, .row_count = 1, .store = &store.base};
    spi_call_cursor c;
    CHECK(spi_call_cursor_open(&c, &p, 0, SPI_CURSOR_ALL, 3) == SP_OK, "open");
    spi_call_slice s;
    spi_error err;
    spi_error_clear(&err);
    CHECK(spi_call_cursor_next(&c, &s, &err) == SP_OK && s.count == 3 && s.starts[2] == 30 &&
              s.ends[2] == 35,
          "first slice");
    CHECK(spi_call_cursor_next(&c, &s, &err) == SP_OK && s.count == 3 && s.starts[0] == 40,
          "second slice continues the starts");
    CHECK(store.last_previous == 30, "previous_start of the second read");
    int st = spi_call_cursor_next(&c, &s, &err);
    CHECK(st == SP_ERR_CORRUPT && s.count == 0, "third slice fails");
    CHECK(strstr(err.message, "fake.h5") != NULL, "the message names the file");
    spi_error again;
    spi_error_clear(&again);
    CHECK(spi_call_cursor_next(&c, &s, &again) == SP_ERR_CORRUPT && s.count == 0 &&
              strcmp(again.message, err.message) == 0,
          "the failure is returned again, with its message");
    spi_call_cursor_close(&c);
}

static void test_overflowing_end(void) {
    spi_row row = {.count = 10};
    fake_store store = {.base = {fake_read, fake_release, 0, "huge.h5"}, .fail_from = 100,
                        .huge = INT64_MAX};
    char name[] = "r";
    char *names[] = {name};
    spi_profile p = {.rows = &row, .row_count = 1, .store = &store.base, .names = names,
                     .name_count = 1};
    spi_call_cursor c;
    CHECK(spi_call_cursor_open(&c, &p, 0, SPI_CURSOR_ENDS, 4) == SP_OK, "open");
    spi_call_slice s;
    spi_error err;
    spi_error_clear(&err);
    CHECK(spi_call_cursor_next(&c, &s, &err) == SP_OK && s.count == 4, "before the bad call");
    CHECK(spi_call_cursor_next(&c, &s, &err) == SP_ERR_CORRUPT &&
              strstr(err.message, "huge.h5") && strstr(err.message, "out of range"),
          "an end past int64 is refused naming the file");
    spi_call_cursor_close(&c);
}

static void test_arrays_zero_copy(void) {
    int64_t starts[] = {1, 2, 3, 4, 5}, durations[] = {1, 1, 1, 1, 1}, ends[] = {2, 3, 4, 5, 6};
    spi_row row = {.count = 5, .starts = starts, .durations = durations, .ends = ends};
    spi_profile p = {.rows = &row, .row_count = 1};
    spi_call_cursor c;
    CHECK(spi_call_cursor_open(&c, &p, 0, SPI_CURSOR_ALL, 2) == SP_OK, "open");
    spi_call_slice s;
    uint64_t total = 0;
    while (spi_call_cursor_next(&c, &s, NULL) == SP_OK && s.count) {
        CHECK(s.starts == starts + total && s.ends == ends + total, "slices point into the row");
        CHECK(s.call_ids == NULL, "absent columns are NULL");
        total += s.count;
    }
    CHECK(total == 5, "every call once");
    spi_call_cursor_close(&c);
}

int main(void) {
    test_failure_is_sticky();
    test_overflowing_end();
    test_arrays_zero_copy();
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
