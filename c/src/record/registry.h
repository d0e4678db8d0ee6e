/*
 * registry.h - region names to dense handles, for the life of the process.
 *
 * Handles are indices in registration order and never change, so they may
 * be resolved before sp_setup and used after sp_finalize. Registration takes
 * a mutex; reading a name by handle is lock-free (entries live in segments
 * that never move). Name-to-handle lookups on the hot path go through a
 * per-thread cache (see recorder.c), not through the registry's lock.
 */
#ifndef SPI_REGISTRY_H
#define SPI_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

typedef struct spi_region_name {
    const char *text;  /* NUL-terminated copy, whole (any length) */
    size_t len;
    uint64_t hash;     /* spi_name_hash(text, len) */
} spi_region_name;

/* Handles stay below this: an event keeps its region in 23 bits
 * (recorder.h). */
#define SPI_REGION_LIMIT (INT32_C(1) << 23)

/* Hash of a name, as used by the registry and the per-thread caches. */
uint64_t spi_name_hash(const char *name, size_t len);

/* The handle of `name` (len bytes), registering it if new. Returns the
 * handle >= 0, or -1 with *status set (SP_ERR_INVALID_ARGUMENT for an empty
 * name, SP_ERR_OUT_OF_MEMORY, SP_ERR_REGION_LIMIT past SPI_REGION_LIMIT
 * names). Thread-safe. */
int spi_registry_intern(const char *name, size_t len, uint64_t hash, int *status);

/* Number of registered regions (handles are 0..count-1). Lock-free. */
int spi_registry_count(void);

/* The entry of a handle, or NULL when out of range. Lock-free. */
const spi_region_name *spi_registry_get(int handle);

/* pthread_atfork handlers (called from spi_recorder_fork_*): the registry
 * lock is held across fork() by the forking thread. */
void spi_registry_fork_prepare(void);
void spi_registry_fork_parent(void);
void spi_registry_fork_child(void);

#endif /* SPI_REGISTRY_H */
