/*
 * run_stream.c - a bounded trace's finalize: one rank's rows streamed from
 * the spill file and memory in bounded slices (spi_run_collect_stream,
 * run.h), with exactly what the in-memory path (run.c) writes.
 *
 * The file wants each row's calls in (start, id) order, rows in region
 * registration order; the threads recorded them in end order, thread by
 * thread. One backward pass per thread (event_cursor.h: its memory chunks
 * from the last, each released once read, then its spilled chunks from the
 * last; call_parents.h finds each call's parent on the way) turns every
 * event into a 40-byte call (start, duration, id, parent id, region,
 * thread), counts the rows and their totals, and computes exclusive times
 * (spi_exclusive_add, as run.c does). The calls collect in
 * a run buffer; a full buffer is sorted by (region, start, id) and encoded
 * as a sorted run (run_codec.h: a few bytes of differences a call instead
 * of 40). The rows are then served by a k-way merge of the runs (a heap
 * over one cursor per run), which yields the calls in exactly the file's
 * order: an external merge sort in 2 x RUN_BYTES + SCRATCH_BYTES +
 * MERGE_BYTES of memory whatever the trace's length. A trace whose calls
 * fit in one run is never encoded.
 *
 * Beside the walk (issue 31): from the second run on, a full buffer is
 * sorted and encoded by a helper thread (run_sorter) while the walk fills
 * the other; the spilled chunks are read and converted ahead by the
 * cursor's own helper (event_cursor.h). The merge takes calls from the
 * heap's top run for as long as they stay before the other runs' heads
 * (take_calls), so runs that barely interleave cost no sift per call.
 *
 * Where a run goes: into memory while the encoded runs kept there fit in
 * the event memory the pass has already given back (the threads' memory
 * chunks are unmapped as they are read), else to the spill file. So peak
 * memory stays what the recording had, and a trace whose runs fit in its
 * own former chunks (20M calls of a loop with the default bound: 3 bytes
 * a call, 60 MB of runs, beside about 200 MiB of chunks given back)
 * writes nothing at finalize; issue 31 measured the 40-byte runs of that
 * trace at 2.2 s of kernel copies into the page cache.
 *
 * Statistics: count and total per row come from the pass, so the mean is
 * known before the merge and the rest is computed as the calls stream by
 * (spi_stats_stream: bit for bit spi_stats_compute).
 */
#include "record/run.h"
#include "record/run_threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "record/call_parents.h"
#include "record/openmp.h"
#include "record/registry.h"
#include "record/run_codec.h"
#include "util/alloc.h"
#include "util/cpus.h"
#include "util/threads.h"

/* Calls sorted per run. From the second run on, a full buffer is sorted
 * and encoded by the pass's helper while the walk fills a second one
 * (run_sorter below): three buffers of 10 MiB, within the two of 16 MiB
 * the pass had before it (issue 31: the sort and the encoding were a
 * third of the single-threaded pass). */
#define RUN_BYTES ((size_t)10 << 20)
#define SCRATCH_BYTES RUN_BYTES          /* the run's sorted copy */
#define MERGE_BYTES ((size_t)16 << 20)   /* read buffers of the runs in the file */
#define MIN_CURSOR_BYTES ((size_t)16 << 10)
#define SLICE_CALLS 65536                /* calls per slice served */

typedef spi_run_call stream_call;

typedef struct run_span {
    uint64_t offset;          /* in the spill file, when `bytes` is NULL */
    uint8_t *bytes;           /* the encoded run kept in memory (owned; padded
                                 with SPI_RUN_CALL_MAX_BYTES zeros), or NULL */
    uint64_t size;            /* encoded bytes */
    uint64_t count;           /* calls */
} run_span;

/* One run in the merge: its smallest call not yet taken (codec.previous,
 * the call decoded last), then the rest, decoded one at a time. */
typedef struct run_cursor {
    spi_run_codec codec;      /* .previous: the head */
    const stream_call *raw;   /* memory_run: the sorted calls, not encoded */
    const uint8_t *at;        /* encoded bytes not yet decoded ... */
    const uint8_t *end;       /* ... up to here */
    uint8_t *buffer;          /* a run in the file: its read buffer (owned) */
    size_t capacity;          /* bytes of buffer, padding not counted */
    uint64_t next_offset;     /* in the spill file */
    uint64_t file_left;       /* bytes of the run not yet read */
    uint64_t calls_left;      /* calls after head */
} run_cursor;

