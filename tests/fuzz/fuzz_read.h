/*
 * fuzz_read.h - what both fuzz harnesses do with one input.
 *
 * The input is a whole file's bytes, parsed in memory by one reader back
 * end (format/reader.h), then every row's statistics are computed as a
 * full read does. Each input is read twice, as the tools do: a full read
 * with ends, then a summary-only read (the .spt back end refuses that at
 * once). The contract checked besides "no crash, no sanitizer report":
 * a refused input gets a message naming the file, as every tool prints it.
 */
#ifndef SP_FUZZ_READ_H
#define SP_FUZZ_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/reader.h"

#define FUZZ_INPUT_NAME "fuzz-input"

typedef int (*fuzz_backend)(spi_profile *out, const void *image, size_t size, const char *path,
                            unsigned flags, spi_error *err);

static inline void fuzz_read_once(fuzz_backend backend, const uint8_t *data, size_t size,
                                  unsigned flags) {
    spi_profile profile = {0};
    spi_error err;
    spi_error_clear(&err);
    int status = backend(&profile, data, size, FUZZ_INPUT_NAME, flags, &err);
    if (status == SP_OK && !(flags & SPI_READ_SUMMARY_ONLY))
        status = spi_profile_compute_stats(&profile, FUZZ_INPUT_NAME,
                                           (flags & SPI_READ_WITH_ENDS) != 0, &err);
    spi_profile_free(&profile);
    /* Every refusal names the file: a message without it is a bug. */
    if (status != SP_OK && strstr(err.message, FUZZ_INPUT_NAME) == NULL) abort();
}

static inline void fuzz_read(fuzz_backend backend, const uint8_t *data, size_t size) {
    fuzz_read_once(backend, data, size, SPI_READ_WITH_ENDS);
    fuzz_read_once(backend, data, size, SPI_READ_SUMMARY_ONLY);
}

#endif /* SP_FUZZ_READ_H */
