/*
 * profile.c - ownership of the in-memory profile (see profile.h).
 */
#include "profile.h"

#include "alloc.h"

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
    spi_meta_free(&profile->metadata);
    for (size_t i = 0; i < profile->name_count; i++) spi_free(profile->names[i]);
    spi_free(profile->names);
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
    spi_likwid_records_free(profile); /* counters_records.c */
    *profile = (spi_profile){0};
}
