/*
 * spp_shapes.h - the argument lists of the wrapped MPI operations, one
 * block per SHAPE column of spp_ops.h. For each shape:
 *
 *   SPP_CP_<S>         parameters of the C binding (exactly as in mpi.h)
 *   SPP_CA_<S>         the same names, to pass them on to PMPI_<Camel>
 *   SPP_CK_<S>(op)     the region key of a C call (spp_core.h), taken
 *                      BEFORE the call (a wait's requests are gone after)
 *   SPP_CPOST_<S>(op)  after the call (the nonblocking calls note their
 *                      request)
 *   SPP_FP_/FA_/FK_/FPOST_  the same for the Fortran bindings: every
 *                      argument by reference, handles as MPI_Fint (mpif.h,
 *                      `use mpi`) or as a type(MPI_*) whose only component
 *                      is that integer (`use mpi_f08`), so one C parameter
 *                      list serves both. The f08 `ierror` is optional and
 *                      may be NULL: it is only passed on, never written.
 *
 * Which bytes a call moves (documented in docs/guide/mpi.md "MPI calls
 * without code changes" and docs/FORMAT.md): datatype size x count of the call's main
 * count argument; sendrecv its send side (the receive side in recv_bytes);
 * gather, allgather, alltoall the
 * send block (the receive block under MPI_IN_PLACE); scatter the receive
 * block (the send block under MPI_IN_PLACE); the v-variants the sum of the
 * counts array (at the root for gatherv/scatterv, this rank's own block
 * elsewhere); reduce_scatter the sum of recvcounts; comm_* 0.
 */
#ifndef SPP_SHAPES_H
#define SPP_SHAPES_H

#include "spp_comm_map.h"
#include "spp_core.h"

/* Fortran handle -> C handle (NULL for an index MPI does not know). */
#define SPP_T(f) PMPI_Type_f2c(*(f))
#define SPP_C(f) PMPI_Comm_f2c(*(f))
#define SPP_NOPOST(op) (void)0

/* ---- point to point ---------------------------------------------------- */
#define SPP_CP_SEND const void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm
#define SPP_CA_SEND buf, count, type, peer, tag, comm
#define SPP_CK_SEND(op) spp_key_p2p(op, count, type, peer, tag, comm)
#define SPP_CPOST_SEND SPP_NOPOST
#define SPP_FP_SEND void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer, MPI_Fint *tag, \
                    MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_SEND buf, count, type, peer, tag, comm, ierr
#define SPP_FK_SEND(op) spp_key_p2p(op, *count, SPP_T(type), *peer, *tag, SPP_C(comm))
#define SPP_FPOST_SEND SPP_NOPOST

#define SPP_CP_RECV void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm, \
                    MPI_Status *status
#define SPP_CA_RECV buf, count, type, peer, tag, comm, status
#define SPP_CK_RECV SPP_CK_SEND
#define SPP_CPOST_RECV SPP_NOPOST
#define SPP_FP_RECV void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer, MPI_Fint *tag, \
                    MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr
#define SPP_FA_RECV buf, count, type, peer, tag, comm, status, ierr
#define SPP_FK_RECV SPP_FK_SEND
#define SPP_FPOST_RECV SPP_NOPOST

#define SPP_CP_ISEND const void *buf, int count, MPI_Datatype type, int peer, int tag, \
                     MPI_Comm comm, MPI_Request *request
#define SPP_CA_ISEND buf, count, type, peer, tag, comm, request
#define SPP_CK_ISEND SPP_CK_SEND
#define SPP_CPOST_ISEND(op) if (rc_ == MPI_SUCCESS) spp_request_note(*request, op)
#define SPP_FP_ISEND void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer, MPI_Fint *tag, \
                     MPI_Fint *comm, MPI_Fint *request, MPI_Fint *ierr
#define SPP_FA_ISEND buf, count, type, peer, tag, comm, request, ierr
#define SPP_FK_ISEND SPP_FK_SEND
#define SPP_FPOST_ISEND(op) spp_request_note(PMPI_Request_f2c(*request), op)

#define SPP_CP_IRECV void *buf, int count, MPI_Datatype type, int peer, int tag, MPI_Comm comm, \
                     MPI_Request *request
