/*
 * test_faults.c - the profiler inside a program that does unusual things:
 * paths that cannot be published, tiny buffer limits, fork() while threads
 * record, recording from a signal handler. One ctest entry per case; each
 * runs in its own empty working directory (argv[2]).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <scope_profiler.h>
#include <scope_profiler_results.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int check_failures = 0;
#define SKIP 77

/* Files in the working directory whose name starts with '.' and ends in
 * ".tmp": a temporary sibling left behind. */
static int temp_files_left(void) {
    DIR *dir = opendir(".");
    int count = 0;
    for (struct dirent *e; dir && (e = readdir(dir));) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' && len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0) count++;
    }
    if (dir) closedir(dir);
    return count;
}

/* Paths that can never be published are refused by sp_setup, not lost at
 * finalize; so are option values outside their documented range. */
static int test_setup_refusals(void) {
    CHECK_EQ_INT(sp_setup(""), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(sp_setup("out/"), SP_ERR_INVALID_ARGUMENT);
    char name[400];
    memset(name, 'n', 300);
    strcpy(name + 300, ".h5");
    CHECK_EQ_INT(sp_setup(name), SP_ERR_INVALID_ARGUMENT);
    sp_options o;
    sp_options_init(&o);
    o.file_path = "fine.h5";
    o.write_file = 5;
    CHECK_EQ_INT(sp_setup_with_options(&o), SP_ERR_INVALID_ARGUMENT);
    o.write_file = 1;
    o.quiet = 2;
    CHECK_EQ_INT(sp_setup_with_options(&o), SP_ERR_INVALID_ARGUMENT);
    o.quiet = 1;
    o.clock = (sp_clock)9;
    CHECK_EQ_INT(sp_setup_with_options(&o), SP_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(sp_is_active(), 0);
    /* a legal name of 253 bytes: its temporary sibling must still fit */
    memset(name, 'l', 250);
    strcpy(name + 250, ".h5");
    REQUIRE_INT(sp_setup(name) == SP_OK);
    sp_region_begin("work");
    sp_region_end("work");
    CHECK_EQ_INT(sp_finalize(), SP_OK);
    struct stat st;
    CHECK(stat(name, &st) == 0 && S_ISREG(st.st_mode));
    CHECK_EQ_INT(temp_files_left(), 0);
    return 0;
}

/* Publishing renames over the target: a FIFO or a device node must never be
 * replaced, whether it exists at setup or appears before finalize. */
static int test_special_targets(void) {
    REQUIRE_INT(mkfifo("fifo", 0600) == 0);
    CHECK_EQ_INT(sp_setup("fifo"), SP_ERR_OUTPUT);
    CHECK_EQ_INT(sp_is_active(), 0);
    bool root = geteuid() == 0;
    if (root && mknod("null_device", S_IFCHR | 0666, makedev(1, 3)) == 0) {
        CHECK_EQ_INT(sp_setup("null_device"), SP_ERR_OUTPUT);
    } else {
        printf("not root: the device-node case is covered by the FIFO only\n");
    }
    REQUIRE_INT(sp_setup("late") == SP_OK);
    sp_region_begin("work");
    sp_region_end("work");
    REQUIRE_INT(mkfifo("late", 0600) == 0); /* appears while the run goes on */
    CHECK_EQ_INT(sp_finalize(), SP_ERR_OUTPUT);
    struct stat st;
    CHECK(stat("fifo", &st) == 0 && S_ISFIFO(st.st_mode));
    CHECK(stat("late", &st) == 0 && S_ISFIFO(st.st_mode));
    if (root) CHECK(stat("null_device", &st) != 0 || S_ISCHR(st.st_mode));
    CHECK_EQ_INT(temp_files_left(), 0);
    return 0;
}

/* A buffer limit far below one chunk still records what fits, and every
 * parent id in the file names a recorded call (children of dropped calls
 * become roots). */
static int test_limit_valid_file(void) {
    sp_options o;
    sp_options_init(&o);
    o.file_path = "limited.h5";
    o.quiet = 1;
    o.buffer_limit_bytes = 16 << 10; /* 16 KiB: about 500 calls */
    o.overflow = SP_OVERFLOW_DROP;
    o.clock = SP_CLOCK_MONOTONIC;
    REQUIRE_INT(sp_setup_with_options(&o) == SP_OK);
    for (int outer = 0; outer < 20; outer++) {
        sp_region_begin("outer");
        for (int inner = 0; inner < 100; inner++) {
            sp_region_begin("inner");
            sp_region_end("inner");
        }
        sp_region_end("outer");
    }
    CHECK_EQ_INT(sp_finalize(), SP_ERR_BUFFER_LIMIT);
    sp_results *res = NULL;
    REQUIRE_INT(sp_results_open("limited.h5", 0, &res, NULL, 0) == SP_OK);
    size_t rows = sp_results_row_count(res);
    uint64_t calls = 0;
    /* every call id of the file, then every parent id against them */
    int64_t *ids = NULL;
    size_t id_count = 0;
    for (size_t r = 0; r < rows; r++) {
        sp_row_stats st;
        sp_results_row_stats(res, r, &st);
        const int64_t *call_ids = sp_results_row_call_ids(res, r);
        ids = realloc(ids, (id_count + st.count + 1) * sizeof *ids);
        for (uint64_t k = 0; k < st.count; k++) ids[id_count++] = call_ids[k];
        calls += st.count;
    }
    CHECK(calls > 100 && calls < 2020);
    size_t dangling = 0;
    for (size_t r = 0; r < rows; r++) {
        sp_row_stats st;
        sp_results_row_stats(res, r, &st);
        const int64_t *parents = sp_results_row_parent_ids(res, r);
        for (uint64_t k = 0; k < st.count; k++) {
            if (parents[k] < 0) continue;
            bool found = false;
            for (size_t i = 0; i < id_count && !found; i++) found = ids[i] == parents[k];
            if (!found) dangling++;
        }
    }
    CHECK_EQ_INT(dangling, 0);
    printf("limit 16 KiB: %llu of 2020 calls recorded, no dangling parent\n",
           (unsigned long long)calls);
    free(ids);
    sp_results_close(res);
    return 0;
}

/* fork() while threads attach and record: no child blocks in its first
 * recording call, none writes the parent's output, and a child that sets up
 * again profiles itself.
 *
 * The children that set up again allocate (HDF5, the session), so they are
 * forked while the recording threads wait at a gate: a child may only call
 * malloc if no other thread was inside the allocator at the fork. glibc's
 * malloc guarantees that itself, but the AddressSanitizer allocator of GCC
 * 12 does not, and such a child then hangs on an allocator lock that a
 * recording thread held (the CI's ASan stage saw it). The other children
 * are forked at any moment: they must not allocate at all. */
static atomic_int stop_workers;
static atomic_int workers_started;
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_changed = PTHREAD_COND_INITIALIZER;
static int gate_closed, threads_inside;

static void gate_enter(void) {
    pthread_mutex_lock(&gate_lock);
    while (gate_closed) pthread_cond_wait(&gate_changed, &gate_lock);
    threads_inside++;
    pthread_mutex_unlock(&gate_lock);
}

static void gate_leave(void) {
    pthread_mutex_lock(&gate_lock);
    if (--threads_inside == 0) pthread_cond_broadcast(&gate_changed);
    pthread_mutex_unlock(&gate_lock);
}

/* Closed: every recording thread waits outside the gate, none allocates. */
static void gate_set(int closed) {
    pthread_mutex_lock(&gate_lock);
    gate_closed = closed;
    while (closed && threads_inside > 0) pthread_cond_wait(&gate_changed, &gate_lock);
    pthread_cond_broadcast(&gate_changed);
    pthread_mutex_unlock(&gate_lock);
}

/* Records until stop_workers; with a non-NULL arg (a spawner's short-lived
 * thread, which runs inside its spawner's pass of the gate) only that many
 * iterations, without entering the gate itself. */
static void *worker(void *arg) {
    int limit = arg ? *(const int *)arg : 0;
    if (!arg) atomic_fetch_add(&workers_started, 1);
    for (int i = 0; !atomic_load(&stop_workers) && (!limit || i < limit); i++) {
        if (!arg) gate_enter();
        /* a new thread attaches under the session lock in its first call */
        sp_region_begin("worker.call");
        sp_region_begin("worker.inner");
        sp_region_end("worker.inner");
        sp_region_end("worker.call");
        if (!arg) gate_leave();
        usleep(10); /* keep the parent small: every fork copies its page tables */
    }
    return NULL;
}

/* Threads that attach, record a little and exit, one after the other. */
static void *spawner(void *arg) {
    (void)arg;
    static const int short_life = 20;
    atomic_fetch_add(&workers_started, 1);
    while (!atomic_load(&stop_workers)) {
        gate_enter(); /* the thread's whole life, exit included */
        pthread_t t;
        if (pthread_create(&t, NULL, worker, (void *)&short_life) == 0) pthread_join(t, NULL);
        gate_leave();
        usleep(200);
    }
    return NULL;
}

static int test_fork_while_recording(void) {
    REQUIRE_INT(sp_setup("parent.h5") == SP_OK);
    pthread_t threads[2];
    pthread_create(&threads[0], NULL, worker, NULL);
    pthread_create(&threads[1], NULL, spawner, NULL);
    while (atomic_load(&workers_started) < 2) usleep(100);
    int children = 200, failed = 0;
    for (int i = 0; i < children; i++) {
        bool sets_up_again = i % 100 == 0;
        if (sets_up_again) gate_set(1);
        pid_t pid = fork();
        if (pid != 0 && sets_up_again) gate_set(0);
        if (pid == 0) {
            alarm(20); /* a deadlocked child dies loudly instead of hanging */
            int bad = 0;
            bad |= sp_is_active() != 0;
            bad |= sp_region_begin("child.call") != SP_OK;
            bad |= sp_region_end("child.call") != SP_OK;
            bad |= sp_finalize() != SP_ERR_NOT_ACTIVE;
            if (sets_up_again) { /* a child may profile itself */
                char path[64];
                snprintf(path, sizeof path, "child_%d.h5", i);
                sp_options o;
                sp_options_init(&o);
                o.file_path = path;
                o.quiet = 1;
                bad |= sp_setup_with_options(&o) != SP_OK;
                sp_region_begin("child.own");
                sp_region_end("child.own");
                bad |= sp_finalize() != SP_OK;
            }
            _exit(bad);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed++;
    }
    atomic_store(&stop_workers, 1);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    sp_region_begin("parent.after");
    sp_region_end("parent.after");
    CHECK_EQ_INT(sp_finalize(), SP_OK);
    CHECK_EQ_INT(failed, 0);
    sp_results *res = NULL;
    REQUIRE_INT(sp_results_open("parent.h5", 0, &res, NULL, 0) == SP_OK);
    CHECK(sp_results_region_find(res, "child.call") < 0);
    CHECK(sp_results_region_find(res, "parent.after") >= 0);
    sp_results_close(res);
    REQUIRE_INT(sp_results_open("child_100.h5", 0, &res, NULL, 0) == SP_OK);
    CHECK(sp_results_region_find(res, "child.own") >= 0);
    CHECK(sp_results_region_find(res, "worker.call") < 0);
    sp_results_close(res);
    printf("%d forks while threads recorded: no child blocked or wrote the parent's file\n",
           children);
    return 0;
}

/* SIGALRM every 100 us records from its handler while the main loop
 * records: the program never aborts; the handler's calls that interrupt a
 * recording call are refused (SP_ERR_UNSUPPORTED), every other one is in
 * the file, and the main loop's count is exact. */
static int handler_region = -1;
static volatile sig_atomic_t handled = 0, refused = 0;

static void on_alarm(int sig) {
    (void)sig;
    int saved = errno;
    if (sp_region_begin_n("in.handler", 10) != SP_OK) {
        refused++;
    } else {
        sp_end(handler_region);
        handled++;
    }
    errno = saved;
}

static int test_signal_handler_records(void) {
    sp_options o;
    sp_options_init(&o);
    o.file_path = "signals.h5";
    o.quiet = 1;
    REQUIRE_INT(sp_setup_with_options(&o) == SP_OK);
    handler_region = sp_region("in.handler");
    sp_region_begin_n("in.handler", 10); /* cached by name on this thread */
    sp_end(handler_region);
    int loop = sp_region("main.loop");
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval timer = {{0, 100}, {0, 100}};
    setitimer(ITIMER_REAL, &timer, NULL);
    const long pairs = 3000000;
    for (long i = 0; i < pairs; i++) {
        sp_begin(loop);
        sp_end(loop);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    CHECK_EQ_INT(sp_finalize(), SP_OK);
    sp_results *res = NULL;
    REQUIRE_INT(sp_results_open("signals.h5", 0, &res, NULL, 0) == SP_OK);
    uint64_t loop_calls = 0, handler_calls = 0;
    for (size_t r = 0; r < sp_results_row_count(res); r++) {
        sp_row_stats st;
        sp_results_row_stats(res, r, &st);
        const char *name = sp_results_region_name(res, sp_results_row_region(res, r));
        if (strcmp(name, "main.loop") == 0) loop_calls += st.count;
        if (strcmp(name, "in.handler") == 0) handler_calls += st.count;
    }
    sp_results_close(res);
    CHECK_EQ_INT(loop_calls, pairs);
    CHECK_EQ_INT(handler_calls, handled + 1);
    CHECK(handled > 0);
    printf("signals: %d handler calls recorded, %d refused inside a recording call\n",
           (int)handled, (int)refused);
    return 0;
}

/* Disk full at finalize (a small file system mounted by check_disk_full.py
 * at $SP_TEST_FULL_DIR): SP_ERR_OUTPUT naming the system's reason, the
 * previous file intact, no temporary left, and the program goes on to exit
 * normally (HDF5's exit handler once crashed on a half-closed file). */
static int test_disk_full(void) {
    const char *dir = getenv("SP_TEST_FULL_DIR");
    if (!dir) {
        printf("SKIP: run through check_disk_full.py (needs a small mounted file system)\n");
        return SKIP;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/run.h5", dir);
    sp_options o;
    sp_options_init(&o);
    o.file_path = path;
    o.quiet = 1;
    REQUIRE_INT(sp_setup_with_options(&o) == SP_OK);
    sp_region_begin("small");
    sp_region_end("small");
    REQUIRE_INT(sp_finalize() == SP_OK);
    struct stat before;
    REQUIRE_INT(stat(path, &before) == 0);
    REQUIRE_INT(sp_setup_with_options(&o) == SP_OK);
    for (long i = 0; i < 2000000; i++) {
        sp_region_begin(i % 2 ? "a" : "b");
        sp_region_end(i % 2 ? "a" : "b");
    }
    CHECK_EQ_INT(sp_finalize(), SP_ERR_OUTPUT);
    struct stat after;
    CHECK(stat(path, &after) == 0 && after.st_size == before.st_size &&
          after.st_mtime == before.st_mtime);
    DIR *d = opendir(dir);
    int temps = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp")) temps++;
    if (d) closedir(d);
    CHECK_EQ_INT(temps, 0);
    /* a second session still works after the failure */
    REQUIRE_INT(sp_setup_with_options(&o) == SP_OK);
    sp_region_begin("after");
    sp_region_end("after");
    CHECK_EQ_INT(sp_finalize(), SP_OK);
    printf("disk full: SP_ERR_OUTPUT, previous file kept, no temporary left\n");
    return 0;
}

static const struct {
    const char *name;
    int (*run)(void);
} cases[] = {
    {"setup_refusals", test_setup_refusals},
    {"special_targets", test_special_targets},
    {"limit_valid_file", test_limit_valid_file},
    {"fork_while_recording", test_fork_while_recording},
    {"signal_handler_records", test_signal_handler_records},
    {"disk_full", test_disk_full},
};

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_faults CASE WORKDIR\n");
        return 2;
    }
    /* a fresh directory per run: a case's files never meet an old run's */
    mkdir(argv[2], 0777);
    char fresh[4096];
    snprintf(fresh, sizeof fresh, "%s/run.XXXXXX", argv[2]);
    if (!mkdtemp(fresh) || chdir(fresh) != 0) return 2;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, argv[1]) != 0) continue;
        int rc = cases[i].run();
        if (rc == SKIP) return SKIP;
        return check_failures ? 1 : 0;
    }
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 2;
}
