/*
 * scope_report_page.c - scope-report's page: head and style, the run's
 * metadata, the region table, and the order of the sections.
 *
 * Text from the file (names, metadata, paths) reaches the page only
 * through cli_xml_string (element text and attribute values) or
 * cli_json_string_html (data inside <script>), so no name can open a tag
 * or end a script. Numbers in the table carry their raw value in data-v,
 * so sorting never parses formatted text.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "export_formats.h"
#include "flame_tree.h"
#include "report_comm.h"
#include "report_html.h"
#include "scope_profiler_summary.h"
#include "scope_report.h"

static const char style[] =
    "<style>\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:0 24px 40px;color:#222;background:#fff}\n"
    "h1{font-size:22px;margin:18px 0 4px}h2{font-size:17px;margin:28px 0 8px;"
    "border-bottom:1px solid #ddd}\n"
    ".sub{color:#666}.note{color:#666;font-size:12px}\n"
    "table{border-collapse:collapse;font-size:13px}\n"
    "td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "table.meta td:first-child{color:#555;white-space:nowrap}\n"
    "table.meta td{max-width:900px;overflow-wrap:anywhere;white-space:pre-wrap}\n"
    "table.sortable th{cursor:pointer;user-select:none;background:#f4f4f4}\n"
    "table.sortable th.asc::after{content:' \\25B2'}table.sortable th.desc::after{content:' \\25BC'}\n"
    "#summary td:first-child{white-space:pre-wrap;overflow-wrap:anywhere;max-width:420px}\n"
    "svg{max-width:100%;height:auto}\n"
    "#tl-wrap{position:relative;border:1px solid #ccc;overflow-y:auto;max-height:720px}\n"
    "#tl-tip{position:absolute;pointer-events:none;background:#ffd;border:1px solid #aa8;"
    "padding:2px 6px;font-size:12px;display:none;white-space:pre;z-index:2}\n"
    "</style>\n";

/* Click a header to sort by it; numbers by data-v, text by content. */
static const char table_script[] =
    "<script>\n"
    "(function () {\n"
    "  document.querySelectorAll('table.sortable').forEach(function (table) {\n"
    "    var heads = table.querySelectorAll('th');\n"
    "    heads.forEach(function (th, col) {\n"
    "      th.addEventListener('click', function () {\n"
    "        var desc = !th.classList.contains('desc');\n"
    "        heads.forEach(function (h) { h.classList.remove('asc', 'desc'); });\n"
    "        th.classList.add(desc ? 'desc' : 'asc');\n"
    "        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);\n"
    "        var num = th.classList.contains('n');\n"
    "        rows.sort(function (a, b) {\n"
    "          var x = a.cells[col], y = b.cells[col], c;\n"
    "          if (num) c = (+x.getAttribute('data-v')) - (+y.getAttribute('data-v'));\n"
    "          else c = x.textContent.localeCompare(y.textContent);\n"
    "          return desc ? -c : c;\n"
    "        });\n"
    "        rows.forEach(function (r) { body.appendChild(r); });\n"
    "      });\n"
    "    });\n"
    "  });\n"
    "})();\n"
    "</script>\n";

