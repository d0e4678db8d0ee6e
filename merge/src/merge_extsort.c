/*
 * merge_extsort.c - an external sort of spm_key_record in a fixed memory
 * budget, for the id checks of scope-merge (merge_ids.c). Records are
 * buffered up to the budget; a full buffer is sorted and appended to the
 * scratch file as a run; reading merges the runs (in several rounds when
 * there are more runs than read buffers fit in the budget), so memory
 * stays at the budget whatever the number of records, and disk takes the
 * rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "merge_internal.h"

/* Records read at once from one run while merging: below this, reads get
 * too small to be worth a system call, so runs are merged in rounds. */
#define SPM_SORT_MIN_READ 256

typedef struct sort_run {
    uint64_t at, count;        /* first record in the scratch file, records */
} sort_run;

/* One run being merged: its unread part and a window of it in memory. */
typedef struct run_reader {
    uint64_t at, left;         /* next unread record in the file, records left */
    spm_key_record *buffer;
    size_t len, next, capacity;
} run_reader;

struct spm_sorter {
    spm_sort_scratch *scratch;
    size_t budget;             /* records the buffers may hold at once */
    spm_key_record *buffer;
    size_t count;
    sort_run *runs;
    size_t run_count;
    /* reading */
    bool reading;
    size_t next;               /* in-memory reading: next buffer record */
    run_reader *readers;
    size_t *heap;              /* reader indices, smallest record first */
    size_t heap_size, reader_count;
};

static int io_error(spi_error *err, const char *what) {
    return spi_error_set(err, SP_ERR_OUTPUT, "scope-merge: cannot %s the sort scratch file: %s",
                         what, strerror(errno));
}

static int record_cmp(const spm_key_record *x, const spm_key_record *y) {
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    if (x->position != y->position) return x->position < y->position ? -1 : 1;
    return 0;
}

static int record_qsort_cmp(const void *a, const void *b) { return record_cmp(a, b); }

static size_t records_of(size_t bytes) {
    size_t n = bytes / sizeof(spm_key_record);
    return n < 2 * SPM_SORT_MIN_READ ? 2 * SPM_SORT_MIN_READ : n;
}

int spm_sorter_new(spm_sorter **out, spm_sort_scratch *scratch, size_t budget_bytes,
                   spi_error *err) {
    spm_sorter *s = spi_calloc(1, sizeof *s);
    if (!s) return spm_oom(err);
    s->scratch = scratch;
    s->budget = records_of(budget_bytes);
    *out = s;
    return SP_OK;
}

void spm_sorter_set_budget(spm_sorter *s, size_t budget_bytes) {
    s->budget = records_of(budget_bytes);
}

static int write_records(spm_sorter *s, const spm_key_record *r, size_t n, spi_error *err) {
    spm_sort_scratch *sc = s->scratch;
    if (!sc->file && !(sc->file = tmpfile())) return io_error(err, "create");
    size_t bytes = n * sizeof *r;
    const char *p = (const char *)r;
    off_t at = (off_t)(sc->end * sizeof *r);
    while (bytes) {
        ssize_t put = pwrite(fileno(sc->file), p, bytes, at);
        if (put <= 0) return io_error(err, "write");
        p += put;
        at += put;
        bytes -= (size_t)put;
    }
    sc->end += n;
    return SP_OK;
}

static int add_run(spm_sorter *s, uint64_t at, uint64_t count, spi_error *err) {
    sort_run *grown = spi_reallocarray(s->runs, s->run_count + 1, sizeof *grown);
    if (!grown) return spm_oom(err);
    s->runs = grown;
    s->runs[s->run_count++] = (sort_run){at, count};
    return SP_OK;
}

int spm_sorter_spill(spm_sorter *s, spi_error *err) {
    if (s->count) {
        qsort(s->buffer, s->count, sizeof *s->buffer, record_qsort_cmp);
        uint64_t at = s->scratch->end;
        int status = write_records(s, s->buffer, s->count, err);
        if (status == SP_OK) status = add_run(s, at, s->count, err);
        if (status != SP_OK) return status;
        s->count = 0;
    }
    spi_free(s->buffer);
    s->buffer = NULL;
    return SP_OK;
}

int spm_sorter_push(spm_sorter *s, const spm_key_record *r, spi_error *err) {
    if (!s->buffer) {
        s->buffer = spi_malloc(s->budget * sizeof *s->buffer);
        if (!s->buffer) return spm_oom(err);
    }
    if (s->count == s->budget) {
        qsort(s->buffer, s->count, sizeof *s->buffer, record_qsort_cmp);
        uint64_t at = s->scratch->end;
        int status = write_records(s, s->buffer, s->count, err);
        if (status == SP_OK) status = add_run(s, at, s->count, err);
        if (status != SP_OK) return status;
        s->count = 0;
    }
    s->buffer[s->count++] = *r;
    return SP_OK;
}

/* ---- reading: a k-way merge of the runs ---------------------------------------- */

static int refill(spm_sorter *s, run_reader *rd, spi_error *err) {
    size_t n = rd->left < rd->capacity ? (size_t)rd->left : rd->capacity;
    size_t bytes = n * sizeof *rd->buffer;
    char *p = (char *)rd->buffer;
    off_t at = (off_t)(rd->at * sizeof *rd->buffer);
    while (bytes) {
        ssize_t got = pread(fileno(s->scratch->file), p, bytes, at);
        if (got <= 0) {
            if (got == 0) errno = EIO;
            return io_error(err, "read");
        }
        p += got;
        at += got;
        bytes -= (size_t)got;
    }
    rd->at += n;
    rd->left -= n;
    rd->len = n;
    rd->next = 0;
    return SP_OK;
}

