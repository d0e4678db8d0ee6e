/*
 * text.c - escaping of names for text output (text.h).
 *
 * The UTF-8 check follows RFC 3629 (no overlong forms, no surrogates,
 * nothing above U+10FFFF): anything else is a byte, not a character, and
 * is escaped on its own so the next byte is looked at afresh.
 */
#include <stdbool.h>
#include <stdint.h>

#include "util/text.h"

#include "util/alloc.h"

/* Length of the well-formed UTF-8 sequence at s, 0 when it is not one. */
static size_t utf8_length(const unsigned char *s) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t n;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;  /* also stops at the NUL */
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    return n;
}

size_t spi_text_escape(char *dst, size_t dst_len, const char *src) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    size_t need = 0, used = 0;
    int full = 0;  /* the output was cut: stop writing, keep counting */
    while (*s) {
        char piece[16];
        size_t len = utf8_length(s), piece_len;
        /* C0 controls, DEL and the C1 controls (U+0080..U+009F, which
         * include the one-byte CSI) are escaped byte by byte. */
        bool control = len == 1 ? (*s < 0x20 || *s == 0x7F) : (len == 2 && s[0] == 0xC2 && s[1] < 0xA0);
        if (len == 0 || control) {
            size_t bytes = len ? len : 1;
            piece_len = 0;
            for (size_t i = 0; i < bytes; i++) {
                piece[piece_len++] = '\\';
                piece[piece_len++] = 'x';
                piece[piece_len++] = hex[s[i] >> 4];
                piece[piece_len++] = hex[s[i] & 0xF];
            }
            s += bytes;
        } else {
            for (piece_len = 0; piece_len < len; piece_len++) piece[piece_len] = (char)s[piece_len];
            s += len;
        }
        need += piece_len;
        if (!full && dst_len > 0 && used + piece_len < dst_len) {
            for (size_t i = 0; i < piece_len; i++) dst[used++] = piece[i];
        } else {
            full = 1;
        }
    }
    if (dst_len > 0) dst[used] = '\0';
    return need;
}

bool spi_text_is_utf8(const char *src) {
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    for (size_t len; *s; s += len)
        if ((len = utf8_length(s)) == 0) return false;
    return true;
}

char *spi_text_utf8_repair(const char *src) {
    static const unsigned char replacement[3] = {0xEF, 0xBF, 0xBD};
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    size_t bytes = 1;
    for (const unsigned char *p = s; *p;) {
        size_t len = utf8_length(p);
        bytes += len ? len : sizeof replacement;
        p += len ? len : 1;
    }
    unsigned char *out = spi_malloc(bytes), *o = out;
    if (!out) return NULL;
    while (*s) {
        size_t len = utf8_length(s);
        const unsigned char *piece = len ? s : replacement;
        size_t piece_len = len ? len : sizeof replacement;
        for (size_t i = 0; i < piece_len; i++) *o++ = piece[i];
        s += len ? len : 1;
    }
    *o = '\0';
    return (char *)out;
}
