/*
 * hot.c - the per-call benchmark's program (bench/instrument/run.py): one
 * tiny function called CALLS times (10^8 by default) from one loop. Built
 * without -finstrument-functions (the baseline: the call itself) and with
 * it (the hooks around every call: the function excluded by a filter file,
 * or throttled by the default rule). (instrumented - plain) / CALLS is
 * what one call of an excluded or throttled function costs.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long tiny(unsigned long x) { return x * 2654435761u + 1; }

int main(int argc, char **argv) {
    unsigned long calls = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000000ul;
    unsigned long acc = 0;
    for (unsigned long i = 0; i < calls; i++) acc += tiny(i);
    sink = acc;
    printf("%lu\n", acc & 0xff);
    return 0;
}
