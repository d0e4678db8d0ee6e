/*
 * deflate_walk.c - a deflate block walker (see deflate_walk.h).
 *
 * An inflater without the output: each symbol is decoded through a table
 * of the next 10 bits (codes up to 10 bits, which are nearly all of them
 * in the streams libdeflate makes of byte planes), longer codes bit by bit
 * from the code's counts (RFC 1951's canonical order). Lengths and
 * distances are only skipped: their extra bits are counted, their values
 * never used, so a stream whose matches reach before its start is not
 * noticed here; libdeflate never writes one, and the whole chunk is
 * inflated by the tests.
 *
 * Every read checks the stream's length, and a code that no table entry
 * or count explains is an error, so a damaged stream ends the walk with
 * false instead of a wrong answer or a read past the buffer.
 */
#include "format/deflate_walk.h"

#include <stdint.h>
#include <string.h>

#define TABLE_BITS 10
#define MAX_BITS 15
#define MAX_SYMS 288

typedef struct bit_reader {
    const unsigned char *in;
    size_t bytes, pos; /* pos: bits consumed */
} bit_reader;

/* The next 32 bits (zeros past the end; the caller checks pos). */
static inline uint32_t peek32(const bit_reader *r) {
    size_t byte = r->pos >> 3;
    uint64_t v = 0;
    if (byte + 8 <= r->bytes) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(&v, r->in + byte, 8); /* one load: this is the walk's inner loop */
#else
        for (int i = 0; i < 8; i++) v |= (uint64_t)r->in[byte + i] << (8 * i);
#endif
    } else {
        for (size_t i = 0; byte + i < r->bytes; i++) v |= (uint64_t)r->in[byte + i] << (8 * i);
    }
    return (uint32_t)(v >> (r->pos & 7));
}

static inline uint32_t take(bit_reader *r, unsigned n) {
    uint32_t v = n ? peek32(r) & ((1u << n) - 1) : 0;
    r->pos += n;
    return v;
}

static inline bool overrun(const bit_reader *r) { return r->pos > 8 * r->bytes; }

typedef struct decoder {
    uint16_t table[1 << TABLE_BITS]; /* symbol << 4 | length; 0: a longer code */
    uint16_t count[MAX_BITS + 1];    /* codes of each length */
    uint16_t symbol[MAX_SYMS];       /* symbols in canonical order */
} decoder;

/* The decoder of a code given by its lengths. False for an over-subscribed
 * code (an incomplete one is allowed: libdeflate may leave a distance code
 * with one symbol; an unused entry then fails to decode). */
static bool decoder_build(decoder *d, const uint8_t *len, unsigned n) {
    memset(d->count, 0, sizeof d->count);
    for (unsigned s = 0; s < n; s++) d->count[len[s]]++;
    d->count[0] = 0;
    int left = 1;
    for (unsigned b = 1; b <= MAX_BITS; b++) {
        left = (left << 1) - d->count[b];
        if (left < 0) return false;
    }
    uint16_t offset[MAX_BITS + 2];
    offset[1] = 0;
    for (unsigned b = 1; b <= MAX_BITS; b++) offset[b + 1] = (uint16_t)(offset[b] + d->count[b]);
    for (unsigned s = 0; s < n; s++)
        if (len[s]) d->symbol[offset[len[s]]++] = (uint16_t)s;
    memset(d->table, 0, sizeof d->table);
    unsigned code = 0, next[MAX_BITS + 2];
    next[1] = 0;
    for (unsigned b = 1; b <= MAX_BITS; b++) next[b + 1] = (next[b] + d->count[b]) << 1;
    for (unsigned s = 0; s < n; s++) {
        unsigned l = len[s];
        if (!l) continue;
        code = next[l]++;
        if (l > TABLE_BITS) continue;
        unsigned reversed = 0;
        for (unsigned b = 0; b < l; b++) reversed |= ((code >> b) & 1u) << (l - 1 - b);
        for (unsigned j = reversed; j < (1u << TABLE_BITS); j += 1u << l)
            d->table[j] = (uint16_t)(s << 4 | l);
    }
    return true;
}

