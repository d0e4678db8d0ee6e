/*
 * report_html.c - the helpers the report's sections share (report_html.h):
 * kept apart from the page so the sections depend on it, never on the
 * page that calls them.
 */
#include <math.h>
#include <stdio.h>

#include "report_html.h"

void report_format_ns(char *buf, size_t len, double ns) {
    double a = fabs(ns);
    if (a >= 1e9) snprintf(buf, len, "%.3f s", ns / 1e9);
    else if (a >= 1e6) snprintf(buf, len, "%.3f ms", ns / 1e6);
    else if (a >= 1e3) snprintf(buf, len, "%.3f us", ns / 1e3);
    else snprintf(buf, len, "%.0f ns", ns);
}
