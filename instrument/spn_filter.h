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
 * Patterns are shell wildcards (*, ?, [...]) matched against the readable
 * name (or, after MANGLED, the raw symbol); the last rule that matches
 * decides; a function no rule matches is recorded. '#' starts a comment.
 * SCOREP_FILE_NAMES_BEGIN ... END blocks are parsed but cannot apply: the
 * source file of a function needs its DWARF line table, which this library
 * does not read (docs/guide/first-profile-without-changes.md).
 *
 * Thread-safety: load once; spn_filter_excludes may then be called from
 * any thread (it reads only).
 */
#ifndef SPN_FILTER_H
#define SPN_FILTER_H

#include <stddef.h>

typedef struct spn_filter spn_filter;

/* Parse the filter file at `path`. Returns the filter (NULL with an empty
 * *message when the file has no region rules), or NULL with *message set
 * to "<path>:<line>: <problem>" (message_len bytes) when it cannot be read
 * or does not parse. *has_file_rules is set to 1 when the file had a file
 * names block (ignored). */
spn_filter *spn_filter_load(const char *path, char *message, size_t message_len,
                            int *has_file_rules);

/* 1 when the function named `name` (raw symbol `symbol`, may be NULL) is
 * excluded by `filter`; 0 for a NULL filter. */
int spn_filter_excludes(const spn_filter *filter, const char *name, const char *symbol);

void spn_filter_free(spn_filter *filter);

#endif
