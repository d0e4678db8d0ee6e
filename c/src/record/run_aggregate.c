/*
 * run_aggregate.c - a stopped aggregate-mode session into one rank's
 * profile: the call paths of every thread, and one aggregate row per
 * region summed over paths and threads (the aggregate layout's rows, which
 * is all the Python reader looks at).
 *
 * Paths keep their thread: the table is what each thread recorded, in the
 * order it first saw each path, so a parent always precedes its children
 * (the file's invariant). The live threads that are not OpenMP workers
 * come first, then the exited threads' paths from the session's folded
 * table (spi_path_fold, recorder_retire.h), each with the one thread whose
 * calls it holds, or thread -1 (FORMAT.md: unknown) when several exited
 * threads' calls were added into it, then the live workers. A worker's
 * root paths hang below a stand-in for the path its team was forked in
 * (SPI_PATH_HOSTED, on the main thread, which therefore comes before
 * them); they get that path as parent, as a trace gives the worker's root
 * calls the forking call (openmp.h), and the stand-in itself is no path.
 * Its exclusive time keeps the workers' time: they ran beside it. A path
 * whose calls were all still open at finalize has count 0 and is dropped;
 * its paths below become roots, as a trace makes the completed children
 * of an open call roots.
 *
 * Standard deviation: the recorder kept the exact sum of squared durations
 * in 128 bits; m2 = sum(d^2) - total^2 / count is formed once here in long
 * double, whose 64-bit mantissa keeps the cancellation error far below a
 * nanosecond squared per call for any realistic run.
 */
#include "record/run.h"

#include <stdlib.h>

#include "util/alloc.h"
#include "record/registry.h"

static double path_m2(const spi_path_node *n) {
    if (n->count == 0) return 0.0;
    long double mean = (long double)n->total_ns / (long double)n->count;
    long double m2 = (long double)n->sum_squares - mean * (long double)n->total_ns;
    return m2 > 0 ? (double)m2 : 0.0;
}

/* The folded table's times are still TSC ticks when the session recorded
 * on the TSC: recorder_ticks.c converted every thread's paths through the
 * map of all the session's anchors, and the folded nodes must go through
 * the very same map. So the same conversion runs on a stand-in session
 * whose one thread holds the folded nodes and whose anchors are all the
 * session's (the map is built from the same anchors, in any order).
 * SP_OK or SP_ERR_OUT_OF_MEMORY (the nodes then stay in ticks). */
static int convert_fold(const spi_session *session) {
    spi_path_fold *fold = session->fold;
    if (!fold || !fold->ticks || session->tsc) return SP_OK;
    size_t total = session->anchors.count;
    for (const spi_thread *t = session->threads; t; t = t->next) total += t->anchors.count;
    spi_anchor *all = spi_malloc((total ? total : 1) * sizeof *all);
    if (!all) return SP_ERR_OUT_OF_MEMORY;
    size_t n = 0;
    for (size_t i = 0; i < session->anchors.count; i++) all[n++] = session->anchors.items[i];
    for (const spi_thread *t = session->threads; t; t = t->next)
        for (size_t i = 0; i < t->anchors.count; i++) all[n++] = t->anchors.items[i];
    spi_thread holder = {.aggregate = true, .tsc = true, .nodes = fold->nodes,
                         .node_count = fold->count, .node_capacity = fold->capacity};
    spi_session stand_in = {.threads = &holder, .threads_tail = &holder, .thread_count = 1,
                            .aggregate = true, .tsc = true,
                            .anchors = {.items = all, .count = n, .capacity = total}};
    int status = spi_recorder_convert_ticks(&stand_in);
    spi_free(all);
    if (status == SP_OK) fold->ticks = false;
    return status;
}

/* The fork host's node index -> index among the rank's paths (-1: not a
 * path), kept for the stand-ins that name it (one thread publishes fork
 * paths: recorder_state.h). */
typedef struct path_index {
    int thread;               /* the host's thread index; -1: none added */
    int64_t *of;
    size_t count;
} path_index;

/* The path a hosted stand-in stands for, or -1 (its host not added, or
 * its call still open at finalize: the worker's paths become roots, as a
 * trace makes the calls inside an open call roots). */
static int64_t hosted_path(const spi_path_node *n, const path_index *host) {
    if (n->host_thread != host->thread || host->thread < 0) return -1;
    return n->host_node >= 0 && (size_t)n->host_node < host->count ? host->of[n->host_node] : -1;
}

/* One table's paths (a thread's, or the folded one) into the profile and
 * their rows' sums: `thread` is the thread of every path, or `threads` (not
 * NULL) gives each path's; `host` the fork host's index, when added.
 * `kept` (not NULL) gets this table's index, for the caller to free.
 * SP_OK or SP_ERR_OUT_OF_MEMORY. */
