/*
 * threads.c - see threads.h.
 */
#include "util/threads.h"

#include <signal.h>
#include <stdbool.h>

int spi_thread_start_masked(pthread_t *thread, const pthread_attr_t *attr,
                            void *(*main)(void *), void *argument) {
    sigset_t all, previous;
    sigfillset(&all);
    bool masked = pthread_sigmask(SIG_SETMASK, &all, &previous) == 0;
    int rc = pthread_create(thread, attr, main, argument);
    if (masked) pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return rc;
}
