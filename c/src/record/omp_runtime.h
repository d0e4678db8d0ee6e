/*
 * omp_runtime.h - what the recorder asks the OpenMP runtime while it
 * records (openmp.h explains what the answers are used for). Weak
 * references: a program without OpenMP never loads a runtime, and every
 * answer is then false. Internal to the record module.
 */
#ifndef SPI_OMP_RUNTIME_H
#define SPI_OMP_RUNTIME_H

#include <stdbool.h>

/* true on an OpenMP worker thread of a parallel region: the runtime is in
 * the program and the calling thread is inside a parallel region with a
 * thread number > 0. Thread-safe. */
bool spi_omp_thread_is_worker(void);
/* true when the program has an OpenMP runtime. Thread-safe. */
bool spi_omp_present(void);
/* Whether the calling thread is inside a parallel region (a TLS read in
 * libgomp); false without a runtime. Thread-safe. */
bool spi_omp_in_parallel(void);

#endif /* SPI_OMP_RUNTIME_H */
