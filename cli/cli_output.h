/*
 * cli_output.h - how every tool that writes a file publishes it: into a
 * temporary sibling of the target (a file, or a directory for multi-file
 * formats such as OTF2), renamed over the target only once everything was
 * written, flushed and synced. Any failure, or a fatal signal, removes the
 * temporary, so the target is either the complete new output or whatever
 * it was before.
 */
#ifndef SP_CLI_OUTPUT_H
#define SP_CLI_OUTPUT_H

#include <stdio.h>

typedef struct cli_output {
    const char *tool;  /* for messages */
    const char *path;  /* the target */
    char *tmp;         /* the temporary sibling; NULL when writing to stdout */
    FILE *fp;          /* file outputs only */
    int is_dir;
} cli_output;

/* Open a temporary file beside `path` ("-" = standard output). Returns 0 or
 * CLI_EXIT_OTHER after a message. */
int cli_output_open(cli_output *o, const char *tool, const char *path);

/* Create a temporary directory beside `path` (o->tmp) for a writer that
 * produces several files. `path` must not exist yet, or be an empty
 * directory: an export never deletes what it did not write. Returns 0 or
 * CLI_EXIT_OTHER after a message. */
int cli_output_open_dir(cli_output *o, const char *tool, const char *path);

/* Flush, sync and rename into place. Returns 0 or CLI_EXIT_OTHER after a
 * message (the temporary is then removed). */
int cli_output_publish(cli_output *o);

/* Remove the temporary; the target stays as it was. */
void cli_output_abandon(cli_output *o);

#endif /* SP_CLI_OUTPUT_H */
