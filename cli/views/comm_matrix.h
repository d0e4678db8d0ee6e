/*
 * comm_matrix.h - who sent how much to whom: the rank x rank
 * communication matrix of a profile, from its MPI regions (docs/FORMAT.md
 * 4.6: `mpi:<op> kind=point-to-point bytes=<b> peer=<p> ... comm=<c>`),
 * over the public results API only. Shared by scope-inspect --comm (text
 * and JSON) and scope-report's heat map (report_comm.c).
 *
 * Each message is counted once, at its sender: the send side is the truth
 * for bytes (a receive names the size of the buffer it posted, which may
 * be larger than the message, and a wildcard receive names no source).
 * The receive side is kept beside it only as a count of the receives that
 * named this sender, so a reader can see that both ends agree.
 *
 * Ranks: the file's ranks are MPI_COMM_WORLD ranks; a peer is a rank of
 * the call's communicator. Messages on MPI_COMM_WORLD (Fortran handle 0
 * in Open MPI, 0x44000000 in MPICH and its derivatives) are placed
 * directly; on another communicator through the world-rank map the PMPI
 * library recorded for it on the calling rank (docs/FORMAT.md 4.6.1:
 * `mpi:comm_map` regions). Messages on a communicator without a usable map
 * (none recorded, past the library's cap, two different maps under one
 * handle of one rank, a peer past the map) are totalled per communicator
 * handle as "unresolved".
 *
 * Memory: a sparse pair table (one entry per pair that exchanged
 * messages), a sparse table of the ranks with traffic, and one entry per
 * other communicator; never ranks x ranks, nothing per rank number (a file
 * may hold rank 4294967295 beside rank 0), nothing at all without MPI. Nothing here reads per-call data: every message of
 * a region has the same peer and size, so the index rows' call counts
 * suffice (aggregate files work too).
 *
 * Thread-safety: a comm_matrix is used by one thread; the results object
 * is only read.
 */
#ifndef SP_CLI_COMM_MATRIX_H
#define SP_CLI_COMM_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scope_profiler_results.h"

/* One ordered pair (sender, receiver) of world ranks. */
typedef struct comm_pair {
    uint32_t from, to;
    int64_t bytes;                  /* send side, saturating at INT64_MAX */
    uint64_t messages;              /* send-side calls */
    uint64_t unknown_size_messages; /* sends with bytes=-1 (not in bytes) */
    uint64_t receives;              /* receive-side calls naming `from` as source */
} comm_pair;

/* Per world rank that sent, received or posted a receive. */
typedef struct comm_rank_totals {
    uint32_t rank;
    bool used;                           /* a slot of the table holding a rank */
    int64_t sent_bytes, received_bytes;  /* both from the senders' side */
    uint64_t sent_messages, received_messages;
    uint64_t any_source_receives;        /* receives with peer=-1 (MPI_ANY_SOURCE) */
    uint64_t unattributed_sends;         /* sends whose name has no peer (coarsened names) */
} comm_rank_totals;

/* Sends on a communicator the file cannot map to world ranks. */
typedef struct comm_unresolved {
    int64_t comm;                        /* its Fortran handle, as in the names */
    int64_t bytes;
    uint64_t messages;
} comm_unresolved;

/* The world ranks of one rank's communicator (an `mpi:comm_map` region). */
typedef struct comm_world_map {
    uint32_t rank;                       /* whose handle it is */
    long long comm;                      /* the handle, as in the names */
    uint32_t *world;                     /* NULL: unusable (conflicting or "?") */
    size_t size;
} comm_world_map;

typedef struct comm_matrix {
    uint32_t ranks;                      /* the file's rank count */
    comm_world_map *maps;                /* sorted by (rank, comm) */
    size_t map_count;
    comm_pair *slots;                    /* open addressing; messages==0 && receives==0: empty */
    size_t slot_count, pair_count;
    comm_rank_totals *rank_slots;        /* open addressing by rank, !used: empty */
    size_t rank_slot_count, rank_count;
    comm_unresolved *unresolved;
    size_t unresolved_count;
    int64_t total_bytes;
    uint64_t total_messages;
    bool has_point_to_point;             /* any point-to-point MPI region at all */
} comm_matrix;

/* An MPI region name decoded (docs/FORMAT.md 4.6); keys the name lacks are
 * -1, as are values that are not integers. */
typedef enum comm_kind { COMM_KIND_OTHER = 0, COMM_KIND_P2P, COMM_KIND_COLLECTIVE, COMM_KIND_WAIT } comm_kind;
typedef struct comm_mpi_name {
    char op[32];              /* "send", "allreduce", ... */
    comm_kind kind;
    long long bytes, peer, root, tag, comm;
} comm_mpi_name;

/* Decode `name`; false when it is not an MPI region name (no "mpi:<op>"). */
bool comm_parse_mpi_name(const char *name, comm_mpi_name *out);

/* true for the receiving ops (recv, irecv, mrecv...; not sendrecv). */
bool comm_op_is_receive(const char *op);

/* true when `comm` is MPI_COMM_WORLD's Fortran handle (see above). */
bool comm_is_world(long long comm);

/* The world-rank maps of `res` (its `mpi:comm_map` regions) into m->maps;
 * comm_matrix_build calls it, the OTF2 export too. SP_OK or
 * SP_ERR_OUT_OF_MEMORY. Free with comm_matrix_free. */
int comm_maps_read(comm_matrix *m, const sp_results *res);

/* The map of communicator `comm` as `rank` named it (one entry per (rank,
 * comm) after comm_maps_read), or NULL when the file records none; an
 * entry whose `world` is NULL is unusable. */
const comm_world_map *comm_map_find(const comm_matrix *m, uint32_t rank, long long comm);

/* `peer` of communicator `comm` as `rank` named it, as a world rank: the
 * peer itself on MPI_COMM_WORLD, through the map otherwise; -1 when it
 * cannot be placed (no usable map, a peer outside it or past the file's
 * ranks, a negative peer). */
long long comm_world_peer(const comm_matrix *m, uint32_t rank, long long comm, long long peer);

/* Build the matrix of `res` over the selected ranks (`ranks`/`rank_count`;
 * NULL or 0 = every rank): a send counts when its sender is selected, a
 * receive when its receiver is. Returns SP_OK, or SP_ERR_OUT_OF_MEMORY
 * (then *m is empty and needs no free). */
int comm_matrix_build(comm_matrix *m, const sp_results *res, const uint32_t *ranks,
                      size_t rank_count);

/* The pairs, most bytes first (ties: more messages, then by from, to), in
 * a new array of m->pair_count entries the caller frees; NULL when there
 * are none or memory ran out (*count says which: 0 = none). */
comm_pair *comm_matrix_sorted_pairs(const comm_matrix *m, size_t *count);

/* The ranks with any traffic, by rank, in a new array of m->rank_count
 * entries the caller frees; NULL when none or out of memory (*count: 0). */
comm_rank_totals *comm_matrix_sorted_ranks(const comm_matrix *m, size_t *count);

/* Release what comm_matrix_build allocated; *m becomes empty. */
void comm_matrix_free(comm_matrix *m);

/* a + b and a * b for byte totals, held at INT64_MAX instead of wrapping
 * (a file may claim sizes whose sum no int64 holds). a, b >= 0. */
int64_t comm_add_bytes(int64_t a, int64_t b);
int64_t comm_mul_bytes(int64_t bytes, uint64_t count);

#endif /* SP_CLI_COMM_MATRIX_H */
