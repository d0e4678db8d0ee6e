/*
 * spill_page_cache_app.c - the spill file's chunks bypass the page cache
 * (issue 31, record/spill.h: each chunk is written whole with O_DIRECT).
 *
 *   spill_page_cache_app DIR
 *
 * Records handle pairs in a trace with an 8 MiB buffer limit (flush mode)
 * until about 64 MiB of events went to the spill file, with the writer
 * thread or without it as SCOPE_PROFILER_SPILL_THREAD says, then, before
 * finalize (which reads the file back), finds the spill file among its
 * own descriptors (an unlinked file in DIR) and asks mincore how many of
 * its pages sit in the page cache. Written through the page cache, nearly
 * every page written is resident (this machine has far more than 64 MiB
 * free); written directly, almost none. Fails when more than a quarter of
 * the written pages are resident. Skips (77) on a tmpfs, whose files are
 * the page cache, and where O_DIRECT is refused (then the spill writes
 * through the page cache by design).
 *
 * Exit 0 pass, 1 fail, 77 skip. Prints "resident_pages=R written_pages=W".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "scope_profiler.h"

#define LIMIT_BYTES ((size_t)8 << 20)
#define SPILLED_BYTES ((size_t)64 << 20)
#define EVENT_BYTES 24 /* one call's event in memory and in the file */
#define TMPFS_MAGIC_NUMBER 0x01021994

/* A descriptor of this process on an unlinked file in `dir` (the spill
 * file), -1 when none. */
static int find_spill(const char *dir) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int found = -1;
    size_t dir_len = strlen(dir);
    for (struct dirent *e; found < 0 && (e = readdir(d));) {
        char link[300], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        if (strncmp(target, dir, dir_len) == 0 && strstr(target, "(deleted)"))
            found = atoi(e->d_name);
    }
    closedir(d);
    return found;
}

/* Whether this file system takes O_DIRECT opens (else the spill writes
 * through the page cache, as spill.h says). */
static int direct_supported(const char *dir) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/direct-probe.XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    unlink(path);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    int direct = open(proc, O_RDWR | O_DIRECT);
    close(fd);
    if (direct < 0) return 0;
    close(direct);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: spill_page_cache_app DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    struct statfs fs;
    if (statfs(dir, &fs) == 0 && fs.f_type == TMPFS_MAGIC_NUMBER) {
        printf("skip: %s is a tmpfs (its files are the page cache)\n", dir);
        return 77;
    }
    if (!direct_supported(dir)) {
        printf("skip: %s does not take O_DIRECT\n", dir);
        return 77;
    }
    char output[PATH_MAX];
    snprintf(output, sizeof output, "%s/page_cache.h5", dir);
    sp_options o;
    sp_options_init(&o);
    o.file_path = output;
    o.quiet = 1;
    o.buffer_limit_bytes = LIMIT_BYTES;
    o.overflow = SP_OVERFLOW_FLUSH;
    if (sp_setup_with_options(&o) != SP_OK) {
        printf("FAIL: setup\n");
        return 1;
    }
    int region = sp_region("pair");
    long pairs = (long)((LIMIT_BYTES + SPILLED_BYTES) / EVENT_BYTES);
    for (long i = 0; i < pairs; i++) {
        sp_begin(region);
        sp_end(region);
    }
    int fd = find_spill(dir);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        printf("FAIL: no spill file in %s after %ld calls past an 8 MiB limit\n", dir, pairs);
        return 1;
    }
    long page = sysconf(_SC_PAGESIZE);
    size_t pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char *in_core = malloc(pages);
    if (map == MAP_FAILED || !in_core || mincore(map, (size_t)st.st_size, in_core) != 0) {
        printf("FAIL: mincore on the spill file: %s\n", strerror(errno));
        return 1;
    }
    size_t resident = 0;
    for (size_t i = 0; i < pages; i++) resident += in_core[i] & 1;
    munmap(map, (size_t)st.st_size);
    free(in_core);
    /* what went to the file so far: everything past the limit but the
     * chunks still on their way (a few 2 MiB chunks at most) */
    size_t written_pages = (SPILLED_BYTES - ((size_t)8 << 20)) / (size_t)page;
    printf("resident_pages=%zu written_pages=%zu\n", resident, written_pages);
    int status = sp_finalize();
    if (status != SP_OK) {
        printf("FAIL: finalize status %d\n", status);
        return 1;
    }
    if (resident * 4 > written_pages) {
        printf("FAIL: %zu of the spill file's pages are in the page cache (written about "
               "%zu): the chunks were not written directly\n",
               resident, written_pages);
        return 1;
    }
    return 0;
}
