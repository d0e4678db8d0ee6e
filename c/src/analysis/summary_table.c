/*
 * summary_table.c - the summary table of FORMAT.md 7.5 as data: which
 * regions get rows (include/exclude filters), the % session and % parent
 * of every row, which columns are shown, the order of the rows and the
 * "(own)" lines. summary_rows.c gives the rows; summary.c prints what is
 * built here, so the rendering only lays out text and nothing here prints.
 *
 * Ranks. One rank (or one selected with ranks) prints totals, as before.
 * Several ranks print what GPTL's summary and Caliper's runtime-report
 * print for an MPI job: per row the mean of the per-rank totals over the
 * ranks that ran the row (GPTL's "nranks"), their minimum and maximum, and
 * the imbalance max/mean - 1 in percent (FORMAT.md 7.3, Hatchet's
 * load_imbalance); calls stay the total over ranks, like GPTL's "ncalls".
 * A caption above the table names the ranks and what every column means.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/sort.h"
#include "analysis/summary_table.h"

#define SESSION_REGION "scope_profiler.session"

/* Short for SPI_SV_BIT: the bit of a value slot in spi_summary_row.has. */
#define HAS(slot) SPI_SV_BIT(slot)

static int oom(spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory building the summary");
}

/* ---- columns and sort keys ------------------------------------------------ */

const spi_summary_column spi_summary_columns[] = {
    {"region", "region", -1, SPI_SUMMARY_FMT_INT, true},
    {"calls", "calls", SPI_SV_CALLS, SPI_SUMMARY_FMT_INT, false},
    {"percent", "% session", SPI_SV_PERCENT, SPI_SUMMARY_FMT_PCT, true},
    {"parent_percent", "% parent", SPI_SV_PARENT_PERCENT, SPI_SUMMARY_FMT_PCT, true},
    {"total", "total [s]", SPI_SV_TOTAL, SPI_SUMMARY_FMT_TOTAL, true},
    {"exclusive", "excl [s]", SPI_SV_EXCL, SPI_SUMMARY_FMT_TOTAL, false},
    {"avg", "avg [s]", SPI_SV_AVG, SPI_SUMMARY_FMT_SCI, true},
    {"min", "min [s]", SPI_SV_MIN, SPI_SUMMARY_FMT_SCI, false},
    {"max", "max [s]", SPI_SV_MAX, SPI_SUMMARY_FMT_SCI, false},
    {"std", "std [s]", SPI_SV_STD, SPI_SUMMARY_FMT_SCI, false},
    {"p50", "p50 [s]", SPI_SV_P50, SPI_SUMMARY_FMT_SCI, false},
    {"p95", "p95 [s]", SPI_SV_P95, SPI_SUMMARY_FMT_SCI, false},
    {"p99", "p99 [s]", SPI_SV_P99, SPI_SUMMARY_FMT_SCI, false},
    {"first", "first [s]", SPI_SV_FIRST, SPI_SUMMARY_FMT_SCI, false},
    {"last", "last [s]", SPI_SV_LAST, SPI_SUMMARY_FMT_SCI, false},
    {"imbalance", "imbal [%]", SPI_SV_IMB, SPI_SUMMARY_FMT_IMB, true},
    {"ranks", "ranks", SPI_SV_RANKS, SPI_SUMMARY_FMT_INT, false},
    {"rank_mean", "mean/rank [s]", SPI_SV_RANK_MEAN, SPI_SUMMARY_FMT_TOTAL, true},
    {"rank_min", "min/rank [s]", SPI_SV_RANK_MIN, SPI_SUMMARY_FMT_TOTAL, true},
    {"rank_max", "max/rank [s]", SPI_SV_RANK_MAX, SPI_SUMMARY_FMT_TOTAL, true},
    {"threads", "threads", SPI_SV_THREADS, SPI_SUMMARY_FMT_INT, false},
    {"other_threads", "other thr [s]", SPI_SV_OTHER_THREADS, SPI_SUMMARY_FMT_TOTAL, false},
};
/* Indices into spi_summary_columns used by the defaults. */
enum { C_REGION = 0, C_CALLS = 1, C_PERCENT = 2, C_PARENT_PERCENT = 3, C_TOTAL = 4, C_AVG = 6,
       C_IMB = 15, C_RANKS = 16, C_RANK_MEAN = 17, C_RANK_MIN = 18, C_RANK_MAX = 19,
       C_THREADS = 20, C_OTHER_THREADS = 21 };
