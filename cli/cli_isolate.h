/*
 * cli_isolate.h - every tool reads its untrusted inputs in a supervised
 * child process, so that whatever libhdf5 does on a damaged file (a fault,
 * an endless loop, a runaway allocation) ends as exit 2 with
 * "TOOL: FILE: damaged HDF5 file (...)" in bounded time and memory.
 *
 * Design (chosen for cost: nothing is read twice, nothing is copied
 * through a pipe). cli_isolate_start() forks at the top of main; the child
 * runs the whole tool, the parent only supervises. Around each read of an
 * input the child tells the parent "reading FILE, allow T seconds" and
 * "done" over a pipe, and lowers its own address-space limit (RLIMIT_AS)
 * for the duration of the read. The parent:
 *   - passes the child's exit status through unchanged;
 *   - turns a fatal signal during a read into exit 2 naming the file;
 *   - kills the child when a read outlives its time and exits 2 naming
 *     the file;
 *   - re-raises a signal outside a read (a bug of ours stays visible).
 * The cost is one fork and two small pipe writes per input.
 *
 * Environment:
 *   SCOPE_PROFILER_READ_TIMEOUT    seconds one read may take (default 10 +
 *                                  1 s per 8 MB of the file)
 *   SCOPE_PROFILER_READ_MEMORY_MB  address space one read may add (default
 *                                  max(2048, 64 x file size), at most the
 *                                  machine's memory); not applied in
 *                                  sanitizer builds, whose shadow memory
 *                                  needs the address space
 *   SCOPE_PROFILER_NO_ISOLATION=1  run in one process (debuggers)
 */
#ifndef SP_CLI_ISOLATE_H
#define SP_CLI_ISOLATE_H

#include <stddef.h>
#include <stdint.h>

struct sp_results;

/* Fork the supervised child. Returns in the child (or at once when
 * isolation is off or fork fails); in the parent it never returns: it
 * exits with the child's outcome. Call first in main, before any output. */
void cli_isolate_start(const char *tool);

/* The child starts reading `label` (a path, or several for a merge) whose
 * inputs hold `bytes` bytes; `weight` multiplies the default time (1 for a
 * plain read, more for work that also writes). Not nested. */
void cli_isolate_begin_read(const char *label, uint64_t bytes, unsigned weight);
/* The read begun last is over (limits lifted). */
void cli_isolate_end_read(void);

/* sp_results_open inside begin/end_read. An allocation failure under the
 * read's memory limit is reported as damage: SP_ERR_CORRUPT with
 * "PATH: damaged HDF5 file (reading it needs more than N MiB ...)". */
int cli_results_open(const char *path, int flags, struct sp_results **out, char *errbuf,
                     size_t errbuf_len);

/* Size of the file at path in bytes, 0 when unknown. */
uint64_t cli_file_bytes(const char *path);

#endif /* SP_CLI_ISOLATE_H */
