/*
 * halo.c - a periodic 1-D halo exchange with known message sizes, recorded
 * by the PMPI wrappers only (no profiler call): the communication matrix
 * must give back exactly what this program sent (check_comm.py knows the
 * same pattern). Any number of ranks; the test runs 4.
 *
 *   ITERATIONS times: rank r sends (r+1)*1000 bytes to its right
 *   neighbour and (r+1)*100 bytes to its left one (isend/irecv/waitall);
 *   SENDRECV_ROUNDS times: a sendrecv of 64 bytes to rank r+2 (from r-2);
 *   one send to MPI_PROC_NULL (moves nothing); one allreduce (collective:
 *   not in the matrix); on a duplicate of MPI_COMM_WORLD, rank 0 sends
 *   DUP_BYTES bytes to rank 1 twice (placed through the communicator's
 *   world-rank map); rank 1 receives one of them from MPI_ANY_SOURCE.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ITERATIONS = 5, SENDRECV_ROUNDS = 3, SENDRECV_BYTES = 64, DUP_BYTES = 7 };

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int to_right = (rank + 1) * 1000, to_left = (rank + 1) * 100;
    /* what arrives: from the left neighbour its to_right, from the right its to_left */
    int from_left = (left + 1) * 1000, from_right = (right + 1) * 100;
    char *out_r = calloc((size_t)to_right, 1), *out_l = calloc((size_t)to_left, 1);
    char *in_l = calloc((size_t)from_left, 1), *in_r = calloc((size_t)from_right, 1);
    if (!out_r || !out_l || !in_l || !in_r) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int it = 0; it < ITERATIONS; it++) {
        MPI_Request req[4];
        MPI_Irecv(in_l, from_left, MPI_BYTE, left, 1, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(in_r, from_right, MPI_BYTE, right, 2, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(out_r, to_right, MPI_BYTE, right, 1, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(out_l, to_left, MPI_BYTE, left, 2, MPI_COMM_WORLD, &req[3]);
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    }
    char sr_out[SENDRECV_BYTES], sr_in[SENDRECV_BYTES];
    memset(sr_out, rank, sizeof sr_out);
    for (int round = 0; round < SENDRECV_ROUNDS; round++)
        MPI_Sendrecv(sr_out, SENDRECV_BYTES, MPI_BYTE, (rank + 2) % size, 3, sr_in,
                     SENDRECV_BYTES, MPI_BYTE, (rank + size - 2) % size, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    MPI_Send(sr_out, 8, MPI_BYTE, MPI_PROC_NULL, 4, MPI_COMM_WORLD);
    double x = rank, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    char small[DUP_BYTES] = {0};
    if (size > 1 && rank == 0) {
        MPI_Send(small, DUP_BYTES, MPI_BYTE, 1, 5, dup);
        MPI_Send(small, DUP_BYTES, MPI_BYTE, 1, 5, dup);
    } else if (size > 1 && rank == 1) {
        MPI_Recv(small, DUP_BYTES, MPI_BYTE, 0, 5, dup, MPI_STATUS_IGNORE);
        MPI_Recv(small, DUP_BYTES, MPI_BYTE, MPI_ANY_SOURCE, 5, dup, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&dup);
    free(out_r);
    free(out_l);
    free(in_l);
    free(in_r);
    MPI_Finalize();
    return sum == size * (size - 1) / 2.0 ? 0 : 1;
}
