/*
 * recorder.h - per-thread recording state and the session it belongs to.
 *
 * A thread finds its state through a thread-local pointer. begin = read the
 * clock, push a frame; end = read the clock, pop, append one 32-byte event
 * to the thread's current chunk. No locks, no I/O, and no allocation after
 * warm-up except a new chunk (chunks are linked, never copied).
 *
 * Call ids: each thread numbers the calls it opens 0, 1, 2, ... (its
 * "sequence"). An event stores its own sequence and the distance back to its
 * parent's; run.c turns them into ids unique per rank by offsetting each
 * thread's sequences.
 */
#ifndef SPI_RECORDER_H
#define SPI_RECORDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One completed call: exactly 32 bytes (the memory goal per call). */
typedef struct spi_event {
    int64_t start_ns;
    int64_t duration_ns;
    int64_t sequence;      /* this call's number on its thread */
    uint32_t region;       /* registry handle */
    uint32_t parent_gap;   /* sequence - parent's sequence; 0 = root;
                              SPI_GAP_FAR: see the thread's far_parents */
} spi_event;

#define SPI_GAP_FAR UINT32_MAX
#define SPI_RECENT_NAMES 64 /* power of two */
#define SPI_CHUNK_EVENTS 2048 /* 64 KiB of events per chunk */

typedef struct spi_chunk {
    struct spi_chunk *next;
    size_t used;
    spi_event events[SPI_CHUNK_EVENTS];
} spi_chunk;

/* An open call. */
typedef struct spi_frame {
    int64_t start_ns;
    int64_t sequence;
    int32_t region;
} spi_frame;

/* A parent further back than a uint32 gap (a call enclosing > 4e9 calls). */
typedef struct spi_far_parent {
    int64_t sequence;
    int64_t parent_sequence;
} spi_far_parent;

typedef struct spi_thread {
    /* hot: touched by every begin/end */
    spi_frame *stack;
    size_t depth;
    size_t stack_capacity;
    spi_event *cursor;       /* next free event in the current chunk */
    spi_event *chunk_end;
    spi_chunk *tail;
    int64_t next_sequence;
    /* The session's thread hooks (spi_thread_hooks) state for this thread,
     * NULL when none run; the hot path tests only this (one predictable
     * branch). */
    void *hook_state;

    /* by-name fast path: the last handle seen for a name pointer, per slot
     * of a small direct-mapped table; the name's bytes are still compared,
     * so a reused buffer with new contents can never hit a stale handle */
    struct spi_recent_name {
        const char *pointer;
        const char *text;    /* the registry's copy of the name */
        size_t len;
        int32_t handle;
    } recent[SPI_RECENT_NAMES];

    /* per-thread name cache: hash slots of (hash, handle), lock-free */
    uint64_t *cache_hashes;
    int32_t *cache_handles;  /* -1 = empty */
    size_t cache_capacity;   /* power of two */
    size_t cache_used;

    /* cold */
    const struct spi_thread_hooks *hooks; /* whose hook_state it is */
    spi_chunk *head;
    uint64_t dropped_events;      /* lost to the buffer limit or OOM */
    spi_far_parent *far_parents;
    size_t far_parent_count;
    size_t far_parent_capacity;
    int index;                    /* dense, in attach order */
    int64_t ident;                /* pthread_self() */
    int64_t native_id;            /* gettid() */
    int64_t start_ns;
    int64_t end_ns;               /* -1 while alive */
    int64_t cpu_ns;
    bool alive;
    bool is_main;
    pthread_t pthread;
    char name[64];
    struct spi_thread *next;      /* session's list, in attach order */
} spi_thread;

/* The recording session (one per sp_setup .. sp_finalize). */
typedef struct spi_session {
    spi_thread *threads;          /* attach order */
    spi_thread *threads_tail;
    int thread_count;
    size_t buffer_limit_bytes;    /* 0 = none */
} spi_session;

/* Per-thread extensions of the recording (the counters module is one).
 * The recorder knows nothing of what they do: it calls attach on a thread's
 * first call of the session (slow path, on that thread) and keeps what it
 * returns as the thread's hook_state (NULL = nothing for this thread); then
 * begin before it reads the start time and end after it read the end time,
 * only for threads with a state; release when the thread's state is freed.
 * All four run on the recording thread except release, which runs where the
 * session is released. */
typedef struct spi_thread_hooks {
    void *(*attach)(void);
    void (*release)(void *state);
    void (*begin)(void *state, int region);
    void (*end)(void *state, int region);
} spi_thread_hooks;

/* Start a session: the hot path starts recording. hooks (may be NULL: none)
 * must stay valid until the session is released. Returns SP_OK or
 * SP_ERR_OUT_OF_MEMORY. */
int spi_recorder_start(size_t buffer_limit_bytes, const spi_thread_hooks *hooks);

/* Stop recording and hand the session's threads to the caller (who frees
 * them with spi_recorder_release). Samples end/cpu times of live threads. */
spi_session spi_recorder_stop(void);
void spi_recorder_release(spi_session *session);

/* Total bytes of event chunks allocated in the current session. */
size_t spi_recorder_buffer_bytes(void);

#endif /* SPI_RECORDER_H */
