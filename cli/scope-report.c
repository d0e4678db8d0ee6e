/*
 * scope-report - one self-contained HTML page about a profile: the run's
 * metadata, the sortable region table, the flame graph, the per-rank
 * imbalance of the top regions and a zoomable timeline of every rank and
 * thread.
 *
 *   scope-report FILE -o report.html [--ranks LIST] [--top N]
 *                [--timeline-calls N] [--title TEXT]
 *
 * A thin main over the public API and the shared view code (views/:
 * view_lanes.c, flame_tree.c, flamegraph_svg.c); the sections are
 * views/scope_report_*.c, in the same library (sp_views). The
 * page is published like every export: temporary sibling, renamed into
 * place once complete (cli_output.c).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_isolate.h"
#include "cli_output.h"
#include "scope_profiler.h"
#include "scope_profiler_results.h"
#include "views/scope_report.h"

static const char TOOL[] = "scope-report";
#define MAX_RANKS 65536

static const char usage_text[] =
    "Usage: scope-report FILE -o REPORT.html [OPTIONS]\n"
    "\n"
    "Write one self-contained HTML page about a scope-profiler file (any file\n"
    "scope-inspect reads): run metadata, the region table (click a column to\n"
    "sort), the flame graph (hover, click to zoom), the per-rank min/mean/max of\n"
    "the top regions, and a timeline of every rank and thread (wheel to zoom,\n"
    "drag to pan, double-click to reset). It needs no network: open it from disk\n"
    "in any browser. Files without per-call events (aggregate layout) get every\n"
    "section but the timeline, from their per-region totals.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT      the page to write ('-' for standard output); written\n"
    "                        to a temporary file and renamed into place\n"
    "  --ranks LIST          only these ranks, e.g. 0,2-3\n"
    "  --top N               regions in the imbalance chart (default 10)\n"
    "  --timeline-calls N    most calls drawn in the timeline (default 250000);\n"
    "                        larger files keep their longest calls and say so\n"
    "  --title TEXT          page title (default: the run's label or file name)\n"
    "  -h, --help            show this help\n"
    "      --version         show the version, git describe, HDF5 and MPI\n"
    "\n"
    "Exit status:\n"
    "  0  success\n"
    "  1  usage error\n"
    "  2  FILE could not be read or is invalid; OUT is left as it was\n"
    "  3  any other failure (out of memory, OUT not writable); OUT is left as it was\n";

static int parse_count(const char *option, const char *value, uint64_t max, uint64_t *out) {
    char *end;
    if (!*value || *value < '0' || *value > '9')
        return cli_usage_error(TOOL, "invalid %s value '%s'", option, value);
    unsigned long long v = strtoull(value, &end, 10);
    if (*end || v == 0 || v > max) return cli_usage_error(TOOL, "invalid %s value '%s'", option, value);
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    cli_isolate_start("scope-report");
    const char *input = NULL, *output = NULL;
    report_options o = {NULL, 0, 10, 250000, NULL};
    uint32_t *ranks = calloc(MAX_RANKS, sizeof *ranks);
    if (!ranks) {
        fprintf(stderr, "scope-report: out of memory\n");
        return CLI_EXIT_OTHER;
    }
    int rc = 0;
    int options_done = 0;
    for (int i = 1; i < argc && !rc; i++) {
        const char *arg = argv[i];
        int kind = cli_arg_kind(arg, &options_done);
        if (kind == CLI_ARG_OPERAND) {
            if (input) rc = cli_usage_error(TOOL, "more than one FILE given ('%s', '%s')", input, arg);
            input = arg;
            continue;
        }
        if (kind == CLI_ARG_SEPARATOR) continue;
        if (kind == CLI_ARG_HELP) {
            fputs(usage_text, stdout);
            free(ranks);
            return 0;
        }
        if (!strcmp(arg, "--version")) {
            free(ranks);
            return cli_print_version(TOOL);
        }
        static const char *const valued[] = {"--output", "-o", "--ranks", "--top",
                                             "--timeline-calls", "--title"};
        const char *value = NULL;
        long which = cli_option_value(TOOL, argc, argv, &i, valued,
                                      sizeof valued / sizeof *valued, &value);
        if (which < 0) {
            rc = CLI_EXIT_USAGE;
            break;
        }
        uint64_t n;
        switch (which) {
        case 0:
        case 1:
            if (output) rc = cli_usage_error(TOOL, "%s", "more than one output given");
            else if (!*value) rc = cli_usage_error(TOOL, "%s", "empty output file name");
            output = value;
            break;
        case 2:
            rc = cli_parse_ranks(TOOL, value, ranks, &o.rank_count, MAX_RANKS);
            o.ranks = ranks;
            break;
        case 3:
            rc = parse_count("--top", value, 1000, &n);
            o.top = (size_t)n;
            break;
        case 4:
            rc = parse_count("--timeline-calls", value, 100000000, &n);
            o.timeline_calls = n;
            break;
        case 5: o.title = value; break;
        default: rc = cli_usage_error(TOOL, "unknown option '%s'", arg);
        }
    }
    if (!rc && !input) rc = cli_usage_error(TOOL, "%s", "no FILE given");
    if (!rc && !output) rc = cli_usage_error(TOOL, "%s", "no output file given (-o OUT)");
    if (!rc && strcmp(output, "-") && cli_same_file(input, output))
        rc = cli_usage_error(TOOL, "the output '%s' is the input file", output);
    if (rc) {
        free(ranks);
        return rc;
    }

    char msg[1024];
    sp_results *res = NULL;
    /* calls stay in the file, read in slices: memory independent of its size */
    int st = cli_results_open(input, SP_RESULTS_CALLS_ON_DEMAND, &res, msg, sizeof msg);
    if (st != SP_OK) {
        if (strstr(msg, input)) fprintf(stderr, "scope-report: %s\n", msg);
        else fprintf(stderr, "scope-report: %s: %s\n", input, msg[0] ? msg : sp_error_string(st));
        free(ranks);
        return CLI_EXIT_FILE;
    }
    cli_output out;
    rc = cli_output_open(&out, TOOL, output);
    if (rc == 0) {
        char why[512] = "";
        st = report_write(out.fp, res, &o, why, sizeof why);
        if (st != SP_OK) {
            fprintf(stderr, "scope-report: %s\n",
                    why[0]                       ? why
                    : st == SP_ERR_OUT_OF_MEMORY ? "out of memory"
                                                 : "cannot write the report");
            cli_output_abandon(&out);
            rc = cli_exit_code(st); /* a file that cannot be read back: 2 */
        } else {
            rc = cli_output_publish(&out);
        }
    }
    sp_results_close(res);
    free(ranks);
    return rc;
}
