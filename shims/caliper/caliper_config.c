/*
 * caliper_config.c - the Caliper calls that configure, flush or set values:
 * accepted and ignored.
 *
 * Caliper codes configure measurement in the program (cali_config_set,
 * config sets and channels, cali::ConfigManager with "runtime-report" and
 * the like) and flush to write. Here what is recorded and where it goes is
 * scope-profiler's choice, made from the environment, so these calls keep
 * the program building and running, do nothing, and one message per
 * process says so: a run configured for Caliper must not silently look
 * configured. cali_set* sets a value, which is no region: it is not
 * recorded either (its own message).
 */
#include "scope_profiler.h"

#include "caliper_internal.h"

SPS_EXPORT void sp_caliper_config_ignored(const char *call) {
    sps_note(&spc_shim, SPC_NOTE_CONFIG,
             "%s is accepted and ignored: this run is recorded by scope-profiler, into "
             "$SCOPE_PROFILER_FILE (default profiling_data.h5), configured by the "
             "SCOPE_PROFILER_* variables", call ? call : "Caliper configuration");
}

SPS_EXPORT void cali_config_preset(const char *key, const char *value) {
    (void)key, (void)value;
    sp_caliper_config_ignored("cali_config_preset");
}

SPS_EXPORT void cali_config_set(const char *key, const char *value) {
    (void)key, (void)value;
    sp_caliper_config_ignored("cali_config_set");
}

SPS_EXPORT void cali_config_define_profile(const char *name, const char *keyvallist[][2]) {
    (void)name, (void)keyvallist;
    sp_caliper_config_ignored("cali_config_define_profile");
}

SPS_EXPORT void cali_config_allow_read_env(int allow) {
    (void)allow;
    sp_caliper_config_ignored("cali_config_allow_read_env");
}

SPS_EXPORT cali_configset_t cali_create_configset(const char *keyvallist[][2]) {
    (void)keyvallist;
    sp_caliper_config_ignored("cali_create_configset");
    return NULL;
}

SPS_EXPORT void cali_delete_configset(cali_configset_t cfg) { (void)cfg; }

SPS_EXPORT void cali_configset_set(cali_configset_t cfg, const char *key, const char *value) {
    (void)cfg, (void)key, (void)value;
    sp_caliper_config_ignored("cali_configset_set");
}

SPS_EXPORT cali_id_t cali_create_channel(const char *name, int flags, const cali_configset_t cfg) {
    (void)name, (void)flags, (void)cfg;
    sp_caliper_config_ignored("cali_create_channel");
    return 0;
}

SPS_EXPORT void cali_delete_channel(cali_id_t chn_id) { (void)chn_id; }

SPS_EXPORT void cali_activate_channel(cali_id_t chn_id) { (void)chn_id; }

SPS_EXPORT void cali_deactivate_channel(cali_id_t chn_id) {
    (void)chn_id;
    sp_caliper_config_ignored("cali_deactivate_channel");
}

SPS_EXPORT int cali_channel_is_active(cali_id_t chn_id) {
    (void)chn_id;
    return sp_is_active();
}

SPS_EXPORT void cali_flush(int flush_opts) {
    (void)flush_opts;
    sp_caliper_config_ignored("cali_flush");
}

SPS_EXPORT void cali_channel_flush(cali_id_t chn_id, int flush_opts) {
    (void)chn_id, (void)flush_opts;
    sp_caliper_config_ignored("cali_channel_flush");
}

static void set_ignored(cali_id_t attr, const char *call) {
    spc_attribute *attribute = spc_attribute_get(attr);
    if (attribute) atomic_store_explicit(&attribute->was_set, 1, memory_order_relaxed);
    sps_note(&spc_shim, SPC_NOTE_SET,
             "%s sets a value, not a region: accepted and not recorded (cali_begin* and "
             "cali_end record regions)", call);
}

SPS_EXPORT void cali_set(cali_id_t attr, const void *value, size_t size) {
    (void)value, (void)size;
    set_ignored(attr, "cali_set");
}

SPS_EXPORT void cali_set_double(cali_id_t attr, double val) {
    (void)val;
    set_ignored(attr, "cali_set_double");
}

SPS_EXPORT void cali_set_int(cali_id_t attr, int val) {
    (void)val;
    set_ignored(attr, "cali_set_int");
}

SPS_EXPORT void cali_set_string(cali_id_t attr, const char *val) {
    (void)val;
    set_ignored(attr, "cali_set_string");
}

static cali_id_t set_attribute(const char *attr_name, int type) {
    return spc_attribute_lookup(attr_name, sps_name_len(&spc_shim, attr_name), type,
                                CALI_ATTR_DEFAULT, 1);
}

SPS_EXPORT void cali_set_double_byname(const char *attr_name, double val) {
    (void)val;
    set_ignored(set_attribute(attr_name, CALI_TYPE_DOUBLE), "cali_set_double_byname");
}

SPS_EXPORT void cali_set_int_byname(const char *attr_name, int val) {
    (void)val;
    set_ignored(set_attribute(attr_name, CALI_TYPE_INT), "cali_set_int_byname");
}

SPS_EXPORT void cali_set_string_byname(const char *attr_name, const char *val) {
    (void)val;
    set_ignored(set_attribute(attr_name, CALI_TYPE_STRING), "cali_set_string_byname");
}
