/*
 * error.h - status plus message, carried from where an error is found to the
 * public edge (sp_finalize, the reader, the tools).
 *
 * Library code fills an spi_error with the status and a message that names
 * the file and the problem; it never prints it itself (except the one-line
 * diagnostics of diag.h). The per-thread sp_last_error also lives here.
 */
#ifndef SPI_ERROR_H
#define SPI_ERROR_H

#include "scope_profiler.h"

#define SPI_ERROR_MESSAGE_BYTES 1024

typedef struct spi_error {
    int status;                              /* sp_status */
    char message[SPI_ERROR_MESSAGE_BYTES];   /* "" when status is SP_OK */
} spi_error;

void spi_error_clear(spi_error *err);
/* Set status and a printf-style message; returns status so callers can
 * `return spi_error_set(...)`. A NULL err only returns the status. Keeps the
 * first error: a later set on an already-failed err is ignored, so cleanup
 * paths cannot overwrite the root cause. */
int spi_error_set(spi_error *err, int status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* Record status as the calling thread's sp_last_error (SP_OK is ignored). */
void spi_status_remember(int status);

#endif /* SPI_ERROR_H */
