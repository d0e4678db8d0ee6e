/*
 * deflate_planes.c - a chunk's zlib stream with its constant byte planes
 * written directly (see deflate_planes.h).
 *
 * Why: libdeflate at level 2 spends ~0.9 ms on a shuffled chunk of 65,536
 * start deltas or durations, and two thirds of it (~0.59 ms, measured on
 * the chunks of a 20M-call trace) on the six high byte planes, which are
 * zero and compress to ~400 bytes: its match finder hashes every position
 * of a run it already matched. The varying low planes are where its
 * matches pay, so they stay libdeflate's. (Tried first and rejected: the
 * varying planes too written here, as Huffman-only blocks with runs or as
 * stored blocks chosen from a histogram, with no match search: 3-4x
 * faster than libdeflate, but timings repeat in patterns that only
 * matches catch, and start deltas came out 44-75% larger, durations
 * 8-28%, on the bench's traces.)
 *
 * The stream: the zlib header, libdeflate's raw deflate of the front
 * planes (up to the last plane that varies) with its final flag cleared,
 * then one dynamic-Huffman block per run of constant planes of one byte:
 * a literal and matches of 258 bytes at distance 1, two bits each (the
 * match and distance codes are one bit; a fixed code would take 13 bits a
 * match, six times the bytes), the last block final, then the Adler-32
 * of the whole chunk (libdeflate's). Where libdeflate's final block ends,
 * to the bit, and where its final flag is, deflate_walk.c finds by walking
 * its blocks; the new blocks start right after its end-of-block code, as
 * if one encoder had written everything. Matches never reach back into
 * libdeflate's part, so its bytes need no knowledge of ours.
 *
 * Huffman codes are built from counts with the two-queue method and
 * limited in length by halving the counts and building again (rare here:
 * a constant run has four symbols); every code is complete, which strict
 * inflaters (zlib's, libdeflate's) require. The distance code is two
 * one-bit codes, only the first used (distance 1).
 */
#include "format/deflate_planes.h"

#include <libdeflate.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/deflate_walk.h"

#define MAX_BITS 15             /* deflate's longest code */
#define MAX_CLEN_BITS 7         /* the code-length code's */
#define LITLEN_SYMS 286         /* literals, end of block, length codes 257..285 */
#define EOB 256
#define CLEN_SYMS 19
#define MIN_RUN 3               /* deflate's shortest match */
#define MAX_RUN 258
#define SUFFIX_ROOM 4096        /* the constant blocks and the trailer take far less */

/* ---- bits out, least significant first ------------------------------------------ */

typedef struct bit_writer {
    unsigned char *out, *end;
    uint64_t bits;
    unsigned count;             /* bits held, at most 63 between flushes */
    bool overflow;
} bit_writer;

static inline void put_bits(bit_writer *w, uint64_t value, unsigned n) {
    w->bits |= value << w->count;
    w->count += n;
}

/* Whole bytes out; at most 7 bits stay. The fast path stores 8 bytes at
 * once (little-endian order made by hand, so the store is right on any
 * host) and advances by the whole bytes held. */
static inline void flush_bits(bit_writer *w) {
    unsigned whole = w->count >> 3;
    if (w->end - w->out >= 8) {
        unsigned char b[8];
        for (int i = 0; i < 8; i++) b[i] = (unsigned char)(w->bits >> (8 * i));
        memcpy(w->out, b, 8);
        w->out += whole;
    } else {
        for (unsigned i = 0; i < whole; i++) {
            if (w->out == w->end) {
                w->overflow = true;
                break;
            }
            *w->out++ = (unsigned char)(w->bits >> (8 * i));
        }
    }
    w->bits = whole == 8 ? 0 : w->bits >> (8 * whole);
    w->count &= 7;
}

/* To the next byte boundary (stored blocks and the trailer start there). */
static void align_bits(bit_writer *w) {
    flush_bits(w);
    if (w->count) {
        w->count = 8;
        flush_bits(w);
    }
}

static void put_bytes(bit_writer *w, const unsigned char *bytes, size_t n) {
    if ((size_t)(w->end - w->out) < n) {
        w->overflow = true;
        return;
    }
    memcpy(w->out, bytes, n);
    w->out += n;
}

/* ---- Huffman codes ------------------------------------------------------------------ */

typedef struct huffman {
    uint8_t len[LITLEN_SYMS];
    uint16_t code[LITLEN_SYMS]; /* bit-reversed: ready for put_bits */
} huffman;

typedef struct leaf {
    uint32_t freq;
    uint16_t sym;
} leaf;

