/*
 * scope_profiler_results.h - reading profile files: the results API of
 * libscopeprofiler.
 *
 * Overview
 * --------
 * sp_results_open() reads any profile this project understands into memory
 * and validates it before anything trusts an offset:
 *   - HDF5 schema 1 (per-rank groups), schema 2 (absolute start/end times)
 *     and schema 3 (start deltas + durations), from the serial or the MPI
 *     parallel writer (vlen or fixed-length strings, chunked, contiguous or
 *     gzip+shuffle datasets), with any optional column missing;
 *   - the aggregate layout (storage_layout="aggregate": counts and totals
 *     per row, no per-call data);
 *   - native `.spt` traces, versions 1 and 2, either byte order.
 * With SP_RESULTS_SUMMARY_ONLY only the index and its stored statistics are
 * read, never the event columns, so memory does not grow with the number of
 * calls. With SP_RESULTS_CALLS_ON_DEMAND every call is still checked and the
 * statistics are exact, but the calls stay in the file and are read in
 * slices through sp_calls cursors (sp_calls_open), so a program that reads
 * them that way runs in bounded memory on files of any size; the per-call
 * array accessors then return NULL. Cursors work on every object, so code
 * written with them serves both kinds.
 *
 * The data is a table of rows, one per (rank, region) pair, in file order.
 * Each row has its call count and, unless the file is summary-only or
 * aggregate, its per-call arrays (absolute start and end timestamps in ns,
 * plus optional call/parent/thread ids). Regions are identified by their
 * index in the region table (0 .. sp_results_region_count()-1), in file
 * order.
 *
 * Typical call sequence:
 *
 *     char msg[512];
 *     sp_results *res;
 *     int st = sp_results_open("run.h5", 0, &res, msg, sizeof msg);
 *     if (st != SP_OK) { fprintf(stderr, "%s\n", msg); return st; }
 *     for (size_t row = 0; row < sp_results_row_count(res); row++) {
 *         const char *name = sp_results_region_name(res, sp_results_row_region(res, row));
 *         uint64_t calls = sp_results_row_calls(res, row);
 *         const int64_t *starts = sp_results_row_starts(res, row);
 *         const int64_t *ends = sp_results_row_ends(res, row);
 *         ...
 *     }
 *     sp_results_close(res);
 *
 * Counter results recorded beside the timings, when the run asked for
 * them, have their own sections at the end: perf-event totals per (rank,
 * region) and LIKWID groups per (rank, marker region, hardware thread).
 *
 * Units: every time is int64 nanoseconds, as stored in the file, except
 * LIKWID's own times, which are seconds as LIKWID reports them.
 *
 * Ownership: every pointer returned by an accessor is owned by the results
 * object and stays valid until sp_results_close(). Never free it.
 *
 * Errors: sp_results_open returns an sp_status code (scope_profiler.h) and
 * writes a one-line message naming the file into errbuf. Accessors do not
 * fail loudly: an out-of-range index gives the documented "empty" value
 * (0, NULL or -1), so a caller iterating with the count functions never
 * needs to check.
 *
 * What sp_results_open guarantees on a damaged or hostile file: everything
 * it takes from the file is checked (docs/FORMAT.md 3.4 and 3.4.1: types,
 * shapes, ranges, lengths against the file's size) before it is used as a
 * length, an offset or an index, or handed to HDF5 to convert; such a file
 * gives a status and a message naming it, never a crash in this library or
 * an allocation the file's size does not justify. What it does NOT
 * guarantee: libhdf5 itself parses the container (B-trees, heaps, object
 * headers) before any of our checks can see the data, and on a damaged
 * container libhdf5 1.10 can fault, loop or allocate without bound. A
 * program that opens untrusted files should do so in a child process with
 * time and memory limits, as the scope-* tools do (cli/cli_isolate.c).
 *
 * Thread-safety: sp_results_open and sp_results_close may run concurrently
 * on different objects. A results object is immutable after open, so any
 * number of threads may call accessors on it concurrently, and read it
 * through cursors of their own; closing it while another thread uses it
 * (or while a cursor on it is open) is undefined.
 */
