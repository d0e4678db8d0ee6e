/*
 * call_cursor.h - one row's calls in slices, in stored order, whether the
 * profile holds them in arrays (a full read, a recorded run) or keeps them
 * in the file (a read with SPI_READ_CALLS_ON_DEMAND: profile->store).
 *
 * Everything that must stay bounded in memory on a large file reads calls
 * through a cursor: the reader's statistics pass, the pooled durations of
 * analysis/stats.c, and the public sp_calls_* API the tools use. Over
 * arrays a slice points into them (no copy); over a store it is read into
 * the cursor's own buffers, `slice_max` calls of each wanted column.
 */
#ifndef SPI_CALL_CURSOR_H
#define SPI_CALL_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/error.h"

/* Columns a cursor delivers (a store reads only these). */
#define SPI_CURSOR_STARTS 1u
#define SPI_CURSOR_DURATIONS 2u
#define SPI_CURSOR_ENDS 4u      /* start + duration (checked for overflow) */
#define SPI_CURSOR_IDS 8u       /* call_ids, parent_ids, thread_ids when present */
#define SPI_CURSOR_GPU 16u      /* gpu_durations when present (arrays only: a
                                   store never holds a file with GPU times) */
#define SPI_CURSOR_ALL 31u
/* SPI_CURSOR_DURATIONS alone (no other column) delivers the durations with
 * starts NULL when the store holds them as such (spi_call_store's
 * durations_alone): a pass that needs nothing else decodes one column.
 * Otherwise, and over arrays, starts come too, as always. */

/* Calls per slice when the caller does not say. */
#define SPI_CURSOR_DEFAULT_SLICE 65536u

typedef struct spi_call_cursor {
    const spi_profile *profile;
    size_t row;
    unsigned columns;
    size_t slice_max;
    uint64_t next;          /* first call of the next slice */
    int64_t previous_start; /* absolute start of call next - 1 */
    spi_error error;        /* sticky: the first failed read */
    /* store only: one buffer per column, slice_max long */
    int64_t *buffer[6];
} spi_call_cursor;

/* Open a cursor over row `row` (< profile->row_count) delivering `columns`
 * (SPI_CURSOR_*), at most slice_max calls per slice (0 = the default).
 * SP_OK or SP_ERR_OUT_OF_MEMORY (*c is then safe to close). */
int spi_call_cursor_open(spi_call_cursor *c, const spi_profile *profile, size_t row,
                         unsigned columns, size_t slice_max);

/* The next slice (count 0 at the end). Pointers stay valid until the next
 * call. SP_OK, or the store's error (err filled), returned again on every
 * later call; SP_ERR_CORRUPT when an end overflows int64. */
int spi_call_cursor_next(spi_call_cursor *c, spi_call_slice *slice, spi_error *err);

void spi_call_cursor_close(spi_call_cursor *c);

/* Whether the profile's calls can be read at all (not summary-only, not
 * aggregate, arrays or a store present). */
bool spi_profile_has_calls(const spi_profile *profile);

#endif /* SPI_CALL_CURSOR_H */
