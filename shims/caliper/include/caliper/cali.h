/*
 * caliper/cali.h - Caliper's annotation API over scope-profiler
 * (libscopeprofiler_caliper).
 *
 * Overview
 * --------
 * A program annotated for Caliper (LLNL's performance introspection
 * library) builds unchanged against this header and links
 * libscopeprofiler_caliper instead of libcaliper: its regions become
 * scope-profiler regions of the same names, with the real call tree,
 * threads and MPI ranks, written to one HDF5 file per job. This header is
 * ours; it declares the annotation calls Caliper codes make, with Caliper's
 * names, types and values. It installs into a directory of its own
 * (include/scope_profiler/shims/caliper), so it never shadows a real Caliper.
 *
 * Typical use (unchanged Caliper code):
 *
 *     #include <caliper/cali.h>
 *     CALI_MARK_BEGIN("main");           // the first annotation starts a session
 *     CALI_MARK_LOOP_BEGIN(loop, "timeloop");
 *     for (int i = 0; i < n; i++) {
 *         CALI_MARK_ITERATION_BEGIN(loop, i);   // a call of "iteration#timeloop"
 *         ...
 *         CALI_MARK_ITERATION_END(loop);
 *     }
 *     CALI_MARK_LOOP_END(loop);
 *     CALI_MARK_END("main");
 *     // the file is written at exit, or inside MPI_Finalize
 *
 * How Caliper concepts map:
 *   - a region (cali_begin_region, CALI_MARK_BEGIN, phases, communication
 *     regions, functions, loops) is a region of the same name;
 *   - an attribute annotation names a region too: cali_begin_string(attr,
 *     v) opens region "v"; cali_begin(attr), cali_begin_int and
 *     cali_begin_double open the region named after the attribute (a loop
 *     iteration is a call of "iteration#<loop>"); cali_end(attr) closes the
 *     innermost region the thread opened through that attribute;
 *   - cali_set* sets a value, not a region: accepted, not recorded (noted
 *     once);
 *   - configuration (cali_config_*, config sets, channels, cali_flush,
 *     cali::ConfigManager) is accepted and ignored, with one message: where
 *     the profile goes is scope-profiler's choice (SCOPE_PROFILER_FILE, else
 *     profiling_data.h5; every SCOPE_PROFILER_* variable applies);
 *   - the session starts at the first annotation (or cali_init) unless one
 *     is running, and ends at exit, or inside MPI_Finalize when MPI was
 *     running at the first annotation (then the file holds every rank).
 * Names longer than 1024 bytes are cut (noted once).
 *
 * Errors: Caliper's annotation calls return nothing. An end whose name is
 * not the innermost open region of the thread is reported once and, as in
 * Caliper, closes that innermost region; an end with nothing open is
 * reported once and changes nothing. The program always goes on.
 * SCOPE_PROFILER_QUIET=1 silences every message.
 *
 * Thread-safety: annotation calls may be made from any thread at any time;
 * each thread has its own region stack. Attribute creation takes a lock.
 * cali_init and the configuration calls: from one thread, as in Caliper.
 *
 * C++: the CALI_CXX_MARK_* macros and the cali::ConfigManager,
 * cali::ScopeAnnotation, cali::Function, cali::Loop and cali::Annotation
 * classes are inline code over these functions (cali_macros.h). Fortran:
 * `use caliper_mod` (caliper_mod.f90).
 */
#ifndef CALI_CALI_H
#define CALI_CALI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An attribute (or channel) id. */
typedef uint64_t cali_id_t;

/** The invalid id: what lookups of unknown attributes return. */
#define CALI_INV_ID 0xFFFFFFFFFFFFFFFFULL

/** Data type of an attribute (Caliper's values). */
typedef enum {
    CALI_TYPE_INV = 0,
    CALI_TYPE_USR = 1,
    CALI_TYPE_INT = 2,
    CALI_TYPE_UINT = 3,
    CALI_TYPE_STRING = 4,
    CALI_TYPE_ADDR = 5,
    CALI_TYPE_DOUBLE = 6,
    CALI_TYPE_BOOL = 7,
    CALI_TYPE_TYPE = 8,
    CALI_TYPE_PTR = 9
} cali_attr_type;

