/*
 * export_otf2_none.c - the OTF2 writer of a build without the OTF2 library
 * (libopen-trace-format2-dev is optional): --format otf2 then says so.
 */
#include "export_formats.h"

int export_otf2_available(void) { return 0; }

int export_otf2(const char *dir, view_lanes *v, char *errbuf, size_t errbuf_len) {
    (void)dir;
    (void)v;
    snprintf(errbuf, errbuf_len, "this build has no OTF2 support (libopen-trace-format2-dev)");
    return SP_ERR_UNSUPPORTED;
}
