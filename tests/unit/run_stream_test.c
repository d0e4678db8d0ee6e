/*
 * run_stream_test.c - a bounded trace's streaming finalize (run_stream.c)
 * gives exactly what the in-memory path (run.c) gives, on the SAME recorded
 * session: the session is recorded once with a small limit (so it flushes
 * to its spill file), then copied whole into memory for run.c, and both
 * profiles are written; ctest compares the two files with h5diff, every
 * dataset byte for byte. The summary's call paths both collects fold
 * (run_paths.h) are compared here, bit for bit.
 *
 * The workload has what makes the streaming path work: several threads,
 * recursion (rows out of start order), a call still open at finalize,
 * more calls than one sorted run holds (an external merge of several runs).
 *
 * The streamed collect's sorted runs go to the spill file in their compact
 * form (run_codec.h), or stay in memory once the pass has given back the
 * event memory they need: the test checks that the runs written took fewer
 * than 8 bytes a call (40 as records), and with a LIMIT_MIB of 16 that at
 * least one run stayed in memory (fewer writes than runs).
 *
 * The copy for run.c is read with the spill file's synchronous reads
 * (spi_event_cursor_read_ahead off); the streamed collect reads the
 * spilled chunks ahead on a helper thread (event_cursor.h, issue 31), so
 * h5diff compares the read-ahead's events with the synchronous ones too;
 * check_read_ahead compares the two cursors batch by batch, both ways.
 *
 * SHAPE "flat": one thread's calls of one region under the open "main"
 * instead (each run one region in the walk's reverse order, which the
 * sort leaves in place and the encoder reads backward, run_stream.c).
 *
 * Usage: run_stream_test DIR [tsc|monotonic] [LIMIT_MIB] [mixed|flat]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/h5_writer.h"
#include "record/clock.h"
#include "record/event_cursor.h"
#include "record/recorder.h"
#include "record/run.h"
#include "record/run_codec.h"
#include "record/spill.h"
#include "scope_profiler.h"

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "run_stream_test: " __VA_ARGS__);                  \
            fprintf(stderr, "\n");                                             \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static int regions[4];

static void recurse(int depth) {
    sp_begin(regions[2 + depth % 2]);
    if (depth > 0) recurse(depth - 1);
    sp_end(regions[2 + depth % 2]);
}

static bool flat;

static void *work(void *arg) {
    long calls = (long)(intptr_t)arg;
    for (long i = 0; i < calls; i++) {
        sp_begin(regions[1]);
        if (i % 97 == 0 && !flat) recurse(6);
        sp_end(regions[1]);
    }
    return NULL;
}

/* The session with every event in memory: one chunk per thread holding
 * what the cursor reads (spilled chunks converted, then memory chunks). */
static spi_thread *materialize(spi_session *session) {
    spi_thread *first = NULL, **link = &first;
    for (spi_thread *t = session->threads; t; t = t->next) {
        uint64_t total = 0;
        for (size_t i = 0; i < t->spilled_count; i++) total += t->spilled[i].count;
        for (spi_chunk *c = t->head; c; c = c->next) total += c->used;
        spi_chunk *all = malloc(sizeof *all + (total ? total : 1) * sizeof(spi_event));
        spi_thread *copy = malloc(sizeof *copy);
        CHECK(all && copy, "out of memory");
        *copy = *t;
        *all = (spi_chunk){.capacity = total, .used = 0};
        spi_event_cursor cursor;
        spi_event_cursor_open(&cursor, session, t, false);
        const spi_event *events;
        size_t n;
        while (spi_event_cursor_next(&cursor, &events, &n) == SP_OK && n) {
            memcpy(all->events + all->used, events, n * sizeof *events);
            all->used += n;
        }
        spi_event_cursor_close(&cursor);
        CHECK(all->used == total, "thread %d: read %zu of %llu events", t->index, all->used,
              (unsigned long long)total);
        copy->head = copy->tail = total ? all : NULL;
        if (!total) free(all);
        copy->spilled_count = 0;
        copy->next = NULL;
        *link = copy;
        link = &copy->next;
    }
    return first;
}

/* One thread's batches through a cursor, flattened (malloc'd, *count
 * events), in the cursor's order; *helped: whether a read-ahead helper ran. */