/** Attribute property flags (Caliper's values; kept, not acted upon). */
typedef enum {
    CALI_ATTR_DEFAULT = 0,
    CALI_ATTR_ASVALUE = 1,
    CALI_ATTR_NOMERGE = 2,
    CALI_ATTR_SCOPE_PROCESS = 12,
    CALI_ATTR_SCOPE_THREAD = 20,
    CALI_ATTR_SCOPE_TASK = 24,
    CALI_ATTR_SKIP_EVENTS = 64,
    CALI_ATTR_HIDDEN = 128,
    CALI_ATTR_NESTED = 256,
    CALI_ATTR_GLOBAL = 512,
    CALI_ATTR_UNALIGNED = 1024
} cali_attr_properties;

/** Caliper's error codes (for code that names them). */
typedef enum {
    CALI_SUCCESS = 0,
    CALI_EBUSY,
    CALI_ELOCKED,
    CALI_EINV,
    CALI_ETYPE,
    CALI_ESTACK
} cali_err;

/** cali_create_channel flags (accepted, ignored). */
typedef enum {
    CALI_CHANNEL_LEAVE_INACTIVE = 1,
    CALI_CHANNEL_ALLOW_READ_ENV = 2
} cali_channel_opt;

/** cali_flush flags (accepted, ignored). */
typedef enum { CALI_FLUSH_CLEAR_BUFFERS = 1 } cali_flush_opt;

/** A configuration set (cali_create_configset): opaque, and empty here. */
typedef struct _cali_configset_t *cali_configset_t;

/* The pre-defined attributes the macros use (fixed ids, valid before any
 * call): "region" (regions), "function", "loop" and "statement". */
extern cali_id_t cali_annotation_attr_id;
extern cali_id_t cali_function_attr_id;
extern cali_id_t cali_loop_attr_id;
extern cali_id_t cali_statement_attr_id;

/* ---- Regions --------------------------------------------------------------- */

/**
 * Open a call of region `name` on the calling thread, nested in its
 * innermost open region (the first annotation of the process starts the
 * session). NULL or "" records nothing (noted once). Any thread.
 */
void cali_begin_region(const char *name);

/**
 * Close the thread's innermost region opened by cali_begin_region (or
 * CALI_MARK_BEGIN, CALI_CXX_MARK_SCOPE, a phase or comm region). When its
 * name is not `name`, the mismatch is reported once and that innermost
 * region is closed anyway (Caliper's rule); with none open, reported once,
 * nothing changes. Any thread.
 */
void cali_end_region(const char *name);

/** A phase (Caliper: a long-running region): a region like any other. */
void cali_begin_phase(const char *name);
/** Close a phase, as cali_end_region. */
void cali_end_phase(const char *name);
/** A communication region: a region like any other. */
void cali_begin_comm_region(const char *name);
/** Close a communication region, as cali_end_region. */
void cali_end_comm_region(const char *name);

/* ---- Attributes ------------------------------------------------------------ */

/**
 * The id of the attribute `name`, created if new (an existing name keeps
 * its first type and properties, as in Caliper). Up to 4096 attributes per
 * process; past that, or for a NULL/empty name, CALI_INV_ID (noted once).
 * Any thread (takes a lock).
 */
cali_id_t cali_create_attribute(const char *name, cali_attr_type type, int properties);

/** The id of attribute `name`, or CALI_INV_ID. Any thread. */
cali_id_t cali_find_attribute(const char *name);

/** The name of an attribute (owned by the library), or NULL for an unknown id. */
const char *cali_attribute_name(cali_id_t attr_id);

/** The type an attribute was created with, or CALI_TYPE_INV for an unknown id. */
cali_attr_type cali_attribute_type(cali_id_t attr_id);

/** The properties an attribute was created with (0 for an unknown id). */
int cali_attribute_properties(cali_id_t attr_id);

/**
 * The attribute CALI_MARK_LOOP_BEGIN uses for iteration numbers:
 * "iteration#<name>", created if new. Returns its id (CALI_INV_ID as
 * cali_create_attribute).
 */
cali_id_t cali_make_loop_iteration_attribute(const char *name);

/* ---- Annotation by attribute --------------------------------------------------
 * Each begin opens a call (see "How Caliper concepts map" above) and
 * remembers which attribute opened it; an unknown attribute id records
 * nothing (noted once). Any thread. */