static void metadata_table(FILE *out, const sp_results *res) {
    size_t n = sp_results_metadata_count(res);
    fputs("<h2 id=\"run\">Run</h2>\n<table class=\"meta\" id=\"metadata\">\n<tr><td>file</td><td>",
          out);
    cli_xml_string(out, sp_results_path(res));
    fprintf(out, "</td></tr>\n<tr><td>format</td><td>%s, %s</td></tr>\n<tr><td>ranks</td><td>%u"
                 "</td></tr>\n",
            sp_results_format_kind(res) == SP_RESULTS_FORMAT_TRACE ? "native .spt trace"
                                                                    : "HDF5 profile",
            sp_results_has_events(res)    ? "per-call events"
            : sp_results_is_aggregate(res) ? "aggregate layout (totals per rank and region)"
                                           : "summary only",
            sp_results_rank_count(res));
    for (size_t i = 0; i < n; i++) {
        fputs("<tr><td>", out);
        cli_xml_string(out, sp_results_metadata_key(res, i));
        fputs("</td><td>", out);
        int64_t iv;
        double dv;
        switch (sp_results_metadata_kind(res, i)) {
        case SP_META_KIND_STRING: cli_xml_string(out, sp_results_metadata_string(res, i)); break;
        case SP_META_KIND_INT:
            if (sp_results_metadata_int(res, i, &iv) == SP_OK) fprintf(out, "%" PRId64, iv);
            break;
        case SP_META_KIND_BOOL:
            if (sp_results_metadata_int(res, i, &iv) == SP_OK) fputs(iv ? "true" : "false", out);
            break;
        case SP_META_KIND_DOUBLE:
            if (sp_results_metadata_double(res, i, &dv) == SP_OK) fprintf(out, "%.10g", dv);
            break;
        case SP_META_KIND_STRING_ARRAY:
            for (size_t k = 0; k < sp_results_metadata_array_length(res, i); k++) {
                if (k) fputs(", ", out);
                cli_xml_string(out, sp_results_metadata_array_item(res, i, k));
            }
            break;
        default: break;
        }
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

static bool rank_selected(const report_options *o, uint32_t rank) {
    if (!o->ranks || o->rank_count == 0) return true;
    for (size_t i = 0; i < o->rank_count; i++)
        if (o->ranks[i] == rank) return true;
    return false;
}

/* The file each region is defined in, from its lowest selected rank's row,
 * for every region in one pass over the rows (one scan per region was
 * regions x rows). A merged file keeps each input's source columns, so
 * this is also the way to tell which input (Python driver, Fortran
 * kernel, ...) a region came from: merge records no per-region input file
 * of its own. sources[r] is NULL when no selected row names a file. */
static void region_sources(const sp_results *res, const report_options *o, const char **sources,
                           uint32_t *best_rank) {
    size_t n = sp_results_region_count(res);
    for (size_t g = 0; g < n; g++) {
        sources[g] = NULL;
        best_rank[g] = UINT32_MAX;
    }
    for (size_t r = 0; r < sp_results_row_count(res); r++) {
        size_t g = sp_results_row_region(res, r);
        uint32_t rank = sp_results_row_rank(res, r);
        const char *file = sp_results_row_source_file(res, r);
        if (g < n && file && file[0] && rank_selected(o, rank) && rank < best_rank[g]) {
            sources[g] = file;
            best_rank[g] = rank;
        }
    }
}

/* The session time of the selected ranks: for each rank, its latest end
 * minus its earliest start over its rows, summed over the ranks. The
 * "% session" column measures a region's pooled total against it, so a
 * native file (no scope_profiler.session region, whose summary shows "-")
 * gets the share of the time its ranks recorded. 0 when no row knows its
 * times (an aggregate file without call paths). Memory: one span per
 * row's rank, found by a sort of the rows' (rank, start, end). */
typedef struct rank_span {
    uint32_t rank;
    int64_t start, end;
} rank_span;

static int cmp_rank_span(const void *pa, const void *pb) {
    const rank_span *a = pa, *b = pb;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int session_ns(const sp_results *res, const report_options *o, double *out) {
    size_t rows = sp_results_row_count(res), n = 0;
    rank_span *spans = malloc((rows + 1) * sizeof *spans);
    if (!spans) return SP_ERR_OUT_OF_MEMORY;
    for (size_t r = 0; r < rows; r++) {
        sp_row_stats s;
        uint32_t rank = sp_results_row_rank(res, r);
        if (!rank_selected(o, rank) || sp_results_row_stats(res, r, &s) != SP_OK ||
            s.count == 0 || s.end_maximum <= s.start_minimum)
            continue;
        spans[n++] = (rank_span){rank, s.start_minimum, s.end_maximum};
    }
    qsort(spans, n, sizeof *spans, cmp_rank_span);
    double total = 0;
    for (size_t i = 0; i < n;) {
        int64_t start = spans[i].start, end = spans[i].end;
        size_t j = i + 1;
        for (; j < n && spans[j].rank == spans[i].rank; j++) {
            if (spans[j].start < start) start = spans[j].start;
            if (spans[j].end > end) end = spans[j].end;
        }
        total += (double)((uint64_t)end - (uint64_t)start);
        i = j;
    }
    free(spans);
    *out = total;
    return SP_OK;
}

static void cell_ns(FILE *out, double ns, bool available) {
    char buf[48];
    if (!available) {
        fputs("<td class=\"n\" data-v=\"-1\">-</td>", out);
        return;
    }
    report_format_ns(buf, sizeof buf, ns);
    fprintf(out, "<td class=\"n\" data-v=\"%.17g\">%s</td>", ns, buf);
}

typedef struct entry {
    size_t region;
    sp_region_summary s;
} entry;

/* Largest total first; equal totals keep the region table's order (qsort
 * is not stable, so the region index breaks the tie). */
static int cmp_entry_total(const void *pa, const void *pb) {
    const entry *a = pa, *b = pb;
    if (a->s.total_ns != b->s.total_ns) return a->s.total_ns > b->s.total_ns ? -1 : 1;
    return (a->region > b->region) - (a->region < b->region);
}

static int summary_table(FILE *out, const sp_results *res, const report_options *o, char *why,
                         size_t why_len) {
    size_t n = sp_results_region_count(res);
    bool any_source = false;
    for (size_t r = 0; r < sp_results_row_count(res) && !any_source; r++) {
        const char *f = sp_results_row_source_file(res, r);
        any_source = f && f[0];
    }
    char msg[512], warning[512] = "";
    fputs("<h2 id=\"regions\">Regions</h2>\n<table class=\"sortable\" id=\"summary\">\n<thead><tr>"
          "<th>region</th>",
          out);
    if (any_source) fputs("<th>defined in</th>", out);
    fputs("<th class=\"n\">ranks</th><th class=\"n\">calls</th><th class=\"n desc\">total</th>"
          "<th class=\"n\" title=\"pooled total over the selected ranks' recorded time (each "
          "rank's latest end minus its earliest start, summed)\">% session</th>"
          "<th class=\"n\">exclusive</th><th class=\"n\">average</th><th class=\"n\">min</th>"
          "<th class=\"n\">max</th><th class=\"n\">p95</th><th class=\"n\">imbalance %</th>"
          "</tr></thead>\n<tbody>\n",
          out);
    /* Every region's statistics in one call (one sp_summary_region per
     * region scanned the file each time), then largest total first: the
     * page opens on what matters. */
    sp_region_summary *all = calloc(n + 1, sizeof *all);
    entry *e = calloc(n + 1, sizeof *e);
    const char **sources = any_source ? calloc(n + 1, sizeof *sources) : NULL;
    uint32_t *source_rank = any_source ? calloc(n + 1, sizeof *source_rank) : NULL;
    if (!all || !e || (any_source && (!sources || !source_rank))) {
        free(all);
        free(e);
        free(sources);
        free(source_rank);
        return SP_ERR_OUT_OF_MEMORY;
    }
    size_t count = 0;
    int st = sp_summary_regions(res, o->ranks, o->rank_count, all, msg, sizeof msg);
    if (st == SP_ERR_NESTING) snprintf(warning, sizeof warning, "%s", msg);
    else if (st != SP_OK) {
        snprintf(why, why_len, "%s", msg);
        free(all);
        free(e);
        free(sources);
        free(source_rank);
        return st;
    }
    double session = 0;
    st = session_ns(res, o, &session);
    if (st != SP_OK) {
        free(all);
        free(e);
        free(sources);
        free(source_rank);
        return st;
    }
    for (size_t r = 0; r < n; r++) {
        if (all[r].num_ranks == 0) continue;
        e[count].region = r;
        e[count++].s = all[r];
    }
    free(all);
    if (any_source) region_sources(res, o, sources, source_rank);
    qsort(e, count, sizeof *e, cmp_entry_total);
    for (size_t i = 0; i < count; i++) {
        const sp_region_summary *s = &e[i].s;
        fputs("<tr><td>", out);
        cli_xml_string(out, sp_results_region_name(res, e[i].region));
        fputs("</td>", out);
        if (any_source) {
            fputs("<td>", out);
            cli_xml_string(out, sources[e[i].region]);
            fputs("</td>", out);
        }
        fprintf(out, "<td class=\"n\" data-v=\"%u\">%u</td><td class=\"n\" data-v=\"%" PRIu64
                     "\">%" PRIu64 "</td>",
                s->num_ranks, s->num_ranks, s->calls, s->calls);
        cell_ns(out, (double)s->total_ns, true);
        if (session > 0) {
            double pct = 100.0 * (double)s->total_ns / session;
            fprintf(out, "<td class=\"n\" data-v=\"%.17g\">%.2f</td>", pct, pct);
        } else {
            fputs("<td class=\"n\" data-v=\"-1\">-</td>", out);
        }
        cell_ns(out, (double)s->exclusive_ns, s->available & SP_STAT_EXCLUSIVE);
        cell_ns(out, s->average_ns, true);
        cell_ns(out, (double)s->min_ns, s->available & SP_STAT_MIN_MAX);
        cell_ns(out, (double)s->max_ns, s->available & SP_STAT_MIN_MAX);
        cell_ns(out, s->p95_ns, s->available & SP_STAT_PERCENTILES);
        fprintf(out, "<td class=\"n\" data-v=\"%.17g\">%.2f</td></tr>\n", s->rank_imbalance_pct,
                s->rank_imbalance_pct);
    }
    fputs("</tbody></table>\n", out);
    if (warning[0]) {
        fputs("<p class=\"note\">Exclusive times unavailable: ", out);
        cli_xml_string(out, warning);
        fputs("</p>\n", out);
    }
    if (!sp_results_has_events(res))
        fputs("<p class=\"note\">This file stores totals per rank and region, not single calls: "
              "no percentiles, call paths or timeline.</p>\n",
              out);
    free(e);
    free(sources);
    free(source_rank);
    return SP_OK;
}

int report_write(FILE *out, const sp_results *res, const report_options *o, char *why,
                 size_t why_len) {
    long label = sp_results_metadata_find(res, "label");
    const char *text = label >= 0 ? sp_results_metadata_string(res, (size_t)label) : NULL;
    const char *title = o->title ? o->title : text && text[0] ? text : sp_results_path(res);

    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"generator\" content=\"scope-report " SCOPE_PROFILER_VERSION "\">\n<title>",
          out);
    cli_xml_string(out, title);
    fputs(" - scope-profiler report</title>\n", out);
    fputs(style, out);
    fputs("</head>\n<body>\n<h1>", out);
    cli_xml_string(out, title);
    fputs("</h1>\n<div class=\"sub\">scope-profiler report of <code>", out);
    cli_xml_string(out, sp_results_path(res));
    fputs("</code> &middot; <a href=\"#regions\">regions</a> &middot; <a href=\"#flame\">flame "
          "graph</a> &middot; <a href=\"#imbalance\">imbalance</a> &middot; <a "
          "href=\"#timeline\">timeline</a></div>\n",
          out);

    metadata_table(out, res);
    int st = summary_table(out, res, o, why, why_len);

    view_lanes v;
    memset(&v, 0, sizeof v);
    if (st == SP_OK && sp_results_has_events(res))
        st = view_lanes_build(&v, res, o->ranks, o->rank_count, NULL);
    if (st == SP_OK) {
        fputs("<h2 id=\"flame\">Flame graph</h2>\n<p class=\"note\">Width = time, pooled over the "
              "selected ranks and threads; hover for time and share, click to zoom, click the "
              "root to reset.</p>\n",
              out);
        flame_tree t;
        st = sp_results_has_events(res)
                 ? flame_tree_from_lanes(&t, &v, false)
                 : flame_tree_from_rows(&t, res, o->ranks, o->rank_count, NULL, false);
        if (st == SP_OK) st = flame_tree_sort(&t);
        if (st == SP_OK) st = flamegraph_svg_write(out, &t, "all ranks and threads", false);
        flame_tree_free(&t);
    }
    if (st == SP_OK) st = report_imbalance(out, res, o);
    if (st == SP_OK) st = report_comm(out, res, o->ranks, o->rank_count);
    if (st == SP_OK) {
        fputs("<h2 id=\"timeline\">Timeline</h2>\n", out);
        if (sp_results_has_events(res))
            st = report_timeline(out, &v, o);
        else
            fputs("<p class=\"note\" id=\"tl-none\">No timeline: this file has no per-call "
                  "events (aggregate layout or summary only).</p>\n",
                  out);
    }
    if (st != SP_OK && v.error[0] && !why[0]) snprintf(why, why_len, "%s", v.error);
    view_lanes_free(&v);
    if (st != SP_OK) return st;
    fputs(table_script, out);
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
