/*
 * h5_file_parts.c - see h5_file_parts.h.
 *
 * What the two writers share. The streaming writer writes everything from
 * one process; the collective writer creates the datasets on every rank
 * (parallel HDF5 wants identical creation calls) and lets rank 0 add the
 * small parts afterwards, so every piece here takes an open hid_t and does
 * not care which driver opened it.
 */
#include "format/h5_file_parts.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"
#include "format/h5_util.h"
#include "format/h5_writer.h"
#include "format/output_check.h"
#include "scope_profiler.h"

int spi_h5_fail(spi_error *err, const char *path, const char *what) {
    int system_error = errno;
    if (system_error == ENOSPC || system_error == EDQUOT || system_error == EIO ||
        system_error == EFBIG || system_error == EROFS)
        return spi_error_set(err, SP_ERR_OUTPUT, "%s: cannot %s: %s", path, what,
                             strerror(system_error));
    char detail[512];
    spi_h5_last_message(detail, sizeof detail);
    return spi_error_set(err, SP_ERR_HDF5, "%s: cannot %s: %s", path, what, detail);
}

unsigned spi_h5_event_column_set(unsigned declared) {
    unsigned columns = declared | SPI_EV_BIT(SPI_EV_START_DELTAS) | SPI_EV_BIT(SPI_EV_DURATIONS);
    return columns & ~(SPI_EV_BIT(SPI_EV_START_TIMES) | SPI_EV_BIT(SPI_EV_END_TIMES));
}

int spi_h5_write_column(hid_t parent, const spi_column *column, const void *data,
                        uint64_t count) {
    hsize_t dims[1] = {count};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t file_type = spi_elem_file_type(column->elem);
    hid_t memory_type = spi_elem_memory_type(column->elem);
    hid_t dset = -1;
    int ok = space >= 0 && file_type >= 0 && memory_type >= 0;
    if (ok) dset = H5Dcreate2(parent, column->name, file_type, space, H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT);
    ok = ok && dset >= 0;
    /* Strings are typed UTF-8: ill-formed bytes are stored as U+FFFD. */
    const void *stored = data;
    if (ok && count && column->elem == SPI_ELEM_STR)
        ok = (stored = spi_h5_utf8_strings(data, (size_t)count)) != NULL;
    if (ok && count) ok = H5Dwrite(dset, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, stored) >= 0;
    if (column->elem == SPI_ELEM_STR && stored != data)
        spi_h5_utf8_release((const char **)stored, data, (size_t)count);
    if (dset >= 0) H5Dclose(dset);
    spi_elem_type_release(column->elem, file_type);
    spi_elem_type_release(column->elem, memory_type);
    if (space >= 0) H5Sclose(space);
    return ok ? SP_OK : SP_ERR_HDF5;
}

bool spi_h5_event_columns_chunked(uint64_t count) {
    return count >= SPI_COMPRESS_MIN_EVENTS && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0;
}

hid_t spi_h5_create_event_column(hid_t events, const spi_column *column, uint64_t count,
                                 hid_t dcpl) {
    hsize_t dims[1] = {count};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t plist = dcpl == H5P_DEFAULT ? H5Pcreate(H5P_DATASET_CREATE) : H5Pcopy(dcpl);
    hid_t dset = -1;
    if (space < 0 || plist < 0) goto out;
    if (spi_h5_event_columns_chunked(count)) {
        hsize_t chunk[1] = {count < SPI_EVENT_CHUNK_ELEMENTS ? count : SPI_EVENT_CHUNK_ELEMENTS};
        if (H5Pset_chunk(plist, 1, chunk) < 0 || H5Pset_shuffle(plist) < 0 ||
            H5Pset_deflate(plist, SPI_DEFLATE_LEVEL) < 0)
            goto out;
    }
    dset = H5Dcreate2(events, column->name, spi_elem_file_type(column->elem), space,
                      H5P_DEFAULT, plist, H5P_DEFAULT);
out:
    if (plist >= 0) H5Pclose(plist);
    if (space >= 0) H5Sclose(space);
    return dset;
}

