/*
 * profile.c - ownership of the in-memory profile (see profile.h).
 */
#include "profile/profile.h"

#include "util/alloc.h"

static void free_strings(char **strings, size_t count) {
    for (size_t i = 0; i < count && strings; i++) spi_free(strings[i]);
    spi_free(strings);
}

void spi_row_free(spi_row *row) {
    spi_free(row->starts);
    spi_free(row->durations);
    spi_free(row->ends);
    spi_free(row->gpu_durations);
    spi_free(row->call_ids);
    spi_free(row->parent_ids);
    spi_free(row->thread_ids);
    spi_free(row->task_ids);
    spi_free(row->await_ns);
    spi_free(row->source_file);
    spi_free(row->source_text);
    spi_free(row->tags_json);
    spi_free(row->event_metadata_json);
    *row = (spi_row){0};
}

void spi_profile_free(spi_profile *profile) {
    if (profile->source) profile->source->release(profile->source);
    profile->source = NULL;
    if (profile->store) profile->store->release(profile->store);
    profile->store = NULL;
    spi_meta_free(&profile->metadata);
    for (size_t i = 0; i < profile->name_count; i++) spi_free(profile->names[i]);
    spi_free(profile->names);
    spi_free(profile->name_slots);
    for (size_t i = 0; i < profile->row_count; i++) spi_row_free(&profile->rows[i]);
    spi_free(profile->rows);
    for (size_t i = 0; i < profile->thread_count; i++) spi_free(profile->threads[i].name);
    spi_free(profile->threads);
    for (size_t i = 0; i < profile->perf_count; i++) {
        spi_perf_record *perf = &profile->perf[i];
        spi_free(perf->region);
        for (size_t j = 0; j < perf->counter_count; j++) spi_free(perf->event_names[j]);
        spi_free(perf->event_names);
        spi_free(perf->values);
    }
    spi_free(profile->perf);
    spi_free(profile->paths);
    spi_likwid_records_free(profile);
    *profile = (spi_profile){0};
}

void spi_likwid_records_free(spi_profile *profile) {
    for (size_t i = 0; i < profile->likwid_count; i++) {
        spi_likwid_record *r = &profile->likwid[i];
        spi_free(r->tag);
        spi_free(r->group_name);
        spi_free(r->source);
        free_strings(r->event_names, r->event_count);
        free_strings(r->counter_names, r->event_count);
        free_strings(r->metric_names, r->metric_count);
        spi_free(r->cpus);
        spi_free(r->times);
        spi_free(r->call_counts);
        spi_free(r->events);
        spi_free(r->metrics);
    }
    spi_free(profile->likwid);
    for (size_t i = 0; i < profile->likwid_env_count; i++) {
        spi_free(profile->likwid_env[i].name);
        spi_free(profile->likwid_env[i].value);
    }
    spi_free(profile->likwid_env);
    profile->likwid = NULL;
    profile->likwid_count = 0;
    profile->likwid_env = NULL;
    profile->likwid_env_count = 0;
}

uint64_t spi_profile_call_count(const spi_profile *profile) {
    uint64_t calls = 0;
    for (size_t i = 0; i < profile->row_count; i++)
        calls += profile->rows[i].aggregate ? profile->rows[i].aggregate_count
                                            : profile->rows[i].count;
    return calls;
}

int spi_profile_row_calls(const spi_profile *profile, size_t row, uint64_t first, size_t max,
                          spi_call_slice *slice, spi_error *err) {
    if (profile->source) return profile->source->next(profile->source, row, max, slice, err);
    const spi_row *r = &profile->rows[row];
    uint64_t left = first < r->count ? r->count - first : 0;
    size_t n = left < max ? (size_t)left : max;
    *slice = (spi_call_slice){.count = n};
    if (n == 0) return SP_OK;
    slice->starts = r->starts + first;
    slice->durations = r->durations + first;
    slice->call_ids = r->call_ids ? r->call_ids + first : NULL;
    slice->parent_ids = r->parent_ids ? r->parent_ids + first : NULL;
    slice->thread_ids = r->thread_ids ? r->thread_ids + first : NULL;
    return SP_OK;
}

const spi_stats *spi_profile_row_stats(const spi_profile *profile, size_t row) {
    if (profile->source) return profile->source->row_stats(profile->source, row);
    return &profile->rows[row].stats;
}
