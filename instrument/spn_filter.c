/*
 * spn_filter.c - the Score-P filter file syntax (spn_filter.h), as Score-P
 * documents it: blocks between *_BEGIN and *_END; inside, EXCLUDE or
 * INCLUDE (optionally followed by MANGLED) opens a list of patterns that
 * runs over any number of lines until the next keyword; rules are kept in
 * file order and the last matching one wins.
 *
 * A file that does not parse is refused as a whole, with the first
 * problem's line: half a filter could exclude what the user meant to keep.
 *
 * The two kinds of block combine as Score-P combines them: a function is
 * excluded when the file rules exclude its source file or the region rules
 * exclude its name (an INCLUDE of one kind does not undo an EXCLUDE of the
 * other). Within each kind the last matching rule wins. A function whose
 * source file is not known (no debug information) is decided by the
 * region rules alone.
 */
#define _POSIX_C_SOURCE 200809L
#include "spn_filter.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))

typedef struct filter_rule {
    int include; /* 1 INCLUDE, 0 EXCLUDE */
    int mangled; /* match the raw symbol instead of the readable name */
    int file;    /* a SCOREP_FILE_NAMES rule: matched against the source file */
    char *pattern;
} filter_rule;

struct spn_filter {
    filter_rule *rules;
    size_t count, capacity;
    int has_file_rules;
};

enum block { OUTSIDE, REGION_NAMES, FILE_NAMES };

NO_INSTRUMENT void spn_filter_free(spn_filter *filter) {
    if (!filter) return;
    for (size_t i = 0; i < filter->count; i++) free(filter->rules[i].pattern);
    free(filter->rules);
    free(filter);
}

NO_INSTRUMENT static int add_rule(spn_filter *filter, int include, int mangled, int file,
                                  const char *pattern) {
    if (filter->count == filter->capacity) {
        size_t capacity = filter->capacity ? 2 * filter->capacity : 16;
        filter_rule *rules = realloc(filter->rules, capacity * sizeof *rules);
        if (!rules) return -1;
        filter->rules = rules;
        filter->capacity = capacity;
    }
    char *copy = strdup(pattern);
    if (!copy) return -1;
    filter->rules[filter->count++] = (filter_rule){include, mangled, file, copy};
    if (file) filter->has_file_rules = 1;
    return 0;
}

/* The parser's state across lines. */
typedef struct parse_state {
    enum block block;
    size_t block_line;
    int rule;    /* -1 no keyword yet in this block, else 0 EXCLUDE / 1 INCLUDE */
    int mangled; /* MANGLED followed the keyword */
    int has_file_rules;
} parse_state;

/* One whitespace-separated word of a line. Returns a problem or NULL. */
NO_INSTRUMENT static const char *parse_word(spn_filter *filter, parse_state *st, const char *word,
                                            size_t line) {
    if (st->block == OUTSIDE) {
        if (strcmp(word, "SCOREP_REGION_NAMES_BEGIN") == 0) st->block = REGION_NAMES;
        else if (strcmp(word, "SCOREP_FILE_NAMES_BEGIN") == 0) st->block = FILE_NAMES;
        else return "expected SCOREP_REGION_NAMES_BEGIN or SCOREP_FILE_NAMES_BEGIN";
        st->block_line = line;
        st->rule = -1;
        st->mangled = 0;
        return NULL;
    }
    const char *end =
        st->block == REGION_NAMES ? "SCOREP_REGION_NAMES_END" : "SCOREP_FILE_NAMES_END";
    if (strcmp(word, end) == 0) {
        st->block = OUTSIDE;
        return NULL;
    }
    if (strstr(word, "SCOREP_") == word && strstr(word, "_BEGIN"))
        return "a block begins before the previous one ended";
    if (strcmp(word, "EXCLUDE") == 0 || strcmp(word, "INCLUDE") == 0) {
        st->rule = word[0] == 'I';
        st->mangled = 0;
        return NULL;
    }
    if (strcmp(word, "MANGLED") == 0 && st->rule >= 0) {
        if (st->block == FILE_NAMES) return "MANGLED applies to region names only";
        st->mangled = 1;
        return NULL;
    }
    if (st->rule < 0) return "a pattern before EXCLUDE or INCLUDE";
    if (st->block == FILE_NAMES) st->has_file_rules = 1;
    return add_rule(filter, st->rule, st->mangled, st->block == FILE_NAMES, word) == 0
               ? NULL
               : "out of memory";
}

NO_INSTRUMENT spn_filter *spn_filter_load(const char *path, char *message, size_t message_len,
                                          int *has_file_rules) {
    message[0] = '\0';
    *has_file_rules = 0;
    FILE *in = fopen(path, "r");
    if (!in) {
        snprintf(message, message_len, "%s: cannot read the filter file: %s", path,
                 strerror(errno));
        return NULL;
    }
    spn_filter *filter = calloc(1, sizeof *filter);
    parse_state st = {OUTSIDE, 0, -1, 0, 0};
    char *line = NULL;
    size_t cap = 0, number = 0;
    const char *problem = filter ? NULL : "out of memory";
    while (!problem && getline(&line, &cap, in) >= 0) {
        number++;
        /* '#' starts a comment, '\#' is a literal '#'. */
        for (char *c = line; *c; c++) {
            if (*c == '\\' && c[1] == '#') {
                memmove(c, c + 1, strlen(c));
            } else if (*c == '#') {
                *c = '\0';
                break;
            }
        }
        char *save = NULL;
        for (char *word = strtok_r(line, " \t\r\n\f\v", &save); word && !problem;
             word = strtok_r(NULL, " \t\r\n\f\v", &save))
            problem = parse_word(filter, &st, word, number);
    }
    if (!problem && ferror(in)) problem = "read error";
    if (!problem && st.block != OUTSIDE) {
        number = st.block_line;
        problem = "block not closed by its _END";
    }
    free(line);
    fclose(in);
    if (problem) {
        snprintf(message, message_len, "%s:%zu: %s", path, number, problem);
        spn_filter_free(filter);
        return NULL;
    }
    *has_file_rules = st.has_file_rules;
    if (filter->count == 0) {
        spn_filter_free(filter);
        return NULL;
    }
    return filter;
}

NO_INSTRUMENT int spn_filter_has_file_rules(const spn_filter *filter) {
    return filter && filter->has_file_rules;
}

NO_INSTRUMENT int spn_filter_excludes(const spn_filter *filter, const char *name,
                                      const char *symbol, const char *file) {
    if (!filter) return 0;
    int name_excluded = 0, file_excluded = 0;
    for (size_t i = 0; i < filter->count; i++) {
        const filter_rule *rule = &filter->rules[i];
        if (rule->file) {
            /* '*' matches '/' too (no FNM_PATHNAME): "*" + "/solver.f90"
             * matches the file in any directory, as in Score-P. */
            if (file && fnmatch(rule->pattern, file, 0) == 0) file_excluded = !rule->include;
            continue;
        }
        const char *subject = rule->mangled ? (symbol ? symbol : name) : name;
        if (fnmatch(rule->pattern, subject, 0) == 0) name_excluded = !rule->include;
    }
    return name_excluded || file_excluded;
}
