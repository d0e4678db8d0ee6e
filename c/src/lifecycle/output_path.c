/*
 * output_path.c - see output_path.h.
 *
 * Batch jobs are the reason for both rules. A job script often cannot
 * change the program (the path is compiled in, or set by an input file),
 * but it can always set the environment: so $SCOPE_PROFILER_FILE wins over
 * the argument, the way the rest of the SCOPE_PROFILER_* variables switch a
 * built program's behaviour. And one script runs many times (job arrays,
 * several launches per job, ranks of a serial code started by srun): so
 * the path may name the job, the rank and the process, and runs do not
 * overwrite each other's files.
 *
 * %r is the job's rank when the profiler runs over MPI (one file holds
 * every rank and only rank 0 writes it, so it expands to 0 there);
 * otherwise the launcher's rank of this process (SLURM_PROCID,
 * OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), else 0. %j is the batch
 * system's job id (SLURM_JOB_ID, PBS_JOBID, LSB_JOBID, JOB_ID, FLUX_JOB_ID),
 * else "nojob". %p is the process id.
 */
#include "lifecycle/output_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"

#define DEFAULT_FILE "profiling_data.h5"

static const char *first_env(const char *const *names) {
    for (; *names; names++) {
        const char *value = getenv(*names);
        if (value && *value) return value;
    }
    return NULL;
}

char *spi_output_path(const char *argument, uint32_t rank, uint32_t job_size) {
    const char *from_env = getenv("SCOPE_PROFILER_FILE");
    const char *pattern = from_env && *from_env ? from_env
                          : argument && *argument ? argument
                                                  : DEFAULT_FILE;
    static const char *const rank_vars[] = {"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                            "PMIX_RANK", NULL};
    static const char *const job_vars[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID",
                                           "FLUX_JOB_ID", NULL};
    char rank_text[32], pid_text[32];
    const char *launcher_rank = first_env(rank_vars);
    if (job_size > 1 || !launcher_rank) snprintf(rank_text, sizeof rank_text, "%u", rank);
    else snprintf(rank_text, sizeof rank_text, "%s", launcher_rank);
    snprintf(pid_text, sizeof pid_text, "%ld", (long)getpid());
    const char *job = first_env(job_vars);
    if (!job) job = "nojob";

    /* Two passes: measure, then write. */
    char *out = NULL;
    size_t len = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t at = 0;
        for (const char *p = pattern; *p; p++) {
            const char *piece = NULL;
            char single[2] = {*p, '\0'};
            if (*p == '%' && p[1]) {
                switch (p[1]) {
                case 'r': piece = rank_text; break;
                case 'j': piece = job; break;
                case 'p': piece = pid_text; break;
                case '%': piece = "%"; break;
                default: break;
                }
                if (piece) p++;
            }
            if (!piece) piece = single;
            size_t n = strlen(piece);
            if (out) memcpy(out + at, piece, n);
            at += n;
        }
        if (pass == 0) {
            len = at;
            out = spi_malloc(len + 1);
            if (!out) return NULL;
        } else {
            out[len] = '\0';
        }
    }
    return out;
}

bool spi_output_path_per_process(const char *argument) {
    const char *from_env = getenv("SCOPE_PROFILER_FILE");
    const char *pattern = from_env && *from_env ? from_env : argument ? argument : "";
    for (const char *p = pattern; *p; p++) {
        if (*p != '%') continue;
        if (p[1] == 'r' || p[1] == 'p') return true;
        if (p[1]) p++; /* "%%" and the like: skip the escaped character */
    }
    return false;
}

bool spi_launcher_rank(int *rank, int *size) {
    static const char *const pairs[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                           {"PMI_RANK", "PMI_SIZE"},
                                           {"PMIX_RANK", "PMIX_SIZE"},
                                           {"SLURM_PROCID", "SLURM_NTASKS"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *r = getenv(pairs[i][0]), *n = getenv(pairs[i][1]);
        if (r && *r && n && *n) {
            *rank = atoi(r);
            *size = atoi(n);
            return *size > 0;
        }
    }
    return false;
}

char *spi_output_path_for_rank(const char *path, int rank) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) dot = path + strlen(path);
    size_t head = (size_t)(dot - path);
    size_t length = strlen(path) + 32;
    char *out = spi_malloc(length);
    if (out) snprintf(out, length, "%.*s.rank%d%s", (int)head, path, rank, dot);
    return out;
}

int spi_output_dir_check(const char *path, spi_error *err) {
    /* the directory part: up to the last '/' (without trailing ones), "/"
     * for a file at the root, "." for a bare name */
    const char *slash = strrchr(path, '/');
    size_t len = slash ? (size_t)(slash - path) : 1;
    while (slash && len > 0 && path[len - 1] == '/') len--;
    if (slash && len == 0) len = 1; /* "/name" */
    char *dir = spi_malloc(len + 1);
    if (!dir) return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(dir, slash ? path : ".", len);
    dir[len] = '\0';
    struct stat st;
    int status = SP_OK;
    if (stat(dir, &st) != 0) {
        int error = errno;
        if (error == ENOENT || error == ENOTDIR)
            status = spi_error_set(err, SP_ERR_OUTPUT, "cannot write %s: the directory %s does "
                                   "not exist%s", path, dir,
                                   error == ENOTDIR ? " (a part of its path is a file)" : "");
        else
            status = spi_error_set(err, SP_ERR_OUTPUT,
                                   "cannot write %s: the directory %s cannot be examined (%s)",
                                   path, dir, strerror(error));
    } else if (!S_ISDIR(st.st_mode)) {
        status = spi_error_set(err, SP_ERR_OUTPUT, "cannot write %s: %s is not a directory",
                               path, dir);
    } else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
        /* the effective ids decide, as they will for the writer's open();
         * a read-only file system is refused here too (EROFS) */
        status = spi_error_set(err, SP_ERR_OUTPUT,
                               "cannot write %s: no files can be created in the directory %s (%s)",
                               path, dir, strerror(errno));
    }
    spi_free(dir);
    return status;
}
