/*
 * deflate_planes_test.c - the plane-by-plane zlib encoder
 * (format/deflate_planes.c, issue 31) against libdeflate's and zlib's
 * inflaters (zlib is what HDF5's deflate filter runs).
 *
 *   deflate_planes_test                  synthetic chunks of every kind
 *   deflate_planes_test COLUMN.bin ...   real columns (little-endian int64,
 *                                        as tests/unit/check_deflate_planes.py
 *                                        dumps them from a recorded file):
 *                                        every 65,536-value chunk
 *   deflate_planes_test --measure COLUMN.bin ...
 *                                        the same, and per column the bytes
 *                                        and CPU ns a value of libdeflate
 *                                        (the pool's level) and of this encoder (a
 *                                        measurement: never a pass/fail)
 *
 * Every chunk the encoder takes must inflate (libdeflate and zlib, each
 * checking the Adler-32) to exactly the shuffled chunk; chunks it declines
 * are counted, and the synthetic kinds say which must be taken (constant,
 * noisy, skewed planes) and which declined (counters).
 */
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "format/byte_shuffle.h"
#include "format/deflate_planes.h"
#include "format/deflate_walk.h"
#include "format/h5_column_pool.h"

#include "unit_check.h"

#define CHUNK_VALUES 65536
#define CHUNK_BYTES (CHUNK_VALUES * 8)

static unsigned char *shuffled, *encoded, *inflated;
static size_t capacity;
static struct libdeflate_decompressor *decompressor;
static struct libdeflate_compressor *sampler; /* the pool's level */

/* Encode `raw` (values) shuffled; on success check that both inflaters give
 * the shuffled bytes back. Returns whether the encoder took the chunk. */
