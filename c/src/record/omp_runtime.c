/*
 * omp_runtime.c - the OpenMP runtime's answers the recorder needs while it
 * records (omp_runtime.h), through weak references. Apart from openmp.c,
 * which runs at finalize over recorded calls, so that recording never
 * depends on the finalize-time code.
 */
#include "record/omp_runtime.h"

#include <stddef.h>

/* Weak: resolved when the program links an OpenMP runtime, NULL otherwise. */
extern int omp_in_parallel(void) __attribute__((weak));
extern int omp_get_thread_num(void) __attribute__((weak));

bool spi_omp_present(void) { return omp_in_parallel != NULL; }

bool spi_omp_in_parallel(void) { return omp_in_parallel && omp_in_parallel(); }

bool spi_omp_thread_is_worker(void) {
    return omp_in_parallel && omp_get_thread_num && omp_in_parallel() && omp_get_thread_num() > 0;
}