int spi_h5_write_slice(hid_t dset, hid_t memory_type, uint64_t offset, const void *values,
                       size_t count, hid_t dxpl) {
    hsize_t start[1] = {offset}, length[1] = {count ? count : 1};
    hid_t file_space = H5Dget_space(dset);
    hid_t memory_space = H5Screate_simple(1, length, NULL);
    int ok = file_space >= 0 && memory_space >= 0;
    if (ok && count)
        ok = H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, length, NULL) >= 0;
    else if (ok)
        ok = H5Sselect_none(file_space) >= 0 && H5Sselect_none(memory_space) >= 0;
    ok = ok && H5Dwrite(dset, memory_type, memory_space, file_space, dxpl, values) >= 0;
    if (memory_space >= 0) H5Sclose(memory_space);
    if (file_space >= 0) H5Sclose(file_space);
    return ok ? SP_OK : SP_ERR_HDF5;
}

int spi_h5_write_root_attributes(hid_t file, bool aggregate) {
    if (spi_h5_write_attr_i64(file, SPI_ATTR_SCHEMA, SPI_SCHEMA_VERSION) != SP_OK ||
        spi_h5_write_attr_string(file, SPI_ATTR_STORAGE_LAYOUT,
                                 aggregate ? SPI_LAYOUT_AGGREGATE : SPI_LAYOUT_COLUMNAR) != SP_OK)
        return SP_ERR_HDF5;
    return SP_OK;
}

int spi_h5_write_metadata(hid_t file, const spi_meta *metadata) {
    /* Dense attribute storage (a B-tree over a fractal heap) from the first
     * key: in the default "compact" storage every new attribute is looked
     * up in the object header from its start, so n keys cost n^2/2 header
     * walks (20,000 keys: 4 s inside HDF5; issue 29 item 9). Readers see
     * no difference (HDF5 >= 1.8 and h5py read both). Dense storage needs
     * a version-2 object header, which HDF5 writes only while the file's
     * lower format bound is 1.8: raised for this group's creation alone
     * (the rest of the file keeps the earliest format), then restored. */
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    if (gcpl < 0) return SP_ERR_HDF5;
    bool raised = H5Fset_libver_bounds(file, H5F_LIBVER_V18, H5F_LIBVER_LATEST) >= 0;
    hid_t group = raised && H5Pset_attr_phase_change(gcpl, 0, 0) >= 0
                      ? H5Gcreate2(file, SPI_GROUP_METADATA, H5P_DEFAULT, gcpl, H5P_DEFAULT)
                      : -1;
    if (raised && H5Fset_libver_bounds(file, H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST) < 0 &&
        group >= 0) {
        H5Gclose(group);
        group = -1;
    }
    H5Pclose(gcpl);
    if (group < 0) return SP_ERR_HDF5;
    int status = SP_OK;
    for (size_t i = 0; i < metadata->count && status == SP_OK; i++) {
        const spi_meta_entry *e = &metadata->entries[i];
        switch (e->kind) {
        case SPI_META_STR: status = spi_h5_write_attr_string(group, e->key, e->str); break;
        case SPI_META_I64: status = spi_h5_write_attr_i64(group, e->key, e->i64); break;
        case SPI_META_F64: status = spi_h5_write_attr_f64(group, e->key, e->f64); break;
        case SPI_META_BOOL: status = spi_h5_write_attr_bool(group, e->key, e->i64); break;
        case SPI_META_STR_ARRAY:
            status = spi_h5_write_attr_strings(group, e->key, e->items, e->item_count);
            break;
        }
    }
    H5Gclose(group);
    return status;
}

static int compare_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names are the key of every reader (a name twice is refused), and two
 * names that differ only in invalid bytes are equal once repaired: then
 * each repaired name that is now someone else's gets "~<region id>".
 * false on allocation failure. */
static bool unique_repaired(const char **stored, const char *const *names, size_t count) {
    const char **sorted = spi_calloc(count, sizeof *sorted);
    bool *taken = spi_calloc(count, sizeof *taken);
    bool ok = sorted && taken;
    if (ok) {
        memcpy(sorted, stored, count * sizeof *sorted);
        qsort(sorted, count, sizeof *sorted, compare_names);
    }
    for (size_t i = 0; ok && i < count; i++) {
        if (!names[i] || stored[i] == names[i]) continue;
        const char **at = bsearch(&stored[i], sorted, count, sizeof *sorted, compare_names);
        size_t k = (size_t)(at - sorted);
        taken[i] = (k > 0 && strcmp(sorted[k - 1], stored[i]) == 0) ||
                   (k + 1 < count && strcmp(sorted[k + 1], stored[i]) == 0);
    }
    for (size_t i = 0; ok && i < count; i++) {
        if (!taken[i]) continue;
        size_t len = strlen(stored[i]) + 24;
        char *unique = spi_malloc(len);
        if (!(ok = unique != NULL)) break;
        snprintf(unique, len, "%s~%zu", stored[i], i);
        spi_free((char *)stored[i]);
        stored[i] = unique;
    }
    spi_free(sorted);
    spi_free(taken);
    return ok;
}

