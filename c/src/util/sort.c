/*
 * sort.c - stable merge sort of indices (sort.h).
 */
#include <string.h>

#include "util/sort.h"

void spi_sort_indices(size_t *idx, size_t *tmp, size_t n, spi_index_compare cmp,
                      const void *context) {
    if (n < 2) return;
    size_t h = n / 2;
    spi_sort_indices(idx, tmp, h, cmp, context);
    spi_sort_indices(idx + h, tmp, n - h, cmp, context);
    size_t i = 0, j = h, k = 0;
    /* the right run wins only when strictly smaller: stable */
    while (i < h && j < n) tmp[k++] = cmp(context, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
    while (i < h) tmp[k++] = idx[i++];
    while (j < n) tmp[k++] = idx[j++];
    memcpy(idx, tmp, n * sizeof *idx);
}
