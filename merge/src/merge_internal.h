/*
 * merge_internal.h - the pieces of sp_merge_files: opening inputs for
 * streaming (merge_input.c), cursors over one row's events, and the copy of
 * the rank<N> groups (merge_aux.c). Internal to libscopeprofiler.
 */
#ifndef SPM_MERGE_INTERNAL_H
#define SPM_MERGE_INTERNAL_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>

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
    bool deltas;                /* start_deltas+durations, else start/end times */
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
 * the output file, later inputs winning on the same rank and region/tag. */
int spm_copy_aux(spm_input *inputs, size_t count, hid_t out, const char *out_path,
                 spi_error *err);

/* What the aggregate merge needs of the plan (merge.c). */
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

#endif /* SPM_MERGE_INTERNAL_H */