/** Open the region named after attribute `attr` (Caliper: value true). */
void cali_begin(cali_id_t attr);
/** Open the region named after `attr` (the value is not part of the name). */
void cali_begin_double(cali_id_t attr, double val);
/** Open the region named after `attr` (the value is not part of the name). */
void cali_begin_int(cali_id_t attr, int val);
/** Open region `val` (NULL/"" records nothing, noted once). */
void cali_begin_string(cali_id_t attr, const char *val);

/**
 * Close the innermost call the thread opened through `attr`. None open:
 * reported once (unless the attribute was only ever set with cali_set*),
 * nothing changes.
 */
void cali_end(cali_id_t attr);

/**
 * cali_end, checking that the innermost call of `attr` is region `val`; a
 * mismatch is reported once and that call is closed anyway (Caliper's rule).
 */
void cali_safe_end_string(cali_id_t attr, const char *val);

/** Set a value: not a region. Accepted and not recorded (noted once). */
void cali_set(cali_id_t attr, const void *value, size_t size);
/** As cali_set. */
void cali_set_double(cali_id_t attr, double val);
/** As cali_set. */
void cali_set_int(cali_id_t attr, int val);
/** As cali_set. */
void cali_set_string(cali_id_t attr, const char *val);

/** cali_begin for the attribute named `attr_name` (created if new). */
void cali_begin_byname(const char *attr_name);
/** cali_begin_double by attribute name. */
void cali_begin_double_byname(const char *attr_name, double val);
/** cali_begin_int by attribute name. */
void cali_begin_int_byname(const char *attr_name, int val);
/** cali_begin_string by attribute name. */
void cali_begin_string_byname(const char *attr_name, const char *val);
/** cali_set_double by attribute name (not recorded, as cali_set). */
void cali_set_double_byname(const char *attr_name, double val);
/** cali_set_int by attribute name (not recorded). */
void cali_set_int_byname(const char *attr_name, int val);
/** cali_set_string by attribute name (not recorded). */
void cali_set_string_byname(const char *attr_name, const char *val);
/** cali_end for the attribute named `attr_name` (unknown name: reported once). */
void cali_end_byname(const char *attr_name);

/* ---- Runtime configuration, channels, flushing: accepted and ignored ---------
 * Each is a no-op; the first such call of the process prints one message
 * saying where the profile goes instead. From one thread, as in Caliper. */

/** Ignored (one message per process for all configuration calls). */
void cali_config_preset(const char *key, const char *value);
/** Ignored. */
void cali_config_set(const char *key, const char *value);
/** Ignored. */
void cali_config_define_profile(const char *name, const char *keyvallist[][2]);
/** Ignored. */
void cali_config_allow_read_env(int allow);
/** Ignored; returns NULL (an empty set, accepted by every call below). */
cali_configset_t cali_create_configset(const char *keyvallist[][2]);
/** Ignored. */
void cali_delete_configset(cali_configset_t cfg);
/** Ignored. */
void cali_configset_set(cali_configset_t cfg, const char *key, const char *value);
/** Ignored; returns 0 (every channel is the one session). */
cali_id_t cali_create_channel(const char *name, int flags, const cali_configset_t cfg);
/** Ignored. */
void cali_delete_channel(cali_id_t chn_id);
/** Ignored. */
void cali_activate_channel(cali_id_t chn_id);
/** Ignored (recording cannot be paused per channel). */
void cali_deactivate_channel(cali_id_t chn_id);
/** 1 while the session records, else 0. */
int cali_channel_is_active(cali_id_t chn_id);
/** Ignored: the file is written when the session ends. */
void cali_flush(int flush_opts);
/** Ignored, as cali_flush. */
void cali_channel_flush(cali_id_t chn_id, int flush_opts);

/* ---- Runtime ---------------------------------------------------------------- */

/** Start the session now (otherwise the first annotation does). */
void cali_init(void);
/** 1 once cali_init or an annotation ran, else 0. */
int cali_is_initialized(void);
/** Caliper's MPI setup: nothing to do here (MPI is found by the core). */
void cali_mpi_init(void);

/**
 * For the C++ classes (cali_macros.h): note once that configuration through
 * `call` (e.g. "cali::ConfigManager") is accepted and ignored, as the C
 * configuration calls are. Any thread.
 */
void sp_caliper_config_ignored(const char *call);

#ifdef __cplusplus
} /* extern "C" */
#endif

#include "cali_macros.h"

#endif /* CALI_CALI_H */
