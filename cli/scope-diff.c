/*
 * scope-diff - compare two profiles region by region: for one statistic,
 * the base and new values, the change, whether it crosses a threshold and
 * whether the per-call spread explains it; optionally fail a CI job on a
 * regression.
 *
 * A thin main over the public API (scope_profiler_results.h,
 * scope_profiler_summary.h): arguments, rendering and exit codes live here,
 * the comparison in scope_diff_compare.c, every statistic in the library.
 */
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_isolate.h"
#include "scope_diff.h"
#include "scope_profiler.h"
#include "scope_profiler_results.h"
#include "scope_profiler_summary.h"

/* 4 is ours: 0-3 mean what they mean for every tool of the project. */
static const char TOOL[] = "scope-diff";
enum { EXIT_REGRESSION = 4 }; /* --fail-on-regression: a regression was found */

#define MAX_PATTERNS 64

static const char *const usage_text =
    "Usage: scope-diff [OPTIONS] BASE NEW\n"
    "       scope-diff --scaling [--weak] [OPTIONS] RUN1 RUN2 [RUN3...]\n"
    "\n"
    "Compare two scope-profiler runs (HDF5 schema 1-3, the aggregate layout, or\n"
    ".spt traces) region by region. Regions are matched by name and pooled over\n"
    "all ranks (every call weighs the same). For the chosen metric it prints the\n"
    "base and new values, the absolute and relative change, the call counts, and\n"
    "a status: regression / improvement (changed by more than the threshold),\n"
    "within noise, unchanged, added (only in NEW), removed (only in BASE), or\n"
    "n/a (the metric cannot be computed for one run, e.g. percentiles of an\n"
    "aggregate file). Every metric counts larger as worse. Durations are in\n"
    "seconds.\n"
    "\n"
    "Noise test: when both runs have per-call data, Welch's t statistic compares\n"
    "the per-call (inclusive) durations of each region:\n"
    "    t = (mean_new - mean_base) / sqrt(s_base^2/n_base + s_new^2/n_new)\n"
    "with n the calls, mean their mean and s their sample standard deviation.\n"
    "A change beyond the threshold with |t| < 2 is reported as \"within noise\":\n"
    "the spread of the calls explains it. The test needs 2 calls on each side.\n"
    "Call counts are exact, and a total (or exclusive) over a different number of\n"
    "calls did not change by chance, so those are never called noise.\n"
    "\n"
    "Session: the run's wall time, the longest rank's span from its first start\n"
    "to its last end (not available for aggregate files).\n"
    "\n"
    "Rank counts: when BASE and NEW ran on different numbers of ranks, the sums\n"
    "(total, exclusive, calls) are compared as per-rank means (the sum over the\n"
    "ranks divided by the run's number of ranks) and the output says so; --sum\n"
    "compares the summed totals instead.\n"
    "\n"
    "Scaling (--scaling): per region, its time in each run (the per-rank mean of\n"
    "its total, T), the speedup and the parallel efficiency against the first\n"
    "run, and the status of the two-run comparison with the first run (the noise\n"
    "test above decides what is a change). P is the run's number of ranks.\n"
    "    strong scaling (default): speedup T_1/T_k, efficiency T_1/T_k * P_1/P_k\n"
    "    weak scaling (--weak):    speedup T_1/T_k * P_k/P_1, efficiency T_1/T_k\n"
    "\n"
    "Options:\n"
    "  --metric NAME        total (default), avg, p50, p95, p99, calls, exclusive\n"
    "  --threshold PCT      relative change that counts, in percent (default 5)\n"
    "  --fail-on-regression exit 4 when a region's metric got worse by more than\n"
    "                       the threshold and not within noise (added and removed\n"
    "                       regions do not fail)\n"
    "  --include REGEX      only regions whose name matches (POSIX extended regex,\n"
    "                       anchored at the start of the name); repeatable\n"
    "  --exclude REGEX      leave out regions whose name matches; repeatable\n"
    "  --sort KEY           change (default: largest absolute change first),\n"
    "                       name, base, new (largest value first)\n"
    "  --sum                runs on different rank counts: compare the summed\n"
    "                       totals, not the per-rank means\n"
    "  --scaling            any number of runs (the first is the reference): time,\n"
    "                       speedup and efficiency per region and run\n"
    "  --weak               with --scaling: weak-scaling efficiency (implies it)\n"
    "  --json               machine-readable output (seconds; null = unavailable)\n"
    "  --ascii              plain ASCII table (default when not on a UTF-8 terminal)\n"
    "  -h, --help           show this help\n"
    "      --version        show the version, git describe, HDF5 and MPI\n"
    "\n"
    "Exit status:\n"
    "  0  success (also with regressions, unless --fail-on-regression)\n"
    "  1  usage error (unknown option, bad value, bad regex, not two files; with\n"
    "     --scaling fewer than two)\n"
    "  2  BASE or NEW could not be read (missing, not a profile, damaged)\n"
    "  3  any other failure (out of memory, output not writable)\n"
    "  4  --fail-on-regression and at least one regression\n";

