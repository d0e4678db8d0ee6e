/*
 * reader_calls.c - event columns read on demand from an open HDF5 file
 * (reader_calls.h).
 *
 * The store keeps the file and one dataset per event column open. Each
 * read is one hyperslab per wanted column under the reader's HDF5 lock.
 * Every column gets a chunk cache of several chunks: cursors over
 * different rows of one rank (the views' merge by start time) take turns
 * on the same dataset, and HDF5's default of 1 MiB would decompress the
 * same 512 KiB chunk again for each of them.
 *
 * That cache does not stay within its size in libhdf5 1.10 on compressed
 * columns: a pass over a file grew by ~1.6 bytes a call (issue 27: 38 MiB
 * at 4M calls, 75 MiB at 30M for scope-inspect's open; 19 MiB for both
 * with the cache off: it kept nearly every decompressed chunk it was
 * given). The columns are therefore reopened, which drops their caches,
 * every CALL_CACHE_RESET_BYTES of calls read (28 and 37 MiB then): what
 * a cache holds is bounded by that window, and a cursor merge still finds
 * the chunks it shares in a cache that lives for many slices.
 *
 * Columns of the writers' compressed layout do not go through that cache
 * at all: each has a chunk stream (h5_chunk_stream.h) whose helper
 * threads decode the chunks after the one read, up to the end of the row
 * being read, while the caller works on the slice it got; anything the
 * stream does not take goes through H5Dread as above. The helpers live as
 * long as the store (joined by its release) and call no HDF5: the store's
 * reads still hold the readers' lock, and only the thread holding it
 * fetches chunks.
 */
#include "format/reader_calls.h"
#include "format/h5_chunk_stream.h"
#include "format/reader_lock.h"

#include <string.h>

#include "format/h5_util.h"
#include "format/schema.h"
#include "util/alloc.h"

/* Per column: bytes of decompressed chunks kept, and hash slots (a prime
 * well above the chunks that fit, as the HDF5 manual advises). */
#define CALL_CHUNK_CACHE_BYTES (4u << 20)
#define CALL_CHUNK_CACHE_SLOTS 1009u

/* Bytes of calls read between two resets of the columns' caches. */
#define CALL_CACHE_RESET_BYTES ((uint64_t)16 << 20)

enum { COL_START, COL_SECOND, COL_CALL_IDS, COL_PARENT_IDS, COL_THREAD_IDS, COL_COUNT };

typedef struct h5_call_store {
    spi_call_store base;
    hid_t file;
    hid_t columns[COL_COUNT]; /* -1 = not in the file */
    const char *names[COL_COUNT];
    uint64_t *offsets;        /* [row_count] first call of each row */
    uint64_t *ends;           /* [row_count] one past its last call */
    spi_inflate_pool *pool;   /* helpers of the streams; NULL: no stream */
    spi_chunk_stream *streams[COL_COUNT]; /* NULL: read through H5Dread */
    bool deltas;              /* start_deltas + durations, else start_times + end_times */
    char *path;
    hid_t events;             /* the events group, to reopen the columns */
    uint64_t bytes_since_reset; /* calls read since the caches were dropped */
} h5_call_store;

static const spi_event_col optional_col[COL_COUNT] = {
    [COL_CALL_IDS] = SPI_EV_CALL_IDS, [COL_PARENT_IDS] = SPI_EV_PARENT_IDS,
    [COL_THREAD_IDS] = SPI_EV_THREAD_IDS};

static void store_release(spi_call_store *base) {
    h5_call_store *s = (h5_call_store *)base;
    spi_h5r_lock();
    spi_h5_silence_state silence;
    spi_h5_silence(&silence);
    for (int i = 0; i < COL_COUNT; i++) spi_chunk_stream_close(s->streams[i]);
    spi_inflate_pool_close(s->pool);
    for (int i = 0; i < COL_COUNT; i++)
        if (s->columns[i] >= 0) H5Dclose(s->columns[i]);
    if (s->events >= 0) H5Gclose(s->events);
    if (s->file >= 0) H5Fclose(s->file);
    spi_h5_restore(&silence);
    spi_h5r_unlock();
    spi_free(s->offsets);
    spi_free(s->ends);
    spi_free(s->path);
    spi_free(s);
}

