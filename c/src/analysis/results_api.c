/*
 * results_api.c - the public results API (scope_profiler_results.h) over
 * the internal reader and its spi_profile.
 *
 * The object is built completely in sp_results_open (ends, decoded tags)
 * and never changes afterwards; that is what makes concurrent accessors
 * safe without a lock. Accessors check their indices and answer with the
 * documented empty value instead of failing, so callers can iterate with
 * the count functions alone.
 */
#include <string.h>

#include "util/alloc.h"
#include "profile/call_cursor.h"
#include "format/reader.h"
#include "format/schema.h"
#include "analysis/results_internal.h"
#include "scope_profiler_results.h"

struct sp_results {
    spi_profile profile;
    char *path;
    char ***tags;            /* [row_count]: decoded tags */
    size_t *tag_counts;      /* [row_count] */
};

/* ---- JSON list of strings ------------------------------------------------ */

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static unsigned hex4(const char *p, bool *ok) {
    unsigned value = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        value <<= 4;
        if (c >= '0' && c <= '9') value |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') value |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') value |= (unsigned)(c - 'A' + 10);
        else *ok = false;
    }
    return value;
}

static size_t put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* One JSON string at *pp (which points at the opening quote) into a new
 * UTF-8 string; NULL on malformed input or no memory. A decoded string is
 * never longer than its escaped form, so the source length bounds it. */
static char *parse_json_string(const char **pp) {
    const char *p = *pp + 1;
    char *out = spi_malloc(strlen(p) + 1);
    if (!out) return NULL;
    size_t n = 0;
    bool ok = true;
    while (ok && *p && *p != '"') {
        if (*p != '\\') {
            out[n++] = *p++;
            continue;
        }
        p++;
        switch (*p) {
        case '"': case '\\': case '/': out[n++] = *p++; break;
        case 'b': out[n++] = '\b'; p++; break;
        case 'f': out[n++] = '\f'; p++; break;
        case 'n': out[n++] = '\n'; p++; break;
        case 'r': out[n++] = '\r'; p++; break;
        case 't': out[n++] = '\t'; p++; break;
        case 'u': {
            if (strnlen(p + 1, 4) < 4) { ok = false; break; }
            unsigned cp = hex4(p + 1, &ok);
            p += 5;
            /* json.dumps escapes astral characters as surrogate pairs. */
            if (ok && cp >= 0xD800 && cp < 0xDC00 && p[0] == '\\' && p[1] == 'u' &&
                strnlen(p + 2, 4) == 4) {
                unsigned low = hex4(p + 2, &ok);
                if (ok && low >= 0xDC00 && low < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    p += 6;
                }
            }
            /* \uXXXX (6 bytes) becomes at most 3 bytes, a pair (12) at most 4. */
            if (ok) n += put_utf8(out + n, cp);
            break;
        }
        default: ok = false;
        }
    }
    if (!ok || *p != '"') {
        spi_free(out);
        return NULL;
    }
    out[n] = '\0';
    *pp = p + 1;
    return out;
}

/* Decode a JSON list of strings. Anything else gives zero tags: tags are
 * descriptive and never worth failing a read for. */
static int decode_tags(const char *json, char ***tags, size_t *count) {
    *tags = NULL;
    *count = 0;
    if (!json) return SP_OK;
    const char *p = skip_space(json);
    if (*p != '[') return SP_OK;
    size_t capacity = 0, n = 0;
    char **list = NULL;
    p = skip_space(p + 1);
    bool ok = true;
    while (ok && *p != ']') {
        if (*p != '"') { ok = false; break; }
        char *item = parse_json_string(&p);
        if (!item) { ok = false; break; }
        if (n == capacity) {
            size_t grown_capacity = capacity ? capacity * 2 : 4;
            char **grown = spi_reallocarray(list, grown_capacity, sizeof *grown);
            if (!grown) {
                spi_free(item);
                for (size_t i = 0; i < n; i++) spi_free(list[i]);
                spi_free(list);
                return SP_ERR_OUT_OF_MEMORY;
            }
            list = grown;
            capacity = grown_capacity;
        }
        list[n++] = item;
        p = skip_space(p);
        if (*p == ',') p = skip_space(p + 1);
        else if (*p != ']') ok = false;
    }
    if (!ok) {
        for (size_t i = 0; i < n; i++) spi_free(list[i]);
        spi_free(list);
        return SP_OK;
    }
    *tags = list;
    *count = n;
    return SP_OK;
}

