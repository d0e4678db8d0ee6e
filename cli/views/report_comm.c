/*
 * report_comm.c - scope-report's communication heat map: bytes sent per
 * (sender, receiver) pair of world ranks (comm_matrix.c; each message
 * counted once, at its sender), drawn as an SVG grid by us.
 *
 * Up to MAX_CELLS ranks a side, one cell per pair. Past that, ranks are
 * binned into MAX_CELLS consecutive blocks per side and a cell is the sum
 * over its block of pairs, so the page and this code stay the same size
 * for 16 or 100,000 ranks (the grid is MAX_CELLS^2 sums, the pairs stay
 * sparse). Colour is on a log scale (message sizes span many orders of
 * magnitude: a halo face next to a scalar reduction); the title of each
 * cell gives the exact numbers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "comm_matrix.h"
#include "report_comm.h"
#include "report_html.h"

enum { MAX_CELLS = 128, GRID_PX = 512, MARGIN = 48 };

typedef struct cell {
    int64_t bytes;
    uint64_t messages;
} cell;

/* #rrggbb from white (nothing) through yellow to dark red (the most). */
static void heat_colour(char buf[8], double share) {
    if (share <= 0) {
        snprintf(buf, 8, "#f4f4f4");
        return;
    }
    double t = share > 1 ? 1 : share;
    int r = (int)(255 - 115 * t), g = (int)(230 - 230 * t), b = (int)(120 - 120 * t);
    snprintf(buf, 8, "#%02x%02x%02x", r, g, b);
}

int report_comm(FILE *out, const sp_results *res, const uint32_t *ranks, size_t rank_count) {
    comm_matrix m;
    int status = comm_matrix_build(&m, res, ranks, rank_count);
    if (status != SP_OK) return status;
    if (!m.has_point_to_point) { /* no MPI messages at all: no section */
        comm_matrix_free(&m);
        return SP_OK;
    }
    fputs("<h2 id=\"comm\">Communication</h2>\n", out);
    if (m.pair_count == 0 || m.ranks == 0) {
        fputs("<p class=\"note\" id=\"comm-none\">No communication matrix: this file has no "
              "point-to-point MPI messages on MPI_COMM_WORLD.</p>\n",
              out);
        comm_matrix_free(&m);
        return SP_OK;
    }
    uint32_t side = m.ranks < MAX_CELLS ? m.ranks : MAX_CELLS;
    /* ranks per block, rounded up so `side` blocks cover every rank */
    uint32_t per = (uint32_t)(((uint64_t)m.ranks + side - 1) / side);
    side = (uint32_t)(((uint64_t)m.ranks + per - 1) / per);
    cell *grid = calloc((size_t)side * side, sizeof *grid);
    if (!grid) {
        comm_matrix_free(&m);
        return SP_ERR_OUT_OF_MEMORY;
    }
    int64_t most = 0;
    for (size_t i = 0; i < m.slot_count; i++) {
        const comm_pair *p = &m.slots[i];
        if (p->messages == 0) continue; /* empty, or receives only: no sent bytes */
        cell *c = &grid[(size_t)(p->from / per) * side + p->to / per];
        c->bytes = comm_add_bytes(c->bytes, p->bytes);
        c->messages += p->messages;
        if (c->bytes > most) most = c->bytes;
    }
    double px = (double)GRID_PX / side;
    fprintf(out,
            "<p class=\"note\">Bytes sent from each rank (row) to each rank (column) on "
            "MPI_COMM_WORLD, each message counted once at its sender (the send side is the truth "
            "for bytes; receives name only the buffer they posted). Colour: log scale up to "
            "%lld bytes.%s</p>\n",
            (long long)most,
            per > 1 ? " Ranks are grouped into blocks; a cell sums its block's pairs." : "");
    fprintf(out,
            "<svg id=\"comm-heat\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
            "height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
            GRID_PX + MARGIN + 8, GRID_PX + MARGIN + 8);
    fprintf(out, "<text x=\"%d\" y=\"12\">receiver &#8594;</text>\n", MARGIN);
    fprintf(out, "<text x=\"10\" y=\"%d\" transform=\"rotate(-90 10 %d)\">sender &#8594;</text>\n",
            MARGIN + 90, MARGIN + 90);
    double log_most = most > 0 ? log1p((double)most) : 1;
    /* One background for the pairs that exchanged nothing: only cells with
     * traffic are drawn, so a sparse (halo) pattern makes a small page. */
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>\n",
            MARGIN, MARGIN, GRID_PX, GRID_PX);
    for (uint32_t row = 0; row < side; row++)
        for (uint32_t col = 0; col < side; col++) {
            const cell *c = &grid[(size_t)row * side + col];
            if (c->messages == 0) continue;
            char colour[8];
            heat_colour(colour, c->bytes > 0 ? log1p((double)c->bytes) / log_most : 0);
            fprintf(out,
                    "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                    "data-bytes=\"%lld\" data-messages=\"%llu\"><title>",
                    MARGIN + col * px, MARGIN + row * px, px, px, colour, (long long)c->bytes,
                    (unsigned long long)c->messages);
            if (per == 1)
                fprintf(out, "rank %u &#8594; rank %u", row, col);
            else
                fprintf(out, "ranks %u-%u &#8594; ranks %u-%u", row * per,
                        (uint32_t)(row * (uint64_t)per + per - 1 < m.ranks ? row * per + per - 1
                                                                           : m.ranks - 1),
                        col * per,
                        (uint32_t)(col * (uint64_t)per + per - 1 < m.ranks ? col * per + per - 1
                                                                           : m.ranks - 1));
            fprintf(out, ": %lld bytes in %llu messages</title></rect>\n", (long long)c->bytes,
                    (unsigned long long)c->messages);
        }
    fputs("</svg>\n", out);
    for (size_t i = 0; i < m.unresolved_count; i++)
        fprintf(out,
                "<p class=\"note\">Not drawn: comm=%lld, whose world ranks the file does not "
                "record: %llu messages, %lld bytes.</p>\n",
                (long long)m.unresolved[i].comm, (unsigned long long)m.unresolved[i].messages,
                (long long)m.unresolved[i].bytes);
    free(grid);
    comm_matrix_free(&m);
    return ferror(out) ? SP_ERR_OUTPUT : SP_OK;
}
