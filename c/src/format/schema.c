/*
 * schema.c - the layout table (see schema.h) and the summary_statistics
 * compound. The table rows follow FORMAT.md sections 1.4-1.6; the missing
 * values are the ones the reference writer backfills.
 */
#include "format/schema.h"

#include <assert.h>
#include <stddef.h>
#include <stdio.h>

_Static_assert(sizeof(spi_stats) == 88, "summary_statistics is 88 bytes in files");
_Static_assert(offsetof(spi_stats, gpu_count) == 56, "gpu_count offset per FORMAT.md 2.1");
_Static_assert(offsetof(spi_stats, m2) == 80, "m2 offset per FORMAT.md 2.1");

#define IDX SPI_GROUP_INDEX
const spi_column spi_index_columns[SPI_IDX_COUNT] = {
    [SPI_IDX_REGION_IDS] = {IDX, "region_ids", SPI_ELEM_U32, false, 0, NULL},
    [SPI_IDX_RANKS] = {IDX, "ranks", SPI_ELEM_U32, false, 0, NULL},
    [SPI_IDX_EVENT_OFFSETS] = {IDX, "event_offsets", SPI_ELEM_U64, false, 0, NULL},
    [SPI_IDX_EVENT_COUNTS] = {IDX, "event_counts", SPI_ELEM_U64, false, 0, NULL},
    [SPI_IDX_SOURCE_LINES] = {IDX, "source_lines", SPI_ELEM_I64, true, -1, NULL},
    [SPI_IDX_SOURCE_FILES] = {IDX, "source_files", SPI_ELEM_STR, true, 0, ""},
    [SPI_IDX_SOURCE_TEXTS] = {IDX, "source_texts", SPI_ELEM_STR, true, 0, ""},
    [SPI_IDX_TAGS] = {IDX, "tags", SPI_ELEM_STR, true, 0, "[]"},
    [SPI_IDX_EVENT_METADATA] = {IDX, "event_metadata", SPI_ELEM_STR, true, 0, "[]"},
    [SPI_IDX_EXCLUSIVE_TOTALS] = {IDX, "exclusive_totals", SPI_ELEM_I64, true, -1, NULL},
    [SPI_IDX_SUMMARY_STATISTICS] = {IDX, "summary_statistics", SPI_ELEM_STATS, true, 0, NULL},
    [SPI_IDX_AGGREGATE_COUNTS] = {IDX, "aggregate_counts", SPI_ELEM_U64, true, 0, NULL},
    [SPI_IDX_AGGREGATE_TOTALS] = {IDX, "aggregate_totals", SPI_ELEM_I64, true, 0, NULL},
    [SPI_IDX_AGGREGATE_MINIMUMS] = {IDX, "aggregate_minimums", SPI_ELEM_I64, true, 0, NULL},
    [SPI_IDX_AGGREGATE_MAXIMUMS] = {IDX, "aggregate_maximums", SPI_ELEM_I64, true, 0, NULL},
    [SPI_IDX_AGGREGATE_EXCLUSIVES] = {IDX, "aggregate_exclusives", SPI_ELEM_I64, true, -1, NULL},
};
#undef IDX

#define EV SPI_GROUP_EVENTS
const spi_column spi_event_columns[SPI_EV_COUNT] = {
    [SPI_EV_START_DELTAS] = {EV, "start_deltas", SPI_ELEM_I64, false, 0, NULL},
    [SPI_EV_DURATIONS] = {EV, "durations", SPI_ELEM_I64, false, 0, NULL},
    [SPI_EV_GPU_DURATIONS] = {EV, "gpu_durations", SPI_ELEM_I64, true, -1, NULL},
    [SPI_EV_CALL_IDS] = {EV, "call_ids", SPI_ELEM_I64, true, -1, NULL},
    [SPI_EV_PARENT_IDS] = {EV, "parent_ids", SPI_ELEM_I64, true, -1, NULL},
    [SPI_EV_THREAD_IDS] = {EV, "thread_ids", SPI_ELEM_I64, true, -1, NULL},
    [SPI_EV_TASK_IDS] = {EV, "task_ids", SPI_ELEM_I64, true, -1, NULL},
    [SPI_EV_AWAIT_NS] = {EV, "await_ns", SPI_ELEM_I64, true, 0, NULL},
    [SPI_EV_START_TIMES] = {EV, "start_times", SPI_ELEM_I64, false, 0, NULL},
    [SPI_EV_END_TIMES] = {EV, "end_times", SPI_ELEM_I64, false, 0, NULL},
};
#undef EV

#define THR SPI_GROUP_THREAD_TABLE
const spi_column spi_thread_columns[SPI_THR_COUNT] = {
    [SPI_THR_RANKS] = {THR, "ranks", SPI_ELEM_U32, true, 0, NULL},
    [SPI_THR_INDEX] = {THR, "index", SPI_ELEM_I64, true, -1, NULL},
    [SPI_THR_IDENT] = {THR, "ident", SPI_ELEM_I64, true, 0, NULL},
    [SPI_THR_NATIVE_ID] = {THR, "native_id", SPI_ELEM_I64, true, 0, NULL},
    [SPI_THR_DAEMON] = {THR, "daemon", SPI_ELEM_I8, true, 0, NULL},
    [SPI_THR_START_NS] = {THR, "start_ns", SPI_ELEM_I64, true, -1, NULL},
    [SPI_THR_END_NS] = {THR, "end_ns", SPI_ELEM_I64, true, -1, NULL},
    [SPI_THR_CPU_NS] = {THR, "cpu_ns", SPI_ELEM_I64, true, 0, NULL},
    [SPI_THR_NAME] = {THR, "name", SPI_ELEM_STR, true, 0, ""},
};
#undef THR

