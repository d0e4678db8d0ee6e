/*
 * export_otf2.c - an OTF2 archive (Score-P's trace format, read by Vampir,
 * Scalasca's tools and otf2-print) from the lanes.
 *
 * Mapping: the ranks are OTF2 location groups of type "process" under one
 * system-tree node; each (rank, thread) lane is one "CPU thread"
 * location; each region of the region table is one OTF2 region (role
 * function, paradigm user); every call is an Enter at its start and a Leave
 * at its end, in the nesting order of view_lanes_walk. Timestamps are the
 * file's own clock ns (timer resolution 1e9), the earliest start is the
 * global offset: the archive keeps the file's timeline rather than a
 * shifted copy, so it lines up with other exports of the same file.
 *
 * The archive is written serially by this one process (the "serial
 * collective callbacks" of OTF2), events first (buffers are flushed to
 * disk whenever full, nothing is held per call), then definitions, which
 * need the event counts.
 *
 * MPI regions also get message and collective records and MPI_COMM_WORLD
 * its definitions (export_otf2_mpi.c, which says what cannot be matched).
 * Timestamps are exact unsigned distances from the shift (distance_ns): the
 * reader accepts any int64 times, whose differences an int64 may not hold.
 * Names longer than NAME_LIMIT bytes are cut, with a marker saying how long
 * they were: OTF2 keeps each definition in one chunk of its buffer (4 MiB
 * here), so a longer string cannot be written at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "export_formats.h"
#include "export_otf2_mpi.h"

enum { NAME_LIMIT = 64 * 1024 };

/* b - a for b >= a (else 0), exact for any int64 values: no signed overflow. */
static uint64_t distance_ns(int64_t a, int64_t b) { return b > a ? (uint64_t)b - (uint64_t)a : 0; }

