/*
 * caliper.c - Caliper's annotations (caliper/cali.h) over scope-profiler's
 * public API: the session, each thread's stack of open annotations, and
 * the begin/end calls.
 *
 * Why a stack of our own: Caliper ends by attribute (cali_end(attr),
 * the C++ classes' destructors, CALI_MARK_LOOP_END) or checks the name
 * only to warn (cali_end_region), so the shim must know which region the
 * innermost annotation of an attribute opened; the core ends by name or
 * handle. Each thread keeps (attribute, region handle) frames: a begin
 * resolves the name to a handle (the core's per-thread cache: a compare on
 * a hit), opens the call with sp_begin and pushes; an end finds the
 * attribute's innermost frame (almost always the top), removes it, and
 * closes the call by the registry's own text (again one compare in the
 * core's cache), which also lets the core check nesting against
 * everything else the thread opened (native calls, other shims). The
 * frames live in a per-thread array that grows by doubling and is freed at
 * thread exit, so the hot path allocates only while a thread first deepens.
 *
 * Mismatches follow Caliper: an end naming another region than the
 * innermost one closes the innermost one and says so (once per process);
 * an end with nothing open changes nothing and says so (once).
 *
 * Session: the first annotation (or cali_init) starts one unless one runs
 * (sps_session_start); it ends at exit. A session that started while MPI
 * ran has joined the job, and the core finishes it inside MPI_Finalize:
 * the exit hook then finds it finished and does nothing.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

#include "caliper_internal.h"

sps_shim spc_shim = SPS_SHIM_INIT("Caliper");

/* ---- session ------------------------------------------------------------ */

static atomic_int started = 0;
static pthread_mutex_t starting = PTHREAD_MUTEX_INITIALIZER;

static void at_exit(void) { sps_session_finish(&spc_shim); }

static __attribute__((noinline, cold)) void start(const char *language) {
    pthread_mutex_lock(&starting);
    if (!atomic_load(&started)) {
        sps_session_start(&spc_shim, language);
        atexit(at_exit);
        /* Once started, always started: annotations after the session ended
         * (in atexit handlers, after MPI_Finalize) are harmless no-ops and
         * must not begin a second session that would overwrite the file. */
        atomic_store(&started, 1);
    }
    pthread_mutex_unlock(&starting);
}

void spc_ensure_started(const char *language) {
    if (__builtin_expect(!atomic_load_explicit(&started, memory_order_relaxed), 0))
        start(language);
}

SPS_EXPORT void cali_init(void) { spc_ensure_started("c"); }

SPS_EXPORT int cali_is_initialized(void) { return atomic_load(&started); }

SPS_EXPORT void cali_mpi_init(void) {}

/* ---- per-thread frames ------------------------------------------------------ */

typedef struct frame {
    cali_id_t attr;
    int region;
} frame;

typedef struct frames {
    frame *items;
    uint32_t depth;
    uint32_t capacity;
} frames;

/* initial-exec, as the core's own thread state: no __tls_get_addr call on
 * the hot path (the library is linked or preloaded, not dlopen'ed late). */
static _Thread_local __attribute__((tls_model("initial-exec"))) frames tls;

static pthread_key_t frames_key;
static pthread_once_t frames_key_once = PTHREAD_ONCE_INIT;

static void free_frames(void *unused) {
    (void)unused;
    free(tls.items);
    tls = (frames){NULL, 0, 0};
}

static void make_key(void) { pthread_key_create(&frames_key, free_frames); }

/* Room for one more frame; 0 when memory ran out (noted). */
static __attribute__((noinline)) int grow(void) {
    uint32_t capacity = tls.capacity ? tls.capacity * 2 : 32;
    frame *items = realloc(tls.items, capacity * sizeof *items);
    if (!items) {
        sps_note(&spc_shim, SPC_NOTE_OUT_OF_MEMORY,
                 "out of memory for the annotation stack: a region was not recorded");
        return 0;
    }
    if (!tls.items) {
        pthread_once(&frames_key_once, make_key);
        pthread_setspecific(frames_key, &tls); /* so free_frames runs at thread exit */
    }
    tls.items = items;
    tls.capacity = capacity;
    return 1;
}

static inline int reserve(void) {
    return __builtin_expect(tls.depth < tls.capacity, 1) || grow();
}

/* Index of the thread's innermost frame of `attr`, or -1. */
static inline int innermost(cali_id_t attr) {
    for (uint32_t i = tls.depth; i > 0; i--)
        if (tls.items[i - 1].attr == attr) return (int)(i - 1);
    return -1;
}

/* Remove frame `i` and close its call. */
static inline void close_frame(int i) {
    int region = tls.items[i].region;
    if ((uint32_t)i + 1 < tls.depth)
        memmove(&tls.items[i], &tls.items[i + 1], (tls.depth - (uint32_t)i - 1) * sizeof(frame));
    tls.depth--;
    sp_region_end(sp_region_name(region));
}

