/*
 * aggregate_memo.c - aggregate mode's inline begin by handle finds a call's
 * path through a memo in the parent's node (record/recorder.c): the child
 * found last. This records, by handle only, patterns that make the memo
 * miss and switch (children alternating under one parent, one region under
 * two parents, root calls of changing regions, recursion, which must count
 * as recursions on the enclosing path and never enter a memo), on both
 * clocks and in two sessions in a row (the second starts with another root
 * region, so a memo left from the first would put its calls on a wrong
 * path), and checks every path's count and recursions against the plan.
 * Exit 0 when all hold, 1 with a line per difference otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <scope_profiler.h>
#include <scope_profiler_results.h>

#define ROUNDS 1000

static int failures;

static void check(int ok, const char *what, const char *session) {
    if (ok) return;
    fprintf(stderr, "aggregate_memo (%s): %s\n", session, what);
    failures++;
}

/* One path's figures, looked up by its chain of region names (root first). */
typedef struct expected_path {
    const char *chain[4];
    uint64_t count;
    uint64_t recursions;
} expected_path;

static int chain_matches(const sp_results *r, size_t index, const char *const *chain,
                         int depth) {
    sp_call_path path;
    if (sp_results_call_path(r, index, &path) != SP_OK) return 0;
    if (strcmp(sp_results_region_name(r, path.region), chain[depth - 1]) != 0) return 0;
    if (depth == 1) return path.parent < 0;
    return path.parent >= 0 && chain_matches(r, (size_t)path.parent, chain, depth - 1);
}

static void record(int a, int b, int c, int c_first) {
    for (int i = 0; i < ROUNDS; i++) {
        if (c_first) { /* a root call of c before a: the root memo switches */
            sp_begin(c);
            sp_end(c);
        }
        sp_begin(a);
        sp_begin(b); /* a -> b */
        sp_end(b);
        sp_begin(c); /* a -> c: the memo of a switches to c */
        sp_begin(b); /* a -> c -> b: b under another parent */
        sp_end(b);
        sp_end(c);
        sp_begin(b); /* a -> b again: the memo of a switches back */
        sp_end(b);
        if (i % 10 == 0) {
            sp_begin(a); /* recursion: stays on a's path, counted ... */
            sp_end(a);
            sp_begin(a); /* ... every time (a memo would skip the count) */
            sp_begin(b); /* a -> b, not a -> a -> b */
            sp_end(b);
            sp_end(a);
        }
        sp_end(a);
        if (!c_first) {
            sp_begin(c);
            sp_end(c);
        }
    }
}

static void session(sp_clock clock, int c_first, const char *name) {
    sp_options options;
    sp_options_init(&options);
    options.mode = SP_MODE_AGGREGATE;
    options.clock = clock;
    options.write_file = 0;
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) {
        check(0, "setup failed", name);
        return;
    }
    int a = sp_region("memo.a"), b = sp_region("memo.b"), c = sp_region("memo.c");
    record(a, b, c, c_first);
    check(sp_last_error() == SP_OK, "a recording call failed", name);
    sp_results *r = NULL;
    int status = sp_finalize_results(&r);
    check(status == SP_OK && r != NULL, "finalize failed", name);
    if (!r) return;
    const expected_path plan[] = {
        {{"memo.a"}, ROUNDS + 2 * (ROUNDS / 10), 2 * (ROUNDS / 10)},
        {{"memo.a", "memo.b"}, 2 * ROUNDS + ROUNDS / 10, 0},
        {{"memo.a", "memo.c"}, ROUNDS, 0},
        {{"memo.a", "memo.c", "memo.b"}, ROUNDS, 0},
        {{"memo.c"}, ROUNDS, 0},
    };
    size_t paths = sp_results_call_path_count(r);
    check(paths == sizeof plan / sizeof plan[0], "not exactly the five planned paths", name);
    for (size_t p = 0; p < sizeof plan / sizeof plan[0]; p++) {
        int depth = 0;
        while (depth < 4 && plan[p].chain[depth]) depth++;
        int found = 0;
        for (size_t i = 0; i < paths; i++) {
            if (!chain_matches(r, i, plan[p].chain, depth)) continue;
            sp_call_path path;
            sp_results_call_path(r, i, &path);
            found++;
            char what[160];
            snprintf(what, sizeof what, "path %s%s%s%s%s: %llu calls, %llu recursions",
                     plan[p].chain[0], depth > 1 ? " > " : "", depth > 1 ? plan[p].chain[1] : "",
                     depth > 2 ? " > " : "", depth > 2 ? plan[p].chain[2] : "",
                     (unsigned long long)path.count, (unsigned long long)path.recursions);
            check(path.count == plan[p].count && path.recursions == plan[p].recursions, what,
                  name);
            check(path.min_ns >= 0 && path.max_ns >= path.min_ns && path.total_ns >= path.max_ns,
                  "path times out of order", name);
        }
        check(found == 1, "a planned path is missing or found twice", name);
    }
    sp_results_close(r);
}

int main(void) {
    session(SP_CLOCK_TSC, 0, "tsc, first session");
    session(SP_CLOCK_TSC, 1, "tsc, second session, c first");
    session(SP_CLOCK_MONOTONIC, 0, "monotonic, first session");
    session(SP_CLOCK_MONOTONIC, 1, "monotonic, second session, c first");
    if (failures == 0) printf("aggregate_memo: all paths as planned\n");
    return failures ? 1 : 0;
}
