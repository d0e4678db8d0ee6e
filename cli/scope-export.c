/*
 * scope-export - turn a profile into a file other tools read: a Chrome /
 * Perfetto trace (every call of every rank and thread on one timeline), a
 * CSV with one line per call, the per-region statistics as JSON, speedscope
 * profiles, an OTF2 archive, folded stacks or an SVG flame graph.
 *
 *   scope-export FILE -o OUT [--format chrome|csv|json|speedscope|otf2|folded|svg]
 *                [--ranks 0,2-3] [--per-rank] [--include REGEX] [--exclude REGEX]
 *
 * The picture formats live in their own files in views/ (export_speedscope.c,
 * export_otf2.c, flamegraph_svg.c, flame_tree.c over view_lanes.c); this
 * file parses, selects and publishes.
 *
 * A thin main over the public API (scope_profiler_results.h,
 * scope_profiler_summary.h): every number comes from the library, this file
 * only chooses and formats.
 *
 * Output discipline, as every writer of this project (cli_output.c): the
 * export goes into a temporary sibling of OUT (a directory for OTF2) and is
 * renamed over OUT only once it was written, flushed and synced. A failure
 * at any point removes the temporary, so OUT is either the complete new
 * export or whatever it was before. The text is written as it
 * is produced (a trace of ten million calls never exists as one string in
 * memory); only the profile itself is held, by the results object.
 */
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_isolate.h"
#include "cli_output.h"
#include "scope_profiler.h"
#include "scope_profiler_results.h"
#include "scope_profiler_summary.h"
#include "views/export_formats.h"
#include "views/flame_tree.h"
#include "views/view_lanes.h"

static const char TOOL[] = "scope-export";
enum format {
    FORMAT_CHROME,
    FORMAT_CSV,
    FORMAT_JSON,
    FORMAT_SPEEDSCOPE,
    FORMAT_OTF2,
    FORMAT_FOLDED,
    FORMAT_SVG
};

/* Names as --format takes them, in enum order. */
static const char *const format_names[] = {"chrome", "csv", "json", "speedscope",
                                           "otf2", "folded", "svg"};
enum { FORMAT_COUNT = sizeof format_names / sizeof *format_names };

/* Formats that need per-call events (a timeline), not only per-row totals. */
static bool needs_events(int format) {
    return format == FORMAT_CHROME || format == FORMAT_CSV || format == FORMAT_SPEEDSCOPE ||
           format == FORMAT_OTF2;
}

#define MAX_PATTERNS 64
#define MAX_RANKS 65536

static const char usage_text[] =
    "Usage: scope-export FILE -o OUT [OPTIONS]\n"
    "\n"
    "Export a scope-profiler file (HDF5 schema 1-3, the aggregate layout, or a\n"
    "native .spt trace) for other tools.\n"
    "\n"
    "Formats:\n"
    "  chrome  Chrome/Perfetto trace-event JSON (default; open it in\n"
    "          ui.perfetto.dev or chrome://tracing): one complete event per call,\n"
    "          pid = rank, tid = thread, ts/dur in microseconds measured from the\n"
    "          earliest call start in the file, call_id/parent_id in args\n"
    "  csv     one line per call: rank,region,thread,call_id,parent_id,start_ns,\n"
    "          end_ns,duration_ns (raw clock ns; an empty field is a column the\n"
    "          file did not record). Default when OUT ends in .csv\n"
    "  json    per-region statistics in seconds, the keys of scope-inspect --json\n"
    "  speedscope  speedscope profiles (open in speedscope.app or the speedscope\n"
    "          viewer): one evented profile per rank and thread, frames shared,\n"
    "          ns from the earliest call start in the file\n"
    "  otf2    an OTF2 archive in the directory OUT (must not exist or be empty):\n"
    "          OUT/traces.otf2 for Vampir, otf2-print, ...; one location per rank\n"
    "          and thread, ranks as location groups (when built with OTF2)\n"
    "  folded  folded stacks (\"outer;inner weight\", weight = exclusive ns) for\n"
    "          flamegraph.pl, inferno, speedscope; ranks pooled unless --per-rank;\n"
    "          paths deeper than 512 frames end in one \"[deeper frames folded]\"\n"
    "          frame holding the time below (said on stderr; svg: not drawn)\n"
    "  svg     an interactive flame graph (hover for time and share, click to\n"
    "          zoom), one self-contained SVG; open it in a browser\n"
    "  Aggregate-layout files (no per-call events) give json, folded and svg\n"
    "  from their per-region totals (no call paths); the timeline formats\n"
    "  (chrome, csv, speedscope, otf2) need per-call events.\n"
    "\n"
    "Options:\n"
    "  -o, --output OUT  file to write ('-' for standard output); written to a\n"
    "                    temporary file and renamed into place\n"
    "  --format NAME     chrome, csv, json, speedscope, otf2, folded or svg\n"
    "  --ranks LIST      only these ranks, e.g. 0,2-3\n"
    "  --per-rank        folded, svg: one subtree per rank (\"rank N\" frames)\n"
    "                    instead of pooling the ranks\n"
    "  --include REGEX   only regions whose name matches (POSIX extended regex,\n"
    "                    anchored at the start of the name); repeatable\n"
    "  --exclude REGEX   leave out regions whose name matches; repeatable\n"
    "  -h, --help        show this help\n"
    "      --version     show the version, git describe, HDF5 and MPI\n"
    "\n"
    "Exit status:\n"
    "  0  success\n"
    "  1  usage error (unknown option, bad value, bad regex, OUT is FILE)\n"
    "  2  FILE could not be read, or holds no per-call events for chrome, csv,\n"
    "     speedscope or otf2 (aggregate layout); OUT is left as it was\n"
    "  3  any other failure (out of memory, OUT not writable, otf2 in a build\n"
    "     without OTF2); OUT is left as it was\n";

