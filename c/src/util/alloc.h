/*
 * alloc.h - the one allocation wrapper of the library.
 *
 * Every allocation goes through these functions so that there is a single
 * place to account memory and to inject failures. They behave like the libc
 * functions they wrap and never abort: NULL is returned on failure and the
 * caller turns it into SP_ERR_OUT_OF_MEMORY.
 */
#ifndef SPI_ALLOC_H
#define SPI_ALLOC_H

#include <stddef.h>

void *spi_malloc(size_t size_bytes);
/* calloc that also fails (instead of wrapping) when count * size overflows. */
void *spi_calloc(size_t count, size_t size_bytes);
/* realloc of count * size bytes; overflow-checked; on failure the old block
 * is untouched and still owned by the caller. */
void *spi_reallocarray(void *block, size_t count, size_t size_bytes);
void spi_free(void *block);
/* Copy `len` bytes of `text` into a new NUL-terminated string. */
char *spi_strndup(const char *text, size_t len);
char *spi_strdup(const char *text);

/* `size_bytes` of zeroed memory whose pages are already backed
 * (populated at mapping): the page faults are taken here, in bulk inside the
 * kernel, not one by one when the memory is first written. With
 * SCOPE_PROFILER_HUGE_PAGES=1, a multiple of 2 MiB gets transparent huge
 * pages where the kernel allows them (one fault per 2 MiB; off by default,
 * alloc.c says why). Thread-safe. For the event
 * chunks of the recorder, whose writes are on the hot path. NULL on
 * failure. Release with spi_unmap and the same size. */
void *spi_map_populated(size_t size_bytes);
void spi_unmap(void *block, size_t size_bytes);

#endif /* SPI_ALLOC_H */
