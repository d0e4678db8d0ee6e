/*
 * merge_aggregate.c - scope-merge when an input has the aggregate layout:
 * the output is an aggregate profile (one row per (rank, region) with
 * counts, totals, min, max and exclusive times) with call paths
 * (docs/FORMAT.md 4.1) wherever an input had or can give them.
 *
 *   aggregate input with call paths   rows and paths copied
 *   aggregate input without them      rows copied (the Python layout)
 *   columnar input                    reduced exactly: every call placed
 *                                     on its call path through the rank's
 *                                     call tree (calltree.c), then rows
 *                                     summed from the paths; one notice
 *                                     says its timeline is not kept
 *
 * A columnar input is read whole for the reduction (its call tree needs
 * every call of a rank); the aggregate output itself is small.
 *
 * Cross-language nesting: a root path of a native input goes under a path
 * of a driver (non-native) input only when every one of its calls lies
 * inside ONE call of that driver path, which the envelope of the root path
 * [earliest start, latest end] inside that call proves. The driver call is
 * a real call of a columnar driver, or the single call of an aggregate
 * driver path with count 1; the innermost such call wins. Otherwise the
 * native path stays a root: an aggregate cannot prove more.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/calltree.h"
#include "format/h5_call_paths.h"
#include "format/h5_writer.h"
#include "format/reader.h"
#include "merge_internal.h"
#include "util/alloc.h"
#include "util/diag.h"

/* The merged paths while they are built: parents are indices into this
 * array (not yet rank-relative). */
typedef struct path_set {
    spi_call_path *paths;
    double *means;             /* running mean per path (Welford) */
    bool *mixed_threads;
    size_t *input_of;
    size_t count, capacity;
} path_set;

/* One (input, rank) reduced from calls, kept for the adoption step. */
typedef struct reduced {
    size_t input;
    uint32_t rank;
    spi_rank_tree tree;
    int64_t *path_of_call;     /* [tree.call_count] */
    const spi_profile *profile;
} reduced;

static int oom(spi_error *err) {
    return spi_error_set(err, SP_ERR_OUT_OF_MEMORY, "scope-merge: out of memory");
}

static int64_t path_add(path_set *s, const spi_call_path *p, size_t input) {
    if (s->count == s->capacity) {
        size_t capacity = s->capacity ? s->capacity * 2 : 256;
        spi_call_path *paths = spi_reallocarray(s->paths, capacity, sizeof *paths);
        if (paths) s->paths = paths;
        double *means = spi_reallocarray(s->means, capacity, sizeof *means);
        if (means) s->means = means;
        bool *mixed = spi_reallocarray(s->mixed_threads, capacity, sizeof *mixed);
        if (mixed) s->mixed_threads = mixed;
        size_t *inputs = spi_reallocarray(s->input_of, capacity, sizeof *inputs);
        if (inputs) s->input_of = inputs;
        if (!paths || !means || !mixed || !inputs) return -1;
        s->capacity = capacity;
    }
    s->paths[s->count] = *p;
    s->means[s->count] = p->count ? (double)p->total / (double)p->count : 0.0;
    s->mixed_threads[s->count] = false;
    s->input_of[s->count] = input;
    return (int64_t)s->count++;
}

/* (parent, region) -> path within one (input, rank): open addressing. */
typedef struct path_index {
    int64_t *slots;            /* path index + 1, 0 = empty */
    size_t capacity;
} path_index;

static size_t slot_of(int64_t parent, uint32_t region, size_t capacity) {
    uint64_t h = (uint64_t)(parent + 1) * UINT64_C(0x9E3779B97F4A7C15) ^
                 (uint64_t)region * UINT64_C(0xC2B2AE3D27D4EB4F);
    return (size_t)(h ^ (h >> 29)) & (capacity - 1);
}

