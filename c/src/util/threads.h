/*
 * threads.h - the library's own threads, started so that none of the
 * program's signal handlers (timers, samplers, the signal-safe recording
 * they may do) ever runs on them.
 */
#ifndef SPI_THREADS_H
#define SPI_THREADS_H

#include <pthread.h>

/* pthread_create with every signal blocked in the new thread (it inherits
 * the mask it is created under; the caller's own mask is restored before
 * returning). `attr` may be NULL. Returns pthread_create's result: 0, or
 * an errno value (no thread then). Thread-safe. */
int spi_thread_start_masked(pthread_t *thread, const pthread_attr_t *attr,
                            void *(*main)(void *), void *argument);

#endif /* SPI_THREADS_H */
