/*
 * records.c - the LIKWID environment of a rank (LIKWID_* variables) and
 * the wire form of a rank's counter records for MPI. The records
 * themselves are owned by the profile (profile/profile.c).
 *
 * Wire form: a flat little blob of tagged items, written and read by the
 * same build, so host byte order and no versioning. A rank's counter
 * results are a few KiB (regions x events), so one Gatherv carries them;
 * the decoder still checks every length against the blob, so a bad blob is
 * an error, never an overread.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "counters/counters.h"

extern char **environ;

static int env_add(spi_profile *profile, uint32_t rank, const char *name, size_t name_len,
                   const char *value) {
    spi_likwid_env *grown = spi_reallocarray(profile->likwid_env, profile->likwid_env_count + 1,
                                             sizeof *grown);
    if (!grown) return SP_ERR_OUT_OF_MEMORY;
    profile->likwid_env = grown;
    spi_likwid_env *e = &profile->likwid_env[profile->likwid_env_count++];
    *e = (spi_likwid_env){.rank = rank, .name = spi_strndup(name, name_len),
                          .value = spi_strdup(value)};
    return e->name && e->value ? SP_OK : SP_ERR_OUT_OF_MEMORY;
}

int spi_likwid_env_collect(uint32_t rank, spi_profile *profile) {
    for (char **p = environ; p && *p; p++) {
        const char *eq = strchr(*p, '=');
        if (!eq || strncmp(*p, "LIKWID_", 7) != 0) continue;
        int status = env_add(profile, rank, *p, (size_t)(eq - *p), eq + 1);
        if (status != SP_OK) return status;
    }
    return SP_OK;
}

/* ---- wire form ------------------------------------------------------------ */

typedef struct blob {
    unsigned char *bytes;
    size_t len;
    size_t capacity;
    bool failed;
} blob;

static void put(blob *b, const void *data, size_t n) {
    if (b->failed) return;
    if (b->len + n > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 1024;
        while (capacity < b->len + n) capacity *= 2;
        unsigned char *grown = spi_reallocarray(b->bytes, capacity, 1);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->len, data, n);
    b->len += n;
}

static void put_u64(blob *b, uint64_t v) { put(b, &v, sizeof v); }
static void put_str(blob *b, const char *s) {
    size_t n = s ? strlen(s) : 0;
    put_u64(b, n);
    put(b, s ? s : "", n);
}
static void put_strs(blob *b, char *const *items, size_t count) {
    put_u64(b, items ? 1 : 0);
    for (size_t i = 0; items && i < count; i++) put_str(b, items[i]);
}

int spi_counters_pack(const spi_profile *p, unsigned char **bytes, size_t *len) {
    blob b = {0};
    put_u64(&b, p->perf_count);
    for (size_t i = 0; i < p->perf_count; i++) {
        const spi_perf_record *r = &p->perf[i];
        put_str(&b, r->region);
        put_u64(&b, (uint64_t)r->calls);
        put_u64(&b, r->counter_count);
        put_strs(&b, r->event_names, r->counter_count);
        put(&b, r->values, r->counter_count * sizeof *r->values);
    }
    put_u64(&b, p->likwid_count);
    for (size_t i = 0; i < p->likwid_count; i++) {
        const spi_likwid_record *r = &p->likwid[i];
        put_str(&b, r->tag);
        put_u64(&b, (uint64_t)r->group_id);
        put_str(&b, r->group_name);
        put_str(&b, r->source);
        put_u64(&b, r->event_count);
        put_u64(&b, r->metric_count);
        put_u64(&b, r->thread_count);
        put_strs(&b, r->event_names, r->event_count);
        put_strs(&b, r->counter_names, r->event_count);
        put_strs(&b, r->metric_names, r->metric_count);
        put(&b, r->cpus, r->thread_count * sizeof *r->cpus);
        put(&b, r->times, r->thread_count * sizeof *r->times);
        put(&b, r->call_counts, r->thread_count * sizeof *r->call_counts);
        put(&b, r->events, r->event_count * r->thread_count * sizeof *r->events);
        put(&b, r->metrics, r->metric_count * r->thread_count * sizeof *r->metrics);
    }
    put_u64(&b, p->likwid_env_count);
    for (size_t i = 0; i < p->likwid_env_count; i++) {
        put_str(&b, p->likwid_env[i].name);
        put_str(&b, p->likwid_env[i].value);
    }
    if (b.failed) {
        spi_free(b.bytes);
        return SP_ERR_OUT_OF_MEMORY;
    }
    *bytes = b.bytes;
    *len = b.len;
    return SP_OK;
}

typedef struct cursor {
    const unsigned char *at;
    size_t left;
    int status;
} cursor;

