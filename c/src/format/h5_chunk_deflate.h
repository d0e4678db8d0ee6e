/*
 * h5_chunk_deflate.h - one chunk of an event column encoded exactly as
 * HDF5's filter pipeline "shuffle, then deflate" stores it, without HDF5.
 *
 * The streaming writer compresses chunks on several threads and hands the
 * results to H5Dwrite_chunk (HDF5 itself is not thread-safe, and its
 * pipeline runs on the calling thread). The dataset keeps both filters in
 * its creation list, so every reader (h5py, the Python package, h5dump)
 * decodes the chunk with HDF5's built-in filters and needs no plugin:
 *
 *   shuffle: byte k of element i goes to position k * elements + i (HDF5's
 *            H5Z_FILTER_SHUFFLE with the element size as its parameter);
 *   deflate: a zlib stream (2-byte header, raw deflate, Adler-32), which is
 *            what H5Z_FILTER_DEFLATE inflates: libdeflate's blocks for the
 *            byte planes up to the last one that varies, then blocks of our
 *            own for the constant planes after it (deflate_planes.h). HDF5
 *            1.10 keeps the deflated chunk even when it is larger than the
 *            input (its output buffer is zlib's compressBound), so we do the
 *            same: the output capacity is libdeflate's bound and nothing is
 *            stored raw.
 *
 * An encoder is owned by one thread at a time (libdeflate's compressor is
 * not thread-safe); different encoders may run concurrently.
 */
#ifndef SPI_H5_CHUNK_DEFLATE_H
#define SPI_H5_CHUNK_DEFLATE_H

#include <stddef.h>

typedef struct spi_chunk_encoder spi_chunk_encoder;

/* An encoder for chunks of at most `max_chunk_bytes` at deflate `level`
 * (1..12, libdeflate's scale; 1 is the fastest). NULL when out of memory. */
spi_chunk_encoder *spi_chunk_encoder_create(int level, size_t max_chunk_bytes);
void spi_chunk_encoder_free(spi_chunk_encoder *encoder);

/* The output capacity that any chunk of `raw_bytes` fits in. */
size_t spi_chunk_encoded_bound(size_t raw_bytes);

/* Encode `raw_bytes` of `raw` (elements of `element_bytes`, already in the
 * file's byte order) into `out` (capacity `out_capacity`, at least
 * spi_chunk_encoded_bound(raw_bytes)); *out_bytes gets the stored size.
 * SP_OK; SP_ERR_INVALID_ARGUMENT when the chunk exceeds the encoder's size
 * or the capacity is too small; SP_ERR_OUTPUT when libdeflate refuses.
 * A constant chunk (every element equal) that this encoder encoded lately
 * is copied from its cache, byte for byte what compressing it gives. */
int spi_chunk_encode(spi_chunk_encoder *encoder, const void *raw, size_t raw_bytes,
                     size_t element_bytes, void *out, size_t out_capacity, size_t *out_bytes);

#endif /* SPI_H5_CHUNK_DEFLATE_H */
