/*
 * reader_lock.h - the one lock around the readers' HDF5 calls.
 *
 * Debian's serial HDF5 is not built thread-safe, and the tools read calls
 * on demand from several threads (views, statistics), so every reader entry
 * (reader_h5.c) and every on-demand read of a call store (reader_calls.c)
 * holds this lock while it is inside libhdf5. Internal to the format module.
 */
#ifndef SPI_READER_LOCK_H
#define SPI_READER_LOCK_H

/* Take / release the readers' HDF5 lock. Not recursive: a holder must not
 * call another reader entry. Thread-safe (that is its purpose). */
void spi_h5r_lock(void);
void spi_h5r_unlock(void);

#endif /* SPI_READER_LOCK_H */
