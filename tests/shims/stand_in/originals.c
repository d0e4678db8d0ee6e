/*
 * originals.c - test stand-ins for the original GPTL, Caliper and LIKWID
 * libraries: every entry point the test programs call, doing nothing and
 * returning success. A program linked against one of these (built with
 * -DSP_ORIGINAL_GPTL, _CALIPER or _LIKWID) behaves like one linked against
 * the real library; run with libscopeprofiler_<shim> in LD_PRELOAD, the
 * shim's definitions must win and the program's regions land in the file
 * (without the preload, no file is written at all). No header: only the
 * symbol names matter to the dynamic linker.
 */
#define NOOP_INT(name) int name() { return 0; }
#define NOOP_VOID(name) void name() {}
#define NOOP_ID(name) unsigned long long name() { return 7; }

#if defined(SP_ORIGINAL_GPTL)
NOOP_INT(GPTLsetoption) NOOP_INT(GPTLsetutr) NOOP_INT(GPTLinitialize) NOOP_INT(GPTLfinalize)
NOOP_INT(GPTLstart) NOOP_INT(GPTLstop) NOOP_INT(GPTLinit_handle) NOOP_INT(GPTLstart_handle)
NOOP_INT(GPTLstop_handle) NOOP_INT(GPTLpr) NOOP_INT(GPTLpr_file) NOOP_INT(GPTLpr_summary)
NOOP_INT(GPTLpr_summary_file) NOOP_INT(GPTLreset) NOOP_INT(GPTLenable) NOOP_INT(GPTLdisable)
NOOP_INT(GPTLget_wallclock) NOOP_INT(GPTLquery)
int GPTLstamp(double *wall, double *usr, double *sys) {
    *wall = 1.0;
    *usr = *sys = 0.0;
    return 0;
}
#elif defined(SP_ORIGINAL_CALIPER)
unsigned long long cali_annotation_attr_id = 0, cali_function_attr_id = 1, cali_loop_attr_id = 2,
                   cali_statement_attr_id = 3;
NOOP_VOID(cali_begin_region) NOOP_VOID(cali_end_region) NOOP_VOID(cali_begin)
NOOP_VOID(cali_begin_int) NOOP_VOID(cali_begin_string) NOOP_VOID(cali_end)
NOOP_VOID(cali_set_int) NOOP_VOID(cali_config_set) NOOP_ID(cali_create_attribute)
NOOP_ID(cali_make_loop_iteration_attribute)
#elif defined(SP_ORIGINAL_LIKWID)
NOOP_VOID(likwid_markerInit) NOOP_VOID(likwid_markerThreadInit) NOOP_VOID(likwid_markerNextGroup)
NOOP_VOID(likwid_markerClose) NOOP_INT(likwid_markerRegisterRegion)
NOOP_INT(likwid_markerStartRegion) NOOP_INT(likwid_markerStopRegion)
NOOP_INT(likwid_markerResetRegion) NOOP_VOID(likwid_markerGetRegion)
#endif
