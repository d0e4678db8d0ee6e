/*
 * inspect_comm.c - the communication matrix in scope-inspect (--comm):
 * the numbers come from views/comm_matrix.c, shared with scope-report's
 * heat map; this file only lays them out as text or JSON.
 *
 * Text stays readable for any job size: the pairs are sparse and sorted,
 * so the top N are printed whatever the rank count; per-rank lines are
 * printed whole up to 64 ranks and as a spread plus the largest senders
 * past that (--json carries every pair and every rank with traffic).
 */
#include "inspect_comm.h"

#include "cli_common.h"
#include "views/comm_matrix.h"

#include <stdlib.h>

enum { ALL_RANKS_UP_TO = 64 };

static bool rank_has_traffic(const comm_rank_totals *t) {
    return t->sent_messages || t->received_messages || t->any_source_receives ||
           t->unattributed_sends;
}

static void print_rank_line(FILE *out, uint32_t rank, const comm_rank_totals *t) {
    fprintf(out, "    %8u %15lld %10llu %15lld %10llu %10llu\n", rank, (long long)t->sent_bytes,
            (unsigned long long)t->sent_messages, (long long)t->received_bytes,
            (unsigned long long)t->received_messages, (unsigned long long)t->any_source_receives);
}

static int cmp_sender(const void *pa, const void *pb) {
    const comm_rank_totals *a = pa, *b = pb;
    if (a->sent_bytes != b->sent_bytes) return a->sent_bytes > b->sent_bytes ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

/* Past ALL_RANKS_UP_TO ranks: min / mean / max of the bytes sent over the
 * ranks with traffic, then the `top` largest senders (reorders `ranks`). */
static void print_rank_spread(FILE *out, comm_rank_totals *ranks, size_t n, size_t top) {
    double sum = 0, lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        double v = (double)ranks[i].sent_bytes;
        lo = i == 0 || v < lo ? v : lo;
        hi = i == 0 || v > hi ? v : hi;
        sum += v;
    }
    fprintf(out, "  bytes sent per rank over %zu ranks with traffic: min %.0f, mean %.1f, max %.0f\n",
            n, lo, n ? sum / (double)n : 0.0, hi);
    if (n) qsort(ranks, n, sizeof *ranks, cmp_sender);
    fprintf(out, "  the %zu largest senders:\n", n < top ? n : top);
    fprintf(out, "    %8s %15s %10s %15s %10s %10s\n", "rank", "bytes sent", "messages",
            "bytes recvd", "messages", "any-source");
    for (size_t i = 0; i < n && i < top; i++) print_rank_line(out, ranks[i].rank, &ranks[i]);
}

/* The ranks with traffic, by rank (count in *n); false when out of memory. */
static bool ranks_with_traffic(const comm_matrix *m, comm_rank_totals **out, size_t *n) {
    size_t all = 0;
    *out = comm_matrix_sorted_ranks(m, &all);
    *n = 0;
    if (!*out) return m->rank_count == 0;
    for (size_t i = 0; i < all; i++)
        if (rank_has_traffic(&(*out)[i])) (*out)[(*n)++] = (*out)[i];
    return true;
}