static int leaf_order(const void *a, const void *b) {
    const leaf *x = a, *y = b;
    if (x->freq != y->freq) return x->freq < y->freq ? -1 : 1;
    return x->sym < y->sym ? -1 : x->sym > y->sym;
}

/* Code lengths of a Huffman code for `freq` (n symbols), none longer than
 * `limit`. At least two symbols get a code, so the code is complete. */
static void huffman_lengths(const uint32_t *freq_in, unsigned n, unsigned limit, uint8_t *len) {
    uint32_t freq[LITLEN_SYMS];
    leaf leaves[LITLEN_SYMS];
    uint32_t weight[2 * LITLEN_SYMS];
    uint16_t parent[2 * LITLEN_SYMS];
    uint8_t depth[2 * LITLEN_SYMS];
    memcpy(freq, freq_in, n * sizeof *freq);
    unsigned used = 0;
    for (unsigned s = 0; s < n; s++) used += freq[s] != 0;
    /* A lone symbol still needs a partner: a one-symbol code is incomplete. */
    for (unsigned s = 0; used < 2 && s < n; s++)
        if (!freq[s]) freq[s] = 1, used++;
    for (;;) {
        unsigned m = 0;
        for (unsigned s = 0; s < n; s++)
            if (freq[s]) leaves[m++] = (leaf){freq[s], (uint16_t)s};
        if (m < 2) { /* n < 2: no code to make (never asked) */
            memset(len, 0, n);
            return;
        }
        qsort(leaves, m, sizeof *leaves, leaf_order);
        for (unsigned i = 0; i < m; i++) weight[i] = leaves[i].freq;
        /* Two queues: the sorted leaves and the internal nodes, which are
         * made in order of weight. */
        unsigned next_leaf = 0, head = m, tail = m;
        for (unsigned k = 0; k + 1 < m; k++) {
            unsigned pick[2];
            for (int j = 0; j < 2; j++)
                pick[j] = next_leaf < m && (head == tail || weight[next_leaf] <= weight[head])
                              ? next_leaf++
                              : head++;
            weight[tail] = weight[pick[0]] + weight[pick[1]];
            parent[pick[0]] = parent[pick[1]] = (uint16_t)tail;
            tail++;
        }
        unsigned root = tail - 1, longest = 0;
        depth[root] = 0;
        for (unsigned x = root; x-- > 0;) {
            depth[x] = (uint8_t)(depth[parent[x]] + 1);
            if (x < m && depth[x] > longest) longest = depth[x];
        }
        if (longest <= limit) {
            memset(len, 0, n);
            for (unsigned i = 0; i < m; i++) len[leaves[i].sym] = depth[i];
            return;
        }
        for (unsigned s = 0; s < n; s++)
            if (freq[s]) freq[s] = (freq[s] >> 1) | 1;
    }
}

/* Canonical codes from lengths (RFC 1951 3.2.2), bit-reversed. */
static void huffman_codes(huffman *h, unsigned n) {
    unsigned count[MAX_BITS + 1] = {0}, next[MAX_BITS + 2];
    for (unsigned s = 0; s < n; s++) count[h->len[s]]++;
    count[0] = 0;
    next[1] = 0;
    for (unsigned b = 1; b <= MAX_BITS; b++) next[b + 1] = (next[b] + count[b]) << 1;
    for (unsigned s = 0; s < n; s++) {
        unsigned l = h->len[s];
        if (!l) continue;
        unsigned code = next[l]++, reversed = 0;
        for (unsigned b = 0; b < l; b++) reversed |= ((code >> b) & 1u) << (l - 1 - b);
        h->code[s] = (uint16_t)reversed;
    }
}

/* ---- lengths of matches ------------------------------------------------------------ */

typedef struct length_code {
    uint16_t sym;
    uint8_t extra_bits;
    uint8_t extra;
} length_code;

static const uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,
                                         15, 17, 19, 23, 27, 31, 35, 43, 51,  59,
                                         67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

static void length_table(length_code table[MAX_RUN + 1]) {
    unsigned k = 0;
    for (unsigned l = MIN_RUN; l <= MAX_RUN; l++) {
        while (k + 1 < 29 && length_base[k + 1] <= l) k++;
        table[l] = (length_code){(uint16_t)(257 + k), length_extra[k],
                                 (uint8_t)(l - length_base[k])};
    }
}

/* The code-length code's symbols for the literal/length and distance
 * lengths, run-length coded (16: repeat the last 3-6 times, 17: 3-10
 * zeros, 18: 11-138 zeros). */