static int add_paths(spi_profile *profile, const int32_t *row_of_region, uint32_t rank,
                     const spi_path_node *nodes, size_t count, int thread,
                     const int32_t *threads, const path_index *host, path_index *kept) {
    /* this table's node index -> index among the rank's paths */
    int64_t *index_of = spi_malloc((count ? count : 1) * sizeof *index_of);
    if (!index_of) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < count; i++) {
        const spi_path_node *n = &nodes[i];
        index_of[i] = -1;
        if (n->region == SPI_PATH_HOSTED) index_of[i] = hosted_path(n, host);
        if (n->count == 0) continue;
        int64_t parent = n->parent >= 0 ? index_of[n->parent] : -1;
        spi_row *row = &profile->rows[row_of_region[n->region]];
        double m2 = path_m2(n);
        index_of[i] = (int64_t)profile->path_count;
        profile->paths[profile->path_count++] = (spi_call_path){
            .rank = rank, .region = row->region, .parent = parent,
            .thread = threads ? (threads[i] >= 0 ? threads[i] : -1) : thread,
            .count = n->count, .recursions = n->recursions, .total = n->total_ns, .minimum = n->min_ns,
            .maximum = n->max_ns, .exclusive = n->exclusive_ns, .m2 = m2,
            .start_minimum = n->start_min_ns, .end_maximum = n->end_max_ns};
        row->aggregate_count += n->count;
        row->aggregate_total += n->total_ns;
        row->aggregate_exclusive += n->exclusive_ns;
        if (n->min_ns < row->aggregate_minimum) row->aggregate_minimum = n->min_ns;
        if (n->max_ns > row->aggregate_maximum) row->aggregate_maximum = n->max_ns;
    }
    if (kept) *kept = (path_index){thread, index_of, count};
    else spi_free(index_of);
    return SP_OK;
}

int spi_run_collect_aggregate(const spi_session *session, uint32_t rank, spi_profile *profile,
                              spi_run_report *report) {
    int status = convert_fold(session);
    if (status != SP_OK) return status;
    const spi_path_fold *fold = session->fold;
    int region_count = spi_registry_count();
    int32_t *row_of_region = spi_malloc((size_t)(region_count ? region_count : 1) * sizeof(int32_t));
    size_t path_total = fold ? fold->count : 0;
    for (const spi_thread *t = session->threads; t; t = t->next) path_total += t->node_count;
    profile->paths = spi_calloc(path_total ? path_total : 1, sizeof *profile->paths);
    status = row_of_region && profile->paths ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    for (int r = 0; row_of_region && r < region_count; r++) row_of_region[r] = -1;

    /* Regions in registration order of their first counted path, like the
     * trace's rows: one pass to number them, one to fill. */
    size_t rows = 0;
    for (size_t i = 0; fold && i < fold->count && status == SP_OK; i++)
        if (fold->nodes[i].count && row_of_region[fold->nodes[i].region] < 0)
            row_of_region[fold->nodes[i].region] = 0;
    for (const spi_thread *t = session->threads; t && status == SP_OK; t = t->next) {
        bool counted = t->folded; /* its calls are in the folded table */
        for (size_t i = 0; i < t->node_count; i++) {
            if (t->nodes[i].count == 0) continue;
            counted = true;
            if (row_of_region[t->nodes[i].region] < 0) row_of_region[t->nodes[i].region] = 0;
        }
        if (counted) report->recording_threads++;
    }
    for (int r = 0; r < region_count && status == SP_OK; r++)
        if (row_of_region[r] == 0 || row_of_region[r] > 0) row_of_region[r] = (int32_t)rows++;
    if (status == SP_OK) {
        profile->rows = spi_calloc(rows ? rows : 1, sizeof *profile->rows);
        profile->names = spi_calloc(rows ? rows : 1, sizeof *profile->names);
        if (!profile->rows || !profile->names) status = SP_ERR_OUT_OF_MEMORY;
    }
    for (int r = 0; r < region_count && status == SP_OK; r++) {
        if (row_of_region[r] < 0) continue;
        spi_row *row = &profile->rows[row_of_region[r]];
        profile->names[row_of_region[r]] = spi_strdup(spi_registry_get(r)->text);
        if (!profile->names[row_of_region[r]]) status = SP_ERR_OUT_OF_MEMORY;
        *row = (spi_row){.region = (uint32_t)row_of_region[r], .rank = rank, .aggregate = true,
                         .exclusive_total = -1, .source_line = -1,
                         .aggregate_minimum = INT64_MAX, .aggregate_maximum = INT64_MIN};
    }
    profile->name_count = profile->row_count = status == SP_OK ? rows : 0;

    /* the live threads that are not workers (the fork host among them),
     * then the fold, then the workers, whose stand-ins name the host */
    path_index host = {.thread = -1};
    for (const spi_thread *t = session->threads; t && status == SP_OK; t = t->next)
        if (!t->omp_worker)
            status = add_paths(profile, row_of_region, rank, t->nodes, t->node_count, t->index,
                               NULL, &host, t->omp_fork_host && host.thread < 0 ? &host : NULL);
    if (fold && status == SP_OK)
        status = add_paths(profile, row_of_region, rank, fold->nodes, fold->count, -1,
                           fold->threads, &host, NULL);
    for (const spi_thread *t = session->threads; t && status == SP_OK; t = t->next)
        if (t->omp_worker)
            status = add_paths(profile, row_of_region, rank, t->nodes, t->node_count, t->index,
                               NULL, &host, NULL);
    spi_free(host.of);
    for (size_t i = 0; i < profile->row_count; i++)
        profile->rows[i].exclusive_total = profile->rows[i].aggregate_exclusive;
    profile->aggregate = true;
    profile->event_count = 0;
    spi_free(row_of_region);
    /* the rows' statistics (std, first start, last end) from their paths */
    return status == SP_OK ? spi_profile_stats_from_paths(profile) : status;
}