typedef struct args {
    diff_options o;
    const char *include[MAX_PATTERNS];
    const char *exclude[MAX_PATTERNS];
    bool fail_on_regression, json, ascii;
    bool sum;              /* --sum: summed totals across rank counts */
    bool scaling, weak;    /* --scaling, --weak */
    const char **files;    /* argc entries */
    size_t file_count;
} args;

/* "5", "2.5" or "5%": a finite percentage >= 0. */
static int parse_threshold(const char *text, double *out) {
    char *end;
    double v = strtod(text, &end);
    if (end != text && *end == '%') end++;
    if (end == text || *end != '\0' || !isfinite(v) || v < 0.0)
        return cli_usage_error(TOOL, "invalid --threshold '%s' (a percentage >= 0)", text);
    *out = v;
    return 0;
}

static int parse_args(args *a, int argc, char **argv) {
    a->o.metric = DIFF_METRIC_TOTAL;
    a->o.threshold_pct = 5.0;
    a->o.sort = DIFF_SORT_CHANGE;
    a->o.include = a->include;
    a->o.exclude = a->exclude;
    int options_done = 0;
    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    if (!a->files) {
        fprintf(stderr, "%s: out of memory\n", TOOL);
        return CLI_EXIT_OTHER;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int kind = cli_arg_kind(arg, &options_done);
        if (kind == CLI_ARG_OPERAND) {
            a->files[a->file_count++] = arg;
            continue;
        }
        if (kind == CLI_ARG_SEPARATOR) continue;
        if (kind == CLI_ARG_HELP) {
            fputs(usage_text, stdout);
            exit(fflush(stdout) == 0 ? 0 : CLI_EXIT_OTHER);
        }
        if (!strcmp(arg, "--version")) exit(cli_print_version(TOOL));
        if (!strcmp(arg, "--fail-on-regression")) { a->fail_on_regression = true; continue; }
        if (!strcmp(arg, "--json")) { a->json = true; continue; }
        if (!strcmp(arg, "--ascii")) { a->ascii = true; continue; }
        if (!strcmp(arg, "--sum")) { a->sum = true; continue; }
        if (!strcmp(arg, "--scaling")) { a->scaling = true; continue; }
        if (!strcmp(arg, "--weak")) { a->scaling = a->weak = true; continue; }
        /* Options with a value: "--opt VALUE" or "--opt=VALUE". */
        static const char *const valued[] = {"--metric", "--threshold", "--include", "--exclude",
                                             "--sort"};
        const char *value = NULL;
        long which = cli_option_value(TOOL, argc, argv, &i, valued,
                                      sizeof valued / sizeof *valued, &value);
        if (which < 0) return CLI_EXIT_USAGE;
        switch (which) {
        case 0: {
            int m = diff_metric_parse(value);
            if (m < 0)
                return cli_usage_error(TOOL, "unknown --metric '%s' (total, avg, p50, p95, p99, calls, "
                                   "exclusive)", value);
            a->o.metric = (diff_metric)m;
            break;
        }
        case 1: {
            int rc = parse_threshold(value, &a->o.threshold_pct);
            if (rc) return rc;
            break;
        }
        case 2:
        case 3: {
            const char **list = which == 2 ? a->include : a->exclude;
            size_t *count = which == 2 ? &a->o.include_count : &a->o.exclude_count;
            if (*count == MAX_PATTERNS) return cli_usage_error(TOOL, "too many %s patterns", valued[which]);
            regex_t re;  /* checked here so that a typo is a usage error */
            if (regcomp(&re, value, REG_EXTENDED | REG_NOSUB) != 0)
                return cli_usage_error(TOOL, "invalid regular expression '%s'", value);
            regfree(&re);
            list[(*count)++] = value;
            break;
        }
        case 4:
            if (!strcmp(value, "change")) a->o.sort = DIFF_SORT_CHANGE;
            else if (!strcmp(value, "name")) a->o.sort = DIFF_SORT_NAME;
            else if (!strcmp(value, "base")) a->o.sort = DIFF_SORT_BASE;
            else if (!strcmp(value, "new")) a->o.sort = DIFF_SORT_NEW;
            else return cli_usage_error(TOOL, "unknown --sort '%s' (change, name, base, new)", value);
            break;
        default: return cli_usage_error(TOOL, "unknown option '%s'", arg);
        }
    }
    if (a->scaling) {
        if (a->file_count < 2)
            return cli_usage_error(TOOL, "%s", "--scaling needs at least two runs");
        if (a->sum) return cli_usage_error(TOOL, "%s", "--sum does not apply to --scaling");
        if (a->fail_on_regression)
            return cli_usage_error(TOOL, "%s", "--fail-on-regression does not apply to --scaling");
        return 0;
    }
    if (a->file_count > 2)
        return cli_usage_error(TOOL, "unexpected argument '%s' (two files only, or --scaling)",
                               a->files[2]);
    if (a->file_count != 2) return cli_usage_error(TOOL, "%s", "need two files: BASE NEW");
    return 0;
}

