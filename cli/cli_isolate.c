/*
 * cli_isolate.c - inputs read in a supervised child (see cli_isolate.h).
 *
 * Why a child and not checks alone: the reader bounds everything it asks
 * of HDF5 (lengths, types, string sizes, storage), but libhdf5 1.10 itself
 * walks damaged B-trees, heaps and object headers, and a flipped byte
 * there can fault or loop inside the library where no caller check
 * reaches. Only a process boundary contains that.
 *
 * Why the whole tool runs in the child: the alternative designs cost too
 * much on big files. Validating in a child and reading again in the parent
 * reads every file twice; passing the results through a pipe means
 * serialising them. Here the child does the work once and the parent just
 * waits, so the cost is a fork (measured in bench/hostile).
 *
 * The pipe carries fixed-size records, smaller than PIPE_BUF, so each
 * write arrives whole. The parent learns from them whether a read is under
 * way, of which file and for how long it may last; everything else it
 * learns from waitpid.
 */
#include "cli_isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "scope_profiler.h"
#include "scope_profiler_results.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CLI_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define CLI_SANITIZED 1
#endif
#endif
#ifndef CLI_SANITIZED
#define CLI_SANITIZED 0
#endif

#define LABEL_BYTES 1024

typedef struct record {
    char kind;            /* 'B' a read begins, 'E' it ended */
    unsigned timeout_s;
    char label[LABEL_BYTES];
} record;

/* Child side. */
static int pipe_out = -1;
static bool limited;           /* RLIMIT_AS lowered for the current read */
static struct rlimit saved_as;
static uint64_t limit_mb;

/* Parent side (the signal handler forwards to the child). */
static volatile pid_t child_pid;

uint64_t cli_file_bytes(const char *path) {
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
}

static uint64_t env_u64(const char *name, uint64_t fallback) {
    const char *text = getenv(name);
    if (!text || !*text) return fallback;
    char *end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    return end && *end == '\0' && v > 0 ? (uint64_t)v : fallback;
}

static void write_record(char kind, unsigned timeout_s, const char *label) {
    if (pipe_out < 0) return;
    record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.timeout_s = timeout_s;
    if (label) snprintf(r.label, sizeof r.label, "%s", label);
    ssize_t rc;
    do rc = write(pipe_out, &r, sizeof r);
    while (rc < 0 && errno == EINTR);
}

/* Bytes of address space the process uses now (/proc/self/statm). */
static uint64_t address_space_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1) pages = 0;
        fclose(f);
    }
    long page = sysconf(_SC_PAGESIZE);
    return (uint64_t)pages * (uint64_t)(page > 0 ? page : 4096);
}

void cli_isolate_begin_read(const char *label, uint64_t bytes, unsigned weight) {
    if (pipe_out < 0) return;
    uint64_t timeout = env_u64("SCOPE_PROFILER_READ_TIMEOUT",
                               (10 + bytes / (8u << 20)) * (weight ? weight : 1));
    if (timeout > 86400u * 7) timeout = 86400u * 7;
    write_record('B', (unsigned)timeout, label);
    limited = false;
    if (CLI_SANITIZED) return;
    uint64_t mb = bytes / (1u << 20) * 64;
    if (mb < 2048) mb = 2048;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t ram_mb = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page >> 20 : 0;
    if (ram_mb && mb > ram_mb) mb = ram_mb;
    mb = env_u64("SCOPE_PROFILER_READ_MEMORY_MB", mb);
    if (getrlimit(RLIMIT_AS, &saved_as) != 0) return;
    uint64_t want = address_space_bytes() + (mb << 20);
    struct rlimit lowered = saved_as;
    if (saved_as.rlim_cur != RLIM_INFINITY && saved_as.rlim_cur <= want) return;
    lowered.rlim_cur = (rlim_t)want;
    if (setrlimit(RLIMIT_AS, &lowered) == 0) {
        limited = true;
        limit_mb = mb;
    }
}

void cli_isolate_end_read(void) {
    if (pipe_out < 0) return;
    if (limited) setrlimit(RLIMIT_AS, &saved_as);
    limited = false;
    write_record('E', 0, NULL);
}

