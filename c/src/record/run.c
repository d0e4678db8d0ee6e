/*
 * run.c - from per-thread event chunks to per-(rank, region) rows.
 *
 * Ids: thread t numbered its calls 0..n_t-1 in begin order; the rank-wide id
 * is that number plus the total count of the threads attached before t.
 * Parents are always earlier on the same thread, so parent id < child id
 * holds, as FORMAT.md requires. Parents are recovered from the nesting of
 * each thread's events, walked backward (call_parents.h). Calls still open
 * at finalize are dropped, and so are calls that ended past the buffer
 * limit; a completed child of such a call becomes a root (-1), since its
 * parent is not in the file.
 *
 * Exclusive time: spi_exclusive_add (call_parents.h), in the walk that
 * fills the rows. Linear, and exact for the recorded tree.
 *
 * Rows keep calls in start order (ties: lower id first), so start_deltas
 * are non-negative and "first"/"last" mean what a user expects. Events are
 * appended at end time, so only nested calls of the same region (recursion)
 * or several threads make a row unsorted; it is sorted only then.
 */
#include "record/run.h"

#include <inttypes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "record/call_parents.h"
#include "record/openmp.h"
#include "record/run_threads.h"
#include "record/registry.h"

typedef struct call_record {
    int64_t start;
    int64_t duration;
    int64_t call_id;
    int64_t parent_id;
    int64_t thread;
} call_record;

static int compare_calls(const void *a, const void *b) {
    const call_record *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->call_id > y->call_id) - (x->call_id < y->call_id);
}

static int allocate_row_columns(spi_row *row, int with_threads) {
    size_t n = (size_t)row->count;
    row->starts = spi_malloc(n * sizeof(int64_t));
    row->durations = spi_malloc(n * sizeof(int64_t));
    row->call_ids = spi_malloc(n * sizeof(int64_t));
    row->parent_ids = spi_malloc(n * sizeof(int64_t));
    if (with_threads) row->thread_ids = spi_malloc(n * sizeof(int64_t));
    return row->starts && row->durations && row->call_ids && row->parent_ids &&
                   (!with_threads || row->thread_ids)
               ? SP_OK
               : SP_ERR_OUT_OF_MEMORY;
}

/* Where each thread's calls go in the rows: a row holds its calls thread
 * by thread in attach order (each thread's in end order: start order
 * unless recursion interleaves them), so a row of threads that ran one
 * after another needs no sort. The walk visits the threads in
 * spi_run_walk_order and each thread backward, so a thread's calls of a
 * region fill its segment from the end: `end` is one past it. */
typedef struct row_segment {
    uint32_t region;          /* handle */
    uint64_t end;             /* in the region's row */
} row_segment;

typedef struct row_layout {
    row_segment *segments;    /* thread by thread, attach order */
    size_t *first;            /* [thread_count + 1]: a thread's segments */
    size_t count;
    size_t capacity;
} row_layout;

/* Count each region's calls (calls[], zeroed, [region_count]) and lay out
 * the threads' segments. SP_OK or SP_ERR_OUT_OF_MEMORY. */
static int count_calls(const spi_session *session, int region_count, uint64_t *calls,
                       row_layout *layout, spi_run_report *report) {
    size_t thread_count = (size_t)session->thread_count;
    uint64_t *here = spi_calloc((size_t)region_count + 1, sizeof *here);
    uint32_t *touched = spi_malloc(((size_t)region_count + 1) * sizeof *touched);
    layout->first = spi_malloc((thread_count + 1) * sizeof *layout->first);
    int status = here && touched && layout->first ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    size_t index = 0;
    for (const spi_thread *t = session->threads; t && status == SP_OK; t = t->next, index++) {
        size_t regions = 0;
        SPI_FOR_EACH_EVENT(t, e) {
            uint32_t r = spi_event_region(e);
            if (here[r]++ == 0) touched[regions++] = r;
        }
        if (regions) report->recording_threads++;
        layout->first[index] = layout->count;
        if (layout->count + regions > layout->capacity) {
            size_t capacity = layout->capacity ? layout->capacity * 2 : 64;
            while (capacity < layout->count + regions) capacity *= 2;
            row_segment *grown = spi_reallocarray(layout->segments, capacity, sizeof *grown);
            if (!grown) {
                status = SP_ERR_OUT_OF_MEMORY;
                break;
            }
            layout->segments = grown;
            layout->capacity = capacity;
        }
        for (size_t k = 0; k < regions; k++) {
            uint32_t r = touched[k];
            calls[r] += here[r];
            layout->segments[layout->count++] = (row_segment){r, calls[r]};
            here[r] = 0;
        }
    }
    if (status == SP_OK) layout->first[index] = layout->count;
    spi_free(here);
    spi_free(touched);
    return status;
}