/* `row_end`: the row's end, how far its cursor will go on reading. */
static int read_column(const spi_h5r *h, h5_call_store *s, int col, uint64_t offset, size_t count,
                       uint64_t row_end, int64_t *buf) {
    if (!buf || s->columns[col] < 0) return SP_OK;
    return spi_h5r_read_int_slice_streamed(h, s->streams[col], s->columns[col], s->names[col],
                                           offset, count, row_end, buf);
}

static hid_t open_cached(hid_t events, const char *name);

/* Drop the columns' chunk caches by reopening them (see the top). */
static int reset_caches(const spi_h5r *h, h5_call_store *s) {
    for (int i = 0; i < COL_COUNT; i++) {
        if (s->columns[i] < 0) continue;
        H5Dclose(s->columns[i]);
        if ((s->columns[i] = open_cached(s->events, s->names[i])) < 0)
            return spi_error_set(h->err, SP_ERR_HDF5, "%s: cannot reopen dataset events/%s",
                                 h->path, s->names[i]);
        spi_chunk_stream_set_dataset(s->streams[i], s->columns[i]);
    }
    return SP_OK;
}

static int store_read(spi_call_store *base, size_t row, uint64_t first, size_t count,
                      int64_t previous_start, int64_t *starts, int64_t *durations,
                      int64_t *call_ids, int64_t *parent_ids, int64_t *thread_ids,
                      spi_error *err) {
    h5_call_store *s = (h5_call_store *)base;
    spi_h5r h = {.file = s->file, .path = s->path, .err = err};
    uint64_t offset = s->offsets[row] + first, end = s->ends[row];
    spi_h5r_lock();
    spi_h5_silence_state silence;
    spi_h5_silence(&silence);
    int status = read_column(&h, s, COL_START, offset, count, end, starts);
    if (status == SP_OK) status = read_column(&h, s, COL_SECOND, offset, count, end, durations);
    if (status == SP_OK) status = read_column(&h, s, COL_CALL_IDS, offset, count, end, call_ids);
    if (status == SP_OK)
        status = read_column(&h, s, COL_PARENT_IDS, offset, count, end, parent_ids);
    if (status == SP_OK)
        status = read_column(&h, s, COL_THREAD_IDS, offset, count, end, thread_ids);
    s->bytes_since_reset += (uint64_t)count * sizeof(int64_t) * COL_COUNT;
    if (status == SP_OK && s->bytes_since_reset >= CALL_CACHE_RESET_BYTES) {
        s->bytes_since_reset = 0;
        status = reset_caches(&h, s);
    }
    spi_h5_restore(&silence);
    spi_h5r_unlock();
    if (status != SP_OK) return status;
    if (s->deltas) {
        /* the same wrapping sum as a full read (reader_h5.c); no starts
         * in a durations-alone read (call_cursor.h) */
        uint64_t acc = first == 0 ? 0 : (uint64_t)previous_start;
        for (size_t k = 0; starts && k < count; k++) {
            acc += (uint64_t)starts[k];
            starts[k] = (int64_t)acc;
        }
    } else if (durations) {
        for (size_t k = 0; k < count; k++)
            durations[k] = (int64_t)((uint64_t)durations[k] - (uint64_t)starts[k]);
    }
    return SP_OK;
}

/* A column with a bigger chunk cache (see the top of the file). */
static hid_t open_cached(hid_t events, const char *name) {
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl >= 0 &&
        H5Pset_chunk_cache(dapl, CALL_CHUNK_CACHE_SLOTS, CALL_CHUNK_CACHE_BYTES, 1.0) < 0) {
        H5Pclose(dapl);
        dapl = -1;
    }
    hid_t dset = H5Dopen2(events, name, dapl >= 0 ? dapl : H5P_DEFAULT);
    if (dapl >= 0) H5Pclose(dapl);
    return dset;
}

/* Checks what a full read would (type, length against the index) and
 * opens the column for the store. */