#define SPP_CA_IRECV SPP_CA_ISEND
#define SPP_CK_IRECV SPP_CK_SEND
#define SPP_CPOST_IRECV SPP_CPOST_ISEND
#define SPP_FP_IRECV SPP_FP_ISEND
#define SPP_FA_IRECV SPP_FA_ISEND
#define SPP_FK_IRECV SPP_FK_SEND
#define SPP_FPOST_IRECV SPP_FPOST_ISEND

/* peer and tag of a sendrecv are the send side's (dest, sendtag). */
#define SPP_CP_SENDRECV const void *sbuf, int scount, MPI_Datatype stype, int peer, int tag, \
                        void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,   \
                        MPI_Comm comm, MPI_Status *status
#define SPP_CA_SENDRECV sbuf, scount, stype, peer, tag, rbuf, rcount, rtype, source, rtag, comm, \
                        status
#define SPP_CK_SENDRECV(op) spp_key_sendrecv(op, scount, stype, rcount, rtype, peer, tag, comm)
#define SPP_CPOST_SENDRECV SPP_NOPOST
#define SPP_FP_SENDRECV void *sbuf, MPI_Fint *scount, MPI_Fint *stype, MPI_Fint *peer,        \
                        MPI_Fint *tag, void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype,        \
                        MPI_Fint *source, MPI_Fint *rtag, MPI_Fint *comm, MPI_Fint *status, \
                        MPI_Fint *ierr
#define SPP_FA_SENDRECV SPP_CA_SENDRECV, ierr
#define SPP_FK_SENDRECV(op) spp_key_sendrecv(op, *scount, SPP_T(stype), *rcount, SPP_T(rtype), \
                                             *peer, *tag, SPP_C(comm))
#define SPP_FPOST_SENDRECV SPP_NOPOST

/* bytes, peer and tag describe the message a sendrecv sends; its receive
 * side's size goes in recv_bytes, so a byte total can count the sent and
 * the received messages apart, each once. */
static inline spp_key spp_key_sendrecv(int op, int64_t scount, MPI_Datatype stype, int64_t rcount,
                                       MPI_Datatype rtype, int peer, int tag, MPI_Comm comm) {
    spp_key key = spp_key_p2p(op, scount, stype, peer, tag, comm);
    key.recv_bytes = spp_bytes(rcount, rtype);
    return key;
}

/* ---- waits and tests --------------------------------------------------- */
#define SPP_CP_WAIT MPI_Request *request, MPI_Status *status
#define SPP_CA_WAIT request, status
#define SPP_CK_WAIT(op) spp_key_wait(op, spp_requests_op(request, 1))
#define SPP_CPOST_WAIT SPP_NOPOST
#define SPP_FP_WAIT MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr
#define SPP_FA_WAIT request, status, ierr
#define SPP_FK_WAIT(op) spp_key_wait(op, spp_requests_op_f(request, 1))
#define SPP_FPOST_WAIT SPP_NOPOST

#define SPP_CP_WAITALL int count, MPI_Request requests[], MPI_Status statuses[]
#define SPP_CA_WAITALL count, requests, statuses
#define SPP_CK_WAITALL(op) spp_key_wait(op, spp_requests_op(requests, count))
#define SPP_CPOST_WAITALL SPP_NOPOST
#define SPP_FP_WAITALL MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr
#define SPP_FA_WAITALL count, requests, statuses, ierr
#define SPP_FK_WAITALL(op) spp_key_wait(op, spp_requests_op_f(requests, *count))
#define SPP_FPOST_WAITALL SPP_NOPOST

#define SPP_CP_WAITANY int count, MPI_Request requests[], int *index, MPI_Status *status
#define SPP_CA_WAITANY count, requests, index, status
#define SPP_CK_WAITANY SPP_CK_WAITALL
#define SPP_CPOST_WAITANY SPP_NOPOST
#define SPP_FP_WAITANY MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status, \
                       MPI_Fint *ierr
#define SPP_FA_WAITANY count, requests, index, status, ierr
#define SPP_FK_WAITANY SPP_FK_WAITALL
#define SPP_FPOST_WAITANY SPP_NOPOST

