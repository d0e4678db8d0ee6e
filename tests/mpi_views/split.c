/*
 * split.c - point-to-point messages inside communicators split from
 * MPI_COMM_WORLD, recorded by the PMPI wrappers only: the communication
 * matrix must place them at the right world ranks (check_split.py).
 *
 * 4 ranks: color = world rank % 2 gives {0, 2} and {1, 3}; key = -world
 * rank reverses the order, so communicator rank 0 is world 2 (resp. 3)
 * and communicator rank 1 is world 0 (resp. 1). In each, both members
 * send ROUNDS messages of (world rank + 1) * 10 bytes to the other
 * (tag 7), and receive them naming the other's communicator rank. A
 * second split with the same membership under a fresh handle (after the
 * first is freed) repeats one round, so a reused handle keeps working.
 * Each exchange ends with an allreduce rooted nowhere and a reduce to
 * communicator rank 0 on the split communicator (the OTF2 export defines a
 * communicator per member list for them: check_otf2.py split).
 * `split many` first creates, uses and frees MANY communicators: past the
 * wrappers' cap the later ones get no map (their calls stay recorded).
 */
#include <mpi.h>
#include <stdlib.h>

enum { ROUNDS = 3 };

static void exchange(MPI_Comm comm, int world_rank, int rounds) {
    int me, other_world = 0;
    MPI_Comm_rank(comm, &me);
    int other = 1 - me;
    /* the other member's world rank, to know its message size */
    MPI_Sendrecv(&world_rank, 1, MPI_INT, other, 1, &other_world, 1, MPI_INT, other, 1, comm,
                 MPI_STATUS_IGNORE);
    int out_bytes = (world_rank + 1) * 10, in_bytes = (other_world + 1) * 10;
    char *out = calloc((size_t)out_bytes, 1), *in = calloc((size_t)in_bytes, 1);
    if (!out || !in) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int round = 0; round < rounds; round++) {
        MPI_Request req;
        MPI_Irecv(in, in_bytes, MPI_BYTE, other, 7, comm, &req);
        MPI_Send(out, out_bytes, MPI_BYTE, other, 7, comm);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    int sum = 0;
    MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    MPI_Reduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, 0, comm);
    free(out);
    free(in);
}

/* `split many`: MANY communicators created, used once and freed (past
 * the wrappers' cap of world-rank maps), then the split exchange. */
enum { MANY = 3000 };

static void many(void) {
    for (int i = 0; i < MANY; i++) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Barrier(dup);
        MPI_Comm_free(&dup);
    }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && argv[1][0] == 'm') many();
    if (size != 4) {
        MPI_Finalize();
        return 2;
    }
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    exchange(half, rank, ROUNDS - 1);
    MPI_Comm_free(&half);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    exchange(half, rank, 1);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return 0;
}
