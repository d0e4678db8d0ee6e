/*
 * reader_calls.h - the event columns of an open HDF5 profile kept in the
 * file and read back on demand (SPI_READ_CALLS_ON_DEMAND): the reader's
 * spi_call_store (profile.h), read through profile/call_cursor.h.
 * Internal to the format module.
 */
#ifndef SPI_READER_CALLS_H
#define SPI_READER_CALLS_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>

#include "format/reader_h5_util.h"
#include "profile/profile.h"

/* Take over `file` (an open, validated schema 2/3 columnar file) and give
 * `out` a store over its event columns. `offsets` are the rows' first
 * calls in /events (the index, validated), `deltas` whether starts are
 * stored as start_deltas (schema 3) or start_times (schema 2). Every
 * column is checked here (element type, length against the index), so a
 * later read fails only on damage HDF5 finds in the data itself. On
 * success the store owns the file (closed by its release); on error the
 * caller still owns it. */
int spi_h5_call_store_open(const spi_h5r *h, hid_t events, const uint64_t *offsets,
                           uint64_t max_end, bool deltas, spi_profile *out);

#endif /* SPI_READER_CALLS_H */
