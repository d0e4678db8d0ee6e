/*
 * diag.h - the library's only channel to the terminal for problems: one line
 * on stderr, prefixed "scope-profiler: ", suppressed when quiet.
 */
#ifndef SPI_DIAG_H
#define SPI_DIAG_H

#include <stdbool.h>

void spi_diag_set_quiet(bool quiet);
/* Lines of a process that is rank N > 0 of a job start "[rank N] ", so a
 * user reading the merged output of many ranks knows who said what; -1 or
 * 0: no prefix. */
void spi_diag_set_rank(int rank);
bool spi_diag_is_quiet(void);
/* Print one diagnostic line (a newline is added) unless quiet. */
void spi_diag(const char *format, ...) __attribute__((format(printf, 1, 2)));

#endif /* SPI_DIAG_H */
