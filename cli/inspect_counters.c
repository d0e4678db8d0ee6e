/*
 * inspect_counters.c - the counter tables of scope-inspect, kept out of
 * scope-inspect.c so the counters display grows without touching the
 * tool's main file. Public results API only.
 *
 * One block per rank: a row per region with its calls and every event
 * total, then the ratios perf users read first when both halves exist:
 * IPC (instructions / cycles), cache-miss and branch-miss rates.
 *
 * LIKWID: one block per (rank, performance group), a table per marker
 * region with one column per hardware thread, the way likwid-perfctr
 * prints it: calls and LIKWID's time first, then the group's metrics
 * (what people read), then the raw events they are derived from.
 *
 * --json gives the same data whole, under stable keys, lists rather than
 * objects keyed by event name (names are not guaranteed unique in a file
 * written by another tool).
 */
#include "inspect_counters.h"

#include "cli_common.h"
#include "scope_profiler_summary.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>


bool inspect_rank_selected(inspect_ranks selected, uint32_t rank) {
    if (selected.count == 0) return true;
    for (size_t i = 0; i < selected.count; i++)
        if (selected.ranks[i] == rank) return true;
    return false;
}

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

static void print_perf(FILE *out, const sp_results *res, inspect_ranks selected) {
    size_t n = sp_results_perf_count(res);
    uint32_t current = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        uint32_t rank;
        const char *region;
        int64_t calls;
        size_t k;
        if (sp_results_perf_record(res, i, &rank, &region, &calls, &k) != SP_OK) continue;
        if (!inspect_rank_selected(selected, rank)) continue;
        if (rank != current) {
            fprintf(out, "\nperf events, rank %u (inclusive totals over threads):\n", rank);
            current = rank;
        }
        char text[512];
        fprintf(out, "  %-24s %10lld call%s\n", cli_text(region, text, sizeof text),
                (long long)calls, calls == 1 ? "" : "s");
        for (size_t c = 0; c < k; c++) {
            const char *event;
            uint64_t value;
            if (sp_results_perf_counter(res, i, c, &event, &value) != SP_OK) continue;
            fprintf(out, "      %-22s %20llu\n", cli_text(event, text, sizeof text),
                    (unsigned long long)value);
        }
        print_ratios(out, res, i);
    }
}

/* ---- LIKWID text ------------------------------------------------------------ */

enum { LIKWID_VALUE_WIDTH = 14 };

static bool same_block(const sp_results *res, size_t a, size_t b) {
    uint32_t ra, rb;
    const char *ga, *gb;
    if (sp_results_likwid_record(res, a, &ra, NULL, &ga, NULL, NULL, NULL) != SP_OK ||
        sp_results_likwid_record(res, b, &rb, NULL, &gb, NULL, NULL, NULL) != SP_OK)
        return false;
    return ra == rb && strcmp(ga, gb) == 0;
}

static void likwid_row(FILE *out, int name_width, const char *name, const char *counter,
                       size_t threads, const double *dvalues, const int64_t *ivalues) {
    char label[256], safe_name[128], safe_counter[128];
    cli_text(name, safe_name, sizeof safe_name);
    if (counter && counter[0])
        snprintf(label, sizeof label, "%s (%s)", safe_name,
                 cli_text(counter, safe_counter, sizeof safe_counter));
    else snprintf(label, sizeof label, "%s", safe_name);
    fprintf(out, "    %-*s", name_width, label);
    for (size_t t = 0; t < threads; t++) {
        if (ivalues) fprintf(out, " %*lld", LIKWID_VALUE_WIDTH, (long long)ivalues[t]);
        else if (dvalues) fprintf(out, " %*.6g", LIKWID_VALUE_WIDTH, dvalues[t]);
    }
    fputc('\n', out);
}