/* Fill rows[] (sized by the caller, counts set) from the threads in
 * spi_run_walk_order, and add each region's exclusive time into
 * exclusive[region] (spi_exclusive_add); `fold`, when not NULL, takes
 * every call too (run_paths.h). hosts (may be NULL): the OpenMP fork
 * parents of worker roots. SP_OK or SP_ERR_OUT_OF_MEMORY. */
static int fill_rows(spi_session *session, spi_row *rows, size_t row_count,
                     const int32_t *row_of_region, int with_threads, const int64_t *bases,
                     const spi_omp_hosts *hosts, const row_layout *layout, int64_t *exclusive,
                     spi_call_fold *fold) {
    spi_thread **threads = NULL;
    size_t *order = NULL;
    uint64_t *left = spi_malloc((row_count ? row_count : 1) * sizeof *left);
    int status = left ? spi_run_walk_order(session, &threads, &order) : SP_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; k < (size_t)session->thread_count && status == SP_OK; k++) {
        size_t index = order[k];
        spi_thread *t = threads[index];
        int64_t base = bases[index];
        for (size_t s = layout->first[index]; s < layout->first[index + 1]; s++)
            left[row_of_region[layout->segments[s].region]] = layout->segments[s].end;
        if (fold) spi_call_fold_thread(fold, t, index);
        spi_call_walk walk;
        spi_call_walk_open(&walk, session, t, false);
        const spi_event *e;
        const spi_enclosing_call *parent;
        while ((status = spi_call_walk_next(&walk, &e, &parent)) == SP_OK && e) {
            spi_exclusive_add(exclusive, e, parent);
            int32_t r = row_of_region[spi_event_region(e)];
            spi_row *row = &rows[r];
            uint64_t i = --left[r];
            int64_t parent_id = spi_run_parent_id(t, e, parent, base, hosts);
            row->starts[i] = e->start_ns;
            row->durations[i] = e->duration_ns;
            row->call_ids[i] = base + spi_event_sequence(e);
            row->parent_ids[i] = parent_id;
            if (with_threads) row->thread_ids[i] = t->index;
            if (fold) spi_call_fold_call(fold, &walk, e, parent, parent_id);
        }
        spi_call_walk_close(&walk);
    }
    spi_free(left);
    spi_free(threads);
    spi_free(order);
    return status;
}

/* Sort a row's calls by (start, id) when they are not already in order. */
static int sort_row(spi_row *row) {
    uint64_t n = row->count;
    int sorted = 1;
    for (uint64_t i = 1; i < n && sorted; i++)
        sorted = row->starts[i - 1] < row->starts[i] ||
                 (row->starts[i - 1] == row->starts[i] && row->call_ids[i - 1] < row->call_ids[i]);
    if (sorted) return SP_OK;
    call_record *records = spi_malloc((size_t)n * sizeof *records);
    if (!records) return SP_ERR_OUT_OF_MEMORY;
    for (uint64_t i = 0; i < n; i++)
        records[i] = (call_record){row->starts[i], row->durations[i], row->call_ids[i],
                                   row->parent_ids[i], row->thread_ids ? row->thread_ids[i] : 0};
    qsort(records, (size_t)n, sizeof *records, compare_calls);
    for (uint64_t i = 0; i < n; i++) {
        row->starts[i] = records[i].start;
        row->durations[i] = records[i].duration;
        row->call_ids[i] = records[i].call_id;
        row->parent_ids[i] = records[i].parent_id;
        if (row->thread_ids) row->thread_ids[i] = records[i].thread;
    }
    spi_free(records);
    return SP_OK;
}

