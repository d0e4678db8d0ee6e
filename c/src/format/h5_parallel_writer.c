/*
 * h5_parallel_writer.c - the collective writer (see h5_parallel_writer.h).
 *
 * Why this shape:
 *  - Rows are in rank order (rank 0's rows, then rank 1's, ...), exactly
 *    as the rank-0 funnel writes them, so both paths give the same file and
 *    each rank's calls are one contiguous hyperslab of every event column
 *    starting at plan->first_event (an exclusive prefix sum of the ranks'
 *    calls). start_deltas restart at every row, and no row spans two
 *    ranks, so each rank encodes its own deltas.
 *  - Compression stays on: HDF5 >= 1.10.2 writes filtered (chunked,
 *    shuffle + deflate) datasets in parallel when every transfer is
 *    collective. The chunks and filters are the streaming writer's; only
 *    the deflate level differs (PARALLEL_DEFLATE_LEVEL: HDF5's zlib runs
 *    it here, not libdeflate). A chunk shared by two ranks' hyperslabs is
 *    assembled by one owner rank inside HDF5. So every H5Dwrite here is collective and
 *    every rank makes the same number of them: the rounds are counted from
 *    the largest rank's calls, and a rank with nothing left in a round
 *    writes an empty selection. Rounds end on the chunk grid.
 *  - Variable-length data cannot be written in parallel by HDF5 1.10 (the
 *    global heap is not coordinated), and it is small here: the region and
 *    thread tables, the metadata attributes, the index's four text columns
 *    (their "not recorded" values for a recorded job: the funnel writes the
 *    same). Rank 0 adds them after the collective close, alone, through
 *    the default driver, before the rename. Memory stays bounded there too:
 *    the text columns go out in slices of one shared pointer array.
 *  - Memory per rank: one slice of each event column (SLICE_EVENTS calls)
 *    and this rank's index rows; no rank holds another rank's calls.
 *  - Failures: a local failure before an HDF5 call (a spill file that
 *    cannot be read back, an injected failure) never changes the sequence
 *    of collective calls, so it cannot hang anyone. A failure INSIDE a
 *    collective HDF5 write is HDF5's and MPI-IO's to report: Open MPI's
 *    default OMPIO does not report ENOSPC from collective writes at all
 *    (tests/mpi check_writers.py full: rank 0's reopen, flush or fsync of
 *    the temporary then fails and the ranks agree on that), and with ROMIO
 *    a write error on one aggregator can leave HDF5 1.10's own collective
 *    chunk bookkeeping waiting on the other ranks (a hang inside HDF5,
 *    seen on a full tmpfs). Nothing is published in either case.
 *  - Deadlines: HDF5's collective calls (H5Fcreate, H5Dcreate, H5Dwrite,
 *    H5Fclose over MPI-IO) block until every rank joins, with no timeout.
 *    So every collective phase is entered only after a nonblocking
 *    agreement (or, per round of event writes, a nonblocking barrier)
 *    that completed within the caller's deadline (bounds->wait): a rank
 *    that died or stopped before the phase is reported by the others
 *    instead of holding them forever. Once a wait gave up, no collective
 *    call is made again, not even the close of the MPI-IO file (it would
 *    wait for the missing rank): the handle is left to the process's end.
 *    The exchanges' buffers are static, because a collective left pending
 *    may still write them after the wait gave up.
 */
#include "format/h5_parallel_writer.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "format/h5_counter_groups.h"
#include "format/h5_file_parts.h"
#include "format/h5_util.h"
#include "format/h5_writer.h"
#include "format/output_check.h"
#include "format/schema.h"

/* Calls per collective round: eight chunks of a compressed column (4 MiB
 * per column buffer). Every round costs several collective exchanges inside
 * HDF5 (chunk ownership, chunk allocation), so fewer, larger rounds are
 * faster: at np 8 x 1M calls on 2 cores, 8 chunks gave a median finalize
 * of 0.61 s against 0.65 s with 4, and rank 0's peak RSS did not move (it
 * is set by building the profile, before the writer runs). */
