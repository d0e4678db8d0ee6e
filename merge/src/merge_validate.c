/*
 * merge_validate.c - what sp_merge_files checks before it plans: the
 * arguments, that no input is given twice and the output is none of them
 * (compared by real path, so links and relative paths cannot hide it),
 * the --prefix renaming of an input's regions, and the refusal of region
 * names found in more than one input (a (rank, region) row must come from
 * exactly one input, or the merge would double-count it).
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/text.h"
#include "merge_internal.h"

/* realpath of a path that may not exist yet (its directory must). */
static char *resolve(const char *path) {
    char *full = realpath(path, NULL);
    if (full) {
        char *copy = spi_strdup(full);
        free(full); /* realpath allocates with libc */
        return copy;
    }
    char *dir_copy = spi_strdup(path), *base_copy = spi_strdup(path);
    char *dir = dir_copy ? realpath(dirname(dir_copy), NULL) : NULL;
    char *out = NULL;
    if (dir && base_copy) {
        const char *base = basename(base_copy);
        size_t bytes = strlen(dir) + strlen(base) + 2;
        out = spi_malloc(bytes);
        if (out) snprintf(out, bytes, "%s/%s", dir, base);
    }
    free(dir); /* from realpath: libc's allocation */
    spi_free(dir_copy);
    spi_free(base_copy);
    return out;
}

static int check_paths(const char *const *inputs, size_t count, const char *output,
                       spi_error *err) {
    char **real = spi_calloc(count + 1, sizeof *real);
    if (!real) return spm_oom(err);
    int status = SP_OK;
    for (size_t i = 0; i < count && status == SP_OK; i++) {
        real[i] = realpath(inputs[i], NULL);
        if (!real[i]) {
            /* Let the reader word a missing or unreadable file. */
            continue;
        }
        for (size_t j = 0; j < i && status == SP_OK; j++)
            if (real[j] && strcmp(real[i], real[j]) == 0)
                status = spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                       "%s: the same input is given twice (as %s and %s); each "
                                       "profile can be merged only once",
                                       inputs[i], inputs[j], inputs[i]);
    }
    char *out = status == SP_OK ? resolve(output) : NULL;
    for (size_t i = 0; out && i < count && status == SP_OK; i++)
        if (real[i] && strcmp(out, real[i]) == 0)
            status = spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                                   "%s: the output is the input %s; merging never modifies an "
                                   "input, choose another output path",
                                   output, inputs[i]);
    spi_free(out);
    for (size_t i = 0; i < count; i++) free(real[i]);
    spi_free(real);
    return status;
}

/* Put the input's prefix before each of its region names (--prefix): done
 * right after opening, so the collision check, the region table and every
 * message see the new names. */
int spm_apply_prefix(spm_input *in, const char *prefix, spi_error *err) {
    if (!prefix || !*prefix) return SP_OK;
    if (strchr(prefix, '/'))
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "scope-merge: the prefix '%s' for %s contains '/', which region "
                             "groups (perf_events/<region>) cannot hold",
                             prefix, in->path);
    in->prefix = prefix;
    size_t prefix_len = strlen(prefix);
    for (size_t k = 0; k < in->prof.name_count; k++) {
        size_t len = strlen(in->prof.names[k]);
        char *renamed = spi_malloc(prefix_len + len + 1);
        if (!renamed) return spm_oom(err);
        memcpy(renamed, prefix, prefix_len);
        memcpy(renamed + prefix_len, in->prof.names[k], len + 1);
        spi_free(in->prof.names[k]);
        in->prof.names[k] = renamed;
    }
    return SP_OK;
}

typedef struct name_ref {
    const char *name;          /* as the writer will store it (UTF-8 repaired) */
    size_t input;
} name_ref;

static int by_name(const void *a, const void *b) {
    const name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->input < y->input ? -1 : (x->input > y->input);
}

/* Every name in more than one input, with the inputs, into *message (new
 * string) when there is any. */
