/*
 * recorder.h - per-thread recording state and the session it belongs to.
 *
 * A thread finds its state in a thread-local block (recorder.c). begin =
 * push a frame, read the clock; end = read the clock, pop, append one
 * 24-byte event to the thread's current chunk, its times still raw
 * (spi_event). No locks, no I/O, and no allocation after
 * warm-up except a new chunk (chunks are linked, never copied).
 *
 * Aggregate mode replaces the events by one accumulator per call path
 * (spi_path_node): begin finds the path of (current path, region) in a
 * per-thread table, end adds the call to it. Memory grows with the number
 * of distinct paths, and allocation happens only for a new path.
 *
 * Call ids: each thread numbers the calls it opens 0, 1, 2, ... (its
 * "sequence"). An event stores its own sequence and the distance back to its
 * parent's; run.c turns them into ids unique per rank by offsetting each
 * thread's sequences.
 */
#ifndef SPI_RECORDER_H
#define SPI_RECORDER_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "record/path_table.h"
#include "record/registry.h"
#include "record/spill.h"
#include "record/tick_map.h"
#include "util/alloc.h"

/* One completed call: exactly 24 bytes, the memory a trace pays per call
 * (fresh memory costs the hot path in proportion to its size: clock.h and
 * bench/overhead). Until spi_recorder_convert_ticks, times are as the hot
 * path stored them: start_ns is in the session's clock (ns, or TSC ticks),
 * duration_ns holds the end's reading (TSC ticks, or CLOCK_MONOTONIC
 * stored by spi_clock_store_end): the subtraction, and the conversion to
 * ns, would lengthen the clock read's dependency chain (clock.h).
 *
 * `key` packs the call's number on its thread (its sequence, in begin
 * order) above its region: sequence << SPI_KEY_REGION_BITS | region bits.
 * The parent is not stored: events are the stack's pops, so they nest,
 * and call_parents.h recovers each one's parent from the sequences and
 * the end order alone. */
typedef struct spi_event {
    int64_t start_ns;
    int64_t duration_ns;
    uint64_t key;
} spi_event;

/* The region bits of a key and of a frame: the registry handle below
 * SPI_REGION_LIMIT, and SPI_EVENT_IN_PARALLEL: the call began inside an
 * OpenMP parallel region (record/openmp.h; only on threads that are not
 * OpenMP workers, in programs with an OpenMP runtime). */
#define SPI_KEY_REGION_BITS 24
#define SPI_EVENT_IN_PARALLEL (UINT32_C(1) << 23)
_Static_assert(SPI_EVENT_IN_PARALLEL == (uint32_t)SPI_REGION_LIMIT, "handles fit below the flag");
/* Sequences that fit above the region bits. A thread stops recording
 * (its later calls are dropped and counted, like past a buffer limit) a
 * margin before the last one: recorder.c checks at every new chunk.
 * Between two new chunks a thread begins at most a chunk's capacity of
 * calls plus the growth of its stack of open calls, and 2^32 open calls
 * would take 160 GiB of frames: the margin is never crossed. */
#define SPI_SEQUENCE_LIMIT ((INT64_C(1) << (64 - SPI_KEY_REGION_BITS)) - (INT64_C(1) << 32))

static inline uint64_t spi_event_key(int64_t sequence, uint32_t region_bits) {
    return (uint64_t)sequence << SPI_KEY_REGION_BITS | region_bits;
}
static inline int64_t spi_event_sequence(const struct spi_event *e) {
    return (int64_t)(e->key >> SPI_KEY_REGION_BITS);
}
/* The handle of an event */
static inline uint32_t spi_event_region(const struct spi_event *e) {
    return (uint32_t)e->key & (SPI_EVENT_IN_PARALLEL - 1);
}
static inline bool spi_event_in_parallel(const struct spi_event *e) {
    return (e->key & SPI_EVENT_IN_PARALLEL) != 0;
}
#define SPI_RECENT_NAMES 64 /* power of two */
/* Event chunks: a thread's first is 64 KiB (a thread that records little
 * costs little), every later one 2 MiB, one transparent huge page where
 * the kernel grants it, populated when it is mapped, so the hot path
 * writes into backed memory: measured here, a first write per 4 KiB page
 * costs about 40 ns per event spread over the page, populating 1 MiB of
 * 4 KiB pages at once about 9 ns per event (bench/overhead), a huge page
 * one fault per 65536 events. */
#define SPI_FIRST_CHUNK_BYTES ((size_t)64 << 10)
#define SPI_CHUNK_BYTES ((size_t)2 << 20)

