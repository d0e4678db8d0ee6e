/*
 * scope-inspect - print what a profile file holds: its metadata and the
 * region summary (a call tree pooled over ranks with "(own)" rows), or the
 * same statistics as JSON for scripts.
 *
 * A thin main over the public API (scope_profiler_results.h,
 * scope_profiler_summary.h): argument parsing, messages and exit codes live
 * here, every number comes from the library.
 */
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "cli_isolate.h"
#include "inspect_counters.h"
#include "inspect_comm.h"
#include "inspect_mpi.h"
#include "inspect_threads.h"
#include "scope_profiler.h"
#include "scope_profiler_results.h"
#include "scope_profiler_summary.h"

static const char TOOL[] = "scope-inspect";

#define MAX_PATTERNS 64
#define MAX_RANKS 65536

static const char *const usage_text =
    "Usage: scope-inspect [OPTIONS] FILE...\n"
    "\n"
    "Print the metadata and the region summary of scope-profiler files (HDF5\n"
    "schema 1-3, the aggregate layout, or native .spt traces).\n"
    "\n"
    "The summary is a call tree pooled over ranks: a child region is indented\n"
    "under its parent, an \"(own)\" row after each parent holds the time spent\n"
    "in it outside its children, and recursion is collapsed into one row marked\n"
    "with a circular arrow (\"(rec)\" in ASCII). Durations are in seconds.\n"
    "\n"
    "Threads: a row's calls and total are summed over the threads that ran it\n"
    "(column \"threads\", shown when some row ran on several threads), so an\n"
    "OpenMP parallel region can add up to more than its parent. \"(own)\" is the\n"
    "parent's total minus its children's time on the parent's own threads;\n"
    "\"other thr\" is the time of a row's calls that ran beside their parent on\n"
    "another thread (OpenMP workers), part of the row's total but not of its\n"
    "parent's. A legend under the table says so.\n"
    "\n"
    "Options:\n"
    "  --include REGEX   only regions whose name matches (POSIX extended regex,\n"
    "                    anchored at the start of the name); repeatable\n"
    "  --exclude REGEX   hide regions whose name matches; repeatable. Hidden\n"
    "                    regions still count as child time of their parents.\n"
    "  --ranks LIST      pool only these ranks, e.g. 0,2-3\n"
    "  --sort KEY        start (default: tree order, siblings by first start),\n"
    "                    total, calls, avg, min, max, first, last, std, p50,\n"
    "                    p95, p99, imbalance, exclusive, threads (largest\n"
    "                    first), name\n"
    "  --columns LIST    comma-separated table columns, from:\n"
    "                    COLUMNS\n"
    "  --flat            one row per region instead of the call tree\n"
    "  --metadata-only   print the metadata block only\n"
    "  --threads         add a per-thread breakdown: for each thread (its name\n"
    "                    from the file's thread table, e.g. \"omp worker 2\" for\n"
    "                    an unnamed OpenMP worker, and its rank) the call paths\n"
    "                    it ran with calls, total and own time on that thread.\n"
    "                    With --json: a \"threads\" member\n"
    "  --comm            add the communication matrix: bytes and messages per\n"
    "                    (sender, receiver) pair of MPI_COMM_WORLD ranks from the\n"
    "                    point-to-point MPI regions, each message counted once at\n"
    "                    its sender; other communicators are totalled as\n"
    "                    unresolved. With --json: a \"comm\" member\n"
    "  --comm-top N      pairs (and, past 64 ranks, senders) printed by --comm\n"
    "                    (default 20; --json lists all)\n"
    "  --json            machine-readable statistics (seconds) instead of text:\n"
    "                    one object per FILE, wrapped in {\"files\": [...]} when\n"
    "                    several are given; unavailable values are null\n"
    "  --ascii           plain ASCII table (default when not on a UTF-8 terminal)\n"
    "  --unicode         box-drawing table even when not on a terminal\n"
    "  -h, --help        show this help\n"
    "      --version     show the version, git describe, HDF5 and MPI\n"
    "\n"
    "Exit status:\n"
    "  0  success\n"
    "  1  usage error (unknown option, bad value, bad regex, no FILE)\n"
    "  2  a FILE could not be read: missing, not HDF5, truncated, newer schema,\n"
    "     corrupt index (the other files are still printed)\n"
    "  3  any other failure (out of memory, output not writable)\n";