static bool take(cursor *c, void *out, size_t n) {
    if (c->status != SP_OK || n > c->left) {
        if (c->status == SP_OK) c->status = SP_ERR_CORRUPT;
        return false;
    }
    if (n) memcpy(out, c->at, n);
    c->at += n;
    c->left -= n;
    return true;
}

static uint64_t take_u64(cursor *c) {
    uint64_t v = 0;
    take(c, &v, sizeof v);
    return v;
}

/* A count of n elements of `size` bytes must fit in what is left. */
static size_t take_count(cursor *c, size_t size) {
    uint64_t n = take_u64(c);
    if (c->status == SP_OK && size && n > c->left / size) c->status = SP_ERR_CORRUPT;
    return c->status == SP_OK ? (size_t)n : 0;
}

static char *take_str(cursor *c) {
    size_t n = take_count(c, 1);
    if (c->status != SP_OK) return NULL;
    char *s = spi_strndup((const char *)c->at, n);
    if (!s) c->status = SP_ERR_OUT_OF_MEMORY;
    else c->at += n, c->left -= n;
    return s;
}

static char **take_strs(cursor *c, size_t count) {
    if (take_u64(c) == 0 || c->status != SP_OK) return NULL;
    char **items = spi_calloc(count ? count : 1, sizeof *items);
    if (!items) c->status = SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; items && i < count && c->status == SP_OK; i++) items[i] = take_str(c);
    return items;
}

static void *take_array(cursor *c, size_t count, size_t size) {
    if (c->status != SP_OK) return NULL;
    if (size && count > c->left / size) {
        c->status = SP_ERR_CORRUPT;
        return NULL;
    }
    void *a = spi_calloc(count ? count : 1, size);
    if (!a) c->status = SP_ERR_OUT_OF_MEMORY;
    else take(c, a, count * size);
    return a;
}

int spi_counters_unpack(const unsigned char *bytes, size_t len, uint32_t rank, spi_profile *p) {
    cursor c = {bytes, len, SP_OK};
    size_t n = take_count(&c, 3 * sizeof(uint64_t));
    for (size_t i = 0; i < n && c.status == SP_OK; i++) {
        spi_perf_record *grown = spi_reallocarray(p->perf, p->perf_count + 1, sizeof *grown);
        if (!grown) return SP_ERR_OUT_OF_MEMORY;
        p->perf = grown;
        spi_perf_record *r = &p->perf[p->perf_count++];
        *r = (spi_perf_record){.rank = rank};
        r->region = take_str(&c);
        r->calls = (int64_t)take_u64(&c);
        size_t k = take_count(&c, sizeof(uint64_t));
        r->event_names = take_strs(&c, k);
        r->counter_count = r->event_names ? k : 0;
        r->values = take_array(&c, k, sizeof *r->values);
    }
    n = take_count(&c, 7 * sizeof(uint64_t));
    for (size_t i = 0; i < n && c.status == SP_OK; i++) {
        spi_likwid_record *r = spi_likwid_record_add(p, rank);
        if (!r) return SP_ERR_OUT_OF_MEMORY;
        r->tag = take_str(&c);
        r->group_id = (int64_t)take_u64(&c);
        r->group_name = take_str(&c);
        r->source = take_str(&c);
        size_t events = take_count(&c, 0), metrics = take_count(&c, 0),
               threads = take_count(&c, sizeof(int64_t));
        if (c.status != SP_OK) break;
        r->event_names = take_strs(&c, events);
        r->counter_names = take_strs(&c, events);
        r->metric_names = take_strs(&c, metrics);
        r->event_count = events;
        r->metric_count = metrics;
        r->thread_count = threads;
        r->cpus = take_array(&c, threads, sizeof *r->cpus);
        r->times = take_array(&c, threads, sizeof *r->times);
        r->call_counts = take_array(&c, threads, sizeof *r->call_counts);
        if (c.status == SP_OK && threads && events > SIZE_MAX / threads) c.status = SP_ERR_CORRUPT;
        r->events = take_array(&c, events * threads, sizeof *r->events);
        if (c.status == SP_OK && threads && metrics > SIZE_MAX / threads) c.status = SP_ERR_CORRUPT;
        r->metrics = take_array(&c, metrics * threads, sizeof *r->metrics);
    }
    n = take_count(&c, 2 * sizeof(uint64_t));
    for (size_t i = 0; i < n && c.status == SP_OK; i++) {
        char *name = take_str(&c), *value = take_str(&c);
        if (c.status == SP_OK) {
            spi_likwid_env *grown = spi_reallocarray(p->likwid_env, p->likwid_env_count + 1,
                                                     sizeof *grown);
            if (!grown) c.status = SP_ERR_OUT_OF_MEMORY;
            else {
                p->likwid_env = grown;
                p->likwid_env[p->likwid_env_count++] = (spi_likwid_env){rank, name, value};
                continue;
            }
        }
        spi_free(name);
        spi_free(value);
    }
    return c.status;
}
