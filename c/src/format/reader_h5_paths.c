/*
 * reader_h5_paths.c - rank<N>/call_paths, the call paths of an
 * aggregate-mode run (docs/FORMAT.md), into profile->paths.
 *
 * Nothing here is trusted before it is checked: every column has the
 * length of `parents`; a parent is -1 or an earlier path (so the paths
 * form a forest and no walk up the tree can loop); region ids index the
 * region table; and the paths of each (rank, region) add up to that row's
 * aggregate count, total and exclusive time, with the row's minimum and
 * maximum among theirs. A row with no path at all is not compared: a merge
 * of a Python aggregate file (no paths) with ours has such rows. A file whose paths disagree with its rows would
 * print a tree that contradicts its own table, so it is refused.
 */
#include <stdio.h>
#include <string.h>

#include "format/reader_h5_util.h"
#include "format/schema.h"
#include "profile/profile.h"
#include "util/alloc.h"

static int corrupt(const spi_h5r *h, uint32_t rank, const char *what, uint64_t index) {
    return spi_error_set(h->err, SP_ERR_CORRUPT,
                         "%s: rank%u/%s: %s (path %llu). The file is damaged.", h->path, rank,
                         SPI_GROUP_CALL_PATHS, what, (unsigned long long)index);
}

/* Per-region sums of one rank's paths, to compare with its rows. */
typedef struct region_sums {
    bool has_paths;
    uint64_t count;
    int64_t total, exclusive, minimum, maximum;
} region_sums;

static int check_against_rows(const spi_h5r *h, const spi_profile *p, uint32_t rank,
                              const spi_call_path *paths, size_t n) {
    region_sums *sums = spi_calloc(p->name_count + 1, sizeof *sums);
    if (!sums) return spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
    for (size_t i = 0; i < p->name_count; i++)
        sums[i] = (region_sums){false, 0, 0, 0, INT64_MAX, INT64_MIN};
    int status = SP_OK;
    for (size_t i = 0; i < n; i++) {
        region_sums *s = &sums[paths[i].region];
        s->has_paths = true;
        s->count += paths[i].count;
        /* wrapping sums: a damaged total cannot overflow into UB */
        s->total = (int64_t)((uint64_t)s->total + (uint64_t)paths[i].total);
        s->exclusive = (int64_t)((uint64_t)s->exclusive + (uint64_t)paths[i].exclusive);
        if (paths[i].minimum < s->minimum) s->minimum = paths[i].minimum;
        if (paths[i].maximum > s->maximum) s->maximum = paths[i].maximum;
    }
    for (size_t r = 0; r < p->row_count && status == SP_OK; r++) {
        const spi_row *row = &p->rows[r];
        if (row->rank != rank || !row->aggregate) continue;
        const region_sums *s = &sums[row->region];
        /* a row without paths came from an input that had none (a merged
         * Python aggregate profile): nothing to compare */
        if (!s->has_paths) continue;
        bool agrees = s->count == row->aggregate_count && s->total == row->aggregate_total &&
                      (row->aggregate_exclusive < 0 || s->exclusive == row->aggregate_exclusive) &&
                      (row->aggregate_count == 0 || (s->minimum == row->aggregate_minimum &&
                                                     s->maximum == row->aggregate_maximum));
        if (!agrees)
            status = spi_error_set(h->err, SP_ERR_CORRUPT,
                                   "%s: rank%u/%s disagrees with the aggregate row of region "
                                   "%s (paths: %llu calls, %lld ns; row: %llu calls, %lld ns). "
                                   "The file is damaged.",
                                   h->path, rank, SPI_GROUP_CALL_PATHS, p->names[row->region],
                                   (unsigned long long)s->count, (long long)s->total,
                                   (unsigned long long)row->aggregate_count,
                                   (long long)row->aggregate_total);
        sums[row->region].count = 0; /* seen */
        sums[row->region].total = 0;
    }
    /* paths of a region with no row on this rank */
    for (size_t i = 0; i < n && status == SP_OK; i++) {
        bool has_row = false;
        for (size_t r = 0; r < p->row_count && !has_row; r++)
            has_row = p->rows[r].rank == rank && p->rows[r].region == paths[i].region;
        if (!has_row) status = corrupt(h, rank, "a region without an aggregate row", i);
    }
    spi_free(sums);
    return status;
}

