/*
 * export_otf2_mpi.c - MPI records in the OTF2 export, from the MPI region
 * names (docs/FORMAT.md 4.6), so otf2-print, Vampir and Scalasca see the
 * messages and collectives and not only time in regions.
 *
 * What is written, per call of an MPI region on MPI_COMM_WORLD (comm 0 of
 * the archive, the only communicator whose ranks the file records):
 *   - a send (send, ssend, bsend, rsend and their nonblocking forms): an
 *     MPI_SEND record (receiver = peer, tag, bytes) right after its Enter;
 *   - a receive naming its source (recv, irecv, ...): an MPI_RECV record
 *     (sender = peer, tag, bytes posted) right before its Leave;
 *   - a collective: MPI_COLLECTIVE_BEGIN after the Enter and
 *     MPI_COLLECTIVE_END (operation, root, the name's bytes as sent and
 *     received) before the Leave.
 * Nonblocking operations get the blocking records at the call that posted
 * them: the file does not link a wait to its request, so no
 * IsendComplete/IrecvRequest pairs can be formed. A trace reader matches a
 * send to a receive by communicator, sender, receiver and tag, in order;
 * every message of a program whose receives name their source is matched.
 *
 * What gets no record (its Enter/Leave stay; the export prints a note
 * with the counts on standard error):
 *   - receives from MPI_ANY_SOURCE: the name has peer=-1 and the file does
 *     not keep the status's actual source, so its sender is unknown;
 *   - sendrecv: its name carries the send side only (the source of its
 *     receive is not stored), and a send whose receive is missing would
 *     read as a lost message;
 *   - collectives on any other communicator, and point-to-point calls on
 *     one without a usable world-rank map (docs/FORMAT.md 4.6.1).
 * Point-to-point calls on another communicator with a map are written on
 * MPI_COMM_WORLD (the archive's only communicator) with the peer placed at
 * its world rank through the calling rank's map, so their send and
 * receive match there by world sender, receiver and tag.
 * Records are written only when the file's ranks are 0..N-1, each with a
 * lane: the communicator's location group lists one location per rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_matrix.h"
#include "export_otf2_mpi.h"

static const struct {
    const char *op;
    OTF2_CollectiveOp code;
} collective_ops[] = {
    {"barrier", OTF2_COLLECTIVE_OP_BARRIER},
    {"bcast", OTF2_COLLECTIVE_OP_BCAST},
    {"gather", OTF2_COLLECTIVE_OP_GATHER},
    {"gatherv", OTF2_COLLECTIVE_OP_GATHERV},
    {"scatter", OTF2_COLLECTIVE_OP_SCATTER},
    {"scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
    {"allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
    {"allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
    {"alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
    {"alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
    {"allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
    {"reduce", OTF2_COLLECTIVE_OP_REDUCE},
    {"reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
    {"scan", OTF2_COLLECTIVE_OP_SCAN},
    {"exscan", OTF2_COLLECTIVE_OP_EXSCAN},
    {"comm_split", OTF2_COLLECTIVE_OP_CREATE_HANDLE},
    {"comm_dup", OTF2_COLLECTIVE_OP_CREATE_HANDLE},
    {"comm_create", OTF2_COLLECTIVE_OP_CREATE_HANDLE},
    {"comm_free", OTF2_COLLECTIVE_OP_DESTROY_HANDLE},
};

static bool collective_code(const char *op, uint8_t *code) {
    for (size_t i = 0; i < sizeof collective_ops / sizeof *collective_ops; i++)
        if (!strcmp(op, collective_ops[i].op)) {
            *code = (uint8_t)collective_ops[i].code;
            return true;
        }
    return false;
}

static uint64_t counted_bytes(long long bytes) { return bytes > 0 ? (uint64_t)bytes : 0; }

/* The role of one region's calls, given the ranks present. */
static otf2_mpi_region decode(const char *name, uint32_t ranks) {
    otf2_mpi_region r = {.role = OTF2_MPI_NONE, .left_out = OTF2_MPI_KEPT,
                         .root = OTF2_COLLECTIVE_ROOT_NONE};
    comm_mpi_name n;
    if (!comm_parse_mpi_name(name, &n)) return r;
    r.mpi = true;
    if (n.kind == COMM_KIND_P2P) {
        bool receive = comm_op_is_receive(n.op);
        if (!strcmp(n.op, "sendrecv")) r.left_out = OTF2_MPI_LEFT_SENDRECV;
        else if (receive && n.peer == -1) r.left_out = OTF2_MPI_LEFT_ANY_SOURCE;
        else if (n.peer < 0 || n.tag < 0) return r; /* MPI_PROC_NULL: nothing moved */
        else if (comm_is_world(n.comm) && n.peer >= (long long)ranks)
            r.left_out = OTF2_MPI_LEFT_COMM;
        else {
            r.role = receive ? OTF2_MPI_RECV : OTF2_MPI_SEND;
            /* another communicator: placed per call's rank (otf2_mpi_peer) */
            r.via_map = !comm_is_world(n.comm) && n.peer <= UINT32_MAX;
            r.comm = n.comm;
            if (!comm_is_world(n.comm) && !r.via_map) {
                r.role = OTF2_MPI_NONE;
                r.left_out = OTF2_MPI_LEFT_COMM;
                return r;
            }
            r.peer = (uint32_t)n.peer;
            r.tag = (uint32_t)n.tag;
            r.bytes = counted_bytes(n.bytes);
        }
    } else if (n.kind == COMM_KIND_COLLECTIVE && collective_code(n.op, &r.op)) {
        if (!comm_is_world(n.comm)) {
            r.left_out = OTF2_MPI_LEFT_COMM;
            return r;
        }
        r.role = OTF2_MPI_COLL;
        if (n.root >= 0 && n.root < (long long)ranks) r.root = (uint32_t)n.root;
        r.bytes = counted_bytes(n.bytes);
    }
    return r;
}