#define COLUMN_DEF_COUNT (sizeof spi_summary_columns / sizeof spi_summary_columns[0])

const char spi_summary_column_names[] =
    "region,calls,percent,parent_percent,total,exclusive,avg,min,max,std,p50,p95,p99,"
    "first,last,imbalance,ranks,rank_mean,rank_min,rank_max,threads,other_threads";

typedef struct sort_key { const char *name; int slot; } sort_key;
enum { SORT_START = -1, SORT_NAME = -2 };
static const sort_key sort_keys[] = {
    {"start", SORT_START}, {"name", SORT_NAME}, {"total", SPI_SV_TOTAL},
    {"calls", SPI_SV_CALLS}, {"avg", SPI_SV_AVG}, {"min", SPI_SV_MIN}, {"max", SPI_SV_MAX},
    {"first", SPI_SV_FIRST}, {"last", SPI_SV_LAST}, {"std", SPI_SV_STD}, {"p50", SPI_SV_P50},
    {"p95", SPI_SV_P95}, {"p99", SPI_SV_P99}, {"imbalance", SPI_SV_IMB},
    {"exclusive", SPI_SV_EXCL}, {"rank_mean", SPI_SV_RANK_MEAN}, {"rank_min", SPI_SV_RANK_MIN},
    {"rank_max", SPI_SV_RANK_MAX}, {"threads", SPI_SV_THREADS},
    {"other_threads", SPI_SV_OTHER_THREADS},
};

/* ---- ordering --------------------------------------------------------------- */

typedef struct order_ctx {
    const spi_summary_row *rows;
    int key;
} order_ctx;

static int row_compare(const void *context, size_t ia, size_t ib) {
    const order_ctx *c = context;
    const spi_summary_row *a = &c->rows[ia], *b = &c->rows[ib];
    if (a->parent != b->parent) return a->parent < b->parent ? -1 : 1;
    /* Descending by the key, rows without a value for it last (FORMAT.md
     * 7.5: "None last"); then by name, then by start, then by position, so
     * the order is total and the sort stable. tests/inspect checks
     * --sort total. */
    int key = c->key;
    if (key >= 0 && key < SPI_SV_COUNT) {
        unsigned bit = 1u << (unsigned)key;
        int ha = (a->has & bit) ? 1 : 0, hb = (b->has & bit) ? 1 : 0;
        if (ha != hb) return hb - ha;  /* unavailable last */
        if (ha) {
            double x = a->v[key], y = b->v[key];
            if (x > y) return -1;
            if (x < y) return 1;
        }
    }
    if (key != SORT_START) {
        int by_name = strcmp(a->name, b->name);
        if (by_name) return by_name;
    }
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return ia < ib ? -1 : (ia > ib);
}

/* ---- options --------------------------------------------------------------- */

static int compile_patterns(const char *const *patterns, size_t count, regex_t *out,
                            size_t *compiled, const char *what, spi_error *err) {
    for (size_t i = 0; i < count; i++) {
        /* Anchored at the start like Python's re.match; the group keeps an
         * alternation inside the pattern under the anchor. */
        size_t len = strlen(patterns[i]) + 4;
        char *anchored = spi_malloc(len);
        if (!anchored) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
        snprintf(anchored, len, "^(%s)", patterns[i]);
        int rc = regcomp(&out[i], anchored, REG_EXTENDED | REG_NOSUB);
        spi_free(anchored);
        if (rc != 0) {
            char msg[256];
            regerror(rc, NULL, msg, sizeof msg);
            return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "invalid %s pattern '%s': %s",
                                 what, patterns[i], msg);
        }
        (*compiled)++;
    }
    return SP_OK;
}

