/*
 * metadata.h - the run metadata model: an ordered list of typed key/value
 * entries, exactly the value kinds /metadata can hold (FORMAT.md 1.2).
 *
 * Used by the recorder (collecting the run's metadata), the writer (one
 * attribute per entry), the reader and merge (key-by-key union where
 * earlier sets win).
 */
#ifndef SPI_METADATA_H
#define SPI_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scope_profiler.h"

/* Metadata strings longer than this are cut, ending in the marker. */
#define SPI_METADATA_STRING_MAX 60000
#define SPI_METADATA_TRUNCATION_MARKER "...[truncated]"


typedef enum spi_meta_kind {
    SPI_META_STR,
    SPI_META_I64,
    SPI_META_F64,
    SPI_META_BOOL,
    SPI_META_STR_ARRAY
} spi_meta_kind;

typedef struct spi_meta_entry {
    char *key;
    spi_meta_kind kind;
    char *str;          /* SPI_META_STR */
    int64_t i64;        /* SPI_META_I64, SPI_META_BOOL (0/1) */
    double f64;         /* SPI_META_F64 */
    char **items;       /* SPI_META_STR_ARRAY */
    size_t item_count;
} spi_meta_entry;

typedef struct spi_meta {
    spi_meta_entry *entries;  /* in insertion order */
    size_t count;
    size_t capacity;
    /* key -> entry index + 1 (0 = empty), open addressing, so that setting
     * or finding a key costs the same with 20,000 keys as with 20; NULL
     * until the first key. Owned; rebuilt as the entries grow. */
    size_t *slots;
    size_t slot_count;        /* a power of two, more than twice count */
} spi_meta;

/* All setters replace an existing key in place (keeping its position) and
 * return SP_OK or SP_ERR_OUT_OF_MEMORY. Strings are copied; strings longer
 * than SPI_METADATA_STRING_MAX are cut as FORMAT.md 1.2 describes. */
int spi_meta_set_str(spi_meta *meta, const char *key, const char *value);
int spi_meta_set_i64(spi_meta *meta, const char *key, int64_t value);
int spi_meta_set_f64(spi_meta *meta, const char *key, double value);
int spi_meta_set_bool(spi_meta *meta, const char *key, bool value);
int spi_meta_set_str_array(spi_meta *meta, const char *key,
                           const char *const *items, size_t count);
/* Add a copy of entry (any kind) unless the key exists (merge: earlier wins). */
int spi_meta_add_missing(spi_meta *meta, const spi_meta_entry *entry);

const spi_meta_entry *spi_meta_find(const spi_meta *meta, const char *key);
void spi_meta_free(spi_meta *meta);

/* What the recorder knows when it collects a run's metadata. */
typedef struct spi_meta_context {
    sp_metadata_detail detail;
    const char *label;       /* NULL: none */
    const char *source_language; /* NULL: "c" */
    int64_t start_time_ns;
    int64_t finalize_time_ns;
    int64_t mpi_size;        /* 1 without MPI */
    int64_t num_nodes;       /* distinct hosts; 1 without MPI */
    int64_t mpi_rank;
    const char *clock;       /* "monotonic" or "tsc": metadata "clock" */
    const char *mode;        /* "trace" or "aggregate": metadata "profile_mode" */
} spi_meta_context;

/* Collect the minimal (or full) metadata set of FORMAT.md 1.2 plus
 * source="native". Never reads environment variables other than the listed
 * ones. Returns SP_OK or SP_ERR_OUT_OF_MEMORY. */
int spi_meta_collect(spi_meta *meta, const spi_meta_context *context);

#endif /* SPI_METADATA_H */
