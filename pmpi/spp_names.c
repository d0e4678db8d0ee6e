/*
 * spp_names.c - the region name of a call key, in the canonical form of the
 * Python package's MPI regions (`mpi:<op> kind=... bytes=... peer=...
 * root=... tag=... comm=...`, parsed by its parse_mpi_region: the tokens
 * after the first are key=value pairs), plus ` lang=native`, so that a
 * native allreduce never has the name of the Python driver's allreduce of
 * the same size and a merge of both keeps them apart.
 *
 * Keys per kind: point-to-point calls carry bytes, peer, tag and comm;
 * collectives bytes, root (rooted ones only) and comm; waits and tests only
 * the operation that created their request(s). Peer and tag are kept (the
 * Python form has them; a halo exchange is then one region per neighbour),
 * and the number of distinct names is bounded instead (spp_core.c).
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

static const char *comm_text(int32_t comm, char *buf, size_t size) {
    switch (comm) {
    case SPP_COMM_WORLD: return "world";
    case SPP_COMM_SELF: return "self";
    case SPP_COMM_NULL: return "null";
    case SPP_COMM_OTHER: return "other";
    default: snprintf(buf, size, "%d", (int)comm); return buf;
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
    char comm[16];
    const char *tail = key->overflow ? " overflow=1 lang=native" : " lang=native";
    int n;
    switch (op_kinds[key->op]) {
    case SPP_KIND_P2P:
        n = snprintf(buf, size, "mpi:%s kind=point-to-point bytes=%lld peer=%d tag=%d comm=%s%s",
                     spp_op_name(key->op), (long long)key->bytes, (int)key->peer, (int)key->tag,
                     comm_text(key->comm, comm, sizeof comm), tail);
        break;
    case SPP_KIND_COLL:
        if (key->root != SPP_NONE)
            n = snprintf(buf, size, "mpi:%s kind=collective bytes=%lld root=%d comm=%s%s",
                         spp_op_name(key->op), (long long)key->bytes, (int)key->root,
                         comm_text(key->comm, comm, sizeof comm), tail);
        else
            n = snprintf(buf, size, "mpi:%s kind=collective bytes=%lld comm=%s%s",
                         spp_op_name(key->op), (long long)key->bytes,
                         comm_text(key->comm, comm, sizeof comm), tail);
        break;
    default:
        n = snprintf(buf, size, "mpi:%s kind=wait request=%s%s", spp_op_name(key->op),
                     request_text(key->request), tail);
        break;
    }
    if (n < 0) return 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}
