/*
 * inspect_mpi.c - the MPI section of scope-inspect (public results API
 * only): the first thing an HPC user asks of a profile is how much time
 * went into MPI, in which operations, and how unevenly across ranks.
 *
 * Regions whose name starts with "mpi:" are decoded the way the Python
 * package's parse_mpi_region does: the first token is mpi:<op>, the others
 * key=value pairs; only op, kind and bytes are used here (peer, tag, comm,
 * root and lang are summed over). One row per (op, kind):
 *   calls, bytes (sum of calls x bytes over the names with a known size,
 *   bytes >= 0; names without bytes, the waits, move none; calls with
 *   bytes=-1 are counted apart), total time over the selected ranks, and the per-rank
 *   totals' min / avg / max over the ranks that have any row in the file,
 *   with the imbalance of docs/FORMAT.md 7.3 (max / mean of the non-zero
 *   per-rank totals, as a percentage over 1).
 * Then per rank: time in MPI and its share of the rank's recorded span
 * (first start to last end over all its rows, when the file has it), and
 * per enclosing region (the non-MPI region whose call directly encloses
 * MPI calls, from the stored parent ids; files with per-call ids only):
 * the MPI time inside it and its share of the region's inclusive time.
 * The enclosing lookup sorts (rank, call id) -> region once: 24 bytes
 * per call, the size class of the file's own per-call arrays.
 */
#include "inspect_mpi.h"

#include "cli_common.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct mpi_op_row {
    char op[64];
    char kind[32];
    uint64_t calls;
    uint64_t unknown_bytes_calls;  /* calls of names with bytes=-1 */
    int64_t bytes;
    int64_t total_ns;
    int64_t *rank_ns;              /* per rank of the file */
} mpi_op_row;

typedef struct mpi_table {
    mpi_op_row *rows;
    size_t count;
    uint32_t ranks;
    int64_t *rank_mpi_ns;          /* per rank: all MPI time */
    int64_t *rank_first, *rank_last; /* recorded span per rank (0 if none) */
    bool *rank_present;
    int64_t *enclosed_ns;          /* per region: MPI time of direct children */
    int64_t *region_ns;            /* per region: inclusive total */
} mpi_table;

typedef struct call_ref {
    uint32_t rank;
    int64_t id;
    size_t region;
} call_ref;

/* Copy the value of token `key=` of `name` into buf; false if absent. */
static bool token_value(const char *name, const char *key, char *buf, size_t size) {
    size_t klen = strlen(key);
    for (const char *p = strchr(name, ' '); p; p = strchr(p + 1, ' ')) {
        if (strncmp(p + 1, key, klen) == 0 && p[1 + klen] == '=') {
            const char *v = p + 2 + klen;
            size_t n = strcspn(v, " ");
            if (n >= size) n = size - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return true;
        }
    }
    return false;
}

static mpi_op_row *row_for(mpi_table *t, const char *op, const char *kind) {
    for (size_t i = 0; i < t->count; i++)
        if (!strcmp(t->rows[i].op, op) && !strcmp(t->rows[i].kind, kind)) return &t->rows[i];
    mpi_op_row *grown = realloc(t->rows, (t->count + 1) * sizeof *grown);
    if (!grown) return NULL;
    t->rows = grown;
    mpi_op_row *r = &t->rows[t->count];
    memset(r, 0, sizeof *r);
    r->rank_ns = calloc(t->ranks ? t->ranks : 1, sizeof *r->rank_ns);
    if (!r->rank_ns) return NULL;
    snprintf(r->op, sizeof r->op, "%s", op);
    snprintf(r->kind, sizeof r->kind, "%s", kind);
    t->count++;
    return r;
}

static void table_free(mpi_table *t) {
    for (size_t i = 0; i < t->count; i++) free(t->rows[i].rank_ns);
    free(t->rows);
    free(t->rank_mpi_ns);
    free(t->rank_first);
    free(t->rank_last);
    free(t->rank_present);
    free(t->enclosed_ns);
    free(t->region_ns);
    memset(t, 0, sizeof *t);
}

static int cmp_total(const void *a, const void *b) {
    const mpi_op_row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns < y->total_ns ? 1 : -1;
    int c = strcmp(x->op, y->op);
    return c ? c : strcmp(x->kind, y->kind);
}

static bool is_mpi_name(const char *name) { return name && strncmp(name, "mpi:", 4) == 0; }

