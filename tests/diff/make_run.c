/*
 * make_run - record a small profile with the C core for the scope-diff
 * tests. Each region spins on the recording clock for a set time, so a
 * "3x slower" region is 3x slower by construction rather than by luck of
 * the compiler's optimiser or the CPU's frequency; preemption can only
 * lengthen a call.
 *
 *   make_run OUT MODE
 *
 * MODE:
 *   base        "step" x 100 { "kernel.slow" 500 us, "kernel.same" 500 us },
 *               then "only.base" 50 us
 *   slow        the same with "kernel.slow" 1500 us, and "only.new" instead
 *               of "only.base"
 *   noisy-base  "kernel.noisy" x 8 alternating 100 us and 2000 us: a large
 *               per-call spread
 *   noisy-new   the same 30% slower (130 us / 2600 us)
 */
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

static void spin_us(int64_t us) {
    int64_t until = sp_now_ns() + us * 1000;
    while (sp_now_ns() < until) {
    }
}

static void timed(int handle, int64_t us) {
    sp_begin(handle);
    spin_us(us);
    sp_end(handle);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: make_run OUT base|slow|noisy-base|noisy-new\n");
        return 2;
    }
    const char *mode = argv[2];
    int known = !strcmp(mode, "base") || !strcmp(mode, "slow") || !strcmp(mode, "noisy-base") ||
                !strcmp(mode, "noisy-new");
    if (!known) {
        fprintf(stderr, "make_run: unknown mode '%s'\n", mode);
        return 2;
    }
    sp_options options;
    sp_options_init(&options);
    options.file_path = argv[1];
    options.label = mode;
    options.quiet = 1;
    if (sp_setup_with_options(&options) != SP_OK) return 1;
    if (!strncmp(mode, "noisy", 5)) {
        int noisy = sp_region("kernel.noisy");
        int slower = !strcmp(mode, "noisy-new");
        for (int i = 0; i < 8; i++) timed(noisy, (i % 2 ? 2000 : 100) * (slower ? 13 : 10) / 10);
    } else {
        int slow = !strcmp(mode, "slow");
        int step = sp_region("step"), k_slow = sp_region("kernel.slow"),
            k_same = sp_region("kernel.same");
        for (int i = 0; i < 100; i++) {
            sp_begin(step);
            timed(k_slow, slow ? 1500 : 500);
            timed(k_same, 500);
            sp_end(step);
        }
        timed(sp_region(slow ? "only.new" : "only.base"), 50);
    }
    return sp_finalize() == SP_OK ? 0 : 1;
}