/* ---- formatting shared by text and JSON -------------------------------------- */

static bool is_duration(diff_metric m) { return m != DIFF_METRIC_CALLS; }

/* Sums get the summary table's 6 decimals; per-call values are small and
 * get 3 significant digits in %e, as the table prints avg. */
static void format_value(char *buf, size_t len, diff_metric m, double value, bool sign) {
    if (!is_duration(m)) snprintf(buf, len, sign ? "%+.0f" : "%.0f", value);
    else if (m == DIFF_METRIC_TOTAL || m == DIFF_METRIC_EXCLUSIVE)
        snprintf(buf, len, sign ? "%+.6f" : "%.6f", value / 1e9);
    else snprintf(buf, len, sign ? "%+.3e" : "%.3e", value / 1e9);
}

static const char *status_text(diff_status s) {
    /* Text spells "within noise" with a blank; JSON keeps the identifier. */
    return s == DIFF_NOISE ? "within noise" : s == DIFF_UNAVAILABLE ? "n/a" : diff_status_name(s);
}

/* ---- text -------------------------------------------------------------------- */

typedef struct glyphs {
    const char *tl, *tr, *bl, *br, *h, *v, *lt, *rt, *arrow, *cut;
} glyphs;

/* The library's summary table glyphs, so both tools look alike. */
static const glyphs unicode_glyphs = {"\u256d", "\u256e", "\u2570", "\u256f", "\u2500",
                                      "\u2502", "\u251c", "\u2524", "\u2192", "\u2026"};
static const glyphs ascii_glyphs = {"+", "+", "+", "+", "-", "|", "+", "+", "->", "..."};

/* Box drawing only where it will render: a terminal whose locale is UTF-8
 * (the first of LC_ALL, LC_CTYPE, LANG that is set decides, as in the
 * library's table). Pipes and files get ASCII. */
static bool want_unicode(FILE *out) {
    if (!isatty(fileno(out))) return false;
    const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") || strstr(v, "utf8");
    }
    return false;
}

/* Display width: one column per code point (names may be UTF-8). */
static size_t text_width(const char *s) {
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

static void put_repeat(FILE *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) fputs(s, out);
}

enum { COL_REGION, COL_BASE, COL_NEW, COL_CHANGE, COL_PCT, COL_CALLS, COL_T, COL_STATUS, N_COLS };
#define CELL_LEN 96

/* Most columns of a region name in the table (as in the library's summary
 * table): longer names are cut with a marker, --json prints them whole. */
#define NAME_COLUMNS 60

/* Cells of one row; the region name (escaped for the terminal, cut to
 * NAME_COLUMNS, owned). */
typedef struct line {
    char *name;
    char cells[N_COLS][CELL_LEN];
} line;

