/*
 * fuzz_spt.c - libFuzzer harness of the native trace parser
 * (format/reader_spt.c, docs/FORMAT.md 6). Seeds: the .spt files of tests/data.
 */
#include "fuzz_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_read(spi_read_spt_image, data, size);
    return 0;
}
