/*
 * cli_common.c - see cli_common.h.
 */
#include "cli_common.h"

#include <stdarg.h>
#include <stdlib.h>

#include "scope_profiler_results.h"

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
static size_t utf8_length(const unsigned char *p) {
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

void cli_json_string(FILE *out, const char *s) {
    fputc('"', out);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t n = utf8_length(p);
        if (n == 0) {
            fputs("\\ufffd", out);
            p++;
            continue;
        }
        if (n > 1) {
            fwrite(p, 1, n, out);
            p += n;
            continue;
        }
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f) fprintf(out, "\\u%04x", *p);
            else fputc(*p, out);
        }
        p++;
    }
    fputc('"', out);
}


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