int otf2_mpi_init(otf2_mpi *m, const view_lanes *v) {
    memset(m, 0, sizeof *m);
    size_t regions = sp_results_region_count(v->res);
    m->regions = calloc(regions ? regions : 1, sizeof *m->regions);
    m->lane_records = calloc(v->lane_count ? v->lane_count : 1, sizeof *m->lane_records);
    if (!m->regions || !m->lane_records) {
        otf2_mpi_free(m);
        return SP_ERR_OUT_OF_MEMORY;
    }
    /* Ranks 0..N-1 each with a lane (lanes are sorted by rank). */
    uint32_t next = 0;
    bool contiguous = true;
    for (size_t l = 0; l < v->lane_count && contiguous; l++) {
        if (l && v->lanes[l].rank == v->lanes[l - 1].rank) continue;
        contiguous = v->lanes[l].rank == next++;
    }
    m->ranks = next;
    m->enabled = contiguous && next > 0;
    m->lanes = v;
    m->maps.ranks = next;
    if (comm_maps_read(&m->maps, v->res) != SP_OK) {
        otf2_mpi_free(m);
        return SP_ERR_OUT_OF_MEMORY;
    }
    for (size_t r = 0; r < regions; r++) {
        m->regions[r] = decode(sp_results_region_name(v->res, r), m->ranks);
        if (!m->enabled && m->regions[r].role != OTF2_MPI_NONE) {
            m->regions[r].role = OTF2_MPI_NONE;
            m->regions[r].left_out = OTF2_MPI_LEFT_COMM;
        }
    }
    return SP_OK;
}

void otf2_mpi_free(otf2_mpi *m) {
    comm_matrix_free(&m->maps);
    free(m->regions);
    free(m->lane_records);
    memset(m, 0, sizeof *m);
}

/* The world rank of r's peer for a call on `lane`, or -1 when the lane's
 * rank has no usable map of the call's communicator (counted as left out). */
static long long otf2_mpi_peer(otf2_mpi *m, const otf2_mpi_region *r, size_t lane) {
    if (!r->via_map) return r->peer;
    long long world = comm_world_peer(&m->maps, m->lanes->lanes[lane].rank, r->comm, r->peer);
    if (world < 0) m->other_comm++;
    return world;
}

