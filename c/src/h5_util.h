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

typedef struct spi_h5_silence_state {
    H5E_auto2_t func;
    void *data;
} spi_h5_silence_state;

void spi_h5_silence(spi_h5_silence_state *saved);
void spi_h5_restore(const spi_h5_silence_state *saved);

/* The innermost HDF5 error message on the default stack, for messages. */
void spi_h5_last_message(char *buf, size_t buf_bytes);

#endif /* SPI_H5_UTIL_H */
