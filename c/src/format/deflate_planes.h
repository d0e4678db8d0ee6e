/*
 * deflate_planes.h - a shuffled chunk's zlib stream with its constant high
 * byte planes written directly instead of searched by libdeflate.
 *
 * After HDF5's shuffle, a chunk of 8-byte event values is 8 byte planes,
 * one per byte of the value, lowest first. In start deltas, durations and
 * ids the high planes are constant (zero, or 0xFF for -1) and libdeflate
 * spends two thirds of a chunk's time on them for a few hundred bytes of
 * output. Here libdeflate compresses only the front planes, up to the
 * last one that varies, and the constant planes after it are appended as
 * blocks of distance-1 matches; the result is one ordinary zlib stream
 * (header, deflate blocks, Adler-32) that HDF5's deflate filter, zlib and
 * libdeflate inflate like any other, about the size of libdeflate's own
 * (0.1-2.2% smaller on the bench's traces).
 *
 * No allocation; as thread-safe as the compressor passed in (libdeflate's
 * compressors are one thread's at a time).
 */
#ifndef SPI_DEFLATE_PLANES_H
#define SPI_DEFLATE_PLANES_H

#include <stddef.h>

/* Planes shorter than this are left to libdeflate (they cost it little). */
#define SPI_DEFLATE_PLANES_MIN 1024

struct libdeflate_compressor;

/* What spi_deflate_planes did. */
enum {
    SPI_PLANES_TAKEN = 1,    /* the stream is in `out` */
    SPI_PLANES_DECLINED = 0, /* not for this chunk: compress it with libdeflate as a whole */
    SPI_PLANES_FAILED = -1   /* libdeflate failed within its own bound */
};

/* Encode `bytes` of shuffled data made of `planes` byte planes of
 * bytes / planes bytes each (planes: the element size, at most 16; bytes a
 * multiple of it) as one zlib stream into `out` (capacity `out_capacity`:
 * libdeflate's zlib bound for `bytes` is enough); *out_bytes gets its
 * size. `compressor` (any level: the pool's) compresses the front planes.
 * SPI_PLANES_TAKEN; SPI_PLANES_DECLINED (*out_bytes 0, `out` scribbled
 * on) when this does not apply: the top plane varies, planes shorter than
 * SPI_DEFLATE_PLANES_MIN, too little room, or libdeflate's stream could
 * not be walked; SPI_PLANES_FAILED when libdeflate returned nothing. */
int spi_deflate_planes(struct libdeflate_compressor *compressor, const unsigned char *shuffled,
                       size_t bytes, size_t planes, void *out, size_t out_capacity,
                       size_t *out_bytes);

#endif /* SPI_DEFLATE_PLANES_H */
