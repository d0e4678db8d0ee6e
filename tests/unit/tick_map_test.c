/*
 * tick_map_test.c - the ticks -> ns map (c/src/record/tick_map.c) on
 * synthetic anchors: the cases a real machine produces only rarely (an
 * unstable TSC in a VM, a thread migrating between cores whose counters
 * are out of step, anchors out of order or equal) must never give a
 * negative duration or a child starting before its parent.
 *
 * A unit test of an internal module: it compiles tick_map.c and the
 * allocation wrapper into itself (the library hides internal symbols), the
 * one kind of test allowed to include c/src headers (scripts/check-layout).
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "record/tick_map.h"
#include "scope_profiler.h"

int check_failures = 0;

static int64_t map_of(spi_tick_map *map, int64_t ticks) { return spi_tick_map_ns(map, ticks); }

/* Anchors on one line are reproduced exactly, inside and beyond them. */
static int test_line(void) {
    spi_anchor a[] = {{1000, 5000}, {3000, 5800}, {9000, 8200}};
    spi_tick_map map;
    REQUIRE_INT(spi_tick_map_build(&map, a, 3) == SP_OK);
    for (int64_t t = 0; t < 20000; t += 7) {
        int64_t want = 5000 + (t - 1000) * 4 / 10;
        CHECK_EQ_INT(map_of(&map, t) - want < 2 && want - map_of(&map, t) < 2, 1);
    }
    spi_tick_map_free(&map);
    return 0;
}

/* Every pair a <= b maps to f(a) <= f(b): no negative duration, and a
 * child [c, d] inside its parent [a, b] stays inside it. */
static int check_monotone(spi_tick_map *map, int64_t from, int64_t to, unsigned seed) {
    int64_t previous = map_of(map, from);
    for (int64_t t = from; t <= to; t += 1 + (int64_t)(rand_r(&seed) % 37)) {
        int64_t now = map_of(map, t);
        if (now < previous) {
            fprintf(stderr, "map goes back at tick %lld: %lld after %lld\n", (long long)t,
                    (long long)now, (long long)previous);
            return 1;
        }
        previous = now;
    }
    for (int i = 0; i < 10000; i++) {
        int64_t span = to - from;
        int64_t a = from + (int64_t)(rand_r(&seed) % (unsigned)span);
        int64_t b = a + (int64_t)(rand_r(&seed) % (unsigned)(to - a + 1));
        int64_t c = a + (int64_t)(rand_r(&seed) % (unsigned)(b - a + 1));
        int64_t d = c + (int64_t)(rand_r(&seed) % (unsigned)(b - c + 1));
        int64_t fa = map_of(map, a), fb = map_of(map, b), fc = map_of(map, c), fd = map_of(map, d);
        if (!(fa <= fc && fc <= fd && fd <= fb)) {
            fprintf(stderr, "nesting broken: [%lld %lld] in [%lld %lld]\n", (long long)fc,
                    (long long)fd, (long long)fa, (long long)fb);
            return 1;
        }
    }
    return 0;
}

/* An unstable TSC: an anchor whose ns goes back, equal ticks, any order. */
static int test_unstable(void) {
    spi_anchor a[] = {{300, 150}, {0, 0}, {200, 40}, {100, 50}, {100, 60}, {400, 155},
                      {250, 152}, {500, 300}};
    spi_tick_map map;
    REQUIRE_INT(spi_tick_map_build(&map, a, sizeof a / sizeof *a) == SP_OK);
    for (size_t i = 1; i < map.count; i++) {
        CHECK(map.anchors[i].ticks > map.anchors[i - 1].ticks);
        CHECK(map.anchors[i].ns >= map.anchors[i - 1].ns);
    }
    CHECK_EQ_INT(check_monotone(&map, -1000, 2000, 1), 0);
    spi_tick_map_free(&map);
    return 0;
}

/* Two threads on cores whose counters are 700 ticks apart: their anchors
 * interleave in a zig-zag; the map keeps a monotone subset. */
static int test_migration(void) {
    spi_anchor a[64];
    size_t n = 0;
    for (int i = 0; i < 32; i++) {
        int64_t ns = 1000000 + i * 10000;
        a[n++] = (spi_anchor){ns * 3, ns};                   /* core 0: 3 ticks/ns */
        a[n++] = (spi_anchor){ns * 3 - 700, ns + 2};          /* core 1: behind */
    }
    spi_tick_map map;
    REQUIRE_INT(spi_tick_map_build(&map, a, n) == SP_OK);
    CHECK_EQ_INT(check_monotone(&map, 2900000, 4000000, 7), 0);
    spi_tick_map_free(&map);
    return 0;
}

/* One anchor (a run without calls): 1 tick = 1 ns around it. */
static int test_single(void) {
    spi_anchor a = {1000, 99};
    spi_tick_map map;
    REQUIRE_INT(spi_tick_map_build(&map, &a, 1) == SP_OK);
    CHECK_EQ_INT(map_of(&map, 1500), 599);
    spi_tick_map_free(&map);
    CHECK_EQ_INT(spi_tick_map_build(&map, &a, 0), SP_ERR_INVALID_ARGUMENT);
    return 0;
}

/* Thinning: collinear anchors collapse, an anchor off the line stays. */
static int test_thinning(void) {
    spi_anchor_list list = {0};
    for (int i = 0; i < 1000; i++)
        REQUIRE_INT(spi_anchor_list_add(&list, (spi_anchor){i * 1000, 5 + i * 400}) == SP_OK);
    CHECK(list.count <= 3);
    size_t before = list.count;
    REQUIRE_INT(spi_anchor_list_add(&list, (spi_anchor){1000000, 400000 + 5000}) == SP_OK);
    REQUIRE_INT(spi_anchor_list_add(&list, (spi_anchor){1001000, 400400 + 5000}) == SP_OK);
    CHECK(list.count == before + 1 || list.count == before + 2);
    /* the bent line is still reproduced at the kink */
    spi_tick_map map;
    REQUIRE_INT(spi_tick_map_build(&map, list.items, list.count) == SP_OK);
    CHECK_EQ_INT(map_of(&map, 999000), 5 + 999 * 400);
    spi_tick_map_free(&map);
    spi_anchor_list_free(&list);
    return 0;
}

int main(void) {
    test_line();
    test_unstable();
    test_migration();
    test_single();
    test_thinning();
    if (check_failures) {
        fprintf(stderr, "tick_map_test: %d check(s) failed\n", check_failures);
        return 1;
    }
    printf("tick_map_test: ok\n");
    return 0;
}
