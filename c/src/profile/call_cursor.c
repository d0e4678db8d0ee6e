/*
 * call_cursor.c - a row's calls in slices from arrays or from a store
 * (call_cursor.h).
 */
#include "profile/call_cursor.h"

#include <string.h>

#include "util/alloc.h"

enum { BUF_STARTS, BUF_DURATIONS, BUF_ENDS, BUF_CALL_IDS, BUF_PARENT_IDS, BUF_THREAD_IDS,
       BUF_COUNT };

bool spi_profile_has_calls(const spi_profile *profile) {
    return !profile->summary_only && !profile->aggregate && !profile->source;
}

int spi_call_cursor_open(spi_call_cursor *c, const spi_profile *profile, size_t row,
                         unsigned columns, size_t slice_max) {
    *c = (spi_call_cursor){.profile = profile, .row = row, .columns = columns,
                           .slice_max = slice_max ? slice_max : SPI_CURSOR_DEFAULT_SLICE};
    if (!profile->store) return SP_OK;
    /* Ends are computed from starts and durations, so both are read. */
    if (columns & SPI_CURSOR_ENDS) c->columns |= SPI_CURSOR_STARTS | SPI_CURSOR_DURATIONS;
    /* Starts stored as differences need every start to carry the sum on,
     * unless nothing but the durations is wanted and they are stored as
     * such (call_cursor.h). */
    bool durations_alone = c->columns == SPI_CURSOR_DURATIONS && profile->store->durations_alone;
    if (!durations_alone) c->columns |= SPI_CURSOR_STARTS;
    unsigned present = profile->store->columns;
    bool want[BUF_COUNT] = {
        [BUF_STARTS] = !durations_alone,
        [BUF_DURATIONS] = (c->columns & SPI_CURSOR_DURATIONS) != 0,
        [BUF_ENDS] = (c->columns & SPI_CURSOR_ENDS) != 0,
        [BUF_CALL_IDS] = (c->columns & SPI_CURSOR_IDS) && (present & SPI_EV_BIT(SPI_EV_CALL_IDS)),
        [BUF_PARENT_IDS] =
            (c->columns & SPI_CURSOR_IDS) && (present & SPI_EV_BIT(SPI_EV_PARENT_IDS)),
        [BUF_THREAD_IDS] =
            (c->columns & SPI_CURSOR_IDS) && (present & SPI_EV_BIT(SPI_EV_THREAD_IDS)),
    };
    uint64_t count = profile->rows[row].count;
    if (c->slice_max > count) c->slice_max = count ? (size_t)count : 1;
    for (int i = 0; i < BUF_COUNT; i++)
        if (want[i] && !(c->buffer[i] = spi_malloc(c->slice_max * sizeof(int64_t)))) {
            spi_call_cursor_close(c);
            return SP_ERR_OUT_OF_MEMORY;
        }
    return SP_OK;
}

/* A slice of the row's own arrays. */
static void slice_of_arrays(spi_call_cursor *c, const spi_row *r, size_t n,
                            spi_call_slice *slice) {
    uint64_t f = c->next;
    *slice = (spi_call_slice){.count = n, .starts = r->starts + f, .durations = r->durations + f};
    if (r->ends) slice->ends = r->ends + f;
    if (r->call_ids) slice->call_ids = r->call_ids + f;
    if (r->parent_ids) slice->parent_ids = r->parent_ids + f;
    if (r->thread_ids) slice->thread_ids = r->thread_ids + f;
    if (r->gpu_durations) slice->gpu_durations = r->gpu_durations + f;
}

/* A slice read from the store into the cursor's buffers. */
static int slice_of_store(spi_call_cursor *c, size_t n, spi_call_slice *slice, spi_error *err) {
    const spi_profile *p = c->profile;
    int64_t **b = c->buffer;
    int status = p->store->read(p->store, c->row, c->next, n, c->previous_start, b[BUF_STARTS],
                                b[BUF_DURATIONS], b[BUF_CALL_IDS], b[BUF_PARENT_IDS],
                                b[BUF_THREAD_IDS], err);
    if (status != SP_OK) return status;
    if (b[BUF_ENDS])
        for (size_t k = 0; k < n; k++)
            if (__builtin_add_overflow(b[BUF_STARTS][k], b[BUF_DURATIONS][k], &b[BUF_ENDS][k]))
                return spi_error_set(err, SP_ERR_CORRUPT,
                                     "%s: region %s on rank %u has timestamps out of range. "
                                     "The file is damaged.",
                                     p->store->path, p->names[p->rows[c->row].region],
                                     p->rows[c->row].rank);
    *slice = (spi_call_slice){.count = n, .starts = b[BUF_STARTS], .durations = b[BUF_DURATIONS],
                              .ends = b[BUF_ENDS], .call_ids = b[BUF_CALL_IDS],
                              .parent_ids = b[BUF_PARENT_IDS], .thread_ids = b[BUF_THREAD_IDS]};
    return SP_OK;
}

int spi_call_cursor_next(spi_call_cursor *c, spi_call_slice *slice, spi_error *err) {
    *slice = (spi_call_slice){0};
    if (c->error.status != SP_OK) {
        if (err) *err = c->error;
        return c->error.status;
    }
    const spi_row *r = &c->profile->rows[c->row];
    uint64_t left = c->next < r->count ? r->count - c->next : 0;
    size_t n = left < c->slice_max ? (size_t)left : c->slice_max;
    if (n == 0) return SP_OK;
    if (!c->profile->store) {
        slice_of_arrays(c, r, n, slice);
    } else {
        int status = slice_of_store(c, n, slice, &c->error);
        if (status != SP_OK) {
            *slice = (spi_call_slice){0};
            if (err) *err = c->error;
            return status;
        }
        if (slice->starts) c->previous_start = slice->starts[n - 1];
    }
    c->next += n;
    return SP_OK;
}

void spi_call_cursor_close(spi_call_cursor *c) {
    for (int i = 0; i < BUF_COUNT; i++) spi_free(c->buffer[i]);
    memset(c->buffer, 0, sizeof c->buffer);
}
