/*
 * spill.c - the unlinked spill file of a bounded trace (spill.h).
 *
 * O_TMPFILE gives a file that never had a name; where the file system
 * cannot (NFS, old kernels) a hidden name is made with mkstemp and removed
 * at once. Either way nothing is left behind, whatever ends the process.
 */
#include "record/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"

static int open_unnamed(const char *directory) {
#ifdef O_TMPFILE
    int fd = open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != ENOENT && errno != EINVAL) return -1;
#endif
    size_t length = strlen(directory) + 64;
    char *name = spi_malloc(length);
    if (!name) {
        errno = ENOMEM;
        return -1;
    }
    snprintf(name, length, "%s/.scope-profiler-spill.%ld.XXXXXX", directory, (long)getpid());
    int named = mkostemp(name, O_CLOEXEC);
    if (named >= 0) unlink(name);
    int saved = errno;
    spi_free(name);
    errno = saved;
    return named;
}

/* The file `fd` opened again with O_DIRECT, for the chunks' blocks (spill.h
 * says why); reads and unaligned appends keep `fd`. Through /proc, the one
 * way to reopen a file that has no name; -1 where that or O_DIRECT is
 * refused (no /proc, a file system without direct I/O): every write then
 * goes through `fd`. */
static int open_direct(int fd) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
}

int spi_spill_open(spi_spill **spill, const char *output_path, spi_error *err) {
    *spill = NULL;
    char *copy = spi_strdup(output_path);
    if (!copy) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    const char *directory = dirname(copy);
    int fd = open_unnamed(directory);
    if (fd < 0) {
        int status = spi_error_set(err, SP_ERR_OUTPUT, "%s: cannot create the spill file: %s",
                                   directory, strerror(errno));
        spi_free(copy);
        return status;
    }
    spi_free(copy);
    spi_spill *s = spi_calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    }
    s->fd = fd;
    s->direct_fd = open_direct(fd);
    *spill = s;
    return SP_OK;
}

/* Make sure the file has blocks up to `need` (one extent ahead), so the
 * writes below only fill them. One thread extends; the others go on (a
 * write past the allocated end is only slower). 0, or the errno of a file
 * system that has no room (one that cannot preallocate is fine). */
static int allocate_ahead(spi_spill *spill, uint64_t need) {
    uint64_t have = atomic_load(&spill->allocated);
    if (need <= have) return 0;
    uint64_t target = (need / SPI_SPILL_EXTENT + 2) * SPI_SPILL_EXTENT;
    if (!atomic_compare_exchange_strong(&spill->allocated, &have, target)) return 0;
    int rc = fallocate(spill->fd, 0, (off_t)have, (off_t)(target - have));
    if (rc == 0 || errno == EOPNOTSUPP || errno == ENOSYS) return 0;
    return errno;
}

uint64_t spi_spill_reserve(spi_spill *spill, size_t bytes) {
    return atomic_fetch_add(&spill->end, bytes);
}

int spi_spill_write_at(spi_spill *spill, const void *data, size_t bytes, uint64_t at) {
    int error = allocate_ahead(spill, at + bytes);
    if (error) return error;
    const char *p = data;
    for (size_t done = 0; done < bytes;) {
        ssize_t n = pwrite(spill->fd, p + done, bytes - done, (off_t)(at + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : ENOSPC;
        done += (size_t)n;
    }
    atomic_fetch_add_explicit(&spill->written, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&spill->writes, 1, memory_order_relaxed);
    return 0;
}

uint64_t spi_spill_reserve_block(spi_spill *spill, size_t block_bytes) {
    uint64_t end = atomic_load(&spill->end);
    for (;;) {
        uint64_t at = (end + SPI_SPILL_BLOCK - 1) / SPI_SPILL_BLOCK * SPI_SPILL_BLOCK;
        if (atomic_compare_exchange_weak(&spill->end, &end, at + block_bytes)) return at;
    }
}

int spi_spill_write_block(spi_spill *spill, const void *block, size_t block_bytes, uint64_t at,
                          size_t data_bytes) {
    int error = allocate_ahead(spill, at + block_bytes);
    if (error) return error;
    const char *p = block;
    int fd = spill->direct_fd >= 0 && (uintptr_t)block % SPI_SPILL_BLOCK == 0 &&
                     !atomic_load_explicit(&spill->direct_refused, memory_order_relaxed)
                 ? spill->direct_fd
                 : spill->fd;
    for (size_t done = 0; done < block_bytes;) {
        ssize_t n = pwrite(fd, p + done, block_bytes - done, (off_t)(at + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EINVAL && fd != spill->fd) {
            /* the file system takes O_DIRECT at open but not these writes
             * (alignment, or none at all): the page cache from now on */
            atomic_store_explicit(&spill->direct_refused, true, memory_order_relaxed);
            fd = spill->fd;
            continue;
        }
        if (n <= 0) return n < 0 ? errno : ENOSPC;
        done += (size_t)n;
    }
    atomic_fetch_add_explicit(&spill->written, data_bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&spill->writes, 1, memory_order_relaxed);
    return 0;
}

int spi_spill_append(spi_spill *spill, const void *data, size_t bytes, uint64_t *offset) {
    uint64_t at = spi_spill_reserve(spill, bytes);
    int error = spi_spill_write_at(spill, data, bytes, at);
    if (error) return error;
    *offset = at;
    return 0;
}

int spi_spill_read(const spi_spill *spill, uint64_t offset, void *data, size_t bytes) {
    char *p = data;
    for (size_t done = 0; done < bytes;) {
        ssize_t n = pread(spill->fd, p + done, bytes - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        done += (size_t)n;
    }
    return 0;
}

int spi_spill_read_block(const spi_spill *spill, uint64_t offset, size_t bytes, void *block,
                         size_t capacity, bool *direct, const void **data) {
    uint64_t first = offset / SPI_SPILL_BLOCK * SPI_SPILL_BLOCK;
    uint64_t needed = offset + bytes - first;
    size_t length = spi_spill_block_bytes((size_t)needed);
    /* events sit 8-aligned after a chunk's header; anything else, or no
     * room, takes the ordinary read */
    if (*direct && spill->direct_fd >= 0 && (uintptr_t)block % SPI_SPILL_BLOCK == 0 &&
        length <= capacity && (offset - first) % 8 == 0) {
        char *p = block;
        size_t done = 0;
        while (done < needed) {
            ssize_t n = pread(spill->direct_fd, p + done, length - done, (off_t)(first + done));
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno == EINVAL) { /* no direct reads here: buffered from now on */
                *direct = false;
                break;
            }
            if (n < 0) return errno;
            if (n == 0) return EIO; /* the file ends before the bytes */
            done += (size_t)n;
            /* a short read ends at the end of the file; an unaligned rest
             * cannot be read directly */
            if (done < needed && done % SPI_SPILL_BLOCK) return EIO;
        }
        if (done >= needed) {
            *data = p + (offset - first);
            return 0;
        }
    }
    if (bytes > capacity) return EINVAL;
    *data = block;
    return spi_spill_read(spill, offset, block, bytes);
}

void spi_spill_will_read(const spi_spill *spill, uint64_t offset, size_t bytes) {
    (void)posix_fadvise(spill->fd, (off_t)offset, (off_t)bytes, POSIX_FADV_WILLNEED);
}

void spi_spill_close(spi_spill *spill) {
    if (!spill) return;
    if (spill->direct_fd >= 0) close(spill->direct_fd);
    close(spill->fd);
    spi_free(spill);
}