typedef struct stream_source {
    spi_row_source base;      /* first: the profile holds a pointer to it */
    spi_spill *spill;         /* owned: the session's, taken over */
    run_span *runs;
    size_t run_count;
    size_t run_capacity;
    stream_call *memory_run;  /* the only run, when it fit in memory */
    run_cursor *cursors;
    size_t *heap;             /* cursor indices, smallest call on top */
    size_t heap_size;
    uint64_t memory_run_bytes; /* encoded runs kept in memory (run_span.bytes) */
    size_t row_count;
    uint32_t *row_region;     /* registry handle of each row */
    uint64_t *row_calls;
    uint64_t *row_totals;     /* sum of durations, wrapping like the stats */
    spi_stats *stats;         /* final statistics per finished row */
    size_t current_row;       /* SIZE_MAX before the first request */
    uint64_t taken;           /* calls of current_row served */
    spi_stats_stream accumulator;
    int64_t *slice;           /* 5 columns of SLICE_CALLS */
    bool with_threads;
} stream_source;

/* The helper that sorts and encodes full run buffers (emit_run) while
 * the walk goes on: the walker hands it a full buffer and takes the
 * spare one; it waits only when the helper is still at the buffer before.
 * While `busy`, the helper alone touches the pass's scratch, buckets and
 * the source's runs (and appends to the spill file); the walker touches
 * them again only after seeing `busy` false under the lock. */
typedef struct run_sorter {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    pthread_t thread;
    struct stream_pass *pass;
    stream_call *calls;       /* the buffer handed over */
    size_t count;
    uint64_t released;        /* event bytes given back when it filled */
    bool busy;
    bool stop;
    int status;               /* the first failure of an emit */
} run_sorter;

/* The pass over the threads. */
typedef struct stream_pass {
    stream_source *source;
    stream_call *buffer;      /* RUN_BYTES */
    stream_call *spare;       /* RUN_BYTES, with the sorter: the other buffer */
    run_sorter *sorter;       /* NULL: runs emitted by the walker */
    bool sorter_tried;
    size_t emitted;           /* runs emitted by the walker */
    stream_call *scratch;     /* SCRATCH_BYTES */
    size_t buffered;
    size_t capacity;
    uint64_t *region_calls;   /* [region_count] */
    uint64_t *region_totals;
    int64_t *region_exclusive;
    uint64_t *bucket;         /* counting sort offsets, [region_count + 1] */
    int region_count;
    spi_session *session;
    uint64_t chunk_bytes_at_start; /* the threads' mapped chunks before the pass */
} stream_pass;

static int compare_calls(const void *a, const void *b) {
    const stream_call *x = a, *y = b;
    if (x->region != y->region) return x->region < y->region ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->call_id > y->call_id) - (x->call_id < y->call_id);
}

static bool call_before(const stream_call *x, const stream_call *y) {
    return compare_calls(x, y) < 0;
}

/* ---- the pass: sorted runs ---------------------------------------------------- */

/* Whether `count` calls of one region are in (start, id) order (1), in
 * the reverse order (-1), or neither (0). */
static int one_region_order(const stream_call *calls, size_t count) {
    bool ascending = true, descending = true;
    for (size_t i = 1; i < count && (ascending || descending); i++) {
        ascending = ascending && call_before(&calls[i - 1], &calls[i]);
        descending = descending && call_before(&calls[i], &calls[i - 1]);
    }
    return descending ? -1 : ascending;
}

/* Sort the buffered calls into scratch: by region with a stable counting
 * sort (linear), then each region's calls by (start, id). The pass walks
 * each thread backward, so a region's calls usually come in exactly the
 * reverse order and are reversed; only recursion or several threads in
 * one run leave them to a sort.
 * `in_place`: calls of a single region already in order, or in the
 * reverse order (the walk's own: a loop's calls of one region, one thread
 * per run), are left where they are and 1 or -1 (as one_region_order)
 * returned, for the encoder to read in that direction (issue 31: the copy
 * into scratch and the reversal were most of the sort's time). Returns 0
 * when the sorted calls are in scratch. */