#define SLICE_EVENTS (8 * SPI_EVENT_CHUNK_ELEMENTS)
/* zlib's level for the event columns' deflate filter. The streaming writer
 * deflates its chunks itself (libdeflate on its threads,
 * h5_column_pool.c) and stores them with H5Dwrite_chunk; neither is open
 * to this writer: H5Dwrite_chunk is not supported with parallel HDF5
 * (H5Dpublic.h of 1.10.8 says so: a chunk one rank writes alone would
 * change the file's chunk index on that rank only), and H5Zregister
 * refuses to replace the predefined deflate filter with a libdeflate one
 * ("unable to modify predefined filters"). So HDF5's filter pipeline
 * compresses each chunk, with zlib, on the rank that owns it.
 * Measured on the same shuffled 512 KiB chunks (710 chunks of mpi_record
 * bulk files, 372 MB raw; bench/parallel_write/RESULTS.md): zlib level 1
 * stores 1.49x the bytes of libdeflate level 2, level 4 1.05x, level 5
 * 0.99x, level 6 0.95x; CPU per chunk against zlib level 1 (two runs,
 * load 12-17): 2.0-2.2x at level 4, 2.1-2.4x at level 5, 2.7-3.1x at
 * level 6. End to end, level 5 made the collective write 39-50% longer
 * (np 2 and 4) for event columns 9% smaller. Finalize time is what issue
 * 31 asks to cut, and the file was already compressed, so level 1 stays:
 * the job's event columns are about 1.1x the streaming writer's. The
 * level HDF5 records in the dataset only describes the stream; inflate
 * reads any. A site that prefers smaller files may build with
 * -DPARALLEL_DEFLATE_LEVEL=5. */
#ifndef PARALLEL_DEFLATE_LEVEL
#define PARALLEL_DEFLATE_LEVEL 1
#endif
/* Rows per write of a text column on rank 0. */
#define TEXT_SLICE_ROWS 65536

/* The index columns written collectively (fixed-size elements) and those
 * rank 0 writes alone (variable-length strings). */
static const spi_index_col parallel_index[] = {
    SPI_IDX_REGION_IDS, SPI_IDX_RANKS, SPI_IDX_EVENT_OFFSETS, SPI_IDX_EVENT_COUNTS,
    SPI_IDX_SOURCE_LINES, SPI_IDX_EXCLUSIVE_TOTALS, SPI_IDX_SUMMARY_STATISTICS};
#define PARALLEL_INDEX_COUNT (sizeof parallel_index / sizeof parallel_index[0])
static const spi_index_col text_index[] = {SPI_IDX_SOURCE_FILES, SPI_IDX_SOURCE_TEXTS,
                                           SPI_IDX_TAGS, SPI_IDX_EVENT_METADATA};
#define TEXT_INDEX_COUNT (sizeof text_index / sizeof text_index[0])

typedef struct parallel_writer {
    MPI_Comm comm;
    int me;
    const char *path;
    char *temp;
    int partial_slot;
    hid_t file;
    hid_t dxpl;                       /* collective transfers */
    hid_t events[SPI_EV_COUNT];       /* -1: not in this file */
    hid_t index[PARALLEL_INDEX_COUNT];
    int64_t *buffers[SPI_EV_COUNT];   /* SLICE_EVENTS each, for the columns written */
    /* this rank's index rows */
    spi_index_rows index_rows;
    const spi_parallel_bounds *bounds;
    bool gave_up; /* a wait timed out or failed: no collective call again */
} parallel_writer;

static int mpi_fail(spi_error *err, int code, const char *path, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", code);
    return spi_error_set(err, SP_ERR_MPI, "%s: MPI error while %s: %s", path, what, text);
}

/* Wait for a nonblocking exchange just started (rc is the start's result)
 * through the caller's deadline. SP_OK, or SP_ERR_MPI with w->gave_up set.
 * A rank that already failed keeps its own message (err untouched); the
 * failure to reach the others then only stops further collectives. */