#define SPP_CP_WAITSOME int count, MPI_Request requests[], int *outcount, int indices[], \
                        MPI_Status statuses[]
#define SPP_CA_WAITSOME count, requests, outcount, indices, statuses
#define SPP_CK_WAITSOME SPP_CK_WAITALL
#define SPP_CPOST_WAITSOME SPP_NOPOST
#define SPP_FP_WAITSOME MPI_Fint *count, MPI_Fint *requests, MPI_Fint *outcount, \
                        MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr
#define SPP_FA_WAITSOME count, requests, outcount, indices, statuses, ierr
#define SPP_FK_WAITSOME SPP_FK_WAITALL
#define SPP_FPOST_WAITSOME SPP_NOPOST

#define SPP_CP_TEST MPI_Request *request, int *flag, MPI_Status *status
#define SPP_CA_TEST request, flag, status
#define SPP_CK_TEST SPP_CK_WAIT
#define SPP_CPOST_TEST SPP_NOPOST
#define SPP_FP_TEST MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr
#define SPP_FA_TEST request, flag, status, ierr
#define SPP_FK_TEST SPP_FK_WAIT
#define SPP_FPOST_TEST SPP_NOPOST

#define SPP_CP_TESTALL int count, MPI_Request requests[], int *flag, MPI_Status statuses[]
#define SPP_CA_TESTALL count, requests, flag, statuses
#define SPP_CK_TESTALL SPP_CK_WAITALL
#define SPP_CPOST_TESTALL SPP_NOPOST
#define SPP_FP_TESTALL MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses, \
                       MPI_Fint *ierr
#define SPP_FA_TESTALL count, requests, flag, statuses, ierr
#define SPP_FK_TESTALL SPP_FK_WAITALL
#define SPP_FPOST_TESTALL SPP_NOPOST

#define SPP_CP_TESTANY int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status
#define SPP_CA_TESTANY count, requests, index, flag, status
#define SPP_CK_TESTANY SPP_CK_WAITALL
#define SPP_CPOST_TESTANY SPP_NOPOST
#define SPP_FP_TESTANY MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag, \
                       MPI_Fint *status, MPI_Fint *ierr
#define SPP_FA_TESTANY count, requests, index, flag, status, ierr
#define SPP_FK_TESTANY SPP_FK_WAITALL
#define SPP_FPOST_TESTANY SPP_NOPOST

/* ---- collectives ------------------------------------------------------- */
#define SPP_CP_BARRIER MPI_Comm comm
#define SPP_CA_BARRIER comm
#define SPP_CK_BARRIER(op) spp_key_coll(op, 0, SPP_NONE, comm)
#define SPP_CPOST_BARRIER SPP_NOPOST
#define SPP_FP_BARRIER MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_BARRIER comm, ierr
#define SPP_FK_BARRIER(op) spp_key_coll(op, 0, SPP_NONE, SPP_C(comm))
#define SPP_FPOST_BARRIER SPP_NOPOST

#define SPP_CP_BCAST void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm
#define SPP_CA_BCAST buf, count, type, root, comm
#define SPP_CK_BCAST(op) spp_key_coll(op, spp_bytes(count, type), root, comm)
#define SPP_CPOST_BCAST SPP_NOPOST
#define SPP_FP_BCAST void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm, \
                     MPI_Fint *ierr
#define SPP_FA_BCAST buf, count, type, root, comm, ierr
#define SPP_FK_BCAST(op) spp_key_coll(op, spp_bytes(*count, SPP_T(type)), *root, SPP_C(comm))
#define SPP_FPOST_BCAST SPP_NOPOST

#define SPP_CP_REDUCE const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op rop, \
                      int root, MPI_Comm comm
#define SPP_CA_REDUCE sbuf, rbuf, count, type, rop, root, comm
#define SPP_CK_REDUCE(op) spp_key_coll(op, spp_bytes(count, type), root, comm)
#define SPP_CPOST_REDUCE SPP_NOPOST
#define SPP_FP_REDUCE void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *rop, \
                      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_REDUCE sbuf, rbuf, count, type, rop, root, comm, ierr