typedef struct args {
    const char *include[MAX_PATTERNS];
    size_t include_count;
    const char *exclude[MAX_PATTERNS];
    size_t exclude_count;
    uint32_t *ranks;
    size_t rank_count;
    const char *sort;
    const char *columns;
    bool flat, metadata_only, json, ascii, unicode;
    bool comm;        /* --comm: the communication matrix */
    bool threads;     /* --threads: the per-thread breakdown */
    size_t comm_top;  /* --comm-top */
    const char **files;
    size_t file_count;
} args;

static int parse_args(args *a, int argc, char **argv) {
    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    a->ranks = calloc(MAX_RANKS, sizeof *a->ranks);
    if (!a->files || !a->ranks) {
        fprintf(stderr, "scope-inspect: out of memory\n");
        return CLI_EXIT_OTHER;
    }
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || !strcmp(arg, "-")) {
            a->files[a->file_count++] = arg;
            continue;
        }
        if (!strcmp(arg, "--")) {
            options_done = true;
            continue;
        }
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            /* The column list comes from the library, so help cannot drift. */
            const char *at = strstr(usage_text, "COLUMNS");
            fwrite(usage_text, 1, (size_t)(at - usage_text), stdout);
            fputs(sp_summary_column_names(), stdout);
            fputs(at + strlen("COLUMNS"), stdout);
            exit(0);
        }
        if (!strcmp(arg, "--version")) exit(cli_print_version("scope-inspect"));
        if (!strcmp(arg, "--flat")) { a->flat = true; continue; }
        if (!strcmp(arg, "--metadata-only")) { a->metadata_only = true; continue; }
        if (!strcmp(arg, "--json")) { a->json = true; continue; }
        if (!strcmp(arg, "--comm")) { a->comm = true; continue; }
        if (!strcmp(arg, "--threads")) { a->threads = true; continue; }
        if (!strcmp(arg, "--ascii")) { a->ascii = true; a->unicode = false; continue; }
        if (!strcmp(arg, "--unicode")) { a->unicode = true; a->ascii = false; continue; }
        /* Options with a value: "--opt VALUE" or "--opt=VALUE". */
        static const char *const valued[] = {"--include", "--exclude", "--ranks", "--sort",
                                             "--columns", "--comm-top"};
        const char *value = NULL;
        size_t which = 6;
        for (size_t k = 0; k < 6; k++) {
            size_t len = strlen(valued[k]);
            if (!strncmp(arg, valued[k], len) && (arg[len] == '\0' || arg[len] == '=')) {
                which = k;
                if (arg[len] == '=') value = arg + len + 1;
                else if (i + 1 < argc) value = argv[++i];
                else return cli_usage_error(TOOL, "option '%s' needs a value", valued[k]);
            }
        }
        switch (which) {
        case 0:
        case 1: {
            const char **list = which == 0 ? a->include : a->exclude;
            size_t *count = which == 0 ? &a->include_count : &a->exclude_count;
            if (*count == MAX_PATTERNS) return cli_usage_error(TOOL, "too many %s patterns", valued[which]);
            regex_t re;  /* checked here so a typo is a usage error */
            if (regcomp(&re, value, REG_EXTENDED | REG_NOSUB) != 0)
                return cli_usage_error(TOOL, "invalid regular expression '%s'", value);
            regfree(&re);
            list[(*count)++] = value;
            break;
        }
        case 2: {
            int rc = cli_parse_ranks(TOOL, value, a->ranks, &a->rank_count, MAX_RANKS);
            if (rc) return rc;
            break;
        }
        case 3: a->sort = value; break;
        case 4: a->columns = value; break;
        case 5: {
            char *end = NULL;
            unsigned long long n = strtoull(value, &end, 10);
            if (end == value || *end || value[0] == '-' || n == 0 || n > 1000000)
                return cli_usage_error(TOOL, "--comm-top needs a count from 1 to 1000000, not '%s'",
                                       value);
            a->comm_top = (size_t)n;
            a->comm = true;
            break;
        }
        default: return cli_usage_error(TOOL, "unknown option '%s'", arg);
        }
    }
    if (a->file_count == 0) return cli_usage_error(TOOL, "%s", "no FILE given");
    return 0;
}

