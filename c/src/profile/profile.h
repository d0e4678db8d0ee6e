/*
 * profile.h - a profile in memory: the rows of (rank, region) with their
 * calls, the region table, the metadata and the thread table.
 *
 * This is the one in-memory form shared by the recorder (record/run.c builds it at
 * finalize), the writer (format/h5_writer.c writes it) and the reader (which
 * fills it from any supported file). Timestamps are absolute int64 ns;
 * encodings such as start_deltas exist only in files.
 */
#ifndef SPI_PROFILE_H
#define SPI_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/event_columns.h"
#include "profile/metadata.h"
#include "profile/row_stats.h"
#include "util/error.h"

typedef struct spi_row {
    uint32_t region;          /* index into spi_profile.names */
    uint32_t rank;
    uint64_t count;           /* calls */
    int64_t *starts;          /* [count] absolute start ns */
    int64_t *durations;       /* [count] end - start ns */
    int64_t *ends;            /* [count] start + duration; only from a read
                                 with SPI_READ_WITH_ENDS, else NULL */
    /* optional per-call columns: NULL when this row has none */
    int64_t *gpu_durations;
    int64_t *call_ids;
    int64_t *parent_ids;
    int64_t *thread_ids;
    int64_t *task_ids;
    int64_t *await_ns;
    int64_t exclusive_total;  /* ns; -1 = not computed */
    int64_t source_line;      /* -1 = unknown */
    char *source_file;        /* NULL = unknown */
    char *source_text;        /* NULL = not captured */
    char *tags_json;          /* JSON list of strings; NULL = "[]" */
    char *event_metadata_json;/* NULL = "[]" */
    spi_stats stats;          /* FORMAT.md 2.1, of the calls in stored order */
    bool out_of_start_order;  /* some start is below the one before it */
    /* Aggregate layout (FORMAT.md 1.8): the row has no per-call data
     * (count stays 0, every array NULL); these carry its totals instead. */
    bool aggregate;
    uint64_t aggregate_count;
    int64_t aggregate_total;
    int64_t aggregate_minimum;
    int64_t aggregate_maximum;
    int64_t aggregate_exclusive;  /* -1 = not computed */
} spi_row;

typedef struct spi_thread_row {
    uint32_t rank;
    int64_t index;            /* what events/thread_ids holds */
    int64_t ident;
    int64_t native_id;
    int8_t daemon;
    int64_t start_ns;
    int64_t end_ns;           /* -1 = alive at finalize */
    int64_t cpu_ns;
    char *name;
} spi_thread_row;

/* rank<N>/call_paths (docs/FORMAT.md, aggregate mode): one call path of
 * one thread of one rank with its accumulated calls. A rank's paths are
 * consecutive in spi_profile.paths and `parent` indexes within them. */
typedef struct spi_call_path {
    uint32_t rank;
    uint32_t region;          /* index into spi_profile.names */
    int64_t parent;           /* index among the rank's paths, -1 = root;
                                 always below the path's own index */
    int64_t thread;           /* thread-table index, -1 = unknown */
    uint64_t count;
    uint64_t recursions;      /* of count, calls made directly inside a call
                                 of the same path (recursion collapsed) */
    int64_t total;            /* ns */
    int64_t minimum;
    int64_t maximum;
    int64_t exclusive;
    double m2;                /* sum of squared deviations from the mean, ns^2 */
    int64_t start_minimum;    /* earliest start of a call on the path */
    int64_t end_maximum;      /* latest end */
    /* The summary's threads view (issue 34), in memory only (the file's
     * paths are per thread: their `thread` says it; 0 and 0 there): */
    uint32_t threads;         /* threads of the rank that ran the path, 0 = not counted */
    int64_t other_threads;    /* ns of the path's calls whose parent call ran on another
                                 thread (OpenMP workers under the call that forked them):
                                 in total, but not child time of the parent */
} spi_call_path;

/* rank<N>/perf_events/<region> (FORMAT.md 1.7): counter totals. */
typedef struct spi_perf_record {
    uint32_t rank;
    char *region;
    int64_t calls;
    char **event_names;       /* [counter_count] */
    uint64_t *values;         /* [counter_count] */
    size_t counter_count;
} spi_perf_record;

