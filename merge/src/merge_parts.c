/*
 * merge_parts.c - sp_merge_files in a group of processes (sp_merge_group:
 * `mpirun -np N scope-merge --mpi ...`), so that a job file of 10^10 events
 * is merged by N processes at once.
 *
 * Every process has opened the inputs and made the whole plan (merge.c):
 * that is index data, cheap, and the same everywhere. Then:
 *
 *   split   the output's ranks into N contiguous blocks balanced by event
 *           count (every process computes the same split);
 *   pass 1  each process sweeps its block's ranks (merge_sweep.c). Every
 *           decision that crosses ranks comes out as the merge alone's:
 *           the first failure in process order is the first in rank order;
 *           the rows' completed statistics (the span check reads them) and
 *           the id checks' kept refusals are exchanged; id offsets and
 *           lanes are per rank already (merge_plan.c, merge_lanes.c);
 *   parts   each process writes its block to a part file beside the
 *           output (merge_write.c), after a leading row of `pad` zero
 *           events that puts every event at its output offset modulo the
 *           chunk size: a part's chunk then holds exactly the events of the
 *           output's chunk, and is copied as stored;
 *   output  process 0 assembles the parts (merge_parts_assemble.c) and
 *           publishes the output; the parts are removed.
 *
 * Each step ends with spm_group_agree: a failure on any process fails
 * every process with that message, nothing is published and no part is
 * left. The group's one operation is the caller's all-gather, so the
 * library itself never calls MPI. Memory per process: the merge alone's,
 * plus one statistics record per row of the output during the exchange
 * (index data, as the plan's) and a status per process at each
 * agreement.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/alloc.h"
#include "format/h5_writer.h"
#include "merge_internal.h"

static int exchange_failed(spi_error *err) {
    return spi_error_set(err, SP_ERR_MPI, "scope-merge: the exchange between the merging "
                                          "processes failed");
}

/* The all-gather of `bytes` bytes from every process. */
static int gather_same(const sp_merge_group *g, const void *mine, size_t bytes, void *all) {
    size_t *sizes = spi_calloc((size_t)g->size, sizeof *sizes);
    if (!sizes) return -1;
    for (int p = 0; p < g->size; p++) sizes[p] = bytes;
    int failed = g->allgather(mine, all, sizes, g->user);
    spi_free(sizes);
    return failed;
}

/* Out of memory here leaves the others waiting in the exchange: the one
 * failure that cannot be agreed on (12 bytes per process). Two exchanges:
 * every process's status (4 bytes each), then, only when one failed, the
 * first failure's message from that process alone, so an agreement costs
 * the same with 2 or 10^4 processes but for the status array. */
int spm_group_agree(const sp_merge_group *g, int status, spi_error *err) {
    size_t n = (size_t)g->size;
    int32_t *statuses = spi_calloc(n, sizeof *statuses);
    size_t *sizes = spi_calloc(n, sizeof *sizes);
    if (!statuses || !sizes) {
        spi_free(statuses);
        spi_free(sizes);
        return spm_oom(err);
    }
    int32_t mine = status;
    for (size_t p = 0; p < n; p++) sizes[p] = sizeof mine;
    int failed = g->allgather(&mine, statuses, sizes, g->user);
    size_t first = n;
    for (size_t p = 0; !failed && p < n && first == n; p++)
        if (statuses[p] != SP_OK) first = p;
    int agreed = failed ? SP_ERR_MPI : first == n ? SP_OK : statuses[first];
    if (!failed && first < n) {
        /* the first failure in process order is the first in rank order */
        char message[SPI_ERROR_MESSAGE_BYTES] = "";
        char own[SPI_ERROR_MESSAGE_BYTES] = "";
        if ((size_t)g->index == first) snprintf(own, sizeof own, "%s", err->message);
        for (size_t p = 0; p < n; p++) sizes[p] = p == first ? sizeof own : 0;
        failed = g->allgather(own, message, sizes, g->user);
        if (!failed && (size_t)g->index != first) spi_error_set(err, agreed, "%s", message);
    }
    spi_free(statuses);
    spi_free(sizes);
    return failed ? exchange_failed(err) : agreed;
}

