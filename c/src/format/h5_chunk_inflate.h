/*
 * h5_chunk_inflate.h - one stored chunk of a compressed event column
 * decoded without HDF5's filter pipeline: the stored bytes come through
 * H5Dread_chunk, libdeflate inflates them (several times faster than the
 * zlib behind HDF5's deflate filter, checksum included) and the shuffle is
 * undone with byte_shuffle.h.
 *
 * Only the layout the writers use is taken: a 1-D little-endian int64
 * column, chunked, with the filters "shuffle (8-byte elements), then
 * deflate" or "deflate" alone, on a little-endian host. Anything else,
 * and any chunk that is not exactly what that layout promises
 * (unallocated, a filter skipped, a stored size beyond deflate's bound, a
 * stream that does not inflate to exactly one chunk), is the caller's to
 * read through H5Dread, so HDF5 decides about it as it always did: this
 * path never accepts bytes the value path would refuse, and it gives the
 * same values. Users: scope-merge (merge/src/merge_chunks.c) and the
 * reader's event columns (h5_chunk_stream.h).
 *
 * The work is split by thread: spi_chunk_layout_of and spi_chunk_fetch
 * call HDF5 (the one thread that may, under the readers' lock when that
 * is the reader); spi_chunk_decode touches no HDF5 and no shared state,
 * so helper threads run it, each with its own inflater and scratch.
 * Internal to the format module.
 */
#ifndef SPI_H5_CHUNK_INFLATE_H
#define SPI_H5_CHUNK_INFLATE_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct libdeflate_decompressor;

/* The largest chunk taken (elements); the writers use 65,536. Bounds every
 * buffer sized from a file's chunk size. */
#define SPI_CHUNK_MAX_ELEMENTS ((uint64_t)1 << 20)

/* What the layout check found out about a column it takes. */
typedef struct spi_chunk_layout {
    uint64_t chunk_elements; /* elements per chunk, 1 .. SPI_CHUNK_MAX_ELEMENTS */
    uint64_t length;         /* elements in the column */
    bool shuffled;           /* shuffle before deflate */
} spi_chunk_layout;

/* How a fetch ended. */
typedef enum spi_chunk_fetch_result {
    SPI_CHUNK_FETCHED,   /* the stored bytes are in the buffer */
    SPI_CHUNK_TO_HDF5,   /* not the promised layout: read through H5Dread */
    SPI_CHUNK_NO_MEMORY  /* the buffer could not grow */
} spi_chunk_fetch_result;

/* true when dset has the one layout decoded here (then *layout is
 * filled). Calls HDF5; never fails otherwise (false is "not taken"). */
bool spi_chunk_layout_of(hid_t dset, spi_chunk_layout *layout);

/* Bytes of one decoded chunk of the layout. */
size_t spi_chunk_bytes(const spi_chunk_layout *layout);

/* Chunk `index` of dset as stored into *stored (grown with spi_malloc to
 * the stored size when *capacity is smaller; the caller frees it), its
 * size into *stored_bytes. SPI_CHUNK_TO_HDF5 for an unallocated chunk, a
 * filter mask != 0, a stored size beyond deflate's bound for one chunk,
 * or a failed read. Calls HDF5: the reading thread only. */
spi_chunk_fetch_result spi_chunk_fetch(hid_t dset, const spi_chunk_layout *layout, uint64_t index,
                                       unsigned char **stored, size_t *capacity,
                                       size_t *stored_bytes);

/* The stored bytes inflated and unshuffled into `out` (one chunk,
 * spi_chunk_bytes long); `scratch` (as long) holds the shuffled bytes in
 * between and is unused for an unshuffled layout. false when the stream
 * is not a zlib stream of exactly one chunk (the caller reads through
 * H5Dread). No HDF5, no allocation: thread-safe for distinct inflaters,
 * scratch and out. */
bool spi_chunk_decode(struct libdeflate_decompressor *inflater, const spi_chunk_layout *layout,
                      const unsigned char *stored, size_t stored_bytes, unsigned char *scratch,
                      int64_t *out);

#endif /* SPI_H5_CHUNK_INFLATE_H */
