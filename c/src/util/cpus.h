/*
 * cpus.h - how many CPUs this process may run on, for sizing the pools of
 * helper threads (the writer's compression, the readers' decompression).
 */
#ifndef SPI_CPUS_H
#define SPI_CPUS_H

/* The CPUs of the calling thread's affinity mask (what taskset, cgroups'
 * cpusets and MPI launchers' binding allow), else the CPUs online, at least
 * 1. Never fails; thread-safe. */
unsigned spi_cpus_available(void);

/* A helper-thread count from `value`, the environment variable `name`'s
 * (the caller's getenv, so each variable read stays greppable): NULL or
 * empty gives `fallback`; a whole number n >= minimum gives min(n, maximum);
 * anything else gives `fallback` and one message per process and variable
 * (`*said` is the caller's once-flag). Thread-safe. */
unsigned spi_thread_count_setting(const char *name, const char *value, unsigned fallback,
                                  unsigned minimum, unsigned maximum, _Atomic _Bool *said);

/* The most threads sp_finalize works with, whatever the machine or the
 * environment says (the writer's chunks in flight grow with it). */
#define SPI_WRITE_THREADS_MAX 8

/* How many threads sp_finalize works with: SCOPE_PROFILER_WRITE_THREADS
 * when it is a positive integer (capped at SPI_WRITE_THREADS_MAX), else the
 * CPUs this process may run on (its affinity mask: an MPI rank pinned to
 * one core gets 1), capped the same way. The writer compresses with that
 * many (format/h5_column_pool.h); with more than 1 the collect also reads
 * the spill back and sorts its runs on helper threads (record/
 * event_cursor.c, run_stream.c); 1 = the finalizing thread alone. A value
 * that is not a positive integer is reported once (diag) and the default
 * used. Thread-safe. */
unsigned spi_write_threads(void);

#endif /* SPI_CPUS_H */
