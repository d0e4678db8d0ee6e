/*
 * merge.c - sp_merge_files: several separately recorded profiles into one
 * schema-3 file, one result set per rank (FORMAT.md 5, with the native
 * additions described in scope_profiler_merge.h).
 *
 * Plan, then two streaming passes, so that memory is bounded by blocks of
 * events and never by their number:
 *
 *   plan    open every input (merge_input.c), refuse collisions, build the
 *           union region table, the rank list, metadata and thread table.
 *   pass 1  per rank, a k-way merge of all that rank's rows (of every
 *           input) in start order, with one stack of open calls per lane.
 *           It rebuilds the nesting exactly as FORMAT.md 7.6 does per lane
 *           (the Python package's rule), twice at once: with the inputs'
 *           main lanes joint and with every input's lanes its own. That
 *           gives the exclusive totals of both, finds for each root call
 *           the innermost enclosing call of its lane (its new parent), and
 *           records each input's highest call id per rank (the
 *           renumbering offsets). New parents go to an unlinked scratch
 *           file at the call's event position, so they cost disk, not
 *           memory; positions without one read back as 0. The main lanes
 *           stay joint where a driver call encloses native calls; then
 *           merge_lanes.c gives every lane its output thread id.
 *   pass 2  every row streamed through the writer in blocks: ids shifted
 *           by their offsets, adopted roots given their new parent, every
 *           call its lane's thread id.
 *
 * Rows never need combining: a (rank, region) pair comes from exactly one
 * input, because a region name in two inputs is refused.
 *
 * Ids: inputs are ranked "driver first" (inputs whose metadata source is
 * not "native", in argument order, then the native ones). Offsets follow
 * that ranking, so a driver call adopted as parent always has a smaller id
 * than its native child, as FORMAT.md 1.5 requires of parents.
 *
 * When a rank cannot be nested (a row not in start order, or calls that
 * overlap improperly in one lane), nothing on that rank is adopted and its
 * rows keep the exclusive totals their input stored (or -1): the reader
 * then rebuilds what it can, and nothing wrong is ever stored.
 *
 * Validation (issue 19, docs/FORMAT.md 3.4): merge copies nothing
 * scope-check would reject. Pass 1 refuses, naming the input and the
 * invariant, negative durations, ends beyond int64, ids below -1, a parent
 * id not smaller than its call's, thread ids missing from the input's
 * thread table, and totals that overflow. Repeated ids, missing parents
 * and parents that do not enclose their child are refused too, and ids
 * renumbered: a call's new id is its input's offset plus its rank among
 * that input's ids, so no input's id magnitudes can shift (or wrap)
 * another's. merge_ids.c does that in memory that does not grow with the
 * calls: ids that arrive in order without gaps (what our writers store)
 * are numbered on the fly, parents that are the innermost open call of
 * their lane are proved by the lane's stack, and the rest goes through an
 * external sort on a scratch file in SCOPE_PROFILER_MERGE_MEMORY bytes
 * (default 256 MiB; merge_extsort.c). Statistics are always recomputed
 * from the events (stored ones may be damaged); arithmetic on stored
 * values is checked.
 *
 * This file holds the entry points and the order of the steps. The steps:
 * merge_validate.c (arguments, paths, prefixes, name collisions),
 * merge_plan.c (the plan, the merged metadata, the id offsets),
 * merge_sweep.c (pass 1 and the time-span check), merge_ids.c (the id
 * checks and numbering, with merge_extsort.c), merge_write.c (pass 2),
 * merge_aggregate.c (the output when an input is aggregate), with
 * merge_input.c and merge_aux.c below them and merge_common.c the helpers
 * they share (merge_internal.h declares them all).
 */
#include "scope_profiler_merge.h"

#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "format/h5_util.h"
#include "merge_internal.h"

/* ---- entry ----------------------------------------------------------------------- */

static void free_merge(spm_merge *m) {
    for (size_t i = 0; m->inputs && i < m->input_count; i++) spm_input_close(&m->inputs[i]);
    spi_free(m->inputs);
    spi_free(m->by_order);
    spi_free(m->order_of);
    spi_free(m->ranks);
    spi_free(m->slot_base);
    spi_free(m->slot_exclusive);
    spi_free(m->slot_exclusive_alone);
    spi_free(m->rank_joint);
    spi_free(m->primary);
    spi_free(m->has_unknown);
    spi_free(m->linked);
    spi_free(m->unknown_lane);
    for (size_t t = 0; t < m->out_thread_count; t++) spi_free(m->out_threads[t].name);
    spi_free(m->out_threads);
    spi_free(m->slot_adopted);
    spi_free(m->slot_spill);
    spi_free(m->rank_nested);
    spi_free(m->max_id);
    size_t cells = m->input_count * (m->rank_count ? m->rank_count : 1);
    for (size_t c = 0; m->ids && c < cells; c++) spm_sorter_free(m->ids[c].refs);
    for (size_t c = 0; m->thread_sets && c < cells; c++) {
        spi_free(m->thread_sets[c].indices);
        spi_free(m->thread_sets[c].table_rows);
        spi_free(m->thread_sets[c].lanes);
    }
    spi_free(m->ids);
    spi_free(m->thread_sets);
    for (size_t i = 0; m->rank_rows && i < m->input_count; i++) spi_free(m->rank_rows[i]);
    spi_free(m->rank_rows);
    spi_free(m->id_offset);
    spi_free(m->thread_offset);
    spi_free(m->region_base);
    if (m->spill) fclose(m->spill);
    if (m->sort_scratch.file) fclose(m->sort_scratch.file);
    if (m->id_maps) fclose(m->id_maps);
}

