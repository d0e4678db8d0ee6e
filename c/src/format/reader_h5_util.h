/*
 * reader_h5_util.h - defensive HDF5 access for the reader back ends.
 *
 * Every helper checks what it is about to trust (existence, rank, length,
 * type class) and turns a failure into one spi_error naming the file and the
 * object, so the back ends read like the format description instead of
 * like HDF5 bookkeeping.
 */
#ifndef SPI_READER_H5_UTIL_H
#define SPI_READER_H5_UTIL_H

#include <hdf5.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* What every helper needs to report an error. */
typedef struct spi_h5r {
    hid_t file;
    const char *path;
    spi_error *err;
    /* Bytes of the file; bounds how many elements a dataset can honestly
     * claim (0 = unknown, no bound). */
    hsize_t file_bytes;
} spi_h5r;

/* Most elements per file byte a dataset may claim: gzip cannot compress
 * better than about 1032:1, so more than this is a damaged header, and
 * trusting it would mean allocating for data that is not there. */
#define SPI_H5R_MAX_ELEMENTS_PER_BYTE 1100

/* Length not known in advance: accept any length. */
#define SPI_H5R_ANY_LENGTH ((hsize_t)-1)

/* true when `type` is of class `want` with a size HDF5 can convert
 * (integers of 1-8 bytes, floats of 4 or 8 bytes, strings of >= 1 byte):
 * a damaged datatype message must not size a conversion buffer. */
bool spi_h5r_sane_scalar_type(hid_t type, H5T_class_t want);

/* A dataset transfer list whose conversion callback aborts the read on a
 * value that does not fit the memory type (HDF5 would clamp it silently: a
 * stored -1 read as unsigned becomes 0). *out_of_range is set when that
 * happened in the next read made with it. One list shared by the process
 * (a new reference each call): call it under the readers' lock right
 * before the read, and H5Pclose it after. < 0 on failure. */
hid_t spi_h5r_strict_dxpl(bool *out_of_range);

/* 1 if the link `name` (may contain '/') exists below loc, 0 if not; a
 * missing intermediate group counts as "not", never as an error. */
int spi_h5r_exists(hid_t loc, const char *name);

/* Open a 1-D dataset and its length. SP_ERR_NOT_A_PROFILE if absent (the
 * caller checks existence first for optional ones), SP_ERR_CORRUPT if not
 * 1-D. *dset < 0 on error. */
int spi_h5r_open_column(const spi_h5r *h, hid_t loc, const char *name, hid_t *dset,
                        hsize_t *len);

/* Open event column `name` of group `events` after the checks every
 * reader of it makes: one-dimensional, integer elements, at least `needed`
 * values (what the index addresses). SP_OK with *dset open, or an error
 * naming the file and the column. */
int spi_h5r_open_event_column(const spi_h5r *h, hid_t events, const char *name, uint64_t needed,
                              hid_t *dset);

/* Read a whole integer column into a new array of int64 (or uint64 when
 * is_unsigned). expected: required length or SPI_H5R_ANY_LENGTH. *len gets
 * the length read. */
int spi_h5r_read_int_column(const spi_h5r *h, hid_t loc, const char *name, bool is_unsigned,
                            hsize_t expected, void **values, hsize_t *len);

/* Read a whole floating-point column into a new array of double. */
int spi_h5r_read_float_column(const spi_h5r *h, hid_t loc, const char *name, hsize_t expected,
                              double **values, hsize_t *len);

/* Read `count` integers (int64 in memory) starting at `offset` from an open
 * 1-D integer dataset into buf. */
int spi_h5r_read_int_slice(const spi_h5r *h, hid_t dset, const char *name, hsize_t offset,
                           hsize_t count, int64_t *buf);

/* The same read through `stream` (h5_chunk_stream.h; NULL: none) when it
 * takes the range, else through spi_h5r_read_int_slice, so that HDF5 and
 * the checks above decide about every chunk the stream does not take.
 * `ahead_end`: how far the caller goes on reading in order (the stream
 * decodes ahead up to there). */
struct spi_chunk_stream;
int spi_h5r_read_int_slice_streamed(const spi_h5r *h, struct spi_chunk_stream *stream, hid_t dset,
                                    const char *name, hsize_t offset, hsize_t count,
                                    uint64_t ahead_end, int64_t *buf);

/* Read a whole string column (vlen or fixed-length) into a new array of new
 * strings. */
int spi_h5r_read_string_column(const spi_h5r *h, hid_t loc, const char *name,
                               hsize_t expected, char ***values, hsize_t *len);
void spi_h5r_free_strings(char **values, hsize_t len);

/* Scalar attributes. *present is false (and SP_OK) when the attribute does
 * not exist; a wrong type or shape is SP_ERR_CORRUPT. */
int spi_h5r_attr_string(const spi_h5r *h, hid_t obj, const char *name, char **value,
                        bool *present);
int spi_h5r_attr_int(const spi_h5r *h, hid_t obj, const char *name, int64_t *value,
                     bool *present);
/* A 1-D string array attribute (also accepts a scalar string: one item). */
int spi_h5r_attr_strings(const spi_h5r *h, hid_t obj, const char *name, char ***values,
                         size_t *count, bool *present);

/* Strings of an open attribute or dataset of string type `type` with
 * `count` elements, read into new strings. is_attr selects H5Aread. */
int spi_h5r_read_strings(const spi_h5r *h, hid_t obj, bool is_attr, hid_t type, size_t count,
                         const char *name, char **values);

/* Names of the links in group, sorted by name (h5py's member order). */
int spi_h5r_list(const spi_h5r *h, hid_t group, char ***names, hsize_t *count);

/* The innermost HDF5 error description, for messages. */
void spi_h5r_last_error(char *buf, size_t buf_bytes);

/* Parts of the HDF5 back end that live in their own files. */
struct spi_profile;
/* /metadata attributes into profile->metadata (reader_h5_extra.c). */
int spi_h5r_read_metadata(const spi_h5r *h, struct spi_profile *profile);
/* /thread_table into profile->threads; absent = empty (reader_h5_extra.c). */
int spi_h5r_read_threads(const spi_h5r *h, struct spi_profile *profile);
/* rank<N>/perf_events into profile->perf; line-profile groups are
 * tolerated and skipped (reader_h5_extra.c). */
int spi_h5r_read_perf(const spi_h5r *h, struct spi_profile *profile);
/* rank<N>/likwid into profile->likwid and likwid_env; a group whose shapes
 * disagree is SP_ERR_CORRUPT naming the file and the group
 * (reader_h5_likwid.c). */
int spi_h5r_read_likwid(const spi_h5r *h, struct spi_profile *profile);
/* rank<N>/call_paths (aggregate mode, docs/FORMAT.md) into
 * profile->paths, checked against the aggregate rows already read: a
 * damaged group is SP_ERR_CORRUPT naming the file and the group
 * (reader_h5_paths.c). */
int spi_h5r_read_call_paths(const spi_h5r *h, struct spi_profile *profile);
/* The rank<N> groups of the root, numerically sorted (only "rank" followed
 * by digits counts). */
int spi_h5r_rank_groups(const spi_h5r *h, uint32_t **ranks, size_t *count);
/* Schema 1: rank<N>/regions/<name>/ (reader_h5_v1.c). */
int spi_h5r_read_schema1(const spi_h5r *h, struct spi_profile *profile);

#endif /* SPI_READER_H5_UTIL_H */
