/*
 * test_counters.c - per-region counters: perf events and LIKWID (fake and
 * real back ends), recorded through the public API and read back by our
 * reader. Usage: test_counters CASE WORKDIR. Each case prints which path
 * ran; it exits 77 (skip) with a reason when the machine cannot run it.
 *
 * The h5py side of the contract (FORMAT.md 1.7) is checked by
 * check_counters.py on the files these cases leave in WORKDIR.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "check.h"
#include "scope_profiler.h"
#include "scope_profiler_results.h"

int check_failures = 0;

#define SKIP 77
/* REQUIRE for int-returning cases: a failed precondition ends the case. */
#define REQUIRE_RET(cond)                                                      \
    do {                                                                       \
        if (!CHECK(cond)) return 1;                                            \
    } while (0)

/* Can this process count a software event at all? Tests skip with the
 * reason instead of failing on a locked-down machine. */
static int perf_permitted(char *why, size_t why_bytes) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.exclude_kernel = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd >= 0) {
        close((int)fd);
        return 1;
    }
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int paranoid = -99;
    if (f) {
        if (fscanf(f, "%d", &paranoid) != 1) paranoid = -99;
        fclose(f);
    }
    snprintf(why, why_bytes, "perf_event_open not permitted (%s; perf_event_paranoid=%d)",
             strerror(errno), paranoid);
    return 0;
}

/* stderr into a file for the duration of a run, to count diagnostics. */
static int saved_stderr = -1;
static void capture_stderr(const char *path) {
    fflush(stderr);
    saved_stderr = dup(2);
    if (!freopen(path, "w", stderr)) perror(path);
}
static void restore_stderr(void) {
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    clearerr(stderr);
}