typedef struct args {
    const char *input;
    const char *output;
    int format;          /* enum format, or -1 = not given */
    regex_t include[MAX_PATTERNS];
    size_t include_count;
    regex_t exclude[MAX_PATTERNS];
    size_t exclude_count;
    const char *include_text[MAX_PATTERNS];
    const char *exclude_text[MAX_PATTERNS];
    bool per_rank;
    uint32_t *ranks;     /* sorted, unique */
    size_t rank_count;   /* 0 = every rank */
} args;

/* Compiled once, anchored at the start of the name like scope-inspect's
 * and the summary table's filters, so one REGEX selects the same regions
 * in every tool. */
static int add_pattern(regex_t *list, const char **texts, size_t *count, const char *option,
                       const char *value) {
    if (*count == MAX_PATTERNS) return cli_usage_error(TOOL, "too many %s patterns", option);
    size_t len = strlen(value) + 4;
    char *anchored = malloc(len);
    if (!anchored) {
        fprintf(stderr, "scope-export: out of memory\n");
        return CLI_EXIT_OTHER;
    }
    snprintf(anchored, len, "^(%s)", value);
    int rc = regcomp(&list[*count], anchored, REG_EXTENDED | REG_NOSUB);
    free(anchored);
    if (rc != 0) return cli_usage_error(TOOL, "invalid regular expression '%s'", value);
    texts[*count] = value;
    (*count)++;
    return 0;
}

static bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int parse_args(args *a, int argc, char **argv) {
    a->format = -1;
    a->ranks = calloc(MAX_RANKS, sizeof *a->ranks);
    if (!a->ranks) {
        fprintf(stderr, "scope-export: out of memory\n");
        return CLI_EXIT_OTHER;
    }
    int options_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int kind = cli_arg_kind(arg, &options_done);
        if (kind == CLI_ARG_OPERAND) {
            if (a->input) return cli_usage_error(TOOL, "more than one FILE given ('%s', '%s')", a->input, arg);
            a->input = arg;
            continue;
        }
        if (kind == CLI_ARG_SEPARATOR) continue;
        if (kind == CLI_ARG_HELP) {
            fputs(usage_text, stdout);
            return -1;
        }
        if (!strcmp(arg, "--version")) {
            int version_rc = cli_print_version(TOOL);
            return version_rc ? version_rc : -1;
        }
        if (!strcmp(arg, "--per-rank")) {
            a->per_rank = true;
            continue;
        }
        /* Options with a value: "--opt VALUE" or "--opt=VALUE" ("-o VALUE"). */
        static const char *const valued[] = {"--output", "--format", "--ranks", "--include",
                                             "--exclude", "-o"};
        const char *value = NULL;
        long which = cli_option_value(TOOL, argc, argv, &i, valued,
                                      sizeof valued / sizeof *valued, &value);
        if (which < 0) return CLI_EXIT_USAGE;
        int rc = 0;
        switch (which) {
        case 0:
        case 5:
            if (a->output) return cli_usage_error(TOOL, "%s", "more than one output given");
            if (!*value) return cli_usage_error(TOOL, "%s", "empty output file name");
            a->output = value;
            break;
        case 1:
            a->format = -1;
            for (int f = 0; f < FORMAT_COUNT; f++)
                if (!strcmp(value, format_names[f])) a->format = f;
            if (a->format < 0)
                return cli_usage_error(
                    TOOL, "unknown format '%s' (chrome, csv, json, speedscope, otf2, folded, svg)",
                    value);
            break;
        case 2: rc = cli_parse_ranks(TOOL, value, a->ranks, &a->rank_count, MAX_RANKS); break;
        case 3:
            rc = add_pattern(a->include, a->include_text, &a->include_count, "--include", value);
            break;
        case 4:
            rc = add_pattern(a->exclude, a->exclude_text, &a->exclude_count, "--exclude", value);
            break;
        default: return cli_usage_error(TOOL, "unknown option '%s'", arg);
        }
        if (rc) return rc;
    }
    if (!a->input) return cli_usage_error(TOOL, "%s", "no FILE given");
    if (!a->output) return cli_usage_error(TOOL, "%s", "no output file given (-o OUT)");
    if (a->format < 0) {
        a->format = has_suffix(a->output, ".csv")       ? FORMAT_CSV
                    : has_suffix(a->output, ".svg")     ? FORMAT_SVG
                    : has_suffix(a->output, ".folded")  ? FORMAT_FOLDED
                                                        : FORMAT_CHROME;
    }
    return 0;
}

