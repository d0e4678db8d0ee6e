/*
 * recorder_retire.c - an exited thread's state made small
 * (recorder_retire.h): its last events packed into the session's arena or
 * spilled, its paths folded into the session's table, its working memory
 * freed. Also the one spill write of a chunk, which the recording threads'
 * flush (recorder_buffers.c) uses too.
 *
 * Everything here but spi_chunk_spill runs under spi_session_lock, on the
 * exiting thread: the arena and the folded table are session state, and
 * finalize (which takes the lock to stop the session) never sees them
 * half updated.
 */
#include "record/recorder_retire.h"

#include <string.h>

#include "util/alloc.h"
#include "util/diag.h"
#include "util/error.h"
#include "record/recorder_state.h"

/* The arena's first block, and the most one block grows to: a process
 * with few exited threads pays little, one with many few blocks. */
#define ARENA_FIRST_BYTES ((size_t)64 << 10)
#define ARENA_MAX_BYTES SPI_CHUNK_BYTES
#define FOLD_FIRST_NODES 64

/* ---- the spill write ------------------------------------------------------ */

int spi_spilled_reserve(spi_thread *t) {
    if (t->spilled_count < t->spilled_capacity) return SP_OK;
    size_t capacity = t->spilled_capacity ? t->spilled_capacity * 2 : 64;
    spi_spilled_chunk *grown = spi_reallocarray(t->spilled, capacity, sizeof *grown);
    if (!grown) return SP_ERR_OUT_OF_MEMORY;
    t->spilled = grown;
    t->spilled_capacity = capacity;
    return SP_OK;
}

