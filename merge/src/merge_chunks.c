/*
 * merge_chunks.c - an input's compressed event columns read chunk by chunk
 * without HDF5's filter pipeline: the stored bytes come through
 * H5Dread_chunk, libdeflate inflates them (several times faster than the
 * zlib behind HDF5's deflate filter, checksum included) and the shuffle is
 * undone here. Every event of a merge is decoded twice (pass 1 and
 * pass 2), and HDF5's zlib inflate, checksum and byte-wise unshuffle were
 * a large share of scope-merge's time (perf on bench/merge).
 *
 * Only the layout the writers use is taken this way: a 1-D little-endian
 * int64 column, chunked, with the filters "shuffle (8-byte elements), then
 * deflate" or "deflate" alone, on a little-endian host. Anything else, and
 * any chunk that is not exactly what that layout promises (unallocated,
 * a filter skipped, a stored size beyond deflate's bound, a stream that
 * does not inflate to exactly one chunk), is read through H5Dread as
 * before, so HDF5 decides about it as it always did: this path never
 * accepts bytes the value path would refuse, and it gives the same values
 * (tests/merge/chunks_test.py compares whole merged files).
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

#include "format/byte_shuffle.h"
#include "util/alloc.h"
#include "merge_internal.h"

/* The largest chunk taken this way (elements); the writers use 65,536. */
#define SPM_CHUNK_MAX_ELEMENTS ((hsize_t)1 << 20)

struct spm_chunk_column {
    hid_t dset;                /* borrowed from the input */
    hsize_t chunk;             /* elements per chunk */
    uint64_t length;           /* elements in the column */
    bool shuffled;
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

/* Whether dset has the one layout this file decodes; its chunk size and
 * shuffle into c. */
static bool plain_layout(hid_t dset, spm_chunk_column *c) {
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    (void)dset;
    (void)c;
    return false;
#else
    bool ok = false;
    hid_t type = H5Dget_type(dset);
    hid_t space = H5Dget_space(dset);
    hid_t dcpl = H5Dget_create_plist(dset);
    if (type < 0 || space < 0 || dcpl < 0) goto out;
    if (H5Tequal(type, H5T_STD_I64LE) <= 0) goto out;
    hsize_t dims[1] = {0};
    if (H5Sget_simple_extent_ndims(space) != 1 || H5Sget_simple_extent_dims(space, dims, NULL) != 1)
        goto out;
    if (H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_external_count(dcpl) != 0) goto out;
    hsize_t chunk[1] = {0};
    if (H5Pget_chunk(dcpl, 1, chunk) != 1 || chunk[0] == 0 || chunk[0] > SPM_CHUNK_MAX_ELEMENTS)
        goto out;
    int filters = H5Pget_nfilters(dcpl);
    if (filters != 1 && filters != 2) goto out;
    for (int f = 0; f < filters; f++) {
        unsigned flags = 0, values[4] = {0};
        size_t value_count = 4;
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)f, &flags, &value_count, values, 0,
                                         NULL, NULL);
        bool last = f == filters - 1;
        if (last && id != H5Z_FILTER_DEFLATE) goto out;
        /* shuffle of 8-byte elements, as HDF5 sets it for int64 */
        if (!last && (id != H5Z_FILTER_SHUFFLE || value_count < 1 || values[0] != 8)) goto out;
    }
    c->chunk = chunk[0];
    c->length = dims[0];
    c->shuffled = filters == 2;
    ok = true;
out:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    return ok;
#endif
}

int spm_chunks_open(hid_t dset, spm_chunk_column **column) {
    *column = NULL;
    spm_chunk_column probe = {0};
    if (spm_chunks_disabled() || !plain_layout(dset, &probe)) return SP_OK;
    spm_chunk_column *c = spi_calloc(1, sizeof *c);
    if (!c) return SP_ERR_OUT_OF_MEMORY;
    *c = probe;
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
    size_t bytes = (size_t)c->chunk * sizeof(int64_t);
    if (!c->decoded[slot] && !(c->decoded[slot] = spi_malloc(bytes))) return false;
    if (c->shuffled && !c->shuffled_bytes && !(c->shuffled_bytes = spi_malloc(bytes)))
        return false;
    if (!c->inflater && !(c->inflater = libdeflate_alloc_decompressor())) return false;
    return true;
}

/* Chunk `index` decoded into slot; false when it must go through HDF5
 * (or memory ran out: *oom). */
static bool decode(spm_chunk_column *c, uint64_t index, size_t slot, bool *oom) {
    if (!ensure_buffers(c, slot)) {
        *oom = true;
        return false;
    }
    size_t bytes = (size_t)c->chunk * sizeof(int64_t);
    hsize_t offset[1] = {(hsize_t)index * c->chunk};
    hsize_t stored = 0;
    if (H5Dget_chunk_storage_size(c->dset, offset, &stored) < 0 || stored == 0) return false;
    /* zlib's bound for a chunk of `bytes`: a larger stored chunk is not
     * one deflate wrote */
    size_t bound = bytes + bytes / 8 + 1024;
    if (stored > bound) return false;
    if (stored > c->stored_capacity) {
        unsigned char *grown = spi_malloc((size_t)stored);
        if (!grown) {
            *oom = true;
            return false;
        }
        spi_free(c->stored);
        c->stored = grown;
        c->stored_capacity = (size_t)stored;
    }
    uint32_t mask = 0;
    if (H5Dread_chunk(c->dset, H5P_DEFAULT, offset, &mask, c->stored) < 0 || mask != 0)
        return false;
    unsigned char *inflated = c->shuffled ? c->shuffled_bytes : (unsigned char *)c->decoded[slot];
    size_t got = 0;
    if (libdeflate_zlib_decompress(c->inflater, c->stored, (size_t)stored, inflated, bytes,
                                   &got) != LIBDEFLATE_SUCCESS ||
        got != bytes)
        return false;
    if (c->shuffled) spi_byte_unshuffle(inflated, c->decoded[slot], bytes, sizeof(int64_t));
    return true;
}

int spm_chunks_read(spm_chunk_column *c, uint64_t pos, uint64_t count, int64_t *out,
                    bool *done) {
    *done = false;
    if (!c || count == 0 || pos > c->length || count > c->length - pos) return SP_OK;
    /* Chunk by chunk; on a chunk HDF5 must decide about, the caller reads
     * the whole range again through H5Dread (what was copied is
     * overwritten). */
    for (uint64_t copied = 0; copied < count;) {
        uint64_t at = pos + copied, index = at / c->chunk, within = at % c->chunk;
        size_t slot = c->which[0] == index ? 0 : c->which[1] == index ? 1 : 2;
        if (slot == 2) {
            slot = c->newest ^ 1u; /* the one used longer ago goes */
            bool oom = false;
            c->which[slot] = UINT64_MAX;
            if (!decode(c, index, slot, &oom)) return oom ? SP_ERR_OUT_OF_MEMORY : SP_OK;
            c->which[slot] = index;
        }
        c->newest = (unsigned)slot;
        uint64_t n = c->chunk - within;
        if (n > count - copied) n = count - copied;
        memcpy(out + copied, c->decoded[slot] + within, (size_t)n * sizeof *out);
        copied += n;
    }
    *done = true;
    return SP_OK;
}