/* Events and rows of rank index ri over every input. */
static void rank_size(const spm_merge *m, size_t ri, uint64_t *events, size_t *rows) {
    *events = 0;
    *rows = 0;
    for (size_t i = 0; i < m->input_count; i++) {
        size_t on_count = 0;
        const size_t *on = spm_rows_on_rank(m, i, m->ranks[ri], &on_count);
        *rows += on_count;
        for (size_t x = 0; x < on_count; x++) *events += m->inputs[i].prof.rows[on[x]].count;
    }
}

/* first[p] .. first[p + 1]: process p's rank indices; before[p]: the
 * output's events before them. Balanced by events: process p starts at the
 * first rank with at least p / size of the events before it. */
static void split_ranks(const spm_merge *m, int size, size_t *first, uint64_t *before,
                        size_t *rows) {
    uint64_t total = 0;
    for (size_t ri = 0; ri < m->rank_count; ri++) {
        uint64_t e;
        size_t r;
        rank_size(m, ri, &e, &r);
        total += e;
    }
    uint64_t prefix = 0;
    size_t ri = 0;
    for (int p = 0; p < size; p++) {
        first[p] = ri;
        before[p] = prefix;
        rows[p] = 0;
        /* Ranks while they start before the end of process p's share
         * (prefix * size < total * (p + 1); 10^10 events times 10^5
         * processes stays far below 2^64). */
        while (ri < m->rank_count &&
               (p == size - 1 || prefix * (uint64_t)size < total * (uint64_t)(p + 1))) {
            uint64_t e;
            size_t r;
            rank_size(m, ri, &e, &r);
            prefix += e;
            rows[p] += r;
            ri++;
        }
    }
    first[size] = m->rank_count;
}

/* What each process found in pass 1 that others need, before its rows'
 * statistics. */
typedef struct found {
    spm_id_failure repeated, parent_failure;
    int64_t pid;
} found;

/* Exchange pass 1's results: every row's statistics (the span check and
 * the parts' index), every input's has_stats, the kept id refusals, and
 * the process ids that name the parts. */
static int exchange_pass1(spm_merge *m, const sp_merge_group *g, const size_t *first,
                          const size_t *rows, int64_t *pids, spi_error *err) {
    /* Process p sends its found record, its inputs' has_stats flags and
     * the statistics of its block's rows: sizes every process knows. */
    size_t head = sizeof(found) + (m->input_count + 7) / 8 * 8;
    size_t *bytes = spi_calloc((size_t)g->size, sizeof *bytes);
    size_t total = 0;
    for (int p = 0; bytes && p < g->size; p++) {
        bytes[p] = head + rows[p] * sizeof(spi_stats);
        total += bytes[p];
    }
    char *mine = bytes ? spi_calloc(1, bytes[g->index]) : NULL;
    char *all = bytes ? spi_calloc(1, total) : NULL;
    if (!mine || !all) {
        spi_free(bytes);
        spi_free(mine);
        spi_free(all);
        return spm_oom(err);
    }
    found f = {m->repeated, m->parent_failure, (int64_t)getpid()};
    memcpy(mine, &f, sizeof f);
    unsigned char *has = (unsigned char *)mine + sizeof f;
    for (size_t i = 0; i < m->input_count; i++) has[i] = m->inputs[i].has_stats;
    spi_stats *stats = (spi_stats *)(void *)(mine + head);
    size_t k = 0;
    for (size_t ri = first[g->index]; ri < first[g->index + 1]; ri++)
        for (size_t i = 0; i < m->input_count; i++) {
            size_t on_count = 0;
            const size_t *on = spm_rows_on_rank(m, i, m->ranks[ri], &on_count);
            for (size_t x = 0; x < on_count; x++) stats[k++] = m->inputs[i].prof.rows[on[x]].stats;
        }
    int status = g->allgather(mine, all, bytes, g->user) == 0 ? SP_OK : exchange_failed(err);
    size_t at = 0;
    for (int p = 0; p < g->size && status == SP_OK; at += bytes[p], p++) {
        const char *theirs = all + at;
        memcpy(&f, theirs, sizeof f);
        pids[p] = f.pid;
        if (p == g->index) continue;
        spm_ids_keep_failures(m, &f.repeated, &f.parent_failure);
        const unsigned char *h = (const unsigned char *)theirs + sizeof f;
        for (size_t i = 0; i < m->input_count; i++) m->inputs[i].has_stats |= h[i] != 0;
        spi_stats s;
        k = 0;
        for (size_t ri = first[p]; ri < first[p + 1]; ri++)
            for (size_t i = 0; i < m->input_count; i++) {
                size_t on_count = 0;
                const size_t *on = spm_rows_on_rank(m, i, m->ranks[ri], &on_count);
                for (size_t x = 0; x < on_count; x++, k++) {
                    /* memcpy: the record need not be aligned for spi_stats. */
                    memcpy(&s, theirs + head + k * sizeof s, sizeof s);
                    m->inputs[i].prof.rows[on[x]].stats = s;
                }
            }
    }
    spi_free(bytes);
    spi_free(mine);
    spi_free(all);
    return status;
}