typedef struct clen_symbol {
    uint8_t sym, extra;
} clen_symbol;

static unsigned clen_symbols(const uint8_t *lens, unsigned n, clen_symbol *out) {
    unsigned k = 0;
    for (unsigned i = 0; i < n;) {
        unsigned l = lens[i], run = 1;
        while (i + run < n && lens[i + run] == l) run++;
        i += run;
        if (l == 0) {
            while (run >= 11) {
                unsigned r = run < 138 ? run : 138;
                out[k++] = (clen_symbol){18, (uint8_t)(r - 11)};
                run -= r;
            }
            if (run >= 3) {
                out[k++] = (clen_symbol){17, (uint8_t)(run - 3)};
                run = 0;
            }
        } else {
            out[k++] = (clen_symbol){(uint8_t)l, 0};
            run--;
            while (run >= 3) {
                unsigned r = run < 6 ? run : 6;
                out[k++] = (clen_symbol){16, (uint8_t)(r - 3)};
                run -= r;
            }
        }
        while (run--) out[k++] = (clen_symbol){(uint8_t)l, 0};
    }
    return k;
}

static const uint8_t clen_order[CLEN_SYMS] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                              11, 4,  12, 3, 13, 2, 14, 1, 15};

typedef struct dynamic_plan {
    huffman lit, clen;
    unsigned nlit, nclen, nsyms;
    clen_symbol syms[LITLEN_SYMS + 2];
} dynamic_plan;

/* The codes of a dynamic block for these counts: the literal/length code,
 * and the code-length code that describes it. */
static void plan_dynamic(dynamic_plan *d, const uint32_t freq[LITLEN_SYMS]) {
    huffman_lengths(freq, LITLEN_SYMS, MAX_BITS, d->lit.len);
    huffman_codes(&d->lit, LITLEN_SYMS);
    d->nlit = LITLEN_SYMS;
    while (d->nlit > 257 && d->lit.len[d->nlit - 1] == 0) d->nlit--;
    uint8_t all[LITLEN_SYMS + 2];
    memcpy(all, d->lit.len, d->nlit);
    all[d->nlit] = all[d->nlit + 1] = 1; /* distance codes 0 and 1, one bit each */
    d->nsyms = clen_symbols(all, d->nlit + 2, d->syms);
    uint32_t cfreq[CLEN_SYMS] = {0};
    for (unsigned i = 0; i < d->nsyms; i++) cfreq[d->syms[i].sym]++;
    huffman_lengths(cfreq, CLEN_SYMS, MAX_CLEN_BITS, d->clen.len);
    huffman_codes(&d->clen, CLEN_SYMS);
    d->nclen = CLEN_SYMS;
    while (d->nclen > 4 && d->clen.len[clen_order[d->nclen - 1]] == 0) d->nclen--;
}

/* A dynamic-Huffman block of `n` bytes of `value`: a literal, then
 * matches at distance 1 (the last one shorter, or one or two literals). */
static void write_constant(bit_writer *w, bool final, unsigned char value, size_t n,
                           const length_code *lengths) {
    size_t full = (n - 1) / MAX_RUN, rest = (n - 1) % MAX_RUN;
    uint32_t freq[LITLEN_SYMS] = {0};
    freq[value] = 1 + (rest < MIN_RUN ? (uint32_t)rest : 0);
    freq[lengths[MAX_RUN].sym] += (uint32_t)full;
    if (rest >= MIN_RUN) freq[lengths[rest].sym]++;
    freq[EOB] = 1;
    dynamic_plan d;
    plan_dynamic(&d, freq);
    put_bits(w, final, 1);
    put_bits(w, 2, 2); /* BTYPE 10 */
    put_bits(w, d.nlit - 257, 5);
    put_bits(w, 1, 5); /* two distance codes */
    put_bits(w, d.nclen - 4, 4);
    flush_bits(w);
    for (unsigned i = 0; i < d.nclen; i++) {
        put_bits(w, d.clen.len[clen_order[i]], 3);
        flush_bits(w);
    }
    static const uint8_t clen_extra[3] = {2, 3, 7};
    for (unsigned i = 0; i < d.nsyms; i++) {
        unsigned s = d.syms[i].sym;
        put_bits(w, d.clen.code[s], d.clen.len[s]);
        if (s >= 16) put_bits(w, d.syms[i].extra, clen_extra[s - 16]);
        flush_bits(w);
    }
    put_bits(w, d.lit.code[value], d.lit.len[value]);
    flush_bits(w);
    /* The full matches, as many between flushes as fit in 56 bits: a
     * match is its length code and the distance code's 0 bit. */
    unsigned match_bits = d.lit.len[lengths[MAX_RUN].sym] + 1u;
    unsigned per_word = 56 / match_bits;
    uint64_t word = 0;
    for (unsigned j = 0; j < per_word; j++)
        word |= (uint64_t)d.lit.code[lengths[MAX_RUN].sym] << (j * match_bits);
    size_t left = full;
    for (; left >= per_word; left -= per_word) {
        put_bits(w, word, per_word * match_bits);
        flush_bits(w);
    }
    for (; left; left--) {
        put_bits(w, d.lit.code[lengths[MAX_RUN].sym], match_bits);
        flush_bits(w);
    }
    if (rest >= MIN_RUN) {
        const length_code *lc = &lengths[rest];
        put_bits(w, d.lit.code[lc->sym], d.lit.len[lc->sym]);
        put_bits(w, lc->extra, lc->extra_bits);
        put_bits(w, 0, 1);
    } else {
        for (size_t j = 0; j < rest; j++) put_bits(w, d.lit.code[value], d.lit.len[value]);
    }
    put_bits(w, d.lit.code[EOB], d.lit.len[EOB]);
    flush_bits(w);
}