typedef struct spi_chunk {
    struct spi_chunk *next;
    size_t used;
    /* what was mapped, for spi_unmap; 0: the chunk is not a mapping of its
     * own but a packed copy in the session's compact arena (an exited
     * thread's last events, recorder_retire.h), freed with the session */
    size_t bytes;
    size_t capacity;       /* events */
    spi_event events[];
} spi_chunk;

/* Gives a chunk's memory back unless it lives in the session's compact
 * arena (bytes 0), which the session frees as a whole. */
static inline void spi_chunk_unmap(spi_chunk *chunk) {
    if (chunk->bytes) spi_unmap(chunk, chunk->bytes);
}

/* An open call. It holds what its event will store besides the times,
 * all known at begin (the key), so end copies one word instead of looking
 * anywhere else. */
typedef struct spi_frame {
    union {
        struct timespec start_ts; /* CLOCK_MONOTONIC as read (clock.h: why) */
        int64_t start_ticks;      /* TSC */
    };
    uint64_t key;          /* the event's: sequence and region bits */
    uint32_t region;       /* handle | SPI_EVENT_IN_PARALLEL, for the end's match */
    int32_t node;          /* aggregate mode: the call's path (spi_path_node) */
    int64_t child_ns;      /* aggregate mode: time of the direct children so far */
} spi_frame;

/* The handle of an open call */
#define SPI_FRAME_REGION(f) ((f)->region & (SPI_EVENT_IN_PARALLEL - 1))

/* Exact sums of squared durations: a 64x64 -> 128-bit multiply-add per
 * call, no rounding until finalize (std without Welford's division). */
__extension__ typedef unsigned __int128 spi_u128;

/* Aggregate mode: the accumulator of one call path of one thread. The
 * path is (parent node, region); a call of a region directly inside a call
 * of the same region stays on the enclosing node (recursion = one path). */
typedef struct spi_path_node {
    int32_t parent;        /* node index on the same thread, -1 = root */
    uint32_t region;       /* registry handle, or SPI_PATH_HOSTED */
    /* SPI_PATH_HOSTED: an OpenMP worker's stand-in for the path its team
     * was forked in, on another thread (record/openmp.h): that thread's
     * index and node. Such a node never counts a call (count 0); the
     * worker's root paths hang below it, and run_aggregate.c gives them
     * the host path as parent. Unused on other nodes. */
    int32_t host_thread;
    int32_t host_node;
    /* A memo of the thread's inline aggregate begin (recorder.c): the path
     * last found below this one, for region memo_region - 1 (0: none yet),
     * so a call of the same child again costs one compare, not a lookup.
     * Only a thread's own nodes use it; folded copies ignore it. */
    uint32_t memo_region;
    int32_t memo_node;
    uint64_t count;
    uint64_t recursions;   /* calls made directly inside a call of this path */
    int64_t total_ns;
    int64_t min_ns;
    int64_t max_ns;
    int64_t exclusive_ns;  /* sum of (duration - direct children) */
    int64_t start_min_ns;  /* earliest start of a call on this path */
    int64_t end_max_ns;    /* latest end */
    spi_u128 sum_squares;  /* sum of duration^2, ns^2 */
} spi_path_node;

/* The region of a hosted stand-in node (above every registry handle). */
#define SPI_PATH_HOSTED UINT32_MAX

/* Chunks a thread wrote to the spill file, in recording order (they all
 * precede its chunks still in memory). An entry handed to the spill
 * writer (spill_writer.h) is recorded at hand-over, before its bytes are
 * written: readers of a live thread's entries wait for them first
 * (spi_spill_writer_wait_thread), a stopped session's writer is drained. */
typedef struct spi_spilled_chunk {
    uint64_t offset;       /* in the spill file */
    uint64_t count;        /* events */
    /* the writer could not write it (disk full, I/O error): the chunk
     * itself, kept in memory (and counted in the event bytes), read from
     * here instead of the file; NULL for a chunk in the file. Set by the
     * owning thread or once the writer is joined (spill_writer.h). */
    spi_chunk *kept;
} spi_spilled_chunk;

/* Aggregate mode: the call paths of the session's exited threads, folded
 * into one table as each exits (recorder_retire.h). A node is keyed like a
 * thread's, by (parent node in this table, region), and every exited
 * thread's path with that key adds into it, so the table grows with the
 * number of distinct paths, never with the number of threads. Parents
 * precede their children. Under spi_session_lock while recording. */
typedef struct spi_path_fold {
    spi_path_node *nodes;
    /* per node: the index of the one thread whose calls it holds, -1 when
     * several threads' calls were added, -2 while it holds none */
    int32_t *threads;
    size_t count;
    size_t capacity;
    spi_path_table index;    /* (parent, region) -> node (path_table.h) */
    /* the times are still TSC ticks: run_aggregate.c converts them with
     * the session's map (as recorder_ticks.c does a thread's paths) */
    bool ticks;
} spi_path_fold;

