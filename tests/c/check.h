/*
 * check.h - the assertions of the C tests.
 *
 * CHECK records a failure (printing the expression, both values and
 * file:line) and lets the test go on, so one run shows every broken
 * expectation; REQUIRE also ends the test function, for preconditions the
 * rest depends on. A test's exit status is 1 if any check failed, 77 to
 * skip, 0 otherwise (what ctest understands).
 */
#ifndef SP_TEST_CHECK_H
#define SP_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>

extern int check_failures;

#define CHECK(cond)                                                            \
    ((cond) ? 1                                                                \
            : (fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond), \
               check_failures++, 0))

#define CHECK_EQ_INT(actual, expected)                                         \
    do {                                                                       \
        long long a_ = (long long)(actual), e_ = (long long)(expected);        \
        if (a_ != e_) {                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", \
                    __FILE__, __LINE__, #actual, #expected, a_, e_);           \
            check_failures++;                                                  \
        }                                                                      \
    } while (0)

#define REQUIRE(cond)                                                          \
    do {                                                                       \
        if (!CHECK(cond)) return;                                              \
    } while (0)

/* REQUIRE for a test function that returns int (1: it stopped early). */
#define REQUIRE_INT(cond)                                                      \
    do {                                                                       \
        if (!CHECK(cond)) return 1;                                            \
    } while (0)

#endif
