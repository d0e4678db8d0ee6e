/*
 * schema.h - the one description of the profile file layout (FORMAT.md).
 *
 * Writer, reader and merge all name datasets, element types and missing
 * values through this table and nothing else, so they cannot drift apart.
 * A column is described by the group it lives in, its dataset name, its
 * element kind, whether a reader must tolerate its absence, and the value
 * that stands for "not recorded" in rows that lack it.
 */
#ifndef SPI_SCHEMA_H
#define SPI_SCHEMA_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>

#include "profile/event_columns.h"
#include "profile/row_stats.h"

/* The schema this library writes, and the newest it reads. */
#define SPI_SCHEMA_VERSION 3

#define SPI_ATTR_SCHEMA "scope_profiler_schema"
#define SPI_ATTR_STORAGE_LAYOUT "storage_layout"
#define SPI_LAYOUT_COLUMNAR "columnar"
#define SPI_LAYOUT_AGGREGATE "aggregate"

#define SPI_GROUP_METADATA "metadata"
#define SPI_GROUP_REGION_TABLE "region_table"
#define SPI_DSET_REGION_NAMES "region_table/names"
#define SPI_GROUP_INDEX "rank_region_index"
#define SPI_GROUP_EVENTS "events"
#define SPI_GROUP_THREAD_TABLE "thread_table"
#define SPI_GROUP_TASK_TABLE "task_table"
/* rank<N>/call_paths (ours, docs/FORMAT.md): aggregate mode's call paths */
#define SPI_GROUP_CALL_PATHS "call_paths"

typedef enum spi_elem {
    SPI_ELEM_I64,    /* H5T_STD_I64LE */
    SPI_ELEM_U32,    /* H5T_STD_U32LE */
    SPI_ELEM_U64,    /* H5T_STD_U64LE */
    SPI_ELEM_I8,     /* H5T_STD_I8LE (thread_table/daemon) */
    SPI_ELEM_F64,    /* H5T_IEEE_F64LE */
    SPI_ELEM_STR,    /* vlen UTF-8 when written; fixed-length also read */
    SPI_ELEM_STATS   /* the 88-byte summary_statistics compound */
} spi_elem;

typedef struct spi_column {
    const char *group;    /* "rank_region_index", "events", "thread_table" */
    const char *name;     /* dataset name inside the group */
    spi_elem elem;
    bool optional;        /* readers tolerate its absence */
    int64_t missing;      /* value of rows that lack it (numeric columns) */
    const char *missing_text; /* value of rows that lack it (string columns) */
} spi_column;

/* rank_region_index columns (FORMAT.md 1.4), in the serial writer's order. */
typedef enum spi_index_col {
    SPI_IDX_REGION_IDS,
    SPI_IDX_RANKS,
    SPI_IDX_EVENT_OFFSETS,
    SPI_IDX_EVENT_COUNTS,
    SPI_IDX_SOURCE_LINES,
    SPI_IDX_SOURCE_FILES,
    SPI_IDX_SOURCE_TEXTS,
    SPI_IDX_TAGS,
    SPI_IDX_EVENT_METADATA,
    SPI_IDX_EXCLUSIVE_TOTALS,
    SPI_IDX_SUMMARY_STATISTICS,
    /* aggregate layout only (FORMAT.md 1.8) */
    SPI_IDX_AGGREGATE_COUNTS,
    SPI_IDX_AGGREGATE_TOTALS,
    SPI_IDX_AGGREGATE_MINIMUMS,
    SPI_IDX_AGGREGATE_MAXIMUMS,
    SPI_IDX_AGGREGATE_EXCLUSIVES,
    SPI_IDX_COUNT
} spi_index_col;

/* The columns every columnar schema-3 file written here has. */
#define SPI_IDX_COLUMNAR_COUNT (SPI_IDX_SUMMARY_STATISTICS + 1)

/* thread_table columns (FORMAT.md 1.6). */
typedef enum spi_thread_col {
    SPI_THR_RANKS,
    SPI_THR_INDEX,
    SPI_THR_IDENT,
    SPI_THR_NATIVE_ID,
    SPI_THR_DAEMON,
    SPI_THR_START_NS,
    SPI_THR_END_NS,
    SPI_THR_CPU_NS,
    SPI_THR_NAME,
    SPI_THR_COUNT
} spi_thread_col;

/* rank<N>/call_paths columns (docs/FORMAT.md), all of length P. */
typedef enum spi_path_col {
    SPI_PATH_PARENTS,
    SPI_PATH_REGION_IDS,
    SPI_PATH_THREAD_IDS,
    SPI_PATH_COUNTS,
    SPI_PATH_RECURSIONS,
    SPI_PATH_TOTALS,
    SPI_PATH_MINIMUMS,
    SPI_PATH_MAXIMUMS,
    SPI_PATH_EXCLUSIVES,
    SPI_PATH_M2,
    SPI_PATH_START_MINIMUMS,
    SPI_PATH_END_MAXIMUMS,
    SPI_PATH_COUNT
} spi_path_col;

extern const spi_column spi_index_columns[SPI_IDX_COUNT];
extern const spi_column spi_event_columns[SPI_EV_COUNT];
extern const spi_column spi_thread_columns[SPI_THR_COUNT];
extern const spi_column spi_path_columns[SPI_PATH_COUNT]; /* group: "call_paths" */

/* "group/name" of a column into buf (returns buf). */
const char *spi_column_path(const spi_column *column, char *buf, size_t buf_bytes);

#define SPI_STATS_FIELD_COUNT 11
extern const char *const spi_stats_field_names[SPI_STATS_FIELD_COUNT];

/* The compound type of spi_stats (profile/row_stats.h) as stored in files (little-endian, 88 bytes) and the one
 * matching spi_stats in memory. Caller closes with H5Tclose; < 0 on error. */
hid_t spi_stats_file_type(void);
hid_t spi_stats_memory_type(void);

/* HDF5 type of an element kind, for files (LE) and for memory (native).
 * For SPI_ELEM_STR: a new vlen UTF-8 string type the caller must close; for
 * SPI_ELEM_STATS: a new compound the caller must close; otherwise a
 * predefined type that must not be closed. Release with spi_elem_type_release. */
hid_t spi_elem_file_type(spi_elem elem);
hid_t spi_elem_memory_type(spi_elem elem);
void spi_elem_type_release(spi_elem elem, hid_t type);

#endif /* SPI_SCHEMA_H */
