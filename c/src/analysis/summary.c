/*
 * summary.c - the summary table of FORMAT.md 7.5 as text, and its entry
 * point spi_summary_print. What the table holds (rows, percentages,
 * columns, order, "(own)" lines) is built by summary_table.c; this file
 * only lays it out and writes it to the stream, and nothing there prints.
 *
 * Layout: a rounded box, the region column (tree glyphs and the name),
 * then value columns. The tree lives only in the region column, padded to
 * one width, so every number sits under its header whatever the depth;
 * numbers are right-aligned and each column has one format for every row
 * (durations of calls in seconds, %.3e; totals in seconds, %.6f; counts as
 * exact integers, as in every other view). Region names are printed
 * escaped (control bytes, ANSI escapes and invalid UTF-8 as \xNN), so a
 * name cannot redraw the terminal, and cut to SUMMARY_NAME_COLUMNS columns
 * with a marker ("\u2026", ASCII "..."): the table's width follows the
 * tree and the numbers, not the longest name (one 100 KB name among 10^4
 * regions would otherwise pad every row to 100 KB; JSON and CSV print
 * names whole). Rows deeper than SPI_SUMMARY_MAX_DEPTH
 * levels are not printed (pathological recursion such as a > b > a > ...
 * would otherwise print depth^2 characters); a footer says how many were
 * left out. ASCII replaces every box and tree glyph by one of the same
 * width, so both styles align identically.
 *
 * Several ranks get a caption above the table naming the ranks and what
 * every column means (the columns themselves: top of summary_table.c).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "analysis/summary.h"
#include "analysis/summary_table.h"
#include "util/text.h"

/* ---- rendering ------------------------------------------------------------- */

/* Most columns of a region name in the table; a longer one is cut and ends
 * in the glyphs' `cut` marker. */
#define SUMMARY_NAME_COLUMNS 60

typedef struct glyphs {
    const char *tl, *tr, *bl, *br, *h, *v, *lt, *rt, *branch, *pipe, *rec, *cut;
} glyphs;

static const glyphs unicode_glyphs = {"\u256d", "\u256e", "\u2570", "\u256f", "\u2500",
                                      "\u2502", "\u251c", "\u2524", "\u2514\u2500 ", "\u2502 ",
                                      " \u21bb", "\u2026"};
static const glyphs ascii_glyphs = {"+", "+", "+", "+", "-", "|", "+", "+", "`- ", "| ", " (rec)",
                                    "..."};

/* Display width: one column per code point (the glyphs used are narrow,
 * and names are escaped before they get here). */
static size_t text_width(const char *s) {
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

static void format_cell(char *buf, size_t len, spi_summary_format fmt, double value) {
    switch (fmt) {
    case SPI_SUMMARY_FMT_TOTAL: snprintf(buf, len, "%.6f", value / 1e9); break;
    case SPI_SUMMARY_FMT_SCI: snprintf(buf, len, "%.3e", value / 1e9); break;
    case SPI_SUMMARY_FMT_PCT: snprintf(buf, len, "%.1f%%", value); break;
    case SPI_SUMMARY_FMT_IMB: snprintf(buf, len, "%.2f", value); break;
    case SPI_SUMMARY_FMT_INT: snprintf(buf, len, "%.0f", value); break;
    }
}

static void put_repeat(FILE *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) fputs(s, out);
}

static void put_padded(FILE *out, const char *s, size_t width, bool right) {
    size_t w = text_width(s);
    if (right && w < width) put_repeat(out, " ", width - w);
    fputs(s, out);
    if (!right && w < width) put_repeat(out, " ", width - w);
}

static bool want_unicode(const spi_summary_options *o, FILE *out) {
    if (o->style == SPI_SUMMARY_STYLE_ASCII) return false;
    if (o->style == SPI_SUMMARY_STYLE_UNICODE) return true;
    int fd = fileno(out);
    if (fd < 0 || !isatty(fd)) return false;
    /* The first of LC_ALL, LC_CTYPE, LANG that is set decides the charset. */
    const char *vars[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") ||
                            strstr(v, "utf8");
    }
    return false;
}

typedef struct render {
    FILE *out;
    const glyphs *g;
    const spi_summary_table *t;  /* the columns: t->cols[0..t->col_count) */
    char **cells;       /* [line_cap * t->col_count] */
    size_t line_count, line_cap;
} render;

/* Bytes of the escaped name `text` (`len` bytes) that fit `columns`
 * columns together with the cut marker (`marker_columns` wide): whole code
 * points, so a cut never splits a character. len when it fits whole. */
