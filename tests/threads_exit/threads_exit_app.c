/*
 * threads_exit_app.c - many short-lived threads for check_threads_exit.py:
 * what the recorder keeps of exited threads (every call and every thread
 * in the file, the memory bounded) and fork() in a process that ran them.
 *
 *   threads_exit_app PATH THREADS WAVE FORKS
 *
 * The mode, the buffer limit, the overflow and the clock come from the
 * environment (SCOPE_PROFILER_*). THREADS threads are started in waves of
 * WAVE; thread i names itself "tx<i>" and makes, on the handle API:
 *   "a" (every thread), "b" inside "a" (odd i), then on the by-name API
 *   "named" (i % 3 == 0); a thread with i % 500 == 250 first begins "open"
 *   and exits without ending it (its calls inside stay, "open" is dropped).
 * The main thread makes MAIN_CALLS_PER_WAVE calls of "main.loop" per wave.
 *
 * FORKS children are forked, spread over the run, each while a wave is
 * alive (threads attaching and exiting meanwhile): a child must find no
 * session, record nothing, and _exit at once; the fifth child sets up a
 * session of its own (PATH.child.h5) and records one call "child.own".
 * With FORKS > 0, three more children are forked by another thread while
 * the main thread runs sp_finalize. A child that hangs dies by alarm().
 *
 * Prints "forks=N failed=M", "status=S" (sp_finalize), "rss_kib=K" (peak
 * resident set, VmHWM) and "sanitized=0|1" (a sanitizer build, whose
 * memory says nothing about the library's).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scope_profiler.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define MAIN_CALLS_PER_WAVE 50
#define MAX_WAVE 64

static int region_a, region_b, region_open, region_main;
static const char *output_path;

static void *short_lived(void *arg) {
    long i = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "tx%ld", i);
    pthread_setname_np(pthread_self(), name); /* before the first call: read at attach */
    if (i % 500 == 250) sp_begin(region_open);
    sp_begin(region_a);
    if (i % 2) {
        sp_begin(region_b);
        sp_end(region_b);
    }
    sp_end(region_a);
    if (i % 3 == 0) {
        sp_region_begin("named");
        sp_region_end("named");
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

/* What a forked child checks; its exit status (0: fine). */
static int child(int number) {
    alarm(20); /* a deadlocked child dies loudly instead of hanging */
    int bad = 0;
    bad |= sp_is_active() != 0;
    sp_begin(region_a);
    sp_end(region_a);
    bad |= sp_region_begin("child.call") != SP_OK;
    bad |= sp_region_end("child.call") != SP_OK;
    bad |= sp_finalize() != SP_ERR_NOT_ACTIVE;
    if (number == 4) { /* a child may profile itself */
        char path[4096];
        snprintf(path, sizeof path, "%s.child.h5", output_path);
        sp_options o;
        sp_options_init(&o);
        o.file_path = path;
        o.quiet = 1;
        o.mode = SP_MODE_TRACE;
        bad |= (sp_setup_with_options(&o) != SP_OK) << 1;
        sp_region_begin("child.own");
        sp_region_end("child.own");
        bad |= (sp_finalize() != SP_OK) << 2;
    }
    return bad;
}

/* Forks one child and waits for it: true when it exited with 0. */
static bool fork_and_wait(int number) {
    pid_t pid = fork();
    if (pid == 0) _exit(child(number));
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fprintf(stderr, "child %d: %s %d\n", number, WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static atomic_int finalizing;
static atomic_int finalize_forks_failed;

/* Forks three children as soon as the main thread starts finalizing. */
static void *fork_during_finalize(void *unused) {
    (void)unused;
    while (!atomic_load(&finalizing)) sched_yield();
    for (int k = 0; k < 3; k++)
        if (!fork_and_wait(100 + k)) atomic_fetch_add(&finalize_forks_failed, 1);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: threads_exit_app PATH THREADS WAVE FORKS\n");
        return 2;
    }
    output_path = argv[1];
    long threads = atol(argv[2]);
    int wave = atoi(argv[3]), forks = atoi(argv[4]);
    if (threads < 1 || wave < 1 || wave > MAX_WAVE || forks < 0) return 2;
    if (sp_setup(output_path) != SP_OK) return 3;
    region_a = sp_region("a");
    region_b = sp_region("b");
    region_open = sp_region("open");
    region_main = sp_region("main.loop");
    int forked = 0, failed = 0;
    pthread_t ids[MAX_WAVE];
    for (long started = 0; started < threads;) {
        int n = 0;
        for (; n < wave && started < threads; n++, started++)
            if (pthread_create(&ids[n], NULL, short_lived, (void *)started) != 0) return 4;
        if (forked < forks && started * (forks + 1) >= threads * (forked + 1))
            failed += !fork_and_wait(forked++);
        for (int k = 0; k < MAIN_CALLS_PER_WAVE; k++) {
            sp_begin(region_main);
            sp_end(region_main);
        }
        for (int i = 0; i < n; i++) pthread_join(ids[i], NULL);
    }
    pthread_t forker;
    if (forks && pthread_create(&forker, NULL, fork_during_finalize, NULL) != 0) return 4;
    atomic_store(&finalizing, 1);
    int status = sp_finalize();
    if (forks) {
        pthread_join(forker, NULL);
        forked += 3;
        failed += atomic_load(&finalize_forks_failed);
    }
    printf("forks=%d failed=%d\n", forked, failed);
    printf("status=%d\n", status);
    printf("rss_kib=%ld\n", peak_rss_kib());
    printf("sanitized=%d\n", SANITIZED);
    return 0;
}