/* The lane table rows of every block: whether the output has a thread
 * column and how many rows its table has. */
static int exchange_threads(spm_merge *m, const sp_merge_group *g, uint64_t *total,
                            spi_error *err) {
    uint64_t mine = m->out_thread_count;
    uint64_t *all = spi_calloc((size_t)g->size, sizeof *all);
    if (!all) return spm_oom(err);
    int status = gather_same(g, &mine, sizeof mine, all) == 0 ? SP_OK : exchange_failed(err);
    *total = 0;
    for (int p = 0; p < g->size; p++) *total += all[p];
    m->thread_column = *total > 0;
    spi_free(all);
    return status;
}

int spm_group_merge(spm_merge *m, const char *output, spi_error *err) {
    const sp_merge_group *g = m->options->group;
    int n = g->size, me = g->index;
    size_t *first = spi_calloc((size_t)n + 1, sizeof *first);
    size_t *rows = spi_calloc((size_t)n, sizeof *rows);
    uint64_t *before = spi_calloc((size_t)n, sizeof *before);
    uint64_t *pads = spi_calloc((size_t)n, sizeof *pads);
    int64_t *pids = spi_calloc((size_t)n, sizeof *pids);
    char **parts = spi_calloc((size_t)n, sizeof *parts);
    int status = first && rows && before && pads && pids && parts ? SP_OK : spm_oom(err);
    /* Every exchange below is made by every process, whatever happened:
     * a failed step only skips the work. */
    if (status == SP_OK) split_ranks(m, n, first, before, rows);
    for (size_t ri = first ? first[me] : 0; status == SP_OK && ri < first[me + 1]; ri++)
        status = spm_sweep_rank(m, ri, err);
    status = spm_group_agree(g, status, err);
    if (status == SP_OK) status = exchange_pass1(m, g, first, rows, pids, err);
    status = spm_group_agree(g, status, err);
    /* Now every process holds what the merge alone would: the same checks
     * give the same refusals everywhere (no exchange needed). */
    if (status == SP_OK && !m->options->allow_disjoint) status = spm_check_spans(m, err);
    if (status == SP_OK) status = spm_ids_refuse(m, &m->repeated, err);
    if (status == SP_OK) status = spm_number_ids(m, err);
    if (status == SP_OK) status = spm_ids_refuse(m, &m->parent_failure, err);
    if (status == SP_OK) status = spm_assign_lanes_range(m, first[me], first[me + 1], err);
    status = spm_group_agree(g, status, err);
    uint64_t threads = 0;
    if (status == SP_OK) status = exchange_threads(m, g, &threads, err);
    status = spm_group_agree(g, status, err);
    /* Part p: OUT.part<p>.<pid of p>, beside the output (one directory
     * every process sees); only blocks with ranks have one. */
    for (int p = 0; p < n && status == SP_OK; p++) {
        if (first[p] == first[p + 1]) continue;
        size_t bytes = strlen(output) + 48;
        parts[p] = spi_malloc(bytes);
        if (!parts[p]) status = spm_oom(err);
        else snprintf(parts[p], bytes, "%s.part%d.%" PRId64, output, p, pids[p]);
        pads[p] = before[p] % SPM_BLOCK_EVENTS;
    }
    bool wrote = false;
    if (status == SP_OK && parts[me]) {
        status = spm_write_part(m, parts[me], first[me], first[me + 1], pads[me], err);
        wrote = status == SP_OK;
    }
    status = spm_group_agree(g, status, err);
    if (status == SP_OK && me == 0)
        status = spm_assemble_parts(m, output, parts, pads, first, (size_t)n, threads, err);
    status = spm_group_agree(g, status, err);
    if (wrote) unlink(parts[me]);
    for (int p = 0; parts && p < n; p++) spi_free(parts[p]);
    spi_free(parts);
    spi_free(first);
    spi_free(rows);
    spi_free(before);
    spi_free(pads);
    spi_free(pids);
    return status;
}
