/* signal_record OUT.h5 [SECONDS]: a SIGALRM handler at 10 kHz (setitimer)
 * records "tick" while the main loop records "outer" > "inner" nested
 * calls, every handle and name used once before the timer starts (as
 * scope_profiler.h asks of handler code). Prints the handler's calls and
 * how many of them the recorder refused (SP_ERR_UNSUPPORTED: the handler
 * interrupted a recording call), so check_signals.py can compare them with
 * the file, which scope-check must accept. */
#define _POSIX_C_SOURCE 200809L
#include <scope_profiler.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static int tick_handle;
static volatile sig_atomic_t handler_calls;
static volatile sig_atomic_t handler_refused;

static void on_alarm(int signo) {
    (void)signo;
    handler_calls++;
    sp_clear_error();
    if ((handler_calls & 1) == 0) {
        sp_begin(tick_handle);
        sp_end(tick_handle);
    } else {
        /* the by-name calls too, with a name this thread already used */
        sp_region_begin_n("tick", 4);
        sp_region_end_n("tick", 4);
    }
    if (sp_last_error() == SP_ERR_UNSUPPORTED) handler_refused++;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 2 || sp_setup(argv[1]) != SP_OK) return 2;
    double seconds = argc > 2 ? atof(argv[2]) : 0.5;
    int outer = sp_region("outer"), inner = sp_region("inner");
    tick_handle = sp_region("tick");
    /* pre-use every handle and name on this thread (warm caches, stack) */
    sp_begin(outer);
    sp_begin(inner);
    sp_region_begin_n("tick", 4);
    sp_region_end_n("tick", 4);
    sp_begin(tick_handle);
    sp_end(tick_handle);
    sp_end(inner);
    sp_end(outer);

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_alarm;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(SIGALRM, &action, NULL) != 0) return 2;
    struct itimerval timer = {{0, 100}, {0, 100}}; /* 10 kHz */
    if (setitimer(ITIMER_REAL, &timer, NULL) != 0) return 2;
    long loops = 0;
    double end = now_s() + seconds;
    volatile unsigned long sink = 0;
    while (now_s() < end) {
        for (int k = 0; k < 64; k++) {
            sp_begin(outer);
            sp_begin(inner);
            /* some work, as a real loop has: the recorder is most of a
             * loop of empty calls, and a handler that interrupts it is
             * refused (the check needs recorded handler calls too) */
            for (int w = 0; w < 200; w++) sink += (unsigned long)(k + w);
            sp_end(inner);
            sp_end(outer);
            loops++;
        }
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    signal(SIGALRM, SIG_IGN);
    printf("loops=%ld handler_calls=%ld refused=%ld\n", loops, (long)handler_calls,
           (long)handler_refused);
    return sp_finalize() == SP_OK ? 0 : 1;
}
