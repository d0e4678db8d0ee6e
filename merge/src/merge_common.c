/*
 * merge_common.c - the small helpers every step of sp_merge_files shares:
 * the out-of-memory error, the refusal of an input's call that scope-check
 * would reject, and progress reports. Kept apart so that the step files
 * (merge_validate.c, merge_plan.c, merge_sweep.c, merge_write.c) all depend
 * on this one and it on none of them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "merge_internal.h"

int spm_oom(spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "scope-merge: out of memory");
}

/* An input's call that scope-check would reject: refused, naming it. */
int spm_refuse(spi_error *err, const spm_input *in, uint32_t rank, uint32_t region,
               const char *format, ...) {
    char what[256];
    va_list ap;
    va_start(ap, format);
    vsnprintf(what, sizeof what, format, ap);
    va_end(ap);
    return spi_error_set(err, SP_ERR_CORRUPT,
                         "scope-merge: %s: rank %u region %s: %s; scope-merge copies nothing "
                         "scope-check rejects",
                         in->path, rank,
                         region < in->prof.name_count ? in->prof.names[region] : "?", what);
}

void spm_report(spm_merge *m, uint64_t events) {
    m->done += events;
    if (m->options->progress) m->options->progress(m->done, m->total, m->options->progress_user);
}
