/*
 * scope-merge - merge separately recorded profiles (a Python driver's and
 * the native code's, say) into one result set per rank.
 *
 *   scope-merge IN1 IN2 [IN...] -o OUT [--prefix INPUT=PREFIX]... [--allow-disjoint]
 *               [--label TEXT] [--quiet]
 *
 * Exit status (cli_common.h, docs/guide/results.md): 0 merged; 1 usage (an
 * unknown option, no -o, fewer than two inputs); 2 a bad input (unreadable,
 * repeated, equal to the output, colliding region names); 3 any other
 * failure (out of memory, an unwritable output). Nothing is written unless
 * the merge succeeds.
 */
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "cli_isolate.h"
#include "scope_profiler_results.h"
#include "scope_profiler_merge.h"

#define MESSAGE_BYTES (1u << 20)

static const char TOOL[] = "scope-merge";

#ifdef SCOPE_MERGE_HAVE_MPI
#include <limits.h>
#include <mpi.h>

/* The group's one operation (sp_merge_group.allgather) on MPI_COMM_WORLD;
 * user: an int[2 * size] scratch for the counts and displacements. */
static int mpi_allgather(const void *mine, void *all, const size_t *bytes, void *user) {
    int *counts = user, size = 0, rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *displs = counts + size;
    size_t at = 0;
    for (int p = 0; p < size; p++) {
        /* MPI counts are int: a larger exchange fails (on every process). */
        if (bytes[p] > INT_MAX || at > INT_MAX) return 1;
        counts[p] = (int)bytes[p];
        displs[p] = (int)at;
        at += bytes[p];
    }
    return MPI_Allgatherv(mine, counts[rank], MPI_BYTE, all, counts, displs, MPI_BYTE,
                          MPI_COMM_WORLD) != MPI_SUCCESS;
}
#endif

