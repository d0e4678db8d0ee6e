/*
 * flamegraph_svg.c - an interactive flame graph as one SVG, written by us.
 *
 * The graph is drawn in final positions (it renders without script, e.g.
 * in an image viewer); the inline script only adds behaviour: hover shows
 * a frame's name, time and share in the details line, a click zooms to the
 * frame (its subtree spans the width, its ancestors stay as full-width
 * bars), a click on the root resets. Each frame carries its position as a
 * fraction of the root (data-x, data-w) so zooming is arithmetic on
 * attributes, and its full name (data-n) so labels can be re-cut.
 *
 * Frames narrower than 1/5000 of the root (a quarter pixel at the default
 * width) are left out with their subtrees: they cannot be seen or
 * clicked, and a tree of millions of distinct paths must not become a
 * file of millions of elements. Their time stays inside their parent.
 *
 * Frames deeper than FLAME_PRINT_MAX_DEPTH levels are left out as well
 * (their time stays inside their ancestor at that depth), and the hint
 * line says how many: a recursion 10^6 calls deep would otherwise draw a
 * picture 17 million pixels tall (~300 MB of SVG) that no viewer opens.
 *
 * Every name goes through cli_xml_string (escaped, invalid UTF-8 as
 * U+FFFD), the only way text from the profile reaches the document.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "export_formats.h"

enum { SVG_WIDTH = 1200, FRAME_H = 17, PAD = 10, TOP = 44, MIN_FRACTION_INV = 5000 };

static void format_ns(char *buf, size_t len, int64_t ns) {
    double v = (double)ns;
    if (ns >= 1000000000) snprintf(buf, len, "%.3f s", v / 1e9);
    else if (ns >= 1000000) snprintf(buf, len, "%.3f ms", v / 1e6);
    else if (ns >= 1000) snprintf(buf, len, "%.3f us", v / 1e3);
    else snprintf(buf, len, "%lld ns", (long long)ns);
}

/* Warm colours from the name, so one region has one colour everywhere. */
static void frame_colour(const char *name, char *buf, size_t len) {
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
    snprintf(buf, len, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 140, 40 + (h >> 16) % 50);
}

/* The label that fits into width px at ~7 px per character. */
static void frame_text(FILE *out, const char *name, double width) {
    size_t fit = width > 6 ? (size_t)((width - 6) / 7) : 0;
    size_t n = strlen(name);
    if (fit < 3) return;
    if (n <= fit) {
        cli_xml_string(out, name);
        return;
    }
    /* Cut on a character boundary, never inside a UTF-8 sequence. */
    size_t cut = fit - 2, i = 0;
    char *part = malloc(cut * 4 + 1);
    if (!part) return;
    const unsigned char *p = (const unsigned char *)name;
    size_t chars = 0;
    while (p[i] && chars < cut) {
        size_t k = cli_utf8_length(p + i);
        i += k ? k : 1;
        chars++;
    }
    memcpy(part, name, i);
    part[i] = '\0';
    cli_xml_string(out, part);
    fputs("..", out);
    free(part);
}

/* width * MIN_FRACTION_INV < total, without the product (it overflows
 * for widths near INT64_MAX): exact for total > 0. */
static bool too_narrow(int64_t width, int64_t total) {
    return width <= (total - 1) / MIN_FRACTION_INV;
}

