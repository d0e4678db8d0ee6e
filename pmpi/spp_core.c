/*
 * spp_core.c - the state behind the generated wrappers: switch and filter,
 * the name form (SCOPE_PROFILER_MPI_NAMES), the region of each distinct
 * call key, communicators' Fortran handles and the request table.
 * Everything the hot path touches is a fixed-size static table: a wrapped
 * call never allocates, never locks once its key was seen, and
 * never calls MPI on a handle that could make MPI raise an error (NULL
 * handles are checked first), so a user's invalid argument reaches the
 * real call, and its error handler, unchanged.
 *
 * Why keys and a cache rather than formatting a name per call: formatting
 * costs ~300 ns and sp_region_n takes the registry lock on a new name; a
 * key is 48 bytes hashed in a few ns. The cache maps key -> handle with
 * open addressing; readers never lock (a slot is published with a release
 * store of its state after its key and handle are written), writers take
 * one mutex. Distinct names are bounded (SCOPE_PROFILER_MPI_MAX_NAMES,
 * default 1024): past the bound a call is recorded under its operation's
 * overflow name (bytes/peer/root/tag -1, `overflow=1`), so a program that
 * sends a different size to each of 10^5 peers cannot grow the region table
 * without bound, and its calls are still counted.
 */
#include "spp_core.h"
#include "spp_comm_map.h"

#include <regex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "scope_profiler.h"
#include "spp_names.h"

/* ---- switch, filter, owned session ------------------------------------- */

static atomic_int op_enabled[SPP_OP_COUNT];   /* 1: record this op */
static int configured = 0;
static int owns_session = 0;                   /* spp_after_init started it */
static int max_names = 1024;

/* SCOPE_PROFILER_MPI_NAMES: which key fields a name keeps. The coarser
 * forms set the dropped fields to -1 rather than leaving keys out, so the
 * Python package's parser (every key required) still reads their names. */
enum { NAMES_FULL, NAMES_OP_BYTES, NAMES_OP };
static int names_form = NAMES_FULL;

static int env_quiet(void) {
    const char *q = getenv("SCOPE_PROFILER_QUIET");
    return q && strcmp(q, "1") == 0;
}

/* A one-line diagnostic for a user mistake in the environment. */
static void diag(const char *what, const char *value) {
    if (!env_quiet()) fprintf(stderr, "scope-profiler: %s \"%s\"\n", what, value);
}

static int switched_on(void) {
    const char *v = getenv("SCOPE_PROFILER_MPI");
    if (!v || !*v || !strcmp(v, "on") || !strcmp(v, "1")) return 1;
    if (!strcmp(v, "off") || !strcmp(v, "0")) return 0;
    diag("SCOPE_PROFILER_MPI is \"on\" or \"off\"; recording MPI calls, not", v);
    return 1;
}

static void configure_names(void) {
    const char *v = getenv("SCOPE_PROFILER_MPI_NAMES");
    if (!v || !*v || !strcmp(v, "full")) return;
    if (!strcmp(v, "op-bytes"))
        names_form = NAMES_OP_BYTES;
    else if (!strcmp(v, "op"))
        names_form = NAMES_OP;
    else
        diag("SCOPE_PROFILER_MPI_NAMES is full, op-bytes or op; keeping full, not", v);
}

/* Read SCOPE_PROFILER_MPI, _MPI_FILTER, _MPI_MAX_NAMES and _MPI_NAMES once. */
static void configure(void) {
    if (configured) return;
    configured = 1;
    int on = switched_on();
    const char *pattern = getenv("SCOPE_PROFILER_MPI_FILTER");
    regex_t re;
    int use_re = 0;
    if (on && pattern && *pattern) {
        use_re = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0;
        if (!use_re) {
            diag("SCOPE_PROFILER_MPI_FILTER is not an extended regular expression; "
                 "recording no MPI call for", pattern);
            on = 0;
        }
    }
    const char *limit = getenv("SCOPE_PROFILER_MPI_MAX_NAMES");
    if (limit && *limit) {
        char *end = NULL;
        long n = strtol(limit, &end, 10);
        if (*end || n < 1 || n > SPP_NAME_SLOTS / 2)
            diag("SCOPE_PROFILER_MPI_MAX_NAMES must be 1..4096; keeping 1024, not", limit);
        else
            max_names = (int)n;
    }
    configure_names();
    for (int op = 0; op < SPP_OP_COUNT; op++) {
        int admit = on && (!use_re || regexec(&re, spp_op_name(op), 0, NULL, 0) == 0);
        atomic_store_explicit(&op_enabled[op], admit, memory_order_relaxed);
    }
    if (use_re) regfree(&re);
}

