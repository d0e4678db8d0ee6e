/*
 * meta_stats_test.c - the metadata model's key index and the check of
 * statistics read from a file (issue 29 items 9 and 11):
 *   - 20,000 keys set, replaced and found: every key keeps its value and
 *     its place (insertion order is what the writer stores), a replaced
 *     key stays where it was, an absent key is not found;
 *   - spi_stats_stored_valid refuses +inf, NaN and negative m2 and a
 *     non-finite mean, naming the field, and takes ordinary statistics.
 * Unit test: compiles profile/metadata.c and profile/row_stats.c into
 * itself (scripts/check-layout allows tests/unit to include c/src).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "profile/metadata.h"
#include "profile/row_stats.h"
#include "scope_profiler.h"

#define KEYS 20000

static void test_many_keys(void) {
    spi_meta meta = {0};
    char key[32];
    CHECK(spi_meta_find(&meta, "absent") == NULL);
    for (int i = 0; i < KEYS; i++) {
        snprintf(key, sizeof key, "key_%05d", i);
        CHECK_EQ_INT(spi_meta_set_i64(&meta, key, i), SP_OK);
    }
    /* every other key replaced by a string: same place, new kind */
    for (int i = 0; i < KEYS; i += 2) {
        snprintf(key, sizeof key, "key_%05d", i);
        CHECK_EQ_INT(spi_meta_set_str(&meta, key, "replaced"), SP_OK);
    }
    CHECK_EQ_INT(meta.count, KEYS);
    for (int i = 0; i < KEYS; i++) {
        snprintf(key, sizeof key, "key_%05d", i);
        const spi_meta_entry *e = spi_meta_find(&meta, key);
        if (!CHECK(e != NULL)) continue;
        CHECK_EQ_INT(e - meta.entries, i);
        if (i % 2 == 0) {
            CHECK_EQ_INT(e->kind, SPI_META_STR);
            CHECK(strcmp(e->str, "replaced") == 0);
        } else {
            CHECK_EQ_INT(e->kind, SPI_META_I64);
            CHECK_EQ_INT(e->i64, i);
        }
    }
    CHECK(spi_meta_find(&meta, "key_20000") == NULL);
    CHECK(spi_meta_find(&meta, "") == NULL);
    spi_meta_free(&meta);
    CHECK(spi_meta_find(&meta, "key_00001") == NULL);
}

static void test_stored_stats(void) {
    spi_stats ok = {.total = 30, .minimum = 10, .maximum = 20, .mean = 15.0, .m2 = 50.0};
    const char *why = "unset";
    CHECK(spi_stats_stored_valid(&ok, &why));
    CHECK(why == NULL);
    spi_stats zero = {0};
    CHECK(spi_stats_stored_valid(&zero, NULL));
    struct { double mean, m2; const char *field; } bad[] = {
        {15.0, INFINITY, "m2 is not a finite number"},
        {15.0, NAN, "m2 is not a finite number"},
        {15.0, -1.0, "m2 (a sum of squares) is negative"},
        {INFINITY, 50.0, "mean is not a finite number"},
        {NAN, 50.0, "mean is not a finite number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        spi_stats s = ok;
        s.mean = bad[i].mean;
        s.m2 = bad[i].m2;
        why = NULL;
        CHECK(!spi_stats_stored_valid(&s, &why));
        CHECK(why && strcmp(why, bad[i].field) == 0);
    }
}

int check_failures = 0;

int main(void) {
    test_many_keys();
    test_stored_stats();
    if (check_failures) {
        fprintf(stderr, "meta_stats_test: %d check(s) failed\n", check_failures);
        return 1;
    }
    printf("meta_stats_test: ok\n");
    return 0;
}
