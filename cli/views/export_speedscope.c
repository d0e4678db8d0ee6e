/*
 * export_speedscope.c - speedscope profiles, one per lane (rank, thread,
 * tree track; view_lanes.h).
 *
 * Evented where order matters, sampled where size does. An "evented"
 * profile holds every call's exact begin and end, and speedscope draws it
 * as it is: its time order view is the lane's timeline. But it costs two
 * events (~70 bytes) a call: 3.1M calls were 249 MB. So an export of at
 * most SPEEDSCOPE_EVENTED_CALLS calls is evented throughout (a timeline a
 * viewer can hold); past that, every lane whose aggregated form is
 * smaller becomes one "sampled" profile with one sample per distinct call
 * path (its frames from the outermost) weighing the path's exclusive ns:
 * the size grows with the distinct stacks, not with the calls, and left
 * heavy and sandwich (what pools calls anyway) show the same numbers. The
 * time order view of such a profile shows paths, not the timeline; its
 * name says "aggregated" and how many calls it holds. A lane whose paths
 * are so deep that their frames would outweigh its events (a deep
 * recursion) stays evented.
 *
 * Frames are the region table, shared by every profile, so a region has
 * one name and one colour across ranks and threads. Times are integer ns
 * from the earliest start in the file, printed as uint64 (the span from
 * INT64_MIN to INT64_MAX does not fit an int64): exact, and every lane of
 * every rank shares one zero.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "export_formats.h"

/* Most calls of an export written as evented profiles throughout. */
#define SPEEDSCOPE_EVENTED_CALLS 250000u

/* Bytes, roughly, of one event ("{"type":"O","frame":12,"at":123456789},")
 * and of one frame index in a sample: which form of a lane is smaller. */
enum { EVENT_BYTES = 40, SAMPLE_FRAME_BYTES = 4, SAMPLE_BYTES = 16 };

typedef struct emit_ctx {
    FILE *out;
    const view_lanes *v;
    bool first;
} emit_ctx;

static int emit(emit_ctx *c, char type, const view_call *call, int64_t at) {
    fprintf(c->out, "%s{\"type\":\"%c\",\"frame\":%zu,\"at\":%" PRIu64 "}", c->first ? "" : ",\n",
            type, view_call_region(c->v, call), view_span(c->v->origin, at));
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

/* "rank 0 / thread 1 (name)"; the thread table gives the name; `extra`
 * (may be NULL) is appended. */
static void lane_name(FILE *out, const thread_key *keys, size_t key_count, const view_lane *l,
                      const char *extra) {
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
    if (!extra) extra = "";
    size_t len = strlen(buf) + (thread_name ? strlen(thread_name) : 0) + strlen(extra) + 4;
    char *full = malloc(len);
    if (full && thread_name) snprintf(full, len, "%s (%s)%s", buf, thread_name, extra);
    else if (full) snprintf(full, len, "%s%s", buf, extra);
    cli_json_string(out, full ? full : buf);
    free(full);
}

/* Frames written by the samples of t: the depth of every path with
 * exclusive time. */
static uint64_t sample_frames(const flame_tree *t, uint64_t *samples) {
    uint64_t frames = 0;
    *samples = 0;
    for (size_t n = 1; n < t->count; n++)
        if (t->nodes[n].self_ns > 0) {
            frames += t->nodes[n].depth;
            (*samples)++;
        }
    return frames;
}

/* Lane l as one sampled profile of its call paths (tree t of that lane):
 * samples in pre-order, so related stacks sit side by side. */
static int write_sampled(FILE *out, view_lanes *v, size_t l, const flame_tree *t,
                         const thread_key *keys, size_t key_count) {
    const view_lane *lane = &v->lanes[l];
    char extra[96];
    snprintf(extra, sizeof extra, " (aggregated: %" PRIu64 " calls)", lane->count);
    fputs("\n{\"type\":\"sampled\",\"name\":", out);
    lane_name(out, keys, key_count, lane, extra);
    uint64_t start = view_span(v->origin, lane->start_min), weight = 0;
    for (size_t n = 1; n < t->count; n++)
        if (t->nodes[n].self_ns > 0) weight += (uint64_t)t->nodes[n].self_ns;
    fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64
                 ",\"samples\":[",
            start, start + weight < start ? UINT64_MAX : start + weight);
    uint32_t *path = malloc(((size_t)t->max_depth + 1) * sizeof *path);
    if (!path) return SP_ERR_OUT_OF_MEMORY;
    bool first = true;
    /* pre-order without recursion: children first, then siblings */
    for (uint32_t n = t->nodes[0].first_child; n != FLAME_NONE;) {
        if (t->nodes[n].self_ns > 0) {
            size_t len = 0;
            for (uint32_t up = n; up != 0; up = t->nodes[up].parent) path[len++] = up;
            fputs(first ? "[" : ",[", out);
            for (size_t i = len; i-- > 0;)
                fprintf(out, "%s%lld", i + 1 < len ? "," : "", (long long)t->nodes[path[i]].key);
            fputc(']', out);
            first = false;
        }
        if (t->nodes[n].first_child != FLAME_NONE) {
            n = t->nodes[n].first_child;
            continue;
        }
        while (n != FLAME_NONE && t->nodes[n].next_sibling == FLAME_NONE)
            n = t->nodes[n].parent == 0 ? FLAME_NONE : t->nodes[n].parent;
        if (n != FLAME_NONE) n = t->nodes[n].next_sibling;
    }
    free(path);
    fputs("],\"weights\":[", out);
    first = true;
    for (uint32_t n = t->nodes[0].first_child; n != FLAME_NONE;) {
        if (t->nodes[n].self_ns > 0) {
            fprintf(out, "%s%lld", first ? "" : ",", (long long)t->nodes[n].self_ns);
            first = false;
        }
        if (t->nodes[n].first_child != FLAME_NONE) {
            n = t->nodes[n].first_child;
            continue;
        }
        while (n != FLAME_NONE && t->nodes[n].next_sibling == FLAME_NONE)
            n = t->nodes[n].parent == 0 ? FLAME_NONE : t->nodes[n].parent;
        if (n != FLAME_NONE) n = t->nodes[n].next_sibling;
    }
    fputs("]}", out);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}

