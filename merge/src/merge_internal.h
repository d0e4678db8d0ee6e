/*
 * merge_internal.h - the pieces of sp_merge_files: opening inputs for
 * streaming (merge_input.c, their compressed columns decoded by
 * merge_chunks.c), cursors over one row's events, the copy of
 * the rank<N> groups (merge_aux.c), and the state and steps of the merge
 * itself (merge_validate.c, merge_plan.c, merge_sweep.c, merge_ids.c with
 * merge_extsort.c, merge_write.c, merge_common.c; merge.c runs them).
 * Internal to libscopeprofiler.
 */
#ifndef SPM_MERGE_INTERNAL_H
#define SPM_MERGE_INTERNAL_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "scope_profiler_merge.h"
#include "util/error.h"
#include "profile/profile.h"

/* Events per read: one chunk of the writer's event columns, so a read of a
 * compressed input decompresses each chunk once. */
#define SPM_BLOCK_EVENTS 65536

/* Per-call columns a cursor can deliver (absolute starts, durations, then
 * the optional ones in schema order). */
typedef enum spm_col {
    SPM_START, SPM_DURATION, SPM_GPU, SPM_CALL, SPM_PARENT, SPM_THREAD, SPM_TASK, SPM_AWAIT,
    SPM_COL_COUNT
} spm_col;

/* merge_chunks.c: a compressed event column decoded chunk by chunk
 * (H5Dread_chunk, libdeflate, unshuffle) instead of through HDF5's filters. */
typedef struct spm_chunk_column spm_chunk_column;
/* Whether SCOPE_PROFILER_MERGE_VALUE_PATH asks for HDF5's own reads only. */
bool spm_chunks_disabled(void);
/* *column: a decoder for dset (borrowed, stays open), or NULL when dset is
 * not a layout it decodes (then read it with H5Dread). readers: how many
 * cursors read the column in turn at most (the input's rows on a rank;
 * sizes its ring of decoded chunks). SP_OK or SP_ERR_OUT_OF_MEMORY. */
int spm_chunks_open(hid_t dset, size_t readers, spm_chunk_column **column);
void spm_chunks_close(spm_chunk_column *column);
/* The column's decoded chunks given back (after pass 1); a later read
 * decodes again. NULL is a no-op. */
void spm_chunks_release(spm_chunk_column *column);
/* count values from element pos into out; *done false when the caller must
 * read them through H5Dread instead (no decoder, a chunk HDF5 must decide
 * about). ahead_end (element): how far the caller reads this part of the
 * column in order (a row's end): chunks before it are decoded ahead by the
 * shared pool's helpers. SP_OK or SP_ERR_OUT_OF_MEMORY. Not thread-safe:
 * the merging thread only (the helpers never call HDF5). */
int spm_chunks_read(spm_chunk_column *column, uint64_t pos, uint64_t count, uint64_t ahead_end,
                    int64_t *out, bool *done);

/* Chunk `index` of the column as stored (filter mask 0, within deflate's
 * bound: spi_chunk_fetch) into *data (valid until the column's next read)
 * and *bytes, for a copy into the output (merge_write.c); *data NULL when
 * it is not to be copied: no decoder, not the shuffled layout, another
 * chunk size than chunk_elements, a partial last chunk, or a chunk HDF5
 * must decide about. SP_OK or SP_ERR_OUT_OF_MEMORY. Not thread-safe. */
int spm_chunks_stored(spm_chunk_column *column, uint64_t chunk_elements, uint64_t index,
                      const void **data, size_t *bytes);

typedef struct spm_input {
    const char *path;
    size_t arg_index;
    const char *prefix;         /* put before each region name; NULL: none */
    /* metadata, names, threads and rows. Whole inputs (schema 1, .spt)
     * carry their per-call arrays; streamed ones only index data. */
    spi_profile prof;
    bool whole;
    bool has_stats;             /* rows' stats are valid (stored or computed) */
    bool native;                /* metadata source == "native" */
    bool aggregate;             /* the aggregate layout: rows only, no events */
    unsigned columns;           /* SPM column bits present (1u << spm_col) */
    /* streamed inputs */
    hid_t file;
    hid_t dsets[SPM_COL_COUNT]; /* open event columns, -1 when absent */
    spm_chunk_column *chunked[SPM_COL_COUNT]; /* their chunk decoders, or NULL */
    bool deltas;                /* start_deltas+durations, else start/end times */
    uint64_t file_bytes;        /* the file's size, 0 when not known */
    uint64_t *offsets;          /* per row: first event in the columns */
} spm_input;

