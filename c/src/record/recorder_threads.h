/*
 * recorder_threads.h - a recording thread's attach, exit and release
 * (recorder_threads.c), for the hot path and the session. Internal to the
 * record module.
 */
#ifndef SPI_RECORDER_THREADS_H
#define SPI_RECORDER_THREADS_H

#include <stdint.h>

#include "record/recorder.h"
#include "record/recorder_state.h"

/* The hot block's state into its spi_thread (the fields recorder.h marks
 * published), and the block forgotten: a thread calls this for itself
 * when it exits, finalize for the threads still alive. Under
 * spi_session_lock. */
void spi_thread_publish(spi_thread *t);

/* Releases a thread's state: chunks (not the copies in its session's
 * arena, which go with the session), stack, caches, path table, anchors,
 * hook state. Not on a thread that may still record with it. */
void spi_thread_free(spi_thread *t);

/* TSC: takes one (ticks, ns) anchor into t's list; returns the tick from
 * which a begin takes the next one. Only on t's own thread. */
int64_t spi_thread_take_anchor(spi_thread *t);

/* The slow path of the hot path's generation check: the calling thread has
 * no state in session `generation` (0: none is recording). Attaches it
 * (allocating its state, then under spi_session_lock) and returns it, or
 * NULL when it does not record (not recording, finalize won the race, out
 * of memory: remembered as the thread's last status, tried again on the
 * next call). */
spi_thread *spi_thread_attach(uint64_t generation);

/* The calling thread's state, NULL when it does not record. One relaxed
 * load and a compare when it has state in this spi_live_session. */
static inline spi_thread *spi_thread_current(void) {
    uint64_t generation = atomic_load_explicit(&spi_session_generation, memory_order_relaxed);
    if (__builtin_expect(generation == spi_tls.generation, 1)) return spi_tls.thread;
    return spi_thread_attach(generation);
}

#endif /* SPI_RECORDER_THREADS_H */
