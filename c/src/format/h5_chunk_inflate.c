/*
 * h5_chunk_inflate.c - stored chunks of compressed event columns decoded
 * without HDF5's filters (see h5_chunk_inflate.h for the layout taken and
 * the safety rule: anything unexpected goes back to H5Dread).
 */
#include "format/h5_chunk_inflate.h"

#include <libdeflate.h>

#include "format/byte_shuffle.h"
#include "util/alloc.h"

bool spi_chunk_layout_of(hid_t dset, spi_chunk_layout *layout) {
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    /* The decoded bytes are used as native int64 as they come. */
    (void)dset;
    (void)layout;
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
    if (H5Pget_chunk(dcpl, 1, chunk) != 1 || chunk[0] == 0 || chunk[0] > SPI_CHUNK_MAX_ELEMENTS)
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
    layout->chunk_elements = chunk[0];
    layout->length = dims[0];
    layout->shuffled = filters == 2;
    ok = true;
out:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    return ok;
#endif
}

size_t spi_chunk_bytes(const spi_chunk_layout *layout) {
    return (size_t)layout->chunk_elements * sizeof(int64_t);
}

spi_chunk_fetch_result spi_chunk_fetch(hid_t dset, const spi_chunk_layout *layout, uint64_t index,
                                       unsigned char **stored, size_t *capacity,
                                       size_t *stored_bytes) {
    size_t bytes = spi_chunk_bytes(layout);
    hsize_t offset[1] = {(hsize_t)(index * layout->chunk_elements)};
    hsize_t size = 0;
    if (H5Dget_chunk_storage_size(dset, offset, &size) < 0 || size == 0) return SPI_CHUNK_TO_HDF5;
    /* zlib's bound for a chunk of `bytes`: a larger stored chunk is not
     * one deflate wrote, and its size must not size our buffer */
    size_t bound = bytes + bytes / 8 + 1024;
    if (size > bound) return SPI_CHUNK_TO_HDF5;
    if ((size_t)size > *capacity) {
        unsigned char *grown = spi_malloc((size_t)size);
        if (!grown) return SPI_CHUNK_NO_MEMORY;
        spi_free(*stored);
        *stored = grown;
        *capacity = (size_t)size;
    }
    uint32_t mask = 0;
    if (H5Dread_chunk(dset, H5P_DEFAULT, offset, &mask, *stored) < 0 || mask != 0)
        return SPI_CHUNK_TO_HDF5;
    *stored_bytes = (size_t)size;
    return SPI_CHUNK_FETCHED;
}

bool spi_chunk_decode(struct libdeflate_decompressor *inflater, const spi_chunk_layout *layout,
                      const unsigned char *stored, size_t stored_bytes, unsigned char *scratch,
                      int64_t *out) {
    size_t bytes = spi_chunk_bytes(layout);
    unsigned char *inflated = layout->shuffled ? scratch : (unsigned char *)out;
    size_t got = 0;
    /* Exactly one chunk: HDF5 stores a short last chunk whole too. */
    if (libdeflate_zlib_decompress(inflater, stored, stored_bytes, inflated, bytes, &got) !=
            LIBDEFLATE_SUCCESS ||
        got != bytes)
        return false;
    if (layout->shuffled) spi_byte_unshuffle(inflated, out, bytes, sizeof(int64_t));
    return true;
}
