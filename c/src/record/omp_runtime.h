/*
 * omp_runtime.h - what the recorder asks the OpenMP runtime while it
 * records (openmp.h explains what the answers are used for). Weak
 * references: a program without OpenMP never loads a runtime, and every
 * answer is then false. Internal to the record module.
 */
#ifndef SPI_OMP_RUNTIME_H
#define SPI_OMP_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

/* true on an OpenMP worker thread of a parallel region: the runtime is in
 * the program and the calling thread is inside a parallel region with a
 * thread number > 0. Thread-safe. */
bool spi_omp_thread_is_worker(void);
/* true when the program has an OpenMP runtime. Thread-safe. */
bool spi_omp_present(void);
/* Whether the calling thread is inside a parallel region (a TLS read in
 * libgomp); false without a runtime. Thread-safe. */
bool spi_omp_in_parallel(void);

/*
 * The name a thread table shows for the calling thread: the name the
 * program set (pthread_setname_np) or, for an OpenMP worker (worker true)
 * whose name is still the one it inherited from the process (the
 * executable's, as the kernel gives every new thread), "omp worker N" with
 * N its OpenMP thread number. `current` is the thread's name as
 * pthread_getname_np read it ("" when it could not be read). Writes a
 * NUL-terminated name of at most size - 1 bytes into name. Cannot fail.
 * Thread-safety: reads /proc/self/comm; safe from any thread, off the hot
 * path (a thread's attach).
 */
void spi_omp_thread_name(bool worker, const char *current, char *name, size_t size);

#endif /* SPI_OMP_RUNTIME_H */
