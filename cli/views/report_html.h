/*
 * report_html.h - what the sections of scope-report's page share below
 * them: today the one number format of every table, label and note.
 *
 * It is its own unit so the page (scope_report_page.c) can call the
 * sections (scope_report_imbalance.c, scope_report_timeline.c) without
 * the sections calling back into the page: page -> sections, and all
 * three -> report_html, nothing pointing back up.
 */
#ifndef SP_CLI_REPORT_HTML_H
#define SP_CLI_REPORT_HTML_H

#include <stddef.h>

/* Seconds with a unit that fits, for tables and labels. */
void report_format_ns(char *buf, size_t len, double ns);

#endif /* SP_CLI_REPORT_HTML_H */