static bool plane_constant(const unsigned char *p, size_t n) {
    return memcmp(p, p + 1, n - 1) == 0;
}

int spi_deflate_planes(struct libdeflate_compressor *compressor, const unsigned char *shuffled,
                       size_t bytes, size_t planes, void *out, size_t out_capacity,
                       size_t *out_bytes) {
    *out_bytes = 0;
    if (planes == 0 || planes > 16 || bytes % planes != 0 || bytes / planes < SPI_DEFLATE_PLANES_MIN)
        return SPI_PLANES_DECLINED;
    size_t n = bytes / planes, front = planes;
    while (front > 0 && plane_constant(shuffled + (front - 1) * n, n)) front--;
    if (front == planes) return SPI_PLANES_DECLINED; /* the top plane varies: libdeflate's alone */
    /* Room for libdeflate's worst case of the front, so that a 0 from it
     * is a failure, not a full buffer; the suffix takes far less than
     * SUFFIX_ROOM (two bits per 258 bytes, a few block headers). */
    size_t front_room = front ? libdeflate_deflate_compress_bound(compressor, front * n) : 0;
    if (out_capacity < 2 + front_room + SUFFIX_ROOM) return SPI_PLANES_DECLINED;
    unsigned char *o = out;
    o[0] = 0x78, o[1] = 0x01; /* deflate, 32 KiB window, no dictionary, "fastest" */
    bit_writer w = {.out = o + 2, .end = o + out_capacity - 4};
    if (front) {
        size_t made = libdeflate_deflate_compress(compressor, shuffled, front * n, o + 2,
                                                  front_room);
        if (made == 0) return SPI_PLANES_FAILED;
        size_t final_bit = 0, end_bit = 0;
        if (!spi_deflate_walk(o + 2, made, &final_bit, &end_bit)) return SPI_PLANES_DECLINED;
        o[2 + final_bit / 8] &= (unsigned char)~(1u << (final_bit % 8));
        /* Continue at the end-of-block code's last bit: the padding after
         * it is zeros, overwritten by the next block. */
        w.out = o + 2 + end_bit / 8;
        w.count = (unsigned)(end_bit % 8);
        w.bits = *w.out & ((1u << w.count) - 1);
    }
    length_code lengths[MAX_RUN + 1];
    length_table(lengths);
    for (size_t k = front; k < planes && !w.overflow;) {
        unsigned char value = shuffled[k * n];
        size_t last = k + 1;
        while (last < planes && shuffled[last * n] == value) last++; /* all constant past front */
        write_constant(&w, last == planes, value, (last - k) * n, lengths);
        k = last;
    }
    align_bits(&w);
    if (w.overflow) return SPI_PLANES_DECLINED; /* cannot happen with SUFFIX_ROOM */
    w.end += 4; /* the room kept for the trailer */
    uint32_t adler = libdeflate_adler32(1, shuffled, bytes);
    unsigned char trailer[4] = {(unsigned char)(adler >> 24), (unsigned char)(adler >> 16),
                                (unsigned char)(adler >> 8), (unsigned char)adler};
    put_bytes(&w, trailer, 4);
    if (w.overflow) return SPI_PLANES_DECLINED;
    *out_bytes = (size_t)(w.out - o);
    return SPI_PLANES_TAKEN;
}
