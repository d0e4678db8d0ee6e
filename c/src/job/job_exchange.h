/*
 * job_exchange.h - what both ways of writing an MPI job's file gather the
 * same way: the fixed-size thread record, the union of the ranks' region
 * names, the packed name list and the counter gather. The funnel
 * (job_mpi.c) and the collective writer (job_parallel.c) both stand on it,
 * so neither calls into the other for these. MPI builds only.
 */
#ifndef SPI_JOB_EXCHANGE_H
#define SPI_JOB_EXCHANGE_H

#include <mpi.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/error.h"


/* One thread-table row as gathered (fixed size, name truncated to 63). */
typedef struct spi_wire_thread {
    uint32_t rank;
    int8_t daemon;
    int8_t reserved[3];
    int64_t index;
    int64_t ident;
    int64_t native_id;
    int64_t start_ns;
    int64_t end_ns;
    int64_t cpu_ns;
    char name[64];
} spi_wire_thread;

/* The union of the ranks' region names, first seen first. */
typedef struct spi_name_union {
    char **names;             /* borrowed from the gathered buffer */
    size_t count;
    size_t *slots;            /* open addressing: index + 1, 0 = empty */
    size_t capacity;
} spi_name_union;

/* Index of `name` in the union, adding it if new. The union borrows
 * `name`; its slots must have room (capacity a power of two above the
 * number of names). Not thread-safe (one union, one thread). */
long spi_name_union_add(spi_name_union *u, char *name);
/* The profile's region names, NUL-terminated one after the other. */
char *spi_job_pack_names(const spi_profile *local, uint64_t *bytes);
/* The profile's thread table as wire records of `rank`. NULL when out of
 * memory; the caller frees it with spi_free. */
spi_wire_thread *spi_job_pack_threads(const spi_profile *local, uint32_t rank);
/* The thread row a wire record stands for (the name stays in the record). */
spi_thread_row spi_wire_thread_row(const spi_wire_thread *t);
/* Every rank's counter records (perf totals, LIKWID regions: a few KiB per
 * rank) into `into` on rank 0. Collective over `comm`; every rank calls it
 * whatever its status, and gets back `status` or the first new error. */
int spi_job_gather_counters(MPI_Comm comm, const spi_profile *local, spi_profile *into,
                            int status, spi_error *err);

/* An MPI error code as SP_ERR_MPI with the MPI library's text, `what` naming
 * the step ("gathering counts"). Always returns SP_ERR_MPI. */
int spi_job_mpi_fail(spi_error *err, int code, const char *what);

#endif /* SPI_JOB_EXCHANGE_H */