static int bounded(parallel_writer *w, int rc, MPI_Request *request, int root, const char *phase,
                   int status, spi_error *err) {
    spi_error why = {0};
    int waited = rc != MPI_SUCCESS ? mpi_fail(&why, rc, w->path, phase)
                                   : w->bounds->wait(request, w->me, root, phase, &why);
    if (waited == SP_OK) return SP_OK;
    w->gave_up = true;
    if (status != SP_OK) return SP_ERR_MPI;
    if (rc != MPI_SUCCESS) return spi_error_set(err, SP_ERR_MPI, "%s", why.message);
    /* the caller's message names the phase and the ranks: add the file */
    return spi_error_set(err, SP_ERR_MPI, "%s: %s", w->path, why.message);
}

static void checkpoint(const parallel_writer *w, const char *phase) {
    if (w->bounds->checkpoint) w->bounds->checkpoint(w->me, phase);
}

/* The ranks agree on one status before the collective phase `phase`:
 * SP_OK when every rank's is, else the status of the lowest failing rank
 * (its message stays its own; the other ranks say which rank failed), or
 * SP_ERR_MPI when a rank did not answer in time. Collective, bounded. */
static int agree(parallel_writer *w, int status, const char *phase, spi_error *err) {
    if (w->gave_up) return status != SP_OK ? status : SP_ERR_MPI;
    /* static: a pending exchange may write them after a timeout */
    static struct { int ok; int rank; } mine, first;
    static int code;
    mine.ok = status == SP_OK;
    mine.rank = w->me;
    first.ok = 0;
    first.rank = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = PMPI_Iallreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, w->comm, &request);
    int waited = bounded(w, rc, &request, -1, phase, status, err);
    if (waited != SP_OK) return status != SP_OK ? status : waited;
    if (first.ok) return SP_OK;
    code = status;
    rc = PMPI_Ibcast(&code, 1, MPI_INT, first.rank, w->comm, &request);
    waited = bounded(w, rc, &request, first.rank, phase, status, err);
    if (status != SP_OK) return status;
    if (waited != SP_OK) return waited;
    return spi_error_set(err, code, "%s: rank %d could not write its part of the file (see its "
                         "message); nothing was published", w->path, first.rank);
}

#ifdef SPI_FAULT_INJECTION
/* Test builds only (CMake SCOPE_PROFILER_FAULT_INJECTION): the rank named by
 * SCOPE_PROFILER_TEST_FAIL_RANK fails as if its calls could not be read
 * back, after its first round, and must take every other rank down with it. */
static bool injected_failure(const parallel_writer *w) {
    const char *value = getenv("SCOPE_PROFILER_TEST_FAIL_RANK");
    return value && *value && atoi(value) == w->me;
}
#endif

/* ---- layout -------------------------------------------------------------------- */

static int allocate(parallel_writer *w, const spi_profile *local, unsigned columns) {
    for (int c = 0; c < SPI_EV_COUNT; c++)
        if ((columns & SPI_EV_BIT(c)) && !(w->buffers[c] = spi_calloc(SLICE_EVENTS, sizeof(int64_t))))
            return SP_ERR_OUT_OF_MEMORY;
    return spi_index_rows_alloc(&w->index_rows, local->row_count);
}

/* A compressed event column as the streaming writer makes it (the same
 * chunks and filters: shuffle, then deflate; spi_h5_event_columns_chunked
 * decides for both writers), but with deflate at PARALLEL_DEFLATE_LEVEL,
 * because here HDF5's own filter (zlib) runs it. Small columns stay
 * contiguous exactly as spi_h5_create_event_column makes them. */
