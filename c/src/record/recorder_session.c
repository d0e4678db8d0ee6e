/*
 * recorder_session.c - the recording session: start (the generation that
 * every thread's state is tagged with), stop (every thread's state taken
 * for finalize), release, and the fork handlers.
 *
 * Ordering: sp_setup/sp_finalize are documented as not concurrent with
 * recording on other threads; the session mutex orders them against
 * thread attach and exit.
 */
#include "record/recorder.h"

#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "record/clock.h"
#include "record/recorder_retire.h"
#include "record/recorder_state.h"
#include "record/recorder_threads.h"
#include "record/spill_writer.h"

static uint64_t generation_counter = 0;         /* under spi_session_lock */

/* Address space kept free for finalize while a trace records. Events take
 * what the process may map; under `ulimit -v` (RLIMIT_AS) recording once
 * took all of it, and finalize, which needs its run buffers (run_stream.c)
 * and HDF5's, then lost every call. So a trace session maps this much
 * PROT_NONE, MAP_NORESERVE at start (address space only: no memory, no
 * page is ever touched) and gives it back at stop, before finalize
 * allocates anything. Under spi_session_lock; a fork child keeps its
 * copy of the mapping for its own next session. */
#define FINALIZE_RESERVE_BYTES ((size_t)96 << 20)
static void *finalize_reserve = NULL;

