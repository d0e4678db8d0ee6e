/*
 * byte_shuffle.h - HDF5's shuffle filter and its inverse, without HDF5.
 *
 * HDF5's H5Z_FILTER_SHUFFLE (parameter: the element size) stores byte k of
 * element i at position k * elements + i, so that the slowly changing high
 * bytes of integer columns sit together and deflate well. The writers
 * shuffle before compressing a chunk themselves (h5_chunk_deflate.h) and
 * the readers that decode stored chunks themselves (scope-merge) undo it.
 *
 * Both directions are the same 8x8 byte transpose for 8-byte elements
 * (every event column), done in registers; other sizes take a byte loop.
 * Pure functions: thread-safe, no allocation, no error.
 */
#ifndef SPI_BYTE_SHUFFLE_H
#define SPI_BYTE_SHUFFLE_H

#include <stddef.h>

/* `bytes` of `src` shuffled into `dst` (no overlap) as HDF5's shuffle
 * filter does for elements of `element_bytes`; trailing bytes that make no
 * whole element are copied unchanged, as HDF5 does. */
void spi_byte_shuffle(const void *src, void *dst, size_t bytes, size_t element_bytes);

/* The inverse: `bytes` of shuffled `src` back into element order in `dst`
 * (no overlap); trailing bytes copied unchanged. */
void spi_byte_unshuffle(const void *src, void *dst, size_t bytes, size_t element_bytes);

#endif /* SPI_BYTE_SHUFFLE_H */
