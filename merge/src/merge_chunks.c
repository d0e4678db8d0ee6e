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
 * SCOPE_PROFILER_MERGE_VALUE_PATH=1 turns it off (every read through
 * H5Dread), for tests and for comparing the two.
 *
 * Memory: per column of an input, two decoded chunks (the 1 MiB HDF5's own
 * chunk cache would hold, unused now), one inflated chunk before its
 * unshuffle and one stored chunk, all allocated on first use.
 * One thread: the merge reads its inputs on the thread that calls HDF5.
 */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "format/h5_chunk_inflate.h"
#include "util/alloc.h"
#include "merge_internal.h"

struct spm_chunk_column {
    hid_t dset;                /* borrowed from the input */
    spi_chunk_layout layout;
    int64_t *decoded[2];       /* the two chunks decoded last */
    uint64_t which[2];         /* their chunk numbers, UINT64_MAX: none */
    unsigned newest;           /* index of the one used last */
    unsigned char *stored;     /* one chunk as stored */
    size_t stored_capacity;
    unsigned char *shuffled_bytes; /* one chunk inflated, before unshuffling */
    struct libdeflate_decompressor *inflater;
};

bool spm_chunks_disabled(void) {
    const char *v = getenv("SCOPE_PROFILER_MERGE_VALUE_PATH");
    return v && v[0] && strcmp(v, "0") != 0;
}

int spm_chunks_open(hid_t dset, spm_chunk_column **column) {
    *column = NULL;
    spi_chunk_layout layout;
    if (spm_chunks_disabled() || !spi_chunk_layout_of(dset, &layout)) return SP_OK;
    spm_chunk_column *c = spi_calloc(1, sizeof *c);
    if (!c) return SP_ERR_OUT_OF_MEMORY;
    c->layout = layout;
    c->dset = dset;
    c->which[0] = c->which[1] = UINT64_MAX;
    *column = c;
    return SP_OK;
}

void spm_chunks_close(spm_chunk_column *c) {
    if (!c) return;
    spi_free(c->decoded[0]);
    spi_free(c->decoded[1]);
    spi_free(c->stored);
    spi_free(c->shuffled_bytes);
    if (c->inflater) libdeflate_free_decompressor(c->inflater);
    spi_free(c);
}

/* Room for one chunk's buffers, allocated on first use. */
static bool ensure_buffers(spm_chunk_column *c, size_t slot) {
    size_t bytes = spi_chunk_bytes(&c->layout);
    if (!c->decoded[slot] && !(c->decoded[slot] = spi_malloc(bytes))) return false;
    if (c->layout.shuffled && !c->shuffled_bytes && !(c->shuffled_bytes = spi_malloc(bytes)))
        return false;
    if (!c->inflater && !(c->inflater = libdeflate_alloc_decompressor())) return false;
    return true;
}

/* Chunk `index` decoded into `out` (one chunk long; slot's buffer when
 * NULL); false when it must go through HDF5 (or memory ran out: *oom). */
static bool decode(spm_chunk_column *c, uint64_t index, size_t slot, int64_t *out, bool *oom) {
    if (!ensure_buffers(c, slot)) {
        *oom = true;
        return false;
    }
    size_t stored_bytes = 0;
    spi_chunk_fetch_result fetched =
        spi_chunk_fetch(c->dset, &c->layout, index, &c->stored, &c->stored_capacity, &stored_bytes);
    if (fetched != SPI_CHUNK_FETCHED) {
        *oom = fetched == SPI_CHUNK_NO_MEMORY;
        return false;
    }
    return spi_chunk_decode(c->inflater, &c->layout, c->stored, stored_bytes, c->shuffled_bytes,
                            out ? out : c->decoded[slot]);
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

int spm_chunks_read(spm_chunk_column *c, uint64_t pos, uint64_t count, int64_t *out,
                    bool *done) {
    *done = false;
    if (!c || count == 0 || pos > c->layout.length || count > c->layout.length - pos) return SP_OK;
    /* Chunk by chunk; on a chunk HDF5 must decide about, the caller reads
     * the whole range again through H5Dread (what was copied is
     * overwritten). */
    for (uint64_t copied = 0; copied < count;) {
        uint64_t chunk = c->layout.chunk_elements;
        uint64_t at = pos + copied, index = at / chunk, within = at % chunk;
        size_t slot = c->which[0] == index ? 0 : c->which[1] == index ? 1 : 2;
        if (slot == 2 && within == 0 && count - copied >= chunk) {
            /* The whole chunk is asked for (the merge's blocks are chunks):
             * decoded straight into out, no copy. No other read wants it:
             * rows do not share events. */
            bool oom = false;
            if (!decode(c, index, c->newest ^ 1u, out + copied, &oom))
                return oom ? SP_ERR_OUT_OF_MEMORY : SP_OK;
            copied += chunk;
            continue;
        }
        if (slot == 2) {
            slot = c->newest ^ 1u; /* the one used longer ago goes */
            bool oom = false;
            c->which[slot] = UINT64_MAX;
            if (!decode(c, index, slot, NULL, &oom)) return oom ? SP_ERR_OUT_OF_MEMORY : SP_OK;
            c->which[slot] = index;
        }
        c->newest = (unsigned)slot;
        uint64_t n = chunk - within;
        if (n > count - copied) n = count - copied;
        memcpy(out + copied, c->decoded[slot] + within, (size_t)n * sizeof *out);
        copied += n;
    }
    *done = true;
    return SP_OK;
}