static hid_t create_event_column(hid_t events, const spi_column *column, uint64_t count) {
    if (!spi_h5_event_columns_chunked(count))
        return spi_h5_create_event_column(events, column, count, H5P_DEFAULT);
    hsize_t dims[1] = {count};
    hsize_t chunk[1] = {count < SPI_EVENT_CHUNK_ELEMENTS ? count : SPI_EVENT_CHUNK_ELEMENTS};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t type = spi_elem_file_type(column->elem);
    hid_t dset = -1;
    if (space >= 0 && dcpl >= 0 && type >= 0 && H5Pset_chunk(dcpl, 1, chunk) >= 0 &&
        H5Pset_shuffle(dcpl) >= 0 && H5Pset_deflate(dcpl, PARALLEL_DEFLATE_LEVEL) >= 0)
        dset = H5Dcreate2(events, column->name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    spi_elem_type_release(column->elem, type);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return dset;
}

/* Every dataset of the collective phase, at its final size. Collective:
 * identical calls on every rank. */
static int create_layout(parallel_writer *w, const spi_parallel_plan *plan, unsigned columns) {
    hid_t events = spi_h5_create_group(w->file, SPI_GROUP_EVENTS);
    int status = events >= 0 ? SP_OK : SP_ERR_HDF5;
    for (int c = 0; c < SPI_EV_COUNT && status == SP_OK; c++) {
        if (!(columns & SPI_EV_BIT(c))) continue;
        w->events[c] = create_event_column(events, &spi_event_columns[c], plan->event_count);
        if (w->events[c] < 0) status = SP_ERR_HDF5;
    }
    if (events >= 0) H5Gclose(events);
    hid_t index = status == SP_OK ? spi_h5_create_group(w->file, SPI_GROUP_INDEX) : -1;
    if (status == SP_OK && index < 0) status = SP_ERR_HDF5;
    hsize_t dims[1] = {plan->row_count};
    hid_t space = status == SP_OK ? H5Screate_simple(1, dims, NULL) : -1;
    for (size_t i = 0; i < PARALLEL_INDEX_COUNT && status == SP_OK; i++) {
        const spi_column *column = &spi_index_columns[parallel_index[i]];
        hid_t type = spi_elem_file_type(column->elem);
        w->index[i] = type >= 0 ? H5Dcreate2(index, column->name, type, space, H5P_DEFAULT,
                                             H5P_DEFAULT, H5P_DEFAULT)
                                : -1;
        spi_elem_type_release(column->elem, type);
        if (w->index[i] < 0) status = SP_ERR_HDF5;
    }
    if (space >= 0) H5Sclose(space);
    if (index >= 0) H5Gclose(index);
    return status;
}

/* ---- events ---------------------------------------------------------------------- */

/* Up to `room` calls of row `row` from `first` into the buffers at `at`,
 * start_deltas against *previous (0 at a row start). SP_OK with *taken set,
 * or the read's error (then the caller fills zeros). */
static int take_calls(parallel_writer *w, const spi_profile *local, size_t row, uint64_t first,
                      size_t room, size_t at, int64_t *previous, size_t *taken, spi_error *err) {
    spi_call_slice slice;
    int status = spi_profile_row_calls(local, row, first, room, &slice, err);
    if (status == SP_OK && slice.count == 0)
        status = spi_error_set(err, SP_ERR_CORRUPT, "row %zu ended early", row);
    if (status != SP_OK) return status;
    const int64_t *sources[SPI_EV_COUNT] = {[SPI_EV_DURATIONS] = slice.durations,
                                            [SPI_EV_CALL_IDS] = slice.call_ids,
                                            [SPI_EV_PARENT_IDS] = slice.parent_ids,
                                            [SPI_EV_THREAD_IDS] = slice.thread_ids};
    for (size_t i = 0; i < slice.count; i++) {
        w->buffers[SPI_EV_START_DELTAS][at + i] = slice.starts[i] - *previous;
        *previous = slice.starts[i];
    }
    for (int c = 0; c < SPI_EV_COUNT; c++) {
        if (!w->buffers[c] || c == SPI_EV_START_DELTAS) continue;
        if (sources[c]) {
            memcpy(w->buffers[c] + at, sources[c], slice.count * sizeof(int64_t));
        } else {
            for (size_t i = 0; i < slice.count; i++) w->buffers[c][at + i] = spi_event_columns[c].missing;
        }
    }
    *taken = slice.count;
    return SP_OK;
}

static void zero_calls(parallel_writer *w, size_t at, size_t n) {
    for (int c = 0; c < SPI_EV_COUNT; c++)
        if (w->buffers[c]) memset(w->buffers[c] + at, 0, n * sizeof(int64_t));
}

/* This rank's calls, round by round, and its index rows. Every rank makes
 * the same collective calls whatever happens locally; `*status` keeps the
 * first local failure. */
static void write_events(parallel_writer *w, const spi_parallel_plan *plan,
                         const spi_profile *local, int *status, spi_error *err) {
    /* Rounds end on the file's chunk grid, so a chunk is written by one
     * round only (a chunk cut between two rounds of one rank would be read
     * back, inflated, patched and compressed again); only the chunks at the
     * boundaries between ranks are shared. The first round is shorter by
     * this rank's offset into its first chunk, so the ranks agree on the
     * number of rounds. */
    uint64_t skew = plan->first_event % SPI_EVENT_CHUNK_ELEMENTS;
    static uint64_t mine, rounds; /* static: see bounded() */
    mine = (skew + local->event_count + SLICE_EVENTS - 1) / SLICE_EVENTS;
    rounds = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = PMPI_Iallreduce(&mine, &rounds, 1, MPI_UINT64_T, MPI_MAX, w->comm, &request);
    int counted = bounded(w, rc, &request, -1, "counting the rounds of the parallel write",
                          *status, err);
    if (counted != SP_OK && *status == SP_OK) *status = counted;
    if (counted != SP_OK) return; /* no collective write without every rank */
    size_t row = 0;
    uint64_t in_row = 0, written = 0;
    int64_t previous = 0;
    for (uint64_t round = 0; round < rounds; round++) {
        /* every rank is still there before this round's collective writes
         * (a barrier costs far less than the round's chunk exchanges) */
        checkpoint(w, "parallel-events");
        rc = PMPI_Ibarrier(w->comm, &request);
        int alive = bounded(w, rc, &request, -1, "writing the calls in parallel", *status, err);
        if (alive != SP_OK) {
            if (*status == SP_OK) *status = alive;
            return;
        }
        size_t n = 0, limit = round == 0 ? SLICE_EVENTS - (size_t)skew : SLICE_EVENTS;
        while (row < local->row_count) {
            const spi_row *r = &local->rows[row];
            if (in_row == 0) {
                w->index_rows.region_ids[row] = plan->region_map[r->region];
                w->index_rows.ranks[row] = plan->rank;
                w->index_rows.offsets[row] = plan->first_event + written + n;
                w->index_rows.counts[row] = r->count;
                w->index_rows.source_lines[row] = r->source_line;
                w->index_rows.exclusive_totals[row] = r->exclusive_total;
                previous = 0;
            }
            if (in_row == r->count) { /* every call taken: the statistics are final */
                w->index_rows.stats[row] = *spi_profile_row_stats(local, row);
                row++;
                in_row = 0;
                continue;
            }
            if (n == limit) break;
            size_t room = limit - n, taken = 0;
            if (room > r->count - in_row) room = (size_t)(r->count - in_row);
            if (*status == SP_OK)
                *status = take_calls(w, local, row, in_row, room, n, &previous, &taken, err);
            if (*status != SP_OK) { /* keep the shape of the collective writes */
                zero_calls(w, n, room);
                taken = room;
            }
            n += taken;
            in_row += taken;
        }
#ifdef SPI_FAULT_INJECTION
        if (*status == SP_OK && injected_failure(w))
            *status = spi_error_set(err, SP_ERR_CORRUPT,
                                    "%s: injected failure of rank %d (SCOPE_PROFILER_TEST_FAIL_RANK)",
                                    w->path, w->me);
#endif
        for (int c = 0; c < SPI_EV_COUNT; c++) {
            if (w->events[c] < 0) continue;
            errno = 0;
            if (spi_h5_write_slice(w->events[c], H5T_NATIVE_INT64, plan->first_event + written,
                                   w->buffers[c], n, w->dxpl) != SP_OK &&
                *status == SP_OK)
                *status = spi_h5_fail(err, w->path, "write events in parallel");
        }
        written += n;
    }
    /* rows with no calls after the last round (or no rounds at all) */
    for (; row < local->row_count; row++) {
        const spi_row *r = &local->rows[row];
        w->index_rows.region_ids[row] = plan->region_map[r->region];
        w->index_rows.ranks[row] = plan->rank;
        w->index_rows.offsets[row] = plan->first_event + written;
        w->index_rows.counts[row] = r->count;
        w->index_rows.source_lines[row] = r->source_line;
        w->index_rows.exclusive_totals[row] = r->exclusive_total;
        w->index_rows.stats[row] = *spi_profile_row_stats(local, row);
    }
}

static void write_index_rows(parallel_writer *w, const spi_parallel_plan *plan, size_t rows,
                             int *status, spi_error *err) {
    /* an empty index (no rank recorded anything): HDF5 refuses a collective
     * write into a dataset of size 0, and there is nothing to write */
    if (plan->row_count == 0 || w->gave_up) return;
    const void *data[PARALLEL_INDEX_COUNT] = {w->index_rows.region_ids, w->index_rows.ranks, w->index_rows.offsets, w->index_rows.counts,
                                              w->index_rows.source_lines, w->index_rows.exclusive_totals, w->index_rows.stats};
    for (size_t i = 0; i < PARALLEL_INDEX_COUNT; i++) {
        const spi_column *column = &spi_index_columns[parallel_index[i]];
        hid_t type = spi_elem_memory_type(column->elem);
        errno = 0;
        if ((type < 0 || spi_h5_write_slice(w->index[i], type, plan->first_row, data[i], rows,
                                            w->dxpl) != SP_OK) &&
            *status == SP_OK)
            *status = spi_h5_fail(err, w->path, "write the index in parallel");
        spi_elem_type_release(column->elem, type);
    }
}

/* ---- rank 0 alone ------------------------------------------------------------------ */

/* A text column of `rows` rows that all hold the column's missing text. */
static int write_text_column(hid_t index, const spi_column *column, uint64_t rows) {
    size_t slice = rows < TEXT_SLICE_ROWS ? (size_t)rows : TEXT_SLICE_ROWS;
    const char **texts = spi_calloc(slice ? slice : 1, sizeof *texts);
    if (!texts) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < slice; i++) texts[i] = column->missing_text;
    hsize_t dims[1] = {rows};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t file_type = spi_elem_file_type(column->elem);
    hid_t memory_type = spi_elem_memory_type(column->elem);
    hid_t dset = space >= 0 && file_type >= 0
                     ? H5Dcreate2(index, column->name, file_type, space, H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT)
                     : -1;
    int status = dset >= 0 && memory_type >= 0 ? SP_OK : SP_ERR_HDF5;
    for (uint64_t done = 0; done < rows && status == SP_OK; done += slice) {
        size_t n = rows - done < slice ? (size_t)(rows - done) : slice;
        status = spi_h5_write_slice(dset, memory_type, done, texts, n, H5P_DEFAULT);
    }
    if (dset >= 0) H5Dclose(dset);
    spi_elem_type_release(column->elem, memory_type);
    spi_elem_type_release(column->elem, file_type);
    if (space >= 0) H5Sclose(space);
    spi_free(texts);
    return status;
}

