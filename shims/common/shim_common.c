/*
 * shim_common.c - sessions started on a program's behalf, one-time notes
 * and bounded names, for the shims (see shim_common.h).
 *
 * Who finishes a session: the shim that started it, and only while it still
 * runs. A session may end elsewhere first (the core finishes an MPI job's
 * session inside MPI_Finalize; a program may call sp_finalize itself), so
 * finishing asks sp_is_active before calling sp_finalize, and a second
 * finish is a harmless SP_ERR_NOT_ACTIVE. A session that was running when
 * the shim wanted one belongs to whoever started it: using it is right (the
 * program's own options apply), finishing it is not.
 *
 * Notes are the shims' own diagnostics: a call of the foreign API that
 * this profiler cannot honour (an option, a query) or that the foreign API
 * itself rejects (GPTLinitialize twice). Each kind is printed once per
 * process: a GPTL code calling GPTLquery in its time loop must not fill the
 * job's stderr. Mistakes the core detects (an end without a begin) are the
 * core's to report; it already bounds them per session.
 */
#include "shim_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"
#include "scope_profiler_summary.h"

int sps_session_start(sps_shim *shim, const char *language) {
    if (sp_is_active()) return SP_OK;
    sp_options options;
    sp_options_init(&options);
    options.source_language = language;
    int status = sp_setup_with_options(&options);
    /* SCOPE_PROFILER_DISABLE=1 gives SP_OK and no session: nothing to own. */
    if (status == SP_OK && sp_is_active()) atomic_store(&shim->owns_session, 1);
    return status;
}

int sps_session_owned(sps_shim *shim) {
    return atomic_load(&shim->owns_session) && sp_is_active();
}

int sps_session_finish(sps_shim *shim) {
    if (!atomic_exchange(&shim->owns_session, 0) || !sp_is_active()) return SP_ERR_NOT_ACTIVE;
    return sp_finalize();
}

void sps_session_forget(sps_shim *shim) { atomic_store(&shim->owns_session, 0); }

static int quiet(void) {
    const char *value = getenv("SCOPE_PROFILER_QUIET");
    return value && strcmp(value, "1") == 0;
}

/* The launcher's rank of this process, or -1: the shims have no MPI of
 * their own to ask, and a note may come before MPI_Init. */
static long launcher_rank(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *value = getenv(vars[i]);
        if (value && *value) {
            char *end = NULL;
            long rank = strtol(value, &end, 10);
            if (*end == '\0' && rank >= 0) return rank;
        }
    }
    return -1;
}

void sps_note(sps_shim *shim, unsigned which, const char *format, ...) {
    unsigned long bit = 1ul << (which & 63u);
    if (atomic_fetch_or(&shim->noted, bit) & bit) return;
    if (quiet()) return;
    /* One fprintf per line, so lines of threads and ranks do not interleave. */
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    long rank = launcher_rank();
    if (rank > 0)
        fprintf(stderr, "scope-profiler: [rank %ld] %s: %s\n", rank, shim->api, text);
    else
        fprintf(stderr, "scope-profiler: %s: %s\n", shim->api, text);
}

/* Cut a name of more than SPS_NAME_MAX bytes at a character boundary (never
 * inside a UTF-8 sequence: the writer would store the repaired text, and the
 * name would differ from the one the program gave), and say so once.
 * `len`: the name's length, or 0 when only "longer than the bound" is known
 * (a C string is never scanned past the bound). */
__attribute__((noinline, cold)) size_t sps_name_cut(sps_shim *shim, const char *name,
                                                    size_t len) {
    size_t cut = SPS_NAME_MAX;
    while (cut > 0 && ((unsigned char)name[cut] & 0xC0u) == 0x80u) cut--;
    char head[64];
    size_t head_len = cut < 40 ? cut : 40;
    while (head_len > 0 && ((unsigned char)name[head_len] & 0xC0u) == 0x80u) head_len--;
    char raw[48];
    memcpy(raw, name, head_len);
    raw[head_len] = '\0';
    sp_escape_name(raw, head, sizeof head);
    char size[48];
    if (len)
        snprintf(size, sizeof size, "%zu bytes", len);
    else
        snprintf(size, sizeof size, "more than %d bytes", SPS_NAME_MAX);
    sps_note(shim, SPS_NOTE_LONG_NAME,
             "region names longer than %d bytes are cut at a whole character (names that "
             "agree that far share one region); the first was \"%s...\" (%s, cut to %zu)",
             SPS_NAME_MAX, head, size, cut);
    return cut;
}

size_t sps_fortran_len(sps_shim *shim, const char *name, size_t len) {
    if (!name) return 0;
    while (len > 0 && name[len - 1] == ' ') len--;
    return __builtin_expect(len > SPS_NAME_MAX, 0) ? sps_name_cut(shim, name, len) : len;
}

int sps_region_lookup(sps_shim *shim, sps_name_slot *slot, const char *name, size_t *len) {
    *len = sps_name_len(shim, name);
    if (*len == 0) return SP_INVALID_REGION;
    int region = sp_region_n(name, *len);
    if (region != SP_INVALID_REGION && name[*len] == '\0')
        *slot = (sps_name_slot){name, sp_region_name(region), *len, region};
    return region;
}
