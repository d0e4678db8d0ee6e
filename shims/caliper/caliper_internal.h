/*
 * caliper_internal.h - what the files of the Caliper shim share: the
 * attribute table (caliper_attributes.c), the region stack and session
 * (caliper.c), and the configuration no-ops (caliper_config.c).
 */
#ifndef SPC_CALIPER_INTERNAL_H
#define SPC_CALIPER_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>

#include "caliper/cali.h"
#include "shim_common.h"

extern sps_shim spc_shim;

/* Notes of the Caliper shim (one bit each, see shim_common.h). */
enum {
    SPC_NOTE_NO_NAME = SPS_NOTE_FIRST,
    SPC_NOTE_END_MISMATCH,
    SPC_NOTE_END_NOTHING,
    SPC_NOTE_UNKNOWN_ATTRIBUTE,
    SPC_NOTE_ATTRIBUTE_LIMIT,
    SPC_NOTE_SET,
    SPC_NOTE_CONFIG,
    SPC_NOTE_OUT_OF_MEMORY
};

/* Attributes: ids are indexes into one table that only grows; an entry
 * never changes once its id was handed out. The first four are Caliper's
 * pre-defined ones, valid before any call. */
#define SPC_ATTRIBUTE_MAX 4096
enum { SPC_ATTR_REGION = 0, SPC_ATTR_FUNCTION, SPC_ATTR_LOOP, SPC_ATTR_STATEMENT };

typedef struct spc_attribute {
    const char *name;
    size_t len;
    int type;           /* cali_attr_type */
    int properties;
    atomic_int region;  /* the region named after the attribute, -1 until first needed */
    atomic_int was_set; /* cali_set* used it: a cali_end with nothing open is fine */
} spc_attribute;

/* The attribute of an id, or NULL for one never handed out. Any thread. */
spc_attribute *spc_attribute_get(cali_id_t id);
/* The region named after the attribute (for cali_begin and the numeric
 * begins), or SP_INVALID_REGION. */
int spc_attribute_region(spc_attribute *attribute);
/* Find (create == 0) or find-or-create an attribute by sized name; the
 * CALI_INV_ID cases are noted. Any thread (takes a lock). */
cali_id_t spc_attribute_lookup(const char *name, size_t len, int type, int properties,
                               int create);

/* The recording side (caliper.c), for the byname calls and Fortran. */
void spc_ensure_started(const char *language);
void spc_begin_named(cali_id_t attr, const char *name, size_t len, const char *call);
void spc_end_named(cali_id_t attr, const char *name, size_t len, const char *call);

#endif /* SPC_CALIPER_INTERNAL_H */
