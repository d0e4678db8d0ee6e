/*
 * path_table.h - the one index of call paths by (parent path, region):
 * open addressing over 64-bit keys, each naming a path by its int32 index
 * in whatever array its owner keeps the paths in. Three tables use it:
 * a thread's aggregate-mode paths (recorder_buffers.c), the session's
 * folded paths of exited threads (recorder_retire.c), and a trace's calls
 * folded into the summary's paths at finalize (run_paths.c). The paths
 * themselves differ (accumulators, folded accumulators, spi_call_path);
 * the index does not.
 *
 * Keys: spi_path_key(parent, region), parent -1 for a root; bit 63 is
 * never set by it (parent + 1 < 2^31), so spi_hosted_key can name a
 * stand-in for a path on another thread (recorder.h, SPI_PATH_HOSTED).
 * Slots: Fibonacci hashing of the key, one multiply, good spread for
 * these small integers; linear probing; the table is kept at most half
 * full, so a probe ends soon.
 *
 * Not thread-safe: each table has one owner (a recording thread, or the
 * session lock, or finalize).
 */
#ifndef SPI_PATH_TABLE_H
#define SPI_PATH_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef struct spi_path_table {
    uint64_t *keys;
    int32_t *values;     /* path indexes; -1 = empty slot */
    size_t capacity;     /* slots: 0 (nothing allocated yet) or a power of two */
    size_t count;        /* entries */
} spi_path_table;

static inline uint64_t spi_path_key(int32_t parent, int region) {
    return ((uint64_t)(uint32_t)(parent + 1) << 32) | (uint32_t)region;
}

static inline uint64_t spi_hosted_key(int32_t host_thread, int32_t host_node) {
    return UINT64_C(1) << 63 | (uint64_t)(uint32_t)host_thread << 31 | (uint32_t)host_node;
}

static inline size_t spi_path_slot(uint64_t key, size_t capacity) {
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (capacity - 1);
}

/* The path index stored for `key`, or -1. Inline: aggregate mode looks up
 * a path at every begin. */
static inline int32_t spi_path_table_find(const spi_path_table *table, uint64_t key) {
    if (table->capacity == 0) return -1;
    size_t mask = table->capacity - 1;
    for (size_t i = spi_path_slot(key, table->capacity); table->values[i] >= 0; i = (i + 1) & mask)
        if (table->keys[i] == key) return table->values[i];
    return -1;
}

/* Room for `entries` entries in all (the table at most half full then),
 * at least `first_slots` slots on the first allocation. SP_OK or
 * SP_ERR_OUT_OF_MEMORY (the table is unchanged). */
int spi_path_table_reserve(spi_path_table *table, size_t entries, size_t first_slots);

/* Adds `key` -> `value`; room must be reserved and the key absent. */
void spi_path_table_insert(spi_path_table *table, uint64_t key, int32_t value);

/* Frees the slots; the table is empty (and may be used again). */
void spi_path_table_free(spi_path_table *table);

#endif /* SPI_PATH_TABLE_H */