static int cmp_u32(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : a > b;
}

static void free_args(args *a) {
    for (size_t i = 0; i < a->include_count; i++) regfree(&a->include[i]);
    for (size_t i = 0; i < a->exclude_count; i++) regfree(&a->exclude[i]);
    free(a->ranks);
}

static bool rank_selected(const args *a, uint32_t rank) {
    return a->rank_count == 0 ||
           bsearch(&rank, a->ranks, a->rank_count, sizeof rank, cmp_u32) != NULL;
}

static bool name_selected(const args *a, const char *name) {
    bool in = a->include_count == 0;
    for (size_t i = 0; i < a->include_count && !in; i++)
        in = regexec(&a->include[i], name, 0, NULL, 0) == 0;
    for (size_t i = 0; i < a->exclude_count && in; i++)
        in = regexec(&a->exclude[i], name, 0, NULL, 0) != 0;
    return in;
}

/* ---- text helpers ---------------------------------------------------------- */

/* ns as microseconds, printed exactly ("12.345"): integer ns divide by 1000
 * without rounding, so a reader gets the same double as ns / 1000. */
static void print_us_magnitude(FILE *out, bool negative, uint64_t mag) {
    fprintf(out, "%s%llu.%03llu", negative ? "-" : "", (unsigned long long)(mag / 1000),
            (unsigned long long)(mag % 1000));
}

static void print_us(FILE *out, int64_t ns) {
    print_us_magnitude(out, ns < 0, ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns);
}

/* RFC 4180: a field with a comma, quote or line break is quoted, quotes
 * doubled. */
static void csv_field(FILE *out, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* ---- chrome trace ---------------------------------------------------------- */

/* Ranks of the selected rows, ascending and unique. */
static uint32_t *exported_ranks(const sp_results *res, const args *a, const bool *region_on,
                                size_t *count) {
    size_t rows = sp_results_row_count(res);
    uint32_t *ranks = malloc((rows + 1) * sizeof *ranks);
    *count = 0;
    if (!ranks) return NULL;
    for (size_t r = 0; r < rows; r++) {
        uint32_t rank = sp_results_row_rank(res, r);
        if (rank_selected(a, rank) && region_on[sp_results_row_region(res, r)])
            ranks[(*count)++] = rank;
    }
    qsort(ranks, *count, sizeof *ranks, cmp_u32);
    size_t unique = 0;
    for (size_t i = 0; i < *count; i++)
        if (unique == 0 || ranks[unique - 1] != ranks[i]) ranks[unique++] = ranks[i];
    *count = unique;
    return ranks;
}

/* The earliest start of the whole file (the rows' statistics, so no pass
 * over the calls). */
static int64_t export_origin(const sp_results *res) {
    int64_t origin = 0;
    bool have_origin = false;
    for (size_t r = 0; r < sp_results_row_count(res); r++) {
        sp_row_stats stats;
        if (sp_results_row_calls(res, r) == 0 || sp_results_row_stats(res, r, &stats) != SP_OK)
            continue;
        if (!have_origin || stats.start_minimum < origin) origin = stats.start_minimum;
        have_origin = true;
    }
    return origin;
}

/* The next slice of a row's calls; a file that cannot be read back is
 * reported here, naming it (the message does). */
static int next_slice(const sp_results *res, sp_calls *cursor, sp_call_slice *slice) {
    char msg[512];
    int st = sp_calls_next(cursor, slice, msg, sizeof msg);
    if (st != SP_OK)
        fprintf(stderr, "scope-export: %s\n", msg[0] ? msg : sp_results_path(res));
    return st;
}

/* Set once the lanes' message was printed (it names the file and what to
 * change), so main does not add a vaguer line. */
static bool view_error_said;

/* ---- chrome: unrelated trees that share a thread --------------------------
 *
 * Perfetto nests the complete events of one tid by time. Two unrelated
 * trees on one thread that overlap (two runs merged with
 * --allow-disjoint, view_lanes.h) would be drawn one inside the other, so
 * the calls of a thread's second and later tree tracks get a tid of their
 * own, named "rank R / thread T / tree K", as every other view shows them.
 * Finding them takes the lanes' pass over the calls, so it is done only
 * for files that can hold such trees: merged files and files not recorded
 * by this library (a native run nests every thread's calls). Only the
 * calls on those extra tracks are kept, by (rank, call id). */

typedef struct tree_call {
    uint32_t rank, track; /* track 0 = empty slot */
    int64_t id, thread;
} tree_call;

typedef struct tree_calls {
    tree_call *slots;
    size_t cap, used;
} tree_calls;

static size_t tree_slot(const tree_calls *t, uint32_t rank, int64_t id) {
    uint64_t h = ((uint64_t)id ^ (uint64_t)rank << 40) * 0x9e3779b97f4a7c15ULL;
    size_t j = (size_t)(h >> 17) & (t->cap - 1);
    while (t->slots[j].track && !(t->slots[j].rank == rank && t->slots[j].id == id))
        j = (j + 1) & (t->cap - 1);
    return j;
}

static int tree_add(tree_calls *t, const tree_call *c) {
    if ((t->used + 1) * 2 > t->cap) {
        tree_calls grown = {calloc(t->cap ? t->cap * 2 : 64, sizeof *grown.slots),
                            t->cap ? t->cap * 2 : 64, t->used};
        if (!grown.slots) return SP_ERR_OUT_OF_MEMORY;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].track)
                grown.slots[tree_slot(&grown, t->slots[i].rank, t->slots[i].id)] = t->slots[i];
        free(t->slots);
        *t = grown;
    }
    size_t j = tree_slot(t, c->rank, c->id);
    if (!t->slots[j].track) t->used++;
    t->slots[j] = *c;
    return SP_OK;
}