static size_t fitting_bytes(const char *text, size_t len, size_t columns, size_t marker_columns) {
    if (text_width(text) <= columns) return len;
    size_t keep = columns > marker_columns ? columns - marker_columns : 0, seen = 0, i = 0;
    for (; i < len; i++) {
        if (((unsigned char)text[i] & 0xC0) != 0x80 && seen++ == keep) break;
    }
    return i;
}

/* The region cell: tree glyphs for `depth` levels (at most
 * SPI_SUMMARY_MAX_DEPTH + 1 of them), the escaped name cut to
 * SUMMARY_NAME_COLUMNS, the recursion mark and the calls when they have no
 * column: a cell is bounded whatever the file holds. */
static char *region_cell(const render *r, const spi_summary_row *row, int depth) {
    const glyphs *g = r->g;
    const char *name = row->own ? "(own)" : row->name ? row->name : "";
    size_t escaped_len = spi_text_escape(NULL, 0, name);
    char *escaped = spi_malloc(escaped_len + 1);
    if (!escaped) return NULL;
    spi_text_escape(escaped, escaped_len + 1, name);
    size_t name_len = fitting_bytes(escaped, escaped_len, SUMMARY_NAME_COLUMNS,
                                    text_width(g->cut));
    const char *cut = name_len < escaped_len ? g->cut : "";
    char calls[48] = "";
    if (r->t->calls_inline && !row->own && row->v[SPI_SV_CALLS] != 1.0)
        snprintf(calls, sizeof calls, " (%.0fx)", row->v[SPI_SV_CALLS]);
    size_t levels = depth > 0 ? (size_t)depth : 0;
    size_t len = (levels ? (levels - 1) * strlen(g->pipe) + strlen(g->branch) : 0) + name_len +
                 strlen(cut) + (row->recursive ? strlen(g->rec) : 0) + strlen(calls) + 1;
    char *cell = spi_malloc(len);
    if (!cell) {
        spi_free(escaped);
        return NULL;
    }
    size_t used = 0;
    for (size_t i = 1; i < levels; i++) used += (size_t)sprintf(cell + used, "%s", g->pipe);
    if (levels) used += (size_t)sprintf(cell + used, "%s", g->branch);
    memcpy(cell + used, escaped, name_len);
    used += name_len;
    snprintf(cell + used, len - used, "%s%s%s", cut, row->recursive ? g->rec : "", calls);
    spi_free(escaped);
    return cell;
}

/* The cells of one line; an "(own)" row comes with its printed depth
 * (spi_summary_table_line). */