static int sort_buffer(stream_pass *p, const stream_call *calls, size_t count, bool in_place) {
    uint64_t *bucket = p->bucket;
    memset(bucket, 0, ((size_t)p->region_count + 1) * sizeof *bucket);
    for (size_t i = 0; i < count; i++) bucket[calls[i].region + 1]++;
    if (in_place && count && bucket[calls[0].region + 1] == count) {
        int order = one_region_order(calls, count);
        if (order) return order;
    }
    for (int r = 0; r < p->region_count; r++) bucket[r + 1] += bucket[r];
    for (size_t i = 0; i < count; i++) p->scratch[bucket[calls[i].region]++] = calls[i];
    for (size_t first = 0; first < count;) {
        size_t last = first + 1;
        bool ascending = true, descending = true;
        while (last < count && p->scratch[last].region == p->scratch[first].region) {
            ascending = ascending && call_before(&p->scratch[last - 1], &p->scratch[last]);
            descending = descending && call_before(&p->scratch[last], &p->scratch[last - 1]);
            last++;
        }
        if (descending) {
            for (size_t lo = first, hi = last - 1; lo < hi; lo++, hi--) {
                stream_call swap = p->scratch[lo];
                p->scratch[lo] = p->scratch[hi];
                p->scratch[hi] = swap;
            }
        } else if (!ascending) {
            qsort(p->scratch + first, last - first, sizeof *p->scratch, compare_calls);
        }
        first = last;
    }
    return 0;
}

/* The bytes of memory chunks the threads still hold (the arena copies of
 * exited threads, bytes 0, are freed with the session, not before). The
 * backward cursor unlinks each chunk it unmaps (event_cursor.h), so the
 * lists hold exactly what is still mapped. */
static uint64_t mapped_chunk_bytes(const spi_session *session) {
    uint64_t bytes = 0;
    for (const spi_thread *t = session->threads; t; t = t->next)
        for (const spi_chunk *c = t->head; c; c = c->next) bytes += c->bytes;
    return bytes;
}