static int count_lines_with(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

static void busy_ns(int64_t ns) {
    int64_t end = sp_now_ns() + ns;
    volatile uint64_t x = 0;
    while (sp_now_ns() < end) x += 1;
}

/* Find perf record of `region` on `rank`: index or -1. */
static long perf_find(const sp_results *res, uint32_t rank, const char *region) {
    for (size_t i = 0; i < sp_results_perf_count(res); i++) {
        uint32_t r;
        const char *name;
        if (sp_results_perf_record(res, i, &r, &name, NULL, NULL) == SP_OK && r == rank &&
            strcmp(name, region) == 0)
            return (long)i;
    }
    return -1;
}

static int perf_value(const sp_results *res, long record, const char *event, uint64_t *value) {
    size_t n = 0;
    sp_results_perf_record(res, (size_t)record, NULL, NULL, NULL, &n);
    for (size_t c = 0; c < n; c++) {
        const char *name;
        if (sp_results_perf_counter(res, (size_t)record, c, &name, value) == SP_OK &&
            strcmp(name, event) == 0)
            return 1;
    }
    return 0;
}

static sp_results *open_results(const char *path) {
    sp_results *res = NULL;
    char msg[512];
    if (sp_results_open(path, 0, &res, msg, sizeof msg) != SP_OK) {
        fprintf(stderr, "cannot read %s: %s\n", path, msg);
        return NULL;
    }
    return res;
}

static int64_t region_total_ns(const sp_results *res, const char *region) {
    long id = sp_results_region_find(res, region);
    long row = id < 0 ? -1 : sp_results_row_find(res, 0, (size_t)id);
    if (row < 0) return -1;
    const int64_t *d = sp_results_row_durations(res, (size_t)row);
    int64_t total = 0;
    for (uint64_t i = 0; i < sp_results_row_calls(res, (size_t)row); i++) total += d[i];
    return total;
}

/* ---- cases ---------------------------------------------------------------- */

enum { PAGES = 2048 };

static int test_perf_software(void) {
    char why[256];
    if (!perf_permitted(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return SKIP;
    }
    sp_options o;
    sp_options_init(&o);
    o.file_path = "perf_software.h5";
    o.perf_events = "task-clock,page-faults,context-switches";
    REQUIRE_RET(sp_setup_with_options(&o) == SP_OK);
    long page = sysconf(_SC_PAGESIZE);
    sp_region_begin("touch");
    char *mem = mmap(NULL, (size_t)PAGES * (size_t)page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    /* small pages: with transparent huge pages 2048 touches are 4 faults */
    if (mem != MAP_FAILED) madvise(mem, (size_t)PAGES * (size_t)page, MADV_NOHUGEPAGE);
    for (size_t i = 0; mem != MAP_FAILED && i < PAGES; i++) mem[i * (size_t)page] = 1;
    sp_region_end("touch");
    if (mem != MAP_FAILED) munmap(mem, (size_t)PAGES * (size_t)page);
    /* Five busy calls in one region (the per-region total), each also in a
     * region of its own: a sample the scheduler did not interrupt shows
     * task-clock ~ duration even on a loaded machine. */
    for (int i = 0; i < 5; i++) {
        char sample[32];
        snprintf(sample, sizeof sample, "busy.sample.%d", i);
        sp_region_begin("busy");
        sp_region_begin(sample);
        busy_ns(20 * 1000 * 1000);
        sp_region_end(sample);
        sp_region_end("busy");
    }
    sp_region_begin("outer/inner");
    sp_region_end("outer/inner");
    REQUIRE_RET(sp_finalize() == SP_OK);

    sp_results *res = open_results("perf_software.h5");
    REQUIRE_RET(res != NULL);
    long touch = perf_find(res, 0, "touch"), busy = perf_find(res, 0, "busy");
    CHECK(touch >= 0);
    CHECK(busy >= 0);
    CHECK(perf_find(res, 0, "outer|inner") >= 0); /* '/' maps to '|' */
    uint64_t faults = 0, task_ns = 0, switches = 0;
    int64_t calls = 0;
    if (touch >= 0) {
        CHECK(perf_value(res, touch, "page-faults", &faults));
        CHECK(perf_value(res, touch, "context-switches", &switches));
        printf("touch: %d pages -> %llu page faults\n", PAGES, (unsigned long long)faults);
        CHECK(faults >= PAGES / 2);
    }
    if (busy >= 0) {
        sp_results_perf_record(res, (size_t)busy, NULL, NULL, &calls, NULL);
        CHECK_EQ_INT(calls, 5);
        CHECK(perf_value(res, busy, "task-clock", &task_ns));
        int64_t wall = region_total_ns(res, "busy");
        printf("busy: task-clock %.3f ms, region duration %.3f ms\n", task_ns / 1e6, wall / 1e6);
        /* CPU time of one thread cannot exceed its wall time: a hard bound. */
        CHECK(wall > 0 && (double)task_ns < 1.2 * (double)wall);
        /* What holds on any machine, loaded or not: each sample of the busy
         * loop ran on the CPU for some time, and never for longer than it
         * took (one thread). How close the two are depends on the load: that
         * ratio is a measurement, not a property, and is no test's business. */
        for (int i = 0; i < 5; i++) {
            char sample[32];
            snprintf(sample, sizeof sample, "busy.sample.%d", i);
            long rec = perf_find(res, 0, sample);
            uint64_t sample_ns = 0;
            int64_t sample_wall = region_total_ns(res, sample);
            CHECK(rec >= 0 && perf_value(res, rec, "task-clock", &sample_ns));
            CHECK(sample_wall > 0 && sample_ns > 0 && (double)sample_ns < 1.2 * (double)sample_wall);
        }
    }
    sp_results_close(res);
    printf("path: Linux perf software events (task-clock, page-faults, context-switches)\n");
    return 0;
}

static int test_perf_unavailable(void) {
    char why[256];
    if (!perf_permitted(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return SKIP;
    }
    /* Is `cycles` countable here? Then the "reported and skipped" half
     * cannot be shown with it, only that it is recorded. */
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.exclude_kernel = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    int have_cycles = fd >= 0;
    if (fd >= 0) close((int)fd);

    sp_options o;
    sp_options_init(&o);
    o.file_path = "perf_unavailable.h5";
    o.perf_events = "cycles,task-clock,no-such-event";
    capture_stderr("perf_unavailable.stderr");
    int setup = sp_setup_with_options(&o);
    for (int i = 0; i < 3; i++) {
        sp_region_begin("work");
        busy_ns(1000 * 1000);
        sp_region_end("work");
    }
    int fin = sp_finalize();
    restore_stderr();
    CHECK_EQ_INT(setup, SP_OK);
    CHECK_EQ_INT(fin, SP_OK);
    int unknown = count_lines_with("perf_unavailable.stderr", "no-such-event");
    int cycles = count_lines_with("perf_unavailable.stderr", "cannot count, skipped: cycles");
    CHECK_EQ_INT(unknown, 1);
    CHECK_EQ_INT(cycles, have_cycles ? 0 : 1);

    sp_results *res = open_results("perf_unavailable.h5");
    REQUIRE_RET(res != NULL);
    long work = perf_find(res, 0, "work");
    REQUIRE_RET(work >= 0);
    size_t n = 0;
    sp_results_perf_record(res, (size_t)work, NULL, NULL, NULL, &n);
    uint64_t v = 0;
    CHECK(perf_value(res, work, "task-clock", &v) && v > 0);
    CHECK(!perf_value(res, work, "no-such-event", &v));
    CHECK_EQ_INT(perf_value(res, work, "cycles", &v), have_cycles);
    CHECK_EQ_INT(n, have_cycles ? 2 : 1);
    sp_results_close(res);
    printf("path: cycles %s on this machine (%s)\n",
           have_cycles ? "countable: recorded" : "NOT countable: reported once and skipped",
           have_cycles ? "hardware counters" : "no hardware counters, e.g. a VM");
    return 0;
}

enum { THREADS = 4, THREAD_CALLS = 100 };

static void *thread_body(void *arg) {
    (void)arg;
    for (int i = 0; i < THREAD_CALLS; i++) {
        sp_region_begin("threaded");
        /* 100 us: long enough that the counter reads around each region
         * (outside its duration, inside its task-clock) stay a few % of
         * it; at 10 us they made task-clock exceed the durations by 25%. */
        busy_ns(100 * 1000);
        sp_region_end("threaded");
    }
    return NULL;
}

static int test_perf_threads(void) {
    char why[256];
    if (!perf_permitted(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return SKIP;
    }
    sp_options o;
    sp_options_init(&o);
    o.file_path = "perf_threads.h5";
    o.perf_events = "task-clock,page-faults";
    REQUIRE_RET(sp_setup_with_options(&o) == SP_OK);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, thread_body, NULL);
    for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
    REQUIRE_RET(sp_finalize() == SP_OK);
    sp_results *res = open_results("perf_threads.h5");
    REQUIRE_RET(res != NULL);
    long rec = perf_find(res, 0, "threaded");
    REQUIRE_RET(rec >= 0);
    int64_t calls = 0;
    sp_results_perf_record(res, (size_t)rec, NULL, NULL, &calls, NULL);
    CHECK_EQ_INT(calls, THREADS * THREAD_CALLS);
    uint64_t task_ns = 0;
    CHECK(perf_value(res, rec, "task-clock", &task_ns));
    int64_t wall = region_total_ns(res, "threaded");
    printf("threaded: task-clock %.3f ms over %d threads, durations %.3f ms\n", task_ns / 1e6,
           THREADS, wall / 1e6);
    /* Summed over threads, so of the order of the summed durations; 4
     * threads on fewer CPUs wait inside regions (durations grow, CPU time
     * does not), so only the upper bound is tight. */
    CHECK(wall > 0 && (double)task_ns > 0.1 * (double)wall && (double)task_ns < 1.2 * (double)wall);
    sp_results_close(res);
    printf("path: Linux perf software events, %d threads\n", THREADS);
    return 0;
}

static void *fake_thread_body(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        sp_region_begin("io/write");
        sp_region_end("io/write");
    }
    return NULL;
}

/* Record with the fake LIKWID back end: "solve" 5 times on the main
 * thread (hardware thread slot 0), "io/write" 3 times on a second thread
 * (slot 1). Returns the setup and finalize statuses. */
static void record_fake_likwid(const char *file, const char *stderr_file, int *setup,
                               int *fin) {
    setenv("SCOPE_PROFILER_LIKWID_FAKE", "1", 1);
    setenv("LIKWID_TEST_MARKER", "from-test", 1);
    sp_options o;
    sp_options_init(&o);
    o.file_path = file;
    o.likwid = 1;
    capture_stderr(stderr_file);
    *setup = sp_setup_with_options(&o);
    for (int i = 0; i < 5; i++) {
        sp_region_begin("solve");
        sp_region_end("solve");
    }
    pthread_t t;
    pthread_create(&t, NULL, fake_thread_body, NULL);
    pthread_join(t, NULL);
    *fin = sp_finalize();
    restore_stderr();
}

/* The storage path with the fake marker back end: known values written
 * to rank0/likwid; check_counters.py verifies them with h5py. */
static int test_likwid_fake(void) {
    int setup = -1, fin = -1;
    record_fake_likwid("likwid_fake.h5", "likwid_fake.stderr", &setup, &fin);
    CHECK_EQ_INT(setup, SP_OK);
    CHECK_EQ_INT(fin, SP_OK);
    CHECK_EQ_INT(count_lines_with("likwid_fake.stderr", "LIKWID"), 0);
    sp_results *res = open_results("likwid_fake.h5");
    REQUIRE_RET(res != NULL);
    CHECK(sp_results_region_find(res, "solve") >= 0); /* timings unaffected */
    sp_results_close(res);
    printf("path: FAKE LIKWID marker back end (storage and read-back; h5py checks values)\n");
    return 0;
}

#define CHECK_EQ_DBL(actual, expected)                                         \
    do {                                                                       \
        double a_ = (actual), e_ = (expected);                                 \
        if (a_ != e_) {                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%.17g vs %.17g)\n", \
                    __FILE__, __LINE__, #actual, #expected, a_, e_);           \
            check_failures++;                                                  \
        }                                                                      \
    } while (0)

/* One fake LIKWID record read back through the public API, against the
 * formulas of counters/likwid_fake.c for calls[] per hardware thread. The
 * expected doubles are computed with the same operations as the back end,
 * so equality is exact (HDF5 stores f8 unchanged). */
static void check_fake_record(const sp_results *res, size_t i, const char *want_tag,
                              const int64_t want_calls[2]) {
    uint32_t rank = 99;
    const char *tag = NULL, *group = NULL, *source = NULL;
    int64_t id = 0;
    size_t threads = 0;
    CHECK_EQ_INT(sp_results_likwid_record(res, i, &rank, &tag, &group, &id, &source, &threads),
                 SP_OK);
    CHECK_EQ_INT(rank, 0);
    REQUIRE(tag && group && source);
    CHECK(strcmp(tag, want_tag) == 0);
    CHECK(strcmp(group, "FAKE") == 0);
    CHECK_EQ_INT(id, 7);
    CHECK(strcmp(source, "marker_api") == 0);
    CHECK_EQ_INT(threads, 2);
    REQUIRE(threads == 2);
    const int64_t *cpus = sp_results_likwid_cpus(res, i);
    const int64_t *calls = sp_results_likwid_call_counts(res, i);
    const double *times = sp_results_likwid_times(res, i);
    REQUIRE(cpus && calls && times);
    static const char *const events[] = {"FAKE_EV0", "FAKE_EV1"};
    static const char *const counters[] = {"PMC0", "PMC1"};
    static const char *const metrics[] = {"Runtime (RDTSC) [s]", "FAKE ratio"};
    CHECK_EQ_INT(sp_results_likwid_event_count(res, i), 2);
    CHECK_EQ_INT(sp_results_likwid_metric_count(res, i), 2);
    const double *ev[2] = {NULL, NULL}, *mv[2] = {NULL, NULL};
    for (size_t k = 0; k < 2; k++) {
        const char *name = NULL, *counter = NULL;
        CHECK_EQ_INT(sp_results_likwid_event(res, i, k, &name, &counter, &ev[k]), SP_OK);
        CHECK(name && strcmp(name, events[k]) == 0);
        CHECK(counter && strcmp(counter, counters[k]) == 0);
        name = NULL;
        CHECK_EQ_INT(sp_results_likwid_metric(res, i, k, &name, &mv[k]), SP_OK);
        CHECK(name && strcmp(name, metrics[k]) == 0);
    }
    REQUIRE(ev[0] && ev[1] && mv[0] && mv[1]);
    for (size_t t = 0; t < 2; t++) {
        double c = (double)want_calls[t];
        CHECK_EQ_INT(cpus[t], t);
        CHECK_EQ_INT(calls[t], want_calls[t]);
        CHECK_EQ_DBL(times[t], 0.001 * c);
        CHECK_EQ_DBL(ev[0][t], 1000.0 * 1.0 * c + (double)t);
        CHECK_EQ_DBL(ev[1][t], 1000.0 * 2.0 * c + (double)t);
        CHECK_EQ_DBL(mv[0][t], 0.001 * c);
        CHECK_EQ_DBL(mv[1][t], want_calls[t] ? ev[1][t] / ev[0][t] : 0.0);
    }
    /* Out of range: the documented error, nothing written. */
    const char *untouched = "x";
    const double *v = NULL;
    CHECK_EQ_INT(sp_results_likwid_event(res, i, 2, &untouched, NULL, &v), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(sp_results_likwid_metric(res, i, 2, &untouched, &v), SP_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(untouched, "x") == 0 && v == NULL);
}

/* The fake back end's file read back through the public results API with
 * the exact known values (two hardware threads, two regions). */
static int test_likwid_fake_read(void) {
    int setup = -1, fin = -1;
    record_fake_likwid("likwid_fake_read.h5", "likwid_fake_read.stderr", &setup, &fin);
    CHECK_EQ_INT(setup, SP_OK);
    CHECK_EQ_INT(fin, SP_OK);
    sp_results *res = open_results("likwid_fake_read.h5");
    REQUIRE_RET(res != NULL);
    /* Regions by group name within a rank: "io|write" before "solve". */
    CHECK_EQ_INT(sp_results_likwid_count(res), 2);
    if (sp_results_likwid_count(res) == 2) {
        check_fake_record(res, 0, "io/write", (const int64_t[2]){0, 3});
        check_fake_record(res, 1, "solve", (const int64_t[2]){5, 0});
    }
    int marker = 0;
    for (size_t i = 0; i < sp_results_likwid_env_count(res); i++) {
        uint32_t rank = 99;
        const char *name = NULL, *value = NULL;
        CHECK_EQ_INT(sp_results_likwid_env(res, i, &rank, &name, &value), SP_OK);
        if (name && strcmp(name, "LIKWID_TEST_MARKER") == 0) {
            marker++;
            CHECK_EQ_INT(rank, 0);
            CHECK(value && strcmp(value, "from-test") == 0);
        }
    }
    CHECK_EQ_INT(marker, 1);
    CHECK_EQ_INT(sp_results_perf_count(res), 0);
    /* Out of range and NULL: documented empty values and errors. */
    CHECK_EQ_INT(sp_results_likwid_record(res, 2, NULL, NULL, NULL, NULL, NULL, NULL),
                 SP_ERR_INVALID_ARGUMENT);
    CHECK(sp_results_likwid_cpus(res, 2) == NULL);
    CHECK(sp_results_likwid_times(res, 2) == NULL);
    CHECK(sp_results_likwid_call_counts(res, 2) == NULL);
    CHECK_EQ_INT(sp_results_likwid_event_count(res, 2), 0);
    CHECK_EQ_INT(sp_results_likwid_metric_count(res, 2), 0);
    CHECK_EQ_INT(sp_results_likwid_env(res, sp_results_likwid_env_count(res), NULL, NULL, NULL),
                 SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(sp_results_likwid_count(NULL), 0);
    CHECK_EQ_INT(sp_results_likwid_env_count(NULL), 0);
    CHECK_EQ_INT(sp_results_likwid_record(NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL),
                 SP_ERR_INVALID_ARGUMENT);
    sp_results_close(res);
    printf("path: FAKE LIKWID marker back end, read back through sp_results_likwid_*\n");
    return 0;
}

/* Files damaged by check_likwid.py (h5py), listed in damaged.txt as
 * "FILE<TAB>corrupt" or "FILE<TAB>ok" (a tolerated variation). A damaged
 * group must give SP_ERR_CORRUPT with a message naming the file and the
 * group, and no results object. */
static int test_likwid_damaged(void) {
    FILE *list = fopen("damaged.txt", "r");
    if (!list) {
        printf("SKIP: damaged.txt missing (this case is run by check_likwid.py)\n");
        return SKIP;
    }
    char line[512];
    int files = 0;
    while (fgets(line, sizeof line, list)) {
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = '\0';
        bool want_ok = strncmp(tab + 1, "ok", 2) == 0;
        files++;
        sp_results *res = (sp_results *)1;
        char msg[1024];
        int st = sp_results_open(line, 0, &res, msg, sizeof msg);
        printf("%s: %s: %s\n", line, sp_error_string(st), msg);
        if (want_ok) {
            CHECK_EQ_INT(st, SP_OK);
            if (st != SP_OK) continue;
            /* Missing tag and counter_names on "io|write" (record 0). */
            const char *tag = NULL, *counter = "x";
            sp_results_likwid_record(res, 0, NULL, &tag, NULL, NULL, NULL, NULL);
            CHECK(tag && strcmp(tag, "io/write") == 0);
            CHECK_EQ_INT(sp_results_likwid_event(res, 0, 0, NULL, &counter, NULL), SP_OK);
            CHECK(counter == NULL);
            sp_results_close(res);
        } else {
            CHECK_EQ_INT(st, SP_ERR_CORRUPT);
            CHECK(res == NULL);
            CHECK(strstr(msg, line) != NULL);
            CHECK(strstr(msg, "rank0/likwid") != NULL);
        }
    }
    fclose(list);
    CHECK(files > 0);
    printf("path: %d damaged or varied rank0/likwid groups opened\n", files);
    return 0;
}

/* The job file of check_mpi_perf.py (mpi_perf.c, 2 ranks), read back by
 * our reader: perf records of both ranks with their exact calls. */
static int test_mpi_perf_read(void) {
    if (access("mpi_perf.h5", R_OK) != 0) {
        printf("SKIP: mpi_perf.h5 missing (this case is run by check_mpi_perf.py)\n");
        return SKIP;
    }
    sp_results *res = open_results("mpi_perf.h5");
    REQUIRE_RET(res != NULL);
    CHECK_EQ_INT(sp_results_rank_count(res), 2);
    CHECK_EQ_INT(sp_results_perf_count(res), 4);
    for (uint32_t rank = 0; rank < 2; rank++) {
        char own[32];
        snprintf(own, sizeof own, "rank.%u", rank);
        const struct { const char *region; int64_t calls; } want[] = {
            {"work", 2 * (int64_t)(rank + 1)}, {own, (int64_t)rank + 1}};
        for (size_t k = 0; k < 2; k++) {
            long rec = perf_find(res, rank, want[k].region);
            CHECK(rec >= 0);
            if (rec < 0) continue;
            int64_t calls = -1;
            size_t n = 0;
            sp_results_perf_record(res, (size_t)rec, NULL, NULL, &calls, &n);
            CHECK_EQ_INT(calls, want[k].calls);
            CHECK_EQ_INT(n, 2);
            uint64_t task = 0, faults = 0;
            CHECK(perf_value(res, rec, "task-clock", &task) && task > 0);
            CHECK(perf_value(res, rec, "page-faults", &faults));
            printf("rank %u %-7s calls %lld task-clock %llu ns\n", rank, want[k].region,
                   (long long)calls, (unsigned long long)task);
        }
    }
    CHECK(perf_find(res, 0, "rank.1") < 0); /* each rank only its own */
    CHECK(perf_find(res, 1, "rank.0") < 0);
    sp_results_close(res);
    printf("path: MPI job (2 ranks) perf events read back by our reader\n");
    return 0;
}

/* One "solve" call in a session that asks for real LIKWID, stderr into
 * `stem`.stderr, the profile into `stem`.h5. SP_OK from both setup and
 * finalize is checked: a LIKWID problem must never fail the run. */
static int record_asking_for_likwid(const char *stem) {
    char h5[128], err[128];
    snprintf(h5, sizeof h5, "%s.h5", stem);
    snprintf(err, sizeof err, "%s.stderr", stem);
    unsetenv("SCOPE_PROFILER_LIKWID_FAKE");
    sp_options o;
    sp_options_init(&o);
    o.file_path = h5;
    o.likwid = 1;
    capture_stderr(err);
    int setup = sp_setup_with_options(&o);
    sp_region_begin("solve");
    sp_region_end("solve");
    int fin = sp_finalize();
    restore_stderr();
    CHECK_EQ_INT(setup, SP_OK);
    CHECK_EQ_INT(fin, SP_OK);
    return 0;
}

/* The profile `stem`.h5 holds the "solve" region. */
static int check_solve_recorded(const char *stem) {
    char h5[128];
    snprintf(h5, sizeof h5, "%s.h5", stem);
    sp_results *res = open_results(h5);
    REQUIRE_RET(res != NULL);
    CHECK(sp_results_region_find(res, "solve") >= 0);
    sp_results_close(res);
    return 0;
}

/* Asking for LIKWID outside likwid-perfctr (or in a build without it):
 * one notice, the run goes on, no likwid group. */
static int test_likwid_notice(void) {
    unsetenv("LIKWID_EVENTS");
    unsetenv("LIKWID_FILEPATH");
    record_asking_for_likwid("likwid_notice");
    CHECK_EQ_INT(count_lines_with("likwid_notice.stderr", "LIKWID counters off"), 1);
    check_solve_recorded("likwid_notice");
    printf("path: real LIKWID back end refused (notice printed, timings recorded)\n");
    return 0;
}

/* liblikwid is loaded only when a run asks for LIKWID, and a library that
 * cannot be loaded (a compute node without LIKWID) turns LIKWID off with one
 * line naming the file; the run records as usual. */
static int test_likwid_unloadable(void) {
    setenv("LIKWID_EVENTS", "CLOCK", 1);
    setenv("LIKWID_FILEPATH", "likwid_unloadable.marker", 1);
    setenv("SCOPE_PROFILER_LIKWID_LIBRARY", "/nonexistent/liblikwid.so.5", 1);
    record_asking_for_likwid("likwid_unloadable");
    unsetenv("SCOPE_PROFILER_LIKWID_LIBRARY");
    unsetenv("LIKWID_EVENTS");
    unsetenv("LIKWID_FILEPATH");
    if (count_lines_with("likwid_unloadable.stderr", "built without LIKWID") == 1) {
        printf("SKIP: this build has no LIKWID back end\n");
        return SKIP;
    }
    CHECK_EQ_INT(count_lines_with("likwid_unloadable.stderr",
                                  "cannot load the LIKWID library (/nonexistent/liblikwid.so.5)"),
                 1);
    check_solve_recorded("likwid_unloadable");
    printf("path: LIKWID library not loadable (notice printed, timings recorded)\n");
    return 0;
}

/* Real LIKWID: meaningful only under `likwid-perfctr -m`; run_likwid_real.py
 * starts it that way and skips when the machine refuses. */
static int test_likwid_real(void) {
    if (!getenv("LIKWID_EVENTS")) {
        printf("SKIP: not started under likwid-perfctr -m\n");
        return SKIP;
    }
    sp_options o;
    sp_options_init(&o);
    o.file_path = "likwid_real.h5";
    o.likwid = 1;
    REQUIRE_RET(sp_setup_with_options(&o) == SP_OK);
    for (int i = 0; i < 10; i++) {
        sp_region_begin("solve");
        busy_ns(1000 * 1000);
        sp_region_end("solve");
    }
    REQUIRE_RET(sp_finalize() == SP_OK);
    printf("path: REAL LIKWID marker API\n");
    return 0;
}

static const struct {
    const char *name;
    int (*run)(void);
} cases[] = {
    {"perf_software", test_perf_software},
    {"perf_unavailable", test_perf_unavailable},
    {"perf_threads", test_perf_threads},
    {"likwid_fake", test_likwid_fake},
    {"likwid_notice", test_likwid_notice},
    {"likwid_real", test_likwid_real},
    {"likwid_unloadable", test_likwid_unloadable},
    {"likwid_fake_read", test_likwid_fake_read},
    {"likwid_damaged", test_likwid_damaged},
    {"mpi_perf_read", test_mpi_perf_read},
};

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_counters CASE WORKDIR\n");
        return 2;
    }
    mkdir(argv[2], 0777);
    if (chdir(argv[2]) != 0) {
        perror(argv[2]);
        return 2;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, argv[1]) != 0) continue;
        int rc = cases[i].run();
        if (rc == SKIP) return SKIP;
        return check_failures || rc ? 1 : 0;
    }
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
}