static int parse_columns(const char *spec, bool has_session, bool multi_rank, bool threaded,
                         bool other_threads, int *cols, size_t *count, bool *calls_inline,
                         spi_error *err) {
    *count = 0;
    if (!spec || !*spec) {
        /* FORMAT.md 7.5: without a session row the percentages mean
         * nothing, so the default shrinks to region + total. Several ranks
         * replace the sums by the per-rank spread (see the top of file). */
        static const int with_session[] = {C_REGION, C_CALLS, C_PERCENT, C_PARENT_PERCENT,
                                           C_TOTAL, C_AVG};
        static const int without[] = {C_REGION, C_TOTAL};
        static const int multi_session[] = {C_REGION, C_CALLS, C_PERCENT, C_PARENT_PERCENT,
                                            C_RANK_MEAN, C_RANK_MIN, C_RANK_MAX, C_IMB, C_RANKS};
        static const int multi_without[] = {C_REGION, C_CALLS, C_RANK_MEAN, C_RANK_MIN,
                                            C_RANK_MAX, C_IMB, C_RANKS};
        const int *src = multi_rank ? (has_session ? multi_session : multi_without)
                                    : (has_session ? with_session : without);
        size_t n = multi_rank ? (has_session ? 9 : 7) : (has_session ? 6 : 2);
        /* Threads (issue 34): a run where some row ran on more threads than
         * ranks gets the threads column after the names, and the time that
         * ran beside its parent on other threads when there is some; a
         * single-threaded run's table stays as it was. */
        for (size_t i = 0; i < n; i++) {
            cols[(*count)++] = src[i];
            if (i == 0 && threaded) cols[(*count)++] = C_THREADS;
        }
        if (other_threads) cols[(*count)++] = C_OTHER_THREADS;
    } else {
        const char *p = spec;
        while (*p) {
            size_t len = strcspn(p, ",");
            size_t found = COLUMN_DEF_COUNT;
            for (size_t i = 0; i < COLUMN_DEF_COUNT; i++)
                if (strlen(spi_summary_columns[i].name) == len &&
                    !strncmp(spi_summary_columns[i].name, p, len))
                    found = i;
            if (len > 0) {
                if (found == COLUMN_DEF_COUNT)
                    return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                         "unknown column '%.*s' (known: %s)", (int)len, p,
                                         spi_summary_column_names);
                if (*count == SPI_SUMMARY_MAX_COLUMNS)
                    return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "too many columns");
                cols[(*count)++] = (int)found;
            }
            p += len;
            if (*p == ',') p++;
        }
        if (*count == 0)
            return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "no columns given");
    }
    /* The tree needs its names: the region column always comes first. */
    bool has_region = false, has_calls = false;
    for (size_t i = 0; i < *count; i++) {
        has_region = has_region || cols[i] == 0;
        has_calls = has_calls || cols[i] == 1;
    }
    if (!has_region) {
        if (*count == SPI_SUMMARY_MAX_COLUMNS) (*count)--;
        memmove(cols + 1, cols, *count * sizeof *cols);
        cols[0] = 0;
        (*count)++;
    } else if (cols[0] != 0) {
        size_t i = 0;
        while (cols[i] != 0) i++;
        memmove(cols + 1, cols, i * sizeof *cols);
        cols[0] = 0;
    }
    *calls_inline = !has_calls;
    return SP_OK;
}

static bool matches_any(const regex_t *re, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (regexec(&re[i], name, 0, NULL, 0) == 0) return true;
    return false;
}

/* ---- entry points ------------------------------------------------------------ */