OTF2_ErrorCode otf2_mpi_after_enter(otf2_mpi *m, OTF2_EvtWriter *w, size_t lane, size_t region,
                                    OTF2_TimeStamp time) {
    const otf2_mpi_region *r = &m->regions[region];
    long long peer;
    switch (r->role) {
    case OTF2_MPI_SEND:
        if ((peer = otf2_mpi_peer(m, r, lane)) < 0) return OTF2_SUCCESS;
        m->lane_records[lane]++;
        return OTF2_EvtWriter_MpiSend(w, NULL, time, (uint32_t)peer, 0, r->tag, r->bytes);
    case OTF2_MPI_COLL:
        m->lane_records[lane]++;
        return OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, time);
    default:
        /* count the calls left without a record (see the top of the file) */
        if (r->left_out == OTF2_MPI_LEFT_ANY_SOURCE) m->any_source++;
        else if (r->left_out == OTF2_MPI_LEFT_SENDRECV) m->sendrecv++;
        else if (r->left_out == OTF2_MPI_LEFT_COMM) m->other_comm++;
        return OTF2_SUCCESS;
    }
}

OTF2_ErrorCode otf2_mpi_before_leave(otf2_mpi *m, OTF2_EvtWriter *w, size_t lane, size_t region,
                                     OTF2_TimeStamp time) {
    const otf2_mpi_region *r = &m->regions[region];
    long long peer;
    switch (r->role) {
    case OTF2_MPI_RECV:
        if ((peer = otf2_mpi_peer(m, r, lane)) < 0) return OTF2_SUCCESS;
        m->lane_records[lane]++;
        return OTF2_EvtWriter_MpiRecv(w, NULL, time, (uint32_t)peer, 0, r->tag, r->bytes);
    case OTF2_MPI_COLL:
        m->lane_records[lane]++;
        return OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, time, (OTF2_CollectiveOp)r->op, 0,
                                               r->root, r->bytes, r->bytes);
    default: return OTF2_SUCCESS;
    }
}

void otf2_mpi_region_kind(const otf2_mpi *m, size_t region, OTF2_Paradigm *paradigm,
                          OTF2_RegionRole *role) {
    const otf2_mpi_region *r = &m->regions[region];
    *paradigm = r->mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER;
    *role = r->role == OTF2_MPI_SEND || r->role == OTF2_MPI_RECV ? OTF2_REGION_ROLE_POINT2POINT
            : r->role == OTF2_MPI_COLL && r->op == OTF2_COLLECTIVE_OP_BARRIER
                ? OTF2_REGION_ROLE_BARRIER
            : r->role == OTF2_MPI_COLL ? OTF2_REGION_ROLE_COLL_OTHER
                                       : OTF2_REGION_ROLE_FUNCTION;
}

OTF2_ErrorCode otf2_mpi_write_defs(const otf2_mpi *m, const view_lanes *v, OTF2_GlobalDefWriter *g,
                                   OTF2_StringRef *next_string) {
    if (!m->enabled) return OTF2_SUCCESS;
    uint64_t *members = malloc((size_t)m->ranks * sizeof *members);
    if (!members) return OTF2_ERROR_MEM_ALLOC_FAILED;
    /* per rank: its first lane with MPI records, else its first lane */
    for (size_t l = 0; l < v->lane_count; l++) {
        uint32_t rank = v->lanes[l].rank;
        bool first = l == 0 || v->lanes[l - 1].rank != rank;
        if (first || (m->lane_records[l] && !m->lane_records[members[rank]])) members[rank] = l;
    }
    OTF2_StringRef world = (*next_string)++, locations = (*next_string)++;
    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteString(g, world, "MPI_COMM_WORLD");
    if (e == OTF2_SUCCESS) e = OTF2_GlobalDefWriter_WriteString(g, locations, "MPI ranks");
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteGroup(g, 0, locations, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, m->ranks,
                                            members);
    /* MPI_COMM_WORLD: every rank, in rank order, as indices into group 0 */
    for (uint32_t r = 0; r < m->ranks; r++) members[r] = r;
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteGroup(g, 1, world, OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_GLOBAL_MEMBERS,
                                            m->ranks, members);
    if (e == OTF2_SUCCESS)
        e = OTF2_GlobalDefWriter_WriteComm(g, 0, world, 1, OTF2_UNDEFINED_COMM,
                                           OTF2_COMM_FLAG_NONE);
    free(members);
    return e;
}