/* Open path for merging. An aggregate-layout input is read whole (rows and
 * call paths, no events) and marked `aggregate`. */
int spm_input_open(spm_input *in, const char *path, size_t arg_index, spi_error *err);
void spm_input_close(spm_input *in);

/* A forward cursor over one row's events, read in blocks. */
typedef struct spm_cursor {
    spm_input *in;
    size_t row;
    uint64_t count;            /* events in the row */
    uint64_t next;             /* row position of the next block to read */
    uint64_t base;             /* row position of block[0] */
    size_t len;                /* events in the current block */
    size_t cap;                /* 0 = borrowed arrays (whole inputs) */
    unsigned want;             /* columns to deliver */
    unsigned skip;             /* columns the next fills leave unread (stale
                                  values): merge_write.c's copied chunks;
                                  never SPM_START */
    int64_t *col[SPM_COL_COUNT];
    int64_t acc;               /* running sum of start deltas */
} spm_cursor;

/* cap: events per block (<= SPM_BLOCK_EVENTS); want: SPM column bits. */
int spm_cursor_init(spm_cursor *c, spm_input *in, size_t row, size_t cap, unsigned want,
                    spi_error *err);
/* Read the next block into c->col (c->len events, from row position
 * c->base); c->len = 0 at the end of the row. */
int spm_cursor_fill(spm_cursor *c, spi_error *err);
void spm_cursor_free(spm_cursor *c);

/* Copy rank<N>/{perf_events,likwid,line_profile} of every HDF5 input into
 * the output file, later inputs winning on the same rank and region/tag,
 * object by object through merge_copy.c. */
int spm_copy_aux(spm_input *inputs, size_t count, hid_t out, const char *out_path,
                 spi_error *err);

/* merge_copy.c: objects of an input copied by value after checks. */
typedef struct spm_copy {
    const struct spi_h5r *h;   /* the input: its file, path (messages), size, error */
    hid_t out;                 /* the output file */
    const char *out_path;
} spm_copy;
/* loc/name of the input (src_path names it in messages) rebuilt at dst in
 * the output (intermediate groups created): only hard links to objects
 * linked once, groups and datasets of plain element types, datasets no
 * larger than their written storage. SP_ERR_CORRUPT naming the input and
 * the object when one is refused (nothing is copied past it). */
int spm_copy_object(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                    const char *dst);
/* Every attribute of src that dst lacks, by value in its own type. */
int spm_copy_attributes(const spm_copy *c, hid_t src, hid_t dst, const char *src_path);
/* Open group loc/name after the same link checks. */
int spm_copy_open_group(const spm_copy *c, hid_t loc, const char *name, const char *src_path,
                        hid_t *group);

/* What the aggregate merge needs of the plan (merge_plan.c; merge.c passes it). */
typedef struct spm_aggregate_plan {
    const uint32_t *ranks;         /* sorted, distinct */
    size_t rank_count;
    const size_t *by_order;        /* inputs in id order: drivers first */
    const uint32_t *region_base;   /* per input: its first id in the union table */
    const int64_t *thread_offset;  /* [input * rank_count + rank index] */
} spm_aggregate_plan;

/* The merge when some input is aggregate: an aggregate output with call
 * paths (merge_aggregate.c). `metadata` is the merged metadata. Returns
 * SP_OK or the first error (err set); nothing is written on error. */
int spm_merge_aggregate(spm_input *inputs, size_t count, const spm_aggregate_plan *plan,
                        spi_meta *metadata, const char *output, spi_error *err);

/* ---- the merge's state, shared by its steps ---------------------------------- */

/* merge_extsort.c: an external sort in a fixed memory budget. A record is
 * a numbered call (row -1: id, start, end) or a reference to a parent
 * (id: the parent id; start, end, row ordinal and event position of the
 * child); sorted by (id, row, position), a call comes before the
 * references to it. */
typedef struct spm_key_record {
    int64_t id, start, end;
    int64_t row;               /* -1: a call; else the child's row ordinal on the rank */
    int64_t position;          /* the child's event position in its row */
} spm_key_record;
/* The scratch file the sorters of one rank append their runs to
 * (created on first use, emptied after each rank). */
typedef struct spm_sort_scratch {
    FILE *file;
    uint64_t end;              /* records written */
} spm_sort_scratch;
typedef struct spm_sorter spm_sorter;
/* All return SP_OK, SP_ERR_OUT_OF_MEMORY or SP_ERR_OUTPUT (scratch I/O),
 * with err set. Not thread-safe. */