static int write_root_parts(parallel_writer *w, const spi_parallel_plan *plan,
                            const spi_parallel_root *root, spi_error *err) {
    errno = 0;
    hid_t file = H5Fopen(w->temp, H5F_ACC_RDWR, H5P_DEFAULT);
    if (file < 0) return spi_h5_fail(err, w->path, "reopen the file written in parallel");
    const char *what = "write the root attributes";
    int status = spi_h5_write_root_attributes(file, false);
    if (status == SP_OK) what = "write the metadata", status = spi_h5_write_metadata(file, root->metadata);
    if (status == SP_OK) {
        what = "write the region names";
        status = spi_h5_write_region_table(file, root->names, root->name_count);
    }
    if (status == SP_OK) {
        what = "write the thread table";
        status = spi_h5_write_thread_table(file, root->threads, root->thread_count);
    }
    hid_t index = status == SP_OK ? H5Gopen2(file, SPI_GROUP_INDEX, H5P_DEFAULT) : -1;
    if (status == SP_OK) what = "write the index", status = index >= 0 ? SP_OK : SP_ERR_HDF5;
    for (size_t i = 0; i < TEXT_INDEX_COUNT && status == SP_OK; i++)
        status = write_text_column(index, &spi_index_columns[text_index[i]], plan->row_count);
    if (index >= 0) H5Gclose(index);
    if (status == SP_ERR_OUT_OF_MEMORY)
        status = spi_error_set(err, status, "%s: out of memory while writing", w->path);
    else if (status != SP_OK)
        status = spi_h5_fail(err, w->path, what);
    if (status == SP_OK && root->counters)
        status = spi_h5_write_counter_groups(file, root->counters, err);
    errno = 0;
    if (H5Fclose(file) < 0 && status == SP_OK) status = spi_h5_fail(err, w->path, "close the file");
    return status;
}

