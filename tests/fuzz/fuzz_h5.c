/*
 * fuzz_h5.c - libFuzzer harness of the HDF5 reader (format/reader_h5*.c),
 * the file served from memory by HDF5's core driver. Seeds: every .h5 of
 * tests/data.
 *
 * libhdf5 1.10 itself faults on damaged B-trees, heaps and object headers
 * (issue 19; docs/FORMAT.md 3.4.1): no check of ours before the call can
 * prevent that, the tools survive it by reading in a supervised child
 * (cli/cli_isolate.c), and a fuzzer that stopped at each of them would
 * never get past the container into our reader. So this harness skips one
 * input class, decided the way the tools decide it:
 *
 *   each input is read first in a forked child; if the child dies of
 *   SIGSEGV, SIGBUS, SIGFPE or SIGILL at an instruction inside libhdf5,
 *   or of a sanitizer report whose innermost frame outside this program
 *   is in libhdf5 (a memcpy past a damaged heap object, found by this
 *   harness: regressions/fuzz_h5/crash-1787...), or takes longer than
 *   SKIP_SECONDS, the input is skipped.
 *
 * Everything else (a fault in our code, any sanitizer report, a leak, an
 * abort, a child that read the input cleanly) is read again here, in the
 * fuzzer's process, where libFuzzer and the sanitizers see it and save it.
 * libhdf5 is not instrumented: coverage guides the mutations through our
 * reader, and its own parsing is reached by chance only.
 */
#include "fuzz_read.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define SKIP_SECONDS 5
#define CHILD_HDF5_FAULT 97

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Present in sanitizer builds only. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static bool in_libhdf5(void *pc) {
    Dl_info where;
    return pc && dladdr(pc, &where) && where.dli_fname && strstr(where.dli_fname, "libhdf5");
}

/* The faulting instruction of a signal, where this architecture says. */
static void *fault_pc(void *context) {
    ucontext_t *uc = context;
#if defined(__x86_64__)
    return (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (void *)uc->uc_mcontext.pc;
#else
    (void)uc;
    return NULL;
#endif
}

static void on_fault(int sig, siginfo_t *info, void *context) {
    (void)info;
    _exit(in_libhdf5(fault_pc(context)) ? CHILD_HDF5_FAULT : 128 + sig);
}

/* A sanitizer report: the sanitizer runtime and its interceptors are part
 * of this program, so the first frame in another object says who called
 * them (libhdf5, or libc's start when the caller is our code). A callback
 * of ours called by libhdf5 would count as libhdf5's: the reader's are
 * a few lines that only copy a name. */
static void on_report(void) {
    void *frames[64];
    int n = backtrace(frames, 64);
    Dl_info self, where;
    if (n > 0 && dladdr(frames[0], &self)) {
        for (int i = 1; i < n; i++) {
            if (!dladdr(frames[i], &where) || where.dli_fbase == self.dli_fbase) continue;
            if (in_libhdf5(frames[i])) _exit(CHILD_HDF5_FAULT);
            break;
        }
    }
    _exit(1);
}

/* true when reading the input faults inside libhdf5 or hangs. */
static bool hdf5_alone_fails(const uint8_t *data, size_t size) {
    pid_t child = fork();
    if (child < 0) return false;
    if (child == 0) {
        /* The child inherits libFuzzer's handlers: no crash file, no
         * timeout report from here. Its output is the parent's to give. */
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        struct sigaction act = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO};
        sigemptyset(&act.sa_mask);
        int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
            sigaction(faults[i], &act, NULL);
        if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(on_report);
        signal(SIGALRM, SIG_DFL);
        alarm(SKIP_SECONDS);
        fuzz_read(spi_read_h5_image, data, size);
        _exit(0);
    }
    int wstatus = 0;
    while (waitpid(child, &wstatus, 0) < 0) continue;
    if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus) == CHILD_HDF5_FAULT;
    return WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGALRM;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (hdf5_alone_fails(data, size)) return 0;
    fuzz_read(spi_read_h5_image, data, size);
    return 0;
}
