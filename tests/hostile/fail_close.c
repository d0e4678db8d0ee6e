/*
 * fail_close.c - an LD_PRELOAD shim (issue 29, item 2): the disk fills up
 * exactly while HDF5 closes an output file.
 *
 * It interposes H5Fclose: the FAIL_CLOSE_NTH-th close (1 = the first) of a
 * file whose name is a writer's temporary sibling (".<name>.XXXXXX.tmp")
 * runs with every pwrite and ftruncate of the process failing with ENOSPC,
 * as on a full file system. Everything else passes through. Before the
 * fix, HDF5's close failed, the writer closed the half-closed identifier
 * again (SIGSEGV), and HDF5's exit handler closed it once more.
 */
#include <dlfcn.h>
#include <errno.h>
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static int failing;   /* inside the chosen H5Fclose */
static int temp_closes;

static int is_temporary(hid_t file) {
    char name[4096];
    ssize_t len = H5Fget_name(file, name, sizeof name);
    if (len <= 0 || (size_t)len >= sizeof name) return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strlen(base);
    return base[0] == '.' && n > 4 && strcmp(base + n - 4, ".tmp") == 0;
}

herr_t H5Fclose(hid_t file) {
    herr_t (*real)(hid_t) = (herr_t(*)(hid_t))dlsym(RTLD_NEXT, "H5Fclose");
    const char *nth = getenv("FAIL_CLOSE_NTH");
    int chosen = nth && is_temporary(file) && ++temp_closes == atoi(nth);
    if (chosen) failing = 1;
    herr_t rc = real(file);
    if (chosen) failing = 0;
    return rc;
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    ssize_t (*real)(int, const void *, size_t, off_t) =
        (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    if (failing) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buf, count, offset);
}

int ftruncate(int fd, off_t length) {
    int (*real)(int, off_t) = (int (*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
    if (failing) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, length);
}