/* ---- the collective write ----------------------------------------------------------- */

/* Rank 0 creates the temporary sibling; every rank learns its name.
 * Collective. */
static int share_temp_name(parallel_writer *w, spi_error *err) {
    int status = SP_OK;
    if (w->me == 0) {
        status = spi_output_path_check(w->path, err);
        if (status == SP_OK) w->temp = spi_h5_temp_sibling(w->path, err);
        if (status == SP_OK && !w->temp) status = err && err->status != SP_OK ? err->status : SP_ERR_OUTPUT;
        if (w->temp) w->partial_slot = spi_h5_partial_register(w->temp);
    }
    /* A fixed buffer on every rank: the broadcast's shape never depends on
     * an allocation that could fail on one rank only. Static: a broadcast
     * left pending after a timeout may still write it. */
    static char name[PATH_MAX];
    static int len;
    len = w->temp && strlen(w->temp) < sizeof name ? (int)strlen(w->temp) + 1 : 0;
    if (w->me == 0 && len > 0) memcpy(name, w->temp, (size_t)len);
    if (w->me == 0 && w->temp && len == 0 && status == SP_OK)
        status = spi_error_set(err, SP_ERR_OUTPUT, "%s: the path is too long", w->path);
    MPI_Request request = MPI_REQUEST_NULL;
    int rc = PMPI_Ibcast(&len, 1, MPI_INT, 0, w->comm, &request);
    int shared = bounded(w, rc, &request, 0, "sharing the file's name", status, err);
    if (shared == SP_OK && len > 0) {
        rc = PMPI_Ibcast(name, len, MPI_CHAR, 0, w->comm, &request);
        shared = bounded(w, rc, &request, 0, "sharing the file's name", status, err);
    }
    if (shared == SP_OK && len > 0 && w->me != 0 && !(w->temp = spi_strdup(name)))
        status = SP_ERR_OUT_OF_MEMORY;
    if (shared != SP_OK && status == SP_OK) status = shared;
    if (shared == SP_OK && len == 0 && w->me != 0 && status == SP_OK)
        status = spi_error_set(err, SP_ERR_OUTPUT, "%s: rank 0 could not create the file (see "
                               "its message)", w->path);
    if (status == SP_ERR_OUT_OF_MEMORY)
        status = spi_error_set(err, status, "%s: out of memory while writing", w->path);
    return status;
}

