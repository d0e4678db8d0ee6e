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
 *   - calls on another communicator without a usable world-rank map
 *     (docs/FORMAT.md 4.6.1: none recorded, past the library's cap, or a
 *     handle that named two member lists on one rank).
 * Point-to-point calls on another communicator with a map are written on
 * MPI_COMM_WORLD with the peer placed at its world rank through the
 * calling rank's map, so their send and receive match there by world
 * sender, receiver and tag. Collectives on another communicator go to an
 * archive communicator of their own, one per distinct list of members
 * (the maps say which world ranks, in communicator order): a handle is a
 * per-process number, and the members are what every rank agrees on. Two
 * live communicators with the same members (a duplicate) share one
 * archive communicator, which a reader matches in call order; a
 * duplicate of MPI_COMM_WORLD is not MPI_COMM_WORLD itself.
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
        r.role = OTF2_MPI_COLL;
        /* another communicator: its archive comm and root checked per rank */
        r.via_map = !comm_is_world(n.comm);
        r.comm = n.comm;
        if (n.root >= 0 && n.root < (r.via_map ? (long long)UINT32_MAX : (long long)ranks))
            r.root = (uint32_t)n.root;
        r.bytes = counted_bytes(n.bytes);
    }
    return r;
}

static uint64_t members_hash(const comm_world_map *map) {
    uint64_t h = UINT64_C(0xcbf29ce484222325) ^ map->size;
    for (size_t i = 0; i < map->size; i++) h = (h ^ map->world[i]) * UINT64_C(0x100000001b3);
    return h ^ (h >> 29);
}

static bool same_members(const comm_world_map *a, const comm_world_map *b) {
    return a->size == b->size && memcmp(a->world, b->world, a->size * sizeof *a->world) == 0;
}

/* Number the communicators of the usable maps by their member lists: an
 * open-addressed table of first maps, twice the maps' count, so the work
 * is one hash and a compare or two a map. */
static int number_sub_comms(otf2_mpi *m) {
    size_t count = m->maps.map_count;
    if (count == 0) return SP_OK;
    m->map_comm = calloc(count, sizeof *m->map_comm);
    m->sub_comm_map = malloc(count * sizeof *m->sub_comm_map);
    size_t slots = 2;
    while (slots < 2 * count) slots *= 2;
    size_t *first = malloc(slots * sizeof *first); /* a map index + 1; 0 = empty */
    if (!m->map_comm || !m->sub_comm_map || !first) {
        free(first);
        return SP_ERR_OUT_OF_MEMORY;
    }
    memset(first, 0, slots * sizeof *first);
    for (size_t i = 0; i < count; i++) {
        const comm_world_map *map = &m->maps.maps[i];
        if (!map->world) continue;
        size_t at = (size_t)members_hash(map) & (slots - 1);
        while (first[at] && !same_members(&m->maps.maps[first[at] - 1], map))
            at = (at + 1) & (slots - 1);
        if (!first[at]) {
            first[at] = i + 1;
            m->sub_comm_map[m->sub_comms++] = i;
            m->map_comm[i] = m->sub_comms;
        } else {
            m->map_comm[i] = m->map_comm[first[at] - 1];
        }
    }
    free(first);
    return SP_OK;
}

/* The archive communicator of a collective of `r` on `lane`, and its root
 * in it; false (counted as left out) when the lane's rank has no usable
 * map of the call's communicator. */
static bool collective_comm(otf2_mpi *m, const otf2_mpi_region *r, size_t lane,
                            OTF2_CommRef *comm, uint32_t *root) {
    *comm = 0;
    *root = r->root;
    if (!r->via_map) return true;
    const comm_world_map *map = comm_map_find(&m->maps, m->lanes->lanes[lane].rank, r->comm);
    if (!map || !map->world) return false;
    *comm = m->map_comm[map - m->maps.maps];
    if (*root != OTF2_COLLECTIVE_ROOT_NONE && *root >= map->size) *root = OTF2_COLLECTIVE_ROOT_NONE;
    return true;
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
    if (comm_maps_read(&m->maps, v->res) != SP_OK || number_sub_comms(m) != SP_OK) {
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
    free(m->map_comm);
    free(m->sub_comm_map);
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
    OTF2_CommRef comm;
    uint32_t root;
    switch (r->role) {
    case OTF2_MPI_SEND:
        if ((peer = otf2_mpi_peer(m, r, lane)) < 0) return OTF2_SUCCESS;
        m->lane_records[lane]++;
        return OTF2_EvtWriter_MpiSend(w, NULL, time, (uint32_t)peer, 0, r->tag, r->bytes);
    case OTF2_MPI_COLL:
        if (!collective_comm(m, r, lane, &comm, &root)) {
            m->other_comm++;
            return OTF2_SUCCESS;
        }
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
    OTF2_CommRef comm;
    uint32_t root;
    switch (r->role) {
    case OTF2_MPI_RECV:
        if ((peer = otf2_mpi_peer(m, r, lane)) < 0) return OTF2_SUCCESS;
        m->lane_records[lane]++;
        return OTF2_EvtWriter_MpiRecv(w, NULL, time, (uint32_t)peer, 0, r->tag, r->bytes);
    case OTF2_MPI_COLL:
        /* the same answer as at the Enter: counted there, not twice */
        if (!collective_comm(m, r, lane, &comm, &root)) return OTF2_SUCCESS;
        m->lane_records[lane]++;
        return OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, time, (OTF2_CollectiveOp)r->op, comm,
                                               root, r->bytes, r->bytes);
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
    /* the others: group k + 1 lists comm k's world ranks in its own order
     * (indices into group 0, which has one location per rank) */
    for (uint32_t k = 1; k <= m->sub_comms && e == OTF2_SUCCESS; k++) {
        const comm_world_map *map = &m->maps.maps[m->sub_comm_map[k - 1]];
        char name[64];
        snprintf(name, sizeof name, "MPI communicator %u (%zu ranks)", k, map->size);
        OTF2_StringRef label = (*next_string)++;
        e = OTF2_GlobalDefWriter_WriteString(g, label, name);
        uint64_t *ranks = malloc(map->size * sizeof *ranks);
        if (!ranks) return OTF2_ERROR_MEM_ALLOC_FAILED;
        for (size_t i = 0; i < map->size; i++) ranks[i] = map->world[i];
        if (e == OTF2_SUCCESS)
            e = OTF2_GlobalDefWriter_WriteGroup(g, k + 1, label, OTF2_GROUP_TYPE_COMM_GROUP,
                                                OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                (uint32_t)map->size, ranks);
        free(ranks);
        if (e == OTF2_SUCCESS)
            e = OTF2_GlobalDefWriter_WriteComm(g, k, label, k + 1, OTF2_UNDEFINED_COMM,
                                               OTF2_COMM_FLAG_NONE);
    }
    return e;
}
