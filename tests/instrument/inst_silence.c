/*
 * inst_silence.c - silenced functions (excluded or throttled) and the
 * patching of their hook calls (tests/instrument, issue 32; check_silence.py
 * runs it with SCOPE_PROFILER_THROTTLE=100,1000000 and a filter excluding
 * filtered*, once with SCOPE_PROFILER_PATCH=0 and once with =1).
 *
 *   main -> caller_a(50), caller_b(50): each calls hot, hot_inline (always
 *           inlined: one copy of its hooks in each caller), filtered and
 *           filtered_inline per step: hot and hot_inline reach 100 recorded
 *           calls each (the threshold) and are throttled; filtered* never
 *           appear
 *   main -> rec(110): a recursion throttled at its 100th end while 11 of its
 *           frames are open; each of the outer 10 then calls rec(1) (two
 *           silenced recursive calls inside its own open frame) and marker
 *           (recorded: must nest under that rec, not above it; it calls
 *           rec(0), silenced), and ends
 *   2 threads -> worker -> caller_a(5000), caller_b(5000) x3: only the
 *           callers and worker are recorded
 *   main -> rec(5) x3: silenced, nothing recorded (patched once no frame of
 *           rec is open)
 * With argument "deep" (throttling off): see deep() below.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static volatile unsigned sink;

/* Unsigned: the sums wrap, as they may. */
__attribute__((noinline)) unsigned hot(unsigned x) { return x - sink; }
__attribute__((noinline)) unsigned filtered(unsigned x) { return x ^ sink; }
#define INLINE static inline __attribute__((always_inline))
INLINE unsigned hot_inline(unsigned x) { return x * 3 + sink; }
INLINE unsigned filtered_inline(unsigned x) { return x + sink; }

__attribute__((noinline)) unsigned caller_a(unsigned n) {
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++) s += hot(i) + hot_inline(i) + filtered(i) + filtered_inline(i);
    return s;
}

__attribute__((noinline)) unsigned caller_b(unsigned n) {
    unsigned s = 0;
    for (unsigned i = 0; i < n; i++)
        s += filtered_inline(i + 1) + hot_inline(i) + filtered(i) + hot(i);
    return s;
}

unsigned rec(int k);

/* Recorded; its rec(0) is a silenced call whose top frame is marker's, not
 * rec's: rec's sites must stay unpatched while rec's own frames are open. */
__attribute__((noinline)) unsigned marker(int x) { return (unsigned)x + rec(0); }

#define REC_DEPTH 110
#define REC_THRESHOLD 100 /* the throttle's calls: rec(99) is the 100th to end */

__attribute__((noinline)) unsigned rec(int k) {
    if (k <= 0) return sink;
    unsigned s = rec(k - 1);
    if (k > REC_THRESHOLD) s += rec(1) + marker(k); /* after the verdict, frame open */
    return s;
}

/* deep: a recursion past the shadow stack's 1024 frames (main is the
 * first): deep(1100) .. deep(78) are recorded, deep(77) .. deep(0) are not
 * (direct recursion on top of deep(78)'s frame), nor is other() called at
 * deep(50) (not on top: ignored at full depth); probe() at every hundred
 * from 1100 to 100 is recorded inside its deep frame. */
__attribute__((noinline)) unsigned probe(void) { return sink; }
__attribute__((noinline)) unsigned other(void) { return sink + 1; }

__attribute__((noinline)) unsigned deep(int k) {
    if (k <= 0) return sink;
    unsigned s = deep(k - 1);
    if (k % 100 == 0) s += probe();
    if (k == 50) s += other();
    return s;
}

/* Threads only read sink (written by main before and after them). */
static void *worker(void *result) {
    unsigned s = 0;
    for (int round = 0; round < 3; round++) s += caller_a(5000) + caller_b(5000);
    *(unsigned *)result = s;
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "deep") == 0) {
        sink = deep(1100);
        return 0;
    }
    sink = caller_a(50) + caller_b(50);
    sink = rec(REC_DEPTH);
    pthread_t threads[2];
    unsigned results[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&threads[i], NULL, worker, &results[i]) != 0) return 1;
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    sink = results[0] + results[1];
    for (int i = 0; i < 3; i++) sink = rec(5);
    return 0;
}