int spi_summary_table_build(spi_summary_table *t, const spi_profile *profile,
                            const spi_summary_options *options, spi_error *err) {
    spi_summary_options defaults = {0};
    const spi_summary_options *o = options ? options : &defaults;
    memset(t, 0, sizeof *t);
    if (!profile) return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "profile is NULL");
    if ((o->include_count && !o->include) || (o->exclude_count && !o->exclude) ||
        (o->rank_count && !o->ranks))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "a filter count without its array");

    int key = SORT_START;
    if (o->sort && *o->sort) {
        size_t i = 0, n = sizeof sort_keys / sizeof sort_keys[0];
        while (i < n && strcmp(sort_keys[i].name, o->sort) != 0) i++;
        if (i == n)
            return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                 "unknown sort key '%s' (known: start, total, calls, avg, min, "
                                 "max, first, last, std, p50, p95, p99, imbalance, exclusive, "
                                 "rank_mean, rank_min, rank_max, threads, other_threads, name)",
                                 o->sort);
        key = sort_keys[i].slot;
    }

    int status = SP_OK;
    size_t *order = NULL, *tmp = NULL;
    regex_t *inc = spi_calloc(o->include_count + 1, sizeof *inc);
    regex_t *exc = spi_calloc(o->exclude_count + 1, sizeof *exc);
    size_t inc_n = 0, exc_n = 0;
    bool *visible = spi_calloc(profile->name_count + 1, sizeof *visible);
    if (!inc || !exc || !visible) {
        status = oom(err);
        goto done;
    }
    status = compile_patterns(o->include, o->include_count, inc, &inc_n, "include", err);
    if (status == SP_OK)
        status = compile_patterns(o->exclude, o->exclude_count, exc, &exc_n, "exclude", err);
    if (status != SP_OK) goto done;
    for (size_t i = 0; i < profile->name_count; i++) {
        const char *name = profile->names[i] ? profile->names[i] : "";
        visible[i] = (inc_n == 0 || matches_any(inc, inc_n, name)) &&
                     !matches_any(exc, exc_n, name);
    }

    status = spi_summary_rows_build(profile, o, visible, &t->rows, &t->row_count, &t->job_ranks,
                                    &t->nesting, err);
    if (status != SP_OK) goto done;
    t->multi_rank = t->job_ranks > 1;

    /* % session and % parent (FORMAT.md 7.5). */
    const spi_summary_row *session = NULL;
    for (size_t i = 0; i < t->row_count && !session; i++)
        if (t->rows[i].parent < 0 && !strcmp(t->rows[i].name, SESSION_REGION))
            session = &t->rows[i];
    double session_total = session ? session->v[SPI_SV_TOTAL] : 0.0;
    for (size_t i = 0; i < t->row_count; i++) {
        spi_summary_row *row = &t->rows[i];
        if (session_total > 0) {
            int slot = o->percent_exclusive && row != session ? SPI_SV_EXCL : SPI_SV_COVERAGE;
            if (o->percent_exclusive && row == session) slot = SPI_SV_TOTAL;
            if (row->has & HAS(slot)) {
                row->v[SPI_SV_PERCENT] = 100.0 * row->v[slot] / session_total;
                row->has |= HAS(SPI_SV_PERCENT);
            }
        }
        if (row->parent >= 0) {
            double pc = t->rows[row->parent].v[SPI_SV_COVERAGE];
            if (pc > 0) {
                row->v[SPI_SV_PARENT_PERCENT] = 100.0 * row->v[SPI_SV_COVERAGE] / pc;
                row->has |= HAS(SPI_SV_PARENT_PERCENT);
            }
        }
    }
    t->session_total = session_total;
    for (size_t i = 0; i < t->row_count; i++) {
        spi_summary_row *row = &t->rows[i];
        /* Own time is never negative (see spi_summary_table_line). */
        static const int own_slots[] = {SPI_SV_EXCL, SPI_SV_XRANK_MEAN, SPI_SV_XRANK_MIN,
                                        SPI_SV_XRANK_MAX};
        for (size_t k = 0; k < 4; k++)
            if (row->v[own_slots[k]] < 0) row->v[own_slots[k]] = 0.0;
        if (!(row->has & HAS(SPI_SV_THREADS))) continue;
        double ranks = row->has & HAS(SPI_SV_RANKS) ? row->v[SPI_SV_RANKS] : 1.0;
        t->threaded = t->threaded || row->v[SPI_SV_THREADS] > ranks;
        t->other_threads = t->other_threads || row->v[SPI_SV_OTHER_THREADS] > 0;
    }

    status = parse_columns(o->columns, session != NULL, t->multi_rank, t->threaded,
                           t->other_threads, t->cols, &t->col_count, &t->calls_inline, err);
    if (status != SP_OK) goto done;

    /* Order: siblings sorted by the key, then a pre-order walk. */
    size_t n = t->row_count;
    order = spi_calloc(n + 1, sizeof *order);
    tmp = spi_calloc(n + 1, sizeof *tmp);
    t->lines = spi_calloc(2 * n + 1, sizeof *t->lines);  /* rows and their "(own)" */
    size_t *first_child = spi_calloc(n + 1, sizeof *first_child);
    size_t *stack = spi_calloc(n + 1, sizeof *stack);
    if (!order || !tmp || !t->lines || !first_child || !stack) {
        spi_free(first_child);
        spi_free(stack);
        status = oom(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++) order[i] = i;
    order_ctx ctx = {t->rows, key};
    spi_sort_indices(order, tmp, n, row_compare, &ctx);
    /* order is grouped by parent (roots first, parent -1); first_child[p]
     * is where p's group starts, n when p has none. */
    for (size_t i = 0; i <= n; i++) first_child[i] = n;
    for (size_t i = n; i-- > 0;) {
        long p = t->rows[order[i]].parent;
        first_child[p < 0 ? n : (size_t)p] = i;
    }
    /* Iterative pre-order: the stack holds positions in `order`. Rows
     * deeper than SPI_SUMMARY_MAX_DEPTH are skipped (counted for the
     * footer), so the output stays linear in the rows shown whatever the
     * depth. */
    size_t depth = 0, shown = 0, too_deep = 0;
    for (size_t i = 0; i < n; i++) too_deep += t->rows[i].depth >= SPI_SUMMARY_MAX_DEPTH;
    if (first_child[n] < n) stack[depth++] = first_child[n];
    while (depth > 0) {
        size_t pos = stack[depth - 1];
        if (pos >= n) {  /* this level is exhausted */
            depth--;
            continue;
        }
        size_t row = order[pos];
        /* advance this level to the next sibling */
        long parent = t->rows[row].parent;
        stack[depth - 1] = pos + 1 < n && t->rows[order[pos + 1]].parent == parent ? pos + 1 : n;
        t->lines[shown++] = row;
        if (t->rows[row].has_children) {
            t->lines[shown++] = n + row;  /* its "(own)" row */
            if (first_child[row] < n && t->rows[row].depth + 1 < SPI_SUMMARY_MAX_DEPTH)
                stack[depth++] = first_child[row];
        }
    }
    spi_free(first_child);
    spi_free(stack);
    t->line_count = shown;
    t->too_deep = too_deep;

done:
    for (size_t i = 0; i < inc_n; i++) regfree(&inc[i]);
    for (size_t i = 0; i < exc_n; i++) regfree(&exc[i]);
    spi_free(inc);
    spi_free(exc);
    spi_free(visible);
    spi_free(order);
    spi_free(tmp);
    if (status != SP_OK) spi_summary_table_free(t);
    return status;
}