static void likwid_region(FILE *out, const sp_results *res, size_t i) {
    const char *tag, *source;
    size_t threads = 0;
    sp_results_likwid_record(res, i, NULL, &tag, NULL, NULL, &source, &threads);
    size_t events = sp_results_likwid_event_count(res, i);
    size_t metrics = sp_results_likwid_metric_count(res, i);
    /* The label column fits the longest name, so values line up. */
    int width = 20;
    for (size_t m = 0; m < metrics; m++) {
        const char *name;
        if (sp_results_likwid_metric(res, i, m, &name, NULL) == SP_OK &&
            (int)sp_escape_name(name, NULL, 0) > width)
            width = (int)sp_escape_name(name, NULL, 0);
    }
    for (size_t e = 0; e < events; e++) {
        const char *name, *counter;
        if (sp_results_likwid_event(res, i, e, &name, &counter, NULL) != SP_OK) continue;
        int len = (int)(sp_escape_name(name, NULL, 0) +
                        (counter && counter[0] ? sp_escape_name(counter, NULL, 0) + 3 : 0));
        if (len > width) width = len;
    }
    if (width > 60) width = 60;
    fputs("  region ", out);
    cli_text_put(out, tag);
    if (source[0]) {
        fputs(" (", out);
        cli_text_put(out, source);
        fputc(')', out);
    }
    fputc('\n', out);
    const int64_t *cpus = sp_results_likwid_cpus(res, i);
    fprintf(out, "    %-*s", width, "");
    for (size_t t = 0; t < threads; t++) {
        char head[48];
        snprintf(head, sizeof head, "HWThread %lld", cpus ? (long long)cpus[t] : (long long)t);
        fprintf(out, " %*s", LIKWID_VALUE_WIDTH, head);
    }
    fputc('\n', out);
    likwid_row(out, width, "calls", NULL, threads, NULL, sp_results_likwid_call_counts(res, i));
    likwid_row(out, width, "time [s]", NULL, threads, sp_results_likwid_times(res, i), NULL);
    if (metrics) fprintf(out, "    metrics:\n");
    for (size_t m = 0; m < metrics; m++) {
        const char *name;
        const double *v;
        if (sp_results_likwid_metric(res, i, m, &name, &v) == SP_OK)
            likwid_row(out, width, name, NULL, threads, v, NULL);
    }
    if (events) fprintf(out, "    events:\n");
    for (size_t e = 0; e < events; e++) {
        const char *name, *counter;
        const double *v;
        if (sp_results_likwid_event(res, i, e, &name, &counter, &v) == SP_OK)
            likwid_row(out, width, name, counter, threads, v, NULL);
    }
}

static void print_likwid(FILE *out, const sp_results *res, inspect_ranks selected) {
    size_t n = sp_results_likwid_count(res);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) seen = same_block(res, i, j);
        if (seen) continue; /* printed with its block */
        uint32_t rank;
        const char *group;
        int64_t id;
        sp_results_likwid_record(res, i, &rank, NULL, &group, &id, NULL, NULL);
        if (!inspect_rank_selected(selected, rank)) continue;
        fputs("\nLIKWID group ", out);
        cli_text_put(out, group[0] ? group : "(unnamed)");
        if (id >= 0) fprintf(out, " (id %lld)", (long long)id);
        fprintf(out, ", rank %u (per hardware thread):\n", rank);
        for (size_t j = i; j < n; j++)
            if (j == i || same_block(res, i, j)) likwid_region(out, res, j);
    }
}

void inspect_print_counters(FILE *out, const sp_results *res, inspect_ranks selected) {
    print_perf(out, res, selected);
    print_likwid(out, res, selected);
}

/* ---- JSON ----------------------------------------------------------------------- */

/* A JSON string, or null for a missing one. */
static void json_text(FILE *out, const char *s) {
    if (s) cli_json_string(out, s);
    else fputs("null", out);
}

/* JSON has no NaN or infinity; LIKWID metrics can be either (0/0). */
static void json_double(FILE *out, double v) {
    if (isfinite(v)) fprintf(out, "%.17g", v);
    else fputs("null", out);
}

static void json_doubles(FILE *out, const double *v, size_t n) {
    fputc('[', out);
    for (size_t t = 0; v && t < n; t++) {
        if (t) fputs(", ", out);
        json_double(out, v[t]);
    }
    fputc(']', out);
}