int spi_h5_write_region_table(hid_t file, const char *const *names, size_t count) {
    const char **stored = spi_h5_utf8_strings(names, count);
    if ((!stored && count) ||
        (stored != (const char **)names && !unique_repaired(stored, names, count))) {
        spi_h5_utf8_release(stored, names, count);
        return SP_ERR_OUT_OF_MEMORY;
    }
    hid_t group = spi_h5_create_group(file, SPI_GROUP_REGION_TABLE);
    static const spi_column names_column = {SPI_GROUP_REGION_TABLE, "names", SPI_ELEM_STR,
                                            false, 0, NULL};
    int status = group >= 0 ? spi_h5_write_column(group, &names_column, stored, count) : SP_ERR_HDF5;
    if (group >= 0) H5Gclose(group);
    spi_h5_utf8_release(stored, names, count);
    return status;
}

int spi_h5_write_thread_table(hid_t file, const spi_thread_row *threads, size_t count) {
    if (count == 0) return SP_OK; /* the table is written only when it has rows */
    hid_t group = spi_h5_create_group(file, SPI_GROUP_THREAD_TABLE);
    if (group < 0) return SP_ERR_HDF5;
    uint32_t *ranks = spi_calloc(count, sizeof *ranks);
    int64_t *values = spi_calloc(count, sizeof *values);
    int8_t *flags = spi_calloc(count, sizeof *flags);
    const char **names = spi_calloc(count, sizeof *names);
    int status = ranks && values && flags && names ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    for (int c = 0; c < SPI_THR_COUNT && status == SP_OK; c++) {
        const void *data = values;
        for (size_t i = 0; i < count; i++) {
            const spi_thread_row *t = &threads[i];
            switch ((spi_thread_col)c) {
            case SPI_THR_RANKS: ranks[i] = t->rank; data = ranks; break;
            case SPI_THR_INDEX: values[i] = t->index; break;
            case SPI_THR_IDENT: values[i] = t->ident; break;
            case SPI_THR_NATIVE_ID: values[i] = t->native_id; break;
            case SPI_THR_DAEMON: flags[i] = t->daemon; data = flags; break;
            case SPI_THR_START_NS: values[i] = t->start_ns; break;
            case SPI_THR_END_NS: values[i] = t->end_ns; break;
            case SPI_THR_CPU_NS: values[i] = t->cpu_ns; break;
            case SPI_THR_NAME: names[i] = t->name ? t->name : ""; data = names; break;
            case SPI_THR_COUNT: break;
            }
        }
        status = spi_h5_write_column(group, &spi_thread_columns[c], data, count);
    }
    spi_free(ranks);
    spi_free(values);
    spi_free(flags);
    spi_free(names);
    H5Gclose(group);
    return status;
}

int spi_index_rows_alloc(spi_index_rows *rows, size_t count) {
    if (count == 0) count = 1;
    rows->region_ids = spi_calloc(count, sizeof *rows->region_ids);
    rows->ranks = spi_calloc(count, sizeof *rows->ranks);
    rows->offsets = spi_calloc(count, sizeof *rows->offsets);
    rows->counts = spi_calloc(count, sizeof *rows->counts);
    rows->source_lines = spi_calloc(count, sizeof *rows->source_lines);
    rows->exclusive_totals = spi_calloc(count, sizeof *rows->exclusive_totals);
    rows->stats = spi_calloc(count, sizeof *rows->stats);
    return rows->region_ids && rows->ranks && rows->offsets && rows->counts &&
                   rows->source_lines && rows->exclusive_totals && rows->stats
               ? SP_OK
               : SP_ERR_OUT_OF_MEMORY;
}

void spi_index_rows_free(spi_index_rows *rows) {
    spi_free(rows->region_ids);
    spi_free(rows->ranks);
    spi_free(rows->offsets);
    spi_free(rows->counts);
    spi_free(rows->source_lines);
    spi_free(rows->exclusive_totals);
    spi_free(rows->stats);
    *rows = (spi_index_rows){0};
}

