/*
 * scope_profiler_merge.h - merging separately recorded profiles into one
 * result set per rank: the library behind `scope-merge`.
 *
 * Overview
 * --------
 * A mixed-language run records twice: the Python driver writes its own
 * profile and the native code (C/Fortran through libscopeprofiler) writes
 * another. sp_merge_files() combines two or more such files into one
 * schema-3 file, following the reference merge_results (FORMAT.md 5):
 *   - ranks line up by number (rank k of every input is rank k of the
 *     output);
 *   - an input's regions can be renamed first with a prefix
 *     (options->prefixes: "py:" makes "solve" "py:solve");
 *   - a region name found in more than one input (after the prefixes) is
 *     refused (SP_ERR_REGION_COLLISION), because merging would double-count
 *     it;
 *   - the inputs must belong together: their recorded time spans (first
 *     call start to last call end) must overlap or nest, else the merge is
 *     refused (SP_ERR_INVALID_ARGUMENT, naming the inputs and the gap)
 *     unless options->allow_disjoint;
 *   - metadata, key by key: "label" is options->label, else the first
 *     input's (argument order) that has one; the run's sizes (mpi_size,
 *     num_nodes, omp_num_threads, total_cores) are the largest of the
 *     inputs (mpi_size at least the highest rank + 1); every other key
 *     ("source", "source_language", "timestamp", "start_time_ns", ...) is
 *     the first input's that has it. What each input said about itself is
 *     kept per input, as string arrays in argument order ("" where an input
 *     has no such key): "merged_inputs" (the paths as given),
 *     "merged_sources", "merged_source_languages", "merged_labels";
 *   - call ids are renumbered so they stay unique per rank, and a root call
 *     of a later input that lies inside a call of an earlier one (same
 *     rank, main thread) gets the innermost such call as its parent, so the
 *     stored call tree spans both languages; exclusive totals are rebuilt
 *     for the merged tree;
 *   - thread tables, tags, source locations, GPU durations, per-call
 *     metadata and the rank<N> groups (perf events, LIKWID, line profiles)
 *     are carried over.
 * Inputs are anything sp_results_open() reads. Events are streamed in
 * bounded chunks: memory does not grow with the number of calls.
 *
 * When any input has the aggregate layout, the output is an aggregate
 * profile (docs/FORMAT.md 4.1): aggregate inputs are copied (rows and call
 * paths), every columnar input is reduced exactly to counts, totals,
 * minimum, maximum and exclusive times per (rank, region) and to its call
 * paths (read whole for that: memory grows with that input's calls), with
 * one notice on stderr that its timeline is not kept. A native root path
 * goes under a driver path only when all its calls lie inside one call of
 * that driver path (its earliest start and latest end inside that call);
 * otherwise it stays a root.
 *
 * Typical call sequence:
 *
 *     sp_merge_options opts;
 *     sp_merge_options_init(&opts);
 *     opts.label = "coupled run";
 *     const char *in[] = {"driver.h5", "native.h5"};
 *     char msg[4096];
 *     int st = sp_merge_files(in, 2, "merged.h5", &opts, msg, sizeof msg);
 *     if (st != SP_OK) fprintf(stderr, "%s\n", msg);
 *
 * The output is written to a temporary sibling and renamed into place only
 * when complete: on any error no output file is created and an existing
 * one is left untouched.
 *
 * Thread-safety: sp_merge_files may not run concurrently with other HDF5
 * work of the same process (the HDF5 library is not built thread-safe).
 */
#ifndef SCOPE_PROFILER_MERGE_H
#define SCOPE_PROFILER_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "scope_profiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Progress callback: `done` of `total` work units (events read; every event
 * is read twice) are finished. Called from sp_merge_files' thread, at most
 * once per chunk. Must not call back into the library.
 */
typedef void (*sp_merge_progress_fn)(uint64_t done, uint64_t total, void *user);

/**
 * A group of processes that merge together (`mpirun -np N scope-merge
 * --mpi`; see sp_merge_options.group). The library itself never calls MPI:
 * the caller lends it one collective operation.
 */