#ifndef SCOPE_PROFILER_RESULTS_H
#define SCOPE_PROFILER_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include "scope_profiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An opened, validated profile (opaque). */
typedef struct sp_results sp_results;

/* ---------------------------------------------------------------------------
 * Opening and closing
 * ------------------------------------------------------------------------- */

/** sp_results_open flag: read the index and the stored summary statistics
 *  only, never the per-call event columns (FORMAT.md 4.4). Per-call
 *  accessors then return NULL; sp_results_row_stats returns stored values. */
#define SP_RESULTS_SUMMARY_ONLY 1

/** sp_results_open flag: keep the per-call event columns in the file and
 *  read them on demand through sp_calls_open, so memory stays independent
 *  of the number of calls (the scope-* tools open this way). Opening reads
 *  the index and passes once over every row's starts and durations, to
 *  validate them and compute sp_results_row_stats exactly as a full read
 *  does. Taken for HDF5 schema 2 and 3 columnar files whose rows all have
 *  a stored exclusive total and that have no gpu_durations or task_ids
 *  column (a call's lane needs its task id, and the cursors' slices do not
 *  carry it: such files keep their arrays, where sp_results_row_task_ids
 *  gives it); any other file is read whole as without the
 *  flag (sp_results_calls_in_memory tells which happened). The file stays
 *  open, read-only, until sp_results_close. */
#define SP_RESULTS_CALLS_ON_DEMAND 2

/**
 * Open and validate the profile at `path` (HDF5 or .spt, told apart by the
 * file's first bytes, not by its name).
 *
 * path:       file to read (NUL-terminated).
 * flags:      0, SP_RESULTS_SUMMARY_ONLY or SP_RESULTS_CALLS_ON_DEMAND.
 * out:        receives the new object on SP_OK, NULL on any error. The caller
 *             releases it with sp_results_close.
 * errbuf:     receives a one-line message naming the file on error, "" on
 *             success; may be NULL. Always NUL-terminated when errbuf_len > 0
 *             (the message is cut to fit).
 * errbuf_len: size of errbuf in bytes.
 *
 * Returns:
 *   SP_OK
 *   SP_ERR_INVALID_ARGUMENT    path or out NULL, unknown flag bits
 *   SP_ERR_FILE_NOT_FOUND      "HDF5 file not found: PATH"
 *   SP_ERR_NOT_A_PROFILE       neither HDF5 nor a trace, an unreadable or
 *                              truncated HDF5 file, a .spt with a bad magic
 *                              or too short, a missing required dataset
 *   SP_ERR_SCHEMA_UNSUPPORTED  schema > 3 ("... Upgrade scope-profiler to
 *                              read this file."), a schema attribute that
 *                              is not an integer or < 1, a .spt version
 *                              other than 1 or 2
 *   SP_ERR_CORRUPT             the event index points past the event
 *                              columns, overlapping rows, a region id out
 *                              of range, columns of inconsistent length, a
 *                              truncated .spt or trailing bytes after it,
 *                              a rank<N>/perf_events or rank<N>/likwid
 *                              group whose names and shapes disagree (the
 *                              message names the group)
 *   SP_ERR_NO_SUMMARY          SUMMARY_ONLY on a file that cannot give one
 *                              (schema 1, .spt, no summary_statistics) or
 *                              whose summary index fails the FORMAT.md 4.4
 *                              checks. Retry without the flag.
 *   SP_ERR_OUT_OF_MEMORY, SP_ERR_HDF5
 * Thread-safety: safe on distinct objects (serialised internally around the
 * HDF5 library when it is not thread-safe).
 */
SP_API int sp_results_open(const char *path, int flags, sp_results **out,
                           char *errbuf, size_t errbuf_len);