static const tree_call *tree_find(const tree_calls *t, uint32_t rank, int64_t id) {
    if (!t->used || id < 0) return NULL;
    const tree_call *c = &t->slots[tree_slot(t, rank, id)];
    return c->track ? c : NULL;
}

/* A tid no recorded thread has: past 2^40, (thread + 1) * 32 + track. */
static long long tree_tid(int64_t thread, uint32_t track) {
    return (1LL << 40) + ((long long)thread + 1) * 32 + track;
}

typedef struct tree_walk {
    tree_calls *calls;
    const view_lane *lane;
} tree_walk;

static int tree_on_open(void *p, const view_call *call, unsigned depth, int64_t start) {
    (void)depth;
    (void)start;
    tree_walk *w = p;
    tree_call c = {w->lane->rank, w->lane->track, call->call_id, w->lane->thread};
    return call->call_id >= 0 ? tree_add(w->calls, &c) : 0;
}

static bool may_share_threads(const sp_results *res) {
    if (sp_results_metadata_find(res, "merged_inputs") >= 0) return true;
    long src = sp_results_metadata_find(res, "source");
    const char *text = src >= 0 ? sp_results_metadata_string(res, (size_t)src) : NULL;
    return !text || strcmp(text, "native") != 0;
}

/* The calls on extra tree tracks of the selection, and their tids named
 * in the trace's metadata. */
static int chrome_trees(FILE *out, const sp_results *res, const args *a, const bool *region_on,
                        tree_calls *calls) {
    if (!sp_results_has_events(res) || !may_share_threads(res)) return SP_OK;
    view_lanes v;
    int st = view_lanes_build(&v, res, a->rank_count ? a->ranks : NULL, a->rank_count,
                              region_on);
    for (size_t l = 0; l < v.lane_count && st == SP_OK; l++) {
        const view_lane *lane = &v.lanes[l];
        if (lane->track == 0) continue;
        tree_walk w = {calls, lane};
        view_walk_callbacks cb = {tree_on_open, NULL};
        st = view_lanes_walk(&v, l, &cb, &w);
        char name[128];
        view_lane_label(lane, name, sizeof name);
        fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%lld,"
                     "\"args\":{\"name\":\"%s\"}}",
                lane->rank, tree_tid(lane->thread, lane->track), name);
    }
    if (st != SP_OK && v.error[0]) {
        fprintf(stderr, "scope-export: %s\n", v.error);
        view_error_said = true;
    }
    view_lanes_free(&v);
    return st;
}

