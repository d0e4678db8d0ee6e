/*
 * run_aggregate.c - a stopped aggregate-mode session into one rank's
 * profile: the call paths of every thread, and one aggregate row per
 * region summed over paths and threads (the aggregate layout's rows, which
 * is all the Python reader looks at).
 *
 * Paths keep their thread: the table is what each thread recorded, in the
 * order it first saw each path, so a parent always precedes its children
 * (the file's invariant). A path whose calls were all still open at
 * finalize has count 0 and is dropped; its paths below become roots, as a
 * trace makes the completed children of an open call roots.
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

int spi_run_collect_aggregate(const spi_session *session, uint32_t rank, spi_profile *profile,
                              spi_run_report *report) {
    int region_count = spi_registry_count();
    int32_t *row_of_region = spi_malloc((size_t)(region_count ? region_count : 1) * sizeof(int32_t));
    size_t path_total = 0;
    for (const spi_thread *t = session->threads; t; t = t->next) path_total += t->node_count;
    profile->paths = spi_calloc(path_total ? path_total : 1, sizeof *profile->paths);
    int status = row_of_region && profile->paths ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    for (int r = 0; row_of_region && r < region_count; r++) row_of_region[r] = -1;

    /* Regions in registration order of their first counted path, like the
     * trace's rows: one pass to number them, one to fill. */
    size_t rows = 0;
    for (const spi_thread *t = session->threads; t && status == SP_OK; t = t->next) {
        bool counted = false;
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

    for (const spi_thread *t = session->threads; t && status == SP_OK; t = t->next) {
        /* this thread's node index -> index among the rank's paths */
        int64_t *index_of = spi_malloc((t->node_count ? t->node_count : 1) * sizeof *index_of);
        if (!index_of) {
            status = SP_ERR_OUT_OF_MEMORY;
            break;
        }
        for (size_t i = 0; i < t->node_count; i++) {
            const spi_path_node *n = &t->nodes[i];
            index_of[i] = -1;
            if (n->count == 0) continue;
            int64_t parent = n->parent >= 0 ? index_of[n->parent] : -1;
            spi_row *row = &profile->rows[row_of_region[n->region]];
            double m2 = path_m2(n);
            index_of[i] = (int64_t)profile->path_count;
            profile->paths[profile->path_count++] = (spi_call_path){
                .rank = rank, .region = row->region, .parent = parent, .thread = t->index,
                .count = n->count, .recursions = n->recursions, .total = n->total_ns, .minimum = n->min_ns,
                .maximum = n->max_ns, .exclusive = n->exclusive_ns, .m2 = m2,
                .start_minimum = n->start_min_ns, .end_maximum = n->end_max_ns};
            row->aggregate_count += n->count;
            row->aggregate_total += n->total_ns;
            row->aggregate_exclusive += n->exclusive_ns;
            if (n->min_ns < row->aggregate_minimum) row->aggregate_minimum = n->min_ns;
            if (n->max_ns > row->aggregate_maximum) row->aggregate_maximum = n->max_ns;
        }
        spi_free(index_of);
    }
    for (size_t i = 0; i < profile->row_count; i++)
        profile->rows[i].exclusive_total = profile->rows[i].aggregate_exclusive;
    profile->aggregate = true;
    profile->event_count = 0;
    spi_free(row_of_region);
    /* the rows' statistics (std, first start, last end) from their paths */
    return status == SP_OK ? spi_profile_stats_from_paths(profile) : status;
}