#define SPP_FK_REDUCE(op) spp_key_coll(op, spp_bytes(*count, SPP_T(type)), *root, SPP_C(comm))
#define SPP_FPOST_REDUCE SPP_NOPOST

#define SPP_CP_ALLREDUCE const void *sbuf, void *rbuf, int count, MPI_Datatype type, \
                         MPI_Op rop, MPI_Comm comm
#define SPP_CA_ALLREDUCE sbuf, rbuf, count, type, rop, comm
#define SPP_CK_ALLREDUCE(op) spp_key_coll(op, spp_bytes(count, type), SPP_NONE, comm)
#define SPP_CPOST_ALLREDUCE SPP_NOPOST
#define SPP_FP_ALLREDUCE void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *rop, \
                         MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_ALLREDUCE sbuf, rbuf, count, type, rop, comm, ierr
#define SPP_FK_ALLREDUCE(op) spp_key_coll(op, spp_bytes(*count, SPP_T(type)), SPP_NONE, SPP_C(comm))
#define SPP_FPOST_ALLREDUCE SPP_NOPOST

#define SPP_CP_GATHER const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, \
                      MPI_Datatype rtype, int root, MPI_Comm comm
#define SPP_CA_GATHER sbuf, scount, stype, rbuf, rcount, rtype, root, comm
#define SPP_CK_GATHER(op) \
    spp_key_coll(op, sbuf == MPI_IN_PLACE ? spp_bytes(rcount, rtype) : spp_bytes(scount, stype), \
                 root, comm)
#define SPP_CPOST_GATHER SPP_NOPOST
#define SPP_FP_GATHER void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount, \
                      MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_GATHER sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr
#define SPP_FK_GATHER(op) spp_key_coll(op, spp_bytes(*scount, SPP_T(stype)), *root, SPP_C(comm))
#define SPP_FPOST_GATHER SPP_NOPOST

#define SPP_CP_SCATTER SPP_CP_GATHER
#define SPP_CA_SCATTER SPP_CA_GATHER
#define SPP_CK_SCATTER(op) \
    spp_key_coll(op, rbuf == MPI_IN_PLACE ? spp_bytes(scount, stype) : spp_bytes(rcount, rtype), \
                 root, comm)
#define SPP_CPOST_SCATTER SPP_NOPOST
#define SPP_FP_SCATTER SPP_FP_GATHER
#define SPP_FA_SCATTER SPP_FA_GATHER
#define SPP_FK_SCATTER(op) spp_key_coll(op, spp_bytes(*rcount, SPP_T(rtype)), *root, SPP_C(comm))
#define SPP_FPOST_SCATTER SPP_NOPOST

#define SPP_CP_GATHERV const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, \
                       const int rcounts[], const int displs[], MPI_Datatype rtype, int root, \
                       MPI_Comm comm
#define SPP_CA_GATHERV sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm
#define SPP_CK_GATHERV(op) \
    spp_key_coll(op, spp_bytes_rooted(comm, root, rcounts, rtype, spp_bytes(scount, stype)), \
                 root, comm)
#define SPP_CPOST_GATHERV SPP_NOPOST
#define SPP_FP_GATHERV void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, \
                       MPI_Fint *rcounts, MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *root, \
                       MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_GATHERV sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, ierr
#define SPP_FK_GATHERV(op)                                                                   \
    spp_key_coll(op, spp_bytes_rooted(SPP_C(comm), *root, rcounts, SPP_T(rtype),            \
                                      spp_bytes(*scount, SPP_T(stype))),                     \
                 *root, SPP_C(comm))
#define SPP_FPOST_GATHERV SPP_NOPOST

#define SPP_CP_SCATTERV const void *sbuf, const int scounts[], const int displs[], \
                        MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, \
                        MPI_Comm comm
#define SPP_CA_SCATTERV sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm
#define SPP_CK_SCATTERV(op) \
    spp_key_coll(op, spp_bytes_rooted(comm, root, scounts, stype, spp_bytes(rcount, rtype)), \
                 root, comm)
#define SPP_CPOST_SCATTERV SPP_NOPOST
#define SPP_FP_SCATTERV void *sbuf, MPI_Fint *scounts, MPI_Fint *displs, MPI_Fint *stype, \
                        void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *root, \
                        MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_SCATTERV sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, ierr