/* ---- open / close ---------------------------------------------------------- */

SP_API void sp_results_close(sp_results *results) {
    if (!results) return;
    for (size_t i = 0; i < results->profile.row_count; i++) {
        if (results->tags) {
            for (size_t t = 0; t < results->tag_counts[i]; t++) spi_free(results->tags[i][t]);
            spi_free(results->tags[i]);
        }
    }
    spi_free(results->tags);
    spi_free(results->tag_counts);
    spi_free(results->path);
    spi_profile_free(&results->profile);
    spi_free(results);
}

static void copy_message(char *errbuf, size_t errbuf_len, const char *message) {
    if (!errbuf || errbuf_len == 0) return;
    size_t len = strlen(message);
    if (len >= errbuf_len) len = errbuf_len - 1;
    memcpy(errbuf, message, len);
    errbuf[len] = '\0';
}

static int derive(sp_results *r) {
    size_t rows = r->profile.row_count;
    r->tags = spi_calloc(rows, sizeof *r->tags);
    r->tag_counts = spi_calloc(rows, sizeof *r->tag_counts);
    if (!r->tags || !r->tag_counts) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < rows; i++) {
        const spi_row *row = &r->profile.rows[i];
        int status = decode_tags(row->tags_json, &r->tags[i], &r->tag_counts[i]);
        if (status != SP_OK) return status;
    }
    return SP_OK;
}

SP_API int sp_results_open(const char *path, int flags, sp_results **out, char *errbuf,
                           size_t errbuf_len) {
    copy_message(errbuf, errbuf_len, "");
    if (out) *out = NULL;
    if (!path || !out || (flags & ~(SP_RESULTS_SUMMARY_ONLY | SP_RESULTS_CALLS_ON_DEMAND)) ||
        (flags == (SP_RESULTS_SUMMARY_ONLY | SP_RESULTS_CALLS_ON_DEMAND))) {
        copy_message(errbuf, errbuf_len, "sp_results_open: invalid argument");
        spi_status_remember(SP_ERR_INVALID_ARGUMENT);
        return SP_ERR_INVALID_ARGUMENT;
    }
    spi_error err;
    spi_error_clear(&err);
    sp_results *r = spi_calloc(1, sizeof *r);
    int status = r ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    if (status == SP_OK && !(r->path = spi_strdup(path))) status = SP_ERR_OUT_OF_MEMORY;
    if (status == SP_OK)
        status = spi_profile_read(&r->profile, path,
                                  (flags & SP_RESULTS_SUMMARY_ONLY)       ? SPI_READ_SUMMARY_ONLY
                                  : (flags & SP_RESULTS_CALLS_ON_DEMAND)
                                      ? SPI_READ_CALLS_ON_DEMAND | SPI_READ_WITH_ENDS
                                      : SPI_READ_WITH_ENDS,
                                  &err);
    if (status == SP_OK) status = derive(r);
    if (status != SP_OK) {
        if (err.status == SP_OK) spi_error_set(&err, status, "%s: out of memory", path);
        copy_message(errbuf, errbuf_len, err.message);
        sp_results_close(r);
        spi_status_remember(status);
        return status;
    }
    *out = r;
    return SP_OK;
}

