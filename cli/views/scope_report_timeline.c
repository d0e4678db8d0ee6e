/*
 * scope_report_timeline.c - the report's timeline: every (rank, thread)
 * lane, its calls drawn at their depth, on a canvas the reader zooms
 * (wheel), pans (drag) and resets (double-click); hover names a call.
 *
 * The calls travel as one JSON document inside the page (4 integers per
 * call: start from the file's origin, duration, depth, region). A page
 * must stay openable, so at most o->timeline_calls calls are written: when
 * the selection has more, the shortest calls are left out. The threshold
 * is a power of two chosen from a histogram of log2(duration), the
 * smallest one that keeps the count within the budget; it is stated on
 * the page. Kept calls keep their true depth, so the picture of the long
 * calls is exact and only detail below the threshold is missing (with
 * 250 000 calls the data is about 8 MB).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "report_html.h"
#include "scope_report.h"


typedef struct tl_ctx {
    FILE *out;
    const view_lanes *v;
    uint64_t threshold;
    unsigned max_depth;
    bool first;
    uint64_t written;
} tl_ctx;

static int on_open(void *p, const view_call *call, unsigned depth, int64_t start) {
    tl_ctx *c = p;
    /* Differences as uint64: a call at INT64_MIN and one at INT64_MAX are
     * 2^64 - 1 ns apart, more than an int64 holds. */
    uint64_t dur = view_span(start, call->end);
    if (dur < c->threshold) return 0;
    if (depth > c->max_depth) c->max_depth = depth;
    fprintf(c->out, "%s%" PRIu64 ",%" PRIu64 ",%u,%zu", c->first ? "" : ",",
            view_span(c->v->origin, start), dur, depth, view_call_region(c->v, call));
    c->first = false;
    c->written++;
    return ferror(c->out) ? SP_ERR_OUTPUT : 0;
}

static const char timeline_script[] =
    "<script>\n"
    "(function () {\n"
    "  var data = JSON.parse(document.getElementById('tl-data').textContent);\n"
    "  var cv = document.getElementById('tl'), g = cv.getContext('2d');\n"
    "  var tip = document.getElementById('tl-tip'), range = document.getElementById('tl-range');\n"
    "  var LABEL = 180, lanes = data.lanes, rows = 0;\n"
    "  lanes.forEach(function (l) { rows += l.depth + 1; });\n"
    "  var RH = rows <= 150 ? 14 : Math.max(3, Math.floor(2400 / rows));\n"
    "  var y = 0;\n"
    "  lanes.forEach(function (l) { l.y = y; l.h = (l.depth + 1) * RH + 4; y += l.h; });\n"
    "  var enc = new TextEncoder();\n"
    "  var colours = data.names.map(function (name) {\n"
    "    var h = 2166136261, b = enc.encode(name);\n"
    "    for (var i = 0; i < b.length; i++) h = Math.imul(h ^ b[i], 16777619) >>> 0;\n"
    "    return 'rgb(' + (205 + h % 50) + ',' + (80 + (h >>> 8) % 140) + ',' +\n"
    "           (40 + (h >>> 16) % 50) + ')';\n"
    "  });\n"
    "  var t0 = 0, t1 = Math.max(data.end, 1);\n"
    "  function unit(ns) {\n"
    "    var a = Math.abs(ns);\n"
    "    return a >= 1e9 ? (ns / 1e9).toFixed(3) + ' s' : a >= 1e6 ? (ns / 1e6).toFixed(3) +\n"
    "      ' ms' : a >= 1e3 ? (ns / 1e3).toFixed(3) + ' us' : Math.round(ns) + ' ns';\n"
    "  }\n"
    "  function resize() {\n"
    "    cv.width = Math.max(cv.parentNode.clientWidth - 2, 400);\n"
    "    cv.height = Math.max(y, 20);\n"
    "  }\n"
    "  function draw() {\n"
    "    var W = cv.width - LABEL, k = W / (t1 - t0);\n"
    "    g.clearRect(0, 0, cv.width, cv.height);\n"
    "    g.font = '11px sans-serif'; g.textBaseline = 'middle';\n"
    "    lanes.forEach(function (l, n) {\n"
    "      g.fillStyle = n % 2 ? '#f6f6f6' : '#ffffff';\n"
    "      g.fillRect(0, l.y, cv.width, l.h);\n"
    "      var c = l.calls;\n"
    "      for (var i = 0; i < c.length; i += 4) {\n"
    "        var s = c[i], e = s + c[i + 1];\n"
    "        if (e < t0 || s > t1) continue;\n"
    "        var x0 = LABEL + Math.max(s - t0, 0) * k, x1 = LABEL + Math.min(e - t0, t1 - t0) * k;\n"
    "        var w = Math.max(x1 - x0, 0.5), yy = l.y + 2 + c[i + 2] * RH;\n"
    "        g.fillStyle = colours[c[i + 3]];\n"
    "        g.fillRect(x0, yy, w, RH - 1);\n"
    "        if (w > 30 && RH >= 10) {\n"
    "          g.save(); g.beginPath(); g.rect(x0, yy, w, RH - 1); g.clip();\n"
    "          g.fillStyle = '#000'; g.fillText(data.names[c[i + 3]], x0 + 2, yy + RH / 2);\n"
    "          g.restore();\n"
    "        }\n"
    "      }\n"
    "      g.fillStyle = n % 2 ? '#eaeaea' : '#f2f2f2';\n"
    "      g.fillRect(0, l.y, LABEL - 4, l.h);\n"
    "      g.fillStyle = '#222';\n"
    "      g.fillText(l.name, 4, l.y + Math.min(l.h / 2, 9), LABEL - 10);\n"
    "    });\n"
    "    range.textContent = 'showing ' + unit(t0) + ' .. ' + unit(t1) + ' of ' + unit(data.end) +\n"
    "      ' (from the earliest start in the file)';\n"
    "  }\n"
    "  function timeAt(px) { return t0 + (px - LABEL) * (t1 - t0) / (cv.width - LABEL); }\n"
    "  cv.addEventListener('wheel', function (ev) {\n"
    "    if (ev.offsetX < LABEL) return;\n"
    "    ev.preventDefault();\n"
    "    var f = ev.deltaY < 0 ? 0.8 : 1.25, t = timeAt(ev.offsetX);\n"
    "    var n0 = t - (t - t0) * f, n1 = t + (t1 - t) * f;\n"
    "    if (n1 - n0 < 100) return;\n"
    "    t0 = n0; t1 = n1; draw();\n"
    "  }, {passive: false});\n"
    "  var drag = null;\n"
    "  cv.addEventListener('mousedown', function (ev) { drag = {x: ev.offsetX, t0: t0, t1: t1}; });\n"
    "  window.addEventListener('mouseup', function () { drag = null; });\n"
    "  cv.addEventListener('dblclick', function () { t0 = 0; t1 = Math.max(data.end, 1); draw(); });\n"
    "  cv.addEventListener('mousemove', function (ev) {\n"
    "    if (drag) {\n"
    "      var dt = (ev.offsetX - drag.x) * (drag.t1 - drag.t0) / (cv.width - LABEL);\n"
    "      t0 = drag.t0 - dt; t1 = drag.t1 - dt; draw(); return;\n"
    "    }\n"
    "    var hit = null, t = timeAt(ev.offsetX);\n"
    "    lanes.forEach(function (l) {\n"
    "      if (ev.offsetY < l.y || ev.offsetY >= l.y + l.h) return;\n"
    "      var d = Math.floor((ev.offsetY - l.y - 2) / RH), c = l.calls;\n"
    "      for (var i = 0; i < c.length; i += 4)\n"
    "        if (c[i + 2] === d && c[i] <= t && t <= c[i] + c[i + 1]) hit = [l, i];\n"
    "    });\n"
    "    if (!hit || ev.offsetX < LABEL) { tip.style.display = 'none'; return; }\n"
    "    var c = hit[0].calls, i = hit[1];\n"
    "    tip.textContent = data.names[c[i + 3]] + '\\n' + unit(c[i + 1]) + ' at ' + unit(c[i]) +\n"
    "      '\\n' + hit[0].name;\n"
    "    tip.style.left = (ev.offsetX + 12) + 'px'; tip.style.top = (ev.offsetY + 12) + 'px';\n"
    "    tip.style.display = 'block';\n"
    "  });\n"
    "  cv.addEventListener('mouseleave', function () { tip.style.display = 'none'; });\n"
    "  window.addEventListener('resize', function () { resize(); draw(); });\n"
    "  resize(); draw();\n"
    "})();\n"
    "</script>\n";

