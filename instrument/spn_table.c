/*
 * spn_table.c - the shared address table (spn_table.h).
 *
 * A fixed array of buckets, each a chain of entries pushed at its head with
 * a release store and never removed: a reader walks a chain with acquire
 * loads and no lock, and sees either an entry whole or not at all. Entries
 * live until the process ends (a handle is valid as long), so memory grows
 * with the number of distinct functions called, never with calls. A new
 * address is resolved under the mutex, after looking again: two threads
 * calling a new function at once make one entry and one name lookup.
 *
 * Throttling (TAU's rule): a function's calls and time are counted while it
 * is undecided; when it reaches throttle_calls calls, a mean under
 * throttle_ns makes it throttled (its later calls are not recorded, calls
 * already open still end and are counted), otherwise it is kept and nothing
 * more is counted. Counting is per function, not per thread: the threshold
 * is the process's calls, as the report says. While counting, each
 * recorded frame is also counted open (open_frames), so that the patching
 * of a throttled function's call sites waits until none is open anywhere
 * (spn_hooks.c says why).
 */
#include "spn_table.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"
#include "spn_mpi.h"
#include "spn_names.h"
#include "spn_sources.h"
#include "spn_symbols.h"

#define NO_INSTRUMENT __attribute__((no_instrument_function))
/* 2^16 buckets (512 KiB of zero pages, touched as functions arrive):
 * 100,000 functions make chains of 1.5 on average, so resolving each new
 * one (which looks twice) stays cheap (bench/instrument (c)). */
#define BUCKET_BITS 16
#define BUCKETS (1u << BUCKET_BITS)

static _Atomic(spn_function *) buckets[BUCKETS];
static spn_function *listed = NULL; /* under table_lock */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static spn_table_config config = {NULL, 0, 0};
int spn_throttling = 0;

NO_INSTRUMENT void spn_table_configure(const spn_table_config *c) {
    config = *c;
    spn_throttling = config.throttle_calls > 0;
}

NO_INSTRUMENT const spn_table_config *spn_table_configuration(void) { return &config; }

