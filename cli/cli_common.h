/*
 * cli_common.h - what every command-line tool shares: exit codes, usage
 * errors, the --ranks list and JSON strings. Tools use only the public
 * library API; this is their one shared helper file.
 */
#ifndef SP_CLI_COMMON_H
#define SP_CLI_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes every tool documents in --help and docs/guide/results.md;
 * tools may add their own above these (scope-diff's 4 for a regression). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_USAGE = 1,  /* bad arguments */
    CLI_EXIT_FILE = 2,   /* an input that cannot be read, or is invalid */
    CLI_EXIT_OTHER = 3   /* memory, an unwritable output, ... */
};

/* The exit code for a library status code: CLI_EXIT_OK for SP_OK;
 * CLI_EXIT_OTHER for failures that are not the input's fault (out of
 * memory, an output that cannot be created or published, HDF5 errors while
 * writing); CLI_EXIT_FILE for everything else, which the library reports
 * about an input (unreadable, invalid, refused). */
int cli_exit_code(int status);

/* "TOOL: message" and the --help hint on stderr; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *tool, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* --version of every tool, on stdout: "TOOL (scope-profiler) VERSION" (the
 * first line is what help2man reads), then the git describe of the source,
 * and the HDF5 and MPI versions the library was built with
 * (sp_build_info). Returns CLI_EXIT_OK, or CLI_EXIT_OTHER when stdout
 * cannot be written. */
int cli_print_version(const char *tool);

/* What a command-line argument is, the same way in every tool: after
 * "--" everything is an operand, "-" is an operand (standard input or
 * output), "--" itself is consumed, -h/--help asks for help. */
enum { CLI_ARG_OPERAND, CLI_ARG_SEPARATOR, CLI_ARG_HELP, CLI_ARG_OPTION };
int cli_arg_kind(const char *arg, int *options_done);

/* Match argv[*i] against the options that take a value, valued[0..count):
 * "--opt VALUE", "--opt=VALUE" (long options only) or "-o VALUE".
 * Returns the index of the option (consuming the value's argument too,
 * *value set), `count` when argv[*i] is none of them, or -1 after a usage
 * error (the option is last and has no value). */
long cli_option_value(const char *tool, int argc, char **argv, int *i,
                      const char *const *valued, size_t count, const char **value);

/* 1 when both paths name the same existing file: an output that is the
 * input must be refused, the rename would replace the input. */
int cli_same_file(const char *a, const char *b);

/* Parse a --ranks list ("0,2-3") into ranks[], sorted and without
 * duplicates, at most `max` entries. Returns 0, or CLI_EXIT_USAGE after a
 * message naming the bad list. */
int cli_parse_ranks(const char *tool, const char *text, uint32_t *ranks, size_t *count,
                    size_t max);

/* s as a JSON string literal (NULL as ""). Bytes that are not valid UTF-8
 * become U+FFFD: region names come from other programs' files, and the
 * output must stay valid JSON whatever they hold. */
void cli_json_string(FILE *out, const char *s);

/* The same, with '<', '>' and '&' escaped too: for JSON inside an HTML
 * <script> element. */
void cli_json_string_html(FILE *out, const char *s);

/* s as XML/HTML character data that is also safe inside a quoted attribute
 * value (no surrounding quotes): & < > " ' escaped, line breaks and tabs as
 * character references, other control characters and invalid UTF-8 as
 * U+FFFD (XML 1.0 cannot carry them at all). NULL writes nothing. */
void cli_xml_string(FILE *out, const char *s);

/* Text tables: names, keys and values from a file made safe to print
 * (sp_escape_name: control bytes, ANSI escapes and invalid UTF-8 as \xNN),
 * so no file can move the cursor, recolour or clear the user's terminal,
 * or break a table's columns. Every text table of every tool prints file
 * text only through these three. NULL is "".
 * cli_text: into buf[0..len-1], cut at a whole character when longer;
 * returns buf. cli_text_dup: a new string the caller frees, NULL when out
 * of memory. cli_text_put: written to out whole. */
const char *cli_text(const char *s, char *buf, size_t len);
char *cli_text_dup(const char *s);
void cli_text_put(FILE *out, const char *s);
/* The same as cli_text_dup, cut to at most `columns` columns (one per code
 * point) for a table cell: a longer text keeps its first characters and
 * ends in `marker` ("\u2026" or "..."), so a table's width follows its
 * columns, not the longest name in the file (JSON and CSV print names
 * whole). NULL when out of memory. */
char *cli_text_cut(const char *s, size_t columns, const char *marker);

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when the bytes there
 * are not one (then the caller substitutes U+FFFD). p[0] must not be 0. */
size_t cli_utf8_length(const unsigned char *p);

/* The opening of a tool's JSON document about one file: `{` and the
 * members "file", "num_ranks", "label" (null when none) and "units"
 * ("seconds"), without a trailing comma, so the caller continues with
 * ",\n  ..." or closes the object. */
struct sp_results;
void cli_json_file_header(FILE *out, const struct sp_results *res);

#endif /* SP_CLI_COMMON_H */