static int write_chrome(FILE *out, const sp_results *res, const args *a, const bool *region_on) {
    /* The origin is the earliest start of the whole file, not of the
     * selection: a filtered export lines up with an unfiltered one, and
     * every rank and language shares one zero. */
    int64_t origin = export_origin(res);
    size_t rows = sp_results_row_count(res);
    size_t rank_count;
    uint32_t *ranks = exported_ranks(res, a, region_on, &rank_count);
    if (!ranks) return SP_ERR_OUT_OF_MEMORY;

    fputs("{\"traceEvents\":[\n", out);
    bool first = true;
    for (size_t i = 0; i < rank_count; i++) {
        fprintf(out,
                "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                "\"args\":{\"name\":\"rank %u\"}},\n"
                "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                "\"args\":{\"sort_index\":%u}}",
                first ? "" : ",\n", ranks[i], ranks[i], ranks[i], ranks[i]);
        first = false;
    }
    for (size_t t = 0; t < sp_results_thread_count(res); t++) {
        sp_thread_info info;
        if (sp_results_thread(res, t, &info) != SP_OK) continue;
        if (!bsearch(&info.rank, ranks, rank_count, sizeof *ranks, cmp_u32)) continue;
        fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%lld,"
                     "\"args\":{\"name\":",
                info.rank, (long long)info.index);
        if (info.name && info.name[0]) {
            cli_json_string(out, info.name);
        } else {
            fprintf(out, "\"thread %lld\"", (long long)info.index);
        }
        fprintf(out, "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%u,\"tid\":%lld,"
                     "\"args\":{\"sort_index\":%lld}}",
                info.rank, (long long)info.index, (long long)info.index);
    }
    free(ranks);
    tree_calls trees = {0};
    int tree_status = chrome_trees(out, res, a, region_on, &trees);
    if (tree_status != SP_OK) {
        free(trees.slots);
        return tree_status;
    }

    for (size_t r = 0; r < rows && !ferror(out); r++) {
        uint32_t rank = sp_results_row_rank(res, r);
        size_t region = sp_results_row_region(res, r);
        uint64_t calls = sp_results_row_calls(res, r);
        if (!rank_selected(a, rank) || !region_on[region] || calls == 0) continue;
        const char *name = sp_results_region_name(res, region);
        sp_calls *cursor;
        sp_call_slice sl;
        int st = sp_calls_open(res, r, 0, &cursor);
        while (st == SP_OK && (st = next_slice(res, cursor, &sl)) == SP_OK && sl.count) {
            const int64_t *call_ids = sl.call_ids, *parent_ids = sl.parent_ids;
            for (size_t k = 0; k < sl.count; k++) {
                fputs(first ? "{\"name\":" : ",\n{\"name\":", out);
                first = false;
                cli_json_string(out, name);
                fputs(",\"ph\":\"X\",\"ts\":", out);
                /* from the origin as uint64: the span from INT64_MIN to
                 * INT64_MAX is more than an int64 holds */
                print_us_magnitude(out, false, (uint64_t)sl.starts[k] - (uint64_t)origin);
                fputs(",\"dur\":", out);
                print_us(out, sl.durations[k]);
                /* Unknown lanes (-1) share tid 0 with files that record no
                 * threads: the trace format has no "unknown thread". */
                long long tid =
                    sl.thread_ids && sl.thread_ids[k] >= 0 ? (long long)sl.thread_ids[k] : 0;
                const tree_call *tree = call_ids ? tree_find(&trees, rank, call_ids[k]) : NULL;
                if (tree) tid = tree_tid(tree->thread, tree->track);
                fprintf(out, ",\"pid\":%u,\"tid\":%lld", rank, tid);
                if (call_ids || parent_ids) {
                    fputs(",\"args\":{", out);
                    if (call_ids) fprintf(out, "\"call_id\":%lld", (long long)call_ids[k]);
                    if (parent_ids)
                        fprintf(out, "%s\"parent_id\":%lld", call_ids ? "," : "",
                                (long long)parent_ids[k]);
                    fputc('}', out);
                }
                fputc('}', out);
            }
        }
        sp_calls_close(cursor);
        if (st != SP_OK) {
            free(trees.slots);
            return st;
        }
    }
    free(trees.slots);
    fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"source_file\":", out);
    cli_json_string(out, sp_results_path(res));
    fprintf(out, ",\"exporter\":\"scope-export %s\",\"time_unit\":\"ts and dur in microseconds\","
                 "\"time_origin\":\"earliest call start in the source file\","
                 "\"time_origin_ns\":%lld",
            SCOPE_PROFILER_VERSION, (long long)origin);
    long label = sp_results_metadata_find(res, "label");
    if (label >= 0 && sp_results_metadata_string(res, (size_t)label)) {
        fputs(",\"label\":", out);
        cli_json_string(out, sp_results_metadata_string(res, (size_t)label));
    }
    fputs("}}\n", out);
    return SP_OK;
}

/* ---- csv ------------------------------------------------------------------- */

static void csv_optional(FILE *out, const int64_t *column, uint64_t k) {
    if (column) fprintf(out, ",%lld", (long long)column[k]);
    else fputc(',', out);
}

static int write_csv(FILE *out, const sp_results *res, const args *a, const bool *region_on) {
    fputs("rank,region,thread,call_id,parent_id,start_ns,end_ns,duration_ns\n", out);
    for (size_t r = 0; r < sp_results_row_count(res) && !ferror(out); r++) {
        uint32_t rank = sp_results_row_rank(res, r);
        size_t region = sp_results_row_region(res, r);
        uint64_t calls = sp_results_row_calls(res, r);
        if (!rank_selected(a, rank) || !region_on[region] || calls == 0) continue;
        const char *name = sp_results_region_name(res, region);
        sp_calls *cursor;
        sp_call_slice sl;
        int st = sp_calls_open(res, r, 0, &cursor);
        while (st == SP_OK && (st = next_slice(res, cursor, &sl)) == SP_OK && sl.count) {
            for (size_t k = 0; k < sl.count; k++) {
                fprintf(out, "%u,", rank);
                csv_field(out, name);
                csv_optional(out, sl.thread_ids, k);
                csv_optional(out, sl.call_ids, k);
                csv_optional(out, sl.parent_ids, k);
                fprintf(out, ",%lld,%lld,%lld\n", (long long)sl.starts[k], (long long)sl.ends[k],
                        (long long)sl.durations[k]);
            }
        }
        sp_calls_close(cursor);
        if (st != SP_OK) return st;
    }
    return SP_OK;
}

/* ---- json statistics ------------------------------------------------------- */

static void json_seconds(FILE *out, const char *indent, const char *key, double ns,
                         bool available) {
    fprintf(out, ",\n%s\"%s\": ", indent, key);
    if (available) fprintf(out, "%.17g", ns / 1e9);
    else fputs("null", out);
}

/* The statistics of one region in the keys of scope-inspect --json (and of
 * the Python package's get_summary()), so scripts read either output. */