static bool reader_less(const spm_sorter *s, size_t a, size_t b) {
    const run_reader *x = &s->readers[a], *y = &s->readers[b];
    int c = record_cmp(&x->buffer[x->next], &y->buffer[y->next]);
    return c < 0 || (c == 0 && a < b);
}

static void heap_sift(spm_sorter *s, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < s->heap_size && reader_less(s, s->heap[l], s->heap[best])) best = l;
        if (r < s->heap_size && reader_less(s, s->heap[r], s->heap[best])) best = r;
        if (best == i) return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[best];
        s->heap[best] = t;
        i = best;
    }
}

static void close_readers(spm_sorter *s) {
    for (size_t k = 0; s->readers && k < s->reader_count; k++) spi_free(s->readers[k].buffer);
    spi_free(s->readers);
    spi_free(s->heap);
    s->readers = NULL;
    s->heap = NULL;
    s->reader_count = s->heap_size = 0;
}

/* Readers over runs[first .. first + n), each with budget / n records. */
static int open_readers(spm_sorter *s, size_t first, size_t n, spi_error *err) {
    s->readers = spi_calloc(n, sizeof *s->readers);
    s->heap = spi_calloc(n, sizeof *s->heap);
    if (!s->readers || !s->heap) return spm_oom(err);
    s->reader_count = n;
    size_t each = s->budget / n;
    for (size_t k = 0; k < n; k++) {
        run_reader *rd = &s->readers[k];
        rd->at = s->runs[first + k].at;
        rd->left = s->runs[first + k].count;
        rd->capacity = each;
        rd->buffer = spi_malloc(each * sizeof *rd->buffer);
        if (!rd->buffer) return spm_oom(err);
        int status = refill(s, rd, err);
        if (status != SP_OK) return status;
        if (rd->len) s->heap[s->heap_size++] = k;
    }
    for (size_t k = s->heap_size; k-- > 0;) heap_sift(s, k);
    return SP_OK;
}

static int merged_next(spm_sorter *s, spm_key_record *r, bool *got, spi_error *err) {
    *got = s->heap_size > 0;
    if (!*got) return SP_OK;
    size_t k = s->heap[0];
    run_reader *rd = &s->readers[k];
    *r = rd->buffer[rd->next++];
    if (rd->next == rd->len) {
        int status = rd->left ? refill(s, rd, err) : SP_OK;
        if (status != SP_OK) return status;
        if (rd->next == rd->len) s->heap[0] = s->heap[--s->heap_size];
    }
    heap_sift(s, 0);
    return SP_OK;
}

/* Merge groups of runs into longer runs until one round of readers fits
 * the budget with reads of at least SPM_SORT_MIN_READ records. */
static int merge_rounds(spm_sorter *s, spi_error *err) {
    size_t fan_in = s->budget / SPM_SORT_MIN_READ;
    if (fan_in < 2) fan_in = 2;
    while (s->run_count > fan_in) {
        sort_run *merged = NULL;
        size_t merged_count = 0;
        int status = SP_OK;
        /* Output goes through half the budget's worth of readers plus one
         * write buffer, so the round stays within the budget. */
        size_t group = fan_in > 2 ? fan_in - 1 : 2;
        size_t out_cap = s->budget / (group + 1);
        spm_key_record *out = spi_malloc(out_cap * sizeof *out);
        if (!out) return spm_oom(err);
        for (size_t first = 0; first < s->run_count && status == SP_OK; first += group) {
            size_t n = s->run_count - first < group ? s->run_count - first : group;
            size_t saved = s->budget;
            s->budget = out_cap * n;
            status = open_readers(s, first, n, err);
            s->budget = saved;
            uint64_t at = s->scratch->end, count = 0;
            size_t len = 0;
            bool got = true;
            while (status == SP_OK && got) {
                status = merged_next(s, &out[len], &got, err);
                if (status == SP_OK && got && ++len == out_cap) {
                    status = write_records(s, out, len, err);
                    count += len;
                    len = 0;
                }
            }
            if (status == SP_OK && len) status = write_records(s, out, len, err);
            count += len;
            close_readers(s);
            sort_run *grown = status == SP_OK
                                  ? spi_reallocarray(merged, merged_count + 1, sizeof *grown)
                                  : NULL;
            if (status == SP_OK && !grown) status = spm_oom(err);
            if (status == SP_OK) {
                merged = grown;
                merged[merged_count++] = (sort_run){at, count};
            }
        }
        spi_free(out);
        if (status != SP_OK) {
            spi_free(merged);
            return status;
        }
        spi_free(s->runs);
        s->runs = merged;
        s->run_count = merged_count;
    }
    return SP_OK;
}

int spm_sorter_start(spm_sorter *s, spi_error *err) {
    s->reading = true;
    s->next = 0;
    if (s->run_count == 0) {
        /* Everything fits: sort in memory, no disk. */
        if (s->count) qsort(s->buffer, s->count, sizeof *s->buffer, record_qsort_cmp);
        return SP_OK;
    }
    int status = spm_sorter_spill(s, err);
    if (status == SP_OK) status = merge_rounds(s, err);
    if (status == SP_OK) status = open_readers(s, 0, s->run_count, err);
    return status;
}

int spm_sorter_next(spm_sorter *s, spm_key_record *r, bool *got, spi_error *err) {
    if (!s->readers) {
        *got = s->next < s->count;
        if (*got) *r = s->buffer[s->next++];
        return SP_OK;
    }
    return merged_next(s, r, got, err);
}

void spm_sorter_free(spm_sorter *s) {
    if (!s) return;
    close_readers(s);
    spi_free(s->buffer);
    spi_free(s->runs);
    spi_free(s);
}