/**
 * sp_finalize, and also hand back this process's results in memory, without
 * a round trip through a file: every region, row and call of every thread
 * (with MPI: this rank's rows; the file holds the whole job). Together with
 * sp_options.write_file = 0 this is the memory-only mode. The object is the
 * same as sp_results_open gives for the written file (path: the configured
 * output path); release it with sp_results_close.
 * Returns what sp_finalize returns; *results is set when the run's results
 * could be collected (also when only the file could not be written, so
 * nothing recorded is lost), else NULL. results NULL: SP_ERR_INVALID_ARGUMENT.
 * Thread-safety: as sp_finalize.
 */
SP_API int sp_finalize_results(sp_results **results);

/** Release a results object and everything its accessors returned. NULL is
 *  a no-op. Thread-safety: not concurrently with accessors on the object. */
SP_API void sp_results_close(sp_results *results);

/* ---------------------------------------------------------------------------
 * The file as a whole
 * ------------------------------------------------------------------------- */

/** What kind of file was read. */
typedef enum sp_results_format {
    SP_RESULTS_FORMAT_HDF5 = 0,   /**< an HDF5 profile (see schema_version) */
    SP_RESULTS_FORMAT_TRACE = 1   /**< a native .spt trace */
} sp_results_format;

/** SP_RESULTS_FORMAT_HDF5 or _TRACE; -1 for NULL. */
SP_API int sp_results_format_kind(const sp_results *results);

/** HDF5: the schema version (1, 2 or 3). .spt: the trace format version
 *  (1 or 2). 0 for NULL. */
SP_API int sp_results_schema_version(const sp_results *results);

/** 1 when opened with SP_RESULTS_SUMMARY_ONLY (no per-call data), else 0. */
SP_API int sp_results_is_summary_only(const sp_results *results);

/** 1 for the aggregate layout (rows carry count/total/min/max/exclusive
 *  only, no per-call data), else 0. */
SP_API int sp_results_is_aggregate(const sp_results *results);

/** 1 when rows carry per-call arrays (not summary-only, not aggregate). */
SP_API int sp_results_has_events(const sp_results *results);

/** One call path of an aggregate-mode run (docs/FORMAT.md, rank<N>/call_paths):
 *  every call of `region` on `thread` whose chain of enclosing regions is
 *  the parent path's, summed. Times in ns, from CLOCK_MONOTONIC. */
typedef struct sp_call_path {
    uint32_t rank;
    size_t region;            /**< region index (sp_results_region_name) */
    int64_t parent;           /**< index of the parent path (same rank), -1 = root;
                                   always below this path's index */
    int64_t thread;           /**< thread-table index, -1 = unknown */
    uint64_t count;           /**< calls */
    uint64_t recursions;      /**< of those, calls made directly inside a call of
                                   the same path (recursion is one path) */
    int64_t total_ns;
    int64_t min_ns;
    int64_t max_ns;
    int64_t exclusive_ns;     /**< total minus the direct children's time */
    double m2;                /**< sum of squared deviations from the mean, ns^2 */
    int64_t start_min_ns;     /**< earliest start of a call on the path */
    int64_t end_max_ns;       /**< latest end */
} sp_call_path;

/** Number of call paths: > 0 only for aggregate files written by the native
 *  library in aggregate mode (0 for traces and Python aggregate files).
 *  Paths are ordered by rank, parents before children. */
SP_API size_t sp_results_call_path_count(const sp_results *results);

/**
 * Copy call path `index` (< sp_results_call_path_count) into *path.
 * Returns SP_OK, or SP_ERR_INVALID_ARGUMENT for a NULL argument or an index
 * out of range. Thread-safety: read-only, safe concurrently.
 */
SP_API int sp_results_call_path(const sp_results *results, size_t index, sp_call_path *path);

/** The path given to sp_results_open (owned copy). */
SP_API const char *sp_results_path(const sp_results *results);

