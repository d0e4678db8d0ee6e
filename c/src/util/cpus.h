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

#endif /* SPI_CPUS_H */