static int64_t path_find_or_add(path_set *s, path_index *x, int64_t parent, uint32_t region,
                                uint32_t rank, size_t input) {
    if ((s->count + 1) * 2 > x->capacity) {
        size_t capacity = x->capacity ? x->capacity * 2 : 64;
        while (capacity < (s->count + 1) * 2) capacity *= 2;
        int64_t *slots = spi_calloc(capacity, sizeof *slots);
        if (!slots) return -1;
        for (size_t i = 0; i < x->capacity; i++) {
            if (!x->slots[i]) continue;
            const spi_call_path *p = &s->paths[x->slots[i] - 1];
            size_t k = slot_of(p->parent, p->region, capacity);
            while (slots[k]) k = (k + 1) & (capacity - 1);
            slots[k] = x->slots[i];
        }
        spi_free(x->slots);
        x->slots = slots;
        x->capacity = capacity;
    }
    size_t k = slot_of(parent, region, x->capacity);
    for (; x->slots[k]; k = (k + 1) & (x->capacity - 1)) {
        const spi_call_path *p = &s->paths[x->slots[k] - 1];
        if (p->parent == parent && p->region == region) return x->slots[k] - 1;
    }
    spi_call_path fresh = {.rank = rank, .region = region, .parent = parent, .thread = -1,
                           .minimum = INT64_MAX, .maximum = INT64_MIN,
                           .start_minimum = INT64_MAX, .end_maximum = INT64_MIN};
    int64_t id = path_add(s, &fresh, input);
    if (id >= 0) x->slots[k] = id + 1;
    return id;
}

/* Every call of one rank of a columnar input onto its path. */
static int reduce_rank(path_set *s, reduced *red, uint32_t region_base, int64_t thread_offset,
                       spi_error *err) {
    const spi_profile *p = red->profile;
    spi_rank_tree *tree = &red->tree;
    red->path_of_call = spi_calloc(tree->call_count + 1, sizeof *red->path_of_call);
    path_index x = {0};
    if (!red->path_of_call) return oom(err);
    int status = SP_OK;
    for (size_t i = 0; i < tree->call_count && status == SP_OK; i++) {
        const spi_row *row = &p->rows[tree->rows[i]];
        uint64_t k = tree->calls[i];
        uint32_t region = region_base + row->region;
        int64_t parent = tree->parent[i] >= 0 ? red->path_of_call[tree->parent[i]] : -1;
        int64_t id;
        bool recursion = parent >= 0 && s->paths[parent].region == region;
        if (recursion) id = parent;
        else id = path_find_or_add(s, &x, parent, region, red->rank, red->input);
        if (id < 0) {
            status = oom(err);
            break;
        }
        red->path_of_call[i] = id;
        spi_call_path *path = &s->paths[id];
        int64_t d = row->durations[k], start = row->starts[k];
        int64_t thread = row->thread_ids && row->thread_ids[k] >= 0
                             ? row->thread_ids[k] + thread_offset
                             : -1;
        if (path->count == 0) path->thread = thread;
        else if (path->thread != thread) s->mixed_threads[id] = true;
        if (recursion) path->recursions++;
        path->count++;
        path->total += d;
        path->exclusive += tree->exclusive[i];
        if (d < path->minimum) path->minimum = d;
        if (d > path->maximum) path->maximum = d;
        if (start < path->start_minimum) path->start_minimum = start;
        if (start + d > path->end_maximum) path->end_maximum = start + d;
        /* Welford: the merged file needs m2, not the calls */
        double delta = (double)d - s->means[id];
        s->means[id] += delta / (double)path->count;
        path->m2 += delta * ((double)d - s->means[id]);
    }
    spi_free(x.slots);
    return status;
}

/* The innermost driver call or single-call driver path that holds the
 * envelope of native root path `r`; -1 when none. */
static int64_t adopting_path(const path_set *s, const reduced *reds, size_t red_count,
                             const spm_input *inputs, size_t r) {
    const spi_call_path *root = &s->paths[r];
    int64_t best = -1, best_length = INT64_MAX;
    for (size_t i = 0; i < red_count; i++) {
        const reduced *red = &reds[i];
        if (red->rank != root->rank || inputs[red->input].native) continue;
        for (size_t c = 0; c < red->tree.call_count; c++) {
            const spi_row *row = &red->profile->rows[red->tree.rows[c]];
            int64_t start = row->starts[red->tree.calls[c]];
            int64_t length = row->durations[red->tree.calls[c]];
            if (start <= root->start_minimum && start + length >= root->end_maximum &&
                length < best_length) {
                best = red->path_of_call[c];
                best_length = length;
            }
        }
    }
    for (size_t d = 0; d < s->count; d++) {
        const spi_call_path *p = &s->paths[d];
        if (p->rank != root->rank || inputs[s->input_of[d]].native || p->count != 1) continue;
        int64_t length = p->end_maximum - p->start_minimum;
        if (p->start_minimum <= root->start_minimum && p->end_maximum >= root->end_maximum &&
            length < best_length) {
            best = (int64_t)d;
            best_length = length;
        }
    }
    return best;
}

