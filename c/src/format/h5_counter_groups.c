/*
 * h5_counter_groups.c - the rank<N>/perf_events and rank<N>/likwid groups
 * (FORMAT.md 1.7), added to an open file before the writer publishes it.
 *
 * It takes the HDF5 file, not the writer, so that the writer can call it
 * (spi_profile_write) and so can the MPI job's rank 0, without this file
 * and the writer depending on each other.
 *
 * Types follow what h5py gives the Python writer: Python ints as i8
 * scalars, strings and lists of strings as vlen UTF-8, `values` u8, the
 * LIKWID matrices f8 [names x threads]. A rank<N> group is created once
 * (create, never require: FORMAT.md makes a duplicate an error) and holds
 * both subgroups of that rank.
 */
#include "format/h5_counter_groups.h"

#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "format/h5_util.h"
#include "format/schema.h"

static int write_perf(hid_t rank_group, const spi_perf_record *r) {
    hid_t perf = spi_h5_open_or_create_group(rank_group, "perf_events");
    /* "a/b" and "a|b" map to one group name: keep the first, not fail. */
    if (perf >= 0 && H5Lexists(perf, r->region, H5P_DEFAULT) > 0) {
        H5Gclose(perf);
        return SP_OK;
    }
    hid_t group = perf >= 0 ? spi_h5_create_group(perf, r->region) : -1;
    int status = group >= 0 ? SP_OK : SP_ERR_HDF5;
    if (status == SP_OK) status = spi_h5_write_attr_i64(group, "calls", r->calls);
    if (status == SP_OK) status = spi_h5_write_attr_strings(group, "event_names", r->event_names,
                                               r->counter_count);
    hsize_t dims[1] = {r->counter_count};
    if (status == SP_OK)
        status = spi_h5_write_dataset(group, "values", H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, dims, r->values);
    if (group >= 0) H5Gclose(group);
    if (perf >= 0) H5Gclose(perf);
    return status;
}

static int write_likwid_region(hid_t regions, const spi_likwid_record *r) {
    char *name = spi_strdup(r->tag ? r->tag : "");
    if (!name) return SP_ERR_OUT_OF_MEMORY;
    for (char *p = name; *p; p++)
        if (*p == '/') *p = '|';
    hid_t group = spi_h5_create_group(regions, name);
    spi_free(name);
    int status = group >= 0 ? SP_OK : SP_ERR_HDF5;
    if (status == SP_OK) status = spi_h5_write_attr_string(group, "tag", r->tag);
    if (status == SP_OK) status = spi_h5_write_attr_i64(group, "group_id", r->group_id);
    if (status == SP_OK) status = spi_h5_write_attr_string(group, "group_name", r->group_name);
    if (status == SP_OK) status = spi_h5_write_attr_string(group, "source", r->source);
    if (status == SP_OK)
        status = spi_h5_write_attr_strings(group, "event_names", r->event_names, r->event_count);
    if (status == SP_OK && r->counter_names)
        status = spi_h5_write_attr_strings(group, "counter_names", r->counter_names, r->event_count);
    if (status == SP_OK)
        status = spi_h5_write_attr_strings(group, "metric_names", r->metric_names, r->metric_count);
    hsize_t threads[1] = {r->thread_count};
    hsize_t events[2] = {r->event_count, r->thread_count};
    hsize_t metrics[2] = {r->metric_count, r->thread_count};
    if (status == SP_OK)
        status = spi_h5_write_dataset(group, "cpus", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, threads, r->cpus);
    if (status == SP_OK)
        status = spi_h5_write_dataset(group, "times", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, threads, r->times);
    if (status == SP_OK)
        status = spi_h5_write_dataset(group, "call_counts", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, threads,
                         r->call_counts);
    if (status == SP_OK)
        status = spi_h5_write_dataset(group, "events", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, events, r->events);
    if (status == SP_OK)
        status = spi_h5_write_dataset(group, "metrics", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, metrics,
                         r->metrics);
    if (group >= 0) H5Gclose(group);
    return status;
}

static int write_likwid(hid_t rank_group, const spi_profile *p, uint32_t rank) {
    hid_t likwid = spi_h5_create_group(rank_group, "likwid");
    int status = likwid >= 0 ? SP_OK : SP_ERR_HDF5;
    int64_t regions_of_rank = 0;
    for (size_t i = 0; i < p->likwid_count; i++) regions_of_rank += p->likwid[i].rank == rank;
    for (size_t i = 0; status == SP_OK && i < p->likwid_env_count; i++)
        if (p->likwid_env[i].rank == rank)
            status = spi_h5_write_attr_string(likwid, p->likwid_env[i].name, p->likwid_env[i].value);
    if (status == SP_OK) status = spi_h5_write_attr_i64(likwid, "num_regions", regions_of_rank);
    hid_t regions = status == SP_OK ? spi_h5_create_group(likwid, "regions") : -1;
    if (status == SP_OK && regions < 0) status = SP_ERR_HDF5;
    for (size_t i = 0; status == SP_OK && i < p->likwid_count; i++)
        if (p->likwid[i].rank == rank) status = write_likwid_region(regions, &p->likwid[i]);
    if (regions >= 0) H5Gclose(regions);
    if (likwid >= 0) H5Gclose(likwid);
    return status;
}

static bool rank_seen_before(const spi_profile *p, uint32_t rank, size_t perf_end,
                             size_t likwid_end) {
    for (size_t i = 0; i < perf_end; i++)
        if (p->perf[i].rank == rank) return true;
    for (size_t i = 0; i < likwid_end; i++)
        if (p->likwid[i].rank == rank) return true;
    return false;
}

static int write_rank(hid_t file, const spi_profile *p, uint32_t rank) {
    char name[32];
    snprintf(name, sizeof name, "rank%u", rank);
    /* Another module (line profiles) may own rank<N> too: share it. */
    hid_t group = spi_h5_open_or_create_group(file, name);
    int status = group >= 0 ? SP_OK : SP_ERR_HDF5;
    for (size_t i = 0; status == SP_OK && i < p->perf_count; i++)
        if (p->perf[i].rank == rank) status = write_perf(group, &p->perf[i]);
    bool has_likwid = false;
    for (size_t i = 0; i < p->likwid_count; i++) has_likwid |= p->likwid[i].rank == rank;
    if (status == SP_OK && has_likwid) status = write_likwid(group, p, rank);
    if (group >= 0) H5Gclose(group);
    return status;
}

int spi_h5_write_counter_groups(hid_t file, const spi_profile *p, spi_error *err) {
    if (p->perf_count == 0 && p->likwid_count == 0) return SP_OK;
    spi_h5_silence_state silence;
    spi_h5_silence(&silence);
    int status = SP_OK;
    for (size_t i = 0; status == SP_OK && i < p->perf_count; i++)
        if (!rank_seen_before(p, p->perf[i].rank, i, 0)) status = write_rank(file, p, p->perf[i].rank);
    for (size_t i = 0; status == SP_OK && i < p->likwid_count; i++)
        if (!rank_seen_before(p, p->likwid[i].rank, p->perf_count, i))
            status = write_rank(file, p, p->likwid[i].rank);
    if (status != SP_OK) {
        char detail[256];
        spi_h5_last_message(detail, sizeof detail);
        status = spi_error_set(err, status, "cannot write the counter groups (rank<N>/perf_events, "
                               "rank<N>/likwid): %s", detail);
    }
    spi_h5_restore(&silence);
    return status;
}