int spi_results_adopt(spi_profile *profile, const char *path, sp_results **out) {
    *out = NULL;
    sp_results *r = spi_calloc(1, sizeof *r);
    if (!r) {
        spi_profile_free(profile);
        return SP_ERR_OUT_OF_MEMORY;
    }
    r->profile = *profile;
    *profile = (spi_profile){0};
    int status = (r->path = spi_strdup(path ? path : "")) ? SP_OK : SP_ERR_OUT_OF_MEMORY;
    /* A recorded run is a schema-3 profile that has not been written: give
     * it what a read would (ends, rank count) so every accessor behaves the
     * same for both. */
    spi_profile *p = &r->profile;
    p->schema_version = SPI_SCHEMA_VERSION;
    for (size_t i = 0; i < p->row_count && status == SP_OK; i++) {
        spi_row *row = &p->rows[i];
        if (row->rank + 1 > p->rank_count) p->rank_count = row->rank + 1;
        if (row->ends || row->count == 0) continue;
        if (!(row->ends = spi_malloc((size_t)row->count * sizeof *row->ends))) {
            status = SP_ERR_OUT_OF_MEMORY;
            break;
        }
        for (uint64_t k = 0; k < row->count; k++) row->ends[k] = row->starts[k] + row->durations[k];
    }
    const spi_meta_entry *size = spi_meta_find(&p->metadata, "mpi_size");
    if (size && size->kind == SPI_META_I64 && size->i64 > (int64_t)p->rank_count && p->row_count)
        p->rank_count = (uint32_t)size->i64;
    if (status == SP_OK) status = derive(r);
    if (status != SP_OK) {
        sp_results_close(r);
        return status;
    }
    *out = r;
    return SP_OK;
}

/* ---- the file as a whole ---------------------------------------------------- */

SP_API int sp_results_format_kind(const sp_results *r) {
    if (!r) return -1;
    return r->profile.trace_version ? SP_RESULTS_FORMAT_TRACE : SP_RESULTS_FORMAT_HDF5;
}

SP_API int sp_results_schema_version(const sp_results *r) {
    if (!r) return 0;
    return r->profile.trace_version ? r->profile.trace_version : r->profile.schema_version;
}

SP_API int sp_results_is_summary_only(const sp_results *r) { return r && r->profile.summary_only; }
SP_API int sp_results_is_aggregate(const sp_results *r) { return r && r->profile.aggregate; }
SP_API int sp_results_has_events(const sp_results *r) {
    return r && !r->profile.summary_only && !r->profile.aggregate;
}
SP_API const char *sp_results_path(const sp_results *r) { return r ? r->path : NULL; }

SP_API size_t sp_results_call_path_count(const sp_results *r) { return r ? r->profile.path_count : 0; }

SP_API int sp_results_call_path(const sp_results *r, size_t index, sp_call_path *path) {
    if (!r || !path || index >= r->profile.path_count) return SP_ERR_INVALID_ARGUMENT;
    const spi_call_path *p = &r->profile.paths[index];
    *path = (sp_call_path){.rank = p->rank, .region = p->region, .parent = p->parent,
                           .thread = p->thread, .count = p->count, .recursions = p->recursions,
                           .total_ns = p->total, .min_ns = p->minimum, .max_ns = p->maximum,
                           .exclusive_ns = p->exclusive, .m2 = p->m2,
                           .start_min_ns = p->start_minimum, .end_max_ns = p->end_maximum};
    return SP_OK;
}
SP_API uint32_t sp_results_rank_count(const sp_results *r) { return r ? r->profile.rank_count : 0; }

/* ---- metadata ---------------------------------------------------------------- */

static const spi_meta_entry *meta_entry(const sp_results *r, size_t index) {
    if (!r || index >= r->profile.metadata.count) return NULL;
    return &r->profile.metadata.entries[index];
}

SP_API size_t sp_results_metadata_count(const sp_results *r) {
    return r ? r->profile.metadata.count : 0;
}

SP_API const char *sp_results_metadata_key(const sp_results *r, size_t index) {
    const spi_meta_entry *e = meta_entry(r, index);
    return e ? e->key : NULL;
}