/* ---- region selection and order (shared by text and JSON) ---------------- */

static bool matches(const char *const *patterns, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++) {
        /* Anchored at the start, like the library's table filters. */
        size_t len = strlen(patterns[i]) + 4;
        char *anchored = malloc(len);
        if (!anchored) return false;
        snprintf(anchored, len, "^(%s)", patterns[i]);
        regex_t re;
        bool hit = false;
        if (regcomp(&re, anchored, REG_EXTENDED | REG_NOSUB) == 0) {
            hit = regexec(&re, name, 0, NULL, 0) == 0;
            regfree(&re);
        }
        free(anchored);
        if (hit) return true;
    }
    return false;
}

typedef struct region_entry {
    size_t region;
    sp_region_summary s;
} region_entry;

static int cmp_entry(const void *pa, const void *pb) {
    const region_entry *a = pa, *b = pb;
    bool ha = (a->s.available & SP_STAT_START_END) && a->s.calls;
    bool hb = (b->s.available & SP_STAT_START_END) && b->s.calls;
    /* Earliest first start first; regions without one keep file order. */
    if (ha && hb && a->s.first_start_ns != b->s.first_start_ns)
        return a->s.first_start_ns < b->s.first_start_ns ? -1 : 1;
    if (ha != hb) return ha ? -1 : 1;
    return a->region < b->region ? -1 : (a->region > b->region);
}

/* Statistics of every selected region, in summary() order, from one
 * sp_summary_regions call (one per region was regions x rows). warning
 * receives the nesting message, "" when there is none. */
static region_entry *collect(const sp_results *res, const args *a, size_t *count, int *status,
                             char *warning, size_t warning_len) {
    size_t n = sp_results_region_count(res);
    region_entry *entries = calloc(n + 1, sizeof *entries);
    sp_region_summary *all = calloc(n + 1, sizeof *all);
    *count = 0;
    *status = SP_OK;
    warning[0] = '\0';
    if (!entries || !all) {
        free(entries);
        free(all);
        *status = SP_ERR_OUT_OF_MEMORY;
        return NULL;
    }
    char msg[1024];
    int st = sp_summary_regions(res, a->rank_count ? a->ranks : NULL, a->rank_count, all, msg,
                                sizeof msg);
    if (st == SP_ERR_NESTING) {
        snprintf(warning, warning_len, "%s", msg);
    } else if (st != SP_OK) {
        *status = st;
        fprintf(stderr, "scope-inspect: %s: %s\n", sp_results_path(res), msg);
        free(all);
        return entries;
    }
    for (size_t r = 0; r < n; r++) {
        const char *name = sp_results_region_name(res, r);
        if (a->include_count && !matches(a->include, a->include_count, name)) continue;
        if (matches(a->exclude, a->exclude_count, name)) continue;
        if (all[r].num_ranks == 0) continue;  /* not on the selected ranks */
        entries[*count].region = r;
        entries[(*count)++].s = all[r];
    }
    free(all);
    qsort(entries, *count, sizeof *entries, cmp_entry);
    return entries;
}

/* ---- JSON ------------------------------------------------------------------- */

static void json_seconds(FILE *out, const char *key, double ns, bool available) {
    fprintf(out, ",\n      \"%s\": ", key);
    if (available) fprintf(out, "%.17g", ns / 1e9);
    else fputs("null", out);
}

/* Each region's rows in ascending rank order: rows[start[g] .. start[g+1])
 * (one sort, so the per-region loops below are linear in the rows). */
typedef struct region_rows {
    size_t *start;
    size_t *rows;
} region_rows;