static int read_rank(const spi_h5r *h, spi_profile *p, uint32_t rank, hid_t group) {
    void *columns[SPI_PATH_COUNT] = {0};
    hsize_t n = 0;
    int status = spi_h5r_read_int_column(h, group, spi_path_columns[SPI_PATH_PARENTS].name,
                                         false, SPI_H5R_ANY_LENGTH, &columns[SPI_PATH_PARENTS],
                                         &n);
    for (int c = 0; c < SPI_PATH_COUNT && status == SP_OK; c++) {
        const spi_column *column = &spi_path_columns[c];
        if (c == SPI_PATH_PARENTS) continue;
        if (column->elem == SPI_ELEM_F64)
            status = spi_h5r_read_float_column(h, group, column->name, n,
                                               (double **)&columns[c], NULL);
        else
            status = spi_h5r_read_int_column(h, group, column->name,
                                             column->elem == SPI_ELEM_U64 ||
                                                 column->elem == SPI_ELEM_U32,
                                             n, &columns[c], NULL);
    }
    if (status != SP_OK && status != SP_ERR_OUT_OF_MEMORY) {
        /* name the group: the column helpers only know the dataset name */
        char detail[sizeof h->err->message];
        size_t skip = strlen(h->path);
        const char *message = h->err->message;
        if (strncmp(message, h->path, skip) == 0) message += skip;
        while (*message == ':' || *message == ' ') message++;
        snprintf(detail, sizeof detail, "%s", message);
        spi_error_clear(h->err); /* first error wins in spi_error_set */
        status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: rank%u/%s is damaged: %s", h->path,
                               rank, SPI_GROUP_CALL_PATHS, detail);
    }
    spi_call_path *grown = NULL;
    if (status == SP_OK && n > 0) {
        grown = spi_reallocarray(p->paths, p->path_count + (size_t)n, sizeof *grown);
        if (!grown) status = spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory",
                                           h->path);
        else p->paths = grown;
    }
    const int64_t *i64[SPI_PATH_COUNT];
    for (int c = 0; c < SPI_PATH_COUNT; c++) i64[c] = columns[c];
    const uint64_t *regions = columns[SPI_PATH_REGION_IDS];
    const uint64_t *counts = columns[SPI_PATH_COUNTS];
    const uint64_t *recursions = columns[SPI_PATH_RECURSIONS];
    const double *m2 = columns[SPI_PATH_M2];
    spi_call_path *first = status == SP_OK ? &p->paths[p->path_count] : NULL;
    for (hsize_t i = 0; i < n && status == SP_OK; i++) {
        int64_t parent = i64[SPI_PATH_PARENTS][i];
        if (parent < -1 || parent >= (int64_t)i)
            status = corrupt(h, rank, "parent index out of range or not before the path", i);
        else if (regions[i] >= p->name_count)
            status = corrupt(h, rank, "region id out of range", i);
        else if (counts[i] == 0 || counts[i] > INT64_MAX)
            status = corrupt(h, rank, "call count of 0 or beyond int64", i);
        else if (recursions[i] >= counts[i])
            status = corrupt(h, rank, "more recursive calls than calls", i);
        else if (i64[SPI_PATH_THREAD_IDS][i] < -1 ||
                 i64[SPI_PATH_MINIMUMS][i] > i64[SPI_PATH_MAXIMUMS][i] ||
                 i64[SPI_PATH_MINIMUMS][i] < 0 || i64[SPI_PATH_TOTALS][i] < 0 ||
                 !(m2[i] >= 0.0))
            status = corrupt(h, rank, "thread id, times or m2 out of range", i);
        if (status != SP_OK) break;
        first[i] = (spi_call_path){
            .rank = rank, .region = (uint32_t)regions[i], .parent = parent,
            .thread = i64[SPI_PATH_THREAD_IDS][i], .count = counts[i],
            .recursions = recursions[i],
            .total = i64[SPI_PATH_TOTALS][i], .minimum = i64[SPI_PATH_MINIMUMS][i],
            .maximum = i64[SPI_PATH_MAXIMUMS][i], .exclusive = i64[SPI_PATH_EXCLUSIVES][i],
            .m2 = m2[i], .start_minimum = i64[SPI_PATH_START_MINIMUMS][i],
            .end_maximum = i64[SPI_PATH_END_MAXIMUMS][i]};
    }
    if (status == SP_OK) status = check_against_rows(h, p, rank, first, (size_t)n);
    if (status == SP_OK) p->path_count += (size_t)n;
    for (int c = 0; c < SPI_PATH_COUNT; c++) spi_free(columns[c]);
    return status;
}

int spi_h5r_read_call_paths(const spi_h5r *h, spi_profile *profile) {
    uint32_t *ranks = NULL;
    size_t rank_count = 0;
    int status = spi_h5r_rank_groups(h, &ranks, &rank_count);
    for (size_t r = 0; status == SP_OK && r < rank_count; r++) {
        char path[64];
        snprintf(path, sizeof path, "rank%u/%s", ranks[r], SPI_GROUP_CALL_PATHS);
        if (!spi_h5r_exists(h->file, path)) continue;
        if (!profile->aggregate) {
            status = spi_error_set(h->err, SP_ERR_CORRUPT,
                                   "%s: %s exists but the file is not an aggregate profile. "
                                   "The file is damaged.",
                                   h->path, path);
            break;
        }
        hid_t group = H5Gopen2(h->file, path, H5P_DEFAULT);
        if (group < 0) {
            status = spi_error_set(h->err, SP_ERR_CORRUPT, "%s: cannot open %s", h->path, path);
            break;
        }
        status = read_rank(h, profile, ranks[r], group);
        H5Gclose(group);
    }
    spi_free(ranks);
    if (status == SP_OK && profile->path_count > 0 && spi_profile_stats_from_paths(profile) != SP_OK)
        status = spi_error_set(h->err, SP_ERR_OUT_OF_MEMORY, "%s: out of memory", h->path);
    return status;
}
