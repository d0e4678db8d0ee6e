/*
 * spp_ops.h - THE table of the MPI operations libscopeprofiler_pmpi wraps.
 *
 * Every wrapper of the library (the C binding MPI_<Name>, the mpif.h /
 * `use mpi` entry points mpi_<name>_, mpi_<name>__, mpi_<name>, MPI_<NAME>,
 * and the `use mpi_f08` entry point mpi_<name>_f08_) is generated from one
 * row of SPP_OPS: adding an operation of an existing shape is one line here.
 *
 * Columns: X(lower, Camel, UPPER, SHAPE, KIND)
 *   lower  the operation name used in region names ("mpi:<lower> ...") and
 *          in the Fortran symbols;
 *   Camel  the C binding's suffix (MPI_<Camel>, PMPI_<Camel>);
 *   UPPER  the all-caps Fortran symbol's suffix (MPI_<UPPER>);
 *   SHAPE  the argument list (spp_shapes.h: parameters of each binding and
 *          how the region key is taken from the arguments);
 *   KIND   SPP_KIND_P2P, SPP_KIND_COLL, SPP_KIND_WAIT: the `kind=` token.
 *
 * Which keys each kind's names carry is decided in spp_names.c.
 */
#ifndef SPP_OPS_H
#define SPP_OPS_H

#define SPP_OPS(X)                                                             \
    X(send, Send, SEND, SEND, SPP_KIND_P2P)                                    \
    X(ssend, Ssend, SSEND, SEND, SPP_KIND_P2P)                                 \
    X(bsend, Bsend, BSEND, SEND, SPP_KIND_P2P)                                 \
    X(rsend, Rsend, RSEND, SEND, SPP_KIND_P2P)                                 \
    X(recv, Recv, RECV, RECV, SPP_KIND_P2P)                                    \
    X(isend, Isend, ISEND, ISEND, SPP_KIND_P2P)                                \
    X(issend, Issend, ISSEND, ISEND, SPP_KIND_P2P)                             \
    X(ibsend, Ibsend, IBSEND, ISEND, SPP_KIND_P2P)                             \
    X(irsend, Irsend, IRSEND, ISEND, SPP_KIND_P2P)                             \
    X(irecv, Irecv, IRECV, IRECV, SPP_KIND_P2P)                                \
    X(sendrecv, Sendrecv, SENDRECV, SENDRECV, SPP_KIND_P2P)                    \
    X(wait, Wait, WAIT, WAIT, SPP_KIND_WAIT)                                   \
    X(waitall, Waitall, WAITALL, WAITALL, SPP_KIND_WAIT)                       \
    X(waitany, Waitany, WAITANY, WAITANY, SPP_KIND_WAIT)                       \
    X(waitsome, Waitsome, WAITSOME, WAITSOME, SPP_KIND_WAIT)                   \
    X(test, Test, TEST, TEST, SPP_KIND_WAIT)                                   \
    X(testall, Testall, TESTALL, TESTALL, SPP_KIND_WAIT)                       \
    X(testany, Testany, TESTANY, TESTANY, SPP_KIND_WAIT)                       \
    X(barrier, Barrier, BARRIER, BARRIER, SPP_KIND_COLL)                       \
    X(bcast, Bcast, BCAST, BCAST, SPP_KIND_COLL)                               \
    X(reduce, Reduce, REDUCE, REDUCE, SPP_KIND_COLL)                           \
    X(allreduce, Allreduce, ALLREDUCE, ALLREDUCE, SPP_KIND_COLL)               \
    X(scan, Scan, SCAN, ALLREDUCE, SPP_KIND_COLL)                              \
    X(exscan, Exscan, EXSCAN, ALLREDUCE, SPP_KIND_COLL)                        \
    X(gather, Gather, GATHER, GATHER, SPP_KIND_COLL)                           \
    X(gatherv, Gatherv, GATHERV, GATHERV, SPP_KIND_COLL)                       \
    X(scatter, Scatter, SCATTER, SCATTER, SPP_KIND_COLL)                       \
    X(scatterv, Scatterv, SCATTERV, SCATTERV, SPP_KIND_COLL)                   \
    X(allgather, Allgather, ALLGATHER, ALLGATHER, SPP_KIND_COLL)               \
    X(allgatherv, Allgatherv, ALLGATHERV, ALLGATHERV, SPP_KIND_COLL)           \
    X(alltoall, Alltoall, ALLTOALL, ALLGATHER, SPP_KIND_COLL)                  \
    X(alltoallv, Alltoallv, ALLTOALLV, ALLTOALLV, SPP_KIND_COLL)               \
    X(reduce_scatter, Reduce_scatter, REDUCE_SCATTER, REDUCE_SCATTER, SPP_KIND_COLL) \
    X(comm_split, Comm_split, COMM_SPLIT, COMM_SPLIT, SPP_KIND_COLL)           \
    X(comm_dup, Comm_dup, COMM_DUP, COMM_DUP, SPP_KIND_COLL)                   \
    X(comm_create, Comm_create, COMM_CREATE, COMM_CREATE, SPP_KIND_COLL)       \
    X(comm_free, Comm_free, COMM_FREE, COMM_FREE, SPP_KIND_COLL)

/* The operation ids (SPP_OP_send, ...), dense from 0, in table order. */
typedef enum spp_op {
#define SPP_OP_ENUM_(lower, Camel, UPPER, SHAPE, KIND) SPP_OP_##lower,
    SPP_OPS(SPP_OP_ENUM_)
#undef SPP_OP_ENUM_
    SPP_OP_COUNT
} spp_op;

typedef enum spp_kind { SPP_KIND_P2P = 0, SPP_KIND_COLL = 1, SPP_KIND_WAIT = 2 } spp_kind;

#endif /* SPP_OPS_H */
