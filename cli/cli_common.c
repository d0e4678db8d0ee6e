/*
 * cli_common.c - see cli_common.h.
 */
#include "cli_common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scope_profiler_results.h"
#include "scope_profiler_summary.h"

int cli_exit_code(int status) {
    switch (status) {
    case SP_OK: return CLI_EXIT_OK;
    case SP_ERR_OUT_OF_MEMORY:
    case SP_ERR_OUTPUT:
    case SP_ERR_HDF5: return CLI_EXIT_OTHER;
    default: return CLI_EXIT_FILE;
    }
}

int cli_usage_error(const char *tool, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "%s: ", tool);
    vfprintf(stderr, format, ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", tool);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_print_version(const char *tool) {
    const sp_build *b = sp_build_info();
    printf("%s (scope-profiler) %s\n", tool, b->version);
    printf("git: %s\n", b->git_describe[0] ? b->git_describe : "(not built from a git checkout)");
    printf("HDF5: %s%s\n", b->hdf5_version, b->parallel_hdf5 ? " (parallel)" : "");
    printf("MPI: %s\n", b->mpi_version[0] ? b->mpi_version : "(built without MPI)");
    return fflush(stdout) == 0 && !ferror(stdout) ? CLI_EXIT_OK : CLI_EXIT_OTHER;
}

int cli_arg_kind(const char *arg, int *options_done) {
    if (*options_done || arg[0] != '-' || !strcmp(arg, "-")) return CLI_ARG_OPERAND;
    if (!strcmp(arg, "--")) {
        *options_done = 1;
        return CLI_ARG_SEPARATOR;
    }
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) return CLI_ARG_HELP;
    return CLI_ARG_OPTION;
}

long cli_option_value(const char *tool, int argc, char **argv, int *i,
                      const char *const *valued, size_t count, const char **value) {
    const char *arg = argv[*i];
    for (size_t k = 0; k < count; k++) {
        size_t len = strlen(valued[k]);
        if (strncmp(arg, valued[k], len) != 0) continue;
        if (arg[len] == '=' && valued[k][1] == '-') {
            *value = arg + len + 1;
            return (long)k;
        }
        if (arg[len] != '\0') continue;
        if (*i + 1 >= argc) {
            cli_usage_error(tool, "option '%s' needs a value", valued[k]);
            return -1;
        }
        *value = argv[++*i];
        return (long)k;
    }
    return (long)count;
}

int cli_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int compare_u32(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

int cli_parse_ranks(const char *tool, const char *text, uint32_t *ranks, size_t *count,
                    size_t max) {
    const char *p = text;
    *count = 0;
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9') return cli_usage_error(tool, "invalid --ranks list '%s'", text);
        unsigned long lo = strtoul(p, &end, 10), hi = lo;
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9')
                return cli_usage_error(tool, "invalid --ranks list '%s'", text);
            hi = strtoul(p, &end, 10);
            p = end;
        }
        if (hi < lo || hi > UINT32_MAX || hi - lo >= max || *count + (hi - lo + 1) > max)
            return cli_usage_error(tool, "invalid --ranks range in '%s'", text);
        for (unsigned long r = lo; r <= hi; r++) ranks[(*count)++] = (uint32_t)r;
        if (*p == ',') p++;
        else if (*p) return cli_usage_error(tool, "invalid --ranks list '%s'", text);
    }
    if (*count == 0) return cli_usage_error(tool, "empty --ranks list '%s'", text);
    qsort(ranks, *count, sizeof *ranks, compare_u32);
    size_t unique = 0;
    for (size_t i = 0; i < *count; i++)
        if (unique == 0 || ranks[unique - 1] != ranks[i]) ranks[unique++] = ranks[i];
    *count = unique;
    return 0;
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when it is not one.
 * Region names come from other programs' files; JSON must stay valid even
 * when a name is not UTF-8, so broken bytes become U+FFFD. */