static int add_line(render *r, const spi_summary_row *row, spi_error *err) {
    size_t col_count = r->t->col_count;
    char **cells = &r->cells[r->line_count++ * col_count];
    int depth = row->depth;
    for (size_t c = 0; c < col_count; c++) {
        const spi_summary_column *def = &spi_summary_columns[r->t->cols[c]];
        char buf[64];
        if (def->slot < 0) {
            cells[c] = region_cell(r, row, depth);
        } else {
            if (row->own && !def->on_own_row) buf[0] = '\0';
            else if (row->has & SPI_SV_BIT(def->slot))
                format_cell(buf, sizeof buf, def->fmt, row->v[def->slot]);
            else snprintf(buf, sizeof buf, "-");
            cells[c] = spi_strdup(buf);
        }
        if (!cells[c]) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return SP_OK;
}

static void emit_table(render *r, const char *title, const char *caption) {
    size_t col_count = r->t->col_count;
    const int *cols = r->t->cols;
    size_t width[SPI_SUMMARY_MAX_COLUMNS];
    for (size_t c = 0; c < col_count; c++) {
        width[c] = text_width(spi_summary_columns[cols[c]].header);
        for (size_t i = 0; i < r->line_count; i++) {
            size_t w = text_width(r->cells[i * col_count + c]);
            if (w > width[c]) width[c] = w;
        }
    }
    /* Gaps: four after the region column, two between value columns. */
    size_t inner = 0;
    for (size_t c = 0; c < col_count; c++) {
        inner += width[c];
        if (c + 1 < col_count) inner += spi_summary_columns[cols[c]].slot < 0 ? 4 : 2;
    }
    FILE *out = r->out;
    const glyphs *g = r->g;
    if (title) fprintf(out, "  %s\n", title);
    if (caption) fprintf(out, "  %s\n", caption);
    fputs("  ", out); fputs(g->tl, out); put_repeat(out, g->h, inner + 2); fputs(g->tr, out);
    fputc('\n', out);
    for (long i = -1; i < (long)r->line_count; i++) {
        fputs("  ", out); fputs(g->v, out); fputc(' ', out);
        for (size_t c = 0; c < col_count; c++) {
            const spi_summary_column *def = &spi_summary_columns[cols[c]];
            /* The tree lives in the region column only; numbers (and
             * their headers) are right-aligned so every digit sits under
             * its header at any depth. */
            const char *cell = i < 0 ? def->header : r->cells[(size_t)i * col_count + c];
            put_padded(out, cell, width[c], def->slot >= 0);
            if (c + 1 < col_count) put_repeat(out, " ", def->slot < 0 ? 4 : 2);
        }
        fputc(' ', out); fputs(g->v, out); fputc('\n', out);
        if (i < 0) {
            fputs("  ", out); fputs(g->lt, out); put_repeat(out, g->h, inner + 2);
            fputs(g->rt, out); fputc('\n', out);
        }
    }
    fputs("  ", out); fputs(g->bl, out); put_repeat(out, g->h, inner + 2); fputs(g->br, out);
    fputc('\n', out);
}

/* What the threads columns mean, under a table that shows one (issue 34:
 * a parallel region summed over its threads outgrows its parent, and the
 * reader needs to know why the numbers still add up). */
static void emit_thread_legend(FILE *out, const spi_summary_table *t) {
    bool threads = false, other = false;
    for (size_t c = 0; c < t->col_count; c++) {
        threads = threads || spi_summary_columns[t->cols[c]].slot == SPI_SV_THREADS;
        other = other || spi_summary_columns[t->cols[c]].slot == SPI_SV_OTHER_THREADS;
    }
    if (!threads && !other) return;
    if (threads)
        fprintf(out, "  threads: threads that ran the row%s; total, calls: summed over them\n",
                t->multi_rank ? " (summed over ranks)" : "");
    fputs("  (own): the row's total minus its children's time on the row's own threads\n", out);
    if (other || t->other_threads)
        fputs("  other thr: time of the row's calls that ran beside their parent on another "
              "thread (OpenMP workers):\n"
              "    in the row's total, not in its parent's; so the parent's (own) plus its "
              "children's totals\n"
              "    minus their other thr equals the parent's total\n",
              out);
}

/* ---- entry point ------------------------------------------------------------ */

int spi_summary_print(const spi_profile *profile, FILE *out, const spi_summary_options *options,
                      spi_error *err) {
    spi_summary_options defaults = {0};
    const spi_summary_options *o = options ? options : &defaults;
    if (!profile || !out)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "profile or output stream is NULL");

    spi_summary_table t;
    int status = spi_summary_table_build(&t, profile, o, err);
    if (status != SP_OK) return status;
    render r = {.out = out, .t = &t};
    r.g = want_unicode(o, out) ? &unicode_glyphs : &ascii_glyphs;
    r.line_cap = t.line_count;
    r.cells = spi_calloc(t.line_count * t.col_count + 1, sizeof *r.cells);
    if (!r.cells) {
        status = spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory building the summary");
        goto done;
    }
    for (size_t i = 0; i < t.line_count && status == SP_OK; i++) {
        spi_summary_row own;
        status = add_line(&r, spi_summary_table_line(&t, i, &own), err);
    }
    if (status != SP_OK) goto done;
    char caption[256];
    if (t.multi_rank) {
        snprintf(caption, sizeof caption,
                 "mean over %zu%s ranks: per-rank mean/min/max of the ranks that ran each "
                 "row; calls, total, excl: sums; imbal = max/mean - 1",
                 t.job_ranks, o->ranks ? " selected" : "");
    }
    emit_table(&r, o->title, t.multi_rank ? caption : NULL);
    emit_thread_legend(out, &t);
    if (t.too_deep)
        fprintf(out, "  note: %zu row%s deeper than %d levels not shown (--flat lists every "
                     "region)\n",
                t.too_deep, t.too_deep == 1 ? "" : "s", SPI_SUMMARY_MAX_DEPTH);
    if (t.nesting != SP_OK) fprintf(out, "  note: %s; showing one row per region\n", err->message);
    fputc('\n', out);
    if (fflush(out) != 0 || ferror(out))
        status = spi_error_set(err, SP_ERR_OUTPUT, "cannot write the summary table");
    else
        status = t.nesting;

done:
    for (size_t i = 0; r.cells && i < r.line_count * t.col_count; i++) spi_free(r.cells[i]);
    spi_free(r.cells);
    spi_summary_table_free(&t);
    return status;
}
