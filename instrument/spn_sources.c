/*
 * spn_sources.c - function address -> source file (spn_sources.h).
 *
 * Why libdw, and why loaded at run time: a function's source file is in
 * its DWARF line table (.debug_line, DWARF 2 to 5, possibly compressed),
 * a format far larger than the symbol tables spn_symbols.c reads by hand;
 * elfutils' libdw reads all of it. But only a filter with SCOREP_FILE_NAMES
 * rules needs it, so the library does not link it: it is dlopen'ed then
 * (Debian's libdw1, "libdw.so.1", present wherever elfutils is), and a run
 * without it is told that the file rules cannot apply. The few entry points
 * used are declared here with their documented C signatures (libdw.h),
 * their handles opaque.
 *
 * Which file: the line table's file at the function's entry address, the
 * file that holds the function's body (a function defined in a header is
 * that header's). Objects are opened once each and kept open (libdw reads
 * their sections lazily): memory grows with the objects, never with calls.
 */
#define _GNU_SOURCE
#include "spn_sources.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))

typedef struct Dwarf Dwarf;
typedef struct Dwarf_Line Dwarf_Line;
/* Dwarf_Die is a 4-word struct filled by libdw; room for twice that. */
typedef union die_storage {
    void *words[8];
    long double align;
} die_storage;

static struct {
    void *handle;
    Dwarf *(*begin)(int fd, int cmd); /* dwarf_begin, cmd DWARF_C_READ = 0 */
    int (*end)(Dwarf *dwarf);
    void *(*addrdie)(Dwarf *dwarf, uint64_t address, void *die);
    Dwarf_Line *(*getsrc_die)(void *cu_die, uint64_t address);
    const char *(*linesrc)(Dwarf_Line *line, uint64_t *mtime, uint64_t *length);
} dw;

typedef struct object_debug {
    struct object_debug *next;
    char *path;
    int fd;
    Dwarf *dwarf; /* NULL: no debug information */
} object_debug;

static object_debug *objects = NULL;

NO_INSTRUMENT int spn_sources_open(char *message, size_t message_len) {
    if (dw.handle) return 1;
    void *handle = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(message, message_len, "libdw.so.1 (elfutils) cannot be loaded: %s", dlerror());
        return 0;
    }
    /* Function pointers from dlsym: POSIX guarantees the conversion. */
    *(void **)&dw.begin = dlsym(handle, "dwarf_begin");
    *(void **)&dw.end = dlsym(handle, "dwarf_end");
    *(void **)&dw.addrdie = dlsym(handle, "dwarf_addrdie");
    *(void **)&dw.getsrc_die = dlsym(handle, "dwarf_getsrc_die");
    *(void **)&dw.linesrc = dlsym(handle, "dwarf_linesrc");
    if (!dw.begin || !dw.end || !dw.addrdie || !dw.getsrc_die || !dw.linesrc) {
        snprintf(message, message_len, "libdw.so.1 lacks the dwarf_* functions it should have");
        dlclose(handle);
        memset(&dw, 0, sizeof dw);
        return 0;
    }
    dw.handle = handle;
    return 1;
}

NO_INSTRUMENT static object_debug *debug_of(const char *path) {
    for (object_debug *o = objects; o; o = o->next)
        if (strcmp(o->path, path) == 0) return o;
    object_debug *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->path = strdup(path);
    if (!o->path) {
        free(o);
        return NULL;
    }
    o->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (o->fd >= 0) {
        o->dwarf = dw.begin(o->fd, 0);
        if (!o->dwarf) {
            close(o->fd);
            o->fd = -1;
        }
    }
    /* Kept without debug information too: the file is not opened again. */
    o->next = objects;
    objects = o;
    return o;
}

NO_INSTRUMENT const char *spn_sources_file(const char *object, uintptr_t offset) {
    if (!dw.handle || !object || !*object) return NULL;
    object_debug *o = debug_of(object);
    if (!o || !o->dwarf) return NULL;
    die_storage cu;
    if (!dw.addrdie(o->dwarf, (uint64_t)offset, &cu)) return NULL;
    Dwarf_Line *line = dw.getsrc_die(&cu, (uint64_t)offset);
    return line ? dw.linesrc(line, NULL, NULL) : NULL;
}

NO_INSTRUMENT void spn_sources_close(void) {
    while (objects) {
        object_debug *o = objects;
        objects = o->next;
        if (o->dwarf) dw.end(o->dwarf);
        if (o->fd >= 0) close(o->fd);
        free(o->path);
        free(o);
    }
    if (dw.handle) dlclose(dw.handle);
    memset(&dw, 0, sizeof dw);
}
