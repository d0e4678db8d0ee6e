/*
 * scope-merge - merge separately recorded profiles (a Python driver's and
 * the native code's, say) into one result set per rank.
 *
 *   scope-merge IN1 IN2 [IN...] -o OUT [--label TEXT] [--quiet]
 *
 * Exit status: 0 merged; 2 refused (usage, an unreadable or repeated input,
 * output equal to an input, colliding region names: nothing is written);
 * 1 the merge failed while writing (nothing is left behind either).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scope_profiler_merge.h"

#define MESSAGE_BYTES (1u << 20)

static void usage(FILE *out) {
    fprintf(out,
            "usage: scope-merge IN1 IN2 [IN...] -o OUT [--label TEXT] [--quiet]\n"
            "Merge profiles recorded separately (e.g. a Python driver and native code)\n"
            "into one schema-3 file. Ranks line up by number; a region name present in\n"
            "more than one input is refused. Exit status: 0 ok, 2 refused, 1 failed.\n");
}

typedef struct progress_state {
    struct timespec started;
    int shown;       /* a bar was drawn: finish the line at the end */
    int last_percent;
} progress_state;

static double seconds_since(const struct timespec *t0) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* A bar only for a terminal and only once the merge has run a second:
 * short merges and redirected stderr stay silent. */
static void on_progress(uint64_t done, uint64_t total, void *user) {
    progress_state *p = user;
    if (total == 0 || seconds_since(&p->started) < 1.0) return;
    int percent = (int)(done * 100 / total);
    if (percent > 100) percent = 100;
    if (p->shown && percent == p->last_percent) return;
    int width = 40, filled = percent * width / 100;
    fprintf(stderr, "\rscope-merge [%.*s%*s] %3d%%", filled,
            "########################################", width - filled, "", percent);
    fflush(stderr);
    p->shown = 1;
    p->last_percent = percent;
}

static int exit_code(int status) {
    switch (status) {
    case SP_OK: return 0;
    case SP_ERR_OUT_OF_MEMORY:
    case SP_ERR_OUTPUT:
    case SP_ERR_HDF5: return 1;
    default: return 2;
    }
}

int main(int argc, char **argv) {
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    const char *output = NULL, *label = NULL;
    int quiet = 0;
    size_t count = 0;
    if (!inputs) return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            free(inputs);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (i + 1 >= argc || output) goto bad_usage;
            output = argv[++i];
        } else if (strncmp(a, "--output=", 9) == 0) {
            if (output) goto bad_usage;
            output = a + 9;
        } else if (strcmp(a, "--label") == 0) {
            if (i + 1 >= argc) goto bad_usage;
            label = argv[++i];
        } else if (strncmp(a, "--label=", 8) == 0) {
            label = a + 8;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (a[0] == '-' && a[1] != '\0' && strcmp(a, "--") != 0) {
            fprintf(stderr, "scope-merge: unknown option %s\n", a);
            goto bad_usage;
        } else if (strcmp(a, "--") == 0) {
            while (++i < argc) inputs[count++] = argv[i];
        } else {
            inputs[count++] = a;
        }
    }
    if (count < 2) {
        fprintf(stderr, "scope-merge: at least two input profiles are needed (got %zu)\n", count);
        goto bad_usage;
    }
    if (!output || !*output) {
        fprintf(stderr, "scope-merge: no output file given (-o OUT)\n");
        goto bad_usage;
    }

    sp_merge_options options;
    sp_merge_options_init(&options);
    options.label = label;
    progress_state progress = {.last_percent = -1};
    clock_gettime(CLOCK_MONOTONIC, &progress.started);
    if (!quiet && isatty(STDERR_FILENO)) {
        options.progress = on_progress;
        options.progress_user = &progress;
    }
    char *message = malloc(MESSAGE_BYTES);
    if (!message) {
        free(inputs);
        return 1;
    }
    int status = sp_merge_files(inputs, count, output, &options, message, MESSAGE_BYTES);
    if (progress.shown) fputc('\n', stderr);
    if (status != SP_OK)
        fprintf(stderr, "%s%s\n", strncmp(message, "scope-merge", 11) ? "scope-merge: " : "",
                message);
    else if (!quiet)
        printf("scope-merge: wrote %s from %zu inputs\n", output, count);
    free(message);
    free(inputs);
    return exit_code(status);

bad_usage:
    usage(stderr);
    free(inputs);
    return 2;
}