int spm_sorter_new(spm_sorter **s, spm_sort_scratch *scratch, size_t budget_bytes,
                   spi_error *err);
/* Change the buffers' budget (takes effect on the next buffer). */
void spm_sorter_set_budget(spm_sorter *s, size_t budget_bytes);
int spm_sorter_push(spm_sorter *s, const spm_key_record *r, spi_error *err);
/* Write the buffered records as a run and free the buffer. */
int spm_sorter_spill(spm_sorter *s, spi_error *err);
/* Stop adding; spm_sorter_next then gives every record in order. */
int spm_sorter_start(spm_sorter *s, spi_error *err);
int spm_sorter_next(spm_sorter *s, spm_key_record *r, bool *got, spi_error *err);
void spm_sorter_free(spm_sorter *s);

/* merge_ids.c: what the merge knows of one input's numbered calls on one
 * rank, in memory that does not grow with them. Pass 1 sees the ids in
 * start order; when they arrive strictly increasing and without gaps (what
 * our writers produce) a call's rank among them is id - first, and no
 * table is needed. Otherwise the calls are read again into an external
 * sort, which finds repeated ids and leaves the sorted ids as ranges of
 * consecutive ids (rank of each range's first id) in the map file. */
typedef struct spm_id_cell {
    uint64_t count;            /* numbered calls */
    int64_t first, last;       /* first and last id pass 1 saw */
    bool unordered;            /* some id was not above the one before it */
    bool dense;                /* after pass 1: the ids are first .. first + count - 1 */
    uint64_t map_at, map_len;  /* otherwise: ranges in the map file */
    spm_sorter *refs;          /* during the rank's pass 1: parent references
                                  pass 1 could not check on a lane's stack */
} spm_id_cell;

/* A refusal found by the id checks, kept to be returned in the order the
 * old whole-table checks gave (merge_ids.c). */
typedef struct spm_id_failure {
    bool set;
    int kind;                  /* SPM_FAIL_* */
    size_t input, rank_idx;
    int64_t row, position;     /* the child's row ordinal and event position */
    int64_t id;                /* repeated id, or the parent id */
    int64_t start;             /* the child's start */
} spm_id_failure;
enum { SPM_FAIL_REPEATED = 1, SPM_FAIL_MISSING_PARENT, SPM_FAIL_NOT_INSIDE };

/* A cursor for id lookups in one cell's map: a window of its ranges. */
typedef struct spm_id_lookup {
    size_t cell;               /* whose ranges the window holds (when window_len > 0) */
    struct spm_id_range *window;
    uint64_t window_at;        /* range index of window[0] */
    size_t window_len, window_capacity;
    int64_t window_end;        /* ids from here belong to later windows */
    int64_t window_end_rank;   /* rank of the range after the window (or the count) */
    int64_t *index;            /* maps larger than the window: every
                                  SPM_ID_STRIDE-th range's first id */
    size_t index_cell;
} spm_id_lookup;

typedef struct spm_thread_set {
    int64_t *indices;          /* sorted, distinct */
    size_t *table_rows;        /* per index: its row in the input's thread table */
    int64_t *lanes;            /* per index: its output thread id (merge_lanes.c) */
    size_t count;
} spm_thread_set;

/* A call's new parent, found in pass 1 for a numbered call stored as a
 * root (or without parent_ids) whose lane encloses it in a numbered call,
 * one per way of laying out the rank's lanes (merge_lanes.c):
 *   joint: the inputs' main lanes share one output thread; the host is a
 *          call of the input at position host_order - 1 of the id order
 *          (0: none), by its stored id;
 *   alone: every input keeps its own lanes; the host is a call of the same
 *          input, stored id alone_host - 1 (0: none). */
typedef struct spm_adoption {
    int64_t host_order;
    int64_t host_id;
    int64_t alone_host;
    int64_t own_id;            /* a call of an input without call_ids: the id
                                  pass 1 gave it + 1 (0: none) */
} spm_adoption;

/* An input's main lane on a rank (spm_merge.primary): its calls without a
 * thread when it has no thread_ids, else its thread 0; or none. */
#define SPM_PRIMARY_UNKNOWN_THREAD (-1)
#define SPM_NO_PRIMARY (-2)