/* One symbol, or -1 for a code the decoder does not have. */
static inline int decode(bit_reader *r, const decoder *d) {
    uint32_t bits = peek32(r);
    unsigned entry = d->table[bits & ((1u << TABLE_BITS) - 1)];
    if (entry) {
        r->pos += entry & 15;
        return (int)(entry >> 4);
    }
    /* A code longer than the table: bit by bit, as RFC 1951 orders them. */
    int code = 0, first = 0, index = 0;
    for (unsigned len = 1; len <= MAX_BITS; len++) {
        code |= (int)((bits >> (len - 1)) & 1u);
        int count = d->count[len];
        if (code - count < first) {
            r->pos += len;
            return d->symbol[index + (code - first)];
        }
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    return -1;
}

static const uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

/* The symbols of one Huffman block, to its end-of-block code. */
static bool walk_symbols(bit_reader *r, const decoder *lit, const decoder *dist) {
    for (;;) {
        int s = decode(r, lit);
        if (s < 0 || overrun(r)) return false;
        if (s < 256) continue;
        if (s == 256) return true;
        if (s > 285) return false;
        take(r, length_extra[s - 257]);
        int d = decode(r, dist);
        if (d < 0 || d > 29) return false;
        take(r, d < 4 ? 0 : (unsigned)(d - 2) / 2);
    }
}

static const uint8_t clen_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

static bool read_dynamic_codes(bit_reader *r, decoder *lit, decoder *dist) {
    unsigned nlit = take(r, 5) + 257, ndist = take(r, 5) + 1, nclen = take(r, 4) + 4;
    if (nlit > 286 || ndist > 30) return false;
    uint8_t clen[19] = {0};
    for (unsigned i = 0; i < nclen; i++) clen[clen_order[i]] = (uint8_t)take(r, 3);
    decoder *cl = lit; /* the literal decoder is built after the lengths: borrow it */
    if (overrun(r) || !decoder_build(cl, clen, 19)) return false;
    uint8_t len[286 + 30];
    for (unsigned i = 0; i < nlit + ndist;) {
        int s = decode(r, cl);
        if (s < 0 || overrun(r)) return false;
        unsigned repeat, value = 0;
        if (s < 16) {
            len[i++] = (uint8_t)s;
            continue;
        }
        if (s == 16) {
            if (i == 0) return false;
            value = len[i - 1];
            repeat = 3 + take(r, 2);
        } else if (s == 17) {
            repeat = 3 + take(r, 3);
        } else {
            repeat = 11 + take(r, 7);
        }
        if (i + repeat > nlit + ndist) return false;
        while (repeat--) len[i++] = (uint8_t)value;
    }
    if (len[256] == 0) return false;
    return decoder_build(lit, len, nlit) && decoder_build(dist, len + nlit, ndist);
}

static void fixed_codes(decoder *lit, decoder *dist) {
    uint8_t len[288];
    memset(len, 8, 144);
    memset(len + 144, 9, 112);
    memset(len + 256, 7, 24);
    memset(len + 280, 8, 8);
    decoder_build(lit, len, 288);
    memset(len, 5, 30);
    decoder_build(dist, len, 30);
}

bool spi_deflate_walk(const unsigned char *in, size_t bytes, size_t *final_bit, size_t *end_bit) {
    bit_reader r = {.in = in, .bytes = bytes, .pos = 0};
    decoder lit, dist;
    for (;;) {
        size_t header = r.pos;
        unsigned final = take(&r, 1), type = take(&r, 2);
        if (overrun(&r)) return false;
        if (type == 0) {
            r.pos = (r.pos + 7) & ~(size_t)7;
            unsigned len = take(&r, 16), nlen = take(&r, 16);
            if (overrun(&r) || (len ^ 0xFFFFu) != nlen) return false;
            r.pos += 8 * (size_t)len;
        } else if (type == 1) {
            fixed_codes(&lit, &dist);
            if (!walk_symbols(&r, &lit, &dist)) return false;
        } else if (type == 2) {
            if (!read_dynamic_codes(&r, &lit, &dist) || !walk_symbols(&r, &lit, &dist))
                return false;
        } else {
            return false;
        }
        if (overrun(&r)) return false;
        if (final) {
            *final_bit = header;
            *end_bit = r.pos;
            return true;
        }
    }
}