static void reserve_for_finalize(bool aggregate) {
    if (aggregate || finalize_reserve) return; /* paths need no run buffers */
    void *block = mmap(NULL, FINALIZE_RESERVE_BYTES, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    finalize_reserve = block == MAP_FAILED ? NULL : block; /* none: nothing to give back */
}

static void release_for_finalize(void) {
    if (finalize_reserve) munmap(finalize_reserve, FINALIZE_RESERVE_BYTES);
    finalize_reserve = NULL;
}

int spi_recorder_start(const spi_recording *recording) {
    pthread_mutex_lock(&spi_session_lock);
    spi_live_session = (spi_session){.buffer_limit_bytes = recording->buffer_limit_bytes,
                            .spill = recording->spill, .spill_label = recording->spill_label,
                            .aggregate = recording->aggregate, .tsc = recording->tsc};
    if (spi_live_session.tsc) {
        /* Two anchors 100 us apart give the rate that turns the anchor
         * interval into ticks (it only decides how often anchors are
         * taken; the conversion uses every anchor). */
        spi_anchor first, second;
        spi_clock_anchor(&first.ticks, &first.ns);
        do spi_clock_anchor(&second.ticks, &second.ns);
        while (second.ns - first.ns < 100000 || second.ticks <= first.ticks);
        double ticks_per_ns = (double)(second.ticks - first.ticks) / (double)(second.ns - first.ns);
        spi_live_session.anchor_interval_ticks = (int64_t)(SPI_ANCHOR_INTERVAL_NS * ticks_per_ns);
        if (spi_anchor_list_add(&spi_live_session.anchors, first) != SP_OK ||
            spi_anchor_list_add(&spi_live_session.anchors, second) != SP_OK) {
            spi_anchor_list_free(&spi_live_session.anchors);
            spi_spill_close(spi_live_session.spill);
            spi_live_session.spill = NULL;
            pthread_mutex_unlock(&spi_session_lock);
            return SP_ERR_OUT_OF_MEMORY;
        }
    }
    atomic_store_explicit(&spi_session_anchor_interval, spi_live_session.anchor_interval_ticks,
                          memory_order_relaxed);
    atomic_store_explicit(&spi_session_tsc, spi_live_session.tsc, memory_order_release);
    /* release: a thread that sees the new generation sees these */
    atomic_store_explicit(&spi_session_hooks, recording->hooks, memory_order_release);
    atomic_store_explicit(&spi_session_aggregate, recording->aggregate, memory_order_release);
    atomic_store(&spi_buffer_bytes, 0);
    atomic_store(&spi_unmatched_reports, 0);
    atomic_store_explicit(&spi_omp_fork_path, 0, memory_order_relaxed);
    reserve_for_finalize(recording->aggregate);
    /* the writer's thread starts at the first spill, if one comes */
    if (spi_live_session.spill && spi_spill_writer_wanted())
        spi_live_session.spill_writer = spi_spill_writer_create(
            spi_live_session.spill, recording->spill_label, recording->buffer_limit_bytes);
    atomic_store_explicit(&spi_session_generation, ++generation_counter, memory_order_relaxed);
    pthread_mutex_unlock(&spi_session_lock);
    return SP_OK;
}

spi_session spi_recorder_stop(void) {
    pthread_mutex_lock(&spi_session_lock);
    atomic_store_explicit(&spi_session_generation, 0, memory_order_relaxed);
    if (spi_live_session.tsc) {
        spi_anchor last;
        spi_clock_anchor(&last.ticks, &last.ns);
        (void)spi_anchor_list_add(&spi_live_session.anchors, last);
    }
    spi_session stopped = spi_live_session;
    stopped.raw_ends = !stopped.aggregate; /* spi_event */
    release_for_finalize();
    spi_live_session = (spi_session){0};
    /* Threads still alive: the CPU time so far (a lower bound, as the
     * format documents). A live thread cannot pass its exit hook while we
     * hold the lock, so its pthread_t is valid here. */
    for (spi_thread *t = stopped.threads; t; t = t->next) {
        if (t->hot) spi_hot_set_path(t->hot, SPI_PATH_GENERAL); /* see spi_hot */
        spi_thread_publish(t);
        if (!t->alive) continue;
        if (pthread_equal(t->pthread, pthread_self())) {
            t->cpu_ns = spi_clock_thread_cpu_ns();
        } else {
            clockid_t cpu_clock;
            struct timespec ts;
            if (pthread_getcpuclockid(t->pthread, &cpu_clock) == 0 &&
                clock_gettime(cpu_clock, &ts) == 0)
                t->cpu_ns = (int64_t)ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
        }
    }
    pthread_mutex_unlock(&spi_session_lock);
    spi_hot_set_path(&spi_tls, SPI_PATH_GENERAL);
    spi_tls.thread = NULL;
    spi_tls.generation = 0;
    /* every reader of the spilled chunks runs after this: the writer's
     * queue is written (or its chunks kept, after a failure) first */
    spi_spill_writer_finish(stopped.spill_writer);
    stopped.spill_writer = NULL;
    return stopped;
}

void spi_recorder_release(spi_session *stopped) {
    for (spi_thread *t = stopped->threads; t;) {
        spi_thread *next = t->next;
        /* chunks the spill writer could not write (spill_writer.h) */
        for (size_t i = 0; i < t->spilled_count; i++)
            if (t->spilled[i].kept) spi_chunk_unmap(t->spilled[i].kept);
        spi_thread_free(t);
        t = next;
    }
    spi_arena_free(stopped->arena); /* after the threads: their chunks point in */
    spi_path_fold_free(stopped->fold);
    spi_anchor_list_free(&stopped->anchors);
    if (stopped->spilled_map_live) spi_tick_map_free(&stopped->spilled_map);
    spi_spill_close(stopped->spill);
    *stopped = (spi_session){0};
}

bool spi_session_spilled(const spi_session *stopped) {
    for (const spi_thread *t = stopped->threads; t; t = t->next)
        if (t->spilled_count) return true;
    return false;
}

size_t spi_recorder_buffer_bytes(void) { return atomic_load(&spi_buffer_bytes); }

uint64_t spi_recorder_bad_ends(void) { return atomic_load(&spi_unmatched_reports); }

/* ---- fork ------------------------------------------------------------------- */

/* The prepare handler takes the session lock, then the registry's (no
 * path waits for the session lock while it holds the registry's), so the
 * child never inherits either held by a thread that does not exist there:
 * not by finalize stopping the session, not by a thread attaching or
 * exiting (spi_thread_retire runs under the session lock), not by a
 * registration.
 * A fork during the rest of finalize (after the stop) finds a session
 * that is no longer live: the child gets nothing of it either. */
void spi_recorder_fork_prepare(void) {
    pthread_mutex_lock(&spi_session_lock);
    spi_registry_fork_prepare();
}

void spi_recorder_fork_parent(void) {
    spi_registry_fork_parent();
    pthread_mutex_unlock(&spi_session_lock);
}

/* The child records nothing of the parent's session: its generation ends,
 * so every thread-local state is stale, and the session is forgotten in
 * constant time, without walking it. Its threads, chunks, arena and
 * folded paths are the parent's memory, shared copy-on-write: the child
 * leaks them on purpose (releasing them would touch, and so copy, every
 * page of a state that can hold one record per thread the parent ever
 * ran: seconds in a child of a process of many threads). Left alone, they
 * cost the child nothing; the stale pointers of its own hot block even
 * stay valid. Only the spill file is closed, so that the child does not
 * keep the parent's unlinked file (its disk space) alive. A session
 * stopped by a finalize running in the parent at the fork is not live:
 * the child leaks it likewise, descriptor included (closed on exec).
 * The spill writer (spill_writer.h) has no thread in the child, and its
 * mutex may have been held by it at the fork: it is forgotten with the
 * session, never locked, waited for or freed here; the parent's chunks
 * queued to it stay unwritten by the child. */
void spi_recorder_fork_child(void) {
    spi_registry_fork_child();
    atomic_store_explicit(&spi_session_generation, 0, memory_order_relaxed);
    spi_hot_set_path(&spi_tls, SPI_PATH_GENERAL);
    spi_spill *spill = spi_live_session.spill;
    spi_live_session = (spi_session){0};
    atomic_store(&spi_buffer_bytes, 0);
    pthread_mutex_unlock(&spi_session_lock);
    spi_spill_close(spill);
}
