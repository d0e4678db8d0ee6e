/*
 * export_speedscope.c - speedscope's "evented" profiles, one per (rank,
 * thread) lane.
 *
 * Evented rather than sampled: the profile holds every call's exact begin
 * and end, and speedscope draws evented profiles as they are (its time
 * order view is then the lane's timeline, left heavy and sandwich pool
 * the calls). Frames are the region table, shared by every profile, so a
 * region has one name and one colour across ranks and threads. Times are
 * integer ns from the earliest start in the file: exact, and every lane
 * of every rank shares one zero.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "export_formats.h"

typedef struct emit_ctx {
    FILE *out;
    const view_lanes *v;
    bool first;
} emit_ctx;

static int emit(emit_ctx *c, char type, const view_call *call, int64_t at) {
    fprintf(c->out, "%s{\"type\":\"%c\",\"frame\":%zu,\"at\":%" PRId64 "}", c->first ? "" : ",\n",
            type, view_call_region(c->v, call), at - c->v->origin);
    c->first = false;
    return ferror(c->out) ? SP_ERR_OUTPUT : 0;
}

static int on_open(void *p, const view_call *call, unsigned depth, int64_t start) {
    (void)depth;
    return emit(p, 'O', call, start);
}

static int on_close(void *p, const view_call *call, unsigned depth, int64_t end) {
    (void)depth;
    return emit(p, 'C', call, end);
}

/* The thread table indexed by (rank, thread index), sorted once: a lookup
 * per lane by a scan of the table was lanes x threads, both of which grow
 * with the ranks. A name that appears twice for one thread: the last one
 * in the table wins, as the scan did. */
typedef struct thread_key {
    uint64_t key;  /* rank << 32 | thread index */
    size_t entry;  /* index in the thread table */
    const char *name;
} thread_key;

static int cmp_thread_key(const void *pa, const void *pb) {
    const thread_key *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->entry > b->entry) - (a->entry < b->entry);
}

static thread_key *thread_names(const sp_results *res, size_t *count) {
    size_t n = sp_results_thread_count(res), k = 0;
    thread_key *keys = malloc((n + 1) * sizeof *keys);
    if (!keys) return NULL;
    for (size_t t = 0; t < n; t++) {
        sp_thread_info info;
        if (sp_results_thread(res, t, &info) != SP_OK || !info.name || !info.name[0] ||
            info.index < 0 || info.index > UINT32_MAX)
            continue;
        keys[k++] = (thread_key){(uint64_t)info.rank << 32 | (uint64_t)info.index, t, info.name};
    }
    qsort(keys, k, sizeof *keys, cmp_thread_key);
    *count = k;
    return keys;
}

/* "rank 0 / thread 1 (name)"; the thread table gives the name. */
static void lane_name(FILE *out, const thread_key *keys, size_t key_count, const view_lane *l) {
    char buf[96];
    const char *thread_name = NULL;
    if (l->thread >= 0 && l->thread <= UINT32_MAX) {
        uint64_t key = (uint64_t)l->rank << 32 | (uint64_t)l->thread;
        size_t lo = 0, hi = key_count; /* first entry with a larger key */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (keys[mid].key <= key) lo = mid + 1;
            else hi = mid;
        }
        if (lo > 0 && keys[lo - 1].key == key) thread_name = keys[lo - 1].name;
    }
    view_lane_label(l, buf, sizeof buf);
    size_t len = strlen(buf) + (thread_name ? strlen(thread_name) : 0) + 4;
    char *full = thread_name ? malloc(len) : NULL;
    if (full) snprintf(full, len, "%s (%s)", buf, thread_name);
    cli_json_string(out, full ? full : buf);
    free(full);
}

int export_speedscope(FILE *out, view_lanes *v) {
    const sp_results *res = v->res;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
          "\"exporter\":\"scope-export " SCOPE_PROFILER_VERSION "\",\n\"name\":",
          out);
    long label = sp_results_metadata_find(res, "label");
    const char *text = label >= 0 ? sp_results_metadata_string(res, (size_t)label) : NULL;
    cli_json_string(out, text && text[0] ? text : sp_results_path(res));
    fputs(",\n\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[\n", out);
    for (size_t r = 0; r < sp_results_region_count(res); r++) {
        fputs(r ? ",\n{\"name\":" : "{\"name\":", out);
        cli_json_string(out, sp_results_region_name(res, r));
        fputc('}', out);
    }
    fputs("]},\n\"profiles\":[", out);
    size_t key_count = 0;
    thread_key *keys = thread_names(res, &key_count);
    if (!keys) return SP_ERR_OUT_OF_MEMORY;
    view_walk_callbacks cb = {on_open, on_close};
    for (size_t l = 0; l < v->lane_count; l++) {
        const view_lane *lane = &v->lanes[l];
        int64_t first = lane->start_min;
        int64_t last = lane->end_max > first ? lane->end_max : first;
        fputs(l ? ",\n{\"type\":\"evented\",\"name\":" : "\n{\"type\":\"evented\",\"name\":", out);
        lane_name(out, keys, key_count, lane);
        fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":%" PRId64 ",\"endValue\":%" PRId64
                     ",\"events\":[\n",
                first - v->origin, last - v->origin);
        emit_ctx c = {out, v, true};
        int rc = view_lanes_walk(v, l, &cb, &c);
        if (rc) {
            free(keys);
            return rc;
        }
        fputs("]}", out);
    }
    free(keys);
    fputs("]}\n", out);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