static inline void open_frame(cali_id_t attr, int region) {
    if (__builtin_expect(region == SP_INVALID_REGION, 0)) return; /* the core said why */
    sp_begin(region);
    tls.items[tls.depth++] = (frame){attr, region};
}

/* ---- begin and end ------------------------------------------------------------ */

static __attribute__((noinline, cold)) void no_name(const char *call) {
    sps_note(&spc_shim, SPC_NOTE_NO_NAME, "%s with a NULL or empty name records nothing", call);
}

static __attribute__((noinline, cold)) void unknown_attribute(const char *call, cali_id_t attr) {
    sps_note(&spc_shim, SPC_NOTE_UNKNOWN_ATTRIBUTE,
             "%s with attribute id %llu, which cali_create_attribute never gave: nothing "
             "recorded", call, (unsigned long long)attr);
}

/* This thread's last names (see sps_region_of): a begin by a name seen
 * before is one strcmp, sp_begin and a push. */
static _Thread_local __attribute__((tls_model("initial-exec"))) sps_name_slot
    names[SPS_NAME_SLOTS];

/* Begin by a NUL-terminated name. */
static inline void begin_cstr(cali_id_t attr, const char *name, const char *call) {
    size_t len;
    int region = sps_region_of(&spc_shim, names, name, &len);
    if (__builtin_expect(len == 0, 0)) return no_name(call);
    if (!reserve()) return;
    open_frame(attr, region);
}

/* Begin by a sized name (Fortran). */
void spc_begin_named(cali_id_t attr, const char *name, size_t len, const char *call) {
    if (__builtin_expect(len == 0, 0)) return no_name(call);
    if (!reserve()) return;
    open_frame(attr, sp_region_n(name, len));
}

static __attribute__((noinline, cold)) void nothing_open(const char *call, const char *name,
                                                         size_t len) {
    sps_note(&spc_shim, SPC_NOTE_END_NOTHING,
             "%s(\"%.*s\") with no such region open on this thread: nothing closed", call,
             (int)(len < 64 ? len : 64), name ? name : "");
}

static __attribute__((noinline, cold)) void mismatch(const char *call, const char *name,
                                                     size_t len, const char *open) {
    sps_note(&spc_shim, SPC_NOTE_END_MISMATCH,
             "%s(\"%.*s\") while \"%.64s\" is the innermost open region: \"%.64s\" is closed "
             "(Caliper's rule)", call, (int)(len < 64 ? len : 64), name, open, open);
}

/* The slow side of spc_end_named: the frame is not the top one, or the
 * core refused the end (another region is innermost): compare names and
 * close the attribute's innermost frame whatever they say (Caliper). */
static __attribute__((noinline)) void end_frame(int i, const char *name, size_t len,
                                               const char *call) {
    const char *open = sp_region_name(tls.items[i].region);
    if (len == 0 || memcmp(open, name, len) != 0 || open[len] != '\0')
        mismatch(call, name ? name : "", len, open);
    close_frame(i);
}

void spc_end_named(cali_id_t attr, const char *name, size_t len, const char *call) {
    int i = innermost(attr);
    if (__builtin_expect(i < 0, 0)) return nothing_open(call, name, len);
    /* The usual case: the frame is the thread's top one and the core, which
     * checks that `name` is its innermost open call, closes it (the
     * caller's name is in the core's cache since the begin). */
    if (__builtin_expect((uint32_t)i + 1 == tls.depth && len > 0, 1)) {
        int status = sp_region_end_n(name, len);
        if (__builtin_expect(status == SP_OK || status == SP_ERR_BUFFER_LIMIT, 1)) {
            tls.depth--;
            return;
        }
    }
    end_frame(i, name, len, call);
}

/* End by a NUL-terminated name: the usual case (the frame on top, the
 * same region) costs a strcmp in this thread's name cache and sp_end. */
static inline void end_cstr(cali_id_t attr, const char *name, const char *call) {
    int i = innermost(attr);
    if (__builtin_expect(i < 0, 0))
        return nothing_open(call, name, sps_name_len(&spc_shim, name));
    size_t len;
    int region = sps_region_of(&spc_shim, names, name, &len);
    if (__builtin_expect((uint32_t)i + 1 == tls.depth && region == tls.items[i].region, 1)) {
        /* A refusal (a region of another API still open inside) was
         * reported by the core; the annotation ends here all the same. */
        sps_end(region);
        tls.depth--;
        return;
    }
    end_frame(i, name, len, call);
}

/* The region calls: one attribute ("region") for all of them, as Caliper
 * keeps regions, phases and communication regions apart only by level. */
