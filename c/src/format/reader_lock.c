/*
 * reader_lock.c - the readers' HDF5 lock (reader_lock.h). Its own unit so
 * that the whole-file reader and the on-demand call store both stand on it
 * instead of on each other.
 */
#include "format/reader_lock.h"

#include <pthread.h>

static pthread_mutex_t h5_lock = PTHREAD_MUTEX_INITIALIZER;

void spi_h5r_lock(void) { pthread_mutex_lock(&h5_lock); }
void spi_h5r_unlock(void) { pthread_mutex_unlock(&h5_lock); }
