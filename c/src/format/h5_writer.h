/*
 * h5_writer.h - the one streaming writer of schema-3 files.
 *
 * sp_finalize, the MPI collective path and scope-merge are all clients of
 * this writer. Its life:
 *
 *   spi_writer_create   temp sibling .<name>.<random>.tmp, root attributes,
 *                       every dataset created at its final size (the caller
 *                       declares rows, events and optional columns first:
 *                       nothing is resized, nothing is silently truncated)
 *   spi_writer_write_metadata / spi_writer_write_region_names /
 *   spi_writer_write_threads
 *   spi_writer_begin_row, spi_writer_append_events (any number of chunks),
 *   spi_writer_end_row          -- rows in file order
 *   spi_writer_publish  checks every declared row and event was written,
 *                       flushes, fsyncs, renames over the target, fsyncs
 *                       the directory
 *   spi_writer_abort    (instead of publish) removes the temporary file
 *
 * Every function returns SP_OK or an error status with err filled (the
 * message names the file). After an error only spi_writer_abort is useful.
 * Not thread-safe: one writer is used by one thread.
 */
#ifndef SPI_H5_WRITER_H
#define SPI_H5_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "profile/metadata.h"
#include "format/schema.h"
#include "profile/profile.h"

typedef struct spi_writer spi_writer;

typedef struct spi_writer_layout {
    uint64_t row_count;       /* (rank, region) rows that will be written */
    uint64_t event_count;     /* total calls over all rows */
    size_t region_count;      /* names in region_table */
    size_t thread_count;      /* thread_table rows (0: no table) */
    unsigned event_columns;   /* SPI_EV_BIT set of optional event columns */
    bool aggregate;           /* the aggregate layout (FORMAT.md 1.8): rows
                                 carry totals, event_count must be 0 */
} spi_writer_layout;

/* Index data of one row; events follow through append_events. */
typedef struct spi_row_header {
    uint32_t region;
    uint32_t rank;
    int64_t exclusive_total;  /* -1 = not computed */
    int64_t source_line;      /* -1 = unknown */
    const char *source_file;  /* NULL = "" */
    const char *source_text;  /* NULL = "" */
    const char *tags_json;    /* NULL = "[]" */
    const char *event_metadata_json; /* NULL = "[]" */
    spi_stats stats;
    /* aggregate layout only: the row's totals (ns) */
    uint64_t aggregate_count;
    int64_t aggregate_total;
    int64_t aggregate_minimum;
    int64_t aggregate_maximum;
    int64_t aggregate_exclusive;  /* -1 = not computed */
} spi_row_header;

/* A chunk of a row's calls: starts/durations always; an optional column may
 * be NULL (its missing value is written), but only columns declared in the
 * layout are written at all. */
typedef struct spi_event_chunk {
    size_t count;
    const int64_t *starts;    /* absolute ns */
    const int64_t *durations;
    const int64_t *columns[SPI_EV_COUNT]; /* indexed by spi_event_col */
} spi_event_chunk;


int spi_writer_create(spi_writer **writer, const char *path,
                      const spi_writer_layout *layout, spi_error *err);
int spi_writer_write_metadata(spi_writer *writer, const spi_meta *metadata, spi_error *err);
int spi_writer_write_region_names(spi_writer *writer, const char *const *names,
                                  size_t count, spi_error *err);
int spi_writer_write_threads(spi_writer *writer, const spi_thread_row *threads,
                             size_t count, spi_error *err);
int spi_writer_begin_row(spi_writer *writer, const spi_row_header *header, spi_error *err);
int spi_writer_append_events(spi_writer *writer, const spi_event_chunk *chunk, spi_error *err);
int spi_writer_end_row(spi_writer *writer, spi_error *err);
/* Replace the statistics of row `row` (0-based in write order, begun
 * already), for clients that know them only after streaming the row's
 * events (a bounded trace: record/run_stream.c). The index is written at
 * publish, so nothing is rewritten. SP_OK or SP_ERR_INVALID_ARGUMENT. */
int spi_writer_set_row_stats(spi_writer *writer, uint64_t row, const spi_stats *stats,
                             spi_error *err);
int spi_writer_publish(spi_writer *writer, spi_error *err);
void spi_writer_abort(spi_writer *writer);

/* The open HDF5 file of a writer, for modules that add optional groups
 * (rank<N>/perf_events, rank<N>/likwid, ...) before publish. The writer
 * keeps ownership; do not close it. */
hid_t spi_writer_file(const spi_writer *writer);

/* Events per chunk of the writer's compressed event columns, 0 when the
 * writer does not write them chunk by chunk (small or uncompressed
 * columns, a big-endian host): then no chunk is ever put encoded. */
size_t spi_writer_event_chunk_elements(const spi_writer *writer);

/* scope-merge's chunk copy: the chunk of event column `column` (an
 * spi_event_col) that the next appended events start is stored as
 * `bytes` already-encoded bytes (an input's stored chunk of the same
 * layout, read with H5Dread_chunk; see spi_event_chunks_put_encoded for
 * when it is taken). When *taken, the caller still appends the chunk's
 * events as usual (starts always, for the delta base; the values of this
 * column are ignored and may be any pointer). Not taken: nothing changed.
 * SP_OK, or the writer's failure (err set). Not thread-safe. */
int spi_writer_put_encoded_chunk(spi_writer *writer, int column, const void *data, size_t bytes,
                                 bool *taken, spi_error *err);

/* The whole profile through the writer, published atomically: rows from
 * their arrays, or streamed from profile->source. */
int spi_profile_write(const spi_profile *profile, const char *path, spi_error *err);

#endif /* SPI_H5_WRITER_H */
