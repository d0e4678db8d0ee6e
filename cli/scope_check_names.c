/*
 * scope_check_names.c - MPI region names parse with the package's rule
 * (docs/FORMAT.md 4.6): the name split on whitespace, the first token
 * "mpi:<op>", every other token key=value (the last value of a key
 * counts, as in a dict); the keys kind, bytes, peer, root, tag and comm
 * present, the last five integers as Python's int() reads them; keys it
 * does not know are ignored. A name that fails is shown by the package as
 * an ordinary region, so its MPI views lose that call.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "scope_check.h"

static const char *const required[] = {"kind", "bytes", "peer", "root", "tag", "comm"};
enum { REQUIRED = 6 };

/* Python's int() of a decimal string: optional sign, digits, single
 * underscores between digits. */
static int is_python_int(const char *s, size_t len) {
    size_t i = 0;
    if (i < len && (s[i] == '+' || s[i] == '-')) i++;
    if (i == len || !isdigit((unsigned char)s[i])) return 0;
    for (; i < len; i++) {
        if (isdigit((unsigned char)s[i])) continue;
        if (s[i] == '_' && i + 1 < len && isdigit((unsigned char)s[i + 1])) continue;
        return 0;
    }
    return 1;
}

/* Why `name` does not parse into buf, or 0 when it does. */
static int mpi_name_problem(const char *name, char *buf, size_t len) {
    const char *value[REQUIRED] = {0};
    size_t value_len[REQUIRED] = {0};
    const char *p = name;
    int first = 1;
    while (*p) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        const char *token = p;
        while (*p && !isspace((unsigned char)*p)) p++;
        size_t token_len = (size_t)(p - token);
        if (first) {
            first = 0;
            if (token_len <= 4 || strncmp(token, "mpi:", 4) != 0) {
                snprintf(buf, len, "the first token '%.*s' is not mpi:<operation>",
                         (int)(token_len > 64 ? 64 : token_len), token);
                return 1;
            }
            continue;
        }
        const char *eq = memchr(token, '=', token_len);
        if (!eq) {
            snprintf(buf, len, "token '%.*s' is not key=value",
                     (int)(token_len > 64 ? 64 : token_len), token);
            return 1;
        }
        size_t key_len = (size_t)(eq - token);
        for (int k = 0; k < REQUIRED; k++)
            if (strlen(required[k]) == key_len && !strncmp(token, required[k], key_len)) {
                value[k] = eq + 1;
                value_len[k] = token_len - key_len - 1;
            }
    }
    for (int k = 0; k < REQUIRED; k++) {
        if (!value[k]) {
            snprintf(buf, len, "key '%s' is missing", required[k]);
            return 1;
        }
        if (k > 0 && !is_python_int(value[k], value_len[k])) {
            snprintf(buf, len, "%s=%.*s is not an integer", required[k],
                     (int)(value_len[k] > 64 ? 64 : value_len[k]), value[k]);
            return 1;
        }
    }
    return 0;
}

void check_mpi_names(checker *ck) {
    size_t regions = sp_results_region_count(ck->res);
    for (size_t r = 0; r < regions; r++) {
        const char *name = sp_results_region_name(ck->res, r);
        char why[160];
        if (name && !strncmp(name, "mpi:", 4) && mpi_name_problem(name, why, sizeof why))
            check_report(ck, 0, -1, name,
                         "MPI region name does not parse with the package's rule: %s (keys "
                         "kind, bytes, peer, root, tag, comm required, the last five integers)",
                         why);
    }
}
