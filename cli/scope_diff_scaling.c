/*
 * scope_diff_scaling.c - scope-diff --scaling: one program run on several
 * rank counts, every run compared with the first (scope_diff.h has the
 * formulas).
 *
 * Each run k > 0 is compared with run 0 by diff_compare on the per-rank
 * mean of the total, so the numbers and the noise verdict are exactly the
 * two-run scope-diff's (per_rank forced on, whatever the rank counts).
 * The regions of the k-1 reports are then gathered by name: every
 * (name, run, row) is put in one array sorted by name, and a region's
 * cells are one run of equal names. Memory is the reports' rows, i.e.
 * regions x runs, never calls.
 */
#include <stdlib.h>
#include <string.h>

#include "scope_diff.h"

typedef struct entry {
    const char *name;
    size_t run;              /* 1 .. run_count-1 */
    const diff_row *row;
} entry;

static int cmp_entry(const void *pa, const void *pb) {
    const entry *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (c) return c;
    return (a->run > b->run) - (a->run < b->run);
}

void scaling_report_free(scaling_report *report) {
    if (!report) return;
    for (size_t i = 0; i < report->count; i++) free(report->rows[i].cells);
    free(report->rows);
    free(report->ranks);
    memset(report, 0, sizeof *report);
}

/* Speedup and efficiency of cell k against the reference cell. */
static void rate(scaling_cell *cell, const scaling_cell *ref, uint32_t ranks_ref,
                 uint32_t ranks_k, bool weak) {
    cell->speedup = cell->efficiency = 0.0;
    if (!cell->present || !ref->present || cell->time_ns <= 0.0 || ref->time_ns <= 0.0 ||
        ranks_ref == 0 || ranks_k == 0)
        return;
    double ratio = ref->time_ns / cell->time_ns, scale = (double)ranks_k / ranks_ref;
    /* strong: the same problem on more ranks; weak: more ranks, more problem
     * (the scaled speedup, ratio x ranks, is its speedup) */
    cell->speedup = weak ? ratio * scale : ratio;
    cell->efficiency = weak ? ratio : ratio / scale;
}

int diff_scaling(const sp_results *const *runs, size_t run_count, const diff_options *options,
                 bool weak, scaling_report *report, char *errbuf, size_t errbuf_len) {
    memset(report, 0, sizeof *report);
    if (errbuf_len) errbuf[0] = '\0';
    if (run_count < 2) {
        snprintf(errbuf, errbuf_len, "--scaling needs at least two runs");
        return SP_ERR_INVALID_ARGUMENT;
    }
    diff_options o = *options;
    o.metric = DIFF_METRIC_TOTAL;
    o.per_rank = true;
    o.sort = DIFF_SORT_NAME;
    diff_report *reps = calloc(run_count, sizeof *reps);
    report->ranks = calloc(run_count, sizeof *report->ranks);
    if (!reps || !report->ranks) {
        free(reps);
        scaling_report_free(report);
        snprintf(errbuf, errbuf_len, "out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    report->run_count = run_count;
    report->weak = weak;
    int st = SP_OK;
    size_t entries = 0;
    for (size_t k = 1; k < run_count && st == SP_OK; k++) {
        st = diff_compare(runs[0], runs[k], &o, &reps[k], errbuf, errbuf_len);
        if (st == SP_OK) entries += reps[k].count;
    }
    entry *all = st == SP_OK ? malloc((entries ? entries : 1) * sizeof *all) : NULL;
    if (st == SP_OK && !all) {
        st = SP_ERR_OUT_OF_MEMORY;
        snprintf(errbuf, errbuf_len, "out of memory");
    }
    if (st == SP_OK) {
        size_t n = 0;
        for (size_t k = 1; k < run_count; k++)
            for (size_t i = 0; i < reps[k].count; i++)
                all[n++] = (entry){reps[k].rows[i].name, k, &reps[k].rows[i]};
        qsort(all, n, sizeof *all, cmp_entry);
        report->rows = calloc(n ? n : 1, sizeof *report->rows);
        if (!report->rows) st = SP_ERR_OUT_OF_MEMORY;
        report->ranks[0] = reps[1].ranks_base;
        for (size_t k = 1; k < run_count; k++) report->ranks[k] = reps[k].ranks_cand;
        for (size_t a = 0, b; a < n && st == SP_OK; a = b) {
            for (b = a; b < n && !strcmp(all[b].name, all[a].name);) b++;
            scaling_row *row = &report->rows[report->count];
            row->name = all[a].name;
            if (!(row->cells = calloc(run_count, sizeof *row->cells))) {
                st = SP_ERR_OUT_OF_MEMORY;
                break;
            }
            report->count++;
            for (size_t e = a; e < b; e++) {
                const diff_row *r = all[e].row;
                scaling_cell *ref = &row->cells[0], *cell = &row->cells[all[e].run];
                if (r->base.present && r->base.has_value) {
                    ref->present = true;
                    ref->time_ns = r->base.value;
                }
                cell->present = r->cand.present && r->cand.has_value;
                cell->time_ns = cell->present ? r->cand.value : 0.0;
                cell->status = r->status;
            }
            for (size_t k = 0; k < run_count; k++)
                rate(&row->cells[k], &row->cells[0], report->ranks[0], report->ranks[k], weak);
        }
        if (st != SP_OK) snprintf(errbuf, errbuf_len, "out of memory");
    }
    /* The names are borrowed from the runs, not from the reports. */
    free(all);
    for (size_t k = 1; k < run_count; k++) diff_report_free(&reps[k]);
    free(reps);
    if (st != SP_OK) scaling_report_free(report);
    return st;
}