static void json_region_fields(FILE *out, const char *indent, const sp_region_summary *s) {
    unsigned av = s->available;
    fprintf(out, ",\n%s\"num_ranks\": %u,\n%s\"num_calls\": %llu", indent, s->num_ranks, indent,
            (unsigned long long)s->calls);
    json_seconds(out, indent, "total_duration", (double)s->total_ns, true);
    json_seconds(out, indent, "inclusive_duration", (double)s->total_ns, true);
    json_seconds(out, indent, "exclusive_duration", (double)s->exclusive_ns,
                 av & SP_STAT_EXCLUSIVE);
    json_seconds(out, indent, "average_duration", s->average_ns, true);
    json_seconds(out, indent, "min_duration", (double)s->min_ns, av & SP_STAT_MIN_MAX);
    json_seconds(out, indent, "max_duration", (double)s->max_ns, av & SP_STAT_MIN_MAX);
    json_seconds(out, indent, "first_duration", (double)s->first_ns, av & SP_STAT_FIRST_LAST);
    json_seconds(out, indent, "last_duration", (double)s->last_ns, av & SP_STAT_FIRST_LAST);
    json_seconds(out, indent, "std_duration", s->std_ns, av & SP_STAT_STD);
    json_seconds(out, indent, "p50_duration", s->p50_ns, av & SP_STAT_PERCENTILES);
    json_seconds(out, indent, "p95_duration", s->p95_ns, av & SP_STAT_PERCENTILES);
    json_seconds(out, indent, "p99_duration", s->p99_ns, av & SP_STAT_PERCENTILES);
    fprintf(out, ",\n%s\"rank_imbalance\": %.17g,\n%s\"rank_imbalance_pct\": %.17g", indent,
            s->rank_imbalance, indent, s->rank_imbalance_pct);
    if (av & SP_STAT_GPU) {
        json_seconds(out, indent, "gpu_total_duration", (double)s->gpu_total_ns, true);
        json_seconds(out, indent, "gpu_average_duration", s->gpu_average_ns, true);
    }
}

typedef struct region_entry {
    size_t region;
    sp_region_summary s;
} region_entry;

typedef struct row_key {
    size_t region;
    uint32_t rank;
    size_t row;
} row_key;

static int cmp_row_key(const void *pa, const void *pb) {
    const row_key *a = pa, *b = pb;
    if (a->region != b->region) return a->region < b->region ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* summary() order, as scope-inspect: earliest first start first, regions
 * without a start time after them in file order. */
static int cmp_entry(const void *pa, const void *pb) {
    const region_entry *a = pa, *b = pb;
    bool ha = (a->s.available & SP_STAT_START_END) && a->s.calls;
    bool hb = (b->s.available & SP_STAT_START_END) && b->s.calls;
    if (ha && hb && a->s.first_start_ns != b->s.first_start_ns)
        return a->s.first_start_ns < b->s.first_start_ns ? -1 : 1;
    if (ha != hb) return ha ? -1 : 1;
    return a->region < b->region ? -1 : (a->region > b->region);
}

static void json_pattern_list(FILE *out, const char *const *texts, size_t n) {
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        cli_json_string(out, texts[i]);
    }
    fputc(']', out);
}

