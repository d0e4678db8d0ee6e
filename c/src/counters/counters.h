/*
 * counters.h - hardware and OS counters per region: Linux perf events and
 * LIKWID, behind one small interface.
 *
 * Life of a session:
 *
 *   spi_counters_configure   at sp_setup, from the options and environment:
 *                            probes the requested perf events once (one line
 *                            on stderr for events this machine cannot count,
 *                            one for unknown names), initialises the LIKWID
 *                            marker API (or says once why it cannot)
 *   spi_counters_hooks       handed to the recorder (spi_recorder_start):
 *                            on each recording thread's first call it opens
 *                            the thread's perf events and runs LIKWID's
 *                            thread init; no hooks at all when counters are
 *                            off, which is what keeps the hot path at one
 *                            branch on spi_thread.hook_state. Per call, the
 *                            hooks start/stop the counters of the region.
 *   spi_counters_collect     at sp_finalize, after the recorder stopped:
 *                            inclusive totals per region summed over the
 *                            threads -> profile->perf; LIKWID results ->
 *                            profile->likwid / likwid_env
 *   spi_counters_shutdown
 *
 * Counters are read as close to the user's code as the clock allows: the
 * recorder calls begin before it reads the start time and end after it read
 * the end time, so a counter read never lands inside a region's duration.
 *
 * Not thread-safe except begin/end, which touch only the calling thread's
 * state. configure/collect/shutdown run under sp_setup/sp_finalize.
 */
#ifndef SPI_COUNTERS_H
#define SPI_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "record/recorder.h"
#include "scope_profiler.h"

typedef struct spi_counters_thread spi_counters_thread;

/* Resolve options then environment (SCOPE_PROFILER_PERF_EVENTS,
 * SCOPE_PROFILER_LIKWID). Problems with counters never fail setup: they are
 * reported once and that back end stays off. Returns SP_OK or
 * SP_ERR_OUT_OF_MEMORY. */
int spi_counters_configure(const sp_options *options);

/* true when any back end is recording in this session. */
bool spi_counters_active(void);

/* The hooks the recorder runs per thread for this configuration
 * (spi_recorder_start), or NULL when no back end is on. */
const spi_thread_hooks *spi_counters_hooks(void);

/* Add this rank's counter results to `profile` (perf and likwid arrays):
 * the totals of the session's threads that ran the counters' hooks.
 * Returns SP_OK or SP_ERR_OUT_OF_MEMORY. */
int spi_counters_collect(const spi_session *session, uint32_t rank, spi_profile *profile);

/* End the session's counters (LIKWID close) and forget the configuration. */
void spi_counters_shutdown(void);

/* ---- perf back end (counters/perf.c) --------------------------------------- */

typedef struct spi_perf_thread spi_perf_thread;

/* Events per session: more than a PMU can count at once anyway. */
#define SPI_PERF_MAX_EVENTS 16

/* Parse and probe a comma list. Returns SP_OK (also when nothing is
 * countable: then spi_perf_event_count() is 0) or SP_ERR_OUT_OF_MEMORY. */
int spi_perf_configure(const char *event_list);
size_t spi_perf_event_count(void);
const char *spi_perf_event_name(size_t index);
spi_perf_thread *spi_perf_thread_open(void);
void spi_perf_thread_close(spi_perf_thread *thread);
void spi_perf_begin(spi_perf_thread *thread);
void spi_perf_end(spi_perf_thread *thread, int region);
/* The thread's totals of `region`: calls, and event values (count
 * spi_perf_event_count()); false when the thread never ended it. */
bool spi_perf_totals(const spi_perf_thread *thread, int region, int64_t *calls,
                     const uint64_t **values);
void spi_perf_reset(void);

/* ---- LIKWID back ends --------------------------------------------------------
 *
 * A back end provides the marker calls and, at finalize, the results per
 * region. Two exist: the real library (counters/likwid_marker.c, or
 * counters/likwid_none.c when the build has no LIKWID) and a fake one for
 * tests (counters/likwid_fake.c, selected by SCOPE_PROFILER_LIKWID_FAKE=1)
 * that returns known values, so the storage path is tested everywhere. */
typedef struct spi_likwid_backend {
    const char *name;                 /* "likwid" or "fake" */
    /* Initialise the marker API; false (with a reason) when it cannot run. */
    bool (*init)(char *reason, size_t reason_bytes);
    void (*thread_init)(void);
    void (*start)(const char *tag);
    void (*stop)(const char *tag);
    /* Close the marker API and append the results of rank `rank` to the
     * profile. SP_OK or SP_ERR_OUT_OF_MEMORY. */
    int (*collect)(uint32_t rank, spi_profile *profile);
} spi_likwid_backend;

extern const spi_likwid_backend spi_likwid_real;
extern const spi_likwid_backend spi_likwid_fake;

/* Copy every LIKWID_* variable of the environment into profile->likwid_env. */
int spi_likwid_env_collect(uint32_t rank, spi_profile *profile);

/* ---- records across ranks (counters/records.c) -------------------------------
 * The counter results of a rank are small; the MPI job sends them to rank 0
 * as one byte blob. */
int spi_counters_pack(const spi_profile *profile, unsigned char **bytes, size_t *len);
/* Append the records of one rank's blob (rank: who sent it). SP_OK,
 * SP_ERR_CORRUPT or SP_ERR_OUT_OF_MEMORY. */
int spi_counters_unpack(const unsigned char *bytes, size_t len, uint32_t rank,
                        spi_profile *profile);

#endif /* SPI_COUNTERS_H */