/**
 * Number of ranks, as the reference reader counts them (FORMAT.md 4.2/4.3):
 * columnar files: max(metadata mpi_size (default 1), max rank + 1) when
 * there is any row, else 0; schema 1: the number of rank<N> groups; .spt:
 * 1 (its rank is sp_results_row_rank of its rows).
 */
SP_API uint32_t sp_results_rank_count(const sp_results *results);

/* ---------------------------------------------------------------------------
 * Metadata (/metadata attributes, in file order)
 * ------------------------------------------------------------------------- */

/** The kind of a metadata value. */
typedef enum sp_meta_kind {
    SP_META_KIND_STRING = 0,       /**< text */
    SP_META_KIND_INT = 1,          /**< any integer attribute, as int64 */
    SP_META_KIND_DOUBLE = 2,       /**< float attribute, as double */
    SP_META_KIND_BOOL = 3,         /**< h5py bool (0/1, read as int too) */
    SP_META_KIND_STRING_ARRAY = 4  /**< 1-D array of text (may be empty) */
} sp_meta_kind;

/** Number of metadata entries (0 for a .spt trace or NULL). */
SP_API size_t sp_results_metadata_count(const sp_results *results);

/** Key of entry `index`, or NULL when out of range. */
SP_API const char *sp_results_metadata_key(const sp_results *results, size_t index);

/** sp_meta_kind of entry `index`, or -1 when out of range. */
SP_API int sp_results_metadata_kind(const sp_results *results, size_t index);

/** Index of the entry named `key`, or -1 when absent. */
SP_API long sp_results_metadata_find(const sp_results *results, const char *key);

/**
 * The value of entry `index` as text: the string itself for STRING; NULL
 * for every other kind and when out of range.
 */
SP_API const char *sp_results_metadata_string(const sp_results *results, size_t index);

/**
 * The value of entry `index` as an integer into *value.
 * Returns SP_OK for INT and BOOL; SP_ERR_INVALID_ARGUMENT for other kinds,
 * an index out of range or value NULL (then *value is untouched).
 */
SP_API int sp_results_metadata_int(const sp_results *results, size_t index, int64_t *value);

/**
 * The value of entry `index` as a double into *value (INT and BOOL are
 * converted). Returns SP_OK or SP_ERR_INVALID_ARGUMENT as metadata_int.
 */
SP_API int sp_results_metadata_double(const sp_results *results, size_t index, double *value);

/** Number of items of a STRING_ARRAY entry; 0 for other kinds. */
SP_API size_t sp_results_metadata_array_length(const sp_results *results, size_t index);

/** Item `item` of a STRING_ARRAY entry, or NULL when out of range. */
SP_API const char *sp_results_metadata_array_item(const sp_results *results,
                                                  size_t index, size_t item);

/* ---------------------------------------------------------------------------
 * Regions (the region table; a region id is its index)
 * ------------------------------------------------------------------------- */

/** Number of regions in the region table, rows or not. */
SP_API size_t sp_results_region_count(const sp_results *results);

/** Name of region `region`, or NULL when out of range. */
SP_API const char *sp_results_region_name(const sp_results *results, size_t region);

/** Id of the region called `name`, or -1 when there is none. */
SP_API long sp_results_region_find(const sp_results *results, const char *name);

/* ---------------------------------------------------------------------------
 * Rows: one per (rank, region), in file order
 * ------------------------------------------------------------------------- */

/** Number of rows. */
SP_API size_t sp_results_row_count(const sp_results *results);

/** Index of the row of (rank, region), or -1 when that pair has no row. */
SP_API long sp_results_row_find(const sp_results *results, uint32_t rank, size_t region);

/** Rank of row `row` (0 when out of range). */
SP_API uint32_t sp_results_row_rank(const sp_results *results, size_t row);

/** Region id of row `row` (0 when out of range; check with row_count). */
SP_API size_t sp_results_row_region(const sp_results *results, size_t row);

/** Number of calls of row `row` (aggregate: aggregate_counts; 0 when out of
 *  range). This is the length of every per-call array of the row. */
SP_API uint64_t sp_results_row_calls(const sp_results *results, size_t row);