typedef struct spm_merge {
    spm_input *inputs;
    size_t input_count;
    size_t *by_order;          /* inputs in id order (driver first) */
    size_t *order_of;          /* input -> its position in by_order */
    uint32_t *ranks;           /* sorted, distinct */
    size_t rank_count;
    size_t *slot_base;         /* per input: first slot of its rows */
    size_t slot_count;
    int64_t *slot_exclusive;   /* per slot, pass 1, main lanes joint */
    int64_t *slot_exclusive_alone; /* per slot, pass 1, every input's lanes its own */
    bool *slot_adopted;        /* per slot: some call got a new parent */
    uint64_t *slot_spill;      /* per slot: first event position in the scratch file */
    bool *rank_nested;         /* per rank: pass 1 rebuilt the nesting */
    bool *rank_joint;          /* per rank: the linked inputs' main lanes are one lane */
    int64_t *max_id;           /* [input * rank_count + rank]: highest call id, -1 none */
    spm_id_cell *ids;          /* same shape: the numbered calls (merge_ids.c) */
    spm_thread_set *thread_sets; /* same shape: thread indices of the table */
    int64_t *primary;          /* same shape: the main lane (SPM_PRIMARY_*, or a thread) */
    bool *has_unknown;         /* same shape: some call has no thread (pass 1) */
    bool *linked;              /* same shape: its main lane nests with another input's */
    int64_t *unknown_lane;     /* same shape: output thread id of calls without one */
    spi_thread_row *out_threads; /* the output's thread table (merge_lanes.c) */
    size_t out_thread_count;
    size_t **rank_rows;        /* ... (row indices) */
    int64_t *id_offset;        /* same shape */
    int64_t *thread_offset;    /* same shape */
    uint32_t *region_base;     /* per input: its first id in the union table */
    FILE *spill;
    spm_sort_scratch sort_scratch; /* pass 1's sort runs (merge_ids.c) */
    FILE *id_maps;             /* id ranges of cells that are not dense */
    uint64_t id_maps_end;      /* ranges written */
    size_t memory_budget;      /* bytes for id records (SCOPE_PROFILER_MERGE_MEMORY) */
    spm_id_failure repeated, parent_failure; /* deferred refusals (merge_ids.c) */
    uint64_t done, total;      /* progress */
    bool number_all;           /* the output has call_ids: calls of inputs
                                  without them are numbered in start order */
    const sp_merge_options *options;
    /* The output has a thread_ids column: some rank of the whole output
     * has a lane table row (m->out_thread_count > 0 alone, or in a group
     * any process's; merge_parts.c). */
    bool thread_column;
} spm_merge;

/* merge_common.c: helpers of every step. */
/* The out-of-memory error; returns its status. */
int spm_oom(spi_error *err);
/* An input's call that scope-check would reject: refused, naming it. */
__attribute__((format(printf, 5, 6))) int spm_refuse(spi_error *err, const spm_input *in,
                                                     uint32_t rank, uint32_t region,
                                                     const char *format, ...);
/* Count `events` as done and tell the progress callback, if any. */
void spm_report(spm_merge *m, uint64_t events);

/* merge_validate.c: before anything is opened or planned. */
/* At least two non-empty inputs and an output; no input twice, the output none of them. */
int spm_check_arguments(const char *const *inputs, size_t count, const char *output,
                        spi_error *err);
/* Put prefix (--prefix) before each of the input's region names. */
int spm_apply_prefix(spm_input *in, const char *prefix, spi_error *err);
/* Every name in more than one input, with the inputs, into *message (new
 * string) when there is any. */
int spm_find_collisions(const spm_merge *m, char **message, spi_error *err);

/* merge_plan.c: the plan and the renumbering. */
/* Ranks, id order, region bases, slots, thread offsets and rows by rank. */
int spm_plan(spm_merge *m, spi_error *err);
/* The rows of input i on `rank`, in file order: rows[0 .. *count). */
const size_t *spm_rows_on_rank(const spm_merge *m, size_t i, uint32_t rank, size_t *count);
/* Position of index in the (sorted) thread set, or -1. */
int64_t spm_thread_find(const spm_thread_set *t, int64_t index);
/* The merged metadata of all inputs into meta. */
int spm_build_metadata(const spm_merge *m, spi_meta *meta, spi_error *err);
/* After pass 1 (and merge_ids.c's checks): set id_offset from each cell's
 * count of numbered calls. */
int spm_number_ids(spm_merge *m, spi_error *err);

/* merge_ids.c */
/* The budget SCOPE_PROFILER_MERGE_MEMORY sets (bytes), or the default. */
size_t spm_memory_budget(void);
/* Pass 1 saw numbered call `id` of cell (in start order). */
static inline void spm_ids_note(spm_id_cell *c, int64_t id) {
    if (c->count == 0) c->first = id;
    else if (id <= c->last) c->unordered = true;
    c->last = id;
    c->count++;
}
/* Pass 1 could not check the parent of a call on its lane's stack: the
 * reference is checked after the rank's pass 1. */