#define REGION_CALLS(begin_fn, end_fn)                                              \
    SPS_EXPORT void begin_fn(const char *name) {                                    \
        spc_ensure_started("c");                                                    \
        begin_cstr(SPC_ATTR_REGION, name, #begin_fn);                               \
    }                                                                               \
    SPS_EXPORT void end_fn(const char *name) { end_cstr(SPC_ATTR_REGION, name, #end_fn); }
REGION_CALLS(cali_begin_region, cali_end_region)
REGION_CALLS(cali_begin_phase, cali_end_phase)
REGION_CALLS(cali_begin_comm_region, cali_end_comm_region)

/* ---- annotation by attribute ----------------------------------------------------- */

/* Open the region named after the attribute (cali_begin, numeric values). */
static void begin_attribute(cali_id_t attr, const char *call) {
    spc_ensure_started("c");
    spc_attribute *attribute = spc_attribute_get(attr);
    if (__builtin_expect(!attribute, 0)) return unknown_attribute(call, attr);
    if (!reserve()) return;
    open_frame(attr, spc_attribute_region(attribute));
}

SPS_EXPORT void cali_begin(cali_id_t attr) { begin_attribute(attr, "cali_begin"); }

SPS_EXPORT void cali_begin_double(cali_id_t attr, double val) {
    (void)val;
    begin_attribute(attr, "cali_begin_double");
}

SPS_EXPORT void cali_begin_int(cali_id_t attr, int val) {
    (void)val;
    begin_attribute(attr, "cali_begin_int");
}

SPS_EXPORT void cali_begin_string(cali_id_t attr, const char *val) {
    spc_ensure_started("c");
    if (__builtin_expect(!spc_attribute_get(attr), 0))
        return unknown_attribute("cali_begin_string", attr);
    begin_cstr(attr, val, "cali_begin_string");
}

static void end_attribute(cali_id_t attr, const char *call) {
    spc_attribute *attribute = spc_attribute_get(attr);
    if (__builtin_expect(!attribute, 0)) return unknown_attribute(call, attr);
    int i = innermost(attr);
    if (i >= 0) return close_frame(i);
    /* A value set with cali_set*, then ended: never a region here. */
    if (!atomic_load_explicit(&attribute->was_set, memory_order_relaxed))
        nothing_open(call, attribute->name, attribute->len);
}

SPS_EXPORT void cali_end(cali_id_t attr) { end_attribute(attr, "cali_end"); }

SPS_EXPORT void cali_safe_end_string(cali_id_t attr, const char *val) {
    if (__builtin_expect(!spc_attribute_get(attr), 0))
        return unknown_attribute("cali_safe_end_string", attr);
    end_cstr(attr, val, "cali_safe_end_string");
}

/* ---- by attribute name ------------------------------------------------------------ */

static cali_id_t by_name(const char *attr_name, int type) {
    return spc_attribute_lookup(attr_name, sps_name_len(&spc_shim, attr_name), type,
                                CALI_ATTR_DEFAULT, 1);
}

SPS_EXPORT void cali_begin_byname(const char *attr_name) {
    begin_attribute(by_name(attr_name, CALI_TYPE_BOOL), "cali_begin_byname");
}

SPS_EXPORT void cali_begin_double_byname(const char *attr_name, double val) {
    (void)val;
    begin_attribute(by_name(attr_name, CALI_TYPE_DOUBLE), "cali_begin_double_byname");
}

SPS_EXPORT void cali_begin_int_byname(const char *attr_name, int val) {
    (void)val;
    begin_attribute(by_name(attr_name, CALI_TYPE_INT), "cali_begin_int_byname");
}

SPS_EXPORT void cali_begin_string_byname(const char *attr_name, const char *val) {
    cali_begin_string(by_name(attr_name, CALI_TYPE_STRING), val);
}

SPS_EXPORT void cali_end_byname(const char *attr_name) {
    size_t len = sps_name_len(&spc_shim, attr_name);
    cali_id_t attr = len ? spc_attribute_lookup(attr_name, len, CALI_TYPE_INV, 0, 0)
                         : CALI_INV_ID;
    if (attr == CALI_INV_ID) return nothing_open("cali_end_byname", attr_name, len);
    end_attribute(attr, "cali_end_byname");
}

/* ---- Fortran (caliper_mod.f90): sized names, trailing blanks trimmed ----- */

void spc_fortran_begin_region(const char *name, size_t len);
void spc_fortran_end_region(const char *name, size_t len);
void spc_fortran_init(void);

void spc_fortran_begin_region(const char *name, size_t len) {
    spc_ensure_started("fortran");
    spc_begin_named(SPC_ATTR_REGION, name, sps_fortran_len(&spc_shim, name, len),
                    "cali_begin_region");
}

void spc_fortran_end_region(const char *name, size_t len) {
    spc_end_named(SPC_ATTR_REGION, name, sps_fortran_len(&spc_shim, name, len),
                  "cali_end_region");
}

void spc_fortran_init(void) { spc_ensure_started("fortran"); }