#define SPP_FK_SCATTERV(op)                                                                  \
    spp_key_coll(op, spp_bytes_rooted(SPP_C(comm), *root, scounts, SPP_T(stype),            \
                                      spp_bytes(*rcount, SPP_T(rtype))),                     \
                 *root, SPP_C(comm))
#define SPP_FPOST_SCATTERV SPP_NOPOST

#define SPP_CP_ALLGATHER const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, \
                         int rcount, MPI_Datatype rtype, MPI_Comm comm
#define SPP_CA_ALLGATHER sbuf, scount, stype, rbuf, rcount, rtype, comm
#define SPP_CK_ALLGATHER(op) \
    spp_key_coll(op, sbuf == MPI_IN_PLACE ? spp_bytes(rcount, rtype) : spp_bytes(scount, stype), \
                 SPP_NONE, comm)
#define SPP_CPOST_ALLGATHER SPP_NOPOST
#define SPP_FP_ALLGATHER void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, \
                         MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_ALLGATHER sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr
#define SPP_FK_ALLGATHER(op) \
    spp_key_coll(op, spp_bytes(*scount, SPP_T(stype)), SPP_NONE, SPP_C(comm))
#define SPP_FPOST_ALLGATHER SPP_NOPOST

#define SPP_CP_ALLGATHERV const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, \
                          const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm
#define SPP_CA_ALLGATHERV sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm
#define SPP_CK_ALLGATHERV(op) \
    spp_key_coll(op, spp_bytes_sum(rcounts, spp_comm_size(comm), rtype), SPP_NONE, comm)
#define SPP_CPOST_ALLGATHERV SPP_NOPOST
#define SPP_FP_ALLGATHERV void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, \
                          MPI_Fint *rcounts, MPI_Fint *displs, MPI_Fint *rtype, MPI_Fint *comm, \
                          MPI_Fint *ierr
#define SPP_FA_ALLGATHERV sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, ierr
#define SPP_FK_ALLGATHERV(op) \
    spp_key_coll(op, spp_bytes_sum(rcounts, spp_comm_size(SPP_C(comm)), SPP_T(rtype)), \
                 SPP_NONE, SPP_C(comm))
#define SPP_FPOST_ALLGATHERV SPP_NOPOST

#define SPP_CP_ALLTOALLV const void *sbuf, const int scounts[], const int sdispls[], \
                         MPI_Datatype stype, void *rbuf, const int rcounts[], \
                         const int rdispls[], MPI_Datatype rtype, MPI_Comm comm
#define SPP_CA_ALLTOALLV sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm
#define SPP_CK_ALLTOALLV(op) \
    spp_key_coll(op, spp_bytes_sum(scounts, spp_comm_size(comm), stype), SPP_NONE, comm)
#define SPP_CPOST_ALLTOALLV SPP_NOPOST
#define SPP_FP_ALLTOALLV void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stype, \
                         void *rbuf, MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtype, \
                         MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_ALLTOALLV sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, ierr
#define SPP_FK_ALLTOALLV(op) \
    spp_key_coll(op, spp_bytes_sum(scounts, spp_comm_size(SPP_C(comm)), SPP_T(stype)), \
                 SPP_NONE, SPP_C(comm))
#define SPP_FPOST_ALLTOALLV SPP_NOPOST

#define SPP_CP_REDUCE_SCATTER const void *sbuf, void *rbuf, const int rcounts[], \
                              MPI_Datatype type, MPI_Op rop, MPI_Comm comm
#define SPP_CA_REDUCE_SCATTER sbuf, rbuf, rcounts, type, rop, comm
#define SPP_CK_REDUCE_SCATTER(op) \
    spp_key_coll(op, spp_bytes_sum(rcounts, spp_comm_size(comm), type), SPP_NONE, comm)
#define SPP_CPOST_REDUCE_SCATTER SPP_NOPOST
#define SPP_FP_REDUCE_SCATTER void *sbuf, void *rbuf, MPI_Fint *rcounts, MPI_Fint *type, \
                              MPI_Fint *rop, MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_REDUCE_SCATTER sbuf, rbuf, rcounts, type, rop, comm, ierr