/* The temporary sibling keeps at most this much of the final name, so that
 * ".<name>.XXXXXX.tmp" fits NAME_MAX (255) even for the longest legal name. */
#define TEMP_NAME_KEEP (NAME_MAX - 12)

char *spi_h5_temp_sibling(const char *path, spi_error *err) {
    char *dir_copy = spi_strdup(path), *base_copy = spi_strdup(path);
    char *temp = NULL;
    if (!dir_copy || !base_copy) goto out;
    const char *dir = dirname(dir_copy), *base = basename(base_copy);
    size_t bytes = strlen(dir) + strlen(base) + 32;
    temp = spi_malloc(bytes);
    if (!temp) goto out;
    snprintf(temp, bytes, "%s/.%.*s.XXXXXX.tmp", dir, TEMP_NAME_KEEP, base);
    int fd = mkstemps(temp, 4);
    if (fd < 0) {
        spi_error_set(err, SP_ERR_OUTPUT, "%s: cannot create the output file: %s", path,
                      strerror(errno));
        spi_free(temp);
        temp = NULL;
        goto out;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) { /* best effort: 0600 is still usable */ }
    close(fd);
out:
    if (!temp && err && err->status == SP_OK)
        spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory while writing", path);
    spi_free(dir_copy);
    spi_free(base_copy);
    return temp;
}

/* The temporary files of the writers in progress, for
 * sp_remove_partial_outputs: fixed buffers, so that a signal handler can
 * walk them without allocating. A writer past the last slot is simply not
 * listed (its temporary then stays when the process is killed). */
#define PARTIAL_SLOTS 8
static char partial_paths[PARTIAL_SLOTS][PATH_MAX];
static atomic_int partial_used[PARTIAL_SLOTS];

int spi_h5_partial_register(const char *temp_path) {
    if (strlen(temp_path) >= PATH_MAX) return -1;
    for (int i = 0; i < PARTIAL_SLOTS; i++) {
        int expected = 0;
        if (!atomic_compare_exchange_strong(&partial_used[i], &expected, 2)) continue;
        strcpy(partial_paths[i], temp_path);
        atomic_store(&partial_used[i], 1); /* visible to a handler only now */
        return i;
    }
    return -1;
}

void spi_h5_partial_forget(int slot) {
    if (slot >= 0) atomic_store(&partial_used[slot], 0);
}

SP_API void sp_remove_partial_outputs(void) {
    for (int i = 0; i < PARTIAL_SLOTS; i++)
        if (atomic_load(&partial_used[i]) == 1) unlink(partial_paths[i]);
}

