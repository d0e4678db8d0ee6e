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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "export_formats.h"

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
    int64_t shift; /* subtracted from every timestamp (0 unless the clock is negative) */
    OTF2_ErrorCode err;
} walk_ctx;

static int on_open(void *p, const view_call *call, unsigned depth, int64_t start) {
    (void)depth;
    walk_ctx *c = p;
    c->err = OTF2_EvtWriter_Enter(c->writer, NULL, (OTF2_TimeStamp)(start - c->shift),
                                  (OTF2_RegionRef)view_call_region(c->v, call));
    return c->err == OTF2_SUCCESS ? 0 : SP_ERR_OUTPUT;
}

static int on_close(void *p, const view_call *call, unsigned depth, int64_t end) {
    (void)depth;
    walk_ctx *c = p;
    c->err = OTF2_EvtWriter_Leave(c->writer, NULL, (OTF2_TimeStamp)(end - c->shift),
                                  (OTF2_RegionRef)view_call_region(c->v, call));
    return c->err == OTF2_SUCCESS ? 0 : SP_ERR_OUTPUT;
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
    walk_ctx c = {NULL, v, v->origin < 0 ? v->origin : 0, OTF2_SUCCESS};
    uint64_t origin = (uint64_t)(v->origin - c.shift);
    CHECK(OTF2_Archive_SetFlushCallbacks(archive, &flush, NULL));
    CHECK(OTF2_Archive_SetSerialCollectiveCallbacks(archive));
    CHECK(OTF2_Archive_SetCreator(archive, "scope-export " SCOPE_PROFILER_VERSION));
    CHECK(OTF2_Archive_OpenEvtFiles(archive));
    view_walk_callbacks cb = {on_open, on_close};
    for (size_t l = 0; l < v->lane_count; l++) {
        c.writer = OTF2_Archive_GetEvtWriter(archive, (OTF2_LocationRef)l);
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
    uint64_t length = v->end_max > v->origin ? (uint64_t)(v->end_max - v->origin) : 0;
    CHECK(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, origin, length + 1,
                                                    OTF2_UNDEFINED_TIMESTAMP));
    /* Strings: the region names first (string id = region id), then ours. */
    OTF2_StringRef next = 0;
    for (size_t r = 0; r < regions; r++) {
        const char *name = sp_results_region_name(res, r);
        CHECK(OTF2_GlobalDefWriter_WriteString(g, next++, name ? name : ""));
    }
    OTF2_StringRef empty = next++, machine = next++, node_class = next++;
    CHECK(OTF2_GlobalDefWriter_WriteString(g, empty, ""));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, machine, "machine"));
    CHECK(OTF2_GlobalDefWriter_WriteString(g, node_class, "node"));
    for (size_t r = 0; r < regions; r++) {
        CHECK(OTF2_GlobalDefWriter_WriteRegion(g, (OTF2_RegionRef)r, (OTF2_StringRef)r,
                                               (OTF2_StringRef)r, empty, OTF2_REGION_ROLE_FUNCTION,
                                               OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, empty, 0,
                                               0));
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
                                                 2 * (uint64_t)v->lanes[l].count, group));
    }
    CHECK(OTF2_Archive_CloseGlobalDefWriter(archive, g));
    CHECK(OTF2_Archive_Close(archive));
    return SP_OK;
fail:
    OTF2_Archive_Close(archive);
    return SP_ERR_OUTPUT;
}