int cli_results_open(const char *path, int flags, sp_results **out, char *errbuf,
                     size_t errbuf_len) {
    cli_isolate_begin_read(path, cli_file_bytes(path), 1);
    bool was_limited = limited;
    uint64_t mb = limit_mb;
    int status = sp_results_open(path, flags, out, errbuf, errbuf_len);
    cli_isolate_end_read();
    if (status == SP_ERR_OUT_OF_MEMORY && was_limited) {
        if (errbuf && errbuf_len)
            snprintf(errbuf, errbuf_len,
                     "%s: damaged HDF5 file (reading it needs more than %llu MiB; "
                     "SCOPE_PROFILER_READ_MEMORY_MB allows more)",
                     path, (unsigned long long)mb);
        status = SP_ERR_CORRUPT;
    }
    return status;
}

/* Signals that mean "the read went wrong" when they end a read: faults,
 * aborts (HDF5's assertions, malloc's consistency checks), and SIGKILL
 * (the kernel's OOM killer). Others (SIGINT, SIGTERM, SIGPIPE) are the
 * user's or the shell's and are passed on. */
static bool is_damage_signal(int sig) {
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGFPE || sig == SIGILL ||
           sig == SIGSYS || sig == SIGTRAP || sig == SIGXCPU || sig == SIGKILL;
}

static const char *signal_name(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGABRT: return "SIGABRT";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGSYS: return "SIGSYS";
    case SIGTRAP: return "SIGTRAP";
    case SIGXCPU: return "SIGXCPU";
    case SIGKILL: return "SIGKILL";
    default: return "a signal";
    }
}

static void forward_signal(int sig) {
    if (child_pid > 0) kill(child_pid, sig);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void supervise(const char *tool, pid_t child, int fd) {
    bool reading = false;
    record current;
    memset(&current, 0, sizeof current);
    double began = 0;
    for (;;) {
        int wait_ms = -1;
        if (reading) {
            double left = (double)current.timeout_s - (now_s() - began);
            wait_ms = left <= 0 ? 0 : left > 3.6e6 ? 3600 * 1000 : (int)(left * 1000) + 1;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, wait_ms);
        if (rc < 0 && errno == EINTR) continue;
        if (rc == 0) {
            /* SIGTERM first, so that a tool writing an output removes its
             * temporary file; SIGKILL if it does not end soon. */
            kill(child, SIGTERM);
            bool reaped = false;
            for (int i = 0; i < 40 && !reaped; i++) {
                reaped = waitpid(child, NULL, WNOHANG) == child;
                struct timespec pause = {0, 50 * 1000 * 1000};
                if (!reaped) nanosleep(&pause, NULL);
            }
            if (!reaped) {
                kill(child, SIGKILL);
                while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
            }
            fprintf(stderr,
                    "%s: %s: damaged HDF5 file (reading it took more than %u s; "
                    "SCOPE_PROFILER_READ_TIMEOUT allows more)\n",
                    tool, current.label, current.timeout_s);
            _exit(CLI_EXIT_FILE);
        }
        if (rc < 0) break;
        record r;
        ssize_t got = read(fd, &r, sizeof r);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break; /* the child closed the pipe: it has ended */
        if (got != (ssize_t)sizeof r) continue;
        r.label[LABEL_BYTES - 1] = '\0';
        if (r.kind == 'B') {
            current = r;
            reading = true;
            began = now_s();
        } else {
            reading = false;
        }
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) _exit(CLI_EXIT_OTHER);
    }
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGABRT;
    if (reading && is_damage_signal(sig)) {
        fprintf(stderr, "%s: %s: damaged HDF5 file (%s while reading it)\n", tool, current.label,
                signal_name(sig));
        _exit(CLI_EXIT_FILE);
    }
    /* Outside a read a signal is not the input's doing: end the same way,
     * so that a bug of ours stays visible. */
    signal(sig, SIG_DFL);
    raise(sig);
    _exit(128 + sig);
}

void cli_isolate_start(const char *tool) {
    const char *off = getenv("SCOPE_PROFILER_NO_ISOLATION");
    if (off && *off && strcmp(off, "0") != 0) return;
    int fds[2];
    if (pipe(fds) != 0) return; /* no isolation rather than no tool */
    fflush(NULL);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (child == 0) {
        close(fds[0]);
        pipe_out = fds[1];
        /* A pipe end must not leak into programs a tool starts. */
        fcntl(pipe_out, F_SETFD, FD_CLOEXEC);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(CLI_EXIT_OTHER);
        return;
    }
    close(fds[1]);
    child_pid = child;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGQUIT, &sa, NULL);
    supervise(tool, child, fds[0]);
}
