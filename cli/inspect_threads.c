/*
 * inspect_threads.c - scope-inspect --threads (inspect_threads.h).
 *
 * The summary table pools threads, which is what a user wants first and
 * what confuses once a parallel region sums its team past its parent. This
 * view shows each thread alone: its name from the thread table ("omp
 * worker N" for an unnamed OpenMP worker), its rank, and the call paths
 * it ran, indented as the tree is. A worker's first row often hangs under
 * a call of another thread (the one that forked the team); it is printed
 * with that part of its path ("fork > work"), so every row says where it
 * ran without the reader having to look at the primary thread.
 */
#include "inspect_threads.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "scope_profiler_summary.h"

/* Most columns of a path cell (indent and names); longer ones are cut. */
#define PATH_COLUMNS 64

static const char *thread_name(const sp_results *res, uint32_t rank, int64_t index) {
    size_t n = sp_results_thread_count(res);
    for (size_t i = 0; i < n; i++) {
        sp_thread_info info;
        if (sp_results_thread(res, i, &info) == SP_OK && info.rank == rank && info.index == index)
            return info.name;
    }
    return "";
}

static bool same_thread(const sp_thread_row *a, const sp_thread_row *b) {
    return a->rank == b->rank && a->thread == b->thread;
}

/* Whether row a's path is a proper prefix of row b's (a is b's ancestor). */
static bool encloses(const sp_thread_row *a, const sp_thread_row *b) {
    return a->depth < b->depth && memcmp(a->path, b->path, (a->depth + 1) * sizeof *a->path) == 0;
}

/* The path cell of rows[k] (indent, then the names this thread has not
 * shown above it, joined by " > "), escaped and cut; NULL when out of
 * memory. `chain` holds the enclosing rows shown, `*depth` of them. */
static char *path_cell(const sp_results *res, const sp_thread_row *rows, size_t k,
                       size_t *chain, size_t *depth) {
    const sp_thread_row *row = &rows[k];
    while (*depth > 0 && !encloses(&rows[chain[*depth - 1]], row)) (*depth)--;
    size_t from = *depth > 0 ? rows[chain[*depth - 1]].depth + 1 : 0;
    size_t len = 2 * *depth + 1;
    for (size_t d = from; d <= row->depth; d++)
        len += strlen(sp_results_region_name(res, row->path[d])) + 3;
    char *text = malloc(len);
    if (!text) return NULL;
    size_t used = 0;
    for (size_t i = 0; i < *depth; i++) used += (size_t)sprintf(text + used, "  ");
    for (size_t d = from; d <= row->depth; d++)
        used += (size_t)sprintf(text + used, "%s%s", d > from ? " > " : "",
                                sp_results_region_name(res, row->path[d]));
    chain[(*depth)++] = k;
    char *cell = cli_text_cut(text, PATH_COLUMNS, "...");
    free(text);
    return cell;
}