/* A block of the session's compact arena (recorder_retire.h). */
struct spi_arena_block;

/* The part of a thread's state that every begin and end touches lives in
 * a thread-local block of recorder.c, one %fs-relative load away (no
 * pointer to chase first: see there). `hot` points to it while the thread
 * records; the fields below marked "published" are valid once it is NULL:
 * recorder.c copies them back when the thread exits and when the session
 * stops, which are the only times anything else reads them.
 *
 * An exited thread keeps a small record (recorder_retire.h): this struct,
 * its full chunks, its last events packed into the session's arena (or
 * written to the spill file), its anchors at their exact size, its open
 * frames if it exited inside calls; its stack, name caches and (folded)
 * path table are freed. */
struct spi_hot;

typedef struct spi_thread {
    struct spi_hot *hot;     /* the thread's live block, NULL once published */
    bool aggregate;          /* the session's mode, copied at attach */
    bool tsc;                /* times are TSC ticks (tick_map.h), else ns */
    bool omp_primary_candidate;   /* OpenMP runtime present, not a worker:
                                     calls note whether they began inside a
                                     parallel region (record/openmp.h) */
    bool omp_fork_host;           /* aggregate mode, the main thread of an
                                     OpenMP program: publishes the path its
                                     teams are forked in (spi_omp_fork_path) */
    spi_frame *stack;        /* open calls, bottom first */
    size_t stack_capacity;
    size_t depth;            /* published: calls still open */
    int64_t next_sequence;   /* published: calls begun */
    spi_chunk *tail;         /* its `used` is published too */
    /* The session's thread hooks (spi_thread_hooks) state for this thread,
     * NULL when none run. */
    void *hook_state;

    /* by-name fast path: the last handle seen for a name pointer, per slot
     * of a small direct-mapped table of SPI_RECENT_NAMES slots; the name's
     * bytes are still compared, so a reused buffer with new contents can
     * never hit a stale handle. Allocated apart (2 KiB) so that an exited
     * thread, which frees it, keeps only a small spi_thread. */
    struct spi_recent_name {
        const char *pointer;
        const char *text;    /* the registry's copy of the name */
        size_t len;
        int32_t handle;
    } *recent;

    /* per-thread name cache: hash slots of (hash, handle), lock-free */
    uint64_t *cache_hashes;
    int32_t *cache_handles;  /* -1 = empty */
    size_t cache_capacity;   /* power of two */
    size_t cache_used;

    /* aggregate mode: the call paths, and (parent, region) -> node
     * (path_table.h: keyed by both, no string is hashed). An exited
     * thread's paths are folded into the session's table (spi_path_fold)
     * and these are freed (node_count 0). */
    spi_path_node *nodes;
    size_t node_count;
    size_t node_capacity;
    spi_path_table paths;

    /* cold */
    spi_anchor_list anchors;      /* TSC: this thread's (ticks, ns) pairs */
    const struct spi_thread_hooks *hooks; /* whose hook_state it is */
    spi_chunk *head;
    spi_spilled_chunk *spilled;   /* flush mode: chunks in the spill file */
    size_t spilled_count;
    size_t spilled_capacity;
    /* chunks handed to the spill writer (the thread's own count), and of
     * those the ones it has written or given up on (under the writer's
     * mutex): equal when none of t->spilled is still pending */
    uint64_t spill_queued;
    uint64_t spill_done;
    uint64_t dropped_events;      /* lost to the buffer limit or OOM */
    /* no event memory could be mapped (recorder_buffers.c): calls are
     * dropped without asking again until this sequence; the wait doubles
     * with each failure (0: memory came last time) */
    int64_t chunk_retry_sequence;
    int64_t chunk_backoff_calls;
    /* calls of signal handlers that interrupted a recording call on this
     * thread, refused (recorder.c); only the thread itself counts them */
    uint64_t signal_refused;
    int index;                    /* dense, in attach order */
    bool omp_worker;              /* an OpenMP worker thread (record/openmp.h) */
    int64_t ident;                /* pthread_self() */
    int64_t native_id;            /* gettid() */
    int64_t start_ns;
    int64_t end_ns;               /* -1 while alive */
    int64_t cpu_ns;
    bool alive;
    bool is_main;
    /* aggregate mode: it exited and paths of its with calls were folded
     * into the session's table (it recorded, though it has no nodes) */
    bool folded;
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
    /* flush mode: full chunks go here when the limit is reached (NULL:
     * calls past the limit are dropped). Owned by the session. */
    spi_spill *spill;
    /* the thread that writes handed-over chunks to `spill` (spill_writer.h;
     * NULL: SCOPE_PROFILER_SPILL_THREAD=0, no spill, or out of memory).
     * Drained, joined and freed by spi_recorder_stop. */
    struct spi_spill_writer *spill_writer;
    const char *spill_label;      /* the output path, for the message */
    bool aggregate;               /* call-path accumulators, no events */
    bool tsc;                     /* times in TSC ticks (tick_map.h) */
    /* a stopped trace whose events still hold end readings in their
     * duration fields (spi_event): spi_recorder_convert_ticks converts */
    bool raw_ends;
    /* the same for the events in the spill file, converted when read */
    bool spilled_raw_ends;
    spi_anchor_list anchors;      /* TSC: the session's start and stop anchors */
    int64_t anchor_interval_ticks;/* TSC: SPI_ANCHOR_INTERVAL_NS in ticks */
    /* After spi_recorder_convert_ticks of a session with spilled chunks:
     * the map their events still need (they are converted when read). */
    spi_tick_map spilled_map;
    bool spilled_map_live;
    /* Exited threads' last events, packed into blocks counted in the
     * buffer bytes (recorder_retire.h); their chunks point in here. */
    struct spi_arena_block *arena;
    /* aggregate mode: exited threads' paths (NULL until one folds) */
    spi_path_fold *fold;
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

/* Every event of a thread still in memory, in recording (end) order: all
 * of them unless the thread spilled chunks (then see run_stream.c). */
#define SPI_FOR_EACH_EVENT(t, e)                                               \
    for (const spi_chunk *chunk_ = (t)->head; chunk_; chunk_ = chunk_->next)   \
        for (const spi_event *e = chunk_->events; e < chunk_->events + chunk_->used; e++)

/* What a session records. */
typedef struct spi_recording {
    size_t buffer_limit_bytes;        /* trace mode: 0 = no limit */
    spi_spill *spill;                 /* flush mode's file (the session takes
                                         it over), or NULL: drop past the limit */
    const char *spill_label;          /* output path named in messages; must
                                         outlive the session */
    bool aggregate;                   /* per-path accumulators instead of events */
    bool tsc;                         /* record TSC ticks (tick_map.h) */
    const spi_thread_hooks *hooks;    /* NULL: none; valid until released */
} spi_recording;

/* Start a session: the hot path starts recording. Returns SP_OK or
 * SP_ERR_OUT_OF_MEMORY. */
int spi_recorder_start(const spi_recording *recording);

/* Stop recording and hand the session's threads to the caller (who frees
 * them with spi_recorder_release). Samples end/cpu times of live threads. */
spi_session spi_recorder_stop(void);
void spi_recorder_release(spi_session *session);

/* A stopped session's times into CLOCK_MONOTONIC ns, in place: every
 * event's start and duration from the start and end reading the hot path
 * stored (spi_event), through the map of all the session's anchors for a
 * TSC session (tick_map.h), and in aggregate mode every path's totals and
 * first/last times (TSC only: a ns session's paths hold ns). Afterwards
 * session->tsc and session->raw_ends are false; events in the spill file
 * are converted as they are read (event_cursor.h). Returns SP_OK or
 * SP_ERR_OUT_OF_MEMORY (times then stay raw and the caller must not write
 * them). recorder_ticks.c. */
int spi_recorder_convert_ticks(spi_session *session);

/* Raw event times into ns as above: through `map` (TSC), or NULL for
 * CLOCK_MONOTONIC. recorder_ticks.c. */
void spi_event_convert_times(spi_event *events, size_t count, spi_tick_map *map);

/* pthread_atfork handlers, registered by the lifecycle: the session and
 * registry locks are held across fork() by the forking thread; in the
 * child the session ends (nothing of the parent is recorded or written)
 * in constant time: its memory, copy-on-write, is left to the child
 * unreleased (recorder_session.c says why). */
void spi_recorder_fork_prepare(void);
void spi_recorder_fork_parent(void);
void spi_recorder_fork_child(void);

/* Whether any thread of a stopped session wrote chunks to its spill file
 * (finalize then streams: run_stream.c). */
bool spi_session_spilled(const spi_session *session);

/* Ends that matched no open call (or a handle never issued) in the last
 * session, whether their message was printed or suppressed. */
uint64_t spi_recorder_bad_ends(void);

/* Total bytes of event chunks allocated in the current session. */
size_t spi_recorder_buffer_bytes(void);

#endif /* SPI_RECORDER_H */