static int cmp_ref(const void *a, const void *b) {
    const call_ref *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* enclosed_ns and region_ns (see mpi_table); a file without call or
 * parent ids leaves enclosed_ns all 0. */
static int enclosing_build(mpi_table *t, const sp_results *res, inspect_ranks selected) {
    size_t regions = sp_results_region_count(res), rows = sp_results_row_count(res), n = 0;
    t->enclosed_ns = calloc(regions ? regions : 1, sizeof *t->enclosed_ns);
    t->region_ns = calloc(regions ? regions : 1, sizeof *t->region_ns);
    if (!t->enclosed_ns || !t->region_ns) return SP_ERR_OUT_OF_MEMORY;
    for (size_t row = 0; row < rows; row++)
        if (inspect_rank_selected(selected, sp_results_row_rank(res, row)) &&
            sp_results_row_call_ids(res, row))
            n += sp_results_row_calls(res, row);
    call_ref *refs = n ? malloc(n * sizeof *refs) : NULL;
    if (n && !refs) return SP_ERR_OUT_OF_MEMORY;
    size_t k = 0;
    for (size_t row = 0; row < rows; row++) {
        uint32_t rank = sp_results_row_rank(res, row);
        const int64_t *ids = sp_results_row_call_ids(res, row);
        if (!inspect_rank_selected(selected, rank) || !ids) continue;
        size_t region = sp_results_row_region(res, row);
        for (uint64_t i = 0; i < sp_results_row_calls(res, row); i++)
            refs[k++] = (call_ref){.rank = rank, .id = ids[i], .region = region};
    }
    if (n) qsort(refs, n, sizeof *refs, cmp_ref);
    for (size_t row = 0; row < rows; row++) {
        uint32_t rank = sp_results_row_rank(res, row);
        if (!inspect_rank_selected(selected, rank)) continue;
        size_t region = sp_results_row_region(res, row);
        sp_row_stats st;
        if (region < regions && sp_results_row_stats(res, row, &st) == SP_OK)
            t->region_ns[region] += st.total;
        const int64_t *parents = sp_results_row_parent_ids(res, row);
        const int64_t *durations = sp_results_row_durations(res, row);
        if (!n || !parents || !durations || !is_mpi_name(sp_results_region_name(res, region)))
            continue;
        for (uint64_t i = 0; i < sp_results_row_calls(res, row); i++) {
            if (parents[i] < 0) continue;
            call_ref key = {.rank = rank, .id = parents[i]};
            const call_ref *p = bsearch(&key, refs, n, sizeof *refs, cmp_ref);
            if (p && p->region < regions && !is_mpi_name(sp_results_region_name(res, p->region)))
                t->enclosed_ns[p->region] += durations[i];
        }
    }
    free(refs);
    return SP_OK;
}

static int table_build(mpi_table *t, const sp_results *res, inspect_ranks selected) {
    memset(t, 0, sizeof *t);
    t->ranks = sp_results_rank_count(res);
    size_t n = t->ranks ? t->ranks : 1;
    t->rank_mpi_ns = calloc(n, sizeof *t->rank_mpi_ns);
    t->rank_first = calloc(n, sizeof *t->rank_first);
    t->rank_last = calloc(n, sizeof *t->rank_last);
    t->rank_present = calloc(n, sizeof *t->rank_present);
    if (!t->rank_mpi_ns || !t->rank_first || !t->rank_last || !t->rank_present) {
        table_free(t);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t row = 0; row < sp_results_row_count(res); row++) {
        uint32_t rank = sp_results_row_rank(res, row);
        if (rank >= t->ranks || !inspect_rank_selected(selected, rank)) continue;
        sp_row_stats s;
        if (sp_results_row_stats(res, row, &s) != SP_OK) continue;
        if (s.count && s.end_maximum > s.start_minimum) {
            if (!t->rank_present[rank] || s.start_minimum < t->rank_first[rank])
                t->rank_first[rank] = s.start_minimum;
            if (!t->rank_present[rank] || s.end_maximum > t->rank_last[rank])
                t->rank_last[rank] = s.end_maximum;
        }
        t->rank_present[rank] = true;
        const char *name = sp_results_region_name(res, sp_results_row_region(res, row));
        if (!name || strncmp(name, "mpi:", 4) != 0) continue;
        char op[64], kind[32] = "?", bytes[32];
        size_t oplen = strcspn(name + 4, " ");
        if (oplen == 0 || oplen >= sizeof op) continue;
        memcpy(op, name + 4, oplen);
        op[oplen] = '\0';
        token_value(name, "kind", kind, sizeof kind);
        mpi_op_row *r = row_for(t, op, kind);
        if (!r) {
            table_free(t);
            return SP_ERR_OUT_OF_MEMORY;
        }
        /* No bytes token (waits): nothing moved; bytes=-1 or junk: unknown. */
        long long b = 0;
        if (token_value(name, "bytes", bytes, sizeof bytes)) {
            char *end = NULL;
            b = strtoll(bytes, &end, 10);
            if (end == bytes || *end) b = -1;
        }
        r->calls += s.count;
        if (b >= 0) r->bytes += b * (int64_t)s.count;
        else r->unknown_bytes_calls += s.count;
        r->total_ns += s.total;
        r->rank_ns[rank] += s.total;
        t->rank_mpi_ns[rank] += s.total;
    }
    if (t->count) qsort(t->rows, t->count, sizeof *t->rows, cmp_total);
    if (t->count && enclosing_build(t, res, selected) != SP_OK) {
        table_free(t);
        return SP_ERR_OUT_OF_MEMORY;
    }
    return SP_OK;
}

/* qsort has no context argument in C11: the MPI time per region being
 * sorted by is reachable through this file-level pointer. Tools are
 * single-threaded. */
static const int64_t *sort_enclosed;

static int cmp_enclosed(const void *pa, const void *pb) {
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int64_t x = sort_enclosed[a], y = sort_enclosed[b];
    if (x != y) return x > y ? -1 : 1;
    return (a > b) - (a < b);
}

/* The regions that enclose MPI calls, most MPI time first (count in *n). */
static size_t *enclosing_order(const mpi_table *t, const sp_results *res, size_t *n) {
    size_t regions = sp_results_region_count(res), m = 0;
    *n = 0;
    if (!t->enclosed_ns) return NULL;
    size_t *order = malloc((regions ? regions : 1) * sizeof *order);
    if (!order) return NULL;
    for (size_t r = 0; r < regions; r++)
        if (t->enclosed_ns[r] > 0) order[m++] = r;
    /* qsort, not insertion sort: a file can have 10^5 regions that each
     * enclose an MPI call. Ties keep the region order (index compared). */
    sort_enclosed = t->enclosed_ns;
    if (m) qsort(order, m, sizeof *order, cmp_enclosed);
    sort_enclosed = NULL;
    *n = m;
    return order;
}

static double share_pct(int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
}

/* min, avg and max of the per-rank totals over the ranks present, and the
 * imbalance in percent (docs/FORMAT.md 7.3: max / mean of the totals > 0). */
static void spread(const mpi_table *t, const int64_t *per_rank, double *min, double *avg,
                   double *max, double *imbalance_pct) {
    double lo = 0, hi = 0, sum = 0, pos_sum = 0, pos_max = 0;
    size_t present = 0, positive = 0;
    for (uint32_t r = 0; r < t->ranks; r++) {
        if (!t->rank_present[r]) continue;
        double v = (double)per_rank[r];
        lo = present == 0 || v < lo ? v : lo;
        hi = present == 0 || v > hi ? v : hi;
        sum += v;
        present++;
        if (v > 0) {
            pos_sum += v;
            pos_max = v > pos_max ? v : pos_max;
            positive++;
        }
    }
    *min = lo;
    *max = hi;
    *avg = present ? sum / (double)present : 0;
    *imbalance_pct = positive >= 2 ? (pos_max / (pos_sum / (double)positive) - 1) * 100 : 0;
}

int inspect_print_mpi(FILE *out, const sp_results *res, inspect_ranks selected) {
    mpi_table t;
    int status = table_build(&t, res, selected);
    if (status != SP_OK || t.count == 0) {
        if (status == SP_OK) table_free(&t);
        return status;
    }
    fprintf(out, "\nMPI (regions mpi:<op> ...; time in seconds; rank min/avg/max over the "
                 "ranks with rows)\n");
    fprintf(out, "  %-16s %-15s %10s %14s %11s %11s %11s %11s %9s\n", "operation", "kind",
            "calls", "bytes", "total", "rank min", "rank avg", "rank max", "imbalance");
    uint64_t calls = 0;
    int64_t bytes = 0, total = 0;
    for (size_t i = 0; i < t.count; i++) {
        const mpi_op_row *r = &t.rows[i];
        double lo, avg, hi, imb;
        spread(&t, r->rank_ns, &lo, &avg, &hi, &imb);
        char op[sizeof r->op * 4], kind[sizeof r->kind * 4];
        fprintf(out, "  %-16s %-15s %10llu %14lld%s %11.6f %11.6f %11.6f %11.6f %8.1f%%\n",
                cli_text(r->op, op, sizeof op), cli_text(r->kind, kind, sizeof kind),
                (unsigned long long)r->calls, (long long)r->bytes,
                r->unknown_bytes_calls ? "*" : " ", r->total_ns / 1e9, lo / 1e9, avg / 1e9,
                hi / 1e9, imb);
        calls += r->calls;
        bytes += r->bytes;
        total += r->total_ns;
    }
    double lo, avg, hi, imb;
    spread(&t, t.rank_mpi_ns, &lo, &avg, &hi, &imb);
    fprintf(out, "  %-16s %-15s %10llu %14lld  %11.6f %11.6f %11.6f %11.6f %8.1f%%\n", "all MPI",
            "", (unsigned long long)calls, (long long)bytes, total / 1e9, lo / 1e9, avg / 1e9,
            hi / 1e9, imb);
    for (uint32_t rank = 0; rank < t.ranks; rank++) {
        if (!t.rank_present[rank]) continue;
        int64_t span = t.rank_last[rank] - t.rank_first[rank];
        fprintf(out, "  rank %u: %.6f s in MPI", rank, t.rank_mpi_ns[rank] / 1e9);
        if (span > 0)
            fprintf(out, " of %.6f s recorded (%.1f%%)", span / 1e9,
                    100.0 * (double)t.rank_mpi_ns[rank] / (double)span);
        fputc('\n', out);
    }
    size_t encl_n = 0;
    size_t *encl = enclosing_order(&t, res, &encl_n);
    if (encl_n) fprintf(out, "  MPI inside enclosing regions (direct children; seconds):\n");
    char name[512];
    for (size_t i = 0; i < encl_n; i++)
        fprintf(out, "    %-40s %11.6f of %11.6f (%.1f%%)\n",
                cli_text(sp_results_region_name(res, encl[i]), name, sizeof name),
                t.enclosed_ns[encl[i]] / 1e9,
                t.region_ns[encl[i]] / 1e9,
                share_pct(t.enclosed_ns[encl[i]], t.region_ns[encl[i]]));
    free(encl);
    for (size_t i = 0; i < t.count; i++)
        if (t.rows[i].unknown_bytes_calls) {
            fprintf(out, "  * some calls of this operation have an unknown size (bytes=-1): "
                         "not in the byte sum\n");
            break;
        }
    table_free(&t);
    return SP_OK;
}

int inspect_json_mpi(FILE *out, const sp_results *res, inspect_ranks selected) {
    mpi_table t;
    int status = table_build(&t, res, selected);
    if (status != SP_OK) return status;
    fputs("  \"mpi\": {\"operations\": [", out);
    for (size_t i = 0; i < t.count; i++) {
        const mpi_op_row *r = &t.rows[i];
        double lo, avg, hi, imb;
        spread(&t, r->rank_ns, &lo, &avg, &hi, &imb);
        fputs(i ? ",\n    {\"op\": " : "\n    {\"op\": ", out);
        cli_json_string(out, r->op);
        fputs(", \"kind\": ", out);
        cli_json_string(out, r->kind);
        fprintf(out,
                ", \"calls\": %llu, \"bytes\": %lld, \"calls_unknown_bytes\": %llu, "
                "\"total_duration\": %.9g, \"rank_min_duration\": %.9g, "
                "\"rank_avg_duration\": %.9g, \"rank_max_duration\": %.9g, "
                "\"rank_imbalance_pct\": %.6g}",
                (unsigned long long)r->calls, (long long)r->bytes,
                (unsigned long long)r->unknown_bytes_calls, r->total_ns / 1e9, lo / 1e9,
                avg / 1e9, hi / 1e9, imb);
    }
    fputs(t.count ? "\n  ], \"ranks\": [" : "], \"ranks\": [", out);
    bool first = true;
    for (uint32_t rank = 0; rank < t.ranks; rank++) {
        if (!t.rank_present[rank]) continue;
        int64_t span = t.rank_last[rank] - t.rank_first[rank];
        fprintf(out, "%s{\"rank\": %u, \"mpi_duration\": %.9g, \"recorded_span\": %.9g}",
                first ? "\n    " : ",\n    ", rank, t.rank_mpi_ns[rank] / 1e9,
                span > 0 ? span / 1e9 : 0.0);
        first = false;
    }
    fputs(first ? "], \"enclosing\": [" : "\n  ], \"enclosing\": [", out);
    size_t encl_n = 0;
    size_t *encl = enclosing_order(&t, res, &encl_n);
    for (size_t i = 0; i < encl_n; i++) {
        fputs(i ? ",\n    {\"region\": " : "\n    {\"region\": ", out);
        cli_json_string(out, sp_results_region_name(res, encl[i]));
        fprintf(out, ", \"mpi_duration\": %.9g, \"inclusive_duration\": %.9g, \"share_pct\": %.6g}",
                t.enclosed_ns[encl[i]] / 1e9, t.region_ns[encl[i]] / 1e9,
                share_pct(t.enclosed_ns[encl[i]], t.region_ns[encl[i]]));
    }
    free(encl);
    fputs(encl_n ? "\n  ]},\n" : "]},\n", out);
    table_free(&t);
    return SP_OK;
}
