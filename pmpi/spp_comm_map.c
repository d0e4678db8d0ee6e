/*
 * spp_comm_map.c - which world ranks make up each communicator a rank
 * used, recorded once per communicator so that the tools can place a
 * `peer=` (a rank of the call's communicator) at a world rank
 * (docs/FORMAT.md 4.6.1).
 *
 * Stored form: one region per (communicator handle, membership), named
 * like every MPI region (the package's parse_mpi_region reads it: all six
 * keys, kind `map`):
 *
 *   mpi:comm_map kind=map bytes=0 peer=-1 root=-1 tag=-1 comm=<c> world=<ranks> lang=native
 *
 * with one call of no length on each rank that has the communicator, so
 * the file's index says which rank's handle <c> it is (handles are a
 * process's own: comm=3 on rank 0 and on rank 1 may be different
 * communicators). <ranks> lists the world rank of communicator rank 0,
 * 1, ... as comma-separated runs `a` or `a..b` (step 1 or -1) or
 * `a..b/s` (step s); `?` when the list would not fit a region name.
 *
 * When: after MPI_Comm_split/dup/create (a new communicator, even under a
 * freed one's handle), and at the first call on a communicator not seen
 * created (made by a call not wrapped, or before the session), which
 * includes the first call under a handle MPI_Comm_free released. Not for
 * MPI_COMM_WORLD (the identity).
 *
 * Bounds: at most SPP_COMM_MAPS maps per process; past them the
 * communicators get none (one note), and the tools report their messages
 * as unresolved, per handle, as they do without any map. A new
 * communicator past the cap under a handle that has a map gets `world=?`
 * once, so the older map is never applied to it. So a program creating
 * 10^5 communicators adds at most SPP_COMM_MAPS map calls plus one `?`
 * per handle of the fixed table (SEEN_SLOTS), whatever it creates.
 *
 * Thread-safety: the table of handles seen is lock-free (a CAS per new
 * handle); the first use of a handle on two threads at once may record
 * its map twice, which the tools read as one (the same list).
 */
#include "spp_comm_map.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"
#include "spp_core.h"

/* Room for the list in a name (the core's bound is 1024 bytes). */
#define LIST_BYTES 900
/* Handles seen: open addressing over twice the cap of maps. */
#define SEEN_SLOTS (2 * SPP_COMM_MAPS)

static _Atomic int64_t seen[SEEN_SLOTS]; /* see slot_of */
static atomic_int maps_recorded;
static atomic_bool cap_noted;

void spp_comm_map_reset(void) {
    for (size_t i = 0; i < SEEN_SLOTS; i++) atomic_store(&seen[i], 0);
    atomic_store(&maps_recorded, 0);
    atomic_store(&cap_noted, false);
}

/* Append one run to `out`; false when it does not fit. */
static bool put_run(char *out, size_t *used, int first, int last, int step) {
    char run[48];
    int n;
    if (first == last) n = snprintf(run, sizeof run, "%d", first);
    else if (step == 1 || step == -1) n = snprintf(run, sizeof run, "%d..%d", first, last);
    else n = snprintf(run, sizeof run, "%d..%d/%d", first, last, step);
    size_t need = (size_t)n + (*used ? 1 : 0);
    if (n < 0 || *used + need >= LIST_BYTES) return false;
    if (*used) out[(*used)++] = ',';
    memcpy(out + *used, run, (size_t)n + 1);
    *used += (size_t)n;
    return true;
}

/* The runs of `world[0..n)`, or "?" when they do not fit. */
static void encode(const int *world, int n, char *out) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n;) {
        int j = i + 1, step = n > i + 1 ? world[i + 1] - world[i] : 1;
        if (step == 0) step = 1; /* not a run: a rank appears once */
        while (j < n && world[j] - world[j - 1] == step) j++;
        if (j - i == 2 && step != 1 && step != -1) j = i + 1; /* a pair: two singles */
        if (!put_run(out, &used, world[i], world[j - 1], step)) {
            strcpy(out, "?");
            return;
        }
        i = j;
    }
}

/* The world ranks of `comm`'s members into a new array; NULL on failure. */
static int *world_ranks(MPI_Comm comm, int *size) {
    MPI_Group group, world_group;
    *size = 0;
    if (PMPI_Comm_size(comm, size) != MPI_SUCCESS || *size <= 0) return NULL;
    if (PMPI_Comm_group(comm, &group) != MPI_SUCCESS) return NULL;
    int *ranks = malloc(2 * (size_t)*size * sizeof *ranks);
    int ok = ranks && PMPI_Comm_group(MPI_COMM_WORLD, &world_group) == MPI_SUCCESS;
    if (ok) {
        for (int i = 0; i < *size; i++) ranks[i] = i;
        ok = PMPI_Group_translate_ranks(group, *size, ranks, world_group, ranks + *size) ==
             MPI_SUCCESS;
        PMPI_Group_free(&world_group);
    }
    PMPI_Group_free(&group);
    if (!ok) {
        free(ranks);
        return NULL;
    }
    memmove(ranks, ranks + *size, (size_t)*size * sizeof *ranks);
    return ranks;
}

