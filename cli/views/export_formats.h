/*
 * export_formats.h - the writers behind scope-export's picture formats,
 * one file each: export_speedscope.c, export_otf2.c (or export_otf2_none.c
 * when the build has no OTF2), flamegraph_svg.c; folded stacks are
 * flame_write_folded (flame_tree.h). Each writes everything it is given;
 * choosing ranks and regions is done before, in the lanes or the tree.
 */
#ifndef SP_CLI_EXPORT_FORMATS_H
#define SP_CLI_EXPORT_FORMATS_H

#include <stdbool.h>
#include <stdio.h>

#include "flame_tree.h"
#include "scope_profiler_results.h"
#include "view_lanes.h"

/* speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * one profile per lane, frames shared, unit nanoseconds, every time
 * measured from v->origin: "evented" (every call) while the export holds
 * at most 250,000 calls, else for each lane the smaller of evented and one
 * "sampled" profile of its call paths weighted by exclusive ns
 * (export_speedscope.c says why). Returns SP_OK, SP_ERR_OUT_OF_MEMORY or
 * SP_ERR_OUTPUT. */
int export_speedscope(FILE *out, view_lanes *v);

/* 1 when this build can write OTF2. */
int export_otf2_available(void);

/* An OTF2 archive "traces" (traces.otf2, traces.def, traces/) in the
 * existing, empty directory `dir`: one location per lane, grouped into
 * one location group per rank, regions as OTF2 regions, Enter/Leave on
 * the file's clock (ns from v->origin, the origin as the clock's global
 * offset). Returns SP_OK, SP_ERR_UNSUPPORTED (not built), or SP_ERR_OUTPUT
 * with a message in errbuf. */
int export_otf2(const char *dir, view_lanes *v, char *errbuf, size_t errbuf_len);

/* An interactive flame graph (hover: name, time, share; click: zoom; the
 * script is inline). standalone: a complete SVG document; otherwise an
 * <svg> element to embed in HTML. id: a prefix unique within the page.
 * Returns SP_OK, SP_ERR_OUT_OF_MEMORY or SP_ERR_OUTPUT. */
int flamegraph_svg_write(FILE *out, const flame_tree *t, const char *title, bool standalone);

#endif /* SP_CLI_EXPORT_FORMATS_H */
