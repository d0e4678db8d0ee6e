/*
 * path_table.c - growing and filling the index of call paths
 * (path_table.h). Lookups are inline in the header; what is here runs
 * once per new path.
 */
#include "record/path_table.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"

int spi_path_table_reserve(spi_path_table *table, size_t entries, size_t first_slots) {
    if (entries <= table->capacity / 2) return SP_OK;
    size_t capacity = table->capacity ? table->capacity : (first_slots ? first_slots : 64);
    while (capacity / 2 < entries) capacity *= 2;
    uint64_t *keys = spi_malloc(capacity * sizeof *keys);
    int32_t *values = spi_malloc(capacity * sizeof *values);
    if (!keys || !values) {
        spi_free(keys);
        spi_free(values);
        return SP_ERR_OUT_OF_MEMORY;
    }
    memset(values, 0xff, capacity * sizeof *values);
    /* rehash: every entry to its slot in the larger table */
    for (size_t i = 0; i < table->capacity; i++) {
        if (table->values[i] < 0) continue;
        size_t j = spi_path_slot(table->keys[i], capacity);
        while (values[j] >= 0) j = (j + 1) & (capacity - 1);
        keys[j] = table->keys[i];
        values[j] = table->values[i];
    }
    spi_free(table->keys);
    spi_free(table->values);
    table->keys = keys;
    table->values = values;
    table->capacity = capacity;
    return SP_OK;
}

void spi_path_table_insert(spi_path_table *table, uint64_t key, int32_t value) {
    size_t mask = table->capacity - 1, i = spi_path_slot(key, table->capacity);
    while (table->values[i] >= 0) i = (i + 1) & mask;
    table->keys[i] = key;
    table->values[i] = value;
    table->count++;
}

void spi_path_table_free(spi_path_table *table) {
    spi_free(table->keys);
    spi_free(table->values);
    *table = (spi_path_table){0};
}