int export_otf2_available(void) { return 1; }

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location,
                                void *caller, bool final) {
    (void)user;
    (void)type;
    (void)location;
    (void)caller;
    (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef location) {
    (void)user;
    (void)type;
    (void)location;
    return 0;
}

typedef struct walk_ctx {
    OTF2_EvtWriter *writer;
    const view_lanes *v;
    otf2_mpi *mpi;
    size_t lane;
    int64_t shift; /* timestamps are measured from it (the origin when the clock is negative) */
    OTF2_ErrorCode err;
} walk_ctx;

static int on_open(void *p, const view_call *call, unsigned depth, int64_t start) {
    (void)depth;
    walk_ctx *c = p;
    OTF2_TimeStamp t = distance_ns(c->shift, start);
    size_t region = view_call_region(c->v, call);
    c->err = OTF2_EvtWriter_Enter(c->writer, NULL, t, (OTF2_RegionRef)region);
    if (c->err == OTF2_SUCCESS) c->err = otf2_mpi_after_enter(c->mpi, c->writer, c->lane, region, t);
    return c->err == OTF2_SUCCESS ? 0 : SP_ERR_OUTPUT;
}

static int on_close(void *p, const view_call *call, unsigned depth, int64_t end) {
    (void)depth;
    walk_ctx *c = p;
    OTF2_TimeStamp t = distance_ns(c->shift, end);
    size_t region = view_call_region(c->v, call);
    c->err = otf2_mpi_before_leave(c->mpi, c->writer, c->lane, region, t);
    if (c->err == OTF2_SUCCESS)
        c->err = OTF2_EvtWriter_Leave(c->writer, NULL, t, (OTF2_RegionRef)region);
    return c->err == OTF2_SUCCESS ? 0 : SP_ERR_OUTPUT;
}

/* A region name as an OTF2 string: cut past NAME_LIMIT (see the top). */
static OTF2_ErrorCode write_name(OTF2_GlobalDefWriter *g, OTF2_StringRef ref, const char *name) {
    size_t len = name ? strlen(name) : 0;
    if (len <= NAME_LIMIT) return OTF2_GlobalDefWriter_WriteString(g, ref, name ? name : "");
    char *cut = malloc(NAME_LIMIT + 64);
    if (!cut) return OTF2_ERROR_MEM_ALLOC_FAILED;
    size_t keep = NAME_LIMIT;
    while (keep && ((unsigned char)name[keep] & 0xC0) == 0x80) keep--; /* whole UTF-8 characters */
    memcpy(cut, name, keep);
    snprintf(cut + keep, 64, "... [cut: %zu bytes]", len);
    OTF2_ErrorCode e = OTF2_GlobalDefWriter_WriteString(g, ref, cut);
    free(cut);
    return e;
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        OTF2_ErrorCode e_ = (call);                                                            \
        if (e_ != OTF2_SUCCESS) {                                                              \
            snprintf(errbuf, errbuf_len, "OTF2: %s: %s", #call, OTF2_Error_GetDescription(e_)); \
            goto fail;                                                                         \
        }                                                                                      \
    } while (0)

int export_otf2(const char *dir, view_lanes *v, char *errbuf, size_t errbuf_len) {
    const sp_results *res = v->res;
    size_t regions = sp_results_region_count(res);
    OTF2_Archive *archive = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                              4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX,
                                              OTF2_COMPRESSION_NONE);
    if (!archive) {
        snprintf(errbuf, errbuf_len, "OTF2: cannot create an archive in %s", dir);
        return SP_ERR_OUTPUT;
    }
    OTF2_FlushCallbacks flush = {pre_flush, post_flush};
    otf2_mpi mpi;
    if (otf2_mpi_init(&mpi, v) != SP_OK) {
        OTF2_Archive_Close(archive);
        snprintf(errbuf, errbuf_len, "out of memory");
        return SP_ERR_OUT_OF_MEMORY;
    }
    walk_ctx c = {NULL, v, &mpi, 0, v->origin < 0 ? v->origin : 0, OTF2_SUCCESS};
    uint64_t origin = distance_ns(c.shift, v->origin);
    CHECK(OTF2_Archive_SetFlushCallbacks(archive, &flush, NULL));
    CHECK(OTF2_Archive_SetSerialCollectiveCallbacks(archive));
    CHECK(OTF2_Archive_SetCreator(archive, "scope-export " SCOPE_PROFILER_VERSION));
    CHECK(OTF2_Archive_OpenEvtFiles(archive));
    view_walk_callbacks cb = {on_open, on_close};
    for (size_t l = 0; l < v->lane_count; l++) {
        c.writer = OTF2_Archive_GetEvtWriter(archive, (OTF2_LocationRef)l);
        c.lane = l;
        if (!c.writer) {
            snprintf(errbuf, errbuf_len, "OTF2: cannot open the event writer of location %zu", l);
            goto fail;
        }
        int rc = view_lanes_walk(v, l, &cb, &c);
        if (rc) {
            if (rc == SP_ERR_OUT_OF_MEMORY) snprintf(errbuf, errbuf_len, "out of memory");
            else if (v->error[0]) snprintf(errbuf, errbuf_len, "%s", v->error);
            else snprintf(errbuf, errbuf_len, "OTF2: %s", OTF2_Error_GetDescription(c.err));
            goto fail;
        }
        CHECK(OTF2_Archive_CloseEvtWriter(archive, c.writer));
    }
    CHECK(OTF2_Archive_CloseEvtFiles(archive));

    /* Every location needs its (here empty) local definition file. */
    CHECK(OTF2_Archive_OpenDefFiles(archive));
    for (size_t l = 0; l < v->lane_count; l++) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(archive, (OTF2_LocationRef)l);
        if (!dw) {
            snprintf(errbuf, errbuf_len, "OTF2: cannot open the definitions of location %zu", l);
            goto fail;
        }
        CHECK(OTF2_Archive_CloseDefWriter(archive, dw));
    }
    CHECK(OTF2_Archive_CloseDefFiles(archive));

    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
    if (!g) {
        snprintf(errbuf, errbuf_len, "OTF2: cannot open the global definitions");
        goto fail;
    }
    uint64_t length = distance_ns(v->origin, v->end_max);
    CHECK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, origin, length + 1,
                                                    OTF2_UNDEFINED_TIMESTAMP));
    /* Strings: the region names first (string id = region id), then ours. */
    OTF2_StringRef next = 0;
    for (size_t r = 0; r < regions; r++) CHECK(write_name(g, next++, sp_results_region_name(res, r)));
    OTF2_StringRef empty = next++, machine = next++, node_class = next++;
    CHECK(OTF2_GlobalDefWriter_WriteString(g, empty, ""));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, machine, "machine"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, node_class, "node"));
    for (size_t r = 0; r < regions; r++) {
        OTF2_Paradigm paradigm;
        OTF2_RegionRole role;
        otf2_mpi_region_kind(&mpi, r, &paradigm, &role);
        CHECK(OTF2_GlobalDefWriter_WriteRegion(g, (OTF2_RegionRef)r, (OTF2_StringRef)r,
                                               (OTF2_StringRef)r, empty, role, paradigm,
                                               OTF2_REGION_FLAG_NONE, empty, 0, 0));
    }
    CHECK(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, node_class,
                                                   OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    /* One location group per rank that has a lane (lanes are sorted by rank). */
    uint32_t group = 0;
    char name[96];
    for (size_t l = 0; l < v->lane_count; l++) {
        if (l == 0 || v->lanes[l].rank != v->lanes[l - 1].rank) {
            if (l) group++;
            snprintf(name, sizeof name, "rank %u", v->lanes[l].rank);
            CHECK(OTF2_GlobalDefWriter_WriteString(g, next, name));
            CHECK(OTF2_GlobalDefWriter_WriteLocationGroup(g, group, next++,
                                                          OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                          OTF2_UNDEFINED_LOCATION_GROUP));
        }
        view_lane_label(&v->lanes[l], name, sizeof name);
        CHECK(OTF2_GlobalDefWriter_WriteString(g, next, name));
        CHECK(OTF2_GlobalDefWriter_WriteLocation(g, (OTF2_LocationRef)l, next++,
                                                 OTF2_LOCATION_TYPE_CPU_THREAD,
                                                 2 * (uint64_t)v->lanes[l].count +
                                                     mpi.lane_records[l],
                                                 group));
    }
    CHECK(otf2_mpi_write_defs(&mpi, v, g, &next));
    CHECK(OTF2_Archive_CloseGlobalDefWriter(archive, g));
    CHECK(OTF2_Archive_Close(archive));
    if (mpi.any_source || mpi.sendrecv || mpi.other_comm)
        fprintf(stderr,
                "scope-export: note: MPI calls written as regions only, without a message "
                "record: %llu receives from MPI_ANY_SOURCE (the file does not keep the matched "
                "source), %llu sendrecv calls (their receive side names no source), %llu calls "
                "on communicators without a usable world-rank map (their ranks are not in the "
                "file)\n",
                (unsigned long long)mpi.any_source, (unsigned long long)mpi.sendrecv,
                (unsigned long long)mpi.other_comm);
    otf2_mpi_free(&mpi);
    return SP_OK;
fail:
    OTF2_Archive_Close(archive);
    otf2_mpi_free(&mpi);
    return SP_ERR_OUTPUT;
}