SP_API int sp_results_metadata_kind(const sp_results *r, size_t index) {
    const spi_meta_entry *e = meta_entry(r, index);
    if (!e) return -1;
    switch (e->kind) {
    case SPI_META_STR: return SP_META_KIND_STRING;
    case SPI_META_I64: return SP_META_KIND_INT;
    case SPI_META_F64: return SP_META_KIND_DOUBLE;
    case SPI_META_BOOL: return SP_META_KIND_BOOL;
    case SPI_META_STR_ARRAY: return SP_META_KIND_STRING_ARRAY;
    }
    return -1;
}

SP_API long sp_results_metadata_find(const sp_results *r, const char *key) {
    if (!r || !key) return -1;
    for (size_t i = 0; i < r->profile.metadata.count; i++)
        if (strcmp(r->profile.metadata.entries[i].key, key) == 0) return (long)i;
    return -1;
}

SP_API const char *sp_results_metadata_string(const sp_results *r, size_t index) {
    const spi_meta_entry *e = meta_entry(r, index);
    return e && e->kind == SPI_META_STR ? e->str : NULL;
}

SP_API int sp_results_metadata_int(const sp_results *r, size_t index, int64_t *value) {
    const spi_meta_entry *e = meta_entry(r, index);
    if (!e || !value || (e->kind != SPI_META_I64 && e->kind != SPI_META_BOOL))
        return SP_ERR_INVALID_ARGUMENT;
    *value = e->i64;
    return SP_OK;
}

SP_API int sp_results_metadata_double(const sp_results *r, size_t index, double *value) {
    const spi_meta_entry *e = meta_entry(r, index);
    if (!e || !value) return SP_ERR_INVALID_ARGUMENT;
    if (e->kind == SPI_META_F64) *value = e->f64;
    else if (e->kind == SPI_META_I64 || e->kind == SPI_META_BOOL) *value = (double)e->i64;
    else return SP_ERR_INVALID_ARGUMENT;
    return SP_OK;
}

SP_API size_t sp_results_metadata_array_length(const sp_results *r, size_t index) {
    const spi_meta_entry *e = meta_entry(r, index);
    return e && e->kind == SPI_META_STR_ARRAY ? e->item_count : 0;
}

SP_API const char *sp_results_metadata_array_item(const sp_results *r, size_t index,
                                                  size_t item) {
    const spi_meta_entry *e = meta_entry(r, index);
    if (!e || e->kind != SPI_META_STR_ARRAY || item >= e->item_count) return NULL;
    return e->items[item];
}

/* ---- regions and rows -------------------------------------------------------- */

SP_API size_t sp_results_region_count(const sp_results *r) { return r ? r->profile.name_count : 0; }

SP_API const char *sp_results_region_name(const sp_results *r, size_t region) {
    return r && region < r->profile.name_count ? r->profile.names[region] : NULL;
}

SP_API long sp_results_region_find(const sp_results *r, const char *name) {
    if (!r || !name) return -1;
    for (size_t i = 0; i < r->profile.name_count; i++)
        if (strcmp(r->profile.names[i], name) == 0) return (long)i;
    return -1;
}

static const spi_row *row_at(const sp_results *r, size_t row) {
    return r && row < r->profile.row_count ? &r->profile.rows[row] : NULL;
}

SP_API size_t sp_results_row_count(const sp_results *r) { return r ? r->profile.row_count : 0; }

SP_API long sp_results_row_find(const sp_results *r, uint32_t rank, size_t region) {
    if (!r) return -1;
    for (size_t i = 0; i < r->profile.row_count; i++)
        if (r->profile.rows[i].rank == rank && r->profile.rows[i].region == region) return (long)i;
    return -1;
}

SP_API uint32_t sp_results_row_rank(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    return x ? x->rank : 0;
}

SP_API size_t sp_results_row_region(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    return x ? x->region : 0;
}

SP_API uint64_t sp_results_row_calls(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    if (!x) return 0;
    return x->aggregate ? x->aggregate_count : x->count;
}