/* Relative to rank<N>/: every column is required when the group exists. */
#define PATH SPI_GROUP_CALL_PATHS
const spi_column spi_path_columns[SPI_PATH_COUNT] = {
    [SPI_PATH_PARENTS] = {PATH, "parents", SPI_ELEM_I64, false, -1, NULL},
    [SPI_PATH_REGION_IDS] = {PATH, "region_ids", SPI_ELEM_U32, false, 0, NULL},
    [SPI_PATH_THREAD_IDS] = {PATH, "thread_ids", SPI_ELEM_I64, false, -1, NULL},
    [SPI_PATH_COUNTS] = {PATH, "counts", SPI_ELEM_U64, false, 0, NULL},
    [SPI_PATH_RECURSIONS] = {PATH, "recursions", SPI_ELEM_U64, false, 0, NULL},
    [SPI_PATH_TOTALS] = {PATH, "totals", SPI_ELEM_I64, false, 0, NULL},
    [SPI_PATH_MINIMUMS] = {PATH, "minimums", SPI_ELEM_I64, false, 0, NULL},
    [SPI_PATH_MAXIMUMS] = {PATH, "maximums", SPI_ELEM_I64, false, 0, NULL},
    [SPI_PATH_EXCLUSIVES] = {PATH, "exclusives", SPI_ELEM_I64, false, 0, NULL},
    [SPI_PATH_M2] = {PATH, "m2", SPI_ELEM_F64, false, 0, NULL},
    [SPI_PATH_START_MINIMUMS] = {PATH, "start_minimums", SPI_ELEM_I64, false, 0, NULL},
    [SPI_PATH_END_MAXIMUMS] = {PATH, "end_maximums", SPI_ELEM_I64, false, 0, NULL},
};
#undef PATH

const char *const spi_stats_field_names[SPI_STATS_FIELD_COUNT] = {
    "total", "minimum", "maximum", "first", "last", "start_minimum",
    "end_maximum", "gpu_count", "gpu_total", "mean", "m2"};

const char *spi_column_path(const spi_column *column, char *buf, size_t buf_bytes) {
    snprintf(buf, buf_bytes, "%s/%s", column->group, column->name);
    return buf;
}

static hid_t stats_type(int file_order) {
    hid_t type = H5Tcreate(H5T_COMPOUND, sizeof(spi_stats));
    if (type < 0) return type;
    hid_t i64 = file_order ? H5T_STD_I64LE : H5T_NATIVE_INT64;
    hid_t u64 = file_order ? H5T_STD_U64LE : H5T_NATIVE_UINT64;
    hid_t f64 = file_order ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
    const size_t offsets[SPI_STATS_FIELD_COUNT] = {
        offsetof(spi_stats, total), offsetof(spi_stats, minimum),
        offsetof(spi_stats, maximum), offsetof(spi_stats, first),
        offsetof(spi_stats, last), offsetof(spi_stats, start_minimum),
        offsetof(spi_stats, end_maximum), offsetof(spi_stats, gpu_count),
        offsetof(spi_stats, gpu_total), offsetof(spi_stats, mean),
        offsetof(spi_stats, m2)};
    const hid_t types[SPI_STATS_FIELD_COUNT] = {i64, i64, i64, i64, i64, i64,
                                                i64, u64, i64, f64, f64};
    for (int i = 0; i < SPI_STATS_FIELD_COUNT; i++) {
        if (H5Tinsert(type, spi_stats_field_names[i], offsets[i], types[i]) < 0) {
            H5Tclose(type);
            return -1;
        }
    }
    return type;
}

hid_t spi_stats_file_type(void) { return stats_type(1); }
hid_t spi_stats_memory_type(void) { return stats_type(0); }

static hid_t vlen_utf8_type(void) {
    hid_t type = H5Tcopy(H5T_C_S1);
    if (type < 0) return type;
    if (H5Tset_size(type, H5T_VARIABLE) < 0 || H5Tset_cset(type, H5T_CSET_UTF8) < 0 ||
        H5Tset_strpad(type, H5T_STR_NULLTERM) < 0) {
        H5Tclose(type);
        return -1;
    }
    return type;
}

hid_t spi_elem_file_type(spi_elem elem) {
    switch (elem) {
    case SPI_ELEM_I64: return H5T_STD_I64LE;
    case SPI_ELEM_U32: return H5T_STD_U32LE;
    case SPI_ELEM_U64: return H5T_STD_U64LE;
    case SPI_ELEM_I8: return H5T_STD_I8LE;
    case SPI_ELEM_F64: return H5T_IEEE_F64LE;
    case SPI_ELEM_STR: return vlen_utf8_type();
    case SPI_ELEM_STATS: return spi_stats_file_type();
    }
    return -1;
}

hid_t spi_elem_memory_type(spi_elem elem) {
    switch (elem) {
    case SPI_ELEM_I64: return H5T_NATIVE_INT64;
    case SPI_ELEM_U32: return H5T_NATIVE_UINT32;
    case SPI_ELEM_U64: return H5T_NATIVE_UINT64;
    case SPI_ELEM_I8: return H5T_NATIVE_INT8;
    case SPI_ELEM_F64: return H5T_NATIVE_DOUBLE;
    case SPI_ELEM_STR: return vlen_utf8_type();
    case SPI_ELEM_STATS: return spi_stats_memory_type();
    }
    return -1;
}

void spi_elem_type_release(spi_elem elem, hid_t type) {
    /* Only the string and compound types are created per call; the others
     * are HDF5's predefined types, which must not be closed. */
    if ((elem == SPI_ELEM_STR || elem == SPI_ELEM_STATS) && type >= 0) H5Tclose(type);
}
