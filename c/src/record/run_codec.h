/*
 * run_codec.h - the sorted runs of a streamed finalize (run_stream.c) in a
 * compact byte form: each call as a few bytes of differences from the call
 * before it, instead of its 40-byte record.
 *
 * Why: a bounded trace's finalize sorts its calls into runs and merges
 * them; written as 40-byte records, the runs of 20M calls were 800 MB of
 * writes into the page cache and 800 MB of reads back, which cost more CPU
 * than everything else finalize does (issue 31: 2.2 of 5.3 s, nearly all
 * of it the kernel's copy into new page-cache pages). A run is sorted by
 * (region, start, id), so consecutive calls differ by small amounts: the
 * start by the gap between two calls, the id usually by one, the parent
 * usually not at all or by a few, the region and thread usually not at
 * all. Stored as differences, a call of a loop takes 3 to 6 bytes (3 for
 * bench/finalize's 20M calls of one region), and the runs of such a trace
 * fit in the event memory finalize has already given back.
 *
 * One call: a flags byte, then only what the flags say is needed:
 *   region    varint, when it differs from the previous call's (F_REGION)
 *   thread    varint, when it differs (F_THREAD)
 *   call id   zigzag varint of (id - previous id), unless it is previous + 1
 *             (F_ID_NEXT)
 *   parent    nothing for -1 (F_ROOT) or for the previous call's parent
 *             (F_SAME_PARENT); else zigzag varint of (id - parent)
 *   start     zigzag varint of (start - previous start), always
 *   duration  zigzag varint of (duration - previous duration), always
 * Differences are taken modulo 2^64, so every int64 value round-trips
 * exactly (tests/unit/run_codec_test.c), and a call never takes more than
 * SPI_RUN_CALL_MAX_BYTES. The previous call of a run's first call is all
 * zeros (spi_run_codec_reset).
 *
 * Pure functions over caller memory; thread-safe on distinct states.
 * Internal to the record module.
 */
#ifndef SPI_RUN_CODEC_H
#define SPI_RUN_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* One call as the streamed finalize sorts and serves it. */
typedef struct spi_run_call {
    int64_t start;
    int64_t duration;
    int64_t call_id;
    int64_t parent_id;
    uint32_t region;
    uint32_t thread;
} spi_run_call;

/* The call before the next one of a run (encoder and decoder keep one). */
typedef struct spi_run_codec {
    spi_run_call previous;
} spi_run_codec;

/* The flags byte. */
#define SPI_RUN_F_REGION 0x01u
#define SPI_RUN_F_THREAD 0x02u
#define SPI_RUN_F_ID_NEXT 0x04u
#define SPI_RUN_F_ROOT 0x08u
#define SPI_RUN_F_SAME_PARENT 0x10u
#define SPI_RUN_F_KNOWN 0x1fu

/* The most bytes one encoded call takes: flags, two 32-bit varints (5
 * bytes each), four 64-bit varints (10 bytes each). */
#define SPI_RUN_CALL_MAX_BYTES 51

static inline void spi_run_codec_reset(spi_run_codec *codec) {
    codec->previous = (spi_run_call){.parent_id = -1};
}

static inline uint64_t spi_run_zigzag(uint64_t difference) {
    return (difference << 1) ^ (0 - (difference >> 63));
}

static inline uint64_t spi_run_unzigzag(uint64_t value) {
    return (value >> 1) ^ (0 - (value & 1));
}

static inline uint8_t *spi_run_put_varint(uint8_t *out, uint64_t value) {
    while (value >= 0x80) {
        *out++ = (uint8_t)(value | 0x80);
        value >>= 7;
    }
    *out++ = (uint8_t)value;
    return out;
}

/* NULL when the varint runs past `max_bytes` (10 for 64 bits, 5 for 32:
 * so no call is read past SPI_RUN_CALL_MAX_BYTES, whatever the bytes). */
