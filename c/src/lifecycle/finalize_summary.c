/*
 * finalize_summary.c - the end-of-run summary table in memory that grows
 * with what the table shows (call paths), never with the calls recorded
 * (finalize_summary.h).
 *
 * The table used to come from the calls: one rank's in memory, a bounded
 * trace's or a multi-rank job's read back from the file just written,
 * every call of every rank on rank 0 (2.8 GB for 20M calls of one region;
 * rank 0 growing with the job). Now each rank folds its calls into call
 * paths while its events are still in memory or in its spill file
 * (run_paths.h: in the collect's own walk, no second pass), rank 0
 * folds the ranks' paths by name into one pool as they arrive, one rank
 * at a time (job.h, profile/path_pool.h: its memory grows with the
 * distinct paths, not with the ranks), and
 * the table is printed from the paths plus the rows' stored statistics
 * (a multi-rank job's read back with SPI_READ_SUMMARY_ONLY: the index
 * only). The tree, counts, totals, own times, min, max, std and the
 * per-rank spread are exact; percentiles and first/last, which need the
 * calls, are not among the finalize table's columns.
 *
 * Aggregate mode already has its paths in the profile, and its file is
 * small whatever the calls: it prints as before.
 */
#include "lifecycle/finalize_summary.h"

#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "analysis/summary.h"
#include "format/reader.h"
#include "job/job.h"
#include "record/clock.h"
#include "record/registry.h"

bool spi_finalize_summary_wanted(bool quiet) {
    const char *wanted = getenv("SCOPE_PROFILER_SUMMARY");
    return !quiet && !(wanted && strcmp(wanted, "0") == 0);
}

void spi_finalize_summary_start(spi_finalize_summary *s, const spi_session *session,
                                bool wanted) {
    *s = (spi_finalize_summary){.wanted = wanted, .mine = {.status = SP_OK}};
    spi_path_pool_init(&s->pool);
    s->needs_paths = wanted && !session->aggregate;
}

spi_run_paths *spi_finalize_summary_sink(spi_finalize_summary *s) {
    return s->needs_paths ? &s->mine : NULL;
}

int spi_finalize_summary_gather(spi_finalize_summary *s, const spi_profile *local,
                                spi_error *err) {
    int64_t start = spi_clock_now_ns();
    /* collective with MPI: every rank calls it, with no paths when it has none */
    /* rank 0 decides: without a table to print it asks for nothing */
    int status = spi_job_gather_paths(s->mine.paths, s->mine.count, local, s->mine.status,
                                      s->needs_paths ? &s->pool : NULL, err);
    if (s->mine.status == SP_OK && status != SP_OK) {
        s->mine.status = status;
        s->gather_failed = true;
    }
    if (spi_job_size() > 1) { /* pooled on rank 0 now; only a one-rank table reads them */
        spi_free(s->mine.paths);
        s->mine.paths = NULL;
        s->mine.count = 0;
    }
    s->ns += spi_clock_now_ns() - start;
    return status;
}

/* A name -> index table over a profile's names (open addressing). */
typedef struct name_index {
    const spi_profile *profile;
    size_t *slots;            /* index + 1, 0 = empty */
    size_t capacity;
} name_index;

static int name_index_build(name_index *x, const spi_profile *p) {
    x->profile = p;
    x->capacity = 16;
    while (x->capacity < 2 * p->name_count + 2) x->capacity *= 2;
    x->slots = spi_calloc(x->capacity, sizeof *x->slots);
    if (!x->slots) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < p->name_count; i++) {
        size_t j = spi_name_hash(p->names[i], strlen(p->names[i])) & (x->capacity - 1);
        while (x->slots[j]) j = (j + 1) & (x->capacity - 1);
        x->slots[j] = i + 1;
    }
    return SP_OK;
}

static long name_index_find(const name_index *x, const char *name) {
    size_t j = spi_name_hash(name, strlen(name)) & (x->capacity - 1);
    for (; x->slots[j]; j = (j + 1) & (x->capacity - 1))
        if (strcmp(x->profile->names[x->slots[j] - 1], name) == 0) return (long)x->slots[j] - 1;
    return -1;
}

/* The pooled paths' regions (indices of the pool's names) as indices of
 * job->names. SP_OK, SP_ERR_OUT_OF_MEMORY, or SP_ERR_INVALID_ARGUMENT when
 * a name is missing from the file (then the table is printed flat). */
static int map_regions(spi_finalize_summary *s, const spi_profile *job) {
    name_index x;
    if (name_index_build(&x, job) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    int status = SP_OK;
    spi_path_pool *pool = &s->pool;
    long *index = spi_calloc(pool->name_count + 1, sizeof *index);
    if (!index) status = SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < pool->name_count && status == SP_OK; i++) {
        index[i] = name_index_find(&x, pool->names[i]);
        if (index[i] < 0) status = SP_ERR_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < pool->count && status == SP_OK; i++)
        pool->paths[i].region = (uint32_t)index[pool->paths[i].region];
    spi_free(index);
    spi_free(x.slots);
    return status;
}

void spi_finalize_summary_print(spi_finalize_summary *s, const spi_profile *local,
                                uint32_t ranks, bool aggregate, const char *path,
                                bool written) {
    if (!s->wanted || spi_job_rank() != 0) return;
    spi_error err;
    spi_error_clear(&err);
    if (aggregate) {
        /* per-path totals: the file is small whatever the calls */
        if (ranks > 1 && written) {
            spi_profile job = {0};
            if (spi_profile_read(&job, path, 0, &err) == SP_OK)
                spi_summary_print(&job, stdout, NULL, &err);
            spi_profile_free(&job);
        } else if (local->row_count) {
            spi_summary_print(local, stdout, NULL, &err);
        }
    } else if (ranks == 1) {
        /* this rank's rows (their statistics) and its own paths */
        spi_profile view = *local;
        view.paths = s->mine.status == SP_OK ? s->mine.paths : NULL;
        view.path_count = s->mine.status == SP_OK ? s->mine.count : 0;
        if (view.row_count) spi_summary_print(&view, stdout, NULL, &err);
    } else if (written) {
        spi_profile job = {0};
        if (spi_profile_read(&job, path, SPI_READ_SUMMARY_ONLY, &err) == SP_OK) {
            if (s->mine.status == SP_OK && s->pool.count && map_regions(s, &job) == SP_OK) {
                job.paths = s->pool.paths; /* borrowed: taken back before the free */
                job.path_count = s->pool.count;
                job.path_ranks = s->pool.ranks;
            }
            spi_summary_print(&job, stdout, NULL, &err);
            job.paths = NULL;
            job.path_count = 0;
            job.path_ranks = NULL;
        }
        spi_profile_free(&job);
    }
    /* What the table lacks, and never a failed write: the file is complete. */
    if (s->gather_failed && s->mine.status == SP_ERR_OUT_OF_MEMORY)
        spi_diag("summary: rank 0 ran out of memory gathering the other ranks' call paths; "
                 "the table above has one row per region (the file is complete)");
    else if (s->mine.status == SP_ERR_OUT_OF_MEMORY)
        spi_diag("summary: out of memory while folding the calls into paths; "
                 "the table above has one row per region");
    /* A nesting problem still prints a flat table; say why in one line. */
    if (err.status != SP_OK) spi_diag("summary: %s", err.message);
    fflush(stdout);
}

void spi_finalize_summary_free(spi_finalize_summary *s) {
    spi_free(s->mine.paths);
    spi_path_pool_free(&s->pool);
    *s = (spi_finalize_summary){0};
}
