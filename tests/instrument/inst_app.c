/*
 * inst_app.c - a C program with no annotation but one user region, built
 * with -finstrument-functions and linked with libscopeprofiler_instrument
 * (tests/instrument). What it calls, by the mode in argv[1]:
 *
 *   tree      main -> "setup phase" (sp_region_begin) -> compute -> leaf x3;
 *             main -> shared_work (linked shared library) -> shared_helper;
 *             main -> plugin_entry (dlopen'ed, argv[2]) -> plugin_helper;
 *             main -> stripped_entry (dlopen'ed, stripped, argv[3]) -> a
 *             static function no symbol table names
 *   throttle  main -> tiny x1000
 *   threads   4 threads: worker -> compute x50 -> leaf x3
 *   pause     sp_pause/sp_resume around calls (see below); start-paused
 *             the same with SCOPE_PROFILER_START=paused
 *
 * check_instrument.py reads the file and compares every call path.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

int shared_work(int x); /* inst_shared.c */

static volatile int sink;

static __attribute__((noinline)) int leaf(int x) { return x * 2 + (sink & 1); }

__attribute__((noinline)) int compute(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += leaf(i);
    return s;
}

__attribute__((noinline)) void tiny(void) { sink++; }

/* threads: each thread's calls are its own tree; the shared address table
 * is filled by whichever thread calls a function first. */
static void *worker(void *unused) {
    (void)unused;
    int s = 0;
    for (int i = 0; i < 50; i++) s += compute(3); /* threads only read sink (TSan) */
    (void)s;
    return NULL;
}

static int call_plugin(const char *path, const char *entry) {
    void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        fprintf(stderr, "inst_app: dlopen %s: %s\n", path, dlerror());
        return -1;
    }
    int (*function)(int) = (int (*)(int))dlsym(plugin, entry);
    int result = function ? function(3) : -1;
    /* Kept loaded: names are resolved at first call, and a profile of a
     * program that unloads its plugins keeps the names it resolved. */
    return result;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "tree";
    if (strcmp(mode, "throttle") == 0) {
        for (int i = 0; i < 1000; i++) tiny();
        return 0;
    }
    if (strcmp(mode, "threads") == 0) {
        pthread_t threads[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&threads[i], NULL, worker, NULL) != 0) return 1;
        for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
        return 0;
    }
    if (strcmp(mode, "pause") == 0) {
        sp_region_begin("open across the pause");
        sp_pause();
        sink = compute(3);                  /* absent */
        sp_region_begin("inside the pause"); /* absent */
        sp_region_end("inside the pause");
        sp_region_end("open across the pause"); /* ends cleanly, recorded */
        sp_region_begin("begun paused");    /* absent; its end after resume too */
        sp_resume();
        sink = compute(1);                  /* main -> compute -> leaf */
        sp_region_end("begun paused");
        tiny();
        return sp_is_paused() ? 1 : 0;
    }
    if (strcmp(mode, "start-paused") == 0) {
        /* SCOPE_PROFILER_START=paused: main itself is not recorded */
        if (!sp_is_paused()) return 1;
        sp_resume();
        sink = compute(2); /* a root: compute -> leaf x2 */
        return 0;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: inst_app tree <plugin.so> <stripped.so>\n");
        return 2;
    }
    sp_region_begin("setup phase");
    sink = compute(3);
    sp_region_end("setup phase");
    sink = shared_work(2);
    if (call_plugin(argv[2], "plugin_entry") < 0) return 1;
    if (call_plugin(argv[3], "stripped_entry") < 0) return 1;
    return 0;
}
