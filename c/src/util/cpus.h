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

#endif /* SPI_CPUS_H */