static spi_event *read_all(spi_session *session, spi_thread *t, bool backward, size_t *count,
                           bool *helped) {
    uint64_t total = 0;
    for (size_t i = 0; i < t->spilled_count; i++) total += t->spilled[i].count;
    for (spi_chunk *c = t->head; c; c = c->next) total += c->used;
    spi_event *all = malloc((total ? total : 1) * sizeof *all);
    CHECK(all, "out of memory");
    spi_event_cursor cursor;
    if (backward) spi_event_cursor_open_backward(&cursor, session, t, false);
    else spi_event_cursor_open(&cursor, session, t, false);
    const spi_event *events;
    size_t n, used = 0;
    *helped = false;
    int status;
    while ((status = spi_event_cursor_next(&cursor, &events, &n)) == SP_OK && n) {
        CHECK(used + n <= total, "thread %d: more events than recorded", t->index);
        memcpy(all + used, events, n * sizeof *events);
        used += n;
        *helped = *helped || cursor.ahead;
    }
    CHECK(status == SP_OK, "thread %d: cursor status %d", t->index, status);
    spi_event_cursor_close(&cursor);
    *count = used;
    return all;
}

/* The read-ahead gives every thread's spilled events exactly as the
 * synchronous reads do (converted times included), forward and backward,
 * and a thread with several spilled chunks really used the helper. */
static void check_read_ahead(spi_session *session) {
    size_t helped_threads = 0;
    for (spi_thread *t = session->threads; t; t = t->next) {
        for (int backward = 0; backward < 2; backward++) {
            size_t plain_count, ahead_count;
            bool plain_helped, ahead_helped;
            spi_event_cursor_read_ahead = false;
            spi_event *plain = read_all(session, t, backward, &plain_count, &plain_helped);
            spi_event_cursor_read_ahead = true;
            spi_event *ahead = read_all(session, t, backward, &ahead_count, &ahead_helped);
            CHECK(!plain_helped, "thread %d: a helper ran with the read-ahead off", t->index);
            CHECK(plain_count == ahead_count &&
                      memcmp(plain, ahead, plain_count * sizeof *plain) == 0,
                  "thread %d, %s: the read-ahead's events differ from the synchronous reads'",
                  t->index, backward ? "backward" : "forward");
            if (t->spilled_count >= 2)
                CHECK(ahead_helped, "thread %d: %zu spilled chunks and no read-ahead", t->index,
                      t->spilled_count);
            helped_threads += ahead_helped && backward;
            free(plain);
            free(ahead);
        }
    }
    CHECK(helped_threads > 0, "no thread read its spilled chunks ahead");
}