typedef struct sp_merge_group {
    /** This process's index in the group, 0 .. size-1. */
    int index;
    /** Processes in the group; 1 behaves exactly as no group. */
    int size;
    /**
     * All-gather (MPI_Allgatherv): process p passes bytes[p] bytes at
     * `mine`; `all` receives every process's bytes in process order
     * (process p's at the sum of bytes[0 .. p-1]). `bytes` has `size`
     * entries, the same on every process. Collective: every process makes
     * the same calls in the same order. Returns 0, or non-zero when the
     * exchange failed (the merge then fails with SP_ERR_MPI).
     */
    int (*allgather)(const void *mine, void *all, const size_t *bytes, void *user);
    void *user;
} sp_merge_group;

/** Options of sp_merge_files. Initialise with sp_merge_options_init(). */
typedef struct sp_merge_options {
    /** Label of the merged run (metadata "label"); NULL: the first input's
     *  label, if any. Copied. */
    const char *label;
    /** Progress reports; NULL: none (default). */
    sp_merge_progress_fn progress;
    void *progress_user;
    /** 1: merge inputs whose recorded time spans do not overlap (default 0:
     *  refused with SP_ERR_INVALID_ARGUMENT). */
    int allow_disjoint;
    /** NULL (default), or one entry per input: a prefix put before every
     *  region name of that input (NULL or "" for none) before the collision
     *  check; its rank<N>/perf_events/<region> groups are renamed alike
     *  (LIKWID tags and line profiles are copied as they are). A prefix
     *  must not contain '/'. Read during the call only. */
    const char *const *prefixes;
    /** NULL (default): this process merges alone. Else the group of
     *  processes that all call sp_merge_files with the same inputs, output
     *  and options: the output's ranks are split into `size` contiguous
     *  blocks balanced by event count, each process checks and writes its
     *  block to a part file beside the output (`OUT.part<p>`, removed at
     *  the end), and process 0 assembles the parts into OUT, copying every
     *  compressed chunk that lies inside one part as stored. The file holds
     *  the values the merge alone writes; every process returns the same
     *  status and message (the one the merge alone would give). An input
     *  with the aggregate layout: process 0 merges alone. Memory per
     *  process is bounded as the merge alone's. Read during the call. */
    const sp_merge_group *group;
} sp_merge_options;

/** Fill *options with the defaults (no label, no progress, no prefixes). */
SP_API void sp_merge_options_init(sp_merge_options *options);

/**
 * Merge the profiles at inputs[0 .. input_count-1] into a new schema-3 file
 * at `output`, published atomically.
 *
 * inputs:      paths of at least two distinct profile files (HDF5 schema
 *              1/2/3 columnar, or .spt traces). The first input that is not
 *              a native profile (metadata source != "native") is the driver;
 *              its call ids stay lowest on each rank.
 * output:      path of the merged file; must not be one of the inputs.
 * options:     NULL for the defaults.
 * errbuf:      receives the message on error ("" on success); may be NULL.
 *              A collision message lists every colliding name with the
 *              inputs it appears in, one per line. Cut to errbuf_len.
 *
 * Returns:
 *   SP_OK
 *   SP_ERR_INVALID_ARGUMENT   fewer than two inputs, NULL paths, the same
 *                             input twice, output equal to an input, an
 *                             aggregate-layout input, a prefix with '/',
 *                             inputs whose time spans do not overlap (without
 *                             allow_disjoint)
 *   SP_ERR_REGION_COLLISION   a region name in more than one input
 *   SP_ERR_FILE_NOT_FOUND, SP_ERR_NOT_A_PROFILE, SP_ERR_SCHEMA_UNSUPPORTED,
 *   SP_ERR_CORRUPT            an unreadable input (the reader's message)
 *   SP_ERR_OUTPUT, SP_ERR_HDF5, SP_ERR_OUT_OF_MEMORY
 */
SP_API int sp_merge_files(const char *const *inputs, size_t input_count, const char *output,
                          const sp_merge_options *options, char *errbuf, size_t errbuf_len);

#ifdef __cplusplus
}
#endif

#endif /* SCOPE_PROFILER_MERGE_H */