static int by_rank_then_index(const void *a, const void *b) {
    const spi_call_path *x = *(spi_call_path *const *)a, *y = *(spi_call_path *const *)b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x < y ? -1 : (x > y);
}

/* Rows of one rank: summed from its paths for every region that has
 * paths; copied (or, for a columnar row without paths, taken from its
 * statistics) for the others. */
static int add_rows(spi_profile *out, const path_set *s, const spm_input *inputs, size_t count,
                    const uint32_t *region_base, uint32_t rank, const bool *has_paths,
                    spi_error *err) {
    for (size_t i = 0; i < count; i++) {
        const spi_profile *p = &inputs[i].prof;
        for (size_t r = 0; r < p->row_count; r++) {
            const spi_row *row = &p->rows[r];
            if (row->rank != rank) continue;
            spi_row *grown = spi_reallocarray(out->rows, out->row_count + 1, sizeof *grown);
            if (!grown) return oom(err);
            out->rows = grown;
            spi_row *o = &out->rows[out->row_count++];
            uint32_t region = region_base[i] + row->region;
            *o = (spi_row){.region = region, .rank = rank, .aggregate = true,
                           .exclusive_total = -1, .source_line = -1};
            if (has_paths[region]) {
                o->aggregate_minimum = INT64_MAX;
                o->aggregate_maximum = INT64_MIN;
                for (size_t k = 0; k < s->count; k++) {
                    const spi_call_path *x = &s->paths[k];
                    if (x->rank != rank || x->region != region) continue;
                    o->aggregate_count += x->count;
                    o->aggregate_total += x->total;
                    o->aggregate_exclusive += x->exclusive;
                    if (x->minimum < o->aggregate_minimum) o->aggregate_minimum = x->minimum;
                    if (x->maximum > o->aggregate_maximum) o->aggregate_maximum = x->maximum;
                }
            } else if (row->aggregate) {
                o->aggregate_count = row->aggregate_count;
                o->aggregate_total = row->aggregate_total;
                o->aggregate_minimum = row->aggregate_minimum;
                o->aggregate_maximum = row->aggregate_maximum;
                o->aggregate_exclusive = row->aggregate_exclusive;
            } else {
                o->aggregate_count = row->count;
                o->aggregate_total = row->stats.total;
                o->aggregate_minimum = row->count ? row->stats.minimum : 0;
                o->aggregate_maximum = row->count ? row->stats.maximum : 0;
                o->aggregate_exclusive = row->exclusive_total;
            }
        }
    }
    return SP_OK;
}

/* An aggregate input's rows are copied as they are, so they must be what
 * scope-check accepts: a count that is a count (below 2^63: the reader
 * sums counts as int64), durations >= 0 (total, minimum), minimum <= maximum,
 * an exclusive total within [-1, total], and nothing stored for no calls. */
static int check_aggregate_rows(const spm_input *in, spi_error *err) {
    for (size_t r = 0; r < in->prof.row_count; r++) {
        const spi_row *row = &in->prof.rows[r];
        if (!row->aggregate) continue;
        const char *what = NULL;
        if (row->aggregate_count > (uint64_t)INT64_MAX) what = "a call count beyond int64";
        else if (row->aggregate_total < 0) what = "a negative total";
        else if (row->aggregate_count && row->aggregate_minimum < 0)
            what = "a negative minimum duration";
        else if (row->aggregate_count && row->aggregate_minimum > row->aggregate_maximum)
            what = "a minimum above the maximum";
        else if (row->aggregate_exclusive < -1 || row->aggregate_exclusive > row->aggregate_total)
            what = "an exclusive total outside [-1, total]";
        else if (!row->aggregate_count && (row->aggregate_total || row->aggregate_minimum ||
                                           row->aggregate_maximum || row->aggregate_exclusive > 0))
            what = "times for no calls";
        if (what)
            return spm_refuse(err, in, row->rank, row->region,
                              "aggregate row with %s (count %llu, total %lld ns)", what,
                              (unsigned long long)row->aggregate_count,
                              (long long)row->aggregate_total);
    }
    return SP_OK;
}