int spm_find_collisions(const spm_merge *m, char **message, spi_error *err) {
    size_t total = 0;
    for (size_t i = 0; i < m->input_count; i++) total += m->inputs[i].prof.name_count;
    name_ref *refs = spi_calloc(total ? total : 1, sizeof *refs);
    /* Names are compared as the writer stores them: invalid UTF-8 becomes
     * U+FFFD (docs/FORMAT.md 2.1), so two names that differ only in
     * invalid bytes are one name in the output, and the merge would have
     * to rename one. Refused instead, like any other collision. */
    char **repaired = spi_calloc(total ? total : 1, sizeof *repaired);
    if (!refs || !repaired) {
        spi_free(refs);
        spi_free(repaired);
        return spm_oom(err);
    }
    size_t n = 0;
    for (size_t i = 0; i < m->input_count; i++)
        for (size_t k = 0; k < m->inputs[i].prof.name_count; k++) {
            const char *name = m->inputs[i].prof.names[k];
            if (!spi_text_is_utf8(name)) {
                repaired[n] = spi_text_utf8_repair(name);
                if (!repaired[n]) {
                    for (size_t j = 0; j < n; j++) spi_free(repaired[j]);
                    spi_free(repaired);
                    spi_free(refs);
                    return spm_oom(err);
                }
                name = repaired[n];
            }
            refs[n++] = (name_ref){name, i};
        }
    qsort(refs, n, sizeof *refs, by_name);
    size_t bytes = 1024, used = 0, colliding = 0;
    char *text = spi_malloc(bytes);
    int status = text ? SP_OK : spm_oom(err);
    for (size_t i = 0; i < n && status == SP_OK;) {
        size_t j = i + 1, inputs = 1;
        while (j < n && strcmp(refs[j].name, refs[i].name) == 0) {
            if (refs[j].input != refs[j - 1].input) inputs++;
            j++;
        }
        /* One input's two names that are one once repaired collide too. */
        if (inputs > 1 || j - i > 1) {
            colliding++;
            size_t need = strlen(refs[i].name) + 16;
            for (size_t k = i; k < j; k++) need += strlen(m->inputs[refs[k].input].path) + 2;
            if (used + need + 1 > bytes) {
                size_t grown_bytes = (used + need + 1) * 2;
                char *grown = spi_reallocarray(text, grown_bytes, 1);
                if (!grown) {
                    status = spm_oom(err);
                    break;
                }
                text = grown;
                bytes = grown_bytes;
            }
            used += (size_t)snprintf(text + used, bytes - used, "\n  '%s' in ", refs[i].name);
            for (size_t k = i; k < j; k++) {
                if (k > i && refs[k].input == refs[k - 1].input) continue;
                used += (size_t)snprintf(text + used, bytes - used, "%s%s", k > i ? ", " : "",
                                         m->inputs[refs[k].input].path);
            }
        }
        i = j;
    }
    spi_free(refs);
    for (size_t k = 0; k < n; k++) spi_free(repaired[k]);
    spi_free(repaired);
    if (status == SP_OK && colliding) {
        size_t out_bytes = used + 512;
        char *out = spi_malloc(out_bytes);
        if (!out) {
            status = spm_oom(err);
        } else {
            snprintf(out, out_bytes,
                     "scope-merge: %zu region name%s appear%s in more than one input; merging "
                     "them would double-count %s. Give the regions distinct names (a "
                     "'fortran:' prefix, say: scope-merge --prefix INPUT=fortran:):%s",
                     colliding, colliding == 1 ? "" : "s",
                     colliding == 1 ? "s" : "", colliding == 1 ? "it" : "them", text);
            *message = out;
        }
    }
    spi_free(text);
    return status;
}

/* The arguments, then the paths: checked before any input is opened. */
int spm_check_arguments(const char *const *inputs, size_t count, const char *output,
                        spi_error *err) {
    if (!inputs || !output || count < 2)
        return spi_error_set(err, SP_ERR_INVALID_ARGUMENT,
                             "scope-merge: at least two input profiles and an output path are "
                             "needed");
    for (size_t i = 0; i < count; i++)
        if (!inputs[i] || !*inputs[i])
            return spi_error_set(err, SP_ERR_INVALID_ARGUMENT, "scope-merge: empty input path");
    return check_paths(inputs, count, output, err);
}