static void fill_line(line *ln, const diff_row *r, diff_metric m, const glyphs *g) {
    ln->name = cli_text_cut(r->name, NAME_COLUMNS, g->cut);
    for (int c = 0; c < N_COLS; c++) snprintf(ln->cells[c], CELL_LEN, "-");
    if (r->base.present && r->base.has_value) format_value(ln->cells[COL_BASE], CELL_LEN, m, r->base.value, false);
    if (r->cand.present && r->cand.has_value) format_value(ln->cells[COL_NEW], CELL_LEN, m, r->cand.value, false);
    if (r->has_change) format_value(ln->cells[COL_CHANGE], CELL_LEN, m, r->change, true);
    if (r->has_pct) snprintf(ln->cells[COL_PCT], CELL_LEN, "%+.1f%%", r->change_pct);
    unsigned long long cb = r->base.present ? (unsigned long long)r->base.s.calls : 0;
    unsigned long long cn = r->cand.present ? (unsigned long long)r->cand.s.calls : 0;
    if (cb == cn) snprintf(ln->cells[COL_CALLS], CELL_LEN, "%llu", cb);
    else snprintf(ln->cells[COL_CALLS], CELL_LEN, "%llu %s %llu", cb, g->arrow, cn);
    if (r->has_t) snprintf(ln->cells[COL_T], CELL_LEN, "%+.2f", r->t);
    snprintf(ln->cells[COL_STATUS], CELL_LEN, "%s", status_text(r->status));
}

static int print_table(FILE *out, const diff_report *rep, diff_metric m, const glyphs *g) {
    char headers[N_COLS][32];
    const char *unit = is_duration(m) ? " [s]" : "";
    snprintf(headers[COL_REGION], 32, "region");
    snprintf(headers[COL_BASE], 32, "base%s", unit);
    snprintf(headers[COL_NEW], 32, "new%s", unit);
    snprintf(headers[COL_CHANGE], 32, "change%s", unit);
    snprintf(headers[COL_PCT], 32, "change %%");
    snprintf(headers[COL_CALLS], 32, "calls");
    snprintf(headers[COL_T], 32, "t");
    snprintf(headers[COL_STATUS], 32, "status");
    line *lines = calloc(rep->count + 1, sizeof *lines);
    if (!lines) return SP_ERR_OUT_OF_MEMORY;
    size_t width[N_COLS];
    for (int c = 0; c < N_COLS; c++) width[c] = text_width(headers[c]);
    for (size_t i = 0; i < rep->count; i++) {
        fill_line(&lines[i], &rep->rows[i], m, g);
        if (!lines[i].name) {
            for (size_t k = 0; k < i; k++) free(lines[k].name);
            free(lines);
            return SP_ERR_OUT_OF_MEMORY;
        }
        size_t w = text_width(lines[i].name);
        if (w > width[COL_REGION]) width[COL_REGION] = w;
        for (int c = 1; c < N_COLS; c++) {
            w = text_width(lines[i].cells[c]);
            if (w > width[c]) width[c] = w;
        }
    }
    size_t inner = 0;
    for (int c = 0; c < N_COLS; c++) inner += width[c] + (c + 1 < N_COLS ? 2 : 0);
    fputs("  ", out); fputs(g->tl, out); put_repeat(out, g->h, inner + 2); fputs(g->tr, out);
    fputc('\n', out);
    for (long i = -1; i < (long)rep->count; i++) {
        fputs("  ", out); fputs(g->v, out); fputc(' ', out);
        for (int c = 0; c < N_COLS; c++) {
            const char *cell = i < 0 ? headers[c] : c == COL_REGION ? lines[i].name : lines[i].cells[c];
            size_t pad = width[c] - text_width(cell);
            /* Numbers right-aligned so that signs and decimals line up;
             * names and statuses read left to right. */
            bool right = c != COL_REGION && c != COL_STATUS && c != COL_CALLS;
            if (right) put_repeat(out, " ", pad);
            fputs(cell, out);
            if (!right) put_repeat(out, " ", pad);
            if (c + 1 < N_COLS) fputs("  ", out);
        }
        fputc(' ', out); fputs(g->v, out); fputc('\n', out);
        if (i < 0) {
            fputs("  ", out); fputs(g->lt, out); put_repeat(out, g->h, inner + 2);
            fputs(g->rt, out); fputc('\n', out);
        }
    }
    fputs("  ", out); fputs(g->bl, out); put_repeat(out, g->h, inner + 2); fputs(g->br, out);
    fputc('\n', out);
    for (size_t i = 0; i < rep->count; i++) free(lines[i].name);
    free(lines);
    return SP_OK;
}