int spi_chunk_spill(spi_thread *t, const spi_chunk *chunk) {
    spi_spill *spill = spi_live_session.spill;
    if (spi_spilled_reserve(t) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    uint64_t offset;
    size_t data_bytes = chunk->used * sizeof(spi_event);
    int error;
    if (chunk->bytes) {
        /* a mapping of its own: written whole, directly (spill.h) */
        size_t block_bytes = spi_spill_block_bytes(offsetof(spi_chunk, events) + data_bytes);
        uint64_t at = spi_spill_reserve_block(spill, block_bytes);
        error = spi_spill_write_block(spill, chunk, block_bytes, at, data_bytes);
        offset = at + offsetof(spi_chunk, events);
    } else {
        error = spi_spill_append(spill, chunk->events, data_bytes, &offset);
    }
    if (error) {
        if (!atomic_exchange(&spill->failed, true))
            spi_diag("cannot write the spill file beside %s (%s): from now on calls "
                     "past the %zu-byte buffer limit are dropped and counted",
                     spi_live_session.spill_label, strerror(error), spi_live_session.buffer_limit_bytes);
        return SP_ERR_BUFFER_LIMIT;
    }
    t->spilled[t->spilled_count++] = (spi_spilled_chunk){.offset = offset, .count = chunk->used};
    return SP_OK;
}

/* ---- trace: the last events ------------------------------------------------ */

static size_t round_up(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

/* The size of the block the arena would map next for a copy of `need`
 * bytes: double the newest block, up to ARENA_MAX_BYTES, and never less
 * than the copy (a long-lived thread's big last chunk gets a block of its
 * own size). */
static size_t next_block_bytes(size_t need) {
    const struct spi_arena_block *newest = spi_live_session.arena;
    size_t bytes = newest ? newest->bytes * 2 : ARENA_FIRST_BYTES;
    if (bytes > ARENA_MAX_BYTES) bytes = ARENA_MAX_BYTES;
    size_t least = round_up(sizeof(struct spi_arena_block) + need, (size_t)4096);
    return bytes > least ? bytes : least;
}

static bool arena_has_room(size_t need) {
    const struct spi_arena_block *newest = spi_live_session.arena;
    return newest && newest->bytes - sizeof *newest - newest->used >= need;
}

/* `need` bytes (a multiple of 16) from the arena; NULL when a new block
 * cannot be mapped. Its bytes are counted in spi_buffer_bytes. */
static void *arena_take(size_t need) {
    struct spi_arena_block *newest = spi_live_session.arena;
    if (!arena_has_room(need)) {
        size_t bytes = next_block_bytes(need);
        newest = spi_map_populated(bytes);
        if (!newest) return NULL;
        atomic_fetch_add(&spi_buffer_bytes, bytes);
        newest->next = spi_live_session.arena;
        newest->bytes = bytes;
        newest->used = 0;
        spi_live_session.arena = newest;
    }
    void *at = newest->data + newest->used;
    newest->used += need;
    return at;
}

/* Unlinks and unmaps t's chunk `chunk`, whose predecessor is `before`
 * (NULL: it is the head). */
static void drop_chunk(spi_thread *t, spi_chunk *before, spi_chunk *chunk) {
    if (before) before->next = chunk->next;
    else t->head = chunk->next;
    if (t->tail == chunk) t->tail = before;
    atomic_fetch_sub(&spi_buffer_bytes, chunk->bytes);
    spi_chunk_unmap(chunk);
}

/* Flush mode at the limit: t's chunks to the spill file, head first, each
 * unmapped once written (the order the spilled list and the chunks still
 * in memory must keep: spilled ones precede). True when none is left in
 * memory; after a failed write the rest stay where they are. */
static bool spill_all(spi_thread *t) {
    while (t->head) {
        spi_chunk *c = t->head;
        if (c->used && spi_chunk_spill(t, c) != SP_OK) return false;
        drop_chunk(t, NULL, c);
    }
    return true;
}

static bool flushing(void) {
    return spi_live_session.spill && !atomic_load_explicit(&spi_live_session.spill->failed, memory_order_relaxed);
}

/* Whether a copy of `need` bytes would take a new arena block that passes
 * the buffer limit, once `freed` bytes (the chunk it replaces) are given
 * back. */
static bool arena_would_pass_limit(size_t need, size_t freed) {
    size_t limit = spi_live_session.buffer_limit_bytes;
    if (!limit || arena_has_room(need)) return false;
    size_t now = atomic_load(&spi_buffer_bytes);
    size_t after = (now > freed ? now - freed : 0) + next_block_bytes(need);
    return after > limit;
}

static void retire_events(spi_thread *t) {
    spi_chunk *tail = t->tail;
    if (!tail) return;
    spi_chunk *before = NULL;
    for (spi_chunk *c = t->head; c != tail; c = c->next) before = c;
    if (tail->used == 0) {
        drop_chunk(t, before, tail);
        return;
    }
    size_t need = round_up(sizeof(spi_chunk) + tail->used * sizeof(spi_event), (size_t)16);
    if (arena_would_pass_limit(need, tail->bytes)) {
        /* flushing: written like full chunks. Otherwise (drop mode), and
         * for what a failed write leaves, the chunks stay as they are:
         * they were counted within the limit, a new block would only add
         * to it, and their calls are recorded already */
        if (flushing()) (void)spill_all(t);
        return;
    }
    spi_chunk *copy = arena_take(need);
    if (!copy) return; /* out of memory: the chunk stays as it is */
    *copy = (spi_chunk){.next = NULL, .used = tail->used, .bytes = 0, .capacity = tail->used};
    memcpy(copy->events, tail->events, tail->used * sizeof(spi_event));
    if (before) before->next = copy;
    else t->head = copy;
    t->tail = copy;
    atomic_fetch_sub(&spi_buffer_bytes, tail->bytes);
    spi_chunk_unmap(tail);
}

/* ---- aggregate: the folded paths ------------------------------------------- */

/* Room for `nodes` nodes in the fold, its key table at most half full.
 * SP_OK or SP_ERR_OUT_OF_MEMORY (the fold is unchanged but maybe bigger). */
static int fold_reserve(spi_path_fold *f, size_t nodes) {
    if (nodes > f->capacity) {
        size_t capacity = f->capacity ? f->capacity : FOLD_FIRST_NODES;
        while (capacity < nodes) capacity *= 2;
        spi_path_node *grown = spi_reallocarray(f->nodes, capacity, sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        f->nodes = grown;
        int32_t *threads = spi_reallocarray(f->threads, capacity, sizeof *threads);
        if (!threads) return SP_ERR_OUT_OF_MEMORY;
        f->threads = threads;
        f->capacity = capacity;
    }
    return spi_path_table_reserve(&f->index, nodes, FOLD_FIRST_NODES * 2);
}

/* The fold's node of `from` (a thread's node) under `parent` (a fold
 * node), added when new (room reserved). A hosted stand-in keeps its host
 * (which lives on: only workers create stand-ins, and they name the main
 * thread). */
static int32_t fold_node(spi_path_fold *f, int32_t parent, const spi_path_node *from) {
    spi_path_node shape = {.parent = parent, .region = from->region,
                           .host_thread = from->host_thread, .host_node = from->host_node};
    uint64_t key = spi_node_key(&shape);
    int32_t node = spi_path_table_find(&f->index, key);
    if (node >= 0) return node;
    node = (int32_t)f->count++;
    f->nodes[node] = (spi_path_node){.parent = parent, .region = from->region,
                                     .host_thread = from->host_thread,
                                     .host_node = from->host_node,
                                     .min_ns = INT64_MAX, .max_ns = INT64_MIN,
                                     .start_min_ns = INT64_MAX, .end_max_ns = INT64_MIN};
    f->threads[node] = -2;
    spi_path_table_insert(&f->index, key, node);
    return node;
}

/* One thread's accumulator into a fold node: sums add, extremes extend
 * (exact: what the thread's own node would have given had both threads'
 * calls been on one). */
static void fold_add(spi_path_fold *f, int32_t node, const spi_path_node *n, int thread) {
    spi_path_node *to = &f->nodes[node];
    if (n->count) f->threads[node] = f->threads[node] == -2 || f->threads[node] == thread ? thread : -1;
    to->count += n->count;
    to->recursions += n->recursions;
    to->total_ns += n->total_ns;
    to->exclusive_ns += n->exclusive_ns;
    to->sum_squares += n->sum_squares;
    if (n->min_ns < to->min_ns) to->min_ns = n->min_ns;
    if (n->max_ns > to->max_ns) to->max_ns = n->max_ns;
    if (n->start_min_ns < to->start_min_ns) to->start_min_ns = n->start_min_ns;
    if (n->end_max_ns > to->end_max_ns) to->end_max_ns = n->end_max_ns;
}

/* t's paths into the session's fold; its table freed. Nothing changes when
 * memory runs out before the first node is added (all room is reserved
 * first, so a fold is never partial). Nodes come parents first (a node is
 * added after its parent: recorder_buffers.c), so one pass maps them. */
static void fold_paths(spi_thread *t) {
    size_t n = t->node_count;
    if (n > 0) {
        spi_path_fold *f = spi_live_session.fold;
        if (!f && (f = spi_calloc(1, sizeof *f)) != NULL) {
            f->ticks = t->tsc;
            spi_live_session.fold = f;
        }
        int32_t *map = spi_malloc(n * sizeof *map);
        if (!f || !map || f->count + n > INT32_MAX || fold_reserve(f, f->count + n) != SP_OK) {
            spi_free(map);
            return; /* the paths stay on t */
        }
        bool counted = false;
        for (size_t i = 0; i < n; i++) {
            const spi_path_node *node = &t->nodes[i];
            int32_t parent = node->parent >= 0 ? map[node->parent] : -1;
            map[i] = fold_node(f, parent, node);
            fold_add(f, map[i], node, t->index);
            counted = counted || node->count > 0;
        }
        spi_free(map);
        t->folded = counted;
    }
    spi_free(t->nodes);
    spi_path_table_free(&t->paths);
    t->nodes = NULL;
    t->node_count = t->node_capacity = 0;
}

void spi_path_fold_free(spi_path_fold *fold) {
    if (!fold) return;
    spi_free(fold->nodes);
    spi_free(fold->threads);
    spi_path_table_free(&fold->index);
    spi_free(fold);
}

/* ---- the rest of the thread -------------------------------------------- */

/* Open calls at exit are named at finalize (run.c): their frames stay, at
 * their exact number. Otherwise the stack goes. */
static void retire_stack(spi_thread *t) {
    if (t->depth == 0) {
        spi_free(t->stack);
        t->stack = NULL;
        t->stack_capacity = 0;
        return;
    }
    spi_frame *exact = spi_reallocarray(t->stack, t->depth, sizeof *exact);
    if (exact) {
        t->stack = exact;
        t->stack_capacity = t->depth;
    }
}

/* A recording thread's anchors are mapped (a signal handler may add one);
 * the exited thread adds none, so they move to exact-size heap memory. */
static void retire_anchors(spi_thread *t) {
    spi_anchor_list *list = &t->anchors;
    if (!list->mapped || !list->items) return;
    spi_anchor *exact = list->count ? spi_malloc(list->count * sizeof *exact) : NULL;
    if (list->count && !exact) return;
    if (exact) memcpy(exact, list->items, list->count * sizeof *exact);
    spi_unmap(list->items, list->capacity * sizeof *list->items);
    *list = (spi_anchor_list){.items = exact, .count = list->count, .capacity = list->count};
}

void spi_thread_retire(spi_thread *t) {
    retire_stack(t);
    spi_free(t->recent);
    spi_free(t->cache_hashes);
    spi_free(t->cache_handles);
    t->recent = NULL;
    t->cache_hashes = NULL;
    t->cache_handles = NULL;
    t->cache_capacity = t->cache_used = 0;
    if (t->aggregate) fold_paths(t);
    else retire_events(t);
    retire_anchors(t);
    if (t->spilled_count && t->spilled_count < t->spilled_capacity) {
        spi_spilled_chunk *exact = spi_reallocarray(t->spilled, t->spilled_count, sizeof *exact);
        if (exact) {
            t->spilled = exact;
            t->spilled_capacity = t->spilled_count;
        }
    }
}

void spi_arena_free(struct spi_arena_block *arena) {
    while (arena) {
        struct spi_arena_block *next = arena->next;
        spi_unmap(arena, arena->bytes);
        arena = next;
    }
}