int spm_ids_refer(spm_merge *m, size_t cell, const spm_key_record *reference, spi_error *err);
/* Pass 1 gave call `id` of cell (an input without call ids, numbered by
 * pass 1) and it is to be kept as a call record (inputs with parent ids). */
int spm_ids_keep(spm_merge *m, size_t cell, const spm_key_record *call, spi_error *err);
/* After pass 1 of rank index ri: decide each cell's numbering, reading
 * the calls again where pass 1 could not (repeated ids and parent checks
 * are kept in m->repeated / m->parent_failure). */
int spm_ids_finish_rank(spm_merge *m, size_t ri, spi_error *err);
/* Turn a kept failure into the refusal (err), or SP_OK. */
int spm_ids_refuse(const spm_merge *m, const spm_id_failure *f, spi_error *err);
/* Keep another process's kept refusals where they come first (merge_parts.c). */
void spm_ids_keep_failures(spm_merge *m, const spm_id_failure *repeated,
                           const spm_id_failure *parent_failure);
/* The rank of id among the cell's numbered calls (-1 if it is none). Slow
 * path of spm_id_rank. */
int spm_id_rank_mapped(const spm_merge *m, spm_id_lookup *l, size_t cell, int64_t id,
                       int64_t *rank, spi_error *err);
static inline int spm_id_rank(const spm_merge *m, spm_id_lookup *l, size_t cell, int64_t id,
                              int64_t *rank, spi_error *err) {
    const spm_id_cell *c = &m->ids[cell];
    if (c->dense) {
        uint64_t k = (uint64_t)id - (uint64_t)c->first;
        *rank = id >= c->first && k < c->count ? (int64_t)k : -1;
        return SP_OK;
    }
    return spm_id_rank_mapped(m, l, cell, id, rank, err);
}
void spm_id_lookup_free(spm_id_lookup *l);

/* merge_sweep.c: pass 1. */
/* Nest, validate and total the calls of rank index rank_idx. */
int spm_sweep_rank(spm_merge *m, size_t rank_idx, spi_error *err);
/* Refuse inputs whose time spans neither overlap nor nest. */
int spm_check_spans(const spm_merge *m, spi_error *err);

/* merge_lanes.c: after pass 1, the output's lanes. */
/* Per rank, the output thread id of every input lane and the output's
 * thread table naming each (m->out_threads). */
int spm_assign_lanes(spm_merge *m, spi_error *err);
/* The same for rank indices [first, end) only (a group's part). */
int spm_assign_lanes_range(spm_merge *m, size_t first, size_t end, spi_error *err);
/* The output thread id of a call of input i on rank index ri stored with
 * thread id `thread` (-1: none). */
int64_t spm_lane_of(const spm_merge *m, size_t i, size_t ri, int64_t thread);

/* merge_write.c: pass 2. */
/* Write and publish the merged file at output (nothing on error). */
int spm_write_output(spm_merge *m, const char *output, spi_error *err);
/* A group's part (merge_parts.c): the rows of rank indices [first, end)
 * published at path, after a leading row of `pad` zero events (region 0)
 * that puts its events at the output's offsets modulo the chunk size; the
 * thread table of those ranks; no rank<N> groups. */
int spm_write_part(spm_merge *m, const char *path, size_t first, size_t end, uint64_t pad,
                   spi_error *err);
/* The output's layout (rows, events, columns, regions) and its region
 * names in id order (*names: new array of borrowed strings). */
struct spi_writer_layout;
int spm_output_layout(const spm_merge *m, struct spi_writer_layout *layout, const char ***names,
                      spi_error *err);

/* merge_parts.c: sp_merge_files in a group of processes. */
/* Every process's status: each returns the first failing process's
 * status and message (process order is rank order: the merge alone's). */
int spm_group_agree(const sp_merge_group *g, int status, spi_error *err);
/* Pass 1, the checks, the parts and the assembly, after the plan. */
int spm_group_merge(spm_merge *m, const char *output, spi_error *err);

/* merge_parts_assemble.c: process 0 writes the output from the parts. */
int spm_assemble_parts(spm_merge *m, const char *output, char *const *parts,
                       const uint64_t *pads, const size_t *first, size_t part_count,
                       uint64_t thread_count, spi_error *err);

#endif /* SPM_MERGE_INTERNAL_H */