int report_timeline(FILE *out, view_lanes *v, const report_options *o) {
    const sp_results *res = v->res;
    const uint64_t *hist = v->duration_bins;
    uint64_t threshold = 0;
    if (v->call_count > o->timeline_calls) {
        uint64_t kept = 0;
        unsigned b = 65;
        while (b > 0 && kept + hist[b - 1] <= o->timeline_calls) kept += hist[--b];
        /* Bins b.. are kept: durations >= 2^(b-1) (bin 0 is duration 0). */
        threshold = b == 0 ? 0 : b > 64 ? UINT64_MAX : (uint64_t)1 << (b - 1);
    }
    char buf[48];
    fprintf(out, "<p class=\"note\" id=\"tl-note\">%zu lanes (rank / thread), %" PRIu64 " calls",
            v->lane_count, v->call_count);
    if (threshold > 0) {
        report_format_ns(buf, sizeof buf, (double)threshold);
        fprintf(out, "; only calls of at least %s are drawn (the page holds at most %" PRIu64
                     " calls; --timeline-calls changes it)",
                buf, o->timeline_calls);
    }
    fputs(". Wheel: zoom, drag: pan, double-click: reset.</p>\n<div id=\"tl-range\" "
          "class=\"note\"></div>\n<div id=\"tl-wrap\"><canvas id=\"tl\"></canvas><div "
          "id=\"tl-tip\"></div></div>\n<script type=\"application/json\" id=\"tl-data\">{\"end\":",
          out);
    fprintf(out, "%" PRIu64 ",\"threshold_ns\":%" PRIu64 ",\"names\":[",
            v->call_count ? view_span(v->origin, v->end_max) : 0, threshold);
    for (size_t r = 0; r < sp_results_region_count(res); r++) {
        if (r) fputc(',', out);
        cli_json_string_html(out, sp_results_region_name(res, r));
    }
    fputs("],\"lanes\":[", out);
    view_walk_callbacks cb = {on_open, NULL};
    for (size_t l = 0; l < v->lane_count; l++) {
        const view_lane *lane = &v->lanes[l];
        char name[96];
        view_lane_label(lane, name, sizeof name);
        fprintf(out, "%s\n{\"name\":\"%s\",\"calls\":[", l ? "," : "", name);
        tl_ctx c = {out, v, threshold, 0, true, 0};
        int rc = view_lanes_walk(v, l, &cb, &c);
        if (rc) return rc;
        fprintf(out, "],\"depth\":%u}", c.max_depth);
    }
    fputs("]}</script>\n", out);
    fputs(timeline_script, out);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