static int open_store_column(const spi_h5r *h, hid_t events, spi_event_col col, uint64_t max_end,
                             hid_t *out, const char **out_name) {
    const char *name = *out_name = spi_event_columns[col].name;
    hid_t dset;
    int status = spi_h5r_open_event_column(h, events, name, max_end, &dset);
    if (status != SP_OK) return status;
    H5Dclose(dset);
    if ((*out = open_cached(events, name)) < 0)
        return spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open dataset events/%s",
                             h->path, name);
    return SP_OK;
}

/* A stream per column of the writers' layout, on one pool sized for the
 * largest of their chunks; no pool when no column takes one. */
static int open_streams(const spi_h5r *h, h5_call_store *s) {
    size_t chunk_bytes = 0;
    for (int i = 0; i < COL_COUNT; i++) {
        size_t bytes = s->columns[i] >= 0 ? spi_chunk_stream_chunk_bytes(s->columns[i]) : 0;
        if (bytes > chunk_bytes) chunk_bytes = bytes;
    }
    if (!chunk_bytes) return SP_OK;
    int status = spi_inflate_pool_open(&s->pool, spi_read_threads(), chunk_bytes);
    for (int i = 0; status == SP_OK && i < COL_COUNT; i++)
        if (s->columns[i] >= 0) status = spi_chunk_stream_open(s->columns[i], s->pool, &s->streams[i]);
    if (status != SP_OK)
        return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
    return SP_OK;
}

int spi_h5_call_store_open(const spi_h5r *h, hid_t events, const uint64_t *offsets,
                           uint64_t max_end, bool deltas, spi_profile *out) {
    h5_call_store *s = spi_calloc(1, sizeof *s);
    if (!s) return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
    s->file = -1;
    s->events = -1;
    for (int i = 0; i < COL_COUNT; i++) s->columns[i] = -1;
    s->deltas = deltas;
    s->base = (spi_call_store){.read = store_read, .release = store_release,
                               .durations_alone = deltas /* durations stored as such */};
    int status = SP_OK;
    size_t rows = out->row_count ? out->row_count : 1;
    if (!(s->path = spi_strdup(h->path)) || !(s->offsets = spi_malloc(rows * sizeof *s->offsets)) ||
        !(s->ends = spi_malloc(rows * sizeof *s->ends)))
        status = spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
    if (status == SP_OK && out->row_count)
        memcpy(s->offsets, offsets, out->row_count * sizeof *offsets);
    /* The index was validated: offset + count does not wrap. */
    for (size_t i = 0; status == SP_OK && i < out->row_count; i++)
        s->ends[i] = offsets[i] + out->rows[i].count;
    if (status == SP_OK)
        status = open_store_column(h, events, deltas ? SPI_EV_START_DELTAS : SPI_EV_START_TIMES,
                                   max_end, &s->columns[COL_START], &s->names[COL_START]);
    if (status == SP_OK)
        status = open_store_column(h, events, deltas ? SPI_EV_DURATIONS : SPI_EV_END_TIMES,
                                   max_end, &s->columns[COL_SECOND], &s->names[COL_SECOND]);
    for (int i = COL_CALL_IDS; status == SP_OK && i < COL_COUNT; i++) {
        if (!spi_h5r_exists(events, spi_event_columns[optional_col[i]].name)) continue;
        status = open_store_column(h, events, optional_col[i], max_end, &s->columns[i], &s->names[i]);
        s->base.columns |= SPI_EV_BIT(optional_col[i]);
    }
    if (status == SP_OK) status = open_streams(h, s);
    /* The store's own handle on the group (the caller closes its one). */
    if (status == SP_OK && (s->events = H5Gopen2(h->file, SPI_GROUP_EVENTS, H5P_DEFAULT)) < 0)
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open group events", h->path);
    if (status != SP_OK) {
        for (int i = 0; i < COL_COUNT; i++) spi_chunk_stream_close(s->streams[i]);
        spi_inflate_pool_close(s->pool);
        for (int i = 0; i < COL_COUNT; i++)
            if (s->columns[i] >= 0) H5Dclose(s->columns[i]);
        spi_free(s->ends);
        spi_free(s->offsets);
        spi_free(s->path);
        spi_free(s);
        return status;
    }
    s->base.path = s->path;
    s->file = h->file;
    out->store = &s->base;
    out->event_columns |= s->base.columns;
    return SP_OK;
}