/* Per-call arrays exist only for rows with calls in a full read. */
#define ROW_ARRAY(fn, field)                                                    \
    SP_API const int64_t *fn(const sp_results *r, size_t row) {                \
        const spi_row *x = row_at(r, row);                                      \
        return x && x->count > 0 ? x->field : NULL;                             \
    }
ROW_ARRAY(sp_results_row_starts, starts)
ROW_ARRAY(sp_results_row_durations, durations)
ROW_ARRAY(sp_results_row_call_ids, call_ids)
ROW_ARRAY(sp_results_row_parent_ids, parent_ids)
ROW_ARRAY(sp_results_row_thread_ids, thread_ids)
ROW_ARRAY(sp_results_row_gpu_durations, gpu_durations)
ROW_ARRAY(sp_results_row_task_ids, task_ids)
ROW_ARRAY(sp_results_row_await_ns, await_ns)
#undef ROW_ARRAY

/* ---- calls in slices ------------------------------------------------------ */

struct sp_calls {
    spi_call_cursor cursor;
};

SP_API int sp_calls_open(const sp_results *r, size_t row, size_t slice_max, sp_calls **out) {
    if (out) *out = NULL;
    if (!r || !out || row >= r->profile.row_count || !spi_profile_has_calls(&r->profile) ||
        r->profile.rows[row].aggregate)
        return SP_ERR_INVALID_ARGUMENT;
    sp_calls *calls = spi_calloc(1, sizeof *calls);
    if (!calls) return SP_ERR_OUT_OF_MEMORY;
    int status = spi_call_cursor_open(&calls->cursor, &r->profile, row, SPI_CURSOR_ALL, slice_max);
    if (status != SP_OK) {
        spi_free(calls);
        return status;
    }
    *out = calls;
    return SP_OK;
}

SP_API int sp_calls_next(sp_calls *calls, sp_call_slice *slice, char *errbuf, size_t errbuf_len) {
    copy_message(errbuf, errbuf_len, "");
    if (!calls || !slice) return SP_ERR_INVALID_ARGUMENT;
    spi_error err;
    spi_error_clear(&err);
    spi_call_slice s;
    int status = spi_call_cursor_next(&calls->cursor, &s, &err);
    if (status != SP_OK) {
        *slice = (sp_call_slice){0};
        copy_message(errbuf, errbuf_len, err.message);
        return status;
    }
    *slice = (sp_call_slice){.count = s.count, .starts = s.starts, .ends = s.ends,
                             .durations = s.durations, .call_ids = s.call_ids,
                             .parent_ids = s.parent_ids, .thread_ids = s.thread_ids,
                             .gpu_durations = s.gpu_durations};
    return SP_OK;
}

SP_API void sp_calls_close(sp_calls *calls) {
    if (!calls) return;
    spi_call_cursor_close(&calls->cursor);
    spi_free(calls);
}

SP_API int sp_results_row_in_start_order(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    return x && !x->out_of_start_order;
}

const spi_profile *spi_results_profile(const sp_results *r) { return &r->profile; }

SP_API int sp_results_calls_in_memory(const sp_results *r) {
    return r && spi_profile_has_calls(&r->profile) && !r->profile.store;
}

SP_API const int64_t *sp_results_row_ends(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    return x ? x->ends : NULL;
}

SP_API const char *sp_results_row_source_file(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    return x ? x->source_file : NULL;
}

SP_API int64_t sp_results_row_source_line(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    return x ? x->source_line : -1;
}

SP_API const char *sp_results_row_source_text(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    return x ? x->source_text : NULL;
}

SP_API const char *sp_results_row_tags_json(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    if (!x) return NULL;
    return x->tags_json ? x->tags_json : "[]";
}

SP_API size_t sp_results_row_tag_count(const sp_results *r, size_t row) {
    return row_at(r, row) ? r->tag_counts[row] : 0;
}

