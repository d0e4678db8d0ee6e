/*
 * unit_check.h - the check macro the unit test programs share: a failed
 * check prints where it is, the condition and a formatted message, counts
 * the failure and lets the test go on (so one run shows every failure);
 * main ends with `return failures ? 1 : 0`. One per program (static).
 */
#ifndef SP_UNIT_CHECK_H
#define SP_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, "\n");                                                   \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#endif /* SP_UNIT_CHECK_H */