int main(int argc, char **argv) {
    CHECK(argc >= 2, "usage: run_stream_test DIR [tsc|monotonic] [LIMIT_MIB]");
    size_t limit_mib = argc > 3 ? (size_t)atoi(argv[3]) : 3;
    CHECK(limit_mib >= 1 && limit_mib <= 64, "LIMIT_MIB %s is not 1..64", argv[3]);
    flat = argc > 4 && strcmp(argv[4], "flat") == 0;
    /* finalize's helpers (read-ahead, sorter) run only with more than one
     * write thread: asked for, so they run on a one-CPU mask too */
    setenv("SCOPE_PROFILER_WRITE_THREADS", "2", 1);
    char memory_path[4096], stream_path[4096];
    snprintf(memory_path, sizeof memory_path, "%s/memory.h5", argv[1]);
    snprintf(stream_path, sizeof stream_path, "%s/stream.h5", argv[1]);
    bool tsc = argc > 2 && strcmp(argv[2], "tsc") == 0;
    char reason[256];
    if (tsc && !spi_clock_tsc_usable(reason, sizeof reason)) {
        printf("run_stream_test: no usable TSC (%s): the monotonic case only\n", reason);
        tsc = false;
    }

    spi_error err;
    spi_error_clear(&err);
    spi_spill *spill;
    CHECK(spi_spill_open(&spill, stream_path, &err) == SP_OK, "%s", err.message);
    spi_recording recording = {.buffer_limit_bytes = limit_mib << 20, .spill = spill,
                               .spill_label = stream_path, .tsc = tsc};
    CHECK(spi_recorder_start(&recording) == SP_OK, "cannot start");
    const char *names[4] = {"main", "work", "even", "odd"};
    for (int i = 0; i < 4; i++) regions[i] = sp_region(names[i]);
    sp_begin(regions[0]);
    pthread_t threads[2];
    int helpers = flat ? 0 : 2;
    for (int i = 0; i < helpers; i++)
        CHECK(pthread_create(&threads[i], NULL, work, (void *)(intptr_t)(300000 + 1000 * i)) == 0,
              "pthread_create");
    work((void *)(intptr_t)(flat ? 2000000 : 600000));
    for (int i = 0; i < helpers; i++) pthread_join(threads[i], NULL);
    /* "main" stays open: dropped at finalize, its children become roots */

    spi_session session = spi_recorder_stop();
    CHECK(spi_session_spilled(&session), "the session never flushed");
    CHECK(atomic_load(&spill->writes) >= (limit_mib == 3 ? 20u : 2u), "only %llu flushes",
          (unsigned long long)atomic_load(&spill->writes));
    CHECK(spi_recorder_convert_ticks(&session) == SP_OK, "tick conversion");

    check_read_ahead(&session);
    spi_session copy = session;
    spi_event_cursor_read_ahead = false; /* the reference: synchronous reads */
    copy.threads = materialize(&session);
    spi_event_cursor_read_ahead = true;
    copy.spill = NULL;
    spi_profile memory = {0}, stream = {0};
    spi_run_report memory_report, stream_report;
    spi_run_paths memory_paths, stream_paths; /* the summary's, folded by each collect */
    CHECK(spi_run_collect(&copy, 0, &memory, &memory_report, &memory_paths) == SP_OK,
          "in-memory collect");
    CHECK(!memory.source, "the copy took the streaming path");
    CHECK(spi_profile_write(&memory, memory_path, &err) == SP_OK, "%s", err.message);
    uint64_t spilled_bytes = atomic_load(&spill->written), spill_writes = atomic_load(&spill->writes);
    CHECK(spi_run_collect(&session, 0, &stream, &stream_report, &stream_paths) == SP_OK,
          "streaming collect");
    uint64_t run_bytes = atomic_load(&spill->written) - spilled_bytes;
    uint64_t run_writes = atomic_load(&spill->writes) - spill_writes;
    /* run_stream.c sorts 10 MiB of calls a run (RUN_BYTES); from the
     * second on, on its sorter thread */
    uint64_t per_run = ((uint64_t)10 << 20) / sizeof(spi_run_call);
    uint64_t runs = (stream.event_count + per_run - 1) / per_run;
    CHECK(stream.source, "the spilled session did not stream");
    CHECK(stream.event_count == memory.event_count && stream.event_count > 1200000,
          "%llu streamed calls, %llu in memory", (unsigned long long)stream.event_count,
          (unsigned long long)memory.event_count);
    CHECK(stream_report.open_calls == 1 && memory_report.open_calls == 1, "open calls");
    CHECK(spi_profile_write(&stream, stream_path, &err) == SP_OK, "%s", err.message);
    printf("run_stream_test: %llu calls, %llu bytes of sorted runs written at finalize, "
           "written both ways (%s clock, %zu MiB limit)\n",
           (unsigned long long)stream.event_count, (unsigned long long)run_bytes,
           tsc ? "tsc" : "monotonic", limit_mib);
    /* the runs' compact form: a few bytes a call of this workload */
    CHECK(run_bytes < 8 * stream.event_count, "%llu bytes of runs for %llu calls",
          (unsigned long long)run_bytes, (unsigned long long)stream.event_count);
    CHECK(runs > 1, "%llu calls make one run: no merge tested", (unsigned long long)runs);
    /* with 16 MiB, the main thread's last chunks (it records until the
     * stop) are given back before the last run: that one stays in memory;
     * with 3 MiB its chunks are small, and whether a run fits depends on
     * timing */
    if (limit_mib == 16)
        CHECK(run_writes < runs, "%llu runs, all %llu written", (unsigned long long)runs,
              (unsigned long long)run_writes);

    /* both walks fold the same calls in the same order: the same paths,
     * bit for bit (m2 too: Welford's sum depends on the order) */
    CHECK(memory_paths.status == SP_OK && stream_paths.status == SP_OK &&
              memory_paths.count == stream_paths.count && memory_paths.count > (flat ? 0 : 3),
          "summary paths: %zu in memory, %zu streamed", memory_paths.count, stream_paths.count);
    for (size_t i = 0; i < memory_paths.count && i < stream_paths.count; i++) {
        const spi_call_path *a = &memory_paths.paths[i], *b = &stream_paths.paths[i];
        CHECK(a->region == b->region && a->parent == b->parent && a->count == b->count &&
                  a->recursions == b->recursions && a->total == b->total &&
                  a->exclusive == b->exclusive && a->minimum == b->minimum &&
                  a->maximum == b->maximum && memcmp(&a->m2, &b->m2, sizeof a->m2) == 0 &&
                  a->start_minimum == b->start_minimum && a->end_maximum == b->end_maximum &&
                  a->threads == b->threads && a->other_threads == b->other_threads,
              "summary path %zu differs between the collects", i);
    }
    spi_free(memory_paths.paths);
    spi_free(stream_paths.paths);
    spi_profile_free(&memory);
    spi_profile_free(&stream);
    for (spi_thread *t = copy.threads; t;) {
        spi_thread *next = t->next;
        free(t->head);
        free(t);
        t = next;
    }
    spi_recorder_release(&session);
    return 0;
}