SP_API const char *sp_results_row_tag(const sp_results *r, size_t row, size_t tag) {
    if (!row_at(r, row) || tag >= r->tag_counts[row]) return NULL;
    return r->tags[row][tag];
}

SP_API const char *sp_results_row_event_metadata_json(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    if (!x) return NULL;
    return x->event_metadata_json ? x->event_metadata_json : "[]";
}

SP_API int64_t sp_results_row_exclusive_total(const sp_results *r, size_t row) {
    const spi_row *x = row_at(r, row);
    if (!x) return -1;
    return x->aggregate ? x->aggregate_exclusive : x->exclusive_total;
}

SP_API int sp_results_row_stats(const sp_results *r, size_t row, sp_row_stats *stats) {
    const spi_row *x = row_at(r, row);
    if (!x || !stats) return SP_ERR_INVALID_ARGUMENT;
    const spi_stats *s = &x->stats;
    *stats = (sp_row_stats){
        .count = x->aggregate ? x->aggregate_count : x->count,
        .total = s->total,
        .minimum = s->minimum,
        .maximum = s->maximum,
        .first = s->first,
        .last = s->last,
        .start_minimum = s->start_minimum,
        .end_maximum = s->end_maximum,
        .gpu_count = s->gpu_count,
        .gpu_total = s->gpu_total,
        .mean = s->mean,
        .m2 = s->m2,
        .source = x->aggregate ? SP_STATS_AGGREGATE
                  : r->profile.summary_only ? SP_STATS_STORED
                                            : SP_STATS_FROM_EVENTS,
    };
    if (x->aggregate && r->profile.path_count == 0) {
        /* Only count/total/min/max exist in this layout (documented); with
         * call paths (our aggregate mode) the moments and times exist too. */
        stats->first = stats->last = stats->start_minimum = stats->end_maximum = 0;
        stats->gpu_count = 0;
        stats->gpu_total = 0;
        stats->mean = 0.0;
        stats->m2 = 0.0;
    }
    return SP_OK;
}

/* ---- threads and perf ----------------------------------------------------------- */

SP_API size_t sp_results_thread_count(const sp_results *r) { return r ? r->profile.thread_count : 0; }

SP_API int sp_results_thread(const sp_results *r, size_t index, sp_thread_info *info) {
    if (!r || !info || index >= r->profile.thread_count) return SP_ERR_INVALID_ARGUMENT;
    const spi_thread_row *t = &r->profile.threads[index];
    *info = (sp_thread_info){.rank = t->rank, .index = t->index, .ident = t->ident,
                             .native_id = t->native_id, .daemon = t->daemon != 0,
                             .start_ns = t->start_ns, .end_ns = t->end_ns, .cpu_ns = t->cpu_ns,
                             .name = t->name ? t->name : ""};
    return SP_OK;
}

SP_API size_t sp_results_perf_count(const sp_results *r) { return r ? r->profile.perf_count : 0; }

SP_API int sp_results_perf_record(const sp_results *r, size_t index, uint32_t *rank,
                                  const char **region, int64_t *calls, size_t *counter_count) {
    if (!r || index >= r->profile.perf_count) return SP_ERR_INVALID_ARGUMENT;
    const spi_perf_record *p = &r->profile.perf[index];
    if (rank) *rank = p->rank;
    if (region) *region = p->region;
    if (calls) *calls = p->calls;
    if (counter_count) *counter_count = p->values ? p->counter_count : 0;
    return SP_OK;
}

SP_API int sp_results_perf_counter(const sp_results *r, size_t index, size_t counter,
                                   const char **event_name, uint64_t *value) {
    if (!r || index >= r->profile.perf_count) return SP_ERR_INVALID_ARGUMENT;
    const spi_perf_record *p = &r->profile.perf[index];
    if (!p->values || counter >= p->counter_count) return SP_ERR_INVALID_ARGUMENT;
    if (event_name) *event_name = p->event_names[counter];
    if (value) *value = p->values[counter];
    return SP_OK;
}