/* rank<N>/likwid/regions/<tag> (FORMAT.md 1.7): one LIKWID marker region of
 * one rank, per hardware thread. Matrices are row-major [name][thread]. */
typedef struct spi_likwid_record {
    uint32_t rank;
    char *tag;                /* the real tag ('/' allowed; the group name maps it) */
    int64_t group_id;         /* -1 = unknown */
    char *group_name;
    char *source;             /* "marker_api", "marker_file", "full_api" */
    char **event_names;       /* [event_count] */
    char **counter_names;     /* [event_count] or NULL (optional in files) */
    char **metric_names;      /* [metric_count] */
    size_t event_count;
    size_t metric_count;
    size_t thread_count;
    int64_t *cpus;            /* [thread_count] */
    double *times;            /* [thread_count] seconds */
    int64_t *call_counts;     /* [thread_count] */
    double *events;           /* [event_count * thread_count] */
    double *metrics;          /* [metric_count * thread_count] */
} spi_likwid_record;

/* A LIKWID_* environment variable of a rank: rank<N>/likwid group attrs. */
typedef struct spi_likwid_env {
    uint32_t rank;
    char *name;
    char *value;
} spi_likwid_env;

/* A slice of one row's calls; the pointers stay valid until the next
 * request. call_ids, parent_ids and thread_ids may be NULL (not recorded). */
typedef struct spi_call_slice {
    size_t count;
    const int64_t *starts;
    const int64_t *durations;
    const int64_t *ends;          /* call_cursor.h only; NULL elsewhere */
    const int64_t *gpu_durations; /* call_cursor.h only; NULL elsewhere */
    const int64_t *call_ids;
    const int64_t *parent_ids;
    const int64_t *thread_ids;
} spi_call_slice;

/* Rows whose calls stay in a file until asked for (a read with
 * SPI_READ_CALLS_ON_DEMAND, format/reader_calls.c): any range of any row,
 * any number of times, from several cursors at once. */
typedef struct spi_call_store spi_call_store;
struct spi_call_store {
    /* Calls [first, first + count) of `row` into the arrays of `out` (each
     * `count` long; NULL = not wanted). `previous_start` is the absolute
     * start of call first - 1 (ignored for first == 0): files that store
     * start differences need it. Starts come back absolute. Columns the
     * file lacks are left alone (see `columns`). SP_OK or an error with
     * err filled (naming the file). */
    int (*read)(spi_call_store *store, size_t row, uint64_t first, size_t count,
                int64_t previous_start, int64_t *starts, int64_t *durations, int64_t *call_ids,
                int64_t *parent_ids, int64_t *thread_ids, spi_error *err);
    void (*release)(spi_call_store *store);
    unsigned columns; /* SPI_EV_BIT set of the optional columns the file has
                         (ids only: files with GPU times are read whole) */
    const char *path; /* the file, for messages */
    bool durations_alone; /* durations are stored as such (not as end times),
                             so `read` gives them with starts NULL */
};

/* Rows whose calls are produced on demand instead of held in arrays (a
 * bounded trace's finalize, record/run_stream.c): each row is asked for in
 * order, its calls from the first, in slices. */
typedef struct spi_row_source spi_row_source;
struct spi_row_source {
    /* The next calls (at most `max`) of `row`; slice->count 0 only when
     * the row has none left. SP_OK or an error with err filled. */
    int (*next)(spi_row_source *source, size_t row, size_t max, spi_call_slice *slice,
                spi_error *err);
    /* The row's statistics, final once every call of the row was taken. */
    const spi_stats *(*row_stats)(spi_row_source *source, size_t row);
    void (*release)(spi_row_source *source);
};