static int open_parallel(parallel_writer *w, spi_error *err) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int ok = fapl >= 0 && H5Pset_fapl_mpio(fapl, w->comm, MPI_INFO_NULL) >= 0 &&
             /* metadata reads and writes collective: one rank reads, all
              * agree, no metadata storm at scale */
             H5Pset_all_coll_metadata_ops(fapl, true) >= 0 &&
             H5Pset_coll_metadata_write(fapl, true) >= 0;
    errno = 0;
    if (ok) w->file = H5Fcreate(w->temp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    w->dxpl = H5Pcreate(H5P_DATASET_XFER);
    ok = ok && w->file >= 0 && w->dxpl >= 0 && H5Pset_dxpl_mpio(w->dxpl, H5FD_MPIO_COLLECTIVE) >= 0;
    return ok ? SP_OK : spi_h5_fail(err, w->path, "create the file with the MPI-IO driver");
}

/* Close everything of the collective phase (collective), keeping the first
 * failure. */
static void close_parallel(parallel_writer *w, int *status, spi_error *err) {
    if (w->dxpl >= 0) H5Pclose(w->dxpl);
    w->dxpl = -1;
    if (w->gave_up) return; /* closing is collective: it would wait for the missing rank */
    for (int c = 0; c < SPI_EV_COUNT; c++)
        if (w->events[c] >= 0) H5Dclose(w->events[c]);
    for (size_t i = 0; i < PARALLEL_INDEX_COUNT; i++)
        if (w->index[i] >= 0) H5Dclose(w->index[i]);
    errno = 0;
    if (w->file >= 0 && H5Fclose(w->file) < 0 && *status == SP_OK)
        *status = spi_h5_fail(err, w->path, "close the file written in parallel");
    w->file = -1;
}