static inline const uint8_t *spi_run_get_varint(const uint8_t *in, uint64_t *value,
                                                unsigned max_bytes) {
    if (!(in[0] & 0x80)) { /* most differences of a sorted run: one byte */
        *value = in[0];
        return in + 1;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 7 * max_bytes; shift += 7) {
        uint8_t byte = *in++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *value = v;
            return in;
        }
    }
    return NULL;
}

/* Append `call` at `out` (room for SPI_RUN_CALL_MAX_BYTES); returns the
 * end of what was written. */
static inline uint8_t *spi_run_call_encode(spi_run_codec *codec, const spi_run_call *call,
                                           uint8_t *out) {
    const spi_run_call *prev = &codec->previous;
    uint8_t *flags = out++;
    unsigned f = 0;
    if (call->region != prev->region) {
        f |= SPI_RUN_F_REGION;
        out = spi_run_put_varint(out, call->region);
    }
    if (call->thread != prev->thread) {
        f |= SPI_RUN_F_THREAD;
        out = spi_run_put_varint(out, call->thread);
    }
    uint64_t id = (uint64_t)call->call_id;
    if (id == (uint64_t)prev->call_id + 1) f |= SPI_RUN_F_ID_NEXT;
    else out = spi_run_put_varint(out, spi_run_zigzag(id - (uint64_t)prev->call_id));
    if (call->parent_id == -1) f |= SPI_RUN_F_ROOT;
    else if (call->parent_id == prev->parent_id) f |= SPI_RUN_F_SAME_PARENT;
    else out = spi_run_put_varint(out, spi_run_zigzag(id - (uint64_t)call->parent_id));
    out = spi_run_put_varint(out, spi_run_zigzag((uint64_t)call->start - (uint64_t)prev->start));
    out = spi_run_put_varint(out,
                             spi_run_zigzag((uint64_t)call->duration - (uint64_t)prev->duration));
    *flags = (uint8_t)f;
    codec->previous = *call;
    return out;
}

/* The call encoded at `in` (SPI_RUN_CALL_MAX_BYTES readable there, or the
 * rest of what the encoder wrote), decoded in place into
 * codec->previous, which then is that call (no copy: the merge decodes
 * every call of a trace). Returns the end of its bytes, or NULL when they
 * are not an encoded call (codec->previous is then undefined). */
static inline const uint8_t *spi_run_call_decode(spi_run_codec *codec, const uint8_t *in) {
    spi_run_call *call = &codec->previous;
    unsigned f = *in++;
    uint64_t v;
    if (f & ~SPI_RUN_F_KNOWN) return NULL;
    if (f & SPI_RUN_F_REGION) {
        if (!(in = spi_run_get_varint(in, &v, 5)) || v > UINT32_MAX) return NULL;
        call->region = (uint32_t)v;
    }
    if (f & SPI_RUN_F_THREAD) {
        if (!(in = spi_run_get_varint(in, &v, 5)) || v > UINT32_MAX) return NULL;
        call->thread = (uint32_t)v;
    }
    uint64_t id = (uint64_t)call->call_id + 1;
    if (!(f & SPI_RUN_F_ID_NEXT)) {
        if (!(in = spi_run_get_varint(in, &v, 10))) return NULL;
        id = (uint64_t)call->call_id + spi_run_unzigzag(v);
    }
    call->call_id = (int64_t)id;
    if (f & SPI_RUN_F_ROOT) {
        call->parent_id = -1;
    } else if (!(f & SPI_RUN_F_SAME_PARENT)) {
        if (!(in = spi_run_get_varint(in, &v, 10))) return NULL;
        call->parent_id = (int64_t)(id - spi_run_unzigzag(v));
    }
    if (!(in = spi_run_get_varint(in, &v, 10))) return NULL;
    call->start = (int64_t)((uint64_t)call->start + spi_run_unzigzag(v));
    if (!(in = spi_run_get_varint(in, &v, 10))) return NULL;
    call->duration = (int64_t)((uint64_t)call->duration + spi_run_unzigzag(v));
    return in;
}

#endif /* SPI_RUN_CODEC_H */
