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
 *   or takes longer than SKIP_SECONDS, the input is skipped.
 *
 * Everything else (a fault in our code, any sanitizer report, a leak, an
 * abort, a child that read the input cleanly) is read again here, in the
 * fuzzer's process, where libFuzzer and the sanitizers see it and save it.
 * libhdf5 is not instrumented: coverage guides the mutations through our
 * reader, and its own parsing is reached by chance only.
 */
#include "fuzz_read.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#define SKIP_SECONDS 5
#define CHILD_HDF5_FAULT 97

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    Dl_info where;
    void *pc = fault_pc(context);
    if (pc && dladdr(pc, &where) && where.dli_fname && strstr(where.dli_fname, "libhdf5"))
        _exit(CHILD_HDF5_FAULT);
    _exit(128 + sig);
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