static const char script[] =
    "<script><![CDATA[\n"
    "(function () {\n"
    "  var s = document.currentScript;\n"
    "  var svg = (s && s.closest) ? s.closest('svg') : null;\n"
    "  if (!svg) return;\n"
    "  var W = +svg.getAttribute('data-width'), P = +svg.getAttribute('data-pad');\n"
    "  var frames = Array.prototype.slice.call(svg.querySelectorAll('g.fr'));\n"
    "  var det = svg.querySelector('text.det');\n"
    "  function cut(name, px) {\n"
    "    var fit = Math.floor((px - 6) / 7), chars = Array.from(name);\n"
    "    if (fit < 3) return '';\n"
    "    return chars.length <= fit ? name : chars.slice(0, fit - 2).join('') + '..';\n"
    "  }\n"
    "  function place(f, nx, nw) {\n"
    "    var r = f.querySelector('rect'), t = f.querySelector('text');\n"
    "    var px = P + nx * (W - 2 * P), pw = nw * (W - 2 * P);\n"
    "    r.setAttribute('x', px.toFixed(2));\n"
    "    r.setAttribute('width', Math.max(pw - 0.5, 0.1).toFixed(2));\n"
    "    t.setAttribute('x', (px + 3).toFixed(2));\n"
    "    t.textContent = cut(f.getAttribute('data-n'), pw);\n"
    "  }\n"
    "  function zoom(g) {\n"
    "    var x0 = +g.getAttribute('data-x'), w0 = +g.getAttribute('data-w');\n"
    "    var d0 = +g.getAttribute('data-d'), eps = 1e-9;\n"
    "    frames.forEach(function (f) {\n"
    "      var x = +f.getAttribute('data-x'), w = +f.getAttribute('data-w');\n"
    "      var d = +f.getAttribute('data-d');\n"
    "      if (d >= d0 && x >= x0 - eps && x + w <= x0 + w0 + eps) {\n"
    "        f.style.display = ''; f.style.opacity = '';\n"
    "        place(f, (x - x0) / w0, w / w0);\n"
    "      } else if (d < d0 && x <= x0 + eps && x + w >= x0 + w0 - eps) {\n"
    "        f.style.display = ''; f.style.opacity = '0.6';\n"
    "        place(f, 0, 1);\n"
    "      } else {\n"
    "        f.style.display = 'none';\n"
    "      }\n"
    "    });\n"
    "  }\n"
    "  frames.forEach(function (f) {\n"
    "    f.addEventListener('mouseover', function () {\n"
    "      det.textContent = f.getAttribute('data-info');\n"
    "    });\n"
    "    f.addEventListener('mouseout', function () { det.textContent = ' '; });\n"
    "    f.addEventListener('click', function () { zoom(f); });\n"
    "  });\n"
    "})();\n"
    "]]></script>\n";