#define SPP_FK_REDUCE_SCATTER(op) \
    spp_key_coll(op, spp_bytes_sum(rcounts, spp_comm_size(SPP_C(comm)), SPP_T(type)), \
                 SPP_NONE, SPP_C(comm))
#define SPP_FPOST_REDUCE_SCATTER SPP_NOPOST

/* ---- communicators ----------------------------------------------------- */
/* A new communicator's world ranks are recorded (spp_comm_map.h). */
#define SPP_CPOST_NEWCOMM(op) \
    if (rc_ == MPI_SUCCESS) spp_comm_map_created(*newcomm)
#define SPP_FPOST_NEWCOMM(op) \
    if (!ierr || *ierr == MPI_SUCCESS) spp_comm_map_created(PMPI_Comm_f2c(*newcomm))
#define SPP_CP_COMM_SPLIT MPI_Comm comm, int color, int key, MPI_Comm *newcomm
#define SPP_CA_COMM_SPLIT comm, color, key, newcomm
#define SPP_CK_COMM_SPLIT(op) spp_key_coll(op, 0, SPP_NONE, comm)
#define SPP_CPOST_COMM_SPLIT SPP_CPOST_NEWCOMM
#define SPP_FP_COMM_SPLIT MPI_Fint *comm, MPI_Fint *color, MPI_Fint *key, MPI_Fint *newcomm, \
                          MPI_Fint *ierr
#define SPP_FA_COMM_SPLIT comm, color, key, newcomm, ierr
#define SPP_FK_COMM_SPLIT(op) spp_key_coll(op, 0, SPP_NONE, SPP_C(comm))
#define SPP_FPOST_COMM_SPLIT SPP_FPOST_NEWCOMM

#define SPP_CP_COMM_DUP MPI_Comm comm, MPI_Comm *newcomm
#define SPP_CA_COMM_DUP comm, newcomm
#define SPP_CK_COMM_DUP SPP_CK_COMM_SPLIT
#define SPP_CPOST_COMM_DUP SPP_CPOST_NEWCOMM
#define SPP_FP_COMM_DUP MPI_Fint *comm, MPI_Fint *newcomm, MPI_Fint *ierr
#define SPP_FA_COMM_DUP comm, newcomm, ierr
#define SPP_FK_COMM_DUP SPP_FK_COMM_SPLIT
#define SPP_FPOST_COMM_DUP SPP_FPOST_NEWCOMM

#define SPP_CP_COMM_CREATE MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm
#define SPP_CA_COMM_CREATE comm, group, newcomm
#define SPP_CK_COMM_CREATE SPP_CK_COMM_SPLIT
#define SPP_CPOST_COMM_CREATE SPP_CPOST_NEWCOMM
#define SPP_FP_COMM_CREATE MPI_Fint *comm, MPI_Fint *group, MPI_Fint *newcomm, MPI_Fint *ierr
#define SPP_FA_COMM_CREATE comm, group, newcomm, ierr
#define SPP_FK_COMM_CREATE SPP_FK_COMM_SPLIT
#define SPP_FPOST_COMM_CREATE SPP_FPOST_NEWCOMM

/* The key is taken before the call: the handle is still valid then. */
#define SPP_CP_COMM_FREE MPI_Comm *comm
#define SPP_CA_COMM_FREE comm
#define SPP_CK_COMM_FREE(op) spp_key_coll(op, 0, SPP_NONE, *comm)
#define SPP_CPOST_COMM_FREE(op) \
    if (rc_ == MPI_SUCCESS) spp_comm_map_freed(key_.comm)
#define SPP_FP_COMM_FREE MPI_Fint *comm, MPI_Fint *ierr
#define SPP_FA_COMM_FREE comm, ierr
#define SPP_FK_COMM_FREE(op) spp_key_coll(op, 0, SPP_NONE, SPP_C(comm))
#define SPP_FPOST_COMM_FREE(op) \
    if (!ierr || *ierr == MPI_SUCCESS) spp_comm_map_freed(key_.comm)

#endif /* SPP_SHAPES_H */
