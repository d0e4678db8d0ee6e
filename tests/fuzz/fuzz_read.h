/*
 * fuzz_read.h - what both fuzz harnesses do with one input.
 *
 * The input is a whole file's bytes, parsed in memory by one reader back
 * end (format/reader.h), then every row's statistics are computed as a
 * full read does. Each input is read three times, as the tools do: a full
 * read with ends, a summary-only read (the .spt back end refuses that at
 * once), and a read that leaves the calls in the file and reads them back
 * through cursors. The contract checked besides "no crash, no sanitizer report":
 * a refused input gets a message naming the file, as every tool prints it.
 */
#ifndef SP_FUZZ_READ_H
#define SP_FUZZ_READ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/reader.h"
#include "profile/call_cursor.h"

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

/* The tools' read: calls left in the file (HDF5 only; other back ends
 * read whole), the statistics streamed, then every row read back through
 * a cursor, every column, in small slices. */
static inline void fuzz_read_on_demand(fuzz_backend backend, const uint8_t *data, size_t size) {
    spi_profile profile = {0};
    spi_error err;
    spi_error_clear(&err);
    unsigned flags = SPI_READ_CALLS_ON_DEMAND | SPI_READ_WITH_ENDS;
    int status = backend(&profile, data, size, FUZZ_INPUT_NAME, flags, &err);
    if (status == SP_OK) status = spi_profile_compute_stats(&profile, FUZZ_INPUT_NAME, true, &err);
    for (size_t row = 0; status == SP_OK && spi_profile_has_calls(&profile) &&
                         row < profile.row_count;
         row++) {
        if (profile.rows[row].aggregate) continue;
        spi_call_cursor cursor;
        spi_call_slice slice;
        status = spi_call_cursor_open(&cursor, &profile, row, SPI_CURSOR_ALL, 64);
        while (status == SP_OK && (status = spi_call_cursor_next(&cursor, &slice, &err)) == SP_OK &&
               slice.count) {
        }
        spi_call_cursor_close(&cursor);
        /* out of memory has no file to name */
        if (status == SP_ERR_OUT_OF_MEMORY) status = SP_OK;
    }
    spi_profile_free(&profile);
    if (status != SP_OK && strstr(err.message, FUZZ_INPUT_NAME) == NULL) abort();
}

static inline void fuzz_read(fuzz_backend backend, const uint8_t *data, size_t size) {
    fuzz_read_once(backend, data, size, SPI_READ_WITH_ENDS);
    fuzz_read_once(backend, data, size, SPI_READ_SUMMARY_ONLY);
    fuzz_read_on_demand(backend, data, size);
}

#endif /* SP_FUZZ_READ_H */