static int print_text(FILE *out, const args *a, const diff_report *rep) {
    const glyphs *g = !a->ascii && want_unicode(out) ? &unicode_glyphs : &ascii_glyphs;
    diff_metric m = a->o.metric;
    fputs("Base:      ", out);
    cli_text_put(out, a->files[0]);
    fputs("\nNew:       ", out);
    cli_text_put(out, a->files[1]);
    fputc('\n', out);
    fprintf(out, "Metric:    %s%s, threshold %g%%\n", diff_metric_name(m),
            is_duration(m) ? " [s]" : " (count)", a->o.threshold_pct);
    if (rep->ranks_base != rep->ranks_cand)
        fprintf(out, "Ranks:     %u %s %u: %s\n", rep->ranks_base, g->arrow, rep->ranks_cand,
                rep->per_rank ? "sums (total, exclusive, calls) compared as per-rank means "
                                "(--sum for the summed totals)"
                              : "summed totals compared (--sum)");
    fputc('\n', out);
    if (rep->count && print_table(out, rep, m, g) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    if (!rep->count) fputs("  (no regions to compare)\n", out);
    fputc('\n', out);
    const diff_session *s = &rep->session;
    fputs("Session:   ", out);
    if (s->has_base) fprintf(out, "%.6f s", (double)s->base_ns / 1e9);
    else fputs("-", out);
    fprintf(out, " %s ", g->arrow);
    if (s->has_cand) fprintf(out, "%.6f s", (double)s->cand_ns / 1e9);
    else fputs("-", out);
    if (s->has_base && s->has_cand) {
        fprintf(out, " (%+.6f s", (double)(s->cand_ns - s->base_ns) / 1e9);
        if (s->base_ns > 0)
            fprintf(out, ", %+.1f%%", 100.0 * (double)(s->cand_ns - s->base_ns) / (double)s->base_ns);
        fputc(')', out);
    }
    fputc('\n', out);
    const size_t *n = rep->by_status;
    fprintf(out, "Changes:   %zu regression%s, %zu improvement%s above %g%%; %zu within noise, "
                 "%zu unchanged, %zu added, %zu removed",
            n[DIFF_REGRESSION], n[DIFF_REGRESSION] == 1 ? "" : "s", n[DIFF_IMPROVEMENT],
            n[DIFF_IMPROVEMENT] == 1 ? "" : "s", a->o.threshold_pct, n[DIFF_NOISE],
            n[DIFF_UNCHANGED], n[DIFF_ADDED], n[DIFF_REMOVED]);
    if (n[DIFF_UNAVAILABLE]) fprintf(out, ", %zu n/a", n[DIFF_UNAVAILABLE]);
    fputc('\n', out);
    if (!rep->events_both)
        fputs("Noise:     not tested (a run has no per-call data)\n", out);
    return SP_OK;
}

/* ---- JSON -------------------------------------------------------------------- */

/* A number, or null when unavailable. `scale` turns ns into seconds (or
 * 1 for counts and percentages). The shortest text that reads back as the
 * same double, as Python's json writes it: 1234 ns is 1.234e-06, not
 * 1.2340000000000001e-06, and still exact. */
static void json_number(FILE *out, const char *key, bool available, double value, double scale) {
    fprintf(out, "\"%s\": ", key);
    double v = value / scale;
    if (!available || !isfinite(v)) {
        fputs("null", out);
        return;
    }
    char buf[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    fputs(buf, out);
}

static void print_json(FILE *out, const args *a, const diff_report *rep) {
    diff_metric m = a->o.metric;
    double scale = is_duration(m) ? 1e9 : 1.0;
    fputs("{\n  \"base_file\": ", out);
    cli_json_string(out, a->files[0]);
    fputs(",\n  \"new_file\": ", out);
    cli_json_string(out, a->files[1]);
    fprintf(out, ",\n  \"metric\": \"%s\",\n  \"units\": \"%s\",\n  ", diff_metric_name(m),
            is_duration(m) ? "seconds" : "calls");
    json_number(out, "threshold_pct", true, a->o.threshold_pct, 1.0);
    fprintf(out, ",\n  \"noise_test\": {\"method\": \"welch_t\", \"t_limit\": %g, \"ran\": %s},\n",
            DIFF_T_LIMIT, rep->events_both ? "true" : "false");
    fprintf(out, "  \"ranks_base\": %u, \"ranks_new\": %u, \"sums\": \"%s\",\n", rep->ranks_base,
            rep->ranks_cand, rep->per_rank ? "per_rank_mean" : "summed");
    fputs("  \"regions\": [", out);
    for (size_t i = 0; i < rep->count; i++) {
        const diff_row *r = &rep->rows[i];
        fputs(i ? ",\n    {" : "\n    {", out);
        fputs("\"name\": ", out);
        cli_json_string(out, r->name);
        fprintf(out, ", \"status\": \"%s\", ", diff_status_name(r->status));
        json_number(out, "base", r->base.present && r->base.has_value, r->base.value, scale);
        fputs(", ", out);
        json_number(out, "new", r->cand.present && r->cand.has_value, r->cand.value, scale);
        fputs(", ", out);
        json_number(out, "change", r->has_change, r->change, scale);
        fputs(", ", out);
        json_number(out, "change_pct", r->has_pct, r->change_pct, 1.0);
        fprintf(out, ", \"exceeds_threshold\": %s", r->exceeds ? "true" : "false");
        fprintf(out, ", \"calls_base\": %llu, \"calls_new\": %llu, ",
                r->base.present ? (unsigned long long)r->base.s.calls : 0ULL,
                r->cand.present ? (unsigned long long)r->cand.s.calls : 0ULL);
        json_number(out, "t_stat", r->has_t, r->t, 1.0);
        fprintf(out, ", \"significant\": %s}",
                r->significant == DIFF_SIG_UNKNOWN ? "null"
                : r->significant == DIFF_SIG_REAL  ? "true"
                                                   : "false");
    }
    fputs(rep->count ? "\n  ],\n" : "],\n", out);
    const diff_session *s = &rep->session;
    const size_t *n = rep->by_status;
    fprintf(out, "  \"summary\": {\"regions\": %zu, \"regressions\": %zu, \"improvements\": %zu, "
                 "\"within_noise\": %zu, \"unchanged\": %zu, \"added\": %zu, \"removed\": %zu, "
                 "\"unavailable\": %zu, ",
            rep->count, n[DIFF_REGRESSION], n[DIFF_IMPROVEMENT], n[DIFF_NOISE], n[DIFF_UNCHANGED],
            n[DIFF_ADDED], n[DIFF_REMOVED], n[DIFF_UNAVAILABLE]);
    bool both = s->has_base && s->has_cand;
    json_number(out, "session_base", s->has_base, (double)s->base_ns, 1e9);
    fputs(", ", out);
    json_number(out, "session_new", s->has_cand, (double)s->cand_ns, 1e9);
    fputs(", ", out);
    json_number(out, "session_change", both, (double)(s->cand_ns - s->base_ns), 1e9);
    fputs(", ", out);
    json_number(out, "session_change_pct", both && s->base_ns > 0,
                100.0 * (double)(s->cand_ns - s->base_ns) / (double)(s->base_ns ? s->base_ns : 1),
                1.0);
    fprintf(out, ", \"any_regression\": %s},\n  \"warnings\": [",
            n[DIFF_REGRESSION] ? "true" : "false");
    bool first = true;
    const char *warnings[] = {rep->warning_base, rep->warning_cand};
    for (size_t k = 0; k < 2; k++) {
        if (!warnings[k][0]) continue;
        if (!first) fputs(", ", out);
        cli_json_string(out, warnings[k]);
        first = false;
    }
    fputs("]\n}\n", out);
}

/* ---- --scaling ------------------------------------------------------------------ */

static const char *scaling_status_text(size_t run, diff_status s) {
    return run == 0 ? "(reference)" : status_text(s);
}

/* One line per (region, run): long rather than wide, so any number of
 * runs fits a terminal and a script can read it with split(). */
static int print_scaling_text(FILE *out, const args *a, const scaling_report *rep) {
    const glyphs *g = !a->ascii && want_unicode(out) ? &unicode_glyphs : &ascii_glyphs;
    fprintf(out, "Scaling:   %s (T = per-rank mean of the region's total; %s)\n",
            rep->weak ? "weak" : "strong",
            rep->weak ? "speedup T_1/T_k * P_k/P_1, efficiency T_1/T_k"
                      : "speedup T_1/T_k, efficiency T_1/T_k * P_1/P_k");
    for (size_t k = 0; k < rep->run_count; k++) {
        fprintf(out, "Run %zu:     ", k + 1);
        cli_text_put(out, a->files[k]);
        fprintf(out, " (%u rank%s)\n", rep->ranks[k], rep->ranks[k] == 1 ? "" : "s");
    }
    fprintf(out, "Changes:   the status of each run against run 1, threshold %g%%, noise test "
                 "as in the two-run comparison\n\n",
            a->o.threshold_pct);
    char **names = calloc(rep->count + 1, sizeof *names);
    if (!names) return SP_ERR_OUT_OF_MEMORY;
    size_t width = strlen("region");
    for (size_t i = 0; i < rep->count; i++) {
        if (!(names[i] = cli_text_cut(rep->rows[i].name, NAME_COLUMNS, g->cut))) {
            for (size_t k = 0; k < i; k++) free(names[k]);
            free(names);
            return SP_ERR_OUT_OF_MEMORY;
        }
        size_t w = text_width(names[i]);
        if (w > width) width = w;
    }
    fprintf(out, "  %-*s  %4s  %8s  %14s  %8s  %10s  %s\n", (int)width, "region", "run", "ranks",
            "time [s]", "speedup", "efficiency", "status");
    for (size_t i = 0; i < rep->count; i++)
        for (size_t k = 0; k < rep->run_count; k++) {
            const scaling_cell *c = &rep->rows[i].cells[k];
            fputs("  ", out);
            fputs(names[i], out);
            put_repeat(out, " ", width - text_width(names[i]));
            fprintf(out, "  %4zu  %8u  ", k + 1, rep->ranks[k]);
            if (!c->present) {
                fprintf(out, "%14s  %8s  %10s  %s\n", "-", "-", "-",
                        k == 0 ? "(not in run 1)" : "removed");
                continue;
            }
            fprintf(out, "%14.6f  ", c->time_ns / 1e9);
            if (c->efficiency > 0)
                fprintf(out, "%8.3f  %9.1f%%  ", c->speedup, 100.0 * c->efficiency);
            else
                fprintf(out, "%8s  %10s  ", "-", "-");
            fprintf(out, "%s\n", scaling_status_text(k, c->status));
        }
    for (size_t i = 0; i < rep->count; i++) free(names[i]);
    free(names);
    return SP_OK;
}

static void print_scaling_json(FILE *out, const args *a, const scaling_report *rep) {
    fprintf(out, "{\n  \"scaling\": \"%s\",\n  \"units\": \"seconds\",\n  \"time\": "
                 "\"per_rank_mean_total\",\n  ",
            rep->weak ? "weak" : "strong");
    json_number(out, "threshold_pct", true, a->o.threshold_pct, 1.0);
    fputs(",\n  \"runs\": [", out);
    for (size_t k = 0; k < rep->run_count; k++) {
        fputs(k ? ", {\"file\": " : "{\"file\": ", out);
        cli_json_string(out, a->files[k]);
        fprintf(out, ", \"ranks\": %u}", rep->ranks[k]);
    }
    fputs("],\n  \"regions\": [", out);
    for (size_t i = 0; i < rep->count; i++) {
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
        cli_json_string(out, rep->rows[i].name);
        fputs(", \"runs\": [", out);
        for (size_t k = 0; k < rep->run_count; k++) {
            const scaling_cell *c = &rep->rows[i].cells[k];
            fputs(k ? ", {" : "{", out);
            json_number(out, "time", c->present, c->time_ns, 1e9);
            fputs(", ", out);
            json_number(out, "speedup", c->efficiency > 0, c->speedup, 1.0);
            fputs(", ", out);
            json_number(out, "efficiency", c->efficiency > 0, c->efficiency, 1.0);
            if (k == 0) fputs(", \"status\": \"reference\"}", out);
            else fprintf(out, ", \"status\": \"%s\"}", diff_status_name(c->status));
        }
        fputs("]}", out);
    }
    fputs(rep->count ? "\n  ]\n}\n" : "]\n}\n", out);
}

/* ---- main -------------------------------------------------------------------- */

static sp_results *open_input(const char *path) {
    char msg[1024];
    sp_results *res = NULL;
    /* only statistics are compared: the calls can stay in the file */
    int st = cli_results_open(path, SP_RESULTS_CALLS_ON_DEMAND, &res, msg, sizeof msg);
    if (st == SP_OK) return res;
    /* The reader's messages name the file; say it once more only when one
     * does not (argument errors). */
    if (strstr(msg, path)) fprintf(stderr, "scope-diff: %s\n", msg);
    else fprintf(stderr, "scope-diff: %s: %s\n", path, msg[0] ? msg : sp_error_string(st));
    return NULL;
}

/* --scaling: every run opened (each unreadable one named), then the table. */
static int main_scaling(const args *a) {
    sp_results **runs = calloc(a->file_count, sizeof *runs);
    if (!runs) {
        fprintf(stderr, "scope-diff: out of memory\n");
        return CLI_EXIT_OTHER;
    }
    bool all = true;
    for (size_t k = 0; k < a->file_count; k++) all = (runs[k] = open_input(a->files[k])) && all;
    int exit_code = all ? 0 : CLI_EXIT_FILE;
    if (all) {
        scaling_report rep;
        char msg[1024];
        int st = diff_scaling((const sp_results *const *)runs, a->file_count, &a->o, a->weak,
                              &rep, msg, sizeof msg);
        if (st != SP_OK) {
            fprintf(stderr, "scope-diff: %s\n", msg);
            exit_code = CLI_EXIT_OTHER;
        } else {
            if (a->json) print_scaling_json(stdout, a, &rep);
            else if (print_scaling_text(stdout, a, &rep) != SP_OK) {
                fprintf(stderr, "scope-diff: out of memory\n");
                exit_code = CLI_EXIT_OTHER;
            }
            scaling_report_free(&rep);
        }
    }
    for (size_t k = 0; k < a->file_count; k++) sp_results_close(runs[k]);
    free(runs);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "scope-diff: cannot write the output\n");
        exit_code = CLI_EXIT_OTHER;
    }
    return exit_code;
}

