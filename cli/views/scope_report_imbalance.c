/*
 * scope_report_imbalance.c - how evenly the ranks share the top regions.
 *
 * For each of the regions with the largest pooled total: the per-rank
 * totals (from the rows, so aggregate files work too) summarised as min,
 * mean and max over the ranks that ran the region. One horizontal bar per
 * region on a common scale: the max as a pale bar, the mean as a solid
 * bar inside it, the min as a dark tick. A long pale tail beyond the mean
 * is a rank that others wait for. Drawn as SVG by us: no chart library.
 */
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "report_html.h"
#include "scope_report.h"

enum { LABEL_W = 260, BAR_W = 520, ROW_H = 26, CHART_W = LABEL_W + BAR_W + 420 };
/* Characters of a label at 12px sans-serif (~7 px each) in LABEL_W - 16 px. */
enum { LABEL_CHARS = (LABEL_W - 16) / 7 };

typedef struct bar {
    size_t region;
    double total, min, mean, max;
    unsigned ranks;
} bar;

/* A label that fits its column: the name, or its first characters and an
 * ellipsis (cut on a character boundary, never inside UTF-8). The full
 * name stays in the row's <title> (the tooltip) and data-name. */
static void label_text(FILE *out, const char *name, size_t max_chars) {
    const unsigned char *p = (const unsigned char *)name;
    size_t i = 0, chars = 0, cut = 0;
    while (p[i]) {
        if (chars == max_chars - 1) cut = i;
        size_t k = cli_utf8_length(p + i);
        i += k ? k : 1;
        chars++;
    }
    if (chars <= max_chars) {
        cli_xml_string(out, name);
        return;
    }
    char *part = malloc(cut + 1);
    if (!part) return;
    memcpy(part, name, cut);
    part[cut] = '\0';
    cli_xml_string(out, part);
    fputs("\xe2\x80\xa6", out); /* ... */
    free(part);
}

static bool selected(const report_options *o, uint32_t rank) {
    if (!o->ranks || o->rank_count == 0) return true;
    for (size_t i = 0; i < o->rank_count; i++)
        if (o->ranks[i] == rank) return true;
    return false;
}

int report_imbalance(FILE *out, const sp_results *res, const report_options *o) {
    size_t n = sp_results_region_count(res);
    bar *b = calloc(n + 1, sizeof *b);
    if (!b) return SP_ERR_OUT_OF_MEMORY;
    for (size_t r = 0; r < n; r++) b[r].region = r;
    for (size_t row = 0; row < sp_results_row_count(res); row++) {
        if (!selected(o, sp_results_row_rank(res, row))) continue;
        sp_row_stats s;
        if (sp_results_row_stats(res, row, &s) != SP_OK || s.count == 0) continue;
        bar *x = &b[sp_results_row_region(res, row)];
        double t = (double)s.total;
        if (x->ranks == 0 || t < x->min) x->min = t;
        if (x->ranks == 0 || t > x->max) x->max = t;
        x->total += t;
        x->ranks++;
    }
    size_t count = 0;
    for (size_t r = 0; r < n; r++)
        if (b[r].ranks) {
            b[r].mean = b[r].total / b[r].ranks;
            b[count++] = b[r];
        }
    /* The top regions by pooled total (partial selection sort: top is small). */
    size_t top = count < o->top ? count : o->top;
    for (size_t i = 0; i < top; i++)
        for (size_t j = i + 1; j < count; j++)
            if (b[j].total > b[i].total) {
                bar tmp = b[i];
                b[i] = b[j];
                b[j] = tmp;
            }
    double scale_max = 0;
    for (size_t i = 0; i < top; i++)
        if (b[i].max > scale_max) scale_max = b[i].max;

    fprintf(out, "<h2 id=\"imbalance\">Rank imbalance</h2>\n<p class=\"note\">Per-rank totals of "
                 "the %zu regions with the largest total: pale bar = slowest rank (max), solid "
                 "bar = mean, dark tick = fastest rank (min), over the ranks that ran the "
                 "region.</p>\n",
            top);
    int height = (int)top * ROW_H + 30;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"imbalance-chart\" width=\"%d\" "
                 "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
                 "font-size=\"12\">\n",
            CHART_W, height, CHART_W, height);
    char smin[32], smean[32], smax[32];
    for (size_t i = 0; i < top; i++) {
        const bar *x = &b[i];
        int y = 10 + (int)i * ROW_H;
        double k = scale_max > 0 ? BAR_W / scale_max : 0;
        const char *name = sp_results_region_name(res, x->region);
        report_format_ns(smin, sizeof smin, x->min);
        report_format_ns(smean, sizeof smean, x->mean);
        report_format_ns(smax, sizeof smax, x->max);
        fputs("<g class=\"imb\" data-name=\"", out);
        cli_xml_string(out, name);
        fputs("\"><title>", out);
        cli_xml_string(out, name);
        fprintf(out, ": min %s, mean %s, max %s over %u ranks</title>\n", smin, smean, smax,
                x->ranks);
        /* Cut to its column with an ellipsis (a long name clipped at its
         * start lost what tells regions apart); the title has it whole. */
        fprintf(out, "<svg x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\"><text x=\"%d\" y=\"15\" "
                     "text-anchor=\"end\">",
                y, LABEL_W - 8, ROW_H, LABEL_W - 8);
        label_text(out, name, LABEL_CHARS);
        fputs("</text></svg>\n", out);
        fprintf(out,
                "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"18\" fill=\"#c9dcf0\"/>"
                "<rect x=\"%d\" y=\"%d\" width=\"%.2f\" height=\"18\" fill=\"#3b78b8\"/>"
                "<rect x=\"%.2f\" y=\"%d\" width=\"3\" height=\"22\" fill=\"#102a43\"/>"
                "<text x=\"%d\" y=\"%d\">min %s &#183; mean %s &#183; max %s (%u rank%s)</text>"
                "</g>\n",
                LABEL_W, y, x->max * k, LABEL_W, y, x->mean * k, LABEL_W + x->min * k - 1.5, y - 2,
                LABEL_W + BAR_W + 10, y + 14, smin, smean, smax, x->ranks, x->ranks == 1 ? "" : "s");
    }
    if (top == 0) fputs("<text x=\"10\" y=\"20\">no region has calls on the selected ranks</text>\n", out);
    fputs("</svg>\n", out);
    free(b);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
