/*
 * registry.c - the process-wide region registry (see registry.h).
 *
 * Layout: handle h lives in segment s = floor(log2(h / 64 + 1)), which holds
 * 64 << s entries. Segments are allocated once and never moved, so a reader
 * that saw count > h (acquire) can read entry h without a lock while another
 * thread registers more names. Names are found under the mutex through an
 * open-addressing table of handles, rebuilt when half full.
 */
#include "record/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "record/region_filter.h"
#include "util/alloc.h"
#include "scope_profiler.h"

#define SEGMENT_BASE 64
#define SEGMENT_COUNT 40 /* 64 * (2^40 - 1) handles: never the limit */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static spi_region_name *segments[SEGMENT_COUNT];
static atomic_int registered = 0;
static int *lookup_slots = NULL; /* handle + 1, 0 = empty; under the lock */
static size_t lookup_capacity = 0;

static void locate(int handle, int *segment, size_t *offset) {
    uint64_t slot = (uint64_t)handle / SEGMENT_BASE + 1;
    int s = 63 - __builtin_clzll(slot);
    *segment = s;
    *offset = (size_t)handle - (size_t)SEGMENT_BASE * (((size_t)1 << s) - 1);
}

uint64_t spi_name_hash(const char *name, size_t len) {
    /* 8 bytes at a time with a multiply-xorshift mix: a few ns for typical
     * region names, which matters because by-name calls hash every time. */
    uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)len;
    while (len >= 8) {
        uint64_t word;
        memcpy(&word, name, 8);
        h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
        name += 8;
        len -= 8;
    }
    if (len) {
        uint64_t word = 0;
        memcpy(&word, name, len);
        h = (h ^ word) * 0x94D049BB133111EBull;
        h ^= h >> 29;
    }
    return h ^ (h >> 32);
}

const spi_region_name *spi_registry_get(int handle) {
    if (handle < 0 || handle >= atomic_load_explicit(&registered, memory_order_acquire))
        return NULL;
    int segment;
    size_t offset;
    locate(handle, &segment, &offset);
    return &segments[segment][offset];
}

int spi_registry_count(void) {
    return atomic_load_explicit(&registered, memory_order_acquire);
}

static int find_locked(const char *name, size_t len, uint64_t hash) {
    if (!lookup_capacity) return -1;
    for (size_t i = hash & (lookup_capacity - 1);; i = (i + 1) & (lookup_capacity - 1)) {
        int slot = lookup_slots[i];
        if (!slot) return -1;
        const spi_region_name *entry = spi_registry_get(slot - 1);
        if (entry->hash == hash && entry->len == len && memcmp(entry->text, name, len) == 0)
            return slot - 1;
    }
}

static int grow_lookup_locked(int count) {
    size_t capacity = lookup_capacity ? lookup_capacity * 2 : 256;
    int *slots = spi_calloc(capacity, sizeof *slots);
    if (!slots) return SP_ERR_OUT_OF_MEMORY;
    for (int h = 0; h < count; h++) {
        size_t i = spi_registry_get(h)->hash & (capacity - 1);
        while (slots[i]) i = (i + 1) & (capacity - 1);
        slots[i] = h + 1;
    }
    spi_free(lookup_slots);
    lookup_slots = slots;
    lookup_capacity = capacity;
    return SP_OK;
}

int spi_registry_intern(const char *name, size_t len, uint64_t hash, int *status) {
    if (!name || len == 0) {
        *status = SP_ERR_INVALID_ARGUMENT;
        return -1;
    }
    pthread_mutex_lock(&registry_lock);
    int handle = find_locked(name, len, hash);
    if (handle >= 0) {
        pthread_mutex_unlock(&registry_lock);
        return handle;
    }
    int count = atomic_load_explicit(&registered, memory_order_relaxed);
    *status = SP_ERR_REGION_LIMIT;
    if (count >= SPI_REGION_LIMIT) goto out;
    *status = SP_ERR_OUT_OF_MEMORY;
    if ((size_t)(count + 1) * 2 > lookup_capacity && grow_lookup_locked(count) != SP_OK)
        goto out;
    int segment;
    size_t offset;
    locate(count, &segment, &offset);
    if (!segments[segment]) {
        segments[segment] = spi_calloc((size_t)SEGMENT_BASE << segment, sizeof(spi_region_name));
        if (!segments[segment]) goto out;
    }
    char *copy = spi_strndup(name, len);
    if (!copy) goto out;
    segments[segment][offset] = (spi_region_name){.text = copy, .len = len, .hash = hash};
    size_t i = hash & (lookup_capacity - 1);
    while (lookup_slots[i]) i = (i + 1) & (lookup_capacity - 1);
    lookup_slots[i] = count + 1;
    spi_region_filter_decide(count, copy); /* SCOPE_PROFILER_REGIONS, before publication */
    /* Release: a thread that reads the new count also sees the entry. */
    atomic_store_explicit(&registered, count + 1, memory_order_release);
    handle = count;
    *status = SP_OK;
out:
    pthread_mutex_unlock(&registry_lock);
    return handle;
}

/* fork(): the forking thread holds the lock across the fork, so the child
 * never inherits it locked by a thread that does not exist there. */
void spi_registry_fork_prepare(void) { pthread_mutex_lock(&registry_lock); }
void spi_registry_fork_parent(void) { pthread_mutex_unlock(&registry_lock); }
void spi_registry_fork_child(void) { pthread_mutex_unlock(&registry_lock); }
