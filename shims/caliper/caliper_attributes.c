/*
 * caliper_attributes.c - Caliper attributes: ids, names, types and
 * properties, as cali_create_attribute and friends hand them out.
 *
 * The table only grows and an entry never changes once published: readers
 * (every annotation by attribute) check the id against the published count
 * with one acquire load and read the entry without a lock; writers
 * (attribute creation, rare) serialise on a mutex and publish an entry by
 * storing the new count after it is complete. Names are copied and kept
 * for the life of the process, as Caliper keeps its attributes.
 *
 * Bounded at SPC_ATTRIBUTE_MAX (4096): a program that makes one attribute
 * per loop (CALI_MARK_LOOP_BEGIN does) stays far below it; one that makes
 * one per iteration would otherwise grow without bound. Past the bound
 * creation returns CALI_INV_ID, noted once, and annotations through it
 * record nothing.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

#include "caliper_internal.h"

static spc_attribute table[SPC_ATTRIBUTE_MAX] = {
    [SPC_ATTR_REGION] = {"region", 6, CALI_TYPE_STRING, CALI_ATTR_NESTED, -1, 0},
    [SPC_ATTR_FUNCTION] = {"function", 8, CALI_TYPE_STRING, CALI_ATTR_NESTED, -1, 0},
    [SPC_ATTR_LOOP] = {"loop", 4, CALI_TYPE_STRING, CALI_ATTR_NESTED, -1, 0},
    [SPC_ATTR_STATEMENT] = {"statement", 9, CALI_TYPE_STRING, CALI_ATTR_NESTED, -1, 0},
};
static atomic_size_t published = SPC_ATTR_STATEMENT + 1;
static pthread_mutex_t creating = PTHREAD_MUTEX_INITIALIZER;

SPS_EXPORT cali_id_t cali_annotation_attr_id = SPC_ATTR_REGION;
SPS_EXPORT cali_id_t cali_function_attr_id = SPC_ATTR_FUNCTION;
SPS_EXPORT cali_id_t cali_loop_attr_id = SPC_ATTR_LOOP;
SPS_EXPORT cali_id_t cali_statement_attr_id = SPC_ATTR_STATEMENT;

spc_attribute *spc_attribute_get(cali_id_t id) {
    return id < atomic_load_explicit(&published, memory_order_acquire) ? &table[id] : NULL;
}

int spc_attribute_region(spc_attribute *attribute) {
    int region = atomic_load_explicit(&attribute->region, memory_order_relaxed);
    if (__builtin_expect(region >= 0, 1)) return region;
    /* Two threads may both resolve it: the same name gives the same handle. */
    region = sp_region_n(attribute->name, attribute->len);
    if (region != SP_INVALID_REGION)
        atomic_store_explicit(&attribute->region, region, memory_order_relaxed);
    return region;
}

static cali_id_t find_locked(const char *name, size_t len, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (table[i].len == len && memcmp(table[i].name, name, len) == 0) return i;
    return CALI_INV_ID;
}

cali_id_t spc_attribute_lookup(const char *name, size_t len, int type, int properties,
                               int create) {
    if (len == 0) {
        sps_note(&spc_shim, SPC_NOTE_NO_NAME,
                 "an attribute or region with a NULL or empty name records nothing");
        return CALI_INV_ID;
    }
    pthread_mutex_lock(&creating);
    size_t count = atomic_load_explicit(&published, memory_order_relaxed);
    cali_id_t id = find_locked(name, len, count);
    if (id == CALI_INV_ID && create) {
        char *copy = count < SPC_ATTRIBUTE_MAX ? malloc(len + 1) : NULL;
        if (copy) {
            memcpy(copy, name, len);
            copy[len] = '\0';
            spc_attribute *entry = &table[count];
            entry->name = copy;
            entry->len = len;
            entry->type = type;
            entry->properties = properties;
            atomic_init(&entry->region, -1);
            atomic_init(&entry->was_set, 0);
            atomic_store_explicit(&published, count + 1, memory_order_release);
            id = count;
        } else {
            sps_note(&spc_shim, SPC_NOTE_ATTRIBUTE_LIMIT,
                     "cali_create_attribute(\"%.*s\"): %s; annotations through it record "
                     "nothing", (int)(len < 64 ? len : 64), name,
                     count < SPC_ATTRIBUTE_MAX ? "out of memory"
                                               : "more than 4096 attributes in one process");
        }
    }
    pthread_mutex_unlock(&creating);
    return id;
}

SPS_EXPORT cali_id_t cali_create_attribute(const char *name, cali_attr_type type,
                                           int properties) {
    return spc_attribute_lookup(name, sps_name_len(&spc_shim, name), type, properties, 1);
}

SPS_EXPORT cali_id_t cali_find_attribute(const char *name) {
    size_t len = sps_name_len(&spc_shim, name);
    return len ? spc_attribute_lookup(name, len, CALI_TYPE_INV, 0, 0) : CALI_INV_ID;
}

SPS_EXPORT const char *cali_attribute_name(cali_id_t attr_id) {
    spc_attribute *attribute = spc_attribute_get(attr_id);
    return attribute ? attribute->name : NULL;
}

SPS_EXPORT cali_attr_type cali_attribute_type(cali_id_t attr_id) {
    spc_attribute *attribute = spc_attribute_get(attr_id);
    return attribute ? (cali_attr_type)attribute->type : CALI_TYPE_INV;
}

SPS_EXPORT int cali_attribute_properties(cali_id_t attr_id) {
    spc_attribute *attribute = spc_attribute_get(attr_id);
    return attribute ? attribute->properties : 0;
}

SPS_EXPORT cali_id_t cali_make_loop_iteration_attribute(const char *name) {
    static const char prefix[] = "iteration#";
    char full[sizeof prefix + SPS_NAME_MAX];
    size_t len = sps_name_len(&spc_shim, name);
    if (len == 0) return spc_attribute_lookup(name, 0, CALI_TYPE_INT, 0, 1);
    memcpy(full, prefix, sizeof prefix - 1);
    memcpy(full + sizeof prefix - 1, name, len);
    /* The whole name obeys the bound too: cut at a character boundary. */
    full[sizeof prefix - 1 + len] = '\0';
    len = sps_name_len(&spc_shim, full);
    return spc_attribute_lookup(full, len, CALI_TYPE_INT, CALI_ATTR_ASVALUE, 1);
}