/* Lines naming a call still open at finalize; past them one line gives
 * the total (128 threads with open calls once printed 39,426 lines). */
#define OPEN_CALL_REPORT_LIMIT 10

void spi_run_report_open_calls(const spi_session *session, spi_run_report *report) {
    uint64_t signal_refused = 0, open_before = report->open_calls, open_printed = 0;
    for (const spi_thread *t = session->threads; t; t = t->next) {
        for (size_t d = 0; d < t->depth; d++) {
            const spi_region_name *name = spi_registry_get((int)SPI_FRAME_REGION(&t->stack[d]));
            if (open_printed < OPEN_CALL_REPORT_LIMIT) {
                open_printed++;
                spi_diag("region \"%s\" was still open at finalize on thread %d (%s); "
                         "that call is dropped, its completed calls inside are kept",
                         name ? name->text : "?", t->index, t->name);
            }
            report->open_calls++;
            size_t used = strlen(report->open_regions);
            if (used + 8 < sizeof report->open_regions)
                snprintf(report->open_regions + used, sizeof report->open_regions - used, "%s%s",
                         used ? ", " : "", name ? name->text : "?");
        }
        report->dropped_events += t->dropped_events;
        signal_refused += t->signal_refused;
    }
    uint64_t open = report->open_calls - open_before;
    if (open > open_printed)
        spi_diag("%" PRIu64 " calls in all were still open at finalize and dropped (%" PRIu64
                 " more than the lines above name)",
                 open, open - open_printed);
    if (signal_refused)
        spi_diag("%" PRIu64 " call%s made by signal handlers that interrupted a recording call "
                 "on their thread %s not recorded",
                 signal_refused, signal_refused == 1 ? "" : "s",
                 signal_refused == 1 ? "was" : "were");
}

/* Whether the in-memory rows (40 bytes a call, more than the 24-byte
 * events they are made from, which stay mapped until the rows are done)
 * would break a bounded trace's promise: peak memory within the buffer
 * limit plus ROW_SLACK_BYTES. Past that, run_stream.c serves the same rows
 * from the spill file in bounded memory. */
#define ROW_SLACK_BYTES ((uint64_t)32 << 20)
static bool rows_too_large(const spi_session *session) {
    uint64_t events = 0;
    for (const spi_thread *t = session->threads; t; t = t->next)
        for (const spi_chunk *c = t->head; c; c = c->next) events += c->used;
    return events * sizeof(call_record) > ROW_SLACK_BYTES;
}