int flamegraph_svg_write(FILE *out, const flame_tree *t, const char *title, bool standalone) {
    const flame_node *nodes = t->nodes;
    /* Drawn widths: a frame is at least as wide as its children together.
     * Lanes of one rank run side by side, so children pooled from several
     * threads under one parent can add up to more than the parent's own
     * time; the picture must still nest. Children have larger indices than
     * their parents, so one backward pass sums them. */
    int64_t *wide = calloc(t->count + 1, sizeof *wide);
    int64_t *x = calloc(t->count + 1, sizeof *x);
    if (!wide || !x) {
        free(wide);
        free(x);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t n = t->count; n-- > 0;) {
        int64_t sum = 0;
        for (uint32_t c = nodes[n].first_child; c != FLAME_NONE; c = nodes[c].next_sibling)
            sum = flame_add(sum, wide[c]);
        wide[n] = nodes[n].total_ns > sum ? nodes[n].total_ns : sum;
    }
    int64_t total = wide[0];
    /* Offsets in ns: a child starts where its previous sibling ended. */
    for (size_t n = 0; n < t->count; n++) {
        int64_t pos = x[n];
        for (uint32_t c = nodes[n].first_child; c != FLAME_NONE; c = nodes[c].next_sibling) {
            x[c] = pos;
            pos = flame_add(pos, wide[c]);
        }
    }
    uint32_t depth_shown = 0;
    uint64_t too_deep = 0;
    for (size_t n = 0; n < t->count; n++) {
        if (total <= 0 || too_narrow(wide[n], total)) continue;
        if (nodes[n].depth > FLAME_PRINT_MAX_DEPTH) too_deep++;
        else if (nodes[n].depth > depth_shown) depth_shown = nodes[n].depth;
    }
    int height = TOP + (int)(depth_shown + 1) * FRAME_H + PAD;
    double span = SVG_WIDTH - 2 * PAD;

    if (standalone) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flamegraph\" version=\"1.1\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" data-width=\"%d\" data-pad=\"%d\">\n",
            SVG_WIDTH, height, SVG_WIDTH, height, SVG_WIDTH, PAD);
    fputs("<style>.fr{cursor:pointer}.fr text{font:12px monospace;pointer-events:none}"
          ".fr:hover rect{stroke:#000;stroke-width:0.5}"
          "text.ttl{font:bold 16px sans-serif}text.det{font:12px monospace}"
          "text.hint{font:11px sans-serif;fill:#555}</style>\n",
          out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fdfdf6\"/>\n",
            SVG_WIDTH, height);
    fprintf(out, "<text class=\"ttl\" x=\"%d\" y=\"20\" text-anchor=\"middle\">", SVG_WIDTH / 2);
    cli_xml_string(out, title);
    fprintf(out, "</text>\n<text class=\"hint\" x=\"%d\" y=\"20\">%s", PAD,
            t->from_aggregate ? "aggregate file: regions by exclusive time, no call paths"
                              : "click a frame to zoom, the root to reset");
    if (too_deep)
        fprintf(out, "; %" PRIu64 " frames deeper than %d levels not drawn", too_deep,
                FLAME_PRINT_MAX_DEPTH);
    fputs("</text>\n", out);
    fprintf(out, "<text class=\"det\" x=\"%d\" y=\"38\"> </text>\n", PAD);

    char colour[32], tbuf[32], nbuf[64];
    for (size_t n = 0; n < t->count && total > 0; n++) {
        const flame_node *node = &nodes[n];
        if (too_narrow(wide[n], total) || node->depth > FLAME_PRINT_MAX_DEPTH)
            continue;
        /* A visible frame's ancestors are at least as wide: all visible. */
        const char *name = flame_node_label(t, n, nbuf, sizeof nbuf);
        double fx = (double)x[n] / (double)total, fw = (double)wide[n] / (double)total;
        double share = (double)node->total_ns / (double)total;
        double px = PAD + fx * span, pw = fw * span;
        int y = TOP + (int)(depth_shown - node->depth) * FRAME_H;
        format_ns(tbuf, sizeof tbuf, node->total_ns);
        fprintf(out, "<g class=\"fr\" data-x=\"%.12g\" data-w=\"%.12g\" data-d=\"%u\" data-n=\"",
                fx, fw, node->depth);
        cli_xml_string(out, name);
        fputs("\" data-info=\"", out);
        cli_xml_string(out, name);
        /* Artificial frames (the root, ranks) have no calls of their own. */
        char calls[40] = "";
        if (node->key >= 0) snprintf(calls, sizeof calls, ", %" PRIu64 " calls", node->calls);
        fprintf(out, " \xe2\x80\x94 %s (%.2f%%)%s\"><title>", tbuf, 100.0 * share, calls);
        cli_xml_string(out, name);
        fprintf(out, " \xe2\x80\x94 %s (%.2f%%)%s</title>", tbuf, 100.0 * share, calls);
        frame_colour(name, colour, sizeof colour);
        fprintf(out,
                "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" rx=\"2\" fill=\"%s\"/>"
                "<text x=\"%.2f\" y=\"%d\">",
                px, y, pw > 0.6 ? pw - 0.5 : 0.1, FRAME_H - 1, n == 0 ? "rgb(200,200,200)" : colour,
                px + 3, y + FRAME_H - 5);
        frame_text(out, name, pw);
        fputs("</text></g>\n", out);
    }
    if (total <= 0)
        fprintf(out, "<text x=\"%d\" y=\"%d\">no time recorded in the selection</text>\n", PAD,
                TOP + 12);
    fputs(script, out);
    fputs("</svg>\n", out);
    free(x);
    free(wide);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
