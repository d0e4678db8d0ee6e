/*
 * scope_check_report.c - scope-check's problem lines (scope_check.h).
 *
 * One line per problem, "PATH: rank R region NAME: text", so that a
 * script can grep the report. A damaged file can break millions of
 * promises; listing them all would bury the first ones, so after
 * listed_max lines the rest are only counted (the verdict line gives the
 * count).
 */
#include <stdarg.h>
#include <stdio.h>

#include "scope_check.h"

/* Region names come from other programs; a control character in one must
 * not break the one-line-per-problem promise. */
static void print_name(const char *name) {
    for (const unsigned char *p = (const unsigned char *)(name ? name : "?"); *p; p++) {
        if (*p < 0x20 || *p == 0x7f) printf("\\x%02x", *p);
        else putchar(*p);
    }
}

void check_report(checker *ck, bool warning, long rank, const char *region, const char *format,
                  ...) {
    if (warning) ck->warnings++;
    else ck->problems++;
    if (ck->listed >= ck->listed_max) return;
    ck->listed++;
    printf("%s: ", ck->path);
    if (rank >= 0) printf("rank %ld ", rank);
    if (region) {
        printf("region ");
        print_name(region);
        fputs(": ", stdout);
    } else if (rank >= 0) {
        fputs(": ", stdout);
    }
    if (warning) fputs("warning: ", stdout);
    va_list ap;
    va_start(ap, format);
    vprintf(format, ap);
    va_end(ap);
    putchar('\n');
}

void check_note(checker *ck, long rank, const char *format, ...) {
    if (ck->quiet) return;
    fprintf(stderr, "scope-check: %s: ", ck->path);
    if (rank >= 0) fprintf(stderr, "rank %ld: ", rank);
    fputs("note: ", stderr);
    va_list ap;
    va_start(ap, format);
    vfprintf(stderr, format, ap);
    va_end(ap);
    fputc('\n', stderr);
}

const char *check_row_name(const sp_results *res, size_t row) {
    return sp_results_region_name(res, sp_results_row_region(res, row));
}

int check_thread_key_cmp(const void *pa, const void *pb) {
    const check_thread_key *a = pa, *b = pb;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}
