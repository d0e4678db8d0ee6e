/*
 * spp_core.h - what the generated wrappers of libscopeprofiler_pmpi share:
 * the run-time switch and filter, the region key of one call, its region
 * handle (cached), communicators' Fortran handles and the request -> operation
 * table.
 *
 * Internal to the pmpi library (never installed). The library uses the
 * public API of libscopeprofiler only (scope_profiler.h).
 */
#ifndef SPP_CORE_H
#define SPP_CORE_H

#include <mpi.h>
#include <stdint.h>

#include "spp_ops.h"

/* Values of the key fields that are not numbers of the call. Names write
 * every numeric key, -1 for "none" (the Python package's form), so "none"
 * is -1 in the key too: a key and its name stay one-to-one. */
#define SPP_NONE (-1)
#define SPP_NO_REQUEST INT32_MIN  /* not a wait: the name has no request= */
#define SPP_NO_RECV INT64_MIN     /* not a sendrecv: the name has no recv_bytes= */
#define SPP_REQ_MIXED (-2)        /* waitall over requests of several ops */
#define SPP_REQ_UNKNOWN (-3)      /* a request we did not see created */
#define SPP_REQ_NULL (-4)         /* only MPI_REQUEST_NULL */

/* Everything a region name is made of; equal keys give the same region. */
typedef struct spp_key {
    int32_t op;
    int32_t peer;                 /* SPP_NONE for collectives and waits */
    int32_t root;                 /* SPP_NONE unless the op has a root */
    int32_t tag;                  /* SPP_NONE for collectives and waits */
    int32_t comm;                 /* MPI_Comm_c2f of the communicator, or SPP_NONE */
    int32_t request;              /* a wait's request op(s), else SPP_NO_REQUEST */
    int32_t overflow;             /* 1: the name bound was reached */
    int64_t bytes;                /* -1 when the size cannot be known */
    int64_t recv_bytes;           /* sendrecv's receive side, else SPP_NO_RECV */
} spp_key;

/* 1 when calls of `op` are to be recorded now: SCOPE_PROFILER_MPI is on,
 * the filter admits op, and a profiling session is active. */
int spp_recording(int op);

/* The region handle of `key` (registered on first use, then cached), or
 * -1 when none could be had (out of memory): the call is then not
 * recorded. Lock-free after the first call with this key. */
int spp_region_of(const spp_key *key);

/* Payload of count elements of type; -1 when the type is invalid (NULL
 * handles are never passed to MPI here, so no error handler runs) or the
 * count negative. */
int64_t spp_bytes(int64_t count, MPI_Datatype type);
/* Sum of the n counts times the type's size; -1 if counts is NULL. */
int64_t spp_bytes_sum(const int *counts, int n, MPI_Datatype type);
/* The size and the calling rank of comm; -1 for an invalid comm. */
int spp_comm_size(MPI_Comm comm);
int spp_comm_rank(MPI_Comm comm);
/* comm's Fortran handle (MPI_Comm_c2f: what the Python package writes,
 * from mpi4py's py2f), or SPP_NONE for MPI_COMM_NULL and invalid handles. */
int32_t spp_comm_f(MPI_Comm comm);

/* The request table: which operation created a request (nonblocking
 * calls), looked up by the waits. Best effort: a lost entry names the
 * wait's request "unknown", never a wrong count of calls. */
void spp_request_note(MPI_Request request, int op);
int32_t spp_request_op(MPI_Request request);
/* The combined op of n requests (SPP_REQ_MIXED when they differ). */
int32_t spp_requests_op(const MPI_Request *requests, int n);
int32_t spp_requests_op_f(const MPI_Fint *requests, int n);

/* MPI_Init* (C or Fortran) succeeded: read the environment once and start
 * a profiling session when none is active and SCOPE_PROFILER_MPI is on. */
void spp_after_init(void);
/* MPI_Finalize is about to run: finish the session spp_after_init started. */
void spp_before_finalize(void);

/* The key of a point-to-point call. */
static inline spp_key spp_key_p2p(int op, int64_t count, MPI_Datatype type, int peer, int tag,
                                  MPI_Comm comm) {
    return (spp_key){.op = op, .peer = peer, .root = SPP_NONE, .tag = tag,
                     .comm = spp_comm_f(comm), .request = SPP_NO_REQUEST,
                     .bytes = spp_bytes(count, type), .recv_bytes = SPP_NO_RECV};
}

/* The key of a collective call moving `bytes` at this rank. */
static inline spp_key spp_key_coll(int op, int64_t bytes, int root, MPI_Comm comm) {
    return (spp_key){.op = op, .peer = SPP_NONE, .root = root, .tag = SPP_NONE,
                     .comm = spp_comm_f(comm), .request = SPP_NO_REQUEST, .bytes = bytes,
                     .recv_bytes = SPP_NO_RECV};
}

/* The key of a wait or test over requests created by `request_op`. Its
 * bytes, peer, tag and comm are -1: a waitall covers requests of several
 * messages, and the bytes belong to the call that created the request (a
 * byte total counts each message there, once). */
static inline spp_key spp_key_wait(int op, int32_t request_op) {
    return (spp_key){.op = op, .peer = SPP_NONE, .root = SPP_NONE, .tag = SPP_NONE,
                     .comm = SPP_NONE, .request = request_op, .bytes = SPP_NONE,
                     .recv_bytes = SPP_NO_RECV};
}

/* count * size at the root, `other` elsewhere (the v-collectives' counts
 * arrays are significant at the root only). */
static inline int64_t spp_bytes_rooted(MPI_Comm comm, int root, const int *counts,
                                       MPI_Datatype counts_type, int64_t other) {
    if (spp_comm_rank(comm) != root) return other;
    return spp_bytes_sum(counts, spp_comm_size(comm), counts_type);
}

#endif /* SPP_CORE_H */