/* One call of no length of the map region of `handle` with `list`. */
static void record_list(int32_t handle, const char *list) {
    char name[LIST_BYTES + 128];
    snprintf(name, sizeof name,
             "mpi:comm_map kind=map bytes=0 peer=-1 root=-1 tag=-1 comm=%d world=%s lang=native",
             (int)handle, list);
    int region = sp_region(name);
    if (region < 0) return;
    sp_begin(region);
    sp_end(region);
}

static void record_unknown(int32_t handle) { record_list(handle, "?"); }

/* comm's map, unless the cap is reached (then false, after one note). An
 * intercommunicator's group is its local one: it gets "?". */
static bool record(MPI_Comm comm, int32_t handle) {
    if (atomic_fetch_add(&maps_recorded, 1) >= SPP_COMM_MAPS) {
        if (!atomic_exchange(&cap_noted, true))
            fprintf(stderr, "scope-profiler: MPI: more than %d communicators: later ones get no "
                    "world-rank map; the tools show their messages as unresolved\n",
                    SPP_COMM_MAPS);
        return false;
    }
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        record_unknown(handle);
        return true;
    }
    int size = 0;
    int *world = world_ranks(comm, &size);
    char list[LIST_BYTES];
    if (world) encode(world, size, list);
    else strcpy(list, "?");
    free(world);
    record_list(handle, list);
    return true;
}

/* The table: per handle seen, one word: the handle + 2^32 (never 0; 0 =
 * an empty slot) below bit 40, and its state above. A map is only ever
 * recorded for a handle in the table, so a handle whose slot could not be
 * had (table full) has none, and its messages stay unresolved. */
#define KEY_BITS ((INT64_C(1) << 40) - 1)
#define FREED (INT64_C(1) << 40)     /* MPI_Comm_free'd: the next use is a new communicator */
#define POISONED (INT64_C(1) << 41)  /* "world=?" recorded: unresolved for good */

/* The slot of `handle`, inserted when absent; NULL when the table is full. */
static _Atomic int64_t *slot_of(int32_t handle, bool *inserted) {
    int64_t key = (int64_t)handle + (INT64_C(1) << 32);
    size_t i = ((uint32_t)handle * 2654435761u) % SEEN_SLOTS;
    *inserted = false;
    for (size_t probes = 0; probes < SEEN_SLOTS; probes++, i = (i + 1) % SEEN_SLOTS) {
        int64_t now = atomic_load_explicit(&seen[i], memory_order_relaxed);
        if ((now & KEY_BITS) == key) return &seen[i];
        if (now == 0) {
            int64_t empty = 0;
            if (atomic_compare_exchange_strong(&seen[i], &empty, key)) {
                *inserted = true;
                return &seen[i];
            }
            if ((empty & KEY_BITS) == key) return &seen[i];
        }
    }
    return NULL;
}

/* A new communicator under a handle in the table: its map, or past the
 * cap "world=?" once, so an older map of the handle is never applied to
 * it (the tools read two lists under one handle as unresolved). */
static void new_communicator(MPI_Comm comm, int32_t handle, _Atomic int64_t *slot,
                             bool first) {
    int64_t state = atomic_fetch_and(slot, ~FREED);
    if (state & POISONED) return;
    if (record(comm, handle) || first) return;
    if (!(atomic_fetch_or(slot, POISONED) & POISONED)) record_unknown(handle);
}

void spp_comm_map_used(MPI_Comm comm, int32_t handle) {
    if (comm == MPI_COMM_WORLD || handle == SPP_NONE) return;
    bool inserted;
    _Atomic int64_t *slot = slot_of(handle, &inserted);
    if (!slot) return;
    if (inserted || (atomic_load_explicit(slot, memory_order_relaxed) & FREED))
        new_communicator(comm, handle, slot, inserted);
}

void spp_comm_map_created(MPI_Comm comm) {
    if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD) return;
    int32_t handle = (int32_t)PMPI_Comm_c2f(comm);
    bool inserted;
    _Atomic int64_t *slot = slot_of(handle, &inserted);
    if (slot) new_communicator(comm, handle, slot, inserted);
}

void spp_comm_map_freed(int32_t handle) {
    if (handle == SPP_NONE) return;
    bool inserted;
    _Atomic int64_t *slot = slot_of(handle, &inserted);
    if (slot && !inserted) atomic_fetch_or(slot, FREED);
}
