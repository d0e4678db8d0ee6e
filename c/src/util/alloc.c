/*
 * alloc.c - allocation wrapper (see alloc.h).
 *
 * Kept deliberately thin: the value is in having one choke point, so that a
 * later out-of-memory injection hook or accounting needs one edit.
 */
#include "util/alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Transparent huge pages are asked for only when SCOPE_PROFILER_HUGE_PAGES=1.
 * On a machine whose memory is its own they replace one page fault per
 * 4 KiB with one per 2 MiB (a fresh 640 MiB: 0.1 s instead of 0.3 s). On a
 * virtual machine whose host takes back the guest's free memory (virtio
 * balloon free page reporting reports exactly the free 2 MiB blocks huge
 * pages are made of) the first touch of a huge page waits for the host: the
 * same 640 MiB took 1.9-4.8 s there, against 0.27-0.35 s in 4 KiB pages
 * (issue 31; a recording thread filling its bound paid 90-230 ns a begin/end
 * pair instead of 15). 4 KiB pages cost a little everywhere, huge pages a
 * lot where the host reclaims: the default is 4 KiB. Read once; a value
 * other than 1 means 4 KiB pages. */
static int huge_pages_wanted(void) {
    static _Atomic int wanted = -1; /* -1: not read yet */
    int value = atomic_load_explicit(&wanted, memory_order_relaxed);
    if (value < 0) {
        const char *setting = getenv("SCOPE_PROFILER_HUGE_PAGES");
        value = setting && strcmp(setting, "1") == 0;
        atomic_store_explicit(&wanted, value, memory_order_relaxed);
    }
    return value;
}

/* Large blocks (whole event columns of a read) may ask for transparent huge
 * pages (above): only the 2 MiB-aligned interior of the block can be
 * advised; failure is harmless (the advice is only a hint). */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
#define ADVISE_FROM_BYTES ((size_t)8 << 20)

static void *advise_huge_pages(void *block, size_t size_bytes) {
#ifdef MADV_HUGEPAGE
    if (block && size_bytes >= ADVISE_FROM_BYTES && huge_pages_wanted()) {
        uintptr_t start = ((uintptr_t)block + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
        uintptr_t end = ((uintptr_t)block + size_bytes) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
        if (end > start) madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
#else
    (void)size_bytes;
#endif
    return block;
}

void *spi_malloc(size_t size_bytes) {
    return advise_huge_pages(malloc(size_bytes ? size_bytes : 1), size_bytes);
}

void *spi_calloc(size_t count, size_t size_bytes) {
    if (count == 0 || size_bytes == 0) return calloc(1, 1);
    return advise_huge_pages(calloc(count, size_bytes), count * size_bytes);
}

void *spi_reallocarray(void *block, size_t count, size_t size_bytes) {
    if (size_bytes != 0 && count > SIZE_MAX / size_bytes) return NULL;
    size_t total = count * size_bytes;
    return advise_huge_pages(realloc(block, total ? total : 1), total);
}

void spi_free(void *block) {
    free(block);
}

char *spi_strndup(const char *text, size_t len) {
    char *copy = spi_malloc(len + 1);
    if (!copy) return NULL;
    if (len) memcpy(copy, text, len);
    copy[len] = '\0';
    return copy;
}

char *spi_strdup(const char *text) {
    return spi_strndup(text, strlen(text));
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* With SCOPE_PROFILER_HUGE_PAGES=1: a block of whole 2 MiB huge pages where the kernel grants them
 * (transparent huge pages, "madvise" or "always"): one fault per 2 MiB
 * instead of 512, and one TLB entry. Mapped with room to align, trimmed,
 * marked, then populated with the huge pages; a kernel without
 * MADV_POPULATE_WRITE gets every page touched. NULL on failure. */
static void *map_huge(size_t size_bytes) {
    size_t span = size_bytes + HUGE_PAGE_BYTES;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *block = (char *)(((uintptr_t)raw + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1));
    if (block > raw) munmap(raw, (size_t)(block - raw));
    size_t tail = (size_t)(raw + span - (block + size_bytes));
    if (tail) munmap(block + size_bytes, tail);
    (void)madvise(block, size_bytes, MADV_HUGEPAGE);
    if (madvise(block, size_bytes, MADV_POPULATE_WRITE) != 0) {
        long page = sysconf(_SC_PAGESIZE);
        for (size_t at = 0; at < size_bytes; at += (size_t)(page > 0 ? page : 4096))
            ((volatile char *)block)[at] = 0;
    }
    return block;
}

void *spi_map_populated(size_t size_bytes) {
    if (size_bytes >= HUGE_PAGE_BYTES && size_bytes % HUGE_PAGE_BYTES == 0 && huge_pages_wanted())
        return map_huge(size_bytes);
    void *block = mmap(NULL, size_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return block == MAP_FAILED ? NULL : block;
}

void spi_unmap(void *block, size_t size_bytes) {
    if (block) munmap(block, size_bytes);
}