int spm_merge_aggregate(spm_input *inputs, size_t count, const spm_aggregate_plan *plan,
                        spi_meta *metadata, const char *output, spi_error *err) {
    for (size_t i = 0; i < count; i++) {
        int checked = inputs[i].aggregate ? check_aggregate_rows(&inputs[i], err) : SP_OK;
        if (checked != SP_OK) return checked;
    }
    path_set s = {0};
    spi_profile out = {0};
    spi_profile *whole = spi_calloc(count, sizeof *whole);
    reduced *reds = spi_calloc(count * (plan->rank_count ? plan->rank_count : 1), sizeof *reds);
    size_t red_count = 0, name_count = 0;
    int status = whole && reds ? SP_OK : oom(err);
    for (size_t i = 0; i < count; i++) name_count += inputs[i].prof.name_count;
    bool *has_paths = spi_calloc(name_count + 1, sizeof *has_paths);
    if (!has_paths && status == SP_OK) status = oom(err);

    /* Inputs in id order (driver first), so a driver path an adopted
     * native path hangs under always comes before it. */
    for (size_t o = 0; o < count && status == SP_OK; o++) {
        size_t i = plan->by_order[o];
        spm_input *in = &inputs[i];
        if (in->aggregate) {
            int64_t first = (int64_t)s.count, rank_first = first;
            for (size_t k = 0; k < in->prof.path_count && status == SP_OK; k++) {
                spi_call_path p = in->prof.paths[k];
                if (k == 0 || p.rank != in->prof.paths[k - 1].rank) rank_first = (int64_t)s.count;
                p.region += plan->region_base[i];
                if (p.parent >= 0) p.parent += rank_first;
                size_t ri = 0;
                while (ri < plan->rank_count && plan->ranks[ri] != p.rank) ri++;
                if (p.thread >= 0 && ri < plan->rank_count)
                    p.thread += plan->thread_offset[i * plan->rank_count + ri];
                if (path_add(&s, &p, i) < 0) status = oom(err);
                else has_paths[p.region] = true;
            }
            (void)first;
            continue;
        }
        spi_diag("%s has per-call events; the merged file is an aggregate profile, which keeps "
                 "its counts, totals and call paths but not its timeline",
                 in->path);
        status = spi_profile_read(&whole[i], in->path, 0, err);
        for (size_t ri = 0; ri < plan->rank_count && status == SP_OK; ri++) {
            reduced *red = &reds[red_count];
            *red = (reduced){.input = i, .rank = plan->ranks[ri], .profile = &whole[i]};
            bool any = false;
            for (size_t r = 0; r < whole[i].row_count && !any; r++)
                any = whole[i].rows[r].rank == red->rank && whole[i].rows[r].count > 0;
            if (!any) continue;
            spi_error nesting;
            spi_error_clear(&nesting);
            int built = spi_rank_tree_build(&red->tree, &whole[i], red->rank, &nesting);
            if (built == SP_ERR_NESTING) {
                /* no call tree on this rank: its rows are kept flat */
                spi_rank_tree_free(&red->tree);
                continue;
            }
            if (built != SP_OK) {
                status = spi_error_set(err, built, "%s", nesting.message);
                break;
            }
            red_count++;
            size_t before = s.count;
            status = reduce_rank(&s, red, plan->region_base[i],
                                 plan->thread_offset[i * plan->rank_count + ri], err);
            for (size_t k = before; k < s.count; k++) has_paths[s.paths[k].region] = true;
        }
    }
    for (size_t k = 0; k < s.count; k++) {
        if (s.mixed_threads[k]) s.paths[k].thread = -1;
        if (s.paths[k].count == 0) s.paths[k].minimum = s.paths[k].maximum = 0;
    }
    /* Native roots under the driver call that holds all of their calls. */
    for (size_t k = 0; k < s.count && status == SP_OK; k++) {
        if (s.paths[k].parent >= 0 || !inputs[s.input_of[k]].native) continue;
        int64_t parent = adopting_path(&s, reds, red_count, inputs, k);
        if (parent < 0 || (size_t)parent >= k) continue;
        s.paths[k].parent = parent;
        s.paths[parent].exclusive -= s.paths[k].total;
    }

    /* The output profile: names, threads, rows rank by rank, paths. */
    if (status == SP_OK) {
        out.names = spi_calloc(name_count + 1, sizeof *out.names);
        out.paths = spi_calloc(s.count + 1, sizeof *out.paths);
        if (!out.names || !out.paths) status = oom(err);
    }
    for (size_t i = 0; i < count && status == SP_OK; i++)
        for (size_t n = 0; n < inputs[i].prof.name_count; n++)
            out.names[out.name_count++] = inputs[i].prof.names[n]; /* borrowed */
    for (size_t ri = 0; ri < plan->rank_count && status == SP_OK; ri++)
        status = add_rows(&out, &s, inputs, count, plan->region_base, plan->ranks[ri], has_paths,
                          err);
    if (status == SP_OK && s.count) {
        spi_call_path **order = spi_calloc(s.count, sizeof *order);
        int64_t *relative = spi_calloc(s.count, sizeof *relative);
        if (!order || !relative) status = oom(err);
        for (size_t k = 0; order && relative && k < s.count; k++) order[k] = &s.paths[k];
        if (status == SP_OK) qsort(order, s.count, sizeof *order, by_rank_then_index);
        size_t rank_start = 0;
        for (size_t k = 0; status == SP_OK && k < s.count; k++) {
            if (k > 0 && order[k]->rank != order[k - 1]->rank) rank_start = k;
            relative[order[k] - s.paths] = (int64_t)(k - rank_start);
        }
        for (size_t k = 0; status == SP_OK && k < s.count; k++) {
            spi_call_path p = *order[k];
            if (p.parent >= 0) p.parent = relative[p.parent];
            out.paths[out.path_count++] = p;
        }
        spi_free(order);
        spi_free(relative);
    }
    if (status == SP_OK) status = spi_profile_stats_from_paths(&out) == SP_OK ? SP_OK : oom(err);

    spi_thread_row *threads = NULL;
    size_t thread_total = 0, t = 0;
    for (size_t i = 0; i < count; i++) thread_total += inputs[i].prof.thread_count;
    if (status == SP_OK && !(threads = spi_calloc(thread_total + 1, sizeof *threads)))
        status = oom(err);
    for (size_t ri = 0; ri < plan->rank_count && status == SP_OK; ri++)
        for (size_t i = 0; i < count; i++)
            for (size_t x = 0; x < inputs[i].prof.thread_count; x++) {
                const spi_thread_row *row = &inputs[i].prof.threads[x];
                if (row->rank != plan->ranks[ri]) continue;
                threads[t] = *row;
                if (threads[t].index >= 0)
                    threads[t].index += plan->thread_offset[i * plan->rank_count + ri];
                t++;
            }

    spi_writer_layout layout = {.row_count = out.row_count, .region_count = out.name_count,
                                .thread_count = t, .aggregate = true};
    spi_writer *w = NULL;
    if (status == SP_OK) status = spi_writer_create(&w, output, &layout, err);
    if (status == SP_OK) status = spi_writer_write_metadata(w, metadata, err);
    if (status == SP_OK)
        status = spi_writer_write_region_names(w, (const char *const *)out.names, out.name_count,
                                               err);
    if (status == SP_OK) status = spi_writer_write_threads(w, threads, t, err);
    for (size_t r = 0; r < out.row_count && status == SP_OK; r++) {
        const spi_row *row = &out.rows[r];
        spi_row_header header = {.region = row->region, .rank = row->rank,
                                 .exclusive_total = -1, .source_line = -1,
                                 .aggregate_count = row->aggregate_count,
                                 .aggregate_total = row->aggregate_total,
                                 .aggregate_minimum = row->aggregate_minimum,
                                 .aggregate_maximum = row->aggregate_maximum,
                                 .aggregate_exclusive = row->aggregate_exclusive};
        status = spi_writer_begin_row(w, &header, err);
        if (status == SP_OK) status = spi_writer_end_row(w, err);
    }
    if (status == SP_OK) status = spm_copy_aux(inputs, count, spi_writer_file(w), output, err);
    if (status == SP_OK) status = spi_h5_write_call_paths(spi_writer_file(w), &out, err);
    if (status == SP_OK) status = spi_writer_publish(w, err);
    else if (w) spi_writer_abort(w);

    spi_free(threads);
    spi_free(out.names); /* the names are the inputs' */
    out.names = NULL;
    out.name_count = 0;
    spi_profile_free(&out);
    for (size_t k = 0; k < red_count; k++) {
        spi_rank_tree_free(&reds[k].tree);
        spi_free(reds[k].path_of_call);
    }
    for (size_t i = 0; whole && i < count; i++) spi_profile_free(&whole[i]);
    spi_free(whole);
    spi_free(reds);
    spi_free(has_paths);
    spi_free(s.paths);
    spi_free(s.means);
    spi_free(s.mixed_threads);
    spi_free(s.input_of);
    return status;
}
