/*
 * pause.c - the pause flag and each thread's ghost calls (pause.h).
 *
 * A ghost count per recorded depth, not one count per thread: "pause;
 * begin a; resume; begin b; end b; end a" must end b as a recorded call
 * (the count at b's depth is 0) and a as a ghost (the count at a's depth
 * is 1). The counts live in a small per-thread array that grows only
 * while paused (so never on the recording path), as deep as the recorded
 * stack at a paused begin; it is freed when the thread exits. Memory grows
 * with the stack depth of live threads, never with calls.
 *
 * A paused pair costs the gate word's load, the increment and the
 * decrement: no clock read, no frame, no event, as a disabled pair.
 */
#include "record/pause.h"

#include <pthread.h>
#include <string.h>

#include "util/alloc.h"

_Thread_local __attribute__((tls_model("initial-exec"))) uint32_t spi_ghost_open = 0;

/* This thread's ghost counts by recorded depth. */
typedef struct ghost_counts {
    uint64_t generation;
    uint32_t *at_depth;
    size_t capacity;
} ghost_counts;

/* initial-exec, like the recorder's hot block: no __tls_get_addr call per
 * paused begin or end in the shared library. */
static _Thread_local __attribute__((tls_model("initial-exec"))) ghost_counts ghosts;
static pthread_key_t ghost_key;
static pthread_once_t ghost_key_once = PTHREAD_ONCE_INIT;

static void release_ghosts(void *block) {
    spi_free(block);
    ghosts.at_depth = NULL;
    ghosts.capacity = 0;
}

static void make_ghost_key(void) { (void)pthread_key_create(&ghost_key, release_ghosts); }

void spi_pause_set(bool paused) {
    if (paused) atomic_fetch_or(&spi_gate_word, SPI_GATE_PAUSED);
    else atomic_fetch_and(&spi_gate_word, ~SPI_GATE_PAUSED);
}

bool spi_pause_get(void) { return (spi_calls_gated() & SPI_GATE_PAUSED) != 0; }

/* Ghosts of another session are stale: that session's stack is gone. */
static void forget_if_stale(uint64_t generation) {
    if (ghosts.generation == generation) return;
    if (ghosts.at_depth) memset(ghosts.at_depth, 0, ghosts.capacity * sizeof *ghosts.at_depth);
    ghosts.generation = generation;
    spi_ghost_open = 0;
}

static bool room_at(size_t depth) {
    if (depth < ghosts.capacity) return true;
    size_t capacity = ghosts.capacity ? ghosts.capacity : 16;
    while (capacity <= depth) capacity *= 2;
    uint32_t *grown = spi_reallocarray(ghosts.at_depth, capacity, sizeof *grown);
    if (!grown) return false;
    memset(grown + ghosts.capacity, 0, (capacity - ghosts.capacity) * sizeof *grown);
    if (!ghosts.at_depth) {
        (void)pthread_once(&ghost_key_once, make_ghost_key);
        (void)pthread_setspecific(ghost_key, grown);
    } else if (grown != ghosts.at_depth) {
        (void)pthread_setspecific(ghost_key, grown);
    }
    ghosts.at_depth = grown;
    ghosts.capacity = capacity;
    return true;
}

bool spi_gate_begin(int region, size_t depth, uint64_t generation) {
    unsigned gate = spi_calls_gated();
    if ((gate & SPI_GATE_NAME_FILTER) && spi_region_excluded(region)) return true;
    if (!(gate & SPI_GATE_PAUSED)) return false;
    forget_if_stale(generation);
    /* No room to count the ghost: record the call rather than lose the
     * pairing of its end. */
    if (!room_at(depth)) return false;
    ghosts.at_depth[depth]++;
    spi_ghost_open++;
    return true;
}

bool spi_gate_end(int region, size_t depth, uint64_t generation) {
    if ((spi_calls_gated() & SPI_GATE_NAME_FILTER) && spi_region_excluded(region)) return true;
    if (spi_ghost_open == 0) return false;
    forget_if_stale(generation);
    if (depth >= ghosts.capacity || ghosts.at_depth[depth] == 0) return false;
    ghosts.at_depth[depth]--;
    spi_ghost_open--;
    return true;
}
