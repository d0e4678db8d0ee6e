/*
 * run_threads.h - shared by run.c and run_stream.c (run_threads.c): the
 * numbering of calls across a session's threads and the thread table.
 * Internal to the record module.
 */
#ifndef SPI_RUN_THREADS_H
#define SPI_RUN_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "record/call_parents.h"
#include "record/openmp.h"
#include "record/recorder.h"

/* The parent id of a call e of thread t whose parent on t is `parent`
 * (call_parents.h; NULL for a root): base + the parent's sequence, or for a
 * worker thread's root its OpenMP fork parent (openmp.h; -1 if none or
 * hosts is NULL). base is t's first call id. Pure. */
int64_t spi_run_parent_id(const spi_thread *t, const spi_event *e,
                          const spi_enclosing_call *parent, int64_t base,
                          const spi_omp_hosts *hosts);

/* Each thread's first call id (its sequences offset by the calls of the
 * threads attached before it), in attach order; NULL when out of memory.
 * The caller frees it with spi_free. */
int64_t *spi_run_thread_bases(const spi_session *session);

/* Whether an OpenMP worker thread recorded calls: only then do worker
 * roots need fork parents (spi_omp_hosts_build, openmp.h). Asked first
 * because that build, looking for the team's primary, reads every event
 * of every other thread even when no worker recorded (issue 31: a full
 * read of a 20M-call trace's spill file, twice per finalize). Pure. */
bool spi_run_has_omp_workers(const spi_session *session);

/* The order of every walk over a session's threads that folds call paths
 * (run.c, run_stream.c, run_paths.h): the threads that are not OpenMP
 * workers in attach order, then the workers in attach order, so a worker
 * root's fork parent is placed on its path before the root. The walk order
 * decides the paths' numbering and the order Welford's m2 sees the calls
 * in, so every walk takes this one. *threads: the threads by attach index;
 * *walk: attach indices in walk order; both session->thread_count long
 * (at least one entry), freed by the caller with spi_free. SP_OK or
 * SP_ERR_OUT_OF_MEMORY (both NULL). */
int spi_run_walk_order(spi_session *session, spi_thread ***threads, size_t **walk);

/* profile->threads from the session's threads, tagged with `rank`. SP_OK or
 * SP_ERR_OUT_OF_MEMORY (the rows made so far stay in the profile, which the
 * caller frees). */
int spi_run_fill_threads(const spi_session *session, uint32_t rank, spi_profile *profile);

#endif /* SPI_RUN_THREADS_H */