static int add_run(stream_source *s, run_span span) {
    if (s->run_count == s->run_capacity) {
        size_t capacity = s->run_capacity ? s->run_capacity * 2 : 16;
        run_span *grown = spi_reallocarray(s->runs, capacity, sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        s->runs = grown;
        s->run_capacity = capacity;
    }
    s->runs[s->run_count++] = span;
    return SP_OK;
}

/* Append encoded bytes of the run at `span` to the spill file; the run's
 * pieces must follow each other (finalize is the file's only writer now). */
static int append_to_file(stream_source *s, run_span *span, const uint8_t *bytes, size_t size) {
    uint64_t offset;
    if (spi_spill_append(s->spill, bytes, size, &offset) != 0) return SP_ERR_OUTPUT;
    if (span->size == 0) span->offset = offset;
    else if (offset != span->offset + span->size) return SP_ERR_OUTPUT;
    span->size += size;
    return SP_OK;
}

/* A full run buffer (`count` calls at `calls`): sorted, encoded into the
 * (now free) buffer, and kept in memory when the pass had given back
 * enough event memory for it (`released` bytes when the buffer filled),
 * else appended to the spill file. A run longer than the buffer once
 * encoded (only calls far apart in every field) goes to the file piece by
 * piece. Run by the walker, or by the sorter (then by it alone). */
static int emit_run(stream_pass *p, stream_call *calls, size_t count, uint64_t released) {
    stream_source *s = p->source;
    if (count == 0) return SP_OK;
    if (!p->scratch && !(p->scratch = spi_malloc(SCRATCH_BYTES))) return SP_ERR_OUT_OF_MEMORY;
    /* the sorted calls, read `step` apart, are encoded into the buffer
     * they are not in (scratch is as large as the run buffer) */
    int order = sort_buffer(p, calls, count, true);
    const stream_call *from = order == 0 ? p->scratch : order > 0 ? calls : calls + count - 1;
    ptrdiff_t step = order == 0 ? 1 : order;
    uint8_t *const encoded = order == 0 ? (uint8_t *)calls : (uint8_t *)p->scratch;
    uint8_t *const limit = encoded + RUN_BYTES;
    uint8_t *out = encoded;
    run_span span = {.count = count};
    spi_run_codec codec;
    spi_run_codec_reset(&codec);
    int status = SP_OK;
    for (size_t i = 0; i < count && status == SP_OK; i++) {
        if ((size_t)(limit - out) < SPI_RUN_CALL_MAX_BYTES) {
            status = append_to_file(s, &span, encoded, (size_t)(out - encoded));
            out = encoded;
        }
        out = spi_run_call_encode(&codec, from + (ptrdiff_t)i * step, out);
    }
    size_t size = (size_t)(out - encoded);
    if (status != SP_OK) return status;
    uint64_t kept = s->memory_run_bytes + size + SPI_RUN_CALL_MAX_BYTES;
    if (span.size == 0 && kept <= released &&
        (span.bytes = spi_malloc(size + SPI_RUN_CALL_MAX_BYTES))) {
        memcpy(span.bytes, encoded, size);
        memset(span.bytes + size, 0, SPI_RUN_CALL_MAX_BYTES);
        span.size = size;
        s->memory_run_bytes = kept;
    } else if (size && (status = append_to_file(s, &span, encoded, size)) != SP_OK) {
        return status;
    }
    if ((status = add_run(s, span)) != SP_OK) {
        spi_free(span.bytes);
        return status;
    }
    return SP_OK;
}

static void *sorter_main(void *argument) {
    run_sorter *r = argument;
    (void)pthread_setname_np(pthread_self(), "sp-sort");
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (!r->busy && !r->stop) pthread_cond_wait(&r->changed, &r->lock);
        if (!r->busy) break;
        pthread_mutex_unlock(&r->lock);
        int status = r->status == SP_OK ? emit_run(r->pass, r->calls, r->count, r->released)
                                        : SP_OK;
        pthread_mutex_lock(&r->lock);
        if (status != SP_OK) r->status = status;
        r->busy = false;
        pthread_cond_broadcast(&r->changed);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* The sorter and its spare buffer, or nothing (the walker then emits every
 * run itself, as without it). */
static void sorter_start(stream_pass *p) {
    p->sorter_tried = true;
    /* SCOPE_PROFILER_WRITE_THREADS=1: finalize keeps to its own thread */
    if (spi_write_threads() < 2) return;
    run_sorter *r = spi_calloc(1, sizeof *r);
    p->spare = r ? spi_malloc(RUN_BYTES) : NULL;
    if (!r || !p->spare) goto fail;
    *r = (run_sorter){.pass = p, .status = SP_OK};
    if (pthread_mutex_init(&r->lock, NULL) != 0) goto fail;
    if (pthread_cond_init(&r->changed, NULL) != 0) {
        pthread_mutex_destroy(&r->lock);
        goto fail;
    }
    int rc = spi_thread_start_masked(&r->thread, NULL, sorter_main, r);
    if (rc != 0) {
        pthread_cond_destroy(&r->changed);
        pthread_mutex_destroy(&r->lock);
        goto fail;
    }
    p->sorter = r;
    return;
fail:
    spi_free(r);
    spi_free(p->spare);
    p->spare = NULL;
}

/* Wait until the sorter is done with what it was given, then let it end;
 * its status (SP_OK or the first failure). The pass's runs are the
 * walker's again. */
static int sorter_finish(stream_pass *p) {
    run_sorter *r = p->sorter;
    if (!r) return SP_OK;
    pthread_mutex_lock(&r->lock);
    while (r->busy) pthread_cond_wait(&r->changed, &r->lock);
    r->stop = true;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    int status = r->status;
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    spi_free(r);
    p->sorter = NULL;
    return status;
}

/* The run buffer is full: emitted by the walker (the first run: the
 * sorter's buffers are taken once more event memory was given back), or
 * handed to the sorter in exchange for its spare. */
static int run_full(stream_pass *p) {
    uint64_t released = p->chunk_bytes_at_start - mapped_chunk_bytes(p->session);
    if (!p->sorter && !p->sorter_tried && p->emitted >= 1)
        sorter_start(p);
    run_sorter *r = p->sorter;
    if (!r) {
        int status = emit_run(p, p->buffer, p->buffered, released);
        p->buffered = 0;
        p->emitted++;
        return status;
    }
    pthread_mutex_lock(&r->lock);
    while (r->busy) pthread_cond_wait(&r->changed, &r->lock);
    int status = r->status;
    if (status == SP_OK) {
        r->calls = p->buffer;
        r->count = p->buffered;
        r->released = released;
        r->busy = true;
        pthread_cond_broadcast(&r->changed);
        stream_call *swap = p->buffer;
        p->buffer = p->spare;
        p->spare = swap;
    }
    pthread_mutex_unlock(&r->lock);
    p->buffered = 0;
    return status;
}

/* Thread t (attach index `index`) into the run buffer; `fold`, when not
 * NULL, takes every call too (run_paths.h). */
static int pass_thread(stream_pass *p, spi_session *session, spi_thread *t, size_t index,
                       int64_t base, const spi_omp_hosts *hosts, spi_call_fold *fold) {
    if (fold) spi_call_fold_thread(fold, t, index);
    spi_call_walk walk;
    spi_call_walk_open(&walk, session, t, true);
    const spi_event *e;
    const spi_enclosing_call *parent;
    int status;
    while ((status = spi_call_walk_next(&walk, &e, &parent)) == SP_OK && e) {
        if (p->buffered == p->capacity && (status = run_full(p)) != SP_OK) break;
        uint32_t region = spi_event_region(e);
        p->region_calls[region]++;
        p->region_totals[region] += (uint64_t)e->duration_ns;
        spi_exclusive_add(p->region_exclusive, e, parent);
        int64_t parent_id = spi_run_parent_id(t, e, parent, base, hosts);
        p->buffer[p->buffered++] = (stream_call){
            .start = e->start_ns, .duration = e->duration_ns,
            .call_id = base + spi_event_sequence(e), .parent_id = parent_id,
            .region = region, .thread = (uint32_t)t->index};
        if (fold) spi_call_fold_call(fold, &walk, e, parent, parent_id);
    }
    spi_call_walk_close(&walk);
    return status;
}

/* ---- the merge: rows served in order ------------------------------------------- */

/* Read the next piece of a run in the file behind the bytes not yet
 * decoded (moved to the front: a call may straddle two reads). */
static int fill_cursor(stream_source *s, run_cursor *c) {
    size_t kept = (size_t)(c->end - c->at);
    memmove(c->buffer, c->at, kept);
    size_t n = c->capacity - kept;
    if (n > c->file_left) n = (size_t)c->file_left;
    if (spi_spill_read(s->spill, c->next_offset, c->buffer + kept, n) != 0) return SP_ERR_OUTPUT;
    memset(c->buffer + kept + n, 0, SPI_RUN_CALL_MAX_BYTES); /* a bad call stops in here */
    c->next_offset += n;
    c->file_left -= n;
    c->at = c->buffer;
    c->end = c->buffer + kept + n;
    return SP_OK;
}

/* The cursor's next call into its head (codec.previous); *more false
 * when the run is done (then every byte of it must have been used). */
static int advance_cursor(stream_source *s, run_cursor *c, bool *more) {
    *more = c->calls_left > 0;
    if (!*more) return c->at == c->end && c->file_left == 0 ? SP_OK : SP_ERR_CORRUPT;
    c->calls_left--;
    if (c->raw) {
        c->codec.previous = *c->raw++;
        return SP_OK;
    }
    if ((size_t)(c->end - c->at) < SPI_RUN_CALL_MAX_BYTES && c->file_left) {
        int status = fill_cursor(s, c);
        if (status != SP_OK) return status;
    }
    const uint8_t *next = spi_run_call_decode(&c->codec, c->at);
    if (!next || next > c->end) return SP_ERR_CORRUPT;
    c->at = next;
    return SP_OK;
}

static const stream_call *cursor_call(const stream_source *s, size_t k) {
    return &s->cursors[k].codec.previous;
}

static void sift_down(stream_source *s, size_t i) {
    for (;;) {
        size_t smallest = i, l = 2 * i + 1, r = l + 1;
        if (l < s->heap_size &&
            call_before(cursor_call(s, s->heap[l]), cursor_call(s, s->heap[smallest])))
            smallest = l;
        if (r < s->heap_size &&
            call_before(cursor_call(s, s->heap[r]), cursor_call(s, s->heap[smallest])))
            smallest = r;
        if (smallest == i) return;
        size_t swap = s->heap[i];
        s->heap[i] = s->heap[smallest];
        s->heap[smallest] = swap;
        i = smallest;
    }
}

static int open_merge(stream_source *s) {
    size_t runs = s->run_count, file_runs = 0;
    s->cursors = spi_calloc(runs ? runs : 1, sizeof *s->cursors);
    s->heap = spi_calloc(runs ? runs : 1, sizeof *s->heap);
    if (!s->cursors || !s->heap) return SP_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; k < runs; k++) file_runs += !s->memory_run && !s->runs[k].bytes;
    size_t per_run = MERGE_BYTES / (file_runs ? file_runs : 1);
    if (per_run < MIN_CURSOR_BYTES) per_run = MIN_CURSOR_BYTES;
    for (size_t k = 0; k < runs; k++) {
        run_cursor *c = &s->cursors[k];
        const run_span *span = &s->runs[k];
        *c = (run_cursor){.calls_left = span->count};
        spi_run_codec_reset(&c->codec);
        if (s->memory_run) {
            c->raw = s->memory_run;
        } else if (span->bytes) {
            c->at = span->bytes;
            c->end = span->bytes + span->size;
        } else {
            c->capacity = per_run < span->size ? per_run : (size_t)span->size;
            if (c->capacity < SPI_RUN_CALL_MAX_BYTES) c->capacity = SPI_RUN_CALL_MAX_BYTES;
            c->buffer = spi_malloc(c->capacity + SPI_RUN_CALL_MAX_BYTES);
            if (!c->buffer) return SP_ERR_OUT_OF_MEMORY;
            c->at = c->end = c->buffer;
            c->next_offset = span->offset;
            c->file_left = span->size;
        }
        bool more;
        int status = advance_cursor(s, c, &more);
        if (status != SP_OK) return status;
        if (more) s->heap[s->heap_size++] = k;
    }
    for (size_t i = s->heap_size / 2; i-- > 0;) sift_down(s, i);
    return SP_OK;
}

/* The next `n` calls, all of region `region`, into the slice's columns.
 * The heap's top run gives calls for as long as its head stays before the
 * heads of the top's children (the smallest of the other runs): a run of
 * consecutive calls from one run costs a compare each, not a sift through
 * the heap (issue 31: runs of a loop's calls barely interleave). The same
 * calls in the same order as taking them one by one off the heap: ids are
 * unique, so no two heads tie. SP_OK, SP_ERR_OUTPUT or SP_ERR_CORRUPT. */
static int take_calls(stream_source *s, uint32_t region, size_t n, int64_t *starts,
                      int64_t *durations, int64_t *ids, int64_t *parents, int64_t *threads) {
    size_t i = 0;
    while (i < n) {
        if (s->heap_size == 0) return SP_ERR_CORRUPT;
        run_cursor *c = &s->cursors[s->heap[0]];
        const stream_call *bound = NULL;
        if (s->heap_size > 1) bound = cursor_call(s, s->heap[1]);
        if (s->heap_size > 2 && call_before(cursor_call(s, s->heap[2]), bound))
            bound = cursor_call(s, s->heap[2]);
        bool more = true;
        do {
            const stream_call *call = &c->codec.previous;
            if (call->region != region) return SP_ERR_CORRUPT;
            starts[i] = call->start;
            durations[i] = call->duration;
            ids[i] = call->call_id;
            parents[i] = call->parent_id;
            threads[i] = call->thread;
            i++;
            int status = advance_cursor(s, c, &more);
            if (status != SP_OK) return status;
        } while (more && i < n && (!bound || call_before(&c->codec.previous, bound)));
        if (!more) s->heap[0] = s->heap[--s->heap_size];
        if (s->heap_size) sift_down(s, 0);
    }
    return SP_OK;
}

static int source_next(spi_row_source *base, size_t row, size_t max, spi_call_slice *slice,
                       spi_error *err) {
    stream_source *s = (stream_source *)base;
    *slice = (spi_call_slice){0};
    if (row >= s->row_count || (row != s->current_row && s->current_row != SIZE_MAX &&
                                (row != s->current_row + 1 || s->taken != s->row_calls[s->current_row])))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "rows of a streamed trace asked out of order");
    if (row != s->current_row) {
        s->current_row = row;
        s->taken = 0;
        spi_stats_stream_begin(&s->accumulator, s->row_calls[row], s->row_totals[row]);
    }
    uint64_t left = s->row_calls[row] - s->taken;
    size_t n = max < SLICE_CALLS ? max : SLICE_CALLS;
    if (left < n) n = (size_t)left;
    int64_t *starts = s->slice, *durations = starts + SLICE_CALLS, *ids = durations + SLICE_CALLS,
            *parents = ids + SLICE_CALLS, *threads = parents + SLICE_CALLS;
    int status = take_calls(s, s->row_region[row], n, starts, durations, ids, parents, threads);
    if (status != SP_OK)
        return spi_error_set(err, status, status == SP_ERR_OUTPUT
                                              ? "cannot read back the spill file"
                                              : "the streamed calls do not match their rows "
                                                "(the spill file changed under finalize?)");
    spi_stats_stream_add(&s->accumulator, starts, durations, n);
    s->taken += n;
    if (s->taken == s->row_calls[row]) spi_stats_stream_end(&s->accumulator, &s->stats[row]);
    *slice = (spi_call_slice){.count = n, .starts = starts, .durations = durations,
                              .call_ids = ids, .parent_ids = parents,
                              .thread_ids = s->with_threads ? threads : NULL};
    return SP_OK;
}

