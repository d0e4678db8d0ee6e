/*
 * gptl_query.c - GPTLquery in a long time loop, as an adaptive code asks it
 * every few steps: the count it gives is every call the thread made so
 * far, and the wall time never goes back, however the calls are stored:
 * events in memory, events written to the spill file of a bounded trace
 * (SCOPE_PROFILER_BUFFER_LIMIT=1M, the test's first run), or aggregate
 * mode's call paths (SCOPE_PROFILER_MODE=aggregate, its second). Written
 * against GPTL's API only. Exit 0 when every answer was right.
 */
#include <stdio.h>

#include <gptl.h>

enum { STEPS = 300000, ASK_EVERY = 9973 };

int main(void) {
    int failures = 0;
    if (GPTLinitialize() != 0) return 1;
    double last = 0.0;
    for (int step = 1; step <= STEPS; step++) {
        GPTLstart("step");
        if (step % ASK_EVERY == 0) {
            int count = -1, onflg = -1;
            double wall = -1, usr, sys;
            if (GPTLquery("step", -1, &count, &onflg, &wall, &usr, &sys, NULL, 0) != 0 ||
                count != step - 1 || onflg != 1 || wall < last) {
                fprintf(stderr, "gptl_query: step %d: count %d onflg %d wallclock %.9f "
                        "(last %.9f)\n", step, count, onflg, wall, last);
                failures++;
            }
            last = wall;
        }
        GPTLstop("step");
    }
    int count = -1, onflg = -1;
    double wall = -1, usr, sys;
    if (GPTLquery("step", -1, &count, &onflg, &wall, &usr, &sys, NULL, 0) != 0 ||
        count != STEPS || onflg != 0 || wall < last) {
        fprintf(stderr, "gptl_query: at the end: count %d onflg %d wallclock %.9f\n", count,
                onflg, wall);
        failures++;
    }
    if (GPTLfinalize() != 0) failures++;
    printf("gptl_query: %d steps, %d wrong answers\n", STEPS, failures);
    return failures ? 1 : 0;
}
