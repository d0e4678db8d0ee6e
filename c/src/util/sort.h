/*
 * sort.h - a stable sort of indices with a comparison context.
 *
 * qsort is neither stable nor given a context, so callers that order
 * indices by fields of their own tables (summary rows among siblings, rows
 * by rank) share this merge sort instead of a global or a copy each.
 */
#ifndef SPI_SORT_H
#define SPI_SORT_H

#include <stddef.h>

/* <0, 0, >0 as a is ordered before, with, after b. */
typedef int (*spi_index_compare)(const void *context, size_t a, size_t b);

/* Sort idx[0..n-1] stably by cmp; tmp holds n scratch elements.
 * O(n log n) time, recursion depth log2(n). */
void spi_sort_indices(size_t *idx, size_t *tmp, size_t n, spi_index_compare cmp,
                      const void *context);

#endif /* SPI_SORT_H */
