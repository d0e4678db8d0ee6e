/*
 * path_pool.c - many ranks' call paths folded into one table of distinct
 * paths by name (path_pool.h).
 *
 * Each rank's paths are walked once in their order (parents first): a path
 * finds its entry by (parent's entry, name) in an open-addressing table,
 * and its sums go into the entry at once. The per-rank spread needs the
 * rank's total on the entry (a rank's threads add up), so the rank's sums
 * are kept beside the entries and moved into the spread when the rank is
 * done; only the entries the rank touched are visited then. Nothing here
 * is kept per rank.
 */
#include "profile/path_pool.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/sat_math.h"

void spi_path_pool_init(spi_path_pool *pool) { memset(pool, 0, sizeof *pool); }

void spi_path_pool_free(spi_path_pool *pool) {
    for (size_t i = 0; i < pool->name_count; i++) spi_free(pool->names[i]);
    spi_free(pool->names);
    spi_free(pool->paths);
    spi_free(pool->ranks);
    spi_free(pool->slots);
    spi_free(pool->name_slots);
    spi_free(pool->means);
    spi_free(pool->rank_total);
    spi_free(pool->rank_exclusive);
    spi_free(pool->added_by);
    spi_free(pool->touched);
    spi_path_pool_init(pool);
}

double spi_rank_spread_imbalance(const spi_rank_spread *s) {
    if (s->positive_ranks < 2) return 0.0;
    return (double)s->maximum / (s->positive_sum / (double)s->positive_ranks);
}

/* ---- names: text -> index ---------------------------------------------- */

static uint64_t text_hash(const char *text) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *text; text++) h = (h ^ (unsigned char)*text) * 1099511628211ull;
    return h;
}

static int name_slots_grow(spi_path_pool *pool) {
    size_t capacity = pool->name_slot_capacity ? 2 * pool->name_slot_capacity : 64;
    size_t *slots = spi_calloc(capacity, sizeof *slots);
    if (!slots) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < pool->name_count; i++) {
        size_t j = (size_t)text_hash(pool->names[i]) & (capacity - 1);
        while (slots[j]) j = (j + 1) & (capacity - 1);
        slots[j] = i + 1;
    }
    spi_free(pool->name_slots);
    pool->name_slots = slots;
    pool->name_slot_capacity = capacity;
    return SP_OK;
}

static int name_intern(spi_path_pool *pool, const char *text, uint32_t *index) {
    if (2 * (pool->name_count + 1) > pool->name_slot_capacity && name_slots_grow(pool) != SP_OK)
        return SP_ERR_OUT_OF_MEMORY;
    size_t mask = pool->name_slot_capacity - 1, j = (size_t)text_hash(text) & mask;
    for (; pool->name_slots[j]; j = (j + 1) & mask)
        if (strcmp(pool->names[pool->name_slots[j] - 1], text) == 0) {
            *index = (uint32_t)(pool->name_slots[j] - 1);
            return SP_OK;
        }
    if (pool->name_count == pool->name_capacity) {
        size_t capacity = pool->name_capacity ? 2 * pool->name_capacity : 16;
        char **names = spi_reallocarray(pool->names, capacity, sizeof *names);
        if (!names) return SP_ERR_OUT_OF_MEMORY;
        pool->names = names;
        pool->name_capacity = capacity;
    }
    size_t len = strlen(text) + 1;
    char *copy = spi_malloc(len);
    if (!copy) return SP_ERR_OUT_OF_MEMORY;
    memcpy(copy, text, len);
    pool->names[pool->name_count] = copy;
    pool->name_slots[j] = ++pool->name_count;
    *index = (uint32_t)(pool->name_count - 1);
    return SP_OK;
}

/* ---- entries: (parent entry, name) -> entry ------------------------------ */

static size_t entry_hash(int64_t parent, uint32_t name, size_t mask) {
    uint64_t h = (uint64_t)(parent + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)name * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    return (size_t)h & mask;
}

static int slots_grow(spi_path_pool *pool) {
    size_t capacity = pool->slot_capacity ? 2 * pool->slot_capacity : 64;
    size_t *slots = spi_calloc(capacity, sizeof *slots);
    if (!slots) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < pool->count; i++) {
        size_t j = entry_hash(pool->paths[i].parent, pool->paths[i].region, capacity - 1);
        while (slots[j]) j = (j + 1) & (capacity - 1);
        slots[j] = i + 1;
    }
    spi_free(pool->slots);
    pool->slots = slots;
    pool->slot_capacity = capacity;
    return SP_OK;
}

/* Every per-entry array grows together. */
#define GROW(field, capacity)                                                      \
    do {                                                                           \
        void *grown = spi_reallocarray(pool->field, capacity, sizeof *pool->field); \
        if (!grown) return SP_ERR_OUT_OF_MEMORY;                                   \
        pool->field = grown;                                                       \
    } while (0)

static int entries_grow(spi_path_pool *pool) {
    size_t capacity = pool->capacity ? 2 * pool->capacity : 32;
    GROW(paths, capacity);
    GROW(ranks, capacity);
    GROW(means, capacity);
    GROW(rank_total, capacity);
    GROW(rank_exclusive, capacity);
    GROW(added_by, capacity);
    GROW(touched, capacity);
    pool->capacity = capacity;
    return SP_OK;
}