/* Lane l as an evented profile: every call's begin and end. */
static int write_evented(FILE *out, view_lanes *v, size_t l, const thread_key *keys,
                         size_t key_count) {
    const view_lane *lane = &v->lanes[l];
    int64_t first = lane->start_min;
    int64_t last = lane->end_max > first ? lane->end_max : first;
    fputs("\n{\"type\":\"evented\",\"name\":", out);
    lane_name(out, keys, key_count, lane, NULL);
    fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64
                 ",\"events\":[\n",
            view_span(v->origin, first), view_span(v->origin, last));
    emit_ctx c = {out, v, true};
    view_walk_callbacks cb = {on_open, on_close};
    int rc = view_lanes_walk(v, l, &cb, &c);
    if (rc) return rc;
    fputs("]}", out);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}

/* One lane in the smaller of its two forms (see the file's comment). */
static int write_lane(FILE *out, view_lanes *v, size_t l, const thread_key *keys,
                      size_t key_count) {
    if (v->call_count <= SPEEDSCOPE_EVENTED_CALLS)
        return write_evented(out, v, l, keys, key_count);
    flame_tree t;
    int st = flame_tree_from_lane(&t, v, l);
    if (st == SP_OK) st = flame_tree_sort(&t);
    if (st != SP_OK) {
        flame_tree_free(&t);
        return st;
    }
    uint64_t samples, frames = sample_frames(&t, &samples);
    bool sampled = frames * SAMPLE_FRAME_BYTES + samples * SAMPLE_BYTES <
                   2 * v->lanes[l].count * EVENT_BYTES;
    st = sampled ? write_sampled(out, v, l, &t, keys, key_count)
                 : write_evented(out, v, l, keys, key_count);
    flame_tree_free(&t);
    return st;
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
    for (size_t l = 0; l < v->lane_count; l++) {
        if (l) fputc(',', out);
        int rc = write_lane(out, v, l, keys, key_count);
        if (rc) {
            free(keys);
            return rc;
        }
    }
    free(keys);
    fputs("]}\n", out);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