size_t cli_utf8_length(const unsigned char *p) {
    if (p[0] < 0x80) return 1;
    size_t n = (p[0] & 0xE0) == 0xC0 ? 2 : (p[0] & 0xF0) == 0xE0 ? 3 : (p[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (n == 0 || (n == 2 && p[0] < 0xC2) || (n == 4 && p[0] > 0xF4)) return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    uint32_t cp = n == 2 ? (uint32_t)(p[0] & 0x1F) << 6 | (p[1] & 0x3Fu)
                : n == 3 ? (uint32_t)(p[0] & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 |
                               (p[2] & 0x3Fu)
                         : (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3F) << 12 |
                               (uint32_t)(p[2] & 0x3F) << 6 | (p[3] & 0x3Fu);
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

/* The one UTF-8 walk of every escaper: valid multi-byte sequences are
 * copied, every byte that is not valid UTF-8 becomes `invalid`, and each
 * ASCII byte goes through `ascii` (which escapes what its language needs). */
static void escape_utf8(FILE *out, const char *s, const char *invalid,
                        void (*ascii)(FILE *, unsigned char, int), int flag) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t n = cli_utf8_length(p);
        if (n == 0) {
            fputs(invalid, out);
            p++;
        } else if (n > 1) {
            fwrite(p, 1, n, out);
            p += n;
        } else {
            ascii(out, *p++, flag);
        }
    }
}

/* html_safe: also '<', '>' and '&' as \u escapes, so the literal can sit
 * inside an HTML <script> element ("</script>" in a name cannot end it). */
static void json_ascii(FILE *out, unsigned char c, int html_safe) {
    switch (c) {
    case '"': fputs("\\\"", out); break;
    case '\\': fputs("\\\\", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
        if (c < 0x20 || c == 0x7f || (html_safe && (c == '<' || c == '>' || c == '&')))
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
}

static void xml_ascii(FILE *out, unsigned char c, int unused) {
    (void)unused;
    switch (c) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    case '\'': fputs("&#39;", out); break;
    /* Kept as references so that attribute values keep them too. */
    case '\n': fputs("&#10;", out); break;
    case '\r': fputs("&#13;", out); break;
    case '\t': fputs("&#9;", out); break;
    default:
        /* XML 1.0 allows no other C0 control, not even as a reference. */
        if (c < 0x20 || c == 0x7f) fputs("\xef\xbf\xbd", out);
        else fputc(c, out);
    }
}

void cli_json_string(FILE *out, const char *s) {
    fputc('"', out);
    escape_utf8(out, s, "\\ufffd", json_ascii, 0);
    fputc('"', out);
}

void cli_json_string_html(FILE *out, const char *s) {
    fputc('"', out);
    escape_utf8(out, s, "\\ufffd", json_ascii, 1);
    fputc('"', out);
}

void cli_xml_string(FILE *out, const char *s) { escape_utf8(out, s, "\xef\xbf\xbd", xml_ascii, 0); }

void cli_json_file_header(FILE *out, const sp_results *res) {
    long label = sp_results_metadata_find(res, "label");
    const char *text = label >= 0 ? sp_results_metadata_string(res, (size_t)label) : NULL;
    fputs("{\n  \"file\": ", out);
    cli_json_string(out, sp_results_path(res));
    fprintf(out, ",\n  \"num_ranks\": %u,\n  \"label\": ", sp_results_rank_count(res));
    if (text) cli_json_string(out, text);
    else fputs("null", out);
    fputs(",\n  \"units\": \"seconds\"", out);
}

const char *cli_text(const char *s, char *buf, size_t len) {
    sp_escape_name(s, buf, len);
    return buf;
}

char *cli_text_dup(const char *s) {
    size_t len = sp_escape_name(s, NULL, 0) + 1;
    char *copy = malloc(len);
    if (copy) sp_escape_name(s, copy, len);
    return copy;
}

char *cli_text_cut(const char *s, size_t columns, const char *marker) {
    char *copy = cli_text_dup(s);
    if (!copy) return NULL;
    size_t marker_columns = 0, width = 0, keep_bytes = 0;
    for (const char *p = marker; *p; p++) marker_columns += ((unsigned char)*p & 0xC0) != 0x80;
    size_t keep = columns > marker_columns ? columns - marker_columns : 0;
    for (size_t i = 0; copy[i]; i++) {
        if (((unsigned char)copy[i] & 0xC0) == 0x80) continue;
        if (width == keep) keep_bytes = i;
        width++;
    }
    if (width <= columns) return copy;
    size_t marker_len = strlen(marker);
    char *cut = malloc(keep_bytes + marker_len + 1);
    if (cut) {
        memcpy(cut, copy, keep_bytes);
        memcpy(cut + keep_bytes, marker, marker_len + 1);
    }
    free(copy);
    return cut;
}

void cli_text_put(FILE *out, const char *s) {
    char small[256];
    if (sp_escape_name(s, small, sizeof small) < sizeof small) {
        fputs(small, out);
        return;
    }
    char *copy = cli_text_dup(s);
    fputs(copy ? copy : small, out); /* out of memory: the cut copy */
    free(copy);
}
