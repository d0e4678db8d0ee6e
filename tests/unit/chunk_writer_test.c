/*
 * chunk_writer_test.c - the streaming writer's compressed event columns
 * (format/h5_event_chunks.c, h5_column_pool.c, h5_chunk_deflate.c) on a
 * synthetic profile, written three ways:
 *
 *   chunk_writer_test OUT_DIR
 *     OUT_DIR/threads1.h5   through the writer, SCOPE_PROFILER_WRITE_THREADS=1
 *     OUT_DIR/threads4.h5   through the writer, SCOPE_PROFILER_WRITE_THREADS=4
 *     OUT_DIR/reference.h5  the same event columns through HDF5's own filter
 *                           pipeline (H5Dwrite of slices into the datasets
 *                           spi_h5_create_event_column makes), the oracle
 *
 * check_chunk_writer.py then compares them with h5py. The profile has three
 * rows (70,001 + 1 + 99,998 calls: two whole chunks and a partial last
 * one, chunk boundaries inside rows), call/parent ids, thread ids left to
 * their missing value, and a gpu_durations column of random 64-bit values
 * that deflate cannot shrink (the case where the stored chunk is larger
 * than the raw one). Before that, the pool alone (h5_column_pool.h): with
 * 4 threads, chunks reach the sink in submission order, and a sink that
 * fails at the 7th chunk fails every later call, drains and closes
 * (threads joined; the sanitizer builds check the rest). It compiles the modules it tests (tests/unit may include c/src).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/h5_column_pool.h"
#include "format/h5_file_parts.h"
#include "format/h5_writer.h"
#include "format/schema.h"

#define ROWS 3
static const uint64_t row_counts[ROWS] = {70001, 1, 99998};
#define TOTAL (70001 + 1 + 99998)
#define COLUMNS (SPI_EV_BIT(SPI_EV_CALL_IDS) | SPI_EV_BIT(SPI_EV_PARENT_IDS) | \
                 SPI_EV_BIT(SPI_EV_THREAD_IDS) | SPI_EV_BIT(SPI_EV_GPU_DURATIONS))

static int64_t starts[TOTAL], durations[TOTAL], call_ids[TOTAL], parent_ids[TOTAL], gpu[TOTAL];

static uint64_t next_random(uint64_t *state) { /* splitmix64 */
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static void make_data(void) {
    uint64_t state = 42;
    int64_t t = 1700000000000000000;
    for (size_t i = 0; i < TOTAL; i++) {
        t += 20 + (int64_t)(next_random(&state) % 100);
        starts[i] = t;
        durations[i] = 10 + (int64_t)(next_random(&state) % 50);
        call_ids[i] = (int64_t)i;
        parent_ids[i] = i % 4 == 0 ? -1 : (int64_t)(i - i % 4);
        gpu[i] = (int64_t)next_random(&state);
    }
}

static int fail(const char *what, int status, const spi_error *err) {
    fprintf(stderr, "chunk_writer_test: %s: status %d: %s\n", what, status, err ? err->message : "");
    return 1;
}

/* The profile through the writer; rows appended in slices of 5,000 (the
 * writer's own SCRATCH size is not a chunk boundary either). */
static int write_profile(const char *path) {
    spi_writer_layout layout = {.row_count = ROWS, .event_count = TOTAL, .region_count = 2,
                                .thread_count = 0, .event_columns = COLUMNS};
    spi_error err;
    spi_error_clear(&err);
    spi_writer *w = NULL;
    int status = spi_writer_create(&w, path, &layout, &err);
    if (status != SP_OK) return fail("create", status, &err);
    spi_meta meta;
    memset(&meta, 0, sizeof meta);
    const char *names[2] = {"alpha", "beta"};
    status = spi_writer_write_metadata(w, &meta, &err);
    if (status == SP_OK) status = spi_writer_write_region_names(w, names, 2, &err);
    uint64_t first = 0;
    for (int r = 0; r < ROWS && status == SP_OK; r++) {
        spi_row_header header;
        memset(&header, 0, sizeof header);
        header.region = (uint32_t)(r % 2);
        header.exclusive_total = -1;
        header.source_line = -1;
        status = spi_writer_begin_row(w, &header, &err);
        for (uint64_t done = 0; done < row_counts[r] && status == SP_OK;) {
            uint64_t n = row_counts[r] - done < 5000 ? row_counts[r] - done : 5000;
            uint64_t at = first + done;
            spi_event_chunk chunk = {.count = (size_t)n, .starts = starts + at,
                                     .durations = durations + at};
            chunk.columns[SPI_EV_CALL_IDS] = call_ids + at;
            chunk.columns[SPI_EV_PARENT_IDS] = parent_ids + at;
            chunk.columns[SPI_EV_GPU_DURATIONS] = gpu + at;
            /* thread ids: NULL, the writer stores the missing value */
            status = spi_writer_append_events(w, &chunk, &err);
            done += n;
        }
        if (status == SP_OK) status = spi_writer_end_row(w, &err);
        first += row_counts[r];
    }
    if (status != SP_OK) {
        spi_writer_abort(w);
        return fail(path, status, &err);
    }
    status = spi_writer_publish(w, &err);
    return status == SP_OK ? 0 : fail("publish", status, &err);
}

