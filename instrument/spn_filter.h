/*
 * spn_filter.h - Score-P filter files (SCOPE_PROFILER_FILTER): which
 * instrumented functions become regions.
 *
 *     SCOREP_REGION_NAMES_BEGIN
 *       EXCLUDE *
 *       INCLUDE solve* main
 *       EXCLUDE MANGLED _ZN6detail*
 *     SCOREP_REGION_NAMES_END
 *
 *     SCOREP_FILE_NAMES_BEGIN
 *       EXCLUDE *.h *.hpp
 *       INCLUDE *solver.hpp
 *     SCOREP_FILE_NAMES_END
 *
 * Patterns are shell wildcards (*, ?, [...]; '*' also matches '/')
 * matched against the readable name (or, after MANGLED, the raw symbol),
 * or in a file names block against the function's source file as its
 * debug information records it (usually an absolute path; spn_sources.c).
 * Within each kind the last rule that matches decides; a function is
 * excluded when either kind excludes it; a function no rule matches is
 * recorded, and so is, by the file rules, one whose source file is not
 * known (built without -g). '#' starts a comment.
 *
 * Thread-safety: load once; spn_filter_excludes may then be called from
 * any thread (it reads only).
 */
#ifndef SPN_FILTER_H
#define SPN_FILTER_H

#include <stddef.h>

typedef struct spn_filter spn_filter;

/* Parse the filter file at `path`. Returns the filter (NULL with an empty
 * *message when the file has no rules), or NULL with *message set to
 * "<path>:<line>: <problem>" (message_len bytes) when it cannot be read or
 * does not parse. *has_file_rules is set to 1 when the file had file rules. */
spn_filter *spn_filter_load(const char *path, char *message, size_t message_len,
                            int *has_file_rules);

/* 1 when the function named `name` (raw symbol `symbol`, may be NULL;
 * source file `file`, NULL when not known) is excluded by `filter`; 0 for
 * a NULL filter. */
int spn_filter_excludes(const spn_filter *filter, const char *name, const char *symbol,
                        const char *file);

/* Whether `filter` has file rules (the caller then looks up source files). */
int spn_filter_has_file_rules(const spn_filter *filter);

void spn_filter_free(spn_filter *filter);

#endif