static const sp_results *sort_res;  /* qsort has no context; single-threaded tool */

static int cmp_row_rank(const void *pa, const void *pb) {
    size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
    size_t gx = sp_results_row_region(sort_res, x), gy = sp_results_row_region(sort_res, y);
    if (gx != gy) return gx < gy ? -1 : 1;
    uint32_t rx = sp_results_row_rank(sort_res, x), ry = sp_results_row_rank(sort_res, y);
    if (rx != ry) return rx < ry ? -1 : 1;
    return x < y ? -1 : (x > y);
}

static bool region_rows_build(region_rows *g, const sp_results *res) {
    size_t n = sp_results_region_count(res), rows = sp_results_row_count(res);
    g->start = calloc(n + 2, sizeof *g->start);
    g->rows = calloc(rows + 1, sizeof *g->rows);
    if (!g->start || !g->rows) return false;
    for (size_t r = 0; r < rows; r++) {
        g->rows[r] = r;
        g->start[sp_results_row_region(res, r) + 1]++;
    }
    for (size_t i = 0; i < n; i++) g->start[i + 1] += g->start[i];
    sort_res = res;
    if (rows) qsort(g->rows, rows, sizeof *g->rows, cmp_row_rank);
    return true;
}

static void json_metadata(FILE *out, const sp_results *res) {
    size_t n = sp_results_metadata_count(res);
    fputs("  \"metadata\": {", out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        cli_json_string(out, sp_results_metadata_key(res, i));
        fputs(": ", out);
        int64_t iv;
        double dv;
        switch (sp_results_metadata_kind(res, i)) {
        case SP_META_KIND_STRING: cli_json_string(out, sp_results_metadata_string(res, i)); break;
        case SP_META_KIND_INT:
            sp_results_metadata_int(res, i, &iv);
            fprintf(out, "%lld", (long long)iv);
            break;
        case SP_META_KIND_BOOL:
            sp_results_metadata_int(res, i, &iv);
            fputs(iv ? "true" : "false", out);
            break;
        case SP_META_KIND_DOUBLE:
            sp_results_metadata_double(res, i, &dv);
            if (dv == dv && dv - dv == 0) fprintf(out, "%.17g", dv);
            else fputs("null", out);
            break;
        case SP_META_KIND_STRING_ARRAY:
            fputc('[', out);
            for (size_t k = 0; k < sp_results_metadata_array_length(res, i); k++) {
                if (k) fputs(", ", out);
                cli_json_string(out, sp_results_metadata_array_item(res, i, k));
            }
            fputc(']', out);
            break;
        default: fputs("null", out);
        }
    }
    fputs(n ? "\n  },\n" : "},\n", out);
}

