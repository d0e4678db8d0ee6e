/*
 * comm_matrix.c - the communication matrix (see comm_matrix.h for what is
 * counted and why the send side decides).
 *
 * One pass over the index rows: a row whose region is a point-to-point
 * MPI name contributes `calls` messages of the name's size to the pair
 * (row's rank, peer) when it is a send, or `calls` receives to the pair
 * (peer, row's rank) when it is a receive. Sendrecv is both: its name
 * carries the send side's peer (dest), and its receive side's source is
 * not in the name, so only its send side enters the matrix (its receive is
 * counted at the sender it came from, whichever call that was).
 *
 * Other communicators: through the world-rank maps the PMPI library
 * recorded (comm_maps_read), per rank and handle, as FORMAT.md 4.6.1 says.
 *
 * Which communicator is MPI_COMM_WORLD: the names carry Fortran handles
 * (MPI_Comm_c2f), fixed by the MPI library: 0 in Open MPI, 0x44000000 in
 * MPICH, Intel MPI, Cray MPICH and MVAPICH. No other communicator of
 * either family has those values, so both are taken as world in any file.
 */
#include "comm_matrix.h"

#include <stdlib.h>
#include <string.h>

enum { WORLD_OPEN_MPI = 0, WORLD_MPICH = 0x44000000 };