static void usage(FILE *out) {
    fprintf(out,
            "usage: scope-merge IN1 IN2 [IN...] -o OUT [--prefix INPUT=PREFIX]...\n"
            "                   [--allow-disjoint] [--label TEXT] [--quiet]\n"
            "Merge profiles recorded separately (e.g. a Python driver and native code)\n"
            "into one schema-3 file. Ranks line up by number; a region name present in\n"
            "more than one input is refused, and so are inputs whose recorded time\n"
            "spans do not overlap. Metadata: --label, else the first input's label;\n"
            "mpi_size, num_nodes, omp_num_threads, total_cores the largest;\n"
            "start_time_ns the earliest, finalize_time_ns the latest; any other key\n"
            "the first input's that has it; each input's source, source_language,\n"
            "label and scope_profiler_version are kept as merged_sources,\n"
            "merged_source_languages, merged_labels and merged_versions (with\n"
            "merged_inputs, one item per input). Every call gets a lane (thread id):\n"
            "a driver's main thread and the native main thread it encloses share one,\n"
            "calls that do not nest across inputs never do (thread_table names each).\n"
            "\n"
            "Options:\n"
            "  -o, --output OUT        the merged file (written to a temporary file and\n"
            "                          renamed into place)\n"
            "  --prefix INPUT=PREFIX   put PREFIX before every region name of INPUT (the\n"
            "                          path as given, or its position 1, 2, ...) before\n"
            "                          the collision check; repeatable, once per input\n"
            "  --allow-disjoint        merge inputs whose recorded time spans do not\n"
            "                          overlap (refused by default: they were not\n"
            "                          recorded together)\n"
            "  --label TEXT            label of the merged run (default: the first\n"
            "                          input's)\n"
            "  -q, --quiet             no progress bar, no summary line\n"
            "  --mpi                   merge with every process of the MPI job\n"
            "                          (mpirun -np N scope-merge --mpi ...): each\n"
            "                          checks and writes a block of ranks to a part\n"
            "                          file beside OUT, process 0 assembles OUT\n"
            "  -h, --help              show this help\n"
            "      --version           show the version, git describe, HDF5 and MPI\n"
            "\n"
            "Exit status:\n"
            "  0  merged\n"
            "  1  usage error (unknown option, no -o OUT, fewer than two inputs)\n"
            "  2  a bad input (unreadable, repeated, the output itself, colliding\n"
            "     region names, anything scope-check rejects); nothing is written\n"
            "  3  any other failure (out of memory, OUT not writable); nothing is\n"
            "     written\n");
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

/* Resolve the --prefix specs against the inputs: INPUT is a path exactly as
 * given, else a 1-based position. Fills prefixes[count]; returns 0 or
 * CLI_EXIT_USAGE after a message. */
static int resolve_prefixes(const char *const *specs, size_t spec_count, const char **inputs,
                            size_t count, const char **prefixes) {
    for (size_t s = 0; s < spec_count; s++) {
        const char *eq = strrchr(specs[s], '=');
        if (!eq || eq == specs[s] || !eq[1])
            return cli_usage_error(TOOL, "--prefix needs INPUT=PREFIX, got '%s'", specs[s]);
        size_t key_len = (size_t)(eq - specs[s]);
        const char *prefix = eq + 1;
        if (strchr(prefix, '/'))
            return cli_usage_error(TOOL, "the prefix '%s' contains '/'", prefix);
        size_t which = count;
        for (size_t i = 0; i < count && which == count; i++)
            if (strlen(inputs[i]) == key_len && strncmp(inputs[i], specs[s], key_len) == 0)
                which = i;
        if (which == count) {
            char *end = NULL;
            unsigned long position = strtoul(specs[s], &end, 10);
            if (end == eq && specs[s][0] >= '0' && specs[s][0] <= '9' && position >= 1 &&
                position <= count)
                which = position - 1;
        }
        if (which == count)
            return cli_usage_error(TOOL, "--prefix '%.*s' is neither an input nor a position "
                                   "1-%zu", (int)key_len, specs[s], count);
        if (prefixes[which])
            return cli_usage_error(TOOL, "two prefixes for the input %s", inputs[which]);
        prefixes[which] = prefix;
    }
    return 0;
}

/* SIGINT/SIGTERM/SIGHUP during the merge: the temporary output goes, then
 * the signal takes its default course (the exit status tells the shell). */
static void on_fatal_signal(int sig) {
    sp_remove_partial_outputs();
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv) {
    cli_isolate_start("scope-merge");
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    const char **prefix_specs = calloc((size_t)argc, sizeof *prefix_specs);
    const char **prefixes = calloc((size_t)argc, sizeof *prefixes);
    size_t spec_count = 0;
    const char *output = NULL, *label = NULL;
    int quiet = 0, allow_disjoint = 0, use_mpi = 0;
    size_t count = 0;
    int rc = CLI_EXIT_OK;
    if (!inputs || !prefix_specs || !prefixes) {
        fprintf(stderr, "scope-merge: out of memory\n");
        rc = CLI_EXIT_OTHER;
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            goto done;
        } else if (strcmp(a, "--version") == 0) {
            rc = cli_print_version(TOOL);
            goto done;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (i + 1 >= argc) {
                rc = cli_usage_error(TOOL, "option '%s' needs a value", a);
                goto done;
            }
            if (output) {
                rc = cli_usage_error(TOOL, "%s", "more than one output given");
                goto done;
            }
            output = argv[++i];
        } else if (strncmp(a, "--output=", 9) == 0) {
            if (output) {
                rc = cli_usage_error(TOOL, "%s", "more than one output given");
                goto done;
            }
            output = a + 9;
        } else if (strcmp(a, "--label") == 0) {
            if (i + 1 >= argc) {
                rc = cli_usage_error(TOOL, "option '%s' needs a value", a);
                goto done;
            }
            label = argv[++i];
        } else if (strcmp(a, "--prefix") == 0) {
            if (i + 1 >= argc) {
                rc = cli_usage_error(TOOL, "option '%s' needs a value", a);
                goto done;
            }
            prefix_specs[spec_count++] = argv[++i];
        } else if (strncmp(a, "--prefix=", 9) == 0) {
            prefix_specs[spec_count++] = a + 9;
        } else if (strncmp(a, "--label=", 8) == 0) {
            label = a + 8;
        } else if (strcmp(a, "--allow-disjoint") == 0) {
            allow_disjoint = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--mpi") == 0) {
            use_mpi = 1;
        } else if (a[0] == '-' && a[1] != '\0' && strcmp(a, "--") != 0) {
            rc = cli_usage_error(TOOL, "unknown option '%s'", a);
            goto done;
        } else if (strcmp(a, "--") == 0) {
            while (++i < argc) inputs[count++] = argv[i];
        } else {
            inputs[count++] = a;
        }
    }
    if (count < 2) {
        rc = cli_usage_error(TOOL, "at least two input profiles are needed (got %zu)", count);
        goto done;
    }
    if (!output || !*output) {
        rc = cli_usage_error(TOOL, "%s", "no output file given (-o OUT)");
        goto done;
    }

    rc = resolve_prefixes(prefix_specs, spec_count, inputs, count, prefixes);
    if (rc) goto done;
#ifdef SCOPE_MERGE_HAVE_MPI
    sp_merge_group group = {.index = 0, .size = 1, .allgather = mpi_allgather};
    if (use_mpi) {
        if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
            fprintf(stderr, "scope-merge: MPI_Init failed\n");
            rc = CLI_EXIT_OTHER;
            goto done;
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &group.index);
        MPI_Comm_size(MPI_COMM_WORLD, &group.size);
        group.user = calloc(2 * (size_t)group.size, sizeof(int));
        if (!group.user) {
            fprintf(stderr, "scope-merge: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, CLI_EXIT_OTHER);
        }
        /* One progress bar and one summary line: process 0's. */
        if (group.index != 0) quiet = 1;
    }
#else
    if (use_mpi) {
        rc = cli_usage_error(TOOL, "%s", "--mpi: this scope-merge was built without MPI");
        goto done;
    }
#endif

    sp_merge_options options;
    sp_merge_options_init(&options);
    options.label = label;
    if (spec_count) options.prefixes = prefixes;
    options.allow_disjoint = allow_disjoint;
#ifdef SCOPE_MERGE_HAVE_MPI
    if (use_mpi && group.size > 1) options.group = &group;
#endif
    progress_state progress = {.last_percent = -1};
    clock_gettime(CLOCK_MONOTONIC, &progress.started);
    if (!quiet && isatty(STDERR_FILENO)) {
        options.progress = on_progress;
        options.progress_user = &progress;
    }
    char *message = malloc(MESSAGE_BYTES);
    if (!message) {
        fprintf(stderr, "scope-merge: out of memory\n");
        rc = CLI_EXIT_OTHER;
        goto done;
    }
    signal(SIGINT, on_fatal_signal);
    signal(SIGTERM, on_fatal_signal);
    signal(SIGHUP, on_fatal_signal);
    /* A fault inside libhdf5 on a damaged input must not leave the
     * temporary output behind either (cli_isolate.h reports it). */
    signal(SIGSEGV, on_fatal_signal);
    signal(SIGBUS, on_fatal_signal);
    signal(SIGABRT, on_fatal_signal);
    signal(SIGFPE, on_fatal_signal);
    signal(SIGILL, on_fatal_signal);
    /* Each input through the reader's gate on its own first, so that a
     * fault there names the one file; then the merge as one read of all. */
    uint64_t input_bytes = 0;
    char read_label[1024] = "";
    for (size_t i = 0; i < count; i++) {
        sp_results *gate = NULL;
        if (cli_results_open(inputs[i], SP_RESULTS_SUMMARY_ONLY, &gate, NULL, 0) == SP_OK)
            sp_results_close(gate);
        input_bytes += cli_file_bytes(inputs[i]);
        size_t used = strlen(read_label);
        snprintf(read_label + used, sizeof read_label - used, "%s%s", i ? ", " : "", inputs[i]);
    }
    cli_isolate_begin_read(read_label, input_bytes, 4);
    int status = sp_merge_files(inputs, count, output, &options, message, MESSAGE_BYTES);
    cli_isolate_end_read();
    if (progress.shown) fputc('\n', stderr);
    /* In a group every process has the same message: process 0 says it. */
    if (status != SP_OK && !(options.group && options.group->index != 0))
        fprintf(stderr, "%s%s\n", strncmp(message, "scope-merge", 11) ? "scope-merge: " : "",
                message);
    else if (!quiet)
        printf("scope-merge: wrote %s from %zu inputs\n", output, count);
    free(message);
    rc = cli_exit_code(status);
#ifdef SCOPE_MERGE_HAVE_MPI
    if (use_mpi) {
        free(group.user);
        MPI_Finalize();
    }
#endif
done:
    free(inputs);
    free(prefix_specs);
    free(prefixes);
    return rc;
}
