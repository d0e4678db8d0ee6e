/*
 * job_bounded.c - waits of an MPI job's finalize held to a deadline
 * (job_bounded.h).
 *
 * Why poll rather than block: MPI has no timeout on a blocking call, and a
 * rank that died (or sleeps) after the last barrier would otherwise hold
 * every other rank in PMPI_Recv or PMPI_Gather until the batch system kills
 * the job - after the simulation's own results were computed. Polling with
 * PMPI_Test costs a pause of 0.2 ms between tests; finalize's messages are
 * few and large, so that is noise.
 *
 * Why park buffers: MPI cannot cancel a collective, and a cancelled receive
 * may already have been matched. A rank that arrives after the others gave
 * up can still complete what they left pending, writing into the receive
 * buffers; freeing them would turn a clean error into heap corruption. The
 * parked buffers stay reachable from a static table (so leak checkers do
 * not report them) until the process ends.
 */
#include "job/job_bounded.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"
#include "util/diag.h"

/* How long a rank waits for the others at setup and at finalize before it
 * gives up with a message. */
#define DEFAULT_WAIT_SECONDS 600.0

double spi_job_wait_seconds(void) {
    const char *value = getenv("SCOPE_PROFILER_MPI_TIMEOUT");
    if (!value || !*value) return DEFAULT_WAIT_SECONDS;
    char *end = NULL;
    errno = 0;
    double seconds = strtod(value, &end);
    while (end && (*end == ' ' || *end == '\t')) end++;
    if (errno || end == value || *end || !isfinite(seconds) || seconds <= 0) {
        static bool said = false; /* once a process, not at every wait */
        if (!said)
            spi_diag("SCOPE_PROFILER_MPI_TIMEOUT=%s is not a positive number of seconds; "
                     "using the default, %.0f s", value, DEFAULT_WAIT_SECONDS);
        said = true;
        return DEFAULT_WAIT_SECONDS;
    }
    return seconds;
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int mpi_failure(spi_error *err, int code, const char *phase) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (PMPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", code);
    return spi_error_set(err, SP_ERR_MPI, "MPI error while %s: %s", phase, text);
}

/* "ranks 2, 5 and 7 (+3 more)" from the pending requests' peers. */
static void describe_missing(const MPI_Request *requests, const int *peers, int count,
                             char *text, size_t size) {
    enum { LISTED = 8 };
    int listed = 0, more = 0, collective = 0, ranks[LISTED];
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        int peer = peers[i] <= -2 ? -2 - peers[i] : peers[i];
        if (peer == SPI_JOB_COLLECTIVE) collective = 1;
        else if (listed < LISTED) ranks[listed++] = peer;
        else more++;
    }
    size_t at = 0;
    text[0] = '\0';
    if (listed) {
        at += (size_t)snprintf(text, size, "no answer from rank%s", listed + more > 1 ? "s" : "");
        for (int i = 0; i < listed && at < size; i++)
            at += (size_t)snprintf(text + at, size - at, "%s %d",
                                   i == 0 ? "" : (i == listed - 1 && !more ? " and" : ","),
                                   ranks[i]);
        if (more && at < size) at += (size_t)snprintf(text + at, size - at, " (+%d more)", more);
    }
    if (collective && at < size)
        snprintf(text + at, size - at, "%sa collective over the job did not complete (some rank "
                 "did not join it; MPI does not say which)", listed ? "; " : "");
}

static bool gave_up = false;

bool spi_job_gave_up(void) { return gave_up; }
void spi_job_bounded_reset(void) { gave_up = false; }

/* Give up on what is still pending: receives and sends are cancelled (MPI
 * may refuse; then they stay pending like a collective) and released to
 * MPI. A collective's request cannot be cancelled, and Open MPI refuses to
 * free one that is active (MPI_ERR_REQUEST, fatal under the default error
 * handler), so it is simply forgotten: MPI_Finalize tolerates it. The
 * caller parks the buffers. */
static void abandon(MPI_Request *requests, const int *peers, int count) {
    gave_up = true;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        if (peers[i] >= 0) {
            PMPI_Cancel(&requests[i]);
            PMPI_Request_free(&requests[i]);
        }
        requests[i] = MPI_REQUEST_NULL;
    }
}

int spi_job_wait(MPI_Request *requests, const int *peers, int count, const char *phase,
                 const char *where, spi_error *err) {
    double limit = spi_job_wait_seconds(), deadline = seconds_now() + limit;
    for (;;) {
        int pending = 0;
        for (int i = 0; i < count; i++) {
            if (requests[i] == MPI_REQUEST_NULL) continue;
            int done = 0;
            int rc = PMPI_Test(&requests[i], &done, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                abandon(requests, peers, count);
                return mpi_failure(err, rc, phase);
            }
            pending += !done;
        }
        if (!pending) return SP_OK;
        if (seconds_now() > deadline) {
            char missing[256];
            describe_missing(requests, peers, count, missing, sizeof missing);
            abandon(requests, peers, count);
            return spi_error_set(err, SP_ERR_MPI,
                                 "not every rank of the communicator answered within %.0f s "
                                 "while %s (SCOPE_PROFILER_MPI_TIMEOUT): %s; giving up without "
                                 "them: %s",
                                 limit, phase, missing, where ? where : "nothing was written");
        }
        struct timespec pause = {0, 200000}; /* 0.2 ms between tests */
        nanosleep(&pause, NULL);
    }
}

/* Parked buffers: a job gives up once per finalize, and each phase holds a
 * handful of buffers; past the table's size they are never freed at all. */
#define PARKED_MAX 64
static void *parked[PARKED_MAX];
static int parked_count = 0;

void spi_job_park(void *buffer) {
    if (buffer && parked_count < PARKED_MAX) parked[parked_count++] = buffer;
}

#ifdef SPI_FAULT_INJECTION
/* The action SCOPE_PROFILER_TEST_STALL asks of this rank at this point,
 * or "" when it names another. */
static void fault_action(int rank, const char *phase, char action[16]) {
    action[0] = '\0';
    const char *value = getenv("SCOPE_PROFILER_TEST_STALL");
    if (!value || !*value) return;
    char wanted_phase[32] = "";
    int wanted_rank = -1;
    if (sscanf(value, "%d:%31[^:]:%15s", &wanted_rank, wanted_phase, action) != 3 ||
        wanted_rank != rank || strcmp(wanted_phase, phase) != 0)
        action[0] = '\0';
}

void spi_job_fault_point(int rank, const char *phase) {
    char action[16];
    fault_action(rank, phase, action);
    if (strcmp(action, "exit") == 0) _exit(9);
    if (strcmp(action, "sleep") == 0)
        for (;;) pause(); /* a rank that stopped answering */
}

bool spi_job_fault_fails(int rank, const char *phase) {
    char action[16];
    fault_action(rank, phase, action);
    return strcmp(action, "fail") == 0;
}
#else
void spi_job_fault_point(int rank, const char *phase) {
    (void)rank;
    (void)phase;
}

bool spi_job_fault_fails(int rank, const char *phase) {
    (void)rank;
    (void)phase;
    return false;
}
#endif