static const spi_stats *source_row_stats(spi_row_source *base, size_t row) {
    return &((stream_source *)base)->stats[row];
}

static void source_release(spi_row_source *base) {
    stream_source *s = (stream_source *)base;
    if (s->cursors)
        for (size_t k = 0; k < s->run_count; k++) spi_free(s->cursors[k].buffer);
    for (size_t k = 0; s->runs && k < s->run_count; k++) spi_free(s->runs[k].bytes);
    spi_free(s->cursors);
    spi_free(s->heap);
    spi_free(s->memory_run);
    spi_free(s->runs);
    spi_free(s->row_region);
    spi_free(s->row_calls);
    spi_free(s->row_totals);
    spi_free(s->stats);
    spi_free(s->slice);
    spi_spill_close(s->spill);
    spi_free(s);
}

/* ---- rows ------------------------------------------------------------------------ */

static int build_rows(stream_pass *p, uint32_t rank, spi_profile *profile) {
    stream_source *s = p->source;
    size_t rows = 0;
    for (int r = 0; r < p->region_count; r++) rows += p->region_calls[r] != 0;
    profile->rows = spi_calloc(rows ? rows : 1, sizeof *profile->rows);
    profile->names = spi_calloc(rows ? rows : 1, sizeof *profile->names);
    s->row_region = spi_malloc((rows ? rows : 1) * sizeof *s->row_region);
    s->row_calls = spi_malloc((rows ? rows : 1) * sizeof *s->row_calls);
    s->row_totals = spi_malloc((rows ? rows : 1) * sizeof *s->row_totals);
    s->stats = spi_calloc(rows ? rows : 1, sizeof *s->stats);
    if (!profile->rows || !profile->names || !s->row_region || !s->row_calls || !s->row_totals ||
        !s->stats)
        return SP_ERR_OUT_OF_MEMORY;
    for (int r = 0; r < p->region_count; r++) {
        if (!p->region_calls[r]) continue;
        size_t i = profile->row_count;
        profile->names[i] = spi_strdup(spi_registry_get(r)->text);
        if (!profile->names[i]) return SP_ERR_OUT_OF_MEMORY;
        profile->name_count++;
        profile->rows[i] = (spi_row){.region = (uint32_t)i, .rank = rank,
                                     .count = p->region_calls[r],
                                     .exclusive_total = p->region_exclusive[r],
                                     .source_line = -1};
        s->row_region[i] = (uint32_t)r;
        s->row_calls[i] = p->region_calls[r];
        s->row_totals[i] = p->region_totals[r];
        profile->event_count += p->region_calls[r];
        profile->row_count++;
    }
    s->row_count = profile->row_count;
    return SP_OK;
}