int inspect_print_comm(FILE *out, const sp_results *res, inspect_ranks selected, size_t top) {
    comm_matrix m;
    int status = comm_matrix_build(&m, res, selected.ranks, selected.count);
    if (status != SP_OK) return status;
    if (!m.has_point_to_point) {
        fputs("\nCommunication matrix: no point-to-point MPI regions in this file\n", out);
        comm_matrix_free(&m);
        return SP_OK;
    }
    size_t n = 0;
    comm_pair *pairs = comm_matrix_sorted_pairs(&m, &n);
    if (!pairs && m.pair_count) {
        comm_matrix_free(&m);
        return SP_ERR_OUT_OF_MEMORY;
    }
    fprintf(out,
            "\nCommunication matrix (point-to-point on MPI_COMM_WORLD, world ranks; each message "
            "counted once, at its sender: the send side is the truth for bytes)\n"
            "  %llu messages, %lld bytes between %zu rank pairs\n",
            (unsigned long long)m.total_messages, (long long)m.total_bytes, n);
    size_t shown = n < top ? n : top;
    if (n) {
        fprintf(out, "  %s pairs by bytes (receives: the receiver's calls naming that source):\n",
                shown < n ? "top" : "all");
        fprintf(out, "    %8s %8s %15s %10s %10s\n", "from", "to", "bytes", "messages",
                "receives");
    }
    bool unknown = false;
    for (size_t i = 0; i < shown; i++) {
        const comm_pair *p = &pairs[i];
        fprintf(out, "    %8u %8u %15lld%s %10llu %10llu\n", p->from, p->to, (long long)p->bytes,
                p->unknown_size_messages ? "*" : " ", (unsigned long long)p->messages,
                (unsigned long long)p->receives);
        unknown = unknown || p->unknown_size_messages;
    }
    if (shown < n) fprintf(out, "    ... %zu more pairs (--json lists every pair)\n", n - shown);
    free(pairs);
    comm_rank_totals *ranks = NULL;
    size_t rank_n = 0;
    if (!ranks_with_traffic(&m, &ranks, &rank_n)) {
        comm_matrix_free(&m);
        return SP_ERR_OUT_OF_MEMORY;
    }
    uint64_t unattributed = 0;
    for (size_t i = 0; i < rank_n; i++) unattributed += ranks[i].unattributed_sends;
    if (rank_n <= ALL_RANKS_UP_TO) {
        fprintf(out, "  per rank (received as counted by the senders; any-source: receives "
                     "from MPI_ANY_SOURCE):\n");
        fprintf(out, "    %8s %15s %10s %15s %10s %10s\n", "rank", "bytes sent", "messages",
                "bytes recvd", "messages", "any-source");
        for (size_t i = 0; i < rank_n; i++) print_rank_line(out, ranks[i].rank, &ranks[i]);
    } else {
        print_rank_spread(out, ranks, rank_n, top);
    }
    free(ranks);
    if (unattributed)
        fprintf(out, "  %llu sends name no peer (coarsened names, SCOPE_PROFILER_MPI_NAMES or "
                     "overflow=1): not in the matrix\n",
                (unsigned long long)unattributed);
    for (size_t i = 0; i < m.unresolved_count; i++)
        fprintf(out, "  unresolved comm=%lld (its world ranks are not in the file): %llu "
                     "messages, %lld bytes\n",
                (long long)m.unresolved[i].comm, (unsigned long long)m.unresolved[i].messages,
                (long long)m.unresolved[i].bytes);
    if (unknown)
        fputs("  * some messages of this pair have an unknown size (bytes=-1): not in the "
              "bytes\n", out);
    comm_matrix_free(&m);
    return SP_OK;
}

int inspect_json_comm(FILE *out, const sp_results *res, inspect_ranks selected) {
    comm_matrix m;
    int status = comm_matrix_build(&m, res, selected.ranks, selected.count);
    if (status != SP_OK) return status;
    size_t n = 0, rank_n = 0;
    comm_pair *pairs = comm_matrix_sorted_pairs(&m, &n);
    comm_rank_totals *ranks = NULL;
    if ((!pairs && m.pair_count) || !ranks_with_traffic(&m, &ranks, &rank_n)) {
        free(pairs);
        comm_matrix_free(&m);
        return SP_ERR_OUT_OF_MEMORY;
    }
    fprintf(out,
            "  \"comm\": {\"basis\": \"send side\", \"communicator\": \"MPI_COMM_WORLD\", "
            "\"world_ranks\": %u, \"messages\": %llu, \"bytes\": %lld, \"pairs\": [",
            m.ranks, (unsigned long long)m.total_messages, (long long)m.total_bytes);
    for (size_t i = 0; i < n; i++) {
        const comm_pair *p = &pairs[i];
        fprintf(out,
                "%s{\"from\": %u, \"to\": %u, \"bytes\": %lld, \"messages\": %llu, "
                "\"unknown_size_messages\": %llu, \"receives\": %llu}",
                i ? ",\n    " : "\n    ", p->from, p->to, (long long)p->bytes,
                (unsigned long long)p->messages, (unsigned long long)p->unknown_size_messages,
                (unsigned long long)p->receives);
    }
    free(pairs);
    fputs(n ? "\n  ], \"ranks\": [" : "], \"ranks\": [", out);
    bool first = true;
    for (size_t i = 0; i < rank_n; i++) {
        const comm_rank_totals *t = &ranks[i];
        uint32_t r = t->rank;
        fprintf(out,
                "%s{\"rank\": %u, \"sent_bytes\": %lld, \"sent_messages\": %llu, "
                "\"received_bytes\": %lld, \"received_messages\": %llu, "
                "\"any_source_receives\": %llu, \"unattributed_sends\": %llu}",
                first ? "\n    " : ",\n    ", r, (long long)t->sent_bytes,
                (unsigned long long)t->sent_messages, (long long)t->received_bytes,
                (unsigned long long)t->received_messages,
                (unsigned long long)t->any_source_receives,
                (unsigned long long)t->unattributed_sends);
        first = false;
    }
    free(ranks);
    fputs(first ? "], \"unresolved\": [" : "\n  ], \"unresolved\": [", out);
    for (size_t i = 0; i < m.unresolved_count; i++)
        fprintf(out, "%s{\"comm\": %lld, \"messages\": %llu, \"bytes\": %lld}", i ? ", " : "",
                (long long)m.unresolved[i].comm, (unsigned long long)m.unresolved[i].messages,
                (long long)m.unresolved[i].bytes);
    fputs("]},\n", out);
    comm_matrix_free(&m);
    return SP_OK;
}