/* The same columns as the writer stores them (deltas per row, missing
 * thread ids), written by HDF5's filter pipeline. */
static int write_reference(const char *path) {
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t events = file >= 0 ? H5Gcreate2(file, "events", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    if (events < 0) return fail("reference file", 0, NULL);
    static int64_t column[TOTAL];
    int columns[] = {SPI_EV_START_DELTAS, SPI_EV_DURATIONS, SPI_EV_CALL_IDS, SPI_EV_PARENT_IDS,
                     SPI_EV_THREAD_IDS, SPI_EV_GPU_DURATIONS};
    int status = SP_OK;
    for (size_t k = 0; k < sizeof columns / sizeof columns[0] && status == SP_OK; k++) {
        int c = columns[k];
        for (size_t i = 0, row = 0, row_end = row_counts[0]; i < TOTAL; i++) {
            while (i == row_end) row_end += row_counts[++row];
            bool row_first = i == row_end - row_counts[row];
            switch (c) {
            case SPI_EV_START_DELTAS: column[i] = row_first ? starts[i] : starts[i] - starts[i - 1]; break;
            case SPI_EV_DURATIONS: column[i] = durations[i]; break;
            case SPI_EV_CALL_IDS: column[i] = call_ids[i]; break;
            case SPI_EV_PARENT_IDS: column[i] = parent_ids[i]; break;
            case SPI_EV_THREAD_IDS: column[i] = spi_event_columns[c].missing; break;
            default: column[i] = gpu[i]; break;
            }
        }
        hid_t dset = spi_h5_create_event_column(events, &spi_event_columns[c], TOTAL, H5P_DEFAULT);
        status = dset >= 0 ? spi_h5_write_slice(dset, H5T_NATIVE_INT64, 0, column, TOTAL, H5P_DEFAULT)
                           : SP_ERR_HDF5;
        if (dset >= 0) H5Dclose(dset);
    }
    H5Gclose(events);
    H5Fclose(file);
    return status == SP_OK ? 0 : fail("reference columns", status, NULL);
}

/* The pool's sink for the order check: chunk k must be the k-th seen. */
typedef struct order_sink {
    uint64_t seen;
    uint64_t fail_at; /* 0: never */
    int bad_order;
} order_sink;

static int check_order(void *context, const spi_encoded_chunk *chunk) {
    order_sink *sink = context;
    uint64_t k = sink->seen++;
    if (chunk->index != k / 3 || chunk->column != (int)(k % 3) || chunk->bytes == 0)
        sink->bad_order = 1;
    return sink->fail_at && sink->seen == sink->fail_at ? SP_ERR_HDF5 : SP_OK;
}

/* 60 chunks of 3 columns through a pool of `threads`; returns 0 when the
 * order held and a failure (fail_at) was reported by submit and drain. */
static int pool_case(unsigned threads, uint64_t fail_at) {
    enum { ELEMENTS = 4096 };
    order_sink sink = {0, fail_at, 0};
    spi_column_pool *pool = NULL;
    if (spi_column_pool_open(&pool, threads, 3, ELEMENTS * 8, 8, check_order, &sink) != SP_OK)
        return fail("pool open", 0, NULL);
    void *buffers[3];
    for (int c = 0; c < 3; c++)
        if (!(buffers[c] = spi_column_pool_buffer(pool))) return fail("pool buffer", 0, NULL);
    int status = SP_OK;
    for (uint64_t index = 0; index < 20 && status == SP_OK; index++)
        for (int c = 0; c < 3 && status == SP_OK; c++) {
            memcpy(buffers[c], gpu + index * 100 + (uint64_t)c, ELEMENTS * 8);
            status = spi_column_pool_submit(pool, &buffers[c], ELEMENTS * 8, c, index);
        }
    int drained = spi_column_pool_drain(pool);
    spi_column_pool_close(pool);
    if (sink.bad_order) return fail("chunks out of order", 0, NULL);
    int want = fail_at ? SP_ERR_HDF5 : SP_OK;
    if (drained != want || (fail_at && status != want) || (!fail_at && sink.seen != 60))
        return fail("pool status", drained, NULL);
    if (fail_at && sink.seen != fail_at) return fail("sink called after its failure", 0, NULL);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: chunk_writer_test OUT_DIR\n");
        return 2;
    }
    make_data();
    if (pool_case(1, 0) || pool_case(4, 0) || pool_case(1, 7) || pool_case(4, 7)) return 1;
    char path[4096];
    const char *threads[] = {"1", "4"};
    for (int i = 0; i < 2; i++) {
        setenv("SCOPE_PROFILER_WRITE_THREADS", threads[i], 1);
        if (spi_write_threads() != (unsigned)atoi(threads[i]))
            return fail("SCOPE_PROFILER_WRITE_THREADS not taken", 0, NULL);
        snprintf(path, sizeof path, "%s/threads%s.h5", argv[1], threads[i]);
        if (write_profile(path) != 0) return 1;
    }
    snprintf(path, sizeof path, "%s/reference.h5", argv[1]);
    if (write_reference(path) != 0) return 1;
    printf("chunk_writer_test: wrote %d calls three ways\n", TOTAL);
    return 0;
}
