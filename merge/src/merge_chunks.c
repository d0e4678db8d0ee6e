/*
 * merge_chunks.c - an input's compressed event columns read chunk by chunk
 * without HDF5's filter pipeline (format/h5_chunk_inflate.h: H5Dread_chunk,
 * libdeflate, the shuffle undone by us). Every event of a merge is decoded
 * twice (pass 1 and pass 2), and HDF5's zlib inflate, checksum and
 * byte-wise unshuffle were a large share of scope-merge's time (perf on
 * bench/merge).
 *
 * Only the layout the writers use is taken this way (h5_chunk_inflate.h),
 * and any chunk that is not exactly what that layout promises is read
 * through H5Dread as before, so HDF5 decides about it as it always did:
 * this path never accepts bytes the value path would refuse, and it gives
 * the same values (tests/merge/chunks_test.py compares whole merged files).
 *
 * Decoding ahead (issue 31): the inflate and unshuffle ran on the merging
 * thread, about a fifth of its time, while the other core waited. Each
 * column now reads through the reader's read-ahead decoder
 * (format/h5_chunk_stream.h): this thread alone calls HDF5 and fetches the
 * stored chunks, helper threads decode the next few while the sweep and
 * the writer work on the current ones. One stream per input column, not
 * per row: the rows of an input that pass 1 reads in turn share their
 * column's fixed ring of chunks, so a rank with many rows opens no more
 * rings than one with a few. All streams share one pool of helpers
 * (SCOPE_PROFILER_READ_THREADS, as for the tools; 0: this thread decodes
 * alone, in the same order), opened at the first read, once every input
 * has registered its columns, and sized for the largest chunk among them;
 * it is closed with the last column. A merge runs on one thread and not
 * concurrently with other HDF5 work of the process (scope_profiler_merge.h),
 * so one pool per process is shared without a lock.
 *
 * SCOPE_PROFILER_MERGE_VALUE_PATH=1 turns it off (every read through
 * H5Dread), for tests and for comparing the two.
 *
 * Memory: per column, the stream's ring (at most a dozen decoded chunks
 * of 512 KiB for the writers' layout, allocated as they are first used)
 * and one stored chunk for the copies of merge_write.c; per helper one
 * inflater and one scratch chunk.
 */
#include <stdlib.h>
#include <string.h>

#include "format/h5_chunk_inflate.h"
#include "format/h5_chunk_stream.h"
#include "util/alloc.h"
#include "merge_internal.h"

struct spm_chunk_column {
    hid_t dset;                /* borrowed from the input */
    spi_chunk_layout layout;
    spi_chunk_stream *stream;  /* opened at the first read; NULL: not (yet) */
    bool stream_tried;         /* the first read tried to open it */
    unsigned slots;            /* its ring's length */
    unsigned char *stored;     /* one chunk as stored (spm_chunks_stored) */
    size_t stored_capacity;
};

/* The pool every column's stream uses (see the top of the file). */
static struct {
    spi_inflate_pool *pool;
    size_t columns;            /* open columns */
    size_t chunk_bytes;        /* the largest chunk among them */
    bool tried;                /* the pool was asked for once already */
} shared;

bool spm_chunks_disabled(void) {
    const char *v = getenv("SCOPE_PROFILER_MERGE_VALUE_PATH");
    return v && v[0] && strcmp(v, "0") != 0;
}

int spm_chunks_open(hid_t dset, size_t readers, spm_chunk_column **column) {
    *column = NULL;
    spi_chunk_layout layout;
    if (spm_chunks_disabled() || !spi_chunk_layout_of(dset, &layout)) return SP_OK;
    spm_chunk_column *c = spi_calloc(1, sizeof *c);
    if (!c) return SP_ERR_OUT_OF_MEMORY;
    c->layout = layout;
    c->dset = dset;
    /* Each row read in turn keeps the chunk it is in and the next one,
     * decoded ahead; one more for the chunk being claimed. */
    /* (the stream bounds it: h5_chunk_stream.h) */
    c->slots = readers < 1024 ? (unsigned)(2 * readers + 1) : 2049u;
    size_t bytes = spi_chunk_bytes(&layout);
    if (bytes > shared.chunk_bytes) shared.chunk_bytes = bytes;
    shared.columns++;
    *column = c;
    return SP_OK;
}

void spm_chunks_close(spm_chunk_column *c) {
    if (!c) return;
    spi_chunk_stream_close(c->stream);
    spi_free(c->stored);
    spi_free(c);
    if (--shared.columns == 0) {
        spi_inflate_pool_close(shared.pool);
        shared.pool = NULL;
        shared.chunk_bytes = 0;
        shared.tried = false;
    }
}

/* The column's stream, opened on first use; NULL when it cannot have one
 * (its chunks outgrow a pool opened before it registered): then its reads
 * go through H5Dread. SP_OK or SP_ERR_OUT_OF_MEMORY. */
static int stream_of(spm_chunk_column *c, spi_chunk_stream **stream) {
    if (!c->stream_tried) {
        c->stream_tried = true;
        if (!shared.tried) {
            shared.tried = true;
            int status = spi_inflate_pool_open(&shared.pool, spi_read_threads(),
                                               shared.chunk_bytes);
            if (status != SP_OK) return status;
        }
        int status = shared.pool ? spi_chunk_stream_open_slots(c->dset, shared.pool, c->slots,
                                                               &c->stream)
                                 : SP_OK;
        if (status != SP_OK) return status;
    }
    *stream = c->stream;
    return SP_OK;
}

void spm_chunks_release(spm_chunk_column *c) {
    if (!c) return;
    spi_chunk_stream_close(c->stream);
    c->stream = NULL;
    c->stream_tried = false;
}

int spm_chunks_stored(spm_chunk_column *c, uint64_t chunk_elements, uint64_t index,
                      const void **data, size_t *bytes) {
    *data = NULL;
    *bytes = 0;
    /* Only the shuffled layout: the writer's columns are shuffle + deflate,
     * and a chunk is copied only where both decode the same way. */
    if (!c || !c->layout.shuffled || c->layout.chunk_elements != chunk_elements ||
        index >= c->layout.length / chunk_elements)
        return SP_OK;
    size_t stored_bytes = 0;
    spi_chunk_fetch_result fetched =
        spi_chunk_fetch(c->dset, &c->layout, index, &c->stored, &c->stored_capacity, &stored_bytes);
    if (fetched == SPI_CHUNK_NO_MEMORY) return SP_ERR_OUT_OF_MEMORY;
    if (fetched != SPI_CHUNK_FETCHED) return SP_OK;
    *data = c->stored;
    *bytes = stored_bytes;
    return SP_OK;
}

int spm_chunks_read(spm_chunk_column *c, uint64_t pos, uint64_t count, uint64_t ahead_end,
                    int64_t *out, bool *done) {
    *done = false;
    if (!c || count == 0 || pos > c->layout.length || count > c->layout.length - pos) return SP_OK;
    spi_chunk_stream *stream = NULL;
    int status = stream_of(c, &stream);
    if (status != SP_OK || !stream) return status;
    /* A chunk HDF5 must decide about leaves *done false: the caller reads
     * the whole range again through H5Dread. */
    return spi_chunk_stream_read(stream, pos, count, ahead_end, out, done);
}