/**
 * Per-call arrays of row `row`, each sp_results_row_calls() long, in stored
 * order, ns. NULL when the row has no calls, the file has no per-call data
 * (summary-only, aggregate) or the index is out of range.
 *   starts:    absolute start timestamps
 *   ends:      absolute end timestamps (start + duration)
 *   durations: end - start
 */
SP_API const int64_t *sp_results_row_starts(const sp_results *results, size_t row);
SP_API const int64_t *sp_results_row_ends(const sp_results *results, size_t row);
SP_API const int64_t *sp_results_row_durations(const sp_results *results, size_t row);

/**
 * Optional per-call columns of row `row`; NULL when the file did not record
 * the column (FORMAT.md 1.5: absent means not recorded) or as above.
 *   call_ids:      call id, unique within a rank; -1 = not numbered
 *   parent_ids:    call id of the enclosing call, -1 = root
 *   thread_ids:    index into this rank's thread table, -1 = unknown lane
 *   gpu_durations: device ns, -1 = unavailable (row kept only if any >= 0)
 *   task_ids:      task-table index, -1 = outside any task
 *   await_ns:      ns the call's task was suspended inside the call
 */
SP_API const int64_t *sp_results_row_call_ids(const sp_results *results, size_t row);
SP_API const int64_t *sp_results_row_parent_ids(const sp_results *results, size_t row);
SP_API const int64_t *sp_results_row_thread_ids(const sp_results *results, size_t row);
SP_API const int64_t *sp_results_row_gpu_durations(const sp_results *results, size_t row);
SP_API const int64_t *sp_results_row_task_ids(const sp_results *results, size_t row);
SP_API const int64_t *sp_results_row_await_ns(const sp_results *results, size_t row);

/* ---------------------------------------------------------------------------
 * Calls in slices: the one way to read calls whatever the object holds
 * ------------------------------------------------------------------------- */

/** One slice of a row's calls, in stored order. Every array is `count`
 *  long and stays valid until the next sp_calls_next or sp_calls_close on
 *  the same cursor. Optional columns are NULL when the file did not record
 *  them (as the sp_results_row_* accessors). */
typedef struct sp_call_slice {
    size_t count;
    const int64_t *starts;        /**< absolute start, ns */
    const int64_t *ends;          /**< start + duration, ns */
    const int64_t *durations;     /**< end - start, ns */
    const int64_t *call_ids;      /**< or NULL */
    const int64_t *parent_ids;    /**< or NULL */
    const int64_t *thread_ids;    /**< or NULL */
    const int64_t *gpu_durations; /**< or NULL */
} sp_call_slice;

/** A cursor over one row's calls (opaque). */
typedef struct sp_calls sp_calls;

/**
 * Start reading the calls of row `row` from the first, at most `slice_max`
 * per slice (0 = a default of 65536). For a fully read object the slices
 * point into its arrays (no copy); for an SP_RESULTS_CALLS_ON_DEMAND
 * object they are read from the file into the cursor's buffers, so memory
 * is `slice_max` x 56 bytes per open cursor, whatever the row's size.
 * Returns SP_OK, SP_ERR_INVALID_ARGUMENT (NULL, row out of range, or an
 * object without per-call data: summary-only, aggregate),
 * SP_ERR_OUT_OF_MEMORY. *out is NULL on error.
 * Thread-safety: cursors are independent; several threads may read the
 * same object through cursors of their own (file reads are serialised
 * internally). One cursor must not be used by two threads at once.
 */
SP_API int sp_calls_open(const sp_results *results, size_t row, size_t slice_max,
                         sp_calls **out);

/**
 * The next slice of the cursor's row into *slice; slice->count is 0 once
 * every call was read (and stays 0). Returns SP_OK, or for an on-demand
 * object a file that cannot be read back: SP_ERR_HDF5 or SP_ERR_CORRUPT
 * (the file changed or was damaged after it was opened: a column shorter
 * than its index says, values that overflow), with a one-line message
 * naming the file in errbuf (may be NULL). After an error the cursor
 * returns the same error again.
 */