static int run_merge(const char *const *inputs, size_t count, const char *output,
                     const sp_merge_options *options, char **long_message, spi_error *err) {
    int status = spm_check_arguments(inputs, count, output, err);
    if (status != SP_OK) return status;
    spm_merge m = {.options = options, .input_count = count,
                   .memory_budget = spm_memory_budget()};
    m.inputs = spi_calloc(count, sizeof *m.inputs);
    if (!m.inputs) return spm_oom(err);
    for (size_t i = 0; i < count; i++) m.inputs[i] = (spm_input){.file = -1};
    for (size_t i = 0; i < count && status == SP_OK; i++) {
        status = spm_input_open(&m.inputs[i], inputs[i], i, err);
        if (status == SP_OK && options->prefixes)
            status = spm_apply_prefix(&m.inputs[i], options->prefixes[i], err);
    }
    if (status == SP_OK) {
        status = spm_find_collisions(&m, long_message, err);
        if (status == SP_OK && *long_message)
            status = spi_error_set(err, SP_ERR_REGION_COLLISION, "%s", *long_message);
    }
    if (status == SP_OK) status = spm_plan(&m, err);
    bool aggregate = false;
    for (size_t i = 0; i < count; i++) aggregate = aggregate || m.inputs[i].aggregate;
    /* A group (merge_parts.c): every process planned the same; the first
     * failure, if any, becomes every process's (the collision list only
     * where it is that failure's). */
    const sp_merge_group *group = options->group && options->group->size > 1 ? options->group
                                                                             : NULL;
    if (group) {
        status = spm_group_agree(group, status, err);
        if (*long_message && (status == SP_OK ||
                              strncmp(*long_message, err->message, strlen(err->message)) != 0)) {
            spi_free(*long_message);
            *long_message = NULL;
        }
    }
    if (group && status == SP_OK && !aggregate) {
        status = spm_group_merge(&m, output, err);
        free_merge(&m);
        return status;
    }
    if (status == SP_OK && aggregate) {
        spm_aggregate_plan ap = {.ranks = m.ranks, .rank_count = m.rank_count,
                                 .by_order = m.by_order, .region_base = m.region_base,
                                 .thread_offset = m.thread_offset};
        spi_meta meta = {0};
        /* In a group, process 0 alone merges aggregate inputs. */
        if (!group || group->index == 0) {
            status = spm_build_metadata(&m, &meta, err);
            if (status == SP_OK)
                status = spm_merge_aggregate(m.inputs, count, &ap, &meta, output, err);
        }
        if (group) status = spm_group_agree(group, status, err);
        spi_meta_free(&meta);
        free_merge(&m);
        return status;
    }
    for (size_t ri = 0; ri < m.rank_count && status == SP_OK; ri++)
        status = spm_sweep_rank(&m, ri, err);
    if (status == SP_OK && !options->allow_disjoint) status = spm_check_spans(&m, err);
    /* The id checks' refusals come after pass 1's own and the span check,
     * repeated ids before bad parents, as the whole-table checks gave them. */
    if (status == SP_OK) status = spm_ids_refuse(&m, &m.repeated, err);
    if (status == SP_OK) status = spm_number_ids(&m, err);
    if (status == SP_OK) status = spm_ids_refuse(&m, &m.parent_failure, err);
    if (status == SP_OK) status = spm_assign_lanes(&m, err);
    if (status == SP_OK) status = spm_write_output(&m, output, err);
    free_merge(&m);
    return status;
}

void sp_merge_options_init(sp_merge_options *options) {
    if (options) *options = (sp_merge_options){0};
}

int sp_merge_files(const char *const *inputs, size_t input_count, const char *output,
                   const sp_merge_options *options, char *errbuf, size_t errbuf_len) {
    sp_merge_options defaults;
    sp_merge_options_init(&defaults);
    spi_error err;
    spi_error_clear(&err);
    char *long_message = NULL;
    spi_h5_silence_state silence;
    spi_h5_silence(&silence);
    int status = run_merge(inputs, input_count, output, options ? options : &defaults,
                           &long_message, &err);
    spi_h5_restore(&silence);
    if (errbuf && errbuf_len) {
        /* The collision list can outgrow spi_error's fixed message. */
        const char *text = status == SP_OK ? "" : long_message ? long_message : err.message;
        snprintf(errbuf, errbuf_len, "%s", text);
    }
    spi_free(long_message);
    spi_status_remember(status);
    return status;
}