/* ---- LIKWID ------------------------------------------------------------------- */

/* The reader guarantees (reader_h5_likwid.c) that every vector holds
 * thread_count values and every matrix [names][thread_count]; the
 * accessors rely on that and only check the caller's indices. */
static const spi_likwid_record *likwid_at(const sp_results *r, size_t index) {
    return r && index < r->profile.likwid_count ? &r->profile.likwid[index] : NULL;
}

SP_API size_t sp_results_likwid_count(const sp_results *r) {
    return r ? r->profile.likwid_count : 0;
}

SP_API int sp_results_likwid_record(const sp_results *r, size_t index, uint32_t *rank,
                                    const char **tag, const char **group_name,
                                    int64_t *group_id, const char **source,
                                    size_t *thread_count) {
    const spi_likwid_record *x = likwid_at(r, index);
    if (!x) return SP_ERR_INVALID_ARGUMENT;
    if (rank) *rank = x->rank;
    if (tag) *tag = x->tag ? x->tag : "";
    if (group_name) *group_name = x->group_name ? x->group_name : "";
    if (group_id) *group_id = x->group_id;
    if (source) *source = x->source ? x->source : "";
    if (thread_count) *thread_count = x->thread_count;
    return SP_OK;
}

SP_API const int64_t *sp_results_likwid_cpus(const sp_results *r, size_t index) {
    const spi_likwid_record *x = likwid_at(r, index);
    return x && x->thread_count ? x->cpus : NULL;
}

SP_API const double *sp_results_likwid_times(const sp_results *r, size_t index) {
    const spi_likwid_record *x = likwid_at(r, index);
    return x && x->thread_count ? x->times : NULL;
}

SP_API const int64_t *sp_results_likwid_call_counts(const sp_results *r, size_t index) {
    const spi_likwid_record *x = likwid_at(r, index);
    return x && x->thread_count ? x->call_counts : NULL;
}

SP_API size_t sp_results_likwid_event_count(const sp_results *r, size_t index) {
    const spi_likwid_record *x = likwid_at(r, index);
    return x ? x->event_count : 0;
}

SP_API int sp_results_likwid_event(const sp_results *r, size_t index, size_t event,
                                   const char **name, const char **counter,
                                   const double **values) {
    const spi_likwid_record *x = likwid_at(r, index);
    if (!x || event >= x->event_count) return SP_ERR_INVALID_ARGUMENT;
    if (name) *name = x->event_names[event];
    if (counter) *counter = x->counter_names ? x->counter_names[event] : NULL;
    if (values) *values = x->thread_count ? x->events + event * x->thread_count : NULL;
    return SP_OK;
}

SP_API size_t sp_results_likwid_metric_count(const sp_results *r, size_t index) {
    const spi_likwid_record *x = likwid_at(r, index);
    return x ? x->metric_count : 0;
}

SP_API int sp_results_likwid_metric(const sp_results *r, size_t index, size_t metric,
                                    const char **name, const double **values) {
    const spi_likwid_record *x = likwid_at(r, index);
    if (!x || metric >= x->metric_count) return SP_ERR_INVALID_ARGUMENT;
    if (name) *name = x->metric_names[metric];
    if (values) *values = x->thread_count ? x->metrics + metric * x->thread_count : NULL;
    return SP_OK;
}

SP_API size_t sp_results_likwid_env_count(const sp_results *r) {
    return r ? r->profile.likwid_env_count : 0;
}

SP_API int sp_results_likwid_env(const sp_results *r, size_t index, uint32_t *rank,
                                 const char **name, const char **value) {
    if (!r || index >= r->profile.likwid_env_count) return SP_ERR_INVALID_ARGUMENT;
    const spi_likwid_env *e = &r->profile.likwid_env[index];
    if (rank) *rank = e->rank;
    if (name) *name = e->name;
    if (value) *value = e->value ? e->value : "";
    return SP_OK;
}