SP_API int sp_calls_next(sp_calls *calls, sp_call_slice *slice, char *errbuf,
                         size_t errbuf_len);

/** Release a cursor; NULL is ignored. Close cursors before their object. */
SP_API void sp_calls_close(sp_calls *calls);

/** 1 when the starts of row `row` never decrease in stored order (every
 *  file this library writes; a Python file may store a thread's nested
 *  calls of one region in end order), 0 otherwise or out of range.
 *  Known after open for every object, on-demand ones included. */
SP_API int sp_results_row_in_start_order(const sp_results *results, size_t row);

/** 1 when the per-call arrays are held in memory (sp_results_row_starts and
 *  the other per-call accessors return them); 0 for an object opened with
 *  SP_RESULTS_CALLS_ON_DEMAND that kept its calls in the file (those
 *  accessors then return NULL: read the calls with sp_calls_open), and for
 *  objects without per-call data. */
SP_API int sp_results_calls_in_memory(const sp_results *results);

/** Source file the region is defined in, or NULL when unknown. */
SP_API const char *sp_results_row_source_file(const sp_results *results, size_t row);

/** Source line of the region definition, or -1 when unknown. */
SP_API int64_t sp_results_row_source_line(const sp_results *results, size_t row);

/** Captured source text, or NULL when not captured. */
SP_API const char *sp_results_row_source_text(const sp_results *results, size_t row);

/** The row's tags as the stored JSON list text, e.g. "[\"golden\"]"; "[]"
 *  when none (never NULL for a valid row; NULL when out of range). */
SP_API const char *sp_results_row_tags_json(const sp_results *results, size_t row);

/** Number of tags of row `row` (the JSON list decoded; 0 if the text is not
 *  a JSON list of strings). */
SP_API size_t sp_results_row_tag_count(const sp_results *results, size_t row);

/** Tag `tag` of row `row`, decoded to UTF-8, or NULL when out of range. */
SP_API const char *sp_results_row_tag(const sp_results *results, size_t row, size_t tag);

/** The row's per-call metadata as stored JSON (a list with one object per
 *  call), "[]" when none; NULL when out of range. */
SP_API const char *sp_results_row_event_metadata_json(const sp_results *results, size_t row);

/** Stored total exclusive ns of the row (FORMAT.md 2.2), -1 when not
 *  stored (the caller then rebuilds it from the call tree). Aggregate:
 *  aggregate_exclusives. */
SP_API int64_t sp_results_row_exclusive_total(const sp_results *results, size_t row);

/** Where the values of an sp_row_stats come from. */
typedef enum sp_stats_source {
    SP_STATS_FROM_EVENTS = 0,  /**< computed from the per-call arrays */
    SP_STATS_STORED = 1,       /**< the file's summary_statistics (summary-only) */
    SP_STATS_AGGREGATE = 2     /**< aggregate_* columns: count, total, minimum,
                                    maximum; with call paths (our aggregate
                                    mode) also mean, m2, start_minimum and
                                    end_maximum; the other fields are 0 */
} sp_stats_source;

/**
 * Fixed-size statistics of one row (FORMAT.md 2.1), all ns. Fields are
 * never reordered; new ones are only appended.
 */
typedef struct sp_row_stats {
    uint64_t count;          /**< calls */
    int64_t total;           /**< sum of durations */
    int64_t minimum;         /**< smallest duration */
    int64_t maximum;         /**< largest duration */
    int64_t first;           /**< duration of the first call in stored order */
    int64_t last;            /**< duration of the last call in stored order */
    int64_t start_minimum;   /**< earliest start */
    int64_t end_maximum;     /**< latest end */
    uint64_t gpu_count;      /**< GPU values >= 0 (0: no GPU timing) */
    int64_t gpu_total;       /**< sum of GPU values >= 0 */
    double mean;             /**< mean duration */
    double m2;               /**< sum of squared deviations from the mean, ns^2 */
    int source;              /**< sp_stats_source */
} sp_row_stats;