static int entry_get(spi_path_pool *pool, int64_t parent, uint32_t name, size_t *out) {
    if (2 * (pool->count + 1) > pool->slot_capacity && slots_grow(pool) != SP_OK)
        return SP_ERR_OUT_OF_MEMORY;
    size_t mask = pool->slot_capacity - 1, j = entry_hash(parent, name, mask);
    for (; pool->slots[j]; j = (j + 1) & mask) {
        const spi_call_path *p = &pool->paths[pool->slots[j] - 1];
        if (p->parent == parent && p->region == name) {
            *out = pool->slots[j] - 1;
            return SP_OK;
        }
    }
    if (pool->count == pool->capacity && entries_grow(pool) != SP_OK) return SP_ERR_OUT_OF_MEMORY;
    size_t id = pool->count++;
    pool->paths[id] = (spi_call_path){.rank = 0, .region = name, .parent = parent, .thread = -1,
                                      .minimum = INT64_MAX, .maximum = INT64_MIN,
                                      .start_minimum = INT64_MAX, .end_maximum = INT64_MIN};
    pool->ranks[id] = (spi_path_ranks){0};
    pool->means[id] = 0.0;
    pool->added_by[id] = 0;
    pool->slots[j] = id + 1;
    *out = id;
    return SP_OK;
}

/* ---- folding ---------------------------------------------------------------- */

static void fold_path(spi_path_pool *pool, size_t id, const spi_call_path *path) {
    spi_call_path *into = &pool->paths[id];
    if (path->count > 0) {
        /* Chan et al.: exact pooling of (count, mean, m2), in the order
         * and the arithmetic of the summary table's own pooling */
        uint64_t calls = into->count, n = calls + path->count;
        double path_mean = (double)path->total / (double)path->count;
        double delta = path_mean - pool->means[id];
        into->m2 += path->m2 + delta * delta * (double)calls * (double)path->count / (double)n;
        pool->means[id] += delta * (double)path->count / (double)n;
    }
    into->count += path->count;
    into->recursions += path->recursions;
    into->total = spi_sat_add_i64(into->total, path->total);
    into->exclusive = spi_sat_add_i64(into->exclusive, path->exclusive);
    if (path->minimum < into->minimum) into->minimum = path->minimum;
    if (path->maximum > into->maximum) into->maximum = path->maximum;
    if (path->start_minimum < into->start_minimum) into->start_minimum = path->start_minimum;
    if (path->end_maximum > into->end_maximum) into->end_maximum = path->end_maximum;
    /* the threads view (issue 34) adds up over ranks as the table would */
    into->threads = into->threads > UINT32_MAX - path->threads ? UINT32_MAX
                                                              : into->threads + path->threads;
    into->other_threads = spi_sat_add_i64(into->other_threads, path->other_threads);
    if (path->recursions > 0) pool->ranks[id].recursive = true;
}

static void spread_add(spi_rank_spread *s, int64_t value, bool first) {
    if (first || value < s->minimum) s->minimum = value;
    if (first || value > s->maximum) s->maximum = value;
    s->sum += (double)value;
    if (value > 0) {
        s->positive_sum += (double)value;
        s->positive_ranks++;
    }
}

/* The paths are checked before anything is folded: a damaged message
 * leaves the pool as it was. */
static bool paths_valid(const spi_call_path *paths, size_t count, const char *names,
                        size_t name_bytes) {
    for (size_t i = 0; i < count; i++) {
        if (paths[i].region >= name_bytes) return false;
        if (!memchr(names + paths[i].region, '\0', name_bytes - paths[i].region)) return false;
        if (paths[i].parent >= (int64_t)i || paths[i].parent < -1) return false;
    }
    return true;
}

int spi_path_pool_add_rank(spi_path_pool *pool, uint32_t rank, const spi_call_path *paths,
                           size_t count, const char *names, size_t name_bytes) {
    if (!paths_valid(paths, count, names, name_bytes)) return SP_ERR_CORRUPT;
    /* the rank's path index -> entry (bounded by one rank's paths) */
    int64_t *entry_of = spi_calloc(count + 1, sizeof *entry_of);
    if (!entry_of) return SP_ERR_OUT_OF_MEMORY;
    int status = SP_OK;
    for (size_t i = 0; i < count && status == SP_OK; i++) {
        const spi_call_path *path = &paths[i];
        uint32_t name = 0;
        status = name_intern(pool, names + path->region, &name);
        if (status != SP_OK) break;
        int64_t parent = path->parent >= 0 ? entry_of[path->parent] : -1;
        size_t id = 0;
        if (parent >= 0 && pool->paths[parent].region == name) {
            id = (size_t)parent; /* a run of one region is one entry */
            pool->ranks[id].recursive = true;
        } else {
            status = entry_get(pool, parent, name, &id);
            if (status != SP_OK) break;
        }
        entry_of[i] = (int64_t)id;
        fold_path(pool, id, path);
        if (pool->added_by[id] != rank + 1) {
            pool->added_by[id] = rank + 1;
            pool->rank_total[id] = 0;
            pool->rank_exclusive[id] = 0;
            pool->touched[pool->touched_count++] = id;
        }
        pool->rank_total[id] = spi_sat_add_i64(pool->rank_total[id], path->total);
        pool->rank_exclusive[id] = spi_sat_add_i64(pool->rank_exclusive[id], path->exclusive);
    }
    spi_free(entry_of);
    if (status != SP_OK) return status;
    for (size_t t = 0; t < pool->touched_count; t++) {
        size_t id = pool->touched[t];
        spi_path_ranks *r = &pool->ranks[id];
        bool first = r->ranks == 0;
        spread_add(&r->inclusive, pool->rank_total[id], first);
        spread_add(&r->exclusive, pool->rank_exclusive[id], first);
        r->ranks++;
    }
    pool->touched_count = 0;
    return SP_OK;
}