int spp_recording(int op) {
    return atomic_load_explicit(&op_enabled[op], memory_order_relaxed) && sp_is_active();
}

void spp_after_init(void) {
    configure();
    spp_comm_map_reset();
    int any = 0;
    for (int op = 0; op < SPP_OP_COUNT; op++) any |= atomic_load(&op_enabled[op]);
    /* SCOPE_PROFILER_MPI=off (or a filter admitting nothing) leaves the
     * program exactly as without this library: no session, no file. */
    if (!any || sp_is_active()) return;
    owns_session = sp_setup(NULL) == SP_OK && sp_is_active();
}

void spp_before_finalize(void) {
    if (owns_session && sp_is_active()) sp_finalize();
    owns_session = 0;
}

/* ---- sizes --------------------------------------------------------------- */

int64_t spp_bytes(int64_t count, MPI_Datatype type) {
    int size = 0;
    if (count < 0 || type == MPI_DATATYPE_NULL || type == NULL) return -1;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) return -1;
    return count * (int64_t)size;
}

int64_t spp_bytes_sum(const int *counts, int n, MPI_Datatype type) {
    if (!counts || n < 0) return -1;
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += counts[i];
    return spp_bytes(total, type);
}

static int comm_valid(MPI_Comm comm) { return comm != MPI_COMM_NULL && comm != NULL; }