NO_INSTRUMENT static unsigned bucket_of(uintptr_t address) {
    /* Functions are at least 16-byte aligned on x86-64 and aarch64 with
     * GCC's defaults; the multiply spreads the rest. */
    return (unsigned)(((address >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - BUCKET_BITS)) &
           (BUCKETS - 1);
}

NO_INSTRUMENT static spn_function *find(uintptr_t address) {
    for (spn_function *f = atomic_load_explicit(&buckets[bucket_of(address)], memory_order_acquire);
         f; f = f->next_in_bucket)
        if (f->address == address) return f;
    return NULL;
}

/* Resolve and decide a new address (under table_lock). */
NO_INSTRUMENT static spn_function *make(uintptr_t address) {
    spn_function *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    spn_symbol symbol;
    spn_symbols_lookup((const void *)address, &symbol);
    char name[2048];
    size_t len = spn_readable_name(&symbol, name, sizeof name);
    f->name = malloc(len + 1);
    if (!f->name) {
        free(f);
        return NULL;
    }
    memcpy(f->name, name, len + 1);
    f->address = address;
    f->region = -1;
    const char *file = spn_filter_has_file_rules(config.filter)
                           ? spn_sources_file(symbol.object, symbol.offset)
                           : NULL;
    if (!spn_filter_excludes(config.filter, f->name, symbol.symbol, file)) {
        int region = sp_region_n(f->name, len);
        if (region != SP_INVALID_REGION) f->region = region;
    }
    atomic_init(&f->state, f->region < 0 ? SPN_EXCLUDED : SPN_COUNTING);
    atomic_init(&f->calls, 0);
    atomic_init(&f->total_ns, 0);
    atomic_init(&f->open_frames, 0);
    return f;
}

NO_INSTRUMENT spn_function *spn_table_find(const void *address) {
    return find((uintptr_t)address);
}

NO_INSTRUMENT spn_function *spn_table_function(const void *address) {
    uintptr_t key = (uintptr_t)address;
    spn_function *f = find(key);
    if (f) return f;
    pthread_mutex_lock(&table_lock);
    f = find(key);
    if (!f) {
        f = make(key);
        if (f) {
            unsigned b = bucket_of(key);
            f->next_in_bucket = atomic_load_explicit(&buckets[b], memory_order_relaxed);
            f->next_listed = listed;
            listed = f;
            atomic_store_explicit(&buckets[b], f, memory_order_release);
        }
        /* A new function: the program moved on, maybe past MPI_Init. */
        spn_mpi_notice();
    }
    pthread_mutex_unlock(&table_lock);
    return f;
}

/* The throttled functions into the file's metadata (docs/FORMAT.md 4.3):
 * "instrument_throttled", one line "<calls> <name>" per function (the
 * name may have blanks; the count never does), the calls recorded. Set
 * again at each new verdict (rare: once per function) and when a call open
 * at the verdict ends (at most one per thread and recursion level), so the
 * file has them whoever finishes the session (exit, the program,
 * MPI_Finalize). */
NO_INSTRUMENT static void publish_throttled(void) {
    pthread_mutex_lock(&table_lock);
    size_t len = 1;
    for (const spn_function *f = listed; f; f = f->next_listed)
        if (atomic_load(&f->state) == SPN_THROTTLED) len += strlen(f->name) + 24;
    char *text = malloc(len);
    if (text) {
        size_t used = 0;
        text[0] = '\0';
        for (const spn_function *f = listed; f; f = f->next_listed) {
            if (atomic_load(&f->state) != SPN_THROTTLED) continue;
            int n = snprintf(text + used, len - used, "%s%llu %s", used ? "\n" : "",
                             (unsigned long long)atomic_load(&f->calls), f->name);
            if (n > 0) used += (size_t)n < len - used ? (size_t)n : len - used - 1;
        }
    }
    pthread_mutex_unlock(&table_lock);
    if (text) (void)sp_set_metadata("instrument_throttled", text);
    free(text);
}

NO_INSTRUMENT int spn_table_open_frame(spn_function *f) {
    atomic_fetch_add(&f->open_frames, 1);
    if (!SPN_SILENCED(atomic_load(&f->state))) return 1;
    atomic_fetch_sub(&f->open_frames, 1);
    return 0;
}

NO_INSTRUMENT void spn_table_drop_frame(spn_function *f) { atomic_fetch_sub(&f->open_frames, 1); }

NO_INSTRUMENT int spn_function_patchable(spn_function *f) {
    int state = atomic_load(&f->state);
    return state == SPN_EXCLUDED || (state == SPN_THROTTLED && atomic_load(&f->open_frames) == 0);
}

NO_INSTRUMENT void spn_table_count(spn_function *f, uint64_t ns) {
    uint64_t calls = atomic_fetch_add_explicit(&f->calls, 1, memory_order_relaxed) + 1;
    uint64_t total = atomic_fetch_add_explicit(&f->total_ns, ns, memory_order_relaxed) + ns;
    /* Closed after the count: a publication that sees no frame open also
     * sees every count. */
    atomic_fetch_sub(&f->open_frames, 1);
    if (calls < config.throttle_calls) return;
    int state = SPN_COUNTING;
    int verdict = total / calls < config.throttle_ns ? SPN_THROTTLED : SPN_KEPT;
    if (atomic_compare_exchange_strong(&f->state, &state, verdict)) state = verdict;
    else if (state != SPN_THROTTLED) return;
    /* A verdict, or a call open at the verdict that ended: the count grew. */
    if (state == SPN_THROTTLED) publish_throttled();
}

NO_INSTRUMENT void spn_table_each_throttled(void (*visit)(const spn_function *, void *),
                                            void *context) {
    pthread_mutex_lock(&table_lock);
    for (const spn_function *f = listed; f; f = f->next_listed)
        if (atomic_load(&f->state) == SPN_THROTTLED) visit(f, context);
    pthread_mutex_unlock(&table_lock);
}

NO_INSTRUMENT void spn_table_fork_prepare(void) { pthread_mutex_lock(&table_lock); }
NO_INSTRUMENT void spn_table_fork_parent(void) { pthread_mutex_unlock(&table_lock); }
NO_INSTRUMENT void spn_table_fork_child(void) { pthread_mutex_unlock(&table_lock); }