static int write_json(FILE *out, const sp_results *res, const args *a, const bool *region_on) {
    size_t n = sp_results_region_count(res);
    region_entry *e = calloc(n + 1, sizeof *e);
    if (!e) return SP_ERR_OUT_OF_MEMORY;
    const uint32_t *ranks = a->rank_count ? a->ranks : NULL;
    char msg[1024], warning[1024] = "";
    size_t count = 0;
    /* Every region and every row in two calls: one call per region (and
     * per region and rank) scanned the whole file each time. */
    size_t rows = sp_results_row_count(res);
    sp_region_summary *all = calloc(n + 1, sizeof *all);
    sp_region_summary *per_row = calloc(rows + 1, sizeof *per_row);
    int st = all && per_row ? sp_summary_regions(res, ranks, a->rank_count, all, msg, sizeof msg)
                            : SP_ERR_OUT_OF_MEMORY;
    if (st == SP_OK || st == SP_ERR_NESTING) {
        if (st == SP_ERR_NESTING) snprintf(warning, sizeof warning, "%s", msg);
        st = sp_summary_rows(res, per_row, msg, sizeof msg);
        if (st == SP_ERR_NESTING) st = SP_OK;
    }
    if (st != SP_OK) {
        if (st != SP_ERR_OUT_OF_MEMORY) fprintf(stderr, "scope-export: %s: %s\n", sp_results_path(res), msg);
        free(all);
        free(per_row);
        free(e);
        return st;
    }
    /* each region's row of the lowest rank, in one pass (for its tags) */
    long *lowest = malloc((n + 1) * sizeof *lowest);
    if (!lowest) {
        free(all);
        free(per_row);
        free(e);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t r = 0; r < n; r++) lowest[r] = -1;
    for (size_t r = 0; r < rows; r++) {
        size_t g = sp_results_row_region(res, r);
        if (g < n && (lowest[g] < 0 ||
                      sp_results_row_rank(res, r) < sp_results_row_rank(res, (size_t)lowest[g])))
            lowest[g] = (long)r;
    }
    for (size_t r = 0; r < n; r++) {
        if (!region_on[r] || all[r].num_ranks == 0) continue;  /* present on the selected ranks */
        e[count].region = r;
        e[count++].s = all[r];
    }
    free(all);
    qsort(e, count, sizeof *e, cmp_entry);

    cli_json_file_header(out, res);
    fputs(",\n  \"filters\": {\"include\": ", out);
    json_pattern_list(out, a->include_text, a->include_count);
    fputs(", \"exclude\": ", out);
    json_pattern_list(out, a->exclude_text, a->exclude_count);
    fputs(", \"ranks\": ", out);
    if (a->rank_count) {
        fputc('[', out);
        for (size_t i = 0; i < a->rank_count; i++) fprintf(out, "%s%u", i ? ", " : "", a->ranks[i]);
        fputc(']', out);
    } else {
        fputs("null", out);
    }
    fputs("},\n  \"warnings\": [", out);
    if (warning[0]) cli_json_string(out, warning);
    fputs("],\n  \"regions\": [", out);
    for (size_t i = 0; i < count; i++) {
        fputs(i ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ", out);
        cli_json_string(out, sp_results_region_name(res, e[i].region));
        json_region_fields(out, "      ", &e[i].s);
        /* Tags as scope-inspect gives them: those of the lowest rank's row
         * (FORMAT.md 2.5 takes the first value in ascending rank order). */
        fputs(",\n      \"tags\": [", out);
        long row = lowest[e[i].region];
        for (size_t t = 0; row >= 0 && t < sp_results_row_tag_count(res, (size_t)row); t++) {
            if (t) fputs(", ", out);
            cli_json_string(out, sp_results_row_tag(res, (size_t)row, t));
        }
        fputs("]\n    }", out);
    }
    fputs(count ? "\n  ],\n  \"per_rank\": {" : "],\n  \"per_rank\": {", out);
    /* Rows sorted by (region, rank), with each region's first position, so
     * every region lists its ranks ascending in one pass over its rows. */
    row_key *keys = malloc((rows + 1) * sizeof *keys);
    size_t *by_region = calloc(n + 2, sizeof *by_region);
    if (!keys || !by_region) {
        free(keys);
        free(by_region);
        free(per_row);
        free(lowest);
        free(e);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t r = 0; r < rows; r++) {
        keys[r].region = sp_results_row_region(res, r);
        keys[r].rank = sp_results_row_rank(res, r);
        keys[r].row = r;
        by_region[keys[r].region + 1]++;
    }
    qsort(keys, rows, sizeof *keys, cmp_row_key);
    for (size_t r = 0; r < n; r++) by_region[r + 1] += by_region[r];
    /* Per rank: the same keys for one rank alone, plus scope-inspect's
     * total_ns so the exact integer survives the trip through seconds. */
    for (size_t i = 0; i < count && !ferror(out); i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        cli_json_string(out, sp_results_region_name(res, e[i].region));
        fputs(": {", out);
        bool first = true;
        for (size_t k = by_region[e[i].region]; k < by_region[e[i].region + 1]; k++) {
            uint32_t rank = keys[k].rank;
            if (!rank_selected(a, rank) || (k > by_region[e[i].region] && keys[k - 1].rank == rank))
                continue;
            const sp_region_summary s = per_row[keys[k].row];
            fprintf(out, "%s\n      \"%u\": {\n        \"total_ns\": %lld", first ? "" : ",", rank,
                    (long long)s.total_ns);
            json_region_fields(out, "        ", &s);
            fputs("\n      }", out);
            first = false;
        }
        fputs(first ? "}" : "\n    }", out);
    }
    fputs(count ? "\n  }\n}\n" : "}\n}\n", out);
    free(keys);
    free(by_region);
    free(per_row);
    free(lowest);
    free(e);
    return SP_OK;
}

/* ---- main ------------------------------------------------------------------ */

/* The picture formats: lanes for the timelines, the flame tree (from the
 * lanes, or from the rows of an aggregate file) for folded and svg. */
static int write_view(FILE *out, const char *dir, const sp_results *res, const args *a,
                      const bool *region_on) {
    const uint32_t *ranks = a->rank_count ? a->ranks : NULL;
    view_lanes v;
    memset(&v, 0, sizeof v);
    int st = SP_OK;
    if (sp_results_has_events(res)) st = view_lanes_build(&v, res, ranks, a->rank_count, region_on);
    if (st == SP_OK && a->format == FORMAT_SPEEDSCOPE) {
        st = export_speedscope(out, &v);
    } else if (st == SP_OK && a->format == FORMAT_OTF2) {
        char msg[512] = "";
        st = export_otf2(dir, &v, msg, sizeof msg);
        if (st != SP_OK && st != SP_ERR_OUT_OF_MEMORY)
            fprintf(stderr, "scope-export: %s: %s\n", a->output, msg);
    } else if (st == SP_OK) {
        flame_tree t;
        st = sp_results_has_events(res)
                 ? flame_tree_from_lanes(&t, &v, a->per_rank)
                 : flame_tree_from_rows(&t, res, ranks, a->rank_count, region_on, a->per_rank);
        if (st == SP_OK) st = flame_tree_sort(&t);
        if (st == SP_OK && a->format == FORMAT_FOLDED) {
            uint64_t folded = 0;
            st = flame_write_folded(out, &t, &folded);
            if (st == SP_OK && folded)
                fprintf(stderr, "scope-export: %s: call paths deeper than %d frames: %llu deeper "
                                "nodes folded into \"%s\" frames at depth %d\n",
                        sp_results_path(res), FLAME_PRINT_MAX_DEPTH,
                        (unsigned long long)folded, FLAME_FOLDED_FRAME, FLAME_PRINT_MAX_DEPTH);
        } else if (st == SP_OK) {
            long label = sp_results_metadata_find(res, "label");
            const char *text = label >= 0 ? sp_results_metadata_string(res, (size_t)label) : NULL;
            size_t len = strlen(sp_results_path(res)) + (text ? strlen(text) : 0) + 32;
            char *title = malloc(len);
            if (!title) st = SP_ERR_OUT_OF_MEMORY;
            else {
                snprintf(title, len, "Flame graph: %s", text && text[0] ? text : sp_results_path(res));
                st = flamegraph_svg_write(out, &t, title, true);
                free(title);
            }
        }
        flame_tree_free(&t);
    }
    if (st != SP_OK && v.error[0]) {
        fprintf(stderr, "scope-export: %s\n", v.error);
        view_error_said = true;
    }
    if (v.clamped)
        fprintf(stderr, "scope-export: %s: %llu calls ended after their parent; cut at the "
                        "parent's end\n",
                sp_results_path(res), (unsigned long long)v.clamped);
    view_lanes_free(&v);
    return st;
}

int main(int argc, char **argv) {
    cli_isolate_start("scope-export");
    args a;
    memset(&a, 0, sizeof a);
    int rc = parse_args(&a, argc, argv);
    if (rc) {
        free_args(&a);
        return rc < 0 ? 0 : rc;
    }
    /* OUT must not be FILE: the rename would replace the profile with its
     * own export, and inputs are never modified. */
    if (strcmp(a.output, "-") != 0 && cli_same_file(a.input, a.output)) {
        free_args(&a);
        return cli_usage_error(TOOL, "the output '%s' is the input file", a.output);
    }
    if (a.format == FORMAT_OTF2 && !export_otf2_available()) {
        fprintf(stderr, "scope-export: --format otf2 was not built in (configured with "
                        "SCOPE_PROFILER_OTF2=OFF, or no OTF2 library was found: Debian "
                        "libopen-trace-format2-dev)\n");
        free_args(&a);
        return CLI_EXIT_OTHER;
    }

    char msg[1024];
    sp_results *res = NULL;
    /* calls stay in the file, read in slices: memory independent of its size */
    int st = cli_results_open(a.input, SP_RESULTS_CALLS_ON_DEMAND, &res, msg, sizeof msg);
    if (st != SP_OK) {
        /* The reader's messages name the file; say it once more only when
         * one does not. */
        if (strstr(msg, a.input)) fprintf(stderr, "scope-export: %s\n", msg);
        else fprintf(stderr, "scope-export: %s: %s\n", a.input, msg[0] ? msg : sp_error_string(st));
        free_args(&a);
        return CLI_EXIT_FILE;
    }
    if (needs_events(a.format) && !sp_results_has_events(res)) {
        fprintf(stderr,
                "scope-export: %s has no per-call events (%s); use --format json, folded or "
                "svg, which work from its totals (--format %s needs every call)\n",
                a.input, sp_results_is_aggregate(res) ? "aggregate layout" : "summary only",
                format_names[a.format]);
        sp_results_close(res);
        free_args(&a);
        return CLI_EXIT_FILE;
    }

    size_t regions = sp_results_region_count(res);
    bool *region_on = calloc(regions + 1, sizeof *region_on);
    if (!region_on) {
        fprintf(stderr, "scope-export: out of memory\n");
        sp_results_close(res);
        free_args(&a);
        return CLI_EXIT_OTHER;
    }
    for (size_t r = 0; r < regions; r++)
        region_on[r] = name_selected(&a, sp_results_region_name(res, r));

    cli_output out;
    rc = a.format == FORMAT_OTF2 ? cli_output_open_dir(&out, TOOL, a.output)
                                 : cli_output_open(&out, TOOL, a.output);
    if (rc == 0) {
        switch (a.format) {
        case FORMAT_CHROME: st = write_chrome(out.fp, res, &a, region_on); break;
        case FORMAT_CSV: st = write_csv(out.fp, res, &a, region_on); break;
        case FORMAT_JSON: st = write_json(out.fp, res, &a, region_on); break;
        default: st = write_view(out.fp, out.tmp, res, &a, region_on); break;
        }
        if (st != SP_OK) {
            if (st == SP_ERR_OUT_OF_MEMORY && !view_error_said)
                fprintf(stderr, "scope-export: out of memory\n");
            cli_output_abandon(&out);
            rc = cli_exit_code(st); /* a file that cannot be read back: 2 */
        } else {
            rc = cli_output_publish(&out);
        }
    }
    free(region_on);
    sp_results_close(res);
    free_args(&a);
    return rc;
}