typedef struct spi_profile {
    spi_meta metadata;
    char **names;             /* region table, region id = index */
    size_t name_count;
    /* spi_profile_intern_name's lookup: open addressing over id + 1 (0 =
     * empty), and the names array's capacity. Built only by interning. */
    uint32_t *name_slots;
    size_t name_slot_count;
    size_t name_capacity;
    spi_row *rows;            /* rank by rank, in write order */
    size_t row_count;
    spi_thread_row *threads;
    size_t thread_count;
    /* SPI_EV_BIT set of the optional event columns any row carries; the
     * writer creates exactly these (FORMAT.md 1.5: absent = not recorded). */
    unsigned event_columns;
    uint64_t event_count;     /* sum of row counts */
    spi_perf_record *perf;
    size_t perf_count;
    /* Aggregate mode's call paths (rank by rank); none in other files. */
    spi_call_path *paths;
    size_t path_count;
    /* NULL, or [path_count]: the paths are already pooled over the ranks
     * (the finalize summary's, profile/path_pool.h), each with its per-rank
     * spread; the table then takes them as they are. Borrowed: never freed
     * by spi_profile_free. */
    const struct spi_path_ranks *path_ranks;
    /* LIKWID results (counters module, format/reader_h5_likwid.c) */
    spi_likwid_record *likwid;
    size_t likwid_count;
    spi_likwid_env *likwid_env;
    size_t likwid_env_count;
    /* Filled by the reader; zero in a profile built by the recorder. */
    int schema_version;       /* HDF5 schema 1..3; 0 for a trace */
    int trace_version;        /* .spt format 1..2; 0 for HDF5 */
    bool aggregate;           /* storage_layout="aggregate" */
    /* Summary-only read: rows keep count and stats (from the file) but have
     * no per-call arrays even when count > 0. */
    bool summary_only;
    uint32_t rank_count;      /* FORMAT.md 4.2/4.3 num_ranks */
    /* Not NULL: the rows' calls come from here (row arrays stay NULL;
     * count, exclusive_total and names are set). Owned by the profile. */
    spi_row_source *source;
    /* Not NULL: the rows' calls are in the file behind this store (row
     * arrays stay NULL; count, stats and exclusive_total are set). Owned
     * by the profile. */
    spi_call_store *store;
} spi_profile;

/* Calls [first, first + max) of row `row` (fewer at the row's end): the
 * row's arrays, or the next slice of profile->source (which must then be
 * asked row by row in order, `first` counting what was taken). SP_OK or an
 * error with err filled. */
int spi_profile_row_calls(const spi_profile *profile, size_t row, uint64_t first, size_t max,
                          spi_call_slice *slice, spi_error *err);

/* A row's statistics: stored with the row, or from profile->source once
 * every call of the row was taken. */
const spi_stats *spi_profile_row_stats(const spi_profile *profile, size_t row);

/* Calls recorded in the profile: the rows' call counts, or their aggregate
 * counts in the aggregate layout. */
uint64_t spi_profile_call_count(const spi_profile *profile);

/* Release everything a profile owns and zero it. */
void spi_profile_free(spi_profile *profile);
void spi_row_free(spi_row *row);
/* Release the LIKWID records and environment of a profile. */
void spi_likwid_records_free(spi_profile *profile);

/* ---- building a profile (profile_build.c) ---------------------------------- */

/* Append a region name unless present; its id in *id. For builders
 * of the region table from per-rank data (schema 1, traces). A hash table
 * kept in the profile makes n names cost O(n) expected, not O(n^2) (a
 * hostile trace can hold 10^5 regions). Names must not be changed between
 * calls. */
int spi_profile_intern_name(spi_profile *profile, const char *name, uint32_t *id);

/* Append a zeroed row (exclusive_total and source_line -1); NULL when out
 * of memory. The pointer is valid until the next append. */
spi_row *spi_profile_append_row(spi_profile *profile);

/* Set every full-read row's stats and event_count (and its ends when
 * with_ends), checking that every call's end and every row's total fit in
 * int64 (SP_ERR_CORRUPT naming path otherwise: no real clock gets there). */
int spi_profile_compute_stats(spi_profile *profile, const char *path, bool with_ends,
                              spi_error *err);

/* Set the statistics of every aggregate row from the call paths of its
 * (rank, region): total, minimum, maximum, start_minimum, end_maximum,
 * mean and m2 (the paths' (count, mean, m2) pooled exactly). Rows without
 * paths keep their statistics. SP_OK or SP_ERR_OUT_OF_MEMORY. */
int spi_profile_stats_from_paths(spi_profile *profile);

/* Append a record (zeroed, rank set) to profile->likwid; NULL on OOM. */
spi_likwid_record *spi_likwid_record_add(spi_profile *profile, uint32_t rank);

#endif /* SPI_PROFILE_H */
