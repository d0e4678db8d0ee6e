/*
 * spill_writer_app.c - a program for check_spill_writer.py (issue 31, the
 * spill writer thread): records a known pattern of calls on several
 * threads well past a small buffer limit (the environment sets limit,
 * clock and SCOPE_PROFILER_SPILL_THREAD), asks sp_region_thread_totals
 * while it records, and prints what the checker compares with the file.
 *
 *   spill_writer_app PATH ITERATIONS THREADS [fork]
 *
 * Thread k (named "rec-k") makes, per iteration i:
 *   outer { inner { leaf<(i + k) % 7> } [leaf<(3 i) % 7> when i % 3 == 0] }
 * with outer and inner named "t<k>.outer" / "t<k>.inner". Every 4096
 * iterations it asks for its outer region's totals, which must count
 * exactly the outer calls ended so far (a mismatch is printed as "BAD").
 * At the end each thread prints its totals per region ("totals ..."),
 * then the main thread prints whether an "sp-spill" thread exists, the
 * resident memory before recording and its peak, and the finalize status.
 *
 * With "fork", thread 0 forks halfway (the others keep recording and
 * spilling): the child must find no session, then profiles itself into
 * PATH.child.h5 past a small limit of its own (with a writer thread of its
 * own; "fork-nothread": without, for ThreadSanitizer), and exits 0 if all
 * went as the fork rules say; the parent prints the child's exit code.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scope_profiler.h"

#define LEAVES 7

static long iterations;
static int fork_halfway;
static const char *output_path;
static int child_exit = -1;

/* kB of a "Name:   N kB" line of /proc/self/status, -1 when absent. */
static long status_kib(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long value = -1;
    size_t len = strlen(name);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, len) == 0 && line[len] == ':') value = atol(line + len + 1);
    fclose(f);
    return value;
}

/* Whether a thread of this process is named `name`. */
static int thread_named(const char *name) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[320], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
        found |= strcmp(comm, name) == 0;
    }
    closedir(d);
    return found;
}

/* The fork child: nothing of the parent's session, then a session of its
 * own that spills too. 0 when all is as it should be. */
static int child_run(void) {
    alarm(60); /* a child blocked on the parent's writer dies loudly */
    int bad = 0;
    bad |= sp_is_active() != 0;
    bad |= sp_region_begin("child.parent_session") != SP_OK;
    bad |= sp_region_end("child.parent_session") != SP_OK;
    bad |= sp_finalize() != SP_ERR_NOT_ACTIVE;
    /* ThreadSanitizer cannot follow a thread started in the child of a
     * threaded process (it may reuse a parent thread's id): there the
     * child's own session writes its spill, and its file, on one thread */
    if (fork_halfway == 2) {
        setenv("SCOPE_PROFILER_SPILL_THREAD", "0", 1);
        setenv("SCOPE_PROFILER_WRITE_THREADS", "1", 1);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s.child.h5", output_path);
    sp_options o;
    sp_options_init(&o);
    o.file_path = path;
    o.quiet = 1;
    o.buffer_limit_bytes = (size_t)4 << 20;
    bad |= sp_setup_with_options(&o) != SP_OK;
    int own = sp_region("child.own");
    for (long i = 0; i < 400000; i++) {
        sp_begin(own);
        sp_end(own);
    }
    bad |= sp_finalize() != SP_OK;
    return bad;
}

static void *record(void *argument) {
    int k = (int)(long)argument;
    char name[64];
    snprintf(name, sizeof name, "rec-%d", k);
    pthread_setname_np(pthread_self(), name);
    snprintf(name, sizeof name, "t%d.outer", k);
    int outer = sp_region(name);
    snprintf(name, sizeof name, "t%d.inner", k);
    int inner = sp_region(name);
    int leaf[LEAVES];
    for (int j = 0; j < LEAVES; j++) {
        snprintf(name, sizeof name, "leaf%d", j);
        leaf[j] = sp_region(name);
    }
    long bad = 0;
    for (long i = 0; i < iterations; i++) {
        if (i % 4096 == 0) {
            sp_region_totals q;
            if (sp_region_thread_totals(outer, &q) != SP_OK || q.calls != (uint64_t)i ||
                q.open != 0)
                bad++;
        }
        if (fork_halfway && k == 0 && i == iterations / 2) {
            pid_t pid = fork();
            if (pid == 0) _exit(child_run());
            int status = 0;
            child_exit = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)
                             ? WEXITSTATUS(status) : 255;
        }
        sp_begin(outer);
        sp_begin(inner);
        sp_begin(leaf[(i + k) % LEAVES]);
        sp_end(leaf[(i + k) % LEAVES]);
        sp_end(inner);
        if (i % 3 == 0) {
            sp_begin(leaf[(3 * i) % LEAVES]);
            sp_end(leaf[(3 * i) % LEAVES]);
        }
        sp_end(outer);
    }
    int regions[2 + LEAVES] = {outer, inner};
    for (int j = 0; j < LEAVES; j++) regions[2 + j] = leaf[j];
    for (int r = 0; r < 2 + LEAVES; r++) {
        sp_region_totals q;
        int status = sp_region_thread_totals(regions[r], &q);
        printf("totals thread=rec-%d region=%s status=%d calls=%llu total_ns=%lld\n", k,
               sp_region_name(regions[r]), status, (unsigned long long)q.calls,
               (long long)q.total_ns);
    }
    if (bad) printf("BAD thread=rec-%d queries=%ld\n", k, bad);
    fflush(stdout);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: spill_writer_app PATH ITERATIONS THREADS [fork]\n");
        return 2;
    }
    output_path = argv[1];
    iterations = atol(argv[2]);
    int threads = atoi(argv[3]);
    fork_halfway = argc < 5                             ? 0
                   : strcmp(argv[4], "fork") == 0          ? 1
                   : strcmp(argv[4], "fork-nothread") == 0 ? 2
                                                           : 0;
    if (threads < 1 || threads > 16) return 2;
    long rss_before_kib = status_kib("VmRSS");
    if (sp_setup(output_path) != SP_OK) return 3;
    pthread_t ids[16];
    for (int k = 0; k < threads; k++) pthread_create(&ids[k], NULL, record, (void *)(long)k);
    for (int k = 0; k < threads; k++) pthread_join(ids[k], NULL);
    printf("spill_thread=%d\n", thread_named("sp-spill"));
    printf("rss_before_kib=%ld peak_kib=%ld\n", rss_before_kib, status_kib("VmHWM"));
    if (fork_halfway) printf("child_exit=%d\n", child_exit);
    fflush(stdout);
    int status = sp_finalize();
    printf("status=%d\n", status);
    return 0;
}
