/*
 * deflate_walk.h - where the last block of a raw deflate stream starts and
 * where it ends, to the bit, without producing its output.
 *
 * deflate_planes.c lets libdeflate compress the varying front of a chunk
 * and appends blocks of its own for the constant rest. libdeflate always
 * ends its stream with a final block and pads it to a byte; to continue
 * the stream, the final flag must be cleared and the new blocks must start
 * right after that block's end-of-block code, neither of which libdeflate
 * reports. This walks the blocks (headers, Huffman tables, symbols and
 * their extra bits; no history, no output) to find both.
 *
 * Pure function: thread-safe, no allocation.
 */
#ifndef SPI_DEFLATE_WALK_H
#define SPI_DEFLATE_WALK_H

#include <stdbool.h>
#include <stddef.h>

/* Walk the raw deflate stream in `in` (`bytes` long) to its final block.
 * On success *final_bit is the bit offset of that block's BFINAL bit and
 * *end_bit the offset just past its end-of-block code (bits counted from
 * bit 0 of in[0], least significant first), and the rest of the stream
 * is the padding to a byte. False when the stream is not valid deflate
 * as far as a walk can tell (or ends before a final block). */
bool spi_deflate_walk(const unsigned char *in, size_t bytes, size_t *final_bit, size_t *end_bit);

#endif /* SPI_DEFLATE_WALK_H */