static int fsync_path(const char *path, int flags) {
    int fd = open(path, flags);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int spi_h5_publish_temp(const char *temp, const char *final, spi_error *err) {
    int status = SP_OK;
    if (fsync_path(temp, O_RDONLY) != 0)
        status = spi_error_set(err, SP_ERR_OUTPUT, "%s: cannot flush to disk: %s", final,
                               strerror(errno));
    /* again just before the rename: the path may have changed since create */
    if (status == SP_OK) status = spi_output_path_check(final, err);
    if (status == SP_OK && rename(temp, final) != 0)
        status = spi_error_set(err, SP_ERR_OUTPUT, "%s: cannot publish the file: %s", final,
                               strerror(errno));
    if (status == SP_OK) {
        /* Make the rename itself durable. */
        char *dir_copy = spi_strdup(final);
        if (dir_copy) fsync_path(dirname(dir_copy), O_RDONLY | O_DIRECTORY);
        spi_free(dir_copy);
    } else {
        unlink(temp);
    }
    return status;
}

/* ---- the guarded file driver ------------------------------------------------
 *
 * libhdf5 1.10 cannot survive a failed write during a flush or a close: the
 * failed flush leaves its metadata cache half switched (the next flush, the
 * close's own, then fails with "slist already enabled?"), and a failed
 * H5Fclose or H5Dclose frees the object but keeps its identifier, which
 * the library's exit handler later closes again (SIGSEGV in H5F__close_cb
 * at exit, long after the writer returned). So the writer's file never
 * tells HDF5 that a write failed: this driver forwards everything to the
 * sec2 driver through the public H5FD API (as HDF5's own multi driver
 * does), and when a write, truncate or close fails it records errno in the
 * writer's spi_h5_guard and reports success. From then on nothing more is
 * written to the file: metadata writes are kept in memory (so that HDF5
 * reads back what it wrote and its structures stay consistent), raw data
 * is dropped. The writer asks spi_h5_guard_failed after each step and
 * discards the file; every close then succeeds. */

#if !H5_VERSION_GE(1, 13, 0)

/* Metadata kept in memory after a failure, at most this many bytes (the
 * writer stops at its next check; a close flushes what is dirty). */
#define GUARD_OVERLAY_MAX (64u << 20)

typedef struct guard_block {
    haddr_t addr;
    size_t size;
    unsigned char *bytes;
} guard_block;

typedef struct guard_file {
    H5FD_t pub;                  /* first: HDF5 sees this part */
    H5FD_t *inner;               /* the sec2 file */
    spi_h5_guard *guard;
    guard_block *blocks;         /* metadata written after the failure, in order */
    size_t block_count, block_cap, overlay_bytes;
} guard_file;

typedef struct guard_fapl {
    spi_h5_guard *guard;
} guard_fapl;

static void guard_note(guard_file *f, int error) {
    if (!f->guard || f->guard->failed) return;
    f->guard->failed = true;
    f->guard->error = error ? error : EIO;
}

static H5FD_t *guard_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr) {
    const guard_fapl *info = H5Pget_driver_info(fapl);
    hid_t inner_fapl = H5Pcopy(fapl);
    guard_file *f = spi_calloc(1, sizeof *f);
    if (f && inner_fapl >= 0 && H5Pset_fapl_sec2(inner_fapl) >= 0)
        f->inner = H5FDopen(name, flags, inner_fapl, maxaddr);
    if (inner_fapl >= 0) H5Pclose(inner_fapl);
    if (!f || !f->inner) {
        spi_free(f);
        return NULL;
    }
    f->guard = info ? info->guard : NULL;
    return &f->pub;
}

static herr_t guard_close(H5FD_t *file) {
    guard_file *f = (guard_file *)file;
    errno = 0;
    if (H5FDclose(f->inner) < 0) guard_note(f, errno);
    for (size_t i = 0; i < f->block_count; i++) spi_free(f->blocks[i].bytes);
    spi_free(f->blocks);
    spi_free(f);
    return 0;
}

static int guard_cmp(const H5FD_t *a, const H5FD_t *b) {
    return H5FDcmp(((const guard_file *)a)->inner, ((const guard_file *)b)->inner);
}

static herr_t guard_query(const H5FD_t *file, unsigned long *flags) {
    if (!file) {
        *flags = 0;
        return 0;
    }
    return H5FDquery(((const guard_file *)file)->inner, flags) < 0 ? -1 : 0;
}

static haddr_t guard_get_eoa(const H5FD_t *file, H5FD_mem_t type) {
    return H5FDget_eoa(((const guard_file *)file)->inner, type);
}

static herr_t guard_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr) {
    return H5FDset_eoa(((guard_file *)file)->inner, type, addr);
}

static haddr_t guard_get_eof(const H5FD_t *file, H5FD_mem_t type) {
    return H5FDget_eof(((const guard_file *)file)->inner, type);
}

static herr_t guard_get_handle(H5FD_t *file, hid_t fapl, void **handle) {
    return H5FDget_vfd_handle(((guard_file *)file)->inner, fapl, handle);
}

static herr_t guard_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                         void *buffer) {
    guard_file *f = (guard_file *)file;
    if (H5FDread(f->inner, type, dxpl, addr, size, buffer) < 0) {
        if (!f->guard || !f->guard->failed) return -1;
        memset(buffer, 0, size); /* the file is being discarded */
    }
    /* what was written after a failure, later blocks over earlier ones */
    for (size_t i = 0; i < f->block_count; i++) {
        const guard_block *b = &f->blocks[i];
        haddr_t lo = addr > b->addr ? addr : b->addr;
        haddr_t hi = addr + size < b->addr + b->size ? addr + size : b->addr + b->size;
        if (lo < hi)
            memcpy((unsigned char *)buffer + (lo - addr), b->bytes + (lo - b->addr),
                   (size_t)(hi - lo));
    }
    return 0;
}

