/*
 * alloc.c - allocation wrapper (see alloc.h).
 *
 * Kept deliberately thin: the value is in having one choke point, so that a
 * later out-of-memory injection hook or accounting needs one edit.
 */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *spi_malloc(size_t size_bytes) {
    return malloc(size_bytes ? size_bytes : 1);
}

void *spi_calloc(size_t count, size_t size_bytes) {
    if (count == 0 || size_bytes == 0) return calloc(1, 1);
    return calloc(count, size_bytes);
}

void *spi_reallocarray(void *block, size_t count, size_t size_bytes) {
    if (size_bytes != 0 && count > SIZE_MAX / size_bytes) return NULL;
    size_t total = count * size_bytes;
    return realloc(block, total ? total : 1);
}

void spi_free(void *block) {
    free(block);
}

char *spi_strndup(const char *text, size_t len) {
    char *copy = spi_malloc(len + 1);
    if (!copy) return NULL;
    if (len) memcpy(copy, text, len);
    copy[len] = '\0';
    return copy;
}

char *spi_strdup(const char *text) {
    return spi_strndup(text, strlen(text));
}