int64_t comm_add_bytes(int64_t a, int64_t b) {
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

int64_t comm_mul_bytes(int64_t bytes, uint64_t count) {
    if (bytes <= 0 || count == 0) return 0;
    if (count > (uint64_t)(INT64_MAX / bytes)) return INT64_MAX;
    return bytes * (int64_t)count;
}

/* The integer value of token `key=` in `name`; `absent` when missing, -1
 * when it is not an integer (the package's "unknown"). */
static long long token_int(const char *name, const char *key, long long absent) {
    size_t klen = strlen(key);
    for (const char *p = strchr(name, ' '); p; p = strchr(p + 1, ' ')) {
        if (strncmp(p + 1, key, klen) != 0 || p[1 + klen] != '=') continue;
        const char *v = p + 2 + klen;
        char *end = NULL;
        long long x = strtoll(v, &end, 10);
        return end == v || (*end && *end != ' ') ? -1 : x;
    }
    return absent;
}

static bool kind_is(const char *name, const char *kind) {
    const char *at = strstr(name, " kind=");
    size_t len = strlen(kind);
    return at && strncmp(at + 6, kind, len) == 0 && (at[6 + len] == ' ' || at[6 + len] == '\0');
}

bool comm_parse_mpi_name(const char *name, comm_mpi_name *n) {
    if (!name || strncmp(name, "mpi:", 4) != 0) return false;
    size_t oplen = strcspn(name + 4, " ");
    if (oplen == 0 || oplen >= sizeof n->op) return false;
    memcpy(n->op, name + 4, oplen);
    n->op[oplen] = '\0';
    n->kind = kind_is(name, "point-to-point") ? COMM_KIND_P2P
              : kind_is(name, "collective")   ? COMM_KIND_COLLECTIVE
              : kind_is(name, "wait")         ? COMM_KIND_WAIT
                                              : COMM_KIND_OTHER;
    n->bytes = token_int(name, "bytes", -1);
    n->peer = token_int(name, "peer", -1);
    n->root = token_int(name, "root", -1);
    n->tag = token_int(name, "tag", -1);
    n->comm = token_int(name, "comm", -1);
    return true;
}

/* recv, irecv, mrecv, imrecv: the receiving side; sendrecv is a send here. */
bool comm_op_is_receive(const char *op) {
    return strstr(op, "recv") != NULL && strncmp(op, "sendrecv", 8) != 0;
}

bool comm_is_world(long long comm) { return comm == WORLD_OPEN_MPI || comm == WORLD_MPICH; }

/* ---- world-rank maps (docs/FORMAT.md 4.6.1) ------------------------------ */

/* The runs of a `world=` list ("0..3,8,10..14/2"): their members into
 * out[0..*n) when out is not NULL, else only counted. false when the text
 * is not a list of runs, or holds more than `limit` members (no
 * communicator has more members than the world). */
static bool parse_runs(const char *text, uint32_t *out, size_t *n, size_t limit) {
    *n = 0;
    const char *p = text;
    for (;;) {
        char *end = NULL;
        long long first = strtoll(p, &end, 10), last, step;
        if (end == p || first < 0) return false;
        p = end;
        last = first;
        if (p[0] == '.' && p[1] == '.') {
            last = strtoll(p + 2, &end, 10);
            if (end == p + 2 || last < 0) return false;
            p = end;
        }
        step = last >= first ? 1 : -1;
        if (*p == '/') {
            step = strtoll(p + 1, &end, 10);
            if (end == p + 1 || step == 0) return false;
            p = end;
        }
        if ((last - first) % step != 0 || (last - first) / step < 0) return false;
        long long count = (last - first) / step + 1;
        if ((unsigned long long)count > limit - *n) return false;
        for (long long i = 0; out && i < count; i++) out[*n + (size_t)i] = (uint32_t)(first + i * step);
        *n += (size_t)count;
        if (*p == ',') {
            p++;
            continue;
        }
        return *p == '\0' || *p == ' ';
    }
}

static int cmp_map(const void *pa, const void *pb) {
    const comm_world_map *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return (a->comm > b->comm) - (a->comm < b->comm);
}

static bool same_members(const comm_world_map *a, const comm_world_map *b) {
    return a->world && b->world && a->size == b->size &&
           memcmp(a->world, b->world, a->size * sizeof *a->world) == 0;
}

int comm_maps_read(comm_matrix *m, const sp_results *res) {
    uint32_t ranks = sp_results_rank_count(res);
    size_t capacity = m->map_count;
    for (size_t row = 0; row < sp_results_row_count(res); row++) {
        const char *name = sp_results_region_name(res, sp_results_row_region(res, row));
        comm_mpi_name n;
        if (!comm_parse_mpi_name(name, &n) || strcmp(n.op, "comm_map") != 0 || n.comm < 0)
            continue;
        comm_world_map map = {sp_results_row_rank(res, row), n.comm, NULL, 0};
        const char *list = strstr(name, " world=");
        size_t size = 0;
        if (list && parse_runs(list + 7, NULL, &size, ranks) && size > 0) {
            map.world = malloc(size * sizeof *map.world);
            if (!map.world) return SP_ERR_OUT_OF_MEMORY;
            parse_runs(list + 7, map.world, &map.size, ranks);
        }
        if (m->map_count == capacity) {
            /* doubling: a file of many ranks holds up to 256 maps a rank */
            size_t grown_capacity = capacity ? 2 * capacity : 16;
            comm_world_map *grown = realloc(m->maps, grown_capacity * sizeof *grown);
            if (!grown) {
                free(map.world);
                return SP_ERR_OUT_OF_MEMORY;
            }
            m->maps = grown;
            capacity = grown_capacity;
        }
        m->maps[m->map_count++] = map;
    }
    if (m->map_count == 0) return SP_OK;
    qsort(m->maps, m->map_count, sizeof *m->maps, cmp_map);
    /* one entry per (rank, comm); two different lists: the handle named two
     * communicators in turn and a call cannot tell which: unusable */
    size_t kept = 0;
    for (size_t i = 0; i < m->map_count; i++) {
        comm_world_map *last = kept ? &m->maps[kept - 1] : NULL;
        if (last && last->rank == m->maps[i].rank && last->comm == m->maps[i].comm) {
            if (!same_members(last, &m->maps[i])) {
                free(last->world);
                last->world = NULL;
                last->size = 0;
            }
            free(m->maps[i].world);
            continue;
        }
        m->maps[kept++] = m->maps[i];
    }
    m->map_count = kept;
    return SP_OK;
}

const comm_world_map *comm_map_find(const comm_matrix *m, uint32_t rank, long long comm) {
    comm_world_map key = {rank, comm, NULL, 0};
    return m->map_count ? bsearch(&key, m->maps, m->map_count, sizeof key, cmp_map) : NULL;
}

long long comm_world_peer(const comm_matrix *m, uint32_t rank, long long comm, long long peer) {
    if (peer < 0) return -1;
    if (comm_is_world(comm)) return peer < (long long)m->ranks ? peer : -1;
    const comm_world_map *map = comm_map_find(m, rank, comm);
    if (!map || !map->world || (unsigned long long)peer >= map->size) return -1;
    uint32_t world = map->world[peer];
    return world < m->ranks ? (long long)world : -1;
}

/* ---- the matrix ------------------------------------------------------------ */

static bool slot_empty(const comm_pair *p) { return p->messages == 0 && p->receives == 0; }

static size_t slot_of(const comm_matrix *m, uint32_t from, uint32_t to) {
    uint64_t h = ((uint64_t)from << 32 | to) * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h ^ (h >> 31)) & (m->slot_count - 1);
    while (!slot_empty(&m->slots[i]) && (m->slots[i].from != from || m->slots[i].to != to))
        i = (i + 1) & (m->slot_count - 1);
    return i;
}