const spi_summary_row *spi_summary_table_line(const spi_summary_table *t, size_t line,
                                              spi_summary_row *own) {
    size_t n = t->row_count;
    if (t->lines[line] < n) return &t->rows[t->lines[line]];
    const spi_summary_row *owner = &t->rows[t->lines[line] - n];
    *own = (spi_summary_row){.name = "(own)", .own = true, .parent = -1,
                             .depth = owner->depth + 1};
    /* The owner's total minus its children's time on the owner's own
     * threads (children that ran beside it on other threads are not taken
     * off: their time is not in the owner's total). Never negative: a
     * file whose children outlast their parent on one lane shows 0. */
    double excl = owner->v[SPI_SV_EXCL] > 0 ? owner->v[SPI_SV_EXCL] : 0.0;
    own->v[SPI_SV_TOTAL] = excl;
    own->v[SPI_SV_AVG] = owner->v[SPI_SV_CALLS] > 0 ? excl / owner->v[SPI_SV_CALLS] : 0.0;
    own->has = HAS(SPI_SV_TOTAL) | HAS(SPI_SV_AVG);
    if (t->session_total > 0) {
        own->v[SPI_SV_PERCENT] = 100.0 * excl / t->session_total;
        own->has |= HAS(SPI_SV_PERCENT);
    }
    if (owner->v[SPI_SV_COVERAGE] > 0) {
        own->v[SPI_SV_PARENT_PERCENT] = 100.0 * excl / owner->v[SPI_SV_COVERAGE];
        own->has |= HAS(SPI_SV_PARENT_PERCENT);
    }
    /* per rank: the owner's exclusive totals, spread the same way */
    static const int from[] = {SPI_SV_XRANK_MEAN, SPI_SV_XRANK_MIN, SPI_SV_XRANK_MAX, SPI_SV_XIMB};
    static const int to[] = {SPI_SV_RANK_MEAN, SPI_SV_RANK_MIN, SPI_SV_RANK_MAX, SPI_SV_IMB};
    for (size_t k = 0; k < 4; k++)
        if (owner->has & HAS(from[k])) {
            own->v[to[k]] = owner->v[from[k]];
            own->has |= HAS(to[k]);
        }
    return own;
}

void spi_summary_table_free(spi_summary_table *t) {
    if (!t) return;
    spi_free(t->rows);
    spi_free(t->lines);
    memset(t, 0, sizeof *t);
}
