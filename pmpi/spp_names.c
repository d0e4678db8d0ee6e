/*
 * spp_names.c - the region name of a call key, in exactly the form the
 * Python package writes for its own MPI regions and reads back with its
 * parse_mpi_region (which splits on spaces, requires kind, bytes, peer,
 * root, tag and comm, the last five integers, and ignores other keys):
 *
 *   mpi:<op> kind=<k> bytes=<b> peer=<p> root=<r> tag=<t> comm=<c>
 *
 * every key always written, -1 for "none", comm the communicator's
 * Fortran handle; then ` request=<op>` for the waits (where the package
 * puts it), the extra keys of ours, and ` lang=native` last, so that a
 * native allreduce never has the name of the Python driver's allreduce of
 * the same size and a merge of both keeps them apart.
 *
 * Kinds: the package names only the ops it wraps (barrier, bcast, reduce,
 * allreduce are "collective", wait "wait", the rest "point-to-point");
 * ours follow the op table, so every collective the package does not wrap
 * (gather, alltoall, scan, comm_split...) is "collective" too, and every
 * wait and test "wait".
 */
#include "spp_names.h"

#include <stdio.h>

static const char *const op_names[SPP_OP_COUNT] = {
#define SPP_OP_NAME_(lower, Camel, UPPER, SHAPE, KIND) #lower,
    SPP_OPS(SPP_OP_NAME_)
#undef SPP_OP_NAME_
};

static const int op_kinds[SPP_OP_COUNT] = {
#define SPP_OP_KIND_(lower, Camel, UPPER, SHAPE, KIND) KIND,
    SPP_OPS(SPP_OP_KIND_)
#undef SPP_OP_KIND_
};

const char *spp_op_name(int op) { return op >= 0 && op < SPP_OP_COUNT ? op_names[op] : "?"; }

static const char *kind_text(int op) {
    switch (op_kinds[op]) {
    case SPP_KIND_P2P: return "point-to-point";
    case SPP_KIND_COLL: return "collective";
    default: return "wait";
    }
}

static const char *request_text(int32_t request) {
    switch (request) {
    case SPP_REQ_MIXED: return "mixed";
    case SPP_REQ_NULL: return "null";
    case SPP_REQ_UNKNOWN: return "unknown";
    default: return spp_op_name(request);
    }
}

size_t spp_format_name(const spp_key *key, char *buf, size_t size) {
    char request[48] = "", recv[48] = "";
    if (key->request != SPP_NO_REQUEST)
        snprintf(request, sizeof request, " request=%s", request_text(key->request));
    if (key->recv_bytes != SPP_NO_RECV)
        snprintf(recv, sizeof recv, " recv_bytes=%lld", (long long)key->recv_bytes);
    int n = snprintf(buf, size,
                     "mpi:%s kind=%s bytes=%lld peer=%d root=%d tag=%d comm=%d%s%s%s lang=native",
                     spp_op_name(key->op), kind_text(key->op), (long long)key->bytes,
                     (int)key->peer, (int)key->root, (int)key->tag, (int)key->comm, request, recv,
                     key->overflow ? " overflow=1" : "");
    if (n < 0 || size == 0) return 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}