static void release(parallel_writer *w) {
    for (int c = 0; c < SPI_EV_COUNT; c++) spi_free(w->buffers[c]);
    spi_index_rows_free(&w->index_rows);
    spi_h5_partial_forget(w->partial_slot);
    spi_free(w->temp);
}

int spi_h5_parallel_write(MPI_Comm comm, const char *path, const spi_parallel_plan *plan,
                          const spi_profile *local, const spi_parallel_root *root,
                          const spi_parallel_bounds *bounds, spi_error *err) {
    parallel_writer w = {.comm = comm, .path = path, .partial_slot = -1, .file = -1, .dxpl = -1,
                         .bounds = bounds};
    for (int c = 0; c < SPI_EV_COUNT; c++) w.events[c] = -1;
    for (size_t i = 0; i < PARALLEL_INDEX_COUNT; i++) w.index[i] = -1;
    MPI_Comm_rank(comm, &w.me);
    spi_h5_silence_state silence;
    spi_h5_silence(&silence);
    unsigned columns = spi_h5_event_column_set(plan->event_columns);

    checkpoint(&w, "parallel-open");
    int status = allocate(&w, local, columns);
    if (status != SP_OK) status = spi_error_set(err, status, "%s: out of memory while writing", path);
    int shared = share_temp_name(&w, err);
    if (status == SP_OK) status = shared;
    status = agree(&w, status, "agreeing to create the file in parallel", err);
    if (status == SP_OK) {
        int opened = open_parallel(&w, err);
        checkpoint(&w, "parallel-layout");
        status = agree(&w, opened, "agreeing to create the layout in parallel", err);
    }
    if (status == SP_OK) {
        int created = create_layout(&w, plan, columns);
        if (created != SP_OK) created = spi_h5_fail(err, path, "create the layout in parallel");
        status = agree(&w, created, "agreeing to write the calls in parallel", err);
    }
    if (status == SP_OK) {
        int local_status = SP_OK;
        write_events(&w, plan, local, &local_status, err);
        write_index_rows(&w, plan, local->row_count, &local_status, err);
        checkpoint(&w, "parallel-close");
        /* a bounded barrier before the collective close, which has none */
        MPI_Request request = MPI_REQUEST_NULL;
        if (!w.gave_up)
            bounded(&w, PMPI_Ibarrier(comm, &request), &request, -1,
                    "closing the file written in parallel", local_status, err);
        if (w.gave_up && local_status == SP_OK) local_status = SP_ERR_MPI;
        close_parallel(&w, &local_status, err);
        status = agree(&w, local_status, "agreeing on the parallel write", err);
    } else {
        int ignored = SP_OK;
        close_parallel(&w, &ignored, err);
    }
    /* Every rank's part is in the file: rank 0 completes and publishes it. */
    if (w.me == 0) {
        if (status == SP_OK) status = write_root_parts(&w, plan, root, err);
        if (status == SP_OK) status = spi_h5_publish_temp(w.temp, path, err);
        else if (w.temp) unlink(w.temp);
    }
    static int final_status; /* static: see bounded() */
    final_status = status;
    if (!w.gave_up) {
        MPI_Request request = MPI_REQUEST_NULL;
        int rc = PMPI_Ibcast(&final_status, 1, MPI_INT, 0, comm, &request);
        int finished = bounded(&w, rc, &request, 0, "waiting for rank 0 to publish the file",
                               status, err);
        if (finished != SP_OK && status == SP_OK) status = finished;
    }
    if (status == SP_OK && final_status != SP_OK)
        status = spi_error_set(err, final_status, "%s: rank 0 could not complete the file (see "
                               "its message); nothing was published", path);
    release(&w);
    spi_h5_restore(&silence);
    return status;
}
