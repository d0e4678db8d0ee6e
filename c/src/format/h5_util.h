/*
 * h5_util.h - small HDF5 helpers shared by the writer and the reader.
 *
 * HDF5 prints its error stack to stderr by default. A profiler must not
 * spray library internals on the user's terminal: every entry point that
 * calls HDF5 brackets its work with spi_h5_silence/spi_h5_restore and turns
 * failures into one spi_error that names the file.
 */
#ifndef SPI_H5_UTIL_H
#define SPI_H5_UTIL_H

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>

typedef struct spi_h5_silence_state {
    H5E_auto2_t func;
    void *data;
} spi_h5_silence_state;

void spi_h5_silence(spi_h5_silence_state *saved);
void spi_h5_restore(const spi_h5_silence_state *saved);

/* The innermost HDF5 error message on the default stack, for messages. */
void spi_h5_last_message(char *buf, size_t buf_bytes);

/* Writing attributes and small datasets with the types h5py gives the
 * reference writer (FORMAT.md 1.2): str -> scalar vlen UTF-8, int -> i8,
 * float -> f8, bool -> enum over int8, list of str -> 1-D vlen UTF-8.
 * Each returns SP_OK or SP_ERR_HDF5; the caller names the file. */
/* Every string we store is typed UTF-8 (docs/FORMAT.md 2.1), but names
 * and texts come from user code as any bytes. The strings to hand to HDF5:
 * `items` itself when each is valid UTF-8 (no copy), else a new array in
 * which each invalid one is a copy with U+FFFD for every byte that does
 * not begin a well-formed sequence (the first time in a process, one
 * diagnostic line says so). NULL on allocation failure. Release with
 * spi_h5_utf8_release. */
const char **spi_h5_utf8_strings(const char *const *items, size_t count);
void spi_h5_utf8_release(const char **stored, const char *const *items, size_t count);

int spi_h5_write_attr_string(hid_t object, const char *name, const char *value);
int spi_h5_write_attr_i64(hid_t object, const char *name, int64_t value);
int spi_h5_write_attr_f64(hid_t object, const char *name, double value);
int spi_h5_write_attr_bool(hid_t object, const char *name, int64_t value);
int spi_h5_write_attr_strings(hid_t object, const char *name, char *const *items, size_t count);
/* A contiguous dataset of `rank` dimensions written whole. */
int spi_h5_write_dataset(hid_t parent, const char *name, hid_t file_type, hid_t memory_type,
                         int rank, const hsize_t *dims, const void *data);
hid_t spi_h5_create_group(hid_t parent, const char *name);
/* The group `name` of parent, created when absent (rank<N> is shared by
 * the counter groups and the call paths); < 0 on error. */
hid_t spi_h5_open_or_create_group(hid_t parent, const char *name);

#endif /* SPI_H5_UTIL_H */