/**
 * Statistics of row `row` into *stats. Full reads compute them from the
 * events (two passes, as the writer does); summary-only reads return the
 * stored compound; aggregate files the aggregate columns.
 * Returns SP_OK, or SP_ERR_INVALID_ARGUMENT (results or stats NULL, row out
 * of range; *stats untouched).
 */
SP_API int sp_results_row_stats(const sp_results *results, size_t row, sp_row_stats *stats);

/* ---------------------------------------------------------------------------
 * Thread table (FORMAT.md 1.6); empty unless the run tracked threads
 * ------------------------------------------------------------------------- */

/** One thread-table row. Strings are owned by the results object. */
typedef struct sp_thread_info {
    uint32_t rank;
    int64_t index;       /**< what sp_results_row_thread_ids holds */
    int64_t ident;
    int64_t native_id;
    int daemon;          /**< 0/1 */
    int64_t start_ns;
    int64_t end_ns;      /**< -1 = still alive at finalize */
    int64_t cpu_ns;
    const char *name;    /**< "" when unknown */
} sp_thread_info;

/** Number of thread-table rows over all ranks. */
SP_API size_t sp_results_thread_count(const sp_results *results);

/** Thread-table row `index` into *info. SP_OK or SP_ERR_INVALID_ARGUMENT. */
SP_API int sp_results_thread(const sp_results *results, size_t index, sp_thread_info *info);

/* ---------------------------------------------------------------------------
 * Perf-event totals (rank<N>/perf_events/<region>, FORMAT.md 1.7)
 * ------------------------------------------------------------------------- */

/** Number of (rank, region) perf-event records. */
SP_API size_t sp_results_perf_count(const sp_results *results);

/**
 * Perf record `index`: rank, region name (owned), calls, and the number of
 * counters. Any out-pointer may be NULL. SP_OK or SP_ERR_INVALID_ARGUMENT.
 */
SP_API int sp_results_perf_record(const sp_results *results, size_t index, uint32_t *rank,
                                  const char **region, int64_t *calls, size_t *counter_count);

/** Counter `counter` of perf record `index`: its event name (owned) and its
 *  total. SP_OK or SP_ERR_INVALID_ARGUMENT. */
SP_API int sp_results_perf_counter(const sp_results *results, size_t index, size_t counter,
                                   const char **event_name, uint64_t *value);

/* ---------------------------------------------------------------------------
 * LIKWID results (rank<N>/likwid, FORMAT.md 1.7)
 *
 * One record per (rank, marker region), ranks ascending, regions by group
 * name within a rank. A record holds one LIKWID performance group measured
 * on `thread_count` hardware threads: per-thread vectors (cpu id, time,
 * call count) and, per event and per metric, a row of `thread_count`
 * values. Column t of every row belongs to hardware thread cpus[t].
 *
 *     for (size_t i = 0; i < sp_results_likwid_count(res); i++) {
 *         const char *tag; size_t nt;
 *         sp_results_likwid_record(res, i, NULL, &tag, NULL, NULL, NULL, &nt);
 *         for (size_t m = 0; m < sp_results_likwid_metric_count(res, i); m++) {
 *             const char *name; const double *v;
 *             sp_results_likwid_metric(res, i, m, &name, &v);
 *             ... v[0] .. v[nt-1] ...
 *         }
 *     }
 *
 * Ownership and thread-safety as everywhere in this header: pointers are
 * owned by the results object (valid until sp_results_close), accessors
 * may run concurrently.
 * ------------------------------------------------------------------------- */

/** Number of LIKWID region records over all ranks (0 for NULL, a .spt
 *  trace or a file without rank<N>/likwid). */
SP_API size_t sp_results_likwid_count(const sp_results *results);