/* The pair's entry, created (zeroed, from/to set) when new; NULL when out
 * of memory. A new entry stays "empty" until its caller counts something
 * into it, which it always does at once. */
static comm_pair *pair_for(comm_matrix *m, uint32_t from, uint32_t to) {
    if (2 * (m->pair_count + 1) > m->slot_count) {
        size_t cap = m->slot_count ? 2 * m->slot_count : 256;
        comm_pair *old = m->slots, *grown = calloc(cap, sizeof *grown);
        if (!grown) return NULL;
        size_t old_count = m->slot_count;
        m->slots = grown;
        m->slot_count = cap;
        for (size_t i = 0; i < old_count; i++)
            if (!slot_empty(&old[i])) m->slots[slot_of(m, old[i].from, old[i].to)] = old[i];
        free(old);
    }
    comm_pair *p = &m->slots[slot_of(m, from, to)];
    if (slot_empty(p)) {
        p->from = from;
        p->to = to;
        m->pair_count++;
    }
    return p;
}

static size_t rank_slot_of(const comm_matrix *m, uint32_t rank) {
    uint64_t h = (uint64_t)rank * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h ^ (h >> 29)) & (m->rank_slot_count - 1);
    while (m->rank_slots[i].used && m->rank_slots[i].rank != rank)
        i = (i + 1) & (m->rank_slot_count - 1);
    return i;
}

/* The totals of `rank`, created when new; NULL when out of memory. Only
 * a new rank can grow the table (and move every entry): a pointer to an
 * entry stays valid across lookups of ranks that already have one. */
static comm_rank_totals *rank_for(comm_matrix *m, uint32_t rank) {
    if (m->rank_slot_count) {
        comm_rank_totals *t = &m->rank_slots[rank_slot_of(m, rank)];
        if (t->used) return t;
    }
    if (2 * (m->rank_count + 1) > m->rank_slot_count) {
        size_t cap = m->rank_slot_count ? 2 * m->rank_slot_count : 64;
        comm_rank_totals *old = m->rank_slots, *grown = calloc(cap, sizeof *grown);
        if (!grown) return NULL;
        size_t old_count = m->rank_slot_count;
        m->rank_slots = grown;
        m->rank_slot_count = cap;
        for (size_t i = 0; i < old_count; i++)
            if (old[i].used) m->rank_slots[rank_slot_of(m, old[i].rank)] = old[i];
        free(old);
    }
    comm_rank_totals *t = &m->rank_slots[rank_slot_of(m, rank)];
    if (!t->used) {
        t->used = true;
        t->rank = rank;
        m->rank_count++;
    }
    return t;
}