static void free_pass(stream_pass *p) {
    (void)sorter_finish(p);
    spi_free(p->buffer);
    spi_free(p->spare);
    spi_free(p->scratch);
    spi_free(p->region_calls);
    spi_free(p->region_totals);
    spi_free(p->region_exclusive);
    spi_free(p->bucket);
}

int spi_run_collect_stream(spi_session *session, uint32_t rank, spi_profile *profile,
                           spi_run_report *report, spi_run_paths *paths) {
    if (paths) *paths = (spi_run_paths){.status = SP_ERR_OUT_OF_MEMORY};
    stream_source *s = spi_calloc(1, sizeof *s);
    if (!s) return SP_ERR_OUT_OF_MEMORY;
    s->base = (spi_row_source){source_next, source_row_stats, source_release};
    s->current_row = SIZE_MAX;
    /* the profile owns the source, and through it the spill file, once the
     * session's events were read (below) */
    s->spill = session->spill;
    profile->source = &s->base;

    stream_pass p = {.source = s, .region_count = spi_registry_count(),
                     .capacity = RUN_BYTES / sizeof(stream_call), .session = session,
                     .chunk_bytes_at_start = mapped_chunk_bytes(session)};
    size_t regions = (size_t)(p.region_count ? p.region_count : 1);
    p.buffer = spi_malloc(RUN_BYTES);
    p.region_calls = spi_calloc(regions, sizeof *p.region_calls);
    p.region_totals = spi_calloc(regions, sizeof *p.region_totals);
    p.region_exclusive = spi_calloc(regions, sizeof *p.region_exclusive);
    p.bucket = spi_calloc(regions + 1, sizeof *p.bucket);
    s->slice = spi_malloc(5 * SLICE_CALLS * sizeof *s->slice);
    int status = p.buffer && p.region_calls && p.region_totals && p.region_exclusive && p.bucket &&
                         s->slice
                     ? SP_OK
                     : SP_ERR_OUT_OF_MEMORY;

    /* call ids: each thread's sequences offset by the threads before it */
    int64_t *bases = spi_run_thread_bases(session);
    if (!bases && status == SP_OK) status = SP_ERR_OUT_OF_MEMORY;
    for (const spi_thread *t = session->threads; t; t = t->next)
        if (t->spilled_count || (t->head && t->head->used)) report->recording_threads++;
    s->with_threads = report->recording_threads > 1;
    spi_omp_hosts *hosts = NULL;
    if (status == SP_OK && spi_run_has_omp_workers(session)) status = spi_omp_hosts_build(&hosts, session, bases);
    /* the threads in the order the summary's fold needs (run_paths.h); the
     * runs are sorted, so the order changes nothing else */
    spi_thread **threads = NULL;
    size_t *order = NULL;
    if (status == SP_OK) status = spi_run_walk_order(session, &threads, &order);
    spi_call_fold fold = {.status = SP_ERR_OUT_OF_MEMORY};
    if (status == SP_OK && paths) /* a failure is the fold's status only */
        (void)spi_call_fold_open(&fold, session, rank, bases, hosts != NULL);
    for (size_t k = 0; k < (size_t)session->thread_count && status == SP_OK; k++)
        status = pass_thread(&p, session, threads[order[k]], order[k], bases[order[k]], hosts,
                             paths ? &fold : NULL);
    int sorted = sorter_finish(&p); /* the runs are the walker's again */
    if (status == SP_OK) status = sorted;
    if (paths) spi_call_fold_finish(&fold, status, paths);
    spi_free(threads);
    spi_free(order);
    spi_omp_hosts_free(hosts);
    spi_free(bases);

    /* the calls that fit in one buffer stay there, sorted; else a last run */
    if (status == SP_OK && s->run_count == 0) {
        p.scratch = spi_malloc(p.buffered ? p.buffered * sizeof *p.scratch : 1);
        if (!p.scratch) status = SP_ERR_OUT_OF_MEMORY;
        if (status == SP_OK) {
            (void)sort_buffer(&p, p.buffer, p.buffered, false);
            s->runs = spi_malloc(sizeof *s->runs);
            if (!s->runs) status = SP_ERR_OUT_OF_MEMORY;
        }
        if (status == SP_OK) {
            s->runs[0] = (run_span){.count = p.buffered};
            s->run_count = 1;
            s->memory_run = p.scratch;
            p.scratch = NULL;
        }
    } else if (status == SP_OK) {
        uint64_t released = p.chunk_bytes_at_start - mapped_chunk_bytes(session);
        status = emit_run(&p, p.buffer, p.buffered, released);
    }
    if (status == SP_OK) status = build_rows(&p, rank, profile);
    free_pass(&p);
    if (status == SP_OK) status = open_merge(s);
    profile->event_columns = SPI_EV_BIT(SPI_EV_CALL_IDS) | SPI_EV_BIT(SPI_EV_PARENT_IDS);
    if (s->with_threads) profile->event_columns |= SPI_EV_BIT(SPI_EV_THREAD_IDS);
    if (status == SP_OK && s->with_threads) status = spi_run_fill_threads(session, rank, profile);
    session->spill = NULL;
    if (status != SP_OK && paths && paths->status == SP_OK) { /* no profile: no table */
        spi_free(paths->paths);
        *paths = (spi_run_paths){.status = status};
    }
    return status;
}