/**
 * LIKWID record `index`. Any out-pointer may be NULL.
 *
 * rank:         the MPI rank (0 in a serial run).
 * tag:          the marker region's tag as the program named it ('/' kept).
 * group_name:   the LIKWID performance group, e.g. "FLOPS_DP"; "" when the
 *               file does not say.
 * group_id:     LIKWID's group id, -1 when unknown.
 * source:       where LIKWID's results came from: "marker_api",
 *               "marker_file" or "full_api"; "" when the file does not say.
 * thread_count: hardware threads measured: the length of cpus, times,
 *               call_counts and of every event and metric row.
 *
 * Returns SP_OK, or SP_ERR_INVALID_ARGUMENT (results NULL or index out of
 * range; the out-pointers are then untouched).
 */
SP_API int sp_results_likwid_record(const sp_results *results, size_t index, uint32_t *rank,
                                    const char **tag, const char **group_name,
                                    int64_t *group_id, const char **source,
                                    size_t *thread_count);

/**
 * Per-hardware-thread vectors of record `index`, thread_count long:
 *   cpus:        the CPU (hardware thread) id of each column
 *   times:       seconds spent in the region on that thread (LIKWID's own
 *                measurement, not the profiler's clock)
 *   call_counts: times the region was entered on that thread
 * NULL when the index is out of range or thread_count is 0.
 */
SP_API const int64_t *sp_results_likwid_cpus(const sp_results *results, size_t index);
SP_API const double *sp_results_likwid_times(const sp_results *results, size_t index);
SP_API const int64_t *sp_results_likwid_call_counts(const sp_results *results, size_t index);

/** Number of raw events of record `index` (0 when out of range). */
SP_API size_t sp_results_likwid_event_count(const sp_results *results, size_t index);

/**
 * Raw event `event` of record `index`. Any out-pointer may be NULL.
 * name:    the event, e.g. "FP_ARITH_INST_RETIRED_SCALAR_DOUBLE".
 * counter: the hardware counter it was counted on, e.g. "PMC0"; NULL when
 *          the file does not store counter names (they are optional).
 * values:  thread_count counts, one per hardware thread (as doubles, the
 *          way LIKWID reports them); NULL when thread_count is 0.
 * Returns SP_OK, or SP_ERR_INVALID_ARGUMENT (results NULL, index or event
 * out of range; the out-pointers are then untouched).
 */
SP_API int sp_results_likwid_event(const sp_results *results, size_t index, size_t event,
                                   const char **name, const char **counter,
                                   const double **values);

/** Number of derived metrics of record `index` (0 when out of range). */
SP_API size_t sp_results_likwid_metric_count(const sp_results *results, size_t index);

/**
 * Derived metric `metric` of record `index` (LIKWID's group formulas,
 * evaluated by LIKWID). Any out-pointer may be NULL.
 * name:   the metric with its unit as LIKWID spells it, e.g.
 *         "Runtime (RDTSC) [s]", "DP [MFLOP/s]".
 * values: thread_count values, one per hardware thread; NULL when
 *         thread_count is 0.
 * Returns SP_OK or SP_ERR_INVALID_ARGUMENT as sp_results_likwid_event.
 */
SP_API int sp_results_likwid_metric(const sp_results *results, size_t index, size_t metric,
                                    const char **name, const double **values);

/** Number of LIKWID_* environment settings stored with the results (the
 *  attributes of rank<N>/likwid), over all ranks. */
SP_API size_t sp_results_likwid_env_count(const sp_results *results);

/**
 * LIKWID_* environment setting `index`: the rank it was recorded on, the
 * variable name (e.g. "LIKWID_EVENTS") and its value. Any out-pointer may
 * be NULL. Returns SP_OK or SP_ERR_INVALID_ARGUMENT (results NULL, index
 * out of range).
 */
SP_API int sp_results_likwid_env(const sp_results *results, size_t index, uint32_t *rank,
                                 const char **name, const char **value);

#ifdef __cplusplus
}
#endif

#endif /* SCOPE_PROFILER_RESULTS_H */
