/*
 * threads_bench.c - many short-lived threads, one call each: the memory a
 * recording keeps per exited thread, and the cost of fork() in a process
 * that ran them (issue: bounded memory after recording).
 *
 * THREADS threads are started in waves of WAVE (a few alive at a time),
 * each making one call; FORKS children are forked, spread evenly over the
 * run, while a wave is alive: each child makes one call (recorded by
 * nothing), and _exits. Then sp_finalize with default settings (the
 * report and the summary are printed, the default buffer limit).
 *
 * Prints the process's peak resident set (VmHWM, finalize included, and
 * before finalize),
 * the time of each forked child from fork() to waitpid() in the parent,
 * and the finalize time.
 *
 * Usage: sp_bench_threads THREADS trace|aggregate|none PATH [FORKS [WAVE]]
 *   none: the same program without the profiler (no setup, no calls)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scope_profiler.h"

static int region;
static int profiled;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *one_call(void *unused) {
    (void)unused;
    if (profiled) {
        sp_begin(region);
        sp_end(region);
    }
    return NULL;
}

/* The peak resident set of this process image, in KiB: VmHWM. Not
 * getrusage's ru_maxrss, which Linux carries over execve from the image
 * before (a Python or shell parent's size at fork would count). */
static long peak_rss_kib(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && kib < 0 && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) kib = atol(line + 6);
    if (f) fclose(f);
    if (kib < 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        kib = ru.ru_maxrss;
    }
    return kib;
}

/* fork() to waitpid() in ms; -1 when the child failed. */
static double fork_child(void) {
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        if (profiled) {
            sp_begin(region);
            sp_end(region);
        }
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        return -1;
    return (now_s() - t0) * 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: sp_bench_threads THREADS trace|aggregate|none PATH [FORKS [WAVE]]\n");
        return 2;
    }
    long threads = atol(argv[1]);
    const char *mode = argv[2];
    int forks = argc > 4 ? atoi(argv[4]) : 10;
    int wave = argc > 5 ? atoi(argv[5]) : 8;
    if (threads < 1 || forks < 0 || forks > 100 || wave < 1 || wave > 256) return 2;
    profiled = strcmp(mode, "none") != 0;
    if (profiled) {
        sp_options o;
        sp_options_init(&o);
        o.file_path = argv[3];
        o.mode = strcmp(mode, "aggregate") == 0 ? SP_MODE_AGGREGATE : SP_MODE_TRACE;
        if (sp_setup_with_options(&o) != SP_OK) return 3;
        region = sp_region("thread.work");
    }
    double fork_ms[100];
    int forked = 0, failed = 0;
    pthread_t ids[256];
    double t0 = now_s();
    for (long started = 0; started < threads;) {
        int n = 0;
        for (; n < wave && started < threads; n++, started++)
            if (pthread_create(&ids[n], NULL, one_call, NULL) != 0) return 4;
        /* the k-th fork once k/(forks+1) of the threads were started */
        if (forked < forks && started * (forks + 1) >= threads * (forked + 1)) {
            double ms = fork_child();
            if (ms < 0) failed++;
            else fork_ms[forked] = ms;
            forked++;
        }
        for (int i = 0; i < n; i++) pthread_join(ids[i], NULL);
    }
    double t1 = now_s();
    double recording_mib = (double)peak_rss_kib() / 1024.0;
    int status = profiled ? sp_finalize() : SP_OK;
    double t2 = now_s();
    double peak_mib = (double)peak_rss_kib() / 1024.0;
    qsort(fork_ms, (size_t)(forked - failed), sizeof *fork_ms, by_value);
    printf("%-9s %ld threads: peak RSS %.1f MiB (%.1f MiB before finalize), threads %.2f s, "
           "finalize %.3f s, status %d\n",
           mode, threads, peak_mib, recording_mib, t1 - t0, t2 - t1, status);
    if (forked) {
        printf("%-9s %d forks (fork to waitpid), ms:", mode, forked);
        for (int i = 0; i < forked - failed; i++) printf(" %.2f", fork_ms[i]);
        printf("; max %.2f ms%s\n", forked > failed ? fork_ms[forked - failed - 1] : 0.0,
               failed ? ", SOME CHILDREN FAILED" : "");
    }
    return status == SP_OK && !failed ? 0 : 1;
}
