/*
 * cli_output.c - see cli_output.h.
 *
 * The temporary name is ".<name>.<random>.tmp" beside the target, created
 * exclusively (O_EXCL / mkdir), so two exports never share one. Being in
 * the same directory makes the final rename atomic. A fatal signal removes
 * a temporary file; a temporary directory is removed by the normal error
 * paths only (unlinking a tree is not async-signal-safe), and its hidden
 * dot name marks it as debris if a kill -9 leaves it behind.
 */
#include "cli_output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"

static char *volatile tmp_path_for_signal;

static void on_fatal_signal(int sig) {
    char *path = tmp_path_for_signal;
    if (path) unlink(path); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A random-enough suffix without rand()'s global state: clock, pid and a
 * counter mixed; O_EXCL makes a clash a retry, never a shared file. */
static uint64_t mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* Try names until create() succeeds; returns 0 or errno. */
static int make_temporary(cli_output *o, int is_dir) {
    const char *path = o->path;
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    size_t len = dir_len + strlen(base) + 32;
    o->tmp = malloc(len);
    if (!o->tmp) return ENOMEM;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed = mix((uint64_t)now.tv_nsec ^ ((uint64_t)now.tv_sec << 30) ^
                        ((uint64_t)getpid() << 16));
    int err = EEXIST;
    for (int attempt = 0; attempt < 100 && err == EEXIST; attempt++) {
        snprintf(o->tmp, len, "%.*s.%s.%08llx.tmp", (int)dir_len, path, base,
                 (unsigned long long)(mix(seed + (uint64_t)attempt) & 0xffffffffULL));
        if (is_dir) {
            err = mkdir(o->tmp, 0777) == 0 ? 0 : errno;
        } else {
            /* 0666 through the umask: the published file gets the
             * permissions any newly created file would. */
            int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
            if (fd >= 0) {
                o->fp = fdopen(fd, "w");
                if (!o->fp) {
                    err = errno;
                    close(fd);
                    unlink(o->tmp);
                } else {
                    err = 0;
                }
            } else {
                err = errno;
            }
        }
    }
    if (err) {
        free(o->tmp);
        o->tmp = NULL;
    }
    return err;
}

static void catch_signals(void) {
    signal(SIGINT, on_fatal_signal);
    signal(SIGTERM, on_fatal_signal);
    signal(SIGHUP, on_fatal_signal);
}

/* Publishing renames over the target: a device, FIFO, socket or directory
 * must never be replaced by an export (CI runs as root, and -o /dev/null
 * once replaced the system's /dev/null). 0, or the exit code after the
 * message. "-" (standard output) is the way to write to a stream. */
static int refuse_special_target(const char *tool, const char *path) {
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) return 0;
    fprintf(stderr,
            "%s: %s exists and is not a regular file; refusing to replace it (use -o - to "
            "write to standard output)\n",
            tool, path);
    return CLI_EXIT_OTHER;
}

int cli_output_open(cli_output *o, const char *tool, const char *path) {
    memset(o, 0, sizeof *o);
    o->tool = tool;
    o->path = path;
    if (!strcmp(path, "-")) {
        o->fp = stdout;
        return 0;
    }
    int refused = refuse_special_target(tool, path);
    if (refused) return refused;
    catch_signals();
    int err = make_temporary(o, 0);
    if (err) {
        fprintf(stderr, "%s: cannot create %s: %s\n", tool, path, strerror(err));
        return CLI_EXIT_OTHER;
    }
    tmp_path_for_signal = o->tmp;
    /* Large writes: an export is one long sequential stream. */
    setvbuf(o->fp, NULL, _IOFBF, 1u << 20);
    return 0;
}

static int dir_is_empty(const char *path) {
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    return empty;
}

int cli_output_open_dir(cli_output *o, const char *tool, const char *path) {
    memset(o, 0, sizeof *o);
    o->tool = tool;
    o->path = path;
    o->is_dir = 1;
    struct stat st;
    if (!strcmp(path, "-")) {
        fprintf(stderr, "%s: this format writes a directory, not standard output\n", tool);
        return CLI_EXIT_OTHER;
    }
    if (lstat(path, &st) == 0 && !(S_ISDIR(st.st_mode) && dir_is_empty(path))) {
        fprintf(stderr, "%s: %s exists and is not an empty directory; remove it first\n", tool,
                path);
        return CLI_EXIT_OTHER;
    }
    catch_signals();
    int err = make_temporary(o, 1);
    if (err) {
        fprintf(stderr, "%s: cannot create %s: %s\n", tool, path, strerror(err));
        return CLI_EXIT_OTHER;
    }
    return 0;
}

/* Remove a tree this process wrote (regular files and directories only;
 * symbolic links are unlinked, never followed). */
static void remove_tree(const char *path) {
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            size_t len = strlen(path) + strlen(e->d_name) + 2;
            char *child = malloc(len);
            if (!child) continue;
            snprintf(child, len, "%s/%s", path, e->d_name);
            struct stat st;
            if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(child);
            else unlink(child);
            free(child);
        }
        closedir(d);
    }
    rmdir(path);
}

void cli_output_abandon(cli_output *o) {
    if (!o->tmp) return;
    if (o->is_dir) {
        remove_tree(o->tmp);
    } else {
        if (o->fp) fclose(o->fp);
        unlink(o->tmp);
        tmp_path_for_signal = NULL;
    }
    free(o->tmp);
    o->tmp = NULL;
    o->fp = NULL;
}

static void sync_parent(const char *path) {
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : NULL;
    int dfd = open(dir ? dir : ".", O_RDONLY);
    if (dfd >= 0) {
        fsync(dfd); /* best effort: some file systems refuse it */
        close(dfd);
    }
    free(dir);
}

int cli_output_publish(cli_output *o) {
    if (!o->tmp) {
        if (fflush(o->fp) != 0 || ferror(o->fp)) {
            fprintf(stderr, "%s: cannot write the output: %s\n", o->tool, strerror(errno));
            return CLI_EXIT_OTHER;
        }
        return 0;
    }
    int err = 0;
    if (o->is_dir) {
        /* An empty target directory left by the user is replaced: rmdir
         * only succeeds while it is still empty. */
        rmdir(o->path);
        if (rename(o->tmp, o->path) != 0) err = errno;
    } else {
        if (fflush(o->fp) != 0 || ferror(o->fp)) err = errno ? errno : EIO;
        if (!err && fsync(fileno(o->fp)) != 0) err = errno;
        if (fclose(o->fp) != 0 && !err) err = errno;
        o->fp = NULL;
        if (!err && refuse_special_target(o->tool, o->path)) {
            cli_output_abandon(o); /* appeared while the export ran */
            return CLI_EXIT_OTHER;
        }
        if (!err && rename(o->tmp, o->path) != 0) err = errno;
    }
    if (err) {
        fprintf(stderr, "%s: cannot write %s: %s\n", o->tool, o->path, strerror(err));
        cli_output_abandon(o);
        return CLI_EXIT_OTHER;
    }
    tmp_path_for_signal = NULL;
    sync_parent(o->path);
    free(o->tmp);
    o->tmp = NULL;
    return 0;
}
