/*
 * profile_build.c - growing a profile row by row (profile.h): the region
 * table, rows, LIKWID records, and the statistics of every row once its
 * calls are in. The readers of every format and the counters module build
 * profiles through these, so the invariants (ids fit in uint32, stats match
 * the calls, no int64 overflow hides in a damaged file) hold whoever built it.
 */
#include "profile/profile.h"
#include "profile/call_cursor.h"

#include <stdint.h>
#include <string.h>

#include "util/alloc.h"

static uint64_t name_hash(const char *name) {
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 1099511628211u;
    }
    return h;
}

/* Rebuild the slots at twice the names' count (load <= 1/2). */
static int grow_slots(spi_profile *profile) {
    size_t count = 16;
    while (count < 2 * (profile->name_count + 1)) count *= 2;
    uint32_t *slots = spi_calloc(count, sizeof *slots);
    if (!slots) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < profile->name_count; i++) {
        size_t k = (size_t)name_hash(profile->names[i]) & (count - 1);
        while (slots[k]) k = (k + 1) & (count - 1);
        slots[k] = (uint32_t)i + 1;
    }
    spi_free(profile->name_slots);
    profile->name_slots = slots;
    profile->name_slot_count = count;
    return SP_OK;
}

int spi_profile_intern_name(spi_profile *profile, const char *name, uint32_t *id) {
    if ((profile->name_count + 1) * 2 > profile->name_slot_count && grow_slots(profile) != SP_OK)
        return SP_ERR_OUT_OF_MEMORY;
    size_t mask = profile->name_slot_count - 1;
    size_t k = (size_t)name_hash(name) & mask;
    for (; profile->name_slots[k]; k = (k + 1) & mask) {
        uint32_t at = profile->name_slots[k] - 1;
        if (strcmp(profile->names[at], name) == 0) {
            *id = at;
            return SP_OK;
        }
    }
    if (profile->name_count >= UINT32_MAX - 1) return SP_ERR_CORRUPT;
    /* >=: a names array built by someone else has no recorded capacity. */
    if (profile->name_count >= profile->name_capacity) {
        size_t capacity = profile->name_count ? profile->name_count * 2 : 16;
        char **grown = spi_reallocarray(profile->names, capacity, sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        profile->names = grown;
        profile->name_capacity = capacity;
    }
    char *copy = spi_strdup(name);
    if (!copy) return SP_ERR_OUT_OF_MEMORY;
    profile->names[profile->name_count] = copy;
    profile->name_slots[k] = (uint32_t)profile->name_count + 1;
    *id = (uint32_t)profile->name_count++;
    return SP_OK;
}

spi_row *spi_profile_append_row(spi_profile *profile) {
    /* Capacity doubles at 4, 8, 16, ...; it is implied by row_count, so no
     * capacity field is needed in the shared model. */
    size_t count = profile->row_count;
    if (count == 0 || (count >= 4 && (count & (count - 1)) == 0)) {
        size_t capacity = count ? count * 2 : 4;
        spi_row *grown = spi_reallocarray(profile->rows, capacity, sizeof *grown);
        if (!grown) return NULL;
        profile->rows = grown;
    }
    spi_row *row = &profile->rows[profile->row_count++];
    *row = (spi_row){.exclusive_total = -1, .source_line = -1, .aggregate_exclusive = -1};
    return row;
}

static bool add_overflows(int64_t a, int64_t b) {
    return (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
}

/* Exact check that no start + duration, running total of durations or GPU
 * total of a row leaves int64 (only damage can make them). */
static bool row_overflows(const spi_row *row) {
    int64_t total = 0, gpu_total = 0;
    for (uint64_t k = 0; k < row->count; k++) {
        int64_t d = row->durations[k];
        int64_t g = row->gpu_durations ? row->gpu_durations[k] : 0;
        if (add_overflows(row->starts[k], d) || add_overflows(total, d) ||
            (g > 0 && add_overflows(gpu_total, g)))
            return true;
        total += d;
        if (g > 0) gpu_total += g;
    }
    return false;
}

static int out_of_range(const spi_profile *profile, const spi_row *row, const char *path,
                        spi_error *err) {
    return spi_error_set(err, SP_ERR_CORRUPT,
                         "%s: region %s on rank %u has timestamps out of range. The file is "
                         "damaged.",
                         path, row->region < profile->name_count ? profile->names[row->region] : "?",
                         row->rank);
}

/* A row whose calls are in the file (profile->store): two streamed passes,
 * the first for the total (so the mean is known), the range checks, the
 * start order and the order statistics, the second for the squared
 * deviations from the mean, which reads the durations alone (one column
 * decoded again, not two: call_cursor.h), bit for bit what
 * spi_stats_compute gives over the whole row (row_stats.h). The first pass
 * also reads the id columns: every byte of the events is then decoded once
 * while the file is being opened, where a caller that isolates reads of
 * untrusted files (the tools, cli/cli_isolate.c) watches, and not first
 * in the middle of its later work. */
static int stream_row_stats(spi_profile *profile, size_t index, const char *path,
                            spi_error *err) {
    spi_row *row = &profile->rows[index];
    spi_call_cursor cursor;
    spi_call_slice slice;
    spi_stats_stream stream;
    int64_t total = 0, previous = INT64_MIN;
    spi_stats_stream_begin(&stream, row->count, 0);
    int status = spi_call_cursor_open(&cursor, profile, index,
                                      SPI_CURSOR_STARTS | SPI_CURSOR_DURATIONS | SPI_CURSOR_IDS,
                                      0);
    while (status == SP_OK && (status = spi_call_cursor_next(&cursor, &slice, err)) == SP_OK &&
           slice.count) {
        for (size_t k = 0; k < slice.count; k++) {
            int64_t start = slice.starts[k], d = slice.durations[k];
            if (add_overflows(start, d) || add_overflows(total, d)) {
                spi_call_cursor_close(&cursor);
                return out_of_range(profile, row, path, err);
            }
            total += d;
            if (start < previous) row->out_of_start_order = true;
            previous = start;
        }
        spi_stats_stream_add_order(&stream, slice.starts, slice.durations, slice.count);
    }
    spi_call_cursor_close(&cursor);
    if (status != SP_OK) return status;
    spi_stats_stream_set_total(&stream, (uint64_t)total);
    status = spi_call_cursor_open(&cursor, profile, index, SPI_CURSOR_DURATIONS, 0);
    while (status == SP_OK && (status = spi_call_cursor_next(&cursor, &slice, err)) == SP_OK &&
           slice.count)
        spi_stats_stream_add_squares(&stream, slice.durations, slice.count);
    spi_call_cursor_close(&cursor);
    if (status == SP_OK) spi_stats_stream_end(&stream, &row->stats);
    return status;
}

int spi_profile_compute_stats(spi_profile *profile, const char *path, bool with_ends,
                              spi_error *err) {
    profile->event_count = 0;
    for (size_t i = 0; i < profile->row_count; i++) {
        spi_row *row = &profile->rows[i];
        if (row->aggregate) continue;
        if (profile->store) {
            int status = stream_row_stats(profile, i, path, err);
            if (status != SP_OK) return status;
            profile->event_count += row->count;
            continue;
        }
        for (uint64_t k = 1; k < row->count && row->starts && !row->out_of_start_order; k++)
            row->out_of_start_order = row->starts[k] < row->starts[k - 1];
        if (row->count > 0 && (!row->starts || !row->durations)) continue;
        if (with_ends && row->count > 0 &&
            !(row->ends = spi_malloc((size_t)row->count * sizeof *row->ends)))
            return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        /* One fused pass computes the statistics with wrapping arithmetic
         * and says whether an overflow was possible; only then (damaged
         * values) is the row checked exactly, and refused if it overflows. */
        bool safe = spi_stats_compute(&row->stats, row->starts, row->durations,
                                      row->gpu_durations, row->count, row->ends);
        if (!safe && row_overflows(row))
            return spi_error_set(err, SP_ERR_CORRUPT,
                                 "%s: region %s on rank %u has timestamps out of range. "
                                 "The file is damaged.",
                                 path,
                                 row->region < profile->name_count ? profile->names[row->region]
                                                                   : "?",
                                 row->rank);
        profile->event_count += row->count;
    }
    return SP_OK;
}

spi_likwid_record *spi_likwid_record_add(spi_profile *profile, uint32_t rank) {
    spi_likwid_record *grown =
        spi_reallocarray(profile->likwid, profile->likwid_count + 1, sizeof *grown);
    if (!grown) return NULL;
    profile->likwid = grown;
    spi_likwid_record *r = &profile->likwid[profile->likwid_count++];
    *r = (spi_likwid_record){.rank = rank, .group_id = -1};
    return r;
}

int spi_profile_stats_from_paths(spi_profile *profile) {
    if (profile->path_count == 0) return SP_OK;
    /* row of (rank, region): rows of one rank are few, a scan per rank
     * block of paths keeps this linear in rows + paths */
    int64_t *row_of = spi_malloc((profile->name_count + 1) * sizeof *row_of);
    uint64_t *pooled = spi_calloc(profile->row_count + 1, sizeof *pooled);
    spi_stats *stats = spi_calloc(profile->row_count + 1, sizeof *stats);
    if (!row_of || !pooled || !stats) {
        spi_free(row_of);
        spi_free(pooled);
        spi_free(stats);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t r = 0; r < profile->row_count; r++)
        stats[r] = (spi_stats){.minimum = INT64_MAX, .maximum = INT64_MIN,
                               .start_minimum = INT64_MAX, .end_maximum = INT64_MIN};
    for (size_t first = 0; first < profile->path_count;) {
        uint32_t rank = profile->paths[first].rank;
        size_t end = first;
        while (end < profile->path_count && profile->paths[end].rank == rank) end++;
        for (size_t i = 0; i <= profile->name_count; i++) row_of[i] = -1;
        for (size_t r = 0; r < profile->row_count; r++)
            if (profile->rows[r].rank == rank && profile->rows[r].aggregate &&
                profile->rows[r].region < profile->name_count)
                row_of[profile->rows[r].region] = (int64_t)r;
        for (size_t i = first; i < end; i++) {
            const spi_call_path *p = &profile->paths[i];
            if (p->region >= profile->name_count || row_of[p->region] < 0 || p->count == 0)
                continue;
            size_t r = (size_t)row_of[p->region];
            spi_stats *s = &stats[r];
            s->total = (int64_t)((uint64_t)s->total + (uint64_t)p->total);
            if (p->minimum < s->minimum) s->minimum = p->minimum;
            if (p->maximum > s->maximum) s->maximum = p->maximum;
            if (p->start_minimum < s->start_minimum) s->start_minimum = p->start_minimum;
            if (p->end_maximum > s->end_maximum) s->end_maximum = p->end_maximum;
            /* exact pooling of (count, mean, m2), FORMAT.md 7.3 */
            uint64_t n = pooled[r] + p->count;
            double mean = (double)p->total / (double)p->count;
            double delta = mean - s->mean;
            s->m2 += p->m2 + delta * delta * (double)pooled[r] * (double)p->count / (double)n;
            s->mean += delta * (double)p->count / (double)n;
            pooled[r] = n;
        }
        first = end;
    }
    /* rows without paths (merged from a file that had none) keep theirs */
    for (size_t r = 0; r < profile->row_count; r++)
        if (pooled[r] > 0) profile->rows[r].stats = stats[r];
    spi_free(row_of);
    spi_free(pooled);
    spi_free(stats);
    return SP_OK;
}