/* BASE NEW: the region table. */
static int main_two(args *ap) {
    args a = *ap;
    /* Both inputs are opened before giving up so that one run names every
     * unreadable file. */
    sp_results *base = open_input(a.files[0]);
    sp_results *cand = open_input(a.files[1]);
    if (!base || !cand) {
        sp_results_close(base);
        sp_results_close(cand);
        return CLI_EXIT_FILE;
    }
    /* Different rank counts: per-rank means unless --sum (scope_diff.h). */
    a.o.per_rank = !a.sum && diff_rank_count(base) != diff_rank_count(cand);
    diff_report rep;
    char msg[1024];
    int st = diff_compare(base, cand, &a.o, &rep, msg, sizeof msg);
    int exit_code = 0;
    if (st != SP_OK) {
        fprintf(stderr, "scope-diff: %s\n", msg);
        exit_code = CLI_EXIT_OTHER;
    } else {
        /* The warnings name regions: escaped like the table. */
        for (int f = 0; f < 2; f++) {
            const char *w = f ? rep.warning_cand : rep.warning_base;
            if (!w[0]) continue;
            fprintf(stderr, "scope-diff: warning: %s: ", a.files[f]);
            cli_text_put(stderr, w);
            fputc('\n', stderr);
        }
        if (a.json) print_json(stdout, &a, &rep);
        else if (print_text(stdout, &a, &rep) != SP_OK) {
            fprintf(stderr, "scope-diff: out of memory\n");
            exit_code = CLI_EXIT_OTHER;
        }
        if (!exit_code && a.fail_on_regression && rep.by_status[DIFF_REGRESSION])
            exit_code = EXIT_REGRESSION;
        diff_report_free(&rep);
    }
    sp_results_close(base);
    sp_results_close(cand);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "scope-diff: cannot write the output\n");
        exit_code = CLI_EXIT_OTHER;
    }
    return exit_code;
}

int main(int argc, char **argv) {
    cli_isolate_start("scope-diff");
    args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv);
    if (rc == 0) rc = a.scaling ? main_scaling(&a) : main_two(&a);
    free(a.files);
    return rc;
}