static int check_values(const char *what, const int64_t *raw, size_t values, size_t *bytes_out) {
    size_t bytes = values * 8, stored = 0;
    spi_byte_shuffle(raw, shuffled, bytes, 8);
    if (spi_deflate_planes(sampler, shuffled, bytes, 8, encoded, capacity, &stored) != SPI_PLANES_TAKEN)
        return 0;
    size_t got = 0;
    enum libdeflate_result r =
        libdeflate_zlib_decompress(decompressor, encoded, stored, inflated, bytes, &got);
    CHECK(r == LIBDEFLATE_SUCCESS && got == bytes, "%s: libdeflate inflate %d, %zu of %zu bytes",
          what, (int)r, got, bytes);
    CHECK(r != LIBDEFLATE_SUCCESS || memcmp(inflated, shuffled, bytes) == 0,
          "%s: libdeflate inflates to other bytes", what);
    uLongf zgot = (uLongf)bytes;
    memset(inflated, 0, bytes);
    int z = uncompress(inflated, &zgot, encoded, (uLong)stored);
    CHECK(z == Z_OK && zgot == bytes, "%s: zlib uncompress %d, %lu of %zu bytes", what, z,
          (unsigned long)zgot, bytes);
    CHECK(z != Z_OK || memcmp(inflated, shuffled, bytes) == 0, "%s: zlib inflates to other bytes",
          what);
    if (bytes_out) *bytes_out = stored;
    return 1;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* Taken or declined as expected, and when taken within 1% + 64 bytes of
 * libdeflate's stream of the whole chunk (the same front planes, so only
 * the constant planes' encoding differs). */
static void expect(const char *what, const int64_t *v, size_t values, int taken) {
    size_t bytes = 0;
    int got = check_values(what, v, values, &bytes);
    CHECK(got == taken, "%s: %s, expected %s", what, got ? "taken" : "declined",
          taken ? "taken" : "declined");
    if (!got) return;
    size_t theirs = libdeflate_zlib_compress(sampler, shuffled, values * 8, inflated, capacity);
    CHECK(bytes <= theirs + theirs / 100 + 64, "%s: %zu bytes, libdeflate %zu", what, bytes,
          theirs);
}

static void synthetic(void) {
    int64_t *v = malloc(CHUNK_BYTES);
    if (!v) exit(1);
    char what[96];
    /* constant chunks, and sizes around the edges of runs of 258 */
    const size_t sizes[] = {CHUNK_VALUES, 1024, 1025, 1027, 1283, 8191, 40000};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    const int64_t constants[] = {0, -1, 143, 144, 255, INT64_MAX};
    for (size_t s = 0; s < nsizes; s++)
        for (size_t c = 0; c < 6; c++) {
            for (size_t i = 0; i < sizes[s]; i++) v[i] = constants[c];
            snprintf(what, sizeof what, "constant %lld x %zu", (long long)constants[c], sizes[s]);
            expect(what, v, sizes[s], 1);
        }
    /* durations-like: small skewed values, high planes zero */
    for (size_t s = 0; s < nsizes; s++) {
        for (size_t i = 0; i < sizes[s]; i++) {
            uint64_t r = next_random();
            v[i] = (r & 7) < 5 ? 10 * (int64_t)(1 + (r >> 3) % 3) : (int64_t)((r >> 8) % 70000);
        }
        snprintf(what, sizeof what, "skewed x %zu", sizes[s]);
        expect(what, v, sizes[s], 1);
    }
    /* counters (call ids): libdeflate's matches in the front planes */
    for (size_t i = 0; i < CHUNK_VALUES; i++) v[i] = 1000000 + 3 * (int64_t)i;
    expect("counter", v, CHUNK_VALUES, 1);
    /* random low bytes: stored blocks at the front, and more than one
     * constant run behind (planes 3, 4: 0x00; plane 5: 0x07; 6, 7: 0x00) */
    for (size_t i = 0; i < CHUNK_VALUES; i++)
        v[i] = (int64_t)(next_random() & 0xFFFFFF) | ((int64_t)7 << 40);
    expect("random low bytes, three constant runs", v, CHUNK_VALUES, 1);
    /* a varying top plane: libdeflate's alone */
    for (size_t i = 0; i < CHUNK_VALUES; i++) v[i] = (int64_t)next_random();
    expect("random", v, CHUNK_VALUES, 0);
    for (size_t i = 0; i < CHUNK_VALUES; i++) v[i] = i % 5 ? -1 : (int64_t)i;
    expect("-1 and ids (parents)", v, CHUNK_VALUES, 0);
    /* too small a plane */
    expect("small", v, 100, 0);
    /* the walker on libdeflate's raw streams: the final block's end is in
     * the last byte (only padding after it); damaged streams (bytes
     * flipped, cut short) end the walk without a read past the buffer
     * (ASan builds) */
    for (int level = 1; level <= 12; level += 11) {
        struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
        if (!c) exit(1);
        spi_byte_shuffle(v, shuffled, 4 * 8192, 8);
        size_t made = libdeflate_deflate_compress(c, shuffled, 4 * 8192, encoded, capacity);
        size_t final_bit = 0, end_bit = 0;
        CHECK(made && spi_deflate_walk(encoded, made, &final_bit, &end_bit) &&
                  end_bit <= 8 * made && 8 * made - end_bit < 8 && final_bit < end_bit,
              "level %d: walk of %zu bytes: final at %zu, end at %zu", level, made, final_bit,
              end_bit);
        unsigned char *damaged = malloc(made);
        if (!damaged) exit(1);
        for (int t = 0; t < 300; t++) {
            memcpy(damaged, encoded, made);
            for (int k = 0; k < 1 + t % 4; k++) damaged[next_random() % made] ^= (unsigned char)(1 + next_random() % 255);
            spi_deflate_walk(damaged, t % 3 ? made : made / 2, &final_bit, &end_bit);
        }
        free(damaged);
        libdeflate_free_compressor(c);
    }
    /* output too small: declined, nothing written past the capacity */
    for (size_t i = 0; i < CHUNK_VALUES; i++) v[i] = (int64_t)(next_random() & 0xFFFF);
    spi_byte_shuffle(v, shuffled, CHUNK_BYTES, 8);
    size_t stored = 0;
    encoded[5000] = 0xA5;
    CHECK(spi_deflate_planes(sampler, shuffled, CHUNK_BYTES, 8, encoded, 5000, &stored) ==
                  SPI_PLANES_DECLINED && stored == 0, "random into 5000 bytes: not declined");
    CHECK(encoded[5000] == 0xA5, "random into 5000 bytes: wrote past the capacity");
    free(v);
}

static double cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Every chunk of a column file; with `measure`, libdeflate alone (at the
 * pool's level, on the whole chunk) beside. */
static void column(const char *path, int measure) {
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "%s: cannot open", path);
    if (!f) return;
    int64_t *v = malloc(CHUNK_BYTES);
    struct libdeflate_compressor *c = libdeflate_alloc_compressor(SPI_POOL_DEFLATE_LEVEL);
    if (!v || !c) exit(1);
    size_t values, chunks = 0, taken = 0, values_all = 0;
    size_t lib_bytes = 0, mixed_bytes = 0, taken_lib_bytes = 0, taken_bytes = 0;
    double lib_ns = 0, planes_ns = 0, mixed_ns = 0;
    while ((values = fread(v, 8, CHUNK_VALUES, f)) > 0) {
        char what[300];
        snprintf(what, sizeof what, "%s chunk %zu", path, chunks);
        size_t stored = 0;
        int ok = check_values(what, v, values, &stored);
        chunks++;
        values_all += values;
        taken += ok;
        if (!measure) continue;
        size_t bytes = values * 8;
        /* the two encoders on the same shuffled chunk, 5 times each */
        double t0 = cpu_ns();
        size_t lib = 0;
        for (int k = 0; k < 5; k++) lib = libdeflate_zlib_compress(c, shuffled, bytes, encoded, capacity);
        double t1 = cpu_ns();
        size_t mine = 0;
        int took = 0;
        for (int k = 0; k < 5; k++)
            took = spi_deflate_planes(sampler, shuffled, bytes, 8, encoded, capacity, &mine) ==
                   SPI_PLANES_TAKEN;
        double t2 = cpu_ns();
        lib_ns += (t1 - t0) / 5;
        planes_ns += (t2 - t1) / 5;
        lib_bytes += lib;
        if (took) {
            taken_bytes += mine;
            taken_lib_bytes += lib;
            mixed_bytes += mine;
            mixed_ns += (t2 - t1) / 5;
        } else {
            mixed_bytes += lib;
            mixed_ns += (t2 - t1) / 5 + (t1 - t0) / 5;
        }
    }
    if (measure)
        printf("%-48s %4zu chunks (%zu taken) | libdeflate %9zu B %5.2f ns/v | planes+fallback "
               "%9zu B %5.2f ns/v (%+.2f%% bytes) | taken only: %zu vs %zu B\n",
               path, chunks, taken, lib_bytes, lib_ns / (double)values_all, mixed_bytes,
               mixed_ns / (double)values_all,
               lib_bytes ? 100.0 * ((double)mixed_bytes - (double)lib_bytes) / (double)lib_bytes : 0.0,
               taken_bytes, taken_lib_bytes);
    else
        printf("%s: %zu chunks, %zu taken by the plane encoder\n", path, chunks, taken);
    libdeflate_free_compressor(c);
    free(v);
    fclose(f);
}

int main(int argc, char **argv) {
    capacity = libdeflate_zlib_compress_bound(NULL, CHUNK_BYTES);
    shuffled = malloc(CHUNK_BYTES);
    encoded = malloc(capacity);
    inflated = malloc(CHUNK_BYTES);
    decompressor = libdeflate_alloc_decompressor();
    sampler = libdeflate_alloc_compressor(SPI_POOL_DEFLATE_LEVEL);
    if (!shuffled || !encoded || !inflated || !decompressor || !sampler) return 1;
    int measure = argc > 1 && strcmp(argv[1], "--measure") == 0;
    if (argc == 1) synthetic();
    for (int i = 1 + measure; i < argc; i++) column(argv[i], measure);
    libdeflate_free_decompressor(decompressor);
    libdeflate_free_compressor(sampler);
    free(shuffled);
    free(encoded);
    free(inflated);
    if (failures) {
        fprintf(stderr, "deflate_planes_test: %d failures\n", failures);
        return 1;
    }
    printf("deflate_planes_test: ok\n");
    return 0;
}
