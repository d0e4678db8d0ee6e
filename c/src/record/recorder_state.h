/*
 * recorder_state.h - the state the recorder's files share: the thread's hot
 * block (spi_hot, one initial-exec thread-local object) and the live
 * session's globals. Internal to the record module; only recorder*.c use it.
 *
 * The recorder is split by what runs when: recorder.c the begin/end hot
 * path and the by-name API, recorder_threads.c a thread's attach and exit,
 * recorder_buffers.c new chunks, the spill and aggregate mode's path
 * table, recorder_session.c start, stop, release and fork. They stand in
 * that order over recorder_state.c, which only defines what is declared
 * here. Ordering rules for every field are where each is declared.
 */
#ifndef SPI_RECORDER_STATE_H
#define SPI_RECORDER_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/recorder.h"

/* initial-exec TLS avoids a __tls_get_addr call per access in the shared
 * library; the block fits easily in glibc's static TLS reserve. */
#define SPI_TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* The thread's hot state: everything begin and end touch, in one
 * thread-local object, each field one load from the TLS offset (GOT entry
 * -> %fs:field) rather than two (-> thread -> field).
 *
 * What the layout of the hot path is about: the vDSO's clock read is
 * ordered (rdtscp), so it waits for every earlier instruction. Out-of-order
 * execution still overlaps work that does not depend on the previous
 * reading, but two things are paid in full between two reads: the
 * arithmetic that depends on a reading (hence raw readings, clock.h) and,
 * measured to a lesser degree, the number of instructions. So sp_begin and
 * sp_end test one word, `path`, where they would otherwise test the
 * session's generation, the thread's state, the busy flag, the mode and
 * the clock.
 *
 * Only the owning thread touches the block while it records. Finalize on
 * another thread reads it through spi_thread.hot (publish_thread) and sets
 * its path to SPI_PATH_GENERAL, and a thread publishes its own before it
 * exits (thread_exited), after which its calls are no longer recorded. */
enum {
    /* not a trace call this thread can make inline: not recording (in
     * this session, or at all), aggregate mode, hooks, or an OpenMP
     * primary candidate; the out-of-line functions sort it out */
    SPI_PATH_GENERAL = 0,
    SPI_PATH_MONOTONIC = 1,  /* a trace on CLOCK_MONOTONIC, inline */
    SPI_PATH_TSC = 2,        /* a trace on the TSC, inline */
    /* inside a recording call: a signal handler that records on this
     * thread meanwhile is refused instead of corrupting the stack */
    SPI_PATH_BUSY = 3,
    /* aggregate mode with no hooks on a thread that is no OpenMP worker or
     * primary candidate: begin finds its path through the parent's memo
     * (spi_path_node.memo_region), end adds to it, both inline */
    SPI_PATH_AGGREGATE_MONOTONIC = 4,
    SPI_PATH_AGGREGATE_TSC = 5
};

typedef struct spi_hot {
    /* SPI_PATH_*: what this thread's next call does. Atomic (relaxed:
     * plain moves) because a signal handler on the thread and finalize on
     * another thread access it too; sp_setup and sp_finalize must not
     * run concurrently with recording, so nothing more is needed. */
    _Atomic int path;
    uint64_t generation;     /* the session this state belongs to */
    spi_thread *thread;      /* NULL: not recording (this generation) */
    spi_frame *top;          /* next free frame */
    spi_frame *stack_base;   /* == thread->stack */
    spi_frame *stack_end;    /* stack_base + thread->stack_capacity */
    spi_event *cursor;       /* next free event in the current chunk */
    spi_event *chunk_end;
    int64_t next_sequence;
    int64_t next_anchor;     /* TSC: take an anchor at a begin from here on */
    uint32_t known_regions;  /* handles below this were issued (a cache of
                                the registry's count) */
    /* aggregate mode: the memo of root calls, as spi_path_node's memo
     * (region + 1, 0: none; zero-initialised with the block) */
    uint32_t root_memo_region;
    int32_t root_memo_node;
    bool tsc;                /* the session's clock: TSC ticks, else ns */
    /* aggregate mode, thread hooks or an OpenMP primary candidate: every
     * call takes the out-of-line path that does all of them */
    bool full;
} spi_hot;

/* The calling thread's hot block. */
extern SPI_TLS spi_hot spi_tls;

static inline int spi_hot_path(void) {
    return atomic_load_explicit(&spi_tls.path, memory_order_relaxed);
}

static inline void spi_hot_set_path(spi_hot *h, int path) {
    atomic_store_explicit(&h->path, path, memory_order_relaxed);
}

/* The key of a node as its table holds it. */
static inline uint64_t spi_node_key(const spi_path_node *n) {
    return n->region == SPI_PATH_HOSTED ? spi_hosted_key(n->host_thread, n->host_node)
                                        : spi_path_key(n->parent, (int)n->region);
}

/* Aggregate mode in an OpenMP program: the path the main thread's teams
 * are forked in, (thread index + 1) << 32 | node, or 0 for none: the node
 * of the main thread's innermost open call begun outside a parallel
 * region, stored at each of its begins and ends (spi_omp_publish_fork). A
 * worker's root call reads it at its begin: the fork happened after the
 * last store and the runtime's fork synchronises, so relaxed suffices.
 * Only the main thread publishes: a worker cannot tell which thread forked
 * its team (no OMPT), and teams are forked from the main thread in the
 * programs this serves; a team forked elsewhere (or nested) goes under the
 * main thread's path too. Reset at session start. */
extern _Atomic uint64_t spi_omp_fork_path;

static inline void spi_omp_publish_fork(const spi_thread *t, int32_t node) {
    uint64_t word = node < 0 ? 0 : (uint64_t)(uint32_t)(t->index + 1) << 32 | (uint32_t)node;
    atomic_store_explicit(&spi_omp_fork_path, word, memory_order_relaxed);
}

/* The live session, under spi_session_lock unless said otherwise. */
extern _Atomic uint64_t spi_session_generation; /* 0: not recording; relaxed reads */
extern pthread_mutex_t spi_session_lock;
extern spi_session spi_live_session;
extern atomic_size_t spi_buffer_bytes;          /* bytes of event chunks mapped */
/* The current session's thread hooks (recorder.h); NULL = none. */
extern _Atomic(const spi_thread_hooks *) spi_session_hooks;
/* The current session's mode and clock, read by threads attaching to it. */
extern atomic_bool spi_session_aggregate;
extern atomic_bool spi_session_tsc;
extern _Atomic int64_t spi_session_anchor_interval; /* ticks */
/* Unmatched-end and invalid-handle messages printed this session. */
extern atomic_uint spi_unmatched_reports;

#endif /* SPI_RECORDER_STATE_H */