static int add_unresolved(comm_matrix *m, long long comm, long long bytes, uint64_t calls) {
    comm_unresolved *u = NULL;
    for (size_t i = 0; i < m->unresolved_count && !u; i++)
        if (m->unresolved[i].comm == comm) u = &m->unresolved[i];
    if (!u) {
        comm_unresolved *grown =
            realloc(m->unresolved, (m->unresolved_count + 1) * sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        m->unresolved = grown;
        u = &m->unresolved[m->unresolved_count++];
        *u = (comm_unresolved){comm, 0, 0};
    }
    u->messages += calls;
    if (bytes > 0) u->bytes = comm_add_bytes(u->bytes, comm_mul_bytes(bytes, calls));
    return SP_OK;
}

static bool selected(const uint32_t *ranks, size_t count, uint32_t rank) {
    if (!ranks || count == 0) return true;
    for (size_t i = 0; i < count; i++)
        if (ranks[i] == rank) return true;
    return false;
}

/* `calls` calls of the point-to-point name n made by rank `rank`. */
static int add_row(comm_matrix *m, const comm_mpi_name *n, uint32_t rank, uint64_t calls,
                   bool sender_selected) {
    bool receive = comm_op_is_receive(n->op);
    if (!receive && !sender_selected) return SP_OK;
    comm_rank_totals *own = rank_for(m, rank);
    if (!own) return SP_ERR_OUT_OF_MEMORY;
    if (receive) {
        if (n->peer == -1) {
            own->any_source_receives += calls;
            return SP_OK;
        }
        long long source = comm_world_peer(m, rank, n->comm, n->peer);
        if (source < 0) return SP_OK; /* MPI_PROC_NULL, or a source we cannot place */
        comm_pair *p = pair_for(m, (uint32_t)source, rank);
        if (!p) return SP_ERR_OUT_OF_MEMORY;
        p->receives += calls;
        return SP_OK;
    }
    if (n->peer == -1) {
        own->unattributed_sends += calls;
        return SP_OK;
    }
    if (n->peer < 0) return SP_OK; /* MPI_PROC_NULL: nothing moves */
    long long dest = comm_world_peer(m, rank, n->comm, n->peer);
    if (dest < 0) return add_unresolved(m, n->comm, n->bytes, calls);
    comm_pair *p = pair_for(m, rank, (uint32_t)dest);
    if (!p) return SP_ERR_OUT_OF_MEMORY;
    int64_t bytes = n->bytes >= 0 ? comm_mul_bytes(n->bytes, calls) : 0;
    p->messages += calls;
    if (n->bytes < 0) p->unknown_size_messages += calls;
    p->bytes = comm_add_bytes(p->bytes, bytes);
    comm_rank_totals *peer = rank_for(m, (uint32_t)dest);
    if (!peer) return SP_ERR_OUT_OF_MEMORY;
    own = rank_for(m, rank); /* a new peer may have moved the table; `rank` exists: no move */
    own->sent_messages += calls;
    own->sent_bytes = comm_add_bytes(own->sent_bytes, bytes);
    peer->received_messages += calls;
    peer->received_bytes = comm_add_bytes(peer->received_bytes, bytes);
    m->total_messages += calls;
    m->total_bytes = comm_add_bytes(m->total_bytes, bytes);
    return SP_OK;
}

int comm_matrix_build(comm_matrix *m, const sp_results *res, const uint32_t *ranks,
                      size_t rank_count) {
    memset(m, 0, sizeof *m);
    m->ranks = sp_results_rank_count(res);
    int status = comm_maps_read(m, res);
    for (size_t row = 0; row < sp_results_row_count(res) && status == SP_OK; row++) {
        uint32_t rank = sp_results_row_rank(res, row);
        if (rank >= m->ranks) continue;
        comm_mpi_name n;
        if (!comm_parse_mpi_name(sp_results_region_name(res, sp_results_row_region(res, row)), &n) ||
            n.kind != COMM_KIND_P2P)
            continue;
        m->has_point_to_point = true;
        bool is_selected = selected(ranks, rank_count, rank);
        /* A receive counts at a selected receiver; a send at a selected sender. */
        if (comm_op_is_receive(n.op) && !is_selected) continue;
        sp_row_stats s;
        if (sp_results_row_stats(res, row, &s) != SP_OK || s.count == 0) continue;
        status = add_row(m, &n, rank, s.count, is_selected);
    }
    if (status != SP_OK) comm_matrix_free(m);
    return status;
}

static int cmp_pair(const void *pa, const void *pb) {
    const comm_pair *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    if (a->messages != b->messages) return a->messages > b->messages ? -1 : 1;
    if (a->from != b->from) return a->from < b->from ? -1 : 1;
    return (a->to > b->to) - (a->to < b->to);
}

comm_pair *comm_matrix_sorted_pairs(const comm_matrix *m, size_t *count) {
    *count = 0;
    if (m->pair_count == 0) return NULL;
    comm_pair *out = malloc(m->pair_count * sizeof *out);
    if (!out) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < m->slot_count; i++)
        if (!slot_empty(&m->slots[i])) out[n++] = m->slots[i];
    qsort(out, n, sizeof *out, cmp_pair);
    *count = n;
    return out;
}

static int cmp_rank(const void *pa, const void *pb) {
    uint32_t a = ((const comm_rank_totals *)pa)->rank, b = ((const comm_rank_totals *)pb)->rank;
    return (a > b) - (a < b);
}

comm_rank_totals *comm_matrix_sorted_ranks(const comm_matrix *m, size_t *count) {
    *count = 0;
    if (m->rank_count == 0) return NULL;
    comm_rank_totals *out = malloc(m->rank_count * sizeof *out);
    if (!out) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < m->rank_slot_count; i++)
        if (m->rank_slots[i].used) out[n++] = m->rank_slots[i];
    qsort(out, n, sizeof *out, cmp_rank);
    *count = n;
    return out;
}

void comm_matrix_free(comm_matrix *m) {
    for (size_t i = 0; i < m->map_count; i++) free(m->maps[i].world);
    free(m->maps);
    free(m->slots);
    free(m->rank_slots);
    free(m->unresolved);
    memset(m, 0, sizeof *m);
}
