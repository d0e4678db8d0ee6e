/*
 * inspect_counters.c - the counter tables of scope-inspect, kept out of
 * scope-inspect.c so the counters display grows without touching the
 * tool's main file. Public results API only.
 *
 * One block per rank: a row per region with its calls and every event
 * total, then the ratios perf users read first when both halves exist:
 * IPC (instructions / cycles), cache-miss and branch-miss rates.
 */
#include "inspect_counters.h"

#include <string.h>

static int counter(const sp_results *res, size_t record, const char *name, double *value) {
    size_t n = 0;
    sp_results_perf_record(res, record, NULL, NULL, NULL, &n);
    for (size_t c = 0; c < n; c++) {
        const char *event;
        uint64_t v;
        if (sp_results_perf_counter(res, record, c, &event, &v) == SP_OK &&
            strcmp(event, name) == 0) {
            *value = (double)v;
            return 1;
        }
    }
    return 0;
}

static void print_ratios(FILE *out, const sp_results *res, size_t record) {
    double a, b;
    int any = 0;
    if ((counter(res, record, "instructions", &a)) &&
        (counter(res, record, "cycles", &b) || counter(res, record, "cpu-cycles", &b)) && b > 0)
        fprintf(out, "%s IPC %.3f", any++ ? "," : "      ", a / b);
    if (counter(res, record, "cache-misses", &a) && counter(res, record, "cache-references", &b) &&
        b > 0)
        fprintf(out, "%s cache-miss rate %.2f%%", any++ ? "," : "      ", 100.0 * a / b);
    if (counter(res, record, "branch-misses", &a) &&
        (counter(res, record, "branches", &b) || counter(res, record, "branch-instructions", &b)) &&
        b > 0)
        fprintf(out, "%s branch-miss rate %.2f%%", any++ ? "," : "      ", 100.0 * a / b);
    if (any) fputc('\n', out);
}

void inspect_print_counters(FILE *out, const sp_results *res) {
    size_t n = sp_results_perf_count(res);
    uint32_t current = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        uint32_t rank;
        const char *region;
        int64_t calls;
        size_t k;
        if (sp_results_perf_record(res, i, &rank, &region, &calls, &k) != SP_OK) continue;
        if (rank != current) {
            fprintf(out, "\nperf events, rank %u (inclusive totals over threads):\n", rank);
            current = rank;
        }
        fprintf(out, "  %-24s %10lld call%s\n", region, (long long)calls, calls == 1 ? "" : "s");
        for (size_t c = 0; c < k; c++) {
            const char *event;
            uint64_t value;
            if (sp_results_perf_counter(res, i, c, &event, &value) != SP_OK) continue;
            fprintf(out, "      %-22s %20llu\n", event, (unsigned long long)value);
        }
        print_ratios(out, res, i);
    }
}