static int print_json(FILE *out, const sp_results *res, const args *a) {
    size_t count;
    int status;
    char warning[1024];
    region_entry *e = collect(res, a, &count, &status, warning, sizeof warning);
    region_rows g = {0};
    if (e && !region_rows_build(&g, res)) status = SP_ERR_OUT_OF_MEMORY;
    if (!e || status == SP_ERR_OUT_OF_MEMORY) {
        free(e);
        free(g.start);
        free(g.rows);
        return SP_ERR_OUT_OF_MEMORY;
    }
    cli_json_file_header(out, res);
    fputs(",\n", out);
    json_metadata(out, res);
    inspect_json_counters(out, res, (inspect_ranks){a->ranks, a->rank_count});
    inspect_json_mpi(out, res, (inspect_ranks){a->ranks, a->rank_count});
    if (a->comm && inspect_json_comm(out, res, (inspect_ranks){a->ranks, a->rank_count}) != SP_OK)
        status = SP_ERR_OUT_OF_MEMORY;
    char threads_msg[1024] = "";
    int threads_status = a->threads ? inspect_json_threads(out, res,
                                                           (inspect_ranks){a->ranks, a->rank_count},
                                                           threads_msg, sizeof threads_msg)
                                    : SP_OK;
    if (threads_status == SP_ERR_NESTING && !warning[0])
        snprintf(warning, sizeof warning, "%s", threads_msg);
    else if (threads_status != SP_OK && threads_status != SP_ERR_NESTING) {
        fprintf(stderr, "scope-inspect: %s: %s\n", sp_results_path(res), threads_msg);
        status = threads_status;
    }
    fputs("  \"warnings\": [", out);
    if (warning[0]) cli_json_string(out, warning);  /* one message per file */
    fputs("],\n  \"regions\": [", out);
    for (size_t i = 0; i < count; i++) {
        const sp_region_summary *s = &e[i].s;
        unsigned av = s->available;
        fputs(i ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ", out);
        cli_json_string(out, sp_results_region_name(res, e[i].region));
        fprintf(out, ",\n      \"num_ranks\": %u,\n      \"num_calls\": %llu", s->num_ranks,
                (unsigned long long)s->calls);
        json_seconds(out, "total_duration", (double)s->total_ns, true);
        json_seconds(out, "inclusive_duration", (double)s->total_ns, true);
        json_seconds(out, "exclusive_duration", (double)s->exclusive_ns, av & SP_STAT_EXCLUSIVE);
        json_seconds(out, "average_duration", s->average_ns, true);
        json_seconds(out, "min_duration", (double)s->min_ns, av & SP_STAT_MIN_MAX);
        json_seconds(out, "max_duration", (double)s->max_ns, av & SP_STAT_MIN_MAX);
        json_seconds(out, "first_duration", (double)s->first_ns, av & SP_STAT_FIRST_LAST);
        json_seconds(out, "last_duration", (double)s->last_ns, av & SP_STAT_FIRST_LAST);
        json_seconds(out, "std_duration", s->std_ns, av & SP_STAT_STD);
        json_seconds(out, "p50_duration", s->p50_ns, av & SP_STAT_PERCENTILES);
        json_seconds(out, "p95_duration", s->p95_ns, av & SP_STAT_PERCENTILES);
        json_seconds(out, "p99_duration", s->p99_ns, av & SP_STAT_PERCENTILES);
        fprintf(out, ",\n      \"rank_imbalance\": %.17g,\n      \"rank_imbalance_pct\": %.17g",
                s->rank_imbalance, s->rank_imbalance_pct);
        if (av & SP_STAT_GPU) {
            json_seconds(out, "gpu_total_duration", (double)s->gpu_total_ns, true);
            json_seconds(out, "gpu_average_duration", s->gpu_average_ns, true);
        }
        fputs(",\n      \"tags\": [", out);
        size_t first = g.start[e[i].region], end = g.start[e[i].region + 1];
        long row = first < end ? (long)g.rows[first] : -1;  /* the lowest rank's */
        for (size_t t = 0; row >= 0 && t < sp_results_row_tag_count(res, (size_t)row); t++) {
            if (t) fputs(", ", out);
            cli_json_string(out, sp_results_row_tag(res, (size_t)row, t));
        }
        fputs("]\n    }", out);
    }
    fputs(count ? "\n  ],\n  \"per_rank\": {" : "],\n  \"per_rank\": {", out);
    for (size_t i = 0; i < count; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        cli_json_string(out, sp_results_region_name(res, e[i].region));
        fputs(": {", out);
        bool first = true;
        for (size_t k = g.start[e[i].region]; k < g.start[e[i].region + 1]; k++) {
            size_t r = g.rows[k];
            uint32_t rank = sp_results_row_rank(res, r);
            bool selected = a->rank_count == 0;
            for (size_t q = 0; q < a->rank_count && !selected; q++) selected = a->ranks[q] == rank;
            if (!selected) continue;
            sp_row_stats st;
            sp_results_row_stats(res, r, &st);
            fprintf(out, "%s\"%u\": {\"num_calls\": %llu, \"total_ns\": %lld}", first ? "" : ", ",
                    rank, (unsigned long long)st.count, (long long)st.total);
            first = false;
        }
        fputs("}", out);
    }
    fputs(count ? "\n  }\n}" : "}\n}", out);
    free(e);
    free(g.start);
    free(g.rows);
    return status;
}

/* ---- text ------------------------------------------------------------------- */

static void print_clipped(FILE *out, const char *text) {
    /* Long values (PATH and friends) are clipped for a readable block;
     * --json gives them whole. Escaped for the terminal (cli_text), which
     * also cuts at a whole character or escape. */
    char buf[71];
    fputs(cli_text(text, buf, sizeof buf), out);
    if (sp_escape_name(text, NULL, 0) >= sizeof buf) fputs(" [...]", out);
}

static void print_metadata(FILE *out, const sp_results *res) {
    fputs("File:     ", out);
    cli_text_put(out, sp_results_path(res));
    fputc('\n', out);
    if (sp_results_format_kind(res) == SP_RESULTS_FORMAT_TRACE)
        fprintf(out, "Format:   native trace (.spt) version %d\n", sp_results_schema_version(res));
    else
        fprintf(out, "Format:   HDF5 schema %d%s\n", sp_results_schema_version(res),
                sp_results_is_aggregate(res) ? ", aggregate layout (no per-call data)" : "");
    uint32_t ranks = sp_results_rank_count(res);
    uint64_t calls = 0;
    for (size_t i = 0; i < sp_results_row_count(res); i++) calls += sp_results_row_calls(res, i);
    fprintf(out, "Ranks:    %u\nRegions:  %zu (%llu call%s)\n", ranks,
            sp_results_region_count(res), (unsigned long long)calls, calls == 1 ? "" : "s");
    size_t n = sp_results_metadata_count(res);
    if (n == 0) return;
    /* Keys sorted so that two files read the same way side by side. */
    size_t *order = malloc(n * sizeof *order);
    if (!order) return;
    for (size_t i = 0; i < n; i++) order[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(sp_results_metadata_key(res, order[j - 1]),
                                           sp_results_metadata_key(res, order[j])) > 0;
             j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t width = 0;
    for (size_t i = 0; i < n; i++) {
        size_t w = sp_escape_name(sp_results_metadata_key(res, i), NULL, 0);
        if (w > width) width = w;
    }
    if (width > 32) width = 32;
    fputs("Metadata:\n", out);
    for (size_t k = 0; k < n; k++) {
        size_t i = order[k];
        char key[256];
        fprintf(out, "  %-*s  ", (int)width, cli_text(sp_results_metadata_key(res, i), key, sizeof key));
        int64_t iv;
        double dv;
        char buf[64];
        switch (sp_results_metadata_kind(res, i)) {
        case SP_META_KIND_STRING: print_clipped(out, sp_results_metadata_string(res, i)); break;
        case SP_META_KIND_INT:
            sp_results_metadata_int(res, i, &iv);
            fprintf(out, "%lld", (long long)iv);
            break;
        case SP_META_KIND_BOOL:
            sp_results_metadata_int(res, i, &iv);
            fputs(iv ? "true" : "false", out);
            break;
        case SP_META_KIND_DOUBLE:
            sp_results_metadata_double(res, i, &dv);
            snprintf(buf, sizeof buf, "%.15g", dv);
            fputs(buf, out);
            break;
        case SP_META_KIND_STRING_ARRAY: {
            size_t items = sp_results_metadata_array_length(res, i);
            fprintf(out, "[%zu item%s]", items, items == 1 ? "" : "s");
            for (size_t t = 0; t < items && t < 3; t++) {
                fputs(t ? ", " : " ", out);
                print_clipped(out, sp_results_metadata_array_item(res, i, t));
            }
            if (items > 3) fputs(", ...", out);
            break;
        }
        default: fputs("?", out);
        }
        fputc('\n', out);
    }
    free(order);
}

static int print_text(FILE *out, const sp_results *res, const args *a) {
    print_metadata(out, res);
    if (a->metadata_only) return SP_OK;
    fputc('\n', out);
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.style = a->ascii     ? SP_SUMMARY_STYLE_ASCII
              : a->unicode ? SP_SUMMARY_STYLE_UNICODE
                           : SP_SUMMARY_STYLE_AUTO;
    o.flat = a->flat;
    o.sort = a->sort;
    o.columns = a->columns;
    o.include = a->include;
    o.include_count = a->include_count;
    o.exclude = a->exclude;
    o.exclude_count = a->exclude_count;
    o.ranks = a->rank_count ? a->ranks : NULL;
    o.rank_count = a->rank_count;
    char msg[1024];
    int status = sp_summary_print(res, out, &o, msg, sizeof msg);
    inspect_print_counters(out, res, (inspect_ranks){a->ranks, a->rank_count});
    inspect_print_mpi(out, res, (inspect_ranks){a->ranks, a->rank_count});
    if (a->comm && (status == SP_OK || status == SP_ERR_NESTING) &&
        inspect_print_comm(out, res, (inspect_ranks){a->ranks, a->rank_count},
                           a->comm_top ? a->comm_top : 20) != SP_OK) {
        snprintf(msg, sizeof msg, "out of memory for the communication matrix");
        status = SP_ERR_OUT_OF_MEMORY;
    }
    if (a->threads && (status == SP_OK || status == SP_ERR_NESTING)) {
        char threads_msg[1024];
        int st = inspect_print_threads(out, res, (inspect_ranks){a->ranks, a->rank_count},
                                       threads_msg, sizeof threads_msg);
        if (st == SP_ERR_NESTING)
            fprintf(stderr, "scope-inspect: warning: %s: %s\n", sp_results_path(res), threads_msg);
        else if (st != SP_OK) {
            snprintf(msg, sizeof msg, "%s", threads_msg);
            status = st;
        }
    }
    if (status == SP_ERR_NESTING) {
        fprintf(stderr, "scope-inspect: warning: %s: %s\n", sp_results_path(res), msg);
        status = SP_OK;
    } else if (status != SP_OK) {
        fprintf(stderr, "scope-inspect: %s: %s\n", sp_results_path(res), msg);
    }
    return status;
}

int main(int argc, char **argv) {
    cli_isolate_start("scope-inspect");
    args a = {0};
    int rc = parse_args(&a, argc, argv);
    if (rc) {
        free(a.files);
        free(a.ranks);
        return rc;
    }
    int exit_code = 0;
    bool wrap = a.json && a.file_count > 1;
    if (wrap) fputs("{\"units\": \"seconds\", \"files\": [\n", stdout);
    size_t printed = 0;
    for (size_t f = 0; f < a.file_count; f++) {
        char msg[1024];
        sp_results *res = NULL;
        /* Calls on demand: the reader keeps the event columns in the file
         * and the summary reads them rank by rank through cursors, so the
         * peak does not grow with the number of calls (files it cannot
         * serve that way, without stored exclusive totals, are read
         * whole). */
        int st = cli_results_open(a.files[f], SP_RESULTS_CALLS_ON_DEMAND, &res, msg, sizeof msg);
        if (st != SP_OK) {
            /* The reader's messages name the file; say it once more only
             * when one does not (argument errors). */
            if (strstr(msg, a.files[f])) fprintf(stderr, "scope-inspect: %s\n", msg);
            else fprintf(stderr, "scope-inspect: %s: %s\n", a.files[f], msg[0] ? msg : sp_error_string(st));
            exit_code = CLI_EXIT_FILE;
            continue;
        }
        if (!a.json && printed) fputs("\n", stdout);
        if (wrap && printed) fputs(",\n", stdout);
        st = a.json ? print_json(stdout, res, &a) : print_text(stdout, res, &a);
        if (a.json && !wrap) fputc('\n', stdout);
        printed++;
        sp_results_close(res);
        if (st == SP_ERR_INVALID_ARGUMENT) {
            exit_code = CLI_EXIT_USAGE;  /* a bad --sort or --columns */
            break;
        }
        if (st != SP_OK && exit_code == 0) exit_code = CLI_EXIT_OTHER;
    }
    if (wrap) fputs("\n]}\n", stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "scope-inspect: cannot write the output\n");
        if (exit_code == 0) exit_code = CLI_EXIT_OTHER;
    }
    free(a.files);
    free(a.ranks);
    return exit_code;
}