int spp_comm_size(MPI_Comm comm) {
    int size = -1;
    if (!comm_valid(comm) || PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return -1;
    return size;
}

int spp_comm_rank(MPI_Comm comm) {
    int rank = -1;
    if (!comm_valid(comm) || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return -1;
    return rank;
}

/* ---- communicators ----------------------------------------------------- */

/* The Fortran handle is the package's `comm=` (mpi4py's py2f), so a
 * native and a Python call on the same communicator agree; MPI may give a
 * freed communicator's handle to a new one, and the names then coincide,
 * as the package's do. MPI_Comm_c2f of MPI_COMM_NULL is a valid handle,
 * but a call on it moved nothing on any communicator: -1. */
int32_t spp_comm_f(MPI_Comm comm) {
    if (!comm_valid(comm)) return SPP_NONE;
    int32_t handle = (int32_t)PMPI_Comm_c2f(comm);
    /* the tools need its world ranks to place the call's peer */
    spp_comm_map_used(comm, handle);
    return handle;
}

/* ---- requests ------------------------------------------------------------ */

/* One 64-bit word per slot: the request handle's low 48 bits (an address
 * in Open MPI, an index in MPICH) and the op + 1 above them, written and
 * read in one atomic access, so a reader never sees half an entry. A
 * request goes to the first of REQUEST_PROBE slots from its hash that
 * holds the same handle or nothing; when all hold others, it replaces the
 * first. Probing keeps two live requests whose hashes collide (addresses
 * vary with ASLR: a wait was named "unknown" about once in a few hundred
 * runs of a short test) apart; MPI implementations reuse request objects,
 * so the handles seen stay few and the table keeps the recent ones. */
#define REQUEST_SLOTS 4096
#define REQUEST_PROBE 8
#define LOW48 ((UINT64_C(1) << 48) - 1)
static _Atomic(uint64_t) request_table[REQUEST_SLOTS];

static size_t hash_pointer(uintptr_t p) { return (size_t)((p >> 3) * 0x9E3779B97F4A7C15ull >> 40); }

void spp_request_note(MPI_Request request, int op) {
    if (request == MPI_REQUEST_NULL || request == NULL) return;
    uint64_t bits = (uint64_t)(uintptr_t)request & LOW48;
    uint64_t entry = bits | ((uint64_t)(op + 1) << 48);
    size_t home = hash_pointer(bits) % REQUEST_SLOTS;
    for (size_t k = 0; k < REQUEST_PROBE; k++) {
        size_t at = (home + k) % REQUEST_SLOTS;
        uint64_t word = atomic_load_explicit(&request_table[at], memory_order_relaxed);
        /* an empty slot is claimed, so two threads never share it */
        if (word == 0 && atomic_compare_exchange_strong_explicit(
                             &request_table[at], &word, entry, memory_order_relaxed,
                             memory_order_relaxed))
            return;
        if ((word & LOW48) == bits) {
            atomic_store_explicit(&request_table[at], entry, memory_order_relaxed);
            return;
        }
    }
    atomic_store_explicit(&request_table[home], entry, memory_order_relaxed);
}

int32_t spp_request_op(MPI_Request request) {
    if (request == MPI_REQUEST_NULL || request == NULL) return SPP_REQ_NULL;
    uint64_t bits = (uint64_t)(uintptr_t)request & LOW48;
    size_t home = hash_pointer(bits) % REQUEST_SLOTS;
    for (size_t k = 0; k < REQUEST_PROBE; k++) {
        uint64_t word = atomic_load_explicit(&request_table[(home + k) % REQUEST_SLOTS],
                                             memory_order_relaxed);
        if (word == 0) break;
        if ((word & LOW48) == bits && (word >> 48) != 0) return (int32_t)(word >> 48) - 1;
    }
    return SPP_REQ_UNKNOWN;
}

/* Combine one request's op into the ops seen so far. */
static int32_t combine(int32_t seen, int32_t op) {
    if (op == SPP_REQ_NULL) return seen;
    if (seen == SPP_REQ_NULL || seen == op) return op;
    return SPP_REQ_MIXED;
}

int32_t spp_requests_op(const MPI_Request *requests, int n) {
    int32_t seen = SPP_REQ_NULL;
    for (int i = 0; requests && i < n && seen != SPP_REQ_MIXED; i++)
        seen = combine(seen, spp_request_op(requests[i]));
    return seen;
}

int32_t spp_requests_op_f(const MPI_Fint *requests, int n) {
    int32_t seen = SPP_REQ_NULL;
    for (int i = 0; requests && i < n && seen != SPP_REQ_MIXED; i++)
        seen = combine(seen, spp_request_op(PMPI_Request_f2c(requests[i])));
    return seen;
}

/* ---- key -> region -------------------------------------------------------- */

typedef struct name_slot {
    atomic_int state;            /* 0 empty, 2 published */
    int region;
    spp_key key;
} name_slot;
static name_slot name_table[SPP_NAME_SLOTS];
static int name_count = 0;       /* distinct names registered */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER; /* writers of name_table */
static int slot_count = 0;       /* used slots: names + overflow aliases */

static size_t hash_key(const spp_key *k) {
    uint64_t h = (uint64_t)(uint32_t)k->op * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)k->bytes + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= (uint64_t)k->recv_bytes + (h << 6) + (h >> 2);
    h ^= ((uint64_t)(uint32_t)k->peer << 32 | (uint32_t)k->tag) + (h << 6) + (h >> 2);
    h ^= ((uint64_t)(uint32_t)k->root << 32 | (uint32_t)k->comm) + (h << 6) + (h >> 2);
    h ^= ((uint64_t)(uint32_t)k->request << 1 | (uint32_t)k->overflow) + (h << 6) + (h >> 2);
    return (size_t)(h * 0xff51afd7ed558ccdull >> 32);
}

static int key_equal(const spp_key *a, const spp_key *b) {
    return a->op == b->op && a->bytes == b->bytes && a->recv_bytes == b->recv_bytes &&
           a->peer == b->peer && a->tag == b->tag && a->root == b->root &&
           a->comm == b->comm && a->request == b->request && a->overflow == b->overflow;
}

/* The key with every value that varies replaced: one per op and comm (and
 * per kind of request for the waits, "unknown"). */
static spp_key overflow_key(const spp_key *k) {
    spp_key o = *k;
    o.bytes = o.peer = o.root = o.tag = SPP_NONE;
    if (o.recv_bytes != SPP_NO_RECV) o.recv_bytes = SPP_NONE;
    if (o.request != SPP_NO_REQUEST) o.request = SPP_REQ_UNKNOWN;
    o.overflow = 1;
    return o;
}

/* The key in the name form asked for: op-bytes drops peer, root, tag and
 * the communicator, op drops the sizes too. A wait keeps its request: it
 * takes one of a few values (the ops that create requests), never a
 * number of the call, and tells which traffic the wait completes. */
static spp_key coarse_key(const spp_key *k) {
    spp_key c = *k;
    c.peer = c.root = c.tag = c.comm = SPP_NONE;
    if (names_form == NAMES_OP) {
        c.bytes = SPP_NONE;
        if (c.recv_bytes != SPP_NO_RECV) c.recv_bytes = SPP_NONE;
    }
    return c;
}

static void publish(size_t slot, const spp_key *key, int region) {
    name_table[slot].key = *key;
    name_table[slot].region = region;
    atomic_store_explicit(&name_table[slot].state, 2, memory_order_release);
    slot_count++;
}

/* The region of `key` under the lock: found, or registered in the empty
 * slot that ends its probe sequence. */
static int lookup_locked(const spp_key *key) {
    size_t mask = SPP_NAME_SLOTS - 1, i = hash_key(key) & mask;
    for (;; i = (i + 1) & mask) {
        if (atomic_load_explicit(&name_table[i].state, memory_order_relaxed) == 0) break;
        if (key_equal(&name_table[i].key, key)) return name_table[i].region;
    }
    /* Keep a quarter of the table empty so probes stay short; a full table
     * records nothing more (the wrapper then only calls MPI). */
    if (slot_count >= SPP_NAME_SLOTS * 3 / 4) return -1;
    char name[SPP_NAME_MAX];
    size_t len = spp_format_name(key, name, sizeof name);
    int region = sp_region_n(name, len);
    if (region < 0) return -1;
    publish(i, key, region);
    name_count++;
    return region;
}

int spp_region_of(const spp_key *call) {
    /* Coarsened before the cache: a coarse form holds fewer keys too. */
    spp_key coarse;
    const spp_key *key = call;
    if (names_form != NAMES_FULL) {
        coarse = coarse_key(call);
        key = &coarse;
    }
    size_t mask = SPP_NAME_SLOTS - 1, i = hash_key(key) & mask;
    for (;; i = (i + 1) & mask) {
        int state = atomic_load_explicit(&name_table[i].state, memory_order_acquire);
        if (state == 0) break;
        if (key_equal(&name_table[i].key, key)) return name_table[i].region;
    }
    pthread_mutex_lock(&table_lock);
    int region;
    if (name_count < max_names) {
        region = lookup_locked(key);
    } else {
        /* Past the bound: the op's overflow name, and the key itself kept
         * as an alias of it while there is room, so the next call with this
         * key is found without the lock. */
        spp_key over = overflow_key(key);
        region = lookup_locked(&over);
        if (region >= 0 && slot_count < SPP_NAME_SLOTS * 3 / 4) {
            size_t j = hash_key(key) & mask;
            while (atomic_load_explicit(&name_table[j].state, memory_order_relaxed) != 0 &&
                   !key_equal(&name_table[j].key, key))
                j = (j + 1) & mask;
            if (atomic_load_explicit(&name_table[j].state, memory_order_relaxed) == 0)
                publish(j, key, region);
        }
    }
    pthread_mutex_unlock(&table_lock);
    return region;
}