static void guard_keep(guard_file *f, H5FD_mem_t type, haddr_t addr, size_t size,
                       const void *buffer) {
    if (type == H5FD_MEM_DRAW || size == 0 || f->overlay_bytes + size > GUARD_OVERLAY_MAX)
        return;
    if (f->block_count == f->block_cap) {
        size_t cap = f->block_cap ? 2 * f->block_cap : 64;
        guard_block *grown = spi_reallocarray(f->blocks, cap, sizeof *grown);
        if (!grown) return;
        f->blocks = grown;
        f->block_cap = cap;
    }
    unsigned char *bytes = spi_malloc(size);
    if (!bytes) return;
    memcpy(bytes, buffer, size);
    f->blocks[f->block_count++] = (guard_block){addr, size, bytes};
    f->overlay_bytes += size;
}

static herr_t guard_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                          const void *buffer) {
    guard_file *f = (guard_file *)file;
    if (!f->guard || !f->guard->failed) {
        errno = 0;
        if (H5FDwrite(f->inner, type, dxpl, addr, size, buffer) >= 0) return 0;
        if (!f->guard) return -1;
        guard_note(f, errno);
    }
    guard_keep(f, type, addr, size, buffer);
    return 0;
}

static herr_t guard_flush(H5FD_t *file, hid_t dxpl, hbool_t closing) {
    guard_file *f = (guard_file *)file;
    if (f->guard && f->guard->failed) return 0;
    errno = 0;
    if (H5FDflush(f->inner, dxpl, closing) < 0) {
        if (!f->guard) return -1;
        guard_note(f, errno);
    }
    return 0;
}

static herr_t guard_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing) {
    guard_file *f = (guard_file *)file;
    if (f->guard && f->guard->failed) return 0;
    errno = 0;
    if (H5FDtruncate(f->inner, dxpl, closing) < 0) {
        if (!f->guard) return -1;
        guard_note(f, errno);
    }
    return 0;
}

static herr_t guard_lock(H5FD_t *file, hbool_t rw) {
    return H5FDlock(((guard_file *)file)->inner, rw);
}

static herr_t guard_unlock(H5FD_t *file) { return H5FDunlock(((guard_file *)file)->inner); }

static const H5FD_class_t guard_class = {
    .name = "scope_profiler_guard",
    .maxaddr = (haddr_t)(((uint64_t)1 << 63) - 1),
    .fc_degree = H5F_CLOSE_WEAK,
    .fapl_size = sizeof(guard_fapl),
    .open = guard_open,
    .close = guard_close,
    .cmp = guard_cmp,
    .query = guard_query,
    .get_eoa = guard_get_eoa,
    .set_eoa = guard_set_eoa,
    .get_eof = guard_get_eof,
    .get_handle = guard_get_handle,
    .read = guard_read,
    .write = guard_write,
    .flush = guard_flush,
    .truncate = guard_truncate,
    .lock = guard_lock,
    .unlock = guard_unlock,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

static pthread_mutex_t guard_registration = PTHREAD_MUTEX_INITIALIZER;
static hid_t guard_driver = H5I_INVALID_HID;

/* The driver's id; registered again after an H5close. */
static hid_t guard_driver_id(void) {
    pthread_mutex_lock(&guard_registration);
    if (guard_driver < 0 || H5Iis_valid(guard_driver) <= 0)
        guard_driver = H5FDregister(&guard_class);
    hid_t id = guard_driver;
    pthread_mutex_unlock(&guard_registration);
    return id;
}

hid_t spi_h5_guard_fapl(spi_h5_guard *guard) {
    *guard = (spi_h5_guard){0};
    hid_t driver = guard_driver_id();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    guard_fapl info = {guard};
    /* STRONG: H5Fclose closes the file for good even if an identifier of
     * an object in it was left open, so the driver never reports to a
     * guard after its writer is gone. */
    if (fapl >= 0 && (driver < 0 || H5Pset_driver(fapl, driver, &info) < 0 ||
                      H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0)) {
        H5Pclose(fapl);
        fapl = H5I_INVALID_HID;
    }
    return fapl;
}

#else /* HDF5 1.13 and later close a file whose flush failed cleanly */

hid_t spi_h5_guard_fapl(spi_h5_guard *guard) {
    *guard = (spi_h5_guard){0};
    return H5Pcreate(H5P_FILE_ACCESS);
}

#endif

int spi_h5_guard_check(const spi_h5_guard *guard, spi_error *err, const char *path,
                       const char *what) {
    if (!guard->failed) return SP_OK;
    return spi_error_set(err, SP_ERR_OUTPUT, "%s: cannot %s: %s", path, what,
                         strerror(guard->error));
}