static size_t text_columns(const char *s) {
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

/* One thread's block: rows[first..end). */
static int print_thread(FILE *out, const sp_results *res, const sp_thread_row *rows,
                        size_t first, size_t end) {
    size_t n = end - first;
    char **cells = calloc(n + 1, sizeof *cells);
    size_t *chain = calloc(n + 1, sizeof *chain);
    int status = cells && chain ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    size_t depth = 0, width = strlen("region");
    bool other = false;
    for (size_t k = 0; k < n && status == SP_OK; k++) {
        cells[k] = path_cell(res, rows + first, k, chain, &depth);
        if (!cells[k]) status = SP_ERR_OUT_OF_MEMORY;
        else if (text_columns(cells[k]) > width) width = text_columns(cells[k]);
        other = other || rows[first + k].other_threads_ns > 0;
    }
    if (status == SP_OK) {
        char name[128];
        fprintf(out, "  rank %u, thread %lld \"%s\"\n", rows[first].rank,
                (long long)rows[first].thread,
                cli_text(thread_name(res, rows[first].rank, rows[first].thread), name,
                         sizeof name));
        fprintf(out, "    %s%*s  %10s  %14s  %14s%s\n", "region",
                (int)(width - strlen("region")), "", "calls", "total [s]", "own [s]",
                other ? "   other thr [s]" : "");
        for (size_t k = 0; k < n; k++) {
            const sp_thread_row *r = &rows[first + k];
            fprintf(out, "    %s%*s  %10llu  %14.6f  %14.6f", cells[k],
                    (int)(width - text_columns(cells[k])), "", (unsigned long long)r->calls,
                    (double)r->total_ns / 1e9, (double)r->own_ns / 1e9);
            if (other) fprintf(out, "  %14.6f", (double)r->other_threads_ns / 1e9);
            fputc('\n', out);
        }
    }
    for (size_t k = 0; cells && k < n; k++) free(cells[k]);
    free(cells);
    free(chain);
    return status;
}

int inspect_print_threads(FILE *out, const sp_results *res, inspect_ranks selected,
                          char *errbuf, size_t errbuf_len) {
    sp_thread_row *rows = NULL;
    size_t count = 0;
    int status = sp_summary_threads(res, selected.count ? selected.ranks : NULL, selected.count,
                                    &rows, &count, errbuf, errbuf_len);
    if (status == SP_ERR_UNSUPPORTED) {
        fprintf(out, "Threads: none in the file (%s)\n\n", errbuf);
        return SP_OK;
    }
    if (status != SP_OK) return status;
    size_t threads = 0;
    for (size_t k = 0; k < count; k++) threads += k == 0 || !same_thread(&rows[k], &rows[k - 1]);
    fprintf(out, "Threads: %zu (per thread: the call paths it ran; own = total minus the "
                 "children's time on that thread)\n",
            threads);
    if (count == 0) fputs("  the file records no thread ids\n", out);
    for (size_t first = 0; first < count && status == SP_OK;) {
        size_t end = first + 1;
        while (end < count && same_thread(&rows[end], &rows[first])) end++;
        status = print_thread(out, res, rows, first, end);
        first = end;
    }
    fputc('\n', out);
    sp_summary_threads_free(rows);
    if (status == SP_ERR_OUT_OF_MEMORY) snprintf(errbuf, errbuf_len, "out of memory");
    return status;
}

int inspect_json_threads(FILE *out, const sp_results *res, inspect_ranks selected,
                         char *errbuf, size_t errbuf_len) {
    sp_thread_row *rows = NULL;
    size_t count = 0;
    int status = sp_summary_threads(res, selected.count ? selected.ranks : NULL, selected.count,
                                    &rows, &count, errbuf, errbuf_len);
    if (status != SP_OK && status != SP_ERR_UNSUPPORTED) return status;
    fputs("  \"threads\": [", out);
    for (size_t k = 0; k < count; k++) {
        const sp_thread_row *r = &rows[k];
        bool opens = k == 0 || !same_thread(r, &rows[k - 1]);
        if (opens) {
            fputs(k ? "]},\n    {" : "\n    {", out);
            fprintf(out, "\"rank\": %u, \"index\": %lld, \"name\": ", r->rank,
                    (long long)r->thread);
            cli_json_string(out, thread_name(res, r->rank, r->thread));
            fputs(", \"rows\": [", out);
        }
        fputs(opens ? "\n      {\"path\": [" : ",\n      {\"path\": [", out);
        for (size_t d = 0; d <= r->depth; d++) {
            if (d) fputs(", ", out);
            cli_json_string(out, sp_results_region_name(res, r->path[d]));
        }
        fprintf(out,
                "], \"num_calls\": %llu, \"total_duration\": %.17g, \"own_duration\": %.17g, "
                "\"other_threads_duration\": %.17g}",
                (unsigned long long)r->calls, (double)r->total_ns / 1e9,
                (double)r->own_ns / 1e9, (double)r->other_threads_ns / 1e9);
    }
    fputs(count ? "]}\n  ],\n" : "],\n", out);
    sp_summary_threads_free(rows);
    return SP_OK;
}