int spi_run_collect(spi_session *session, uint32_t rank, spi_profile *profile,
                    spi_run_report *report, spi_run_paths *paths) {
    if (paths) *paths = (spi_run_paths){.status = SP_OK};
    *report = (spi_run_report){0};
    spi_run_report_open_calls(session, report);
    /* a bounded trace that wrote to its spill file, or a bounded or
     * unbounded trace whose rows would not fit beside its events in the
     * slack: rows streamed. An unbounded trace's events may already be
     * all the memory the process can have (ulimit -v), and the stream
     * releases them as it reads them; its sorted runs go to a spill file
     * opened beside the output now (if that fails, rows in memory). */
    if (!session->aggregate && session->buffer_limit_bytes == 0 && !session->spill &&
        session->spill_label && rows_too_large(session)) {
        spi_error err;
        spi_error_clear(&err);
        (void)spi_spill_open(&session->spill, session->spill_label, &err); /* else in memory */
    }
    if (!session->aggregate &&
        (spi_session_spilled(session) || (session->spill && rows_too_large(session)))) {
        int status = spi_run_collect_stream(session, rank, profile, report, paths);
        if (status != SP_OK) spi_profile_free(profile);
        return status;
    }
    if (session->aggregate) {
        int status = spi_run_collect_aggregate(session, rank, profile, report);
        if (status == SP_OK && report->recording_threads > 1)
            status = spi_run_fill_threads(session, rank, profile);
        if (status != SP_OK) spi_profile_free(profile);
        return status;
    }

    int region_count = spi_registry_count();
    uint64_t *calls = spi_calloc((size_t)region_count + 1, sizeof *calls);
    int64_t *exclusive = spi_calloc((size_t)region_count + 1, sizeof *exclusive);
    int32_t *row_of_region = spi_malloc((size_t)(region_count ? region_count : 1) * sizeof(int32_t));
    row_layout layout = {0};
    int status = calls && exclusive && row_of_region ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    if (status == SP_OK) status = count_calls(session, region_count, calls, &layout, report);

    /* One row per region with calls, in registration order; the region
     * table holds exactly those names (the writer skips zero-call regions). */
    size_t rows = 0;
    for (int r = 0; r < region_count && status == SP_OK; r++)
        row_of_region[r] = calls[r] ? (int32_t)rows++ : -1;
    if (status == SP_OK) {
        profile->rows = spi_calloc(rows, sizeof *profile->rows);
        profile->names = spi_calloc(rows, sizeof *profile->names);
        if (!profile->rows || !profile->names) status = SP_ERR_OUT_OF_MEMORY;
    }
    int with_threads = report->recording_threads > 1;
    for (int r = 0; r < region_count && status == SP_OK; r++) {
        if (row_of_region[r] < 0) continue;
        spi_row *row = &profile->rows[row_of_region[r]];
        profile->names[profile->name_count] = spi_strdup(spi_registry_get(r)->text);
        if (!profile->names[profile->name_count]) status = SP_ERR_OUT_OF_MEMORY;
        row->region = (uint32_t)profile->name_count++;
        row->rank = rank;
        row->count = calls[r];
        row->source_line = -1;
        if (status == SP_OK) status = allocate_row_columns(row, with_threads);
        profile->row_count++;
    }
    /* OpenMP: the fork parents of worker threads' roots (openmp.h) */
    spi_omp_hosts *hosts = NULL;
    int64_t *bases = spi_run_thread_bases(session);
    if (!bases && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
    if (status == SP_OK && spi_run_has_omp_workers(session)) status = spi_omp_hosts_build(&hosts, session, bases);
    spi_call_fold fold = {.status = SP_ERR_OUT_OF_MEMORY};
    if (status == SP_OK && paths) /* a failure is the fold's status only */
        (void)spi_call_fold_open(&fold, session, rank, bases, hosts != NULL);
    if (status == SP_OK)
        status = fill_rows(session, profile->rows, profile->row_count, row_of_region, with_threads,
                           bases, hosts, &layout, exclusive, paths ? &fold : NULL);
    if (paths) spi_call_fold_finish(&fold, status, paths);
    for (int r = 0; r < region_count && status == SP_OK; r++)
        if (row_of_region[r] >= 0) profile->rows[row_of_region[r]].exclusive_total = exclusive[r];
    spi_omp_hosts_free(hosts);
    spi_free(bases);
    for (size_t i = 0; i < profile->row_count && status == SP_OK; i++) {
        spi_row *row = &profile->rows[i];
        status = sort_row(row);
        spi_stats_compute(&row->stats, row->starts, row->durations, NULL, row->count, NULL);
        profile->event_count += row->count;
    }
    profile->event_columns = SPI_EV_BIT(SPI_EV_CALL_IDS) | SPI_EV_BIT(SPI_EV_PARENT_IDS);
    if (with_threads) profile->event_columns |= SPI_EV_BIT(SPI_EV_THREAD_IDS);
    if (status == SP_OK && with_threads) status = spi_run_fill_threads(session, rank, profile);

    spi_free(calls);
    spi_free(exclusive);
    spi_free(row_of_region);
    spi_free(layout.segments);
    spi_free(layout.first);
    if (status != SP_OK) spi_profile_free(profile);
    if (status != SP_OK && paths && paths->status == SP_OK) { /* no profile: no table */
        spi_free(paths->paths);
        *paths = (spi_run_paths){.status = status};
    }
    return status;
}
