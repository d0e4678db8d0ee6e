/*
 * text.h - names made safe to print in a text table.
 *
 * Region names come from files, and a file can hold any bytes. Printed
 * raw, a control byte or an ANSI escape sequence (ESC [ ...) would move
 * the cursor, recolour or clear the user's terminal, and invalid UTF-8
 * would break the column widths. spi_text_escape copies a name with every
 * such byte written as \xNN; printable ASCII and well-formed UTF-8 other
 * than the C0/C1 controls pass unchanged (a backslash too: the goal is a
 * safe terminal, not a reversible encoding; JSON output has its own).
 */
#ifndef SPI_TEXT_H
#define SPI_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Write the escaped `src` into dst[0..dst_len-1], always NUL-terminated
 * when dst_len > 0 (cut at a whole character or escape). Returns the
 * length the whole escaped text needs, without the NUL (snprintf-like),
 * so a caller can size a buffer with dst_len 0. src NULL is "". */
size_t spi_text_escape(char *dst, size_t dst_len, const char *src);

/* true when src (NUL-terminated) is well-formed UTF-8 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF). NULL is "". */
bool spi_text_is_utf8(const char *src);

/* A new copy of src in which every byte that does not begin a well-formed
 * UTF-8 sequence is replaced by U+FFFD (EF BF BD); well-formed sequences
 * are kept. NULL on allocation failure; free with spi_free. */
char *spi_text_utf8_repair(const char *src);

#endif /* SPI_TEXT_H */