static void json_ints(FILE *out, const int64_t *v, size_t n) {
    fputc('[', out);
    for (size_t t = 0; v && t < n; t++) fprintf(out, "%s%lld", t ? ", " : "", (long long)v[t]);
    fputc(']', out);
}

static void json_perf(FILE *out, const sp_results *res, inspect_ranks selected) {
    size_t n = sp_results_perf_count(res), written = 0;
    fputs("\"perf_events\": [", out);
    for (size_t i = 0; i < n; i++) {
        uint32_t rank;
        const char *region;
        int64_t calls;
        size_t k;
        if (sp_results_perf_record(res, i, &rank, &region, &calls, &k) != SP_OK ||
            !inspect_rank_selected(selected, rank))
            continue;
        fprintf(out, "%s\n      {\"rank\": %u, \"region\": ", written++ ? "," : "", rank);
        json_text(out, region);
        fprintf(out, ", \"calls\": %lld, \"events\": [", (long long)calls);
        for (size_t c = 0; c < k; c++) {
            const char *event;
            uint64_t value;
            if (sp_results_perf_counter(res, i, c, &event, &value) != SP_OK) continue;
            fputs(c ? ", {\"name\": " : "{\"name\": ", out);
            json_text(out, event);
            fprintf(out, ", \"value\": %llu}", (unsigned long long)value);
        }
        fputs("]}", out);
    }
    fputs(written ? "\n    ]" : "]", out);
}

static void json_likwid(FILE *out, const sp_results *res, inspect_ranks selected) {
    size_t n = sp_results_likwid_count(res), written = 0;
    fputs("\"likwid\": [", out);
    for (size_t i = 0; i < n; i++) {
        uint32_t rank;
        const char *tag, *group, *source;
        int64_t id;
        size_t threads;
        if (sp_results_likwid_record(res, i, &rank, &tag, &group, &id, &source, &threads) !=
                SP_OK ||
            !inspect_rank_selected(selected, rank))
            continue;
        fprintf(out, "%s\n      {\"rank\": %u, \"tag\": ", written++ ? "," : "", rank);
        json_text(out, tag);
        fputs(", \"group_name\": ", out);
        json_text(out, group);
        fprintf(out, ", \"group_id\": %lld, \"source\": ", (long long)id);
        json_text(out, source);
        fprintf(out, ",\n       \"num_threads\": %zu, \"cpus\": ", threads);
        json_ints(out, sp_results_likwid_cpus(res, i), threads);
        fputs(", \"call_counts\": ", out);
        json_ints(out, sp_results_likwid_call_counts(res, i), threads);
        fputs(", \"times\": ", out);
        json_doubles(out, sp_results_likwid_times(res, i), threads);
        fputs(",\n       \"metrics\": [", out);
        for (size_t m = 0; m < sp_results_likwid_metric_count(res, i); m++) {
            const char *name;
            const double *v;
            if (sp_results_likwid_metric(res, i, m, &name, &v) != SP_OK) continue;
            fputs(m ? ", {\"name\": " : "{\"name\": ", out);
            json_text(out, name);
            fputs(", \"values\": ", out);
            json_doubles(out, v, threads);
            fputc('}', out);
        }
        fputs("],\n       \"events\": [", out);
        for (size_t e = 0; e < sp_results_likwid_event_count(res, i); e++) {
            const char *name, *counter;
            const double *v;
            if (sp_results_likwid_event(res, i, e, &name, &counter, &v) != SP_OK) continue;
            fputs(e ? ", {\"name\": " : "{\"name\": ", out);
            json_text(out, name);
            fputs(", \"counter\": ", out);
            json_text(out, counter);
            fputs(", \"values\": ", out);
            json_doubles(out, v, threads);
            fputc('}', out);
        }
        fputs("]}", out);
    }
    fputs(written ? "\n    ]" : "]", out);
}

void inspect_json_counters(FILE *out, const sp_results *res, inspect_ranks selected) {
    fputs("  \"counters\": {\n    ", out);
    json_perf(out, res, selected);
    fputs(",\n    ", out);
    json_likwid(out, res, selected);
    fputs("\n  },\n", out);
}
