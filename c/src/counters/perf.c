/*
 * counters/perf.c - Linux perf events per region (perf_event_open, no
 * library dependency).
 *
 * At setup the comma list is parsed against a table of the generic
 * hardware and software events and every event is opened once on the
 * calling thread as a probe: what the machine cannot count (hardware
 * events in most VMs) is named on one stderr line and dropped, the rest is
 * the session's event set. Names we do not know get one line too.
 *
 * Each recording thread opens the set for itself (pid=0, cpu=-1: the
 * thread, on any CPU): the hardware events as one group (one read() for all
 * of them), each software event as its own fd (see spi_perf_thread_open).
 * No scaling for multiplexing: a group is scheduled all-or-nothing, and
 * software events are never multiplexed.
 *
 * The thread keeps its own stack of begin readings (k values per open
 * region) and, per region handle, the calls and inclusive deltas summed at
 * each end. Nested calls of the same region (recursion) count once per
 * level, as their durations do.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/alloc.h"
#include "counters/counters.h"
#include "util/diag.h"

#define MAX_EVENTS SPI_PERF_MAX_EVENTS
#define INITIAL_FRAMES 32

typedef struct event_kind {
    const char *name;
    uint32_t type;
    uint64_t config;
} event_kind;

static const event_kind kinds[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
};

/* The session's event set, fixed between configure and reset. */
typedef struct perf_event {
    char name[48];
    const event_kind *kind;
    bool user_only;   /* kernel counting refused (perf_event_paranoid) */
} perf_event;

static perf_event events[MAX_EVENTS];
static size_t event_count = 0;

struct spi_perf_thread {
    int fds[MAX_EVENTS];
    bool alone[MAX_EVENTS];   /* read by itself, not through the group */
    int leader;               /* index of the hardware group leader, -1 */
    size_t group_size;        /* events read through the leader */
    uint64_t *stack;          /* [capacity * event_count] begin readings */
    size_t depth;
    size_t capacity;
    bool stack_lost;          /* a frame could not be pushed: ends skip */
    size_t lost_depth;
    int64_t *calls;           /* [region_capacity] */
    uint64_t *totals;         /* [region_capacity * event_count] */
    size_t region_capacity;
};

static int open_event(const perf_event *e, int group_fd, bool user_only, bool grouped) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = e->kind->type;
    attr.config = e->kind->config;
    attr.exclude_kernel = user_only;
    attr.exclude_hv = user_only;
    if (grouped) attr.read_format = PERF_FORMAT_GROUP;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, group_fd, 0);
    return (int)fd;
}

static void append_name(char *list, size_t bytes, const char *name) {
    size_t used = strlen(list);
    snprintf(list + used, bytes - used, "%s%s", used ? ", " : "", name);
}

static const event_kind *find_kind(const char *name) {
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].name, name) == 0) return &kinds[i];
    return NULL;
}

int spi_perf_configure(const char *event_list) {
    spi_perf_reset();
    char unknown[512] = "", unsupported[512] = "", refused[512] = "";
    const char *p = event_list;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        /* trim blanks so "cycles, instructions" works */
        const char *start = p;
        while (len && (*start == ' ' || *start == '\t')) start++, len--;
        while (len && (start[len - 1] == ' ' || start[len - 1] == '\t')) len--;
        p = comma ? comma + 1 : NULL;
        if (len == 0) continue;
        perf_event e = {0};
        snprintf(e.name, sizeof e.name, "%.*s", (int)len, start);
        e.kind = len < sizeof e.name ? find_kind(e.name) : NULL;
        if (!e.kind) {
            append_name(unknown, sizeof unknown, e.name);
            continue;
        }
        bool duplicate = false;
        for (size_t i = 0; i < event_count; i++)
            duplicate |= strcmp(events[i].name, e.name) == 0;
        if (duplicate) continue;
        if (event_count == MAX_EVENTS) {
            append_name(unsupported, sizeof unsupported, e.name);
            continue;
        }
        /* Probe: full counting first, then user space only (what
         * perf_event_paranoid >= 2 allows an unprivileged process). */
        int fd = open_event(&e, -1, false, false);
        if (fd < 0 && (errno == EACCES || errno == EPERM)) {
            e.user_only = true;
            fd = open_event(&e, -1, true, false);
        }
        if (fd < 0) {
            if (errno == EACCES || errno == EPERM) append_name(refused, sizeof refused, e.name);
            else append_name(unsupported, sizeof unsupported, e.name);
            continue;
        }
        close(fd);
        events[event_count++] = e;
    }
    if (unknown[0])
        spi_diag("unknown perf event name(s) skipped: %s (known: cycles, instructions, "
                 "cache-misses, cache-references, branches, branch-misses, task-clock, "
                 "page-faults, context-switches, cpu-migrations, ...)",
                 unknown);
    if (unsupported[0])
        spi_diag("perf events this machine cannot count, skipped: %s", unsupported);
    if (refused[0])
        spi_diag("perf events not permitted (see /proc/sys/kernel/perf_event_paranoid), "
                 "skipped: %s", refused);
    return SP_OK;
}

size_t spi_perf_event_count(void) { return event_count; }

const char *spi_perf_event_name(size_t index) {
    return index < event_count ? events[index].name : NULL;
}

void spi_perf_reset(void) { event_count = 0; }

static void close_fds(spi_perf_thread *t) {
    for (size_t i = 0; i < MAX_EVENTS; i++)
        if (t->fds[i] >= 0) close(t->fds[i]);
}

spi_perf_thread *spi_perf_thread_open(void) {
    if (event_count == 0) return NULL;
    spi_perf_thread *t = spi_calloc(1, sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < MAX_EVENTS; i++) t->fds[i] = -1;
    t->leader = -1;
    t->stack = spi_calloc(INITIAL_FRAMES * event_count, sizeof *t->stack);
    if (!t->stack) {
        spi_free(t);
        return NULL;
    }
    t->capacity = INITIAL_FRAMES;
    /* Hardware events in one group: scheduled together, read in one call,
     * so ratios such as IPC compare the same instructions. Software events
     * stay alone: grouped under a task-clock leader, page-faults were
     * measured here to lose about half their counts. */
    for (size_t i = 0; i < event_count; i++) {
        bool hardware = events[i].kind->type == PERF_TYPE_HARDWARE;
        int group_fd = hardware && t->leader >= 0 ? t->fds[t->leader] : -1;
        t->fds[i] = open_event(&events[i], group_fd, events[i].user_only, hardware);
        if (t->fds[i] < 0 && group_fd >= 0) {
            /* the PMU cannot schedule them together: count it alone */
            t->fds[i] = open_event(&events[i], -1, events[i].user_only, false);
            t->alone[i] = true;
        } else if (hardware && t->leader < 0) {
            t->leader = (int)i;
        } else if (!hardware) {
            t->alone[i] = true;
        }
        if (t->fds[i] < 0) {
            spi_diag("cannot open perf event %s on a new thread (%s); "
                     "that thread records no perf counters",
                     events[i].name, strerror(errno));
            close_fds(t);
            spi_free(t->stack);
            spi_free(t);
            return NULL;
        }
        if (t->leader >= 0 && !t->alone[i]) t->group_size++;
    }
    return t;
}

void spi_perf_thread_close(spi_perf_thread *t) {
    if (!t) return;
    close_fds(t);
    spi_free(t->stack);
    spi_free(t->calls);
    spi_free(t->totals);
    spi_free(t);
}

/* Current values of the set into out[event_count]; false on a failed read
 * (then the call is not counted rather than counted wrong). */
static bool read_values(const spi_perf_thread *t, uint64_t *out) {
    if (t->leader >= 0) {
        uint64_t buffer[MAX_EVENTS + 1];
        ssize_t want = (ssize_t)((t->group_size + 1) * sizeof(uint64_t));
        if (read(t->fds[t->leader], buffer, (size_t)want) != want || buffer[0] != t->group_size)
            return false;
        /* group members come back in creation order */
        size_t next = 1;
        for (size_t i = 0; i < event_count; i++)
            if (!t->alone[i]) out[i] = buffer[next++];
    }
    for (size_t i = 0; i < event_count; i++)
        if (t->alone[i] && read(t->fds[i], &out[i], sizeof out[i]) != (ssize_t)sizeof out[i])
            return false;
    return true;
}

void spi_perf_begin(spi_perf_thread *t) {
    if (t->stack_lost) {
        t->lost_depth++;
        return;
    }
    if (t->depth == t->capacity) {
        uint64_t *grown = spi_reallocarray(t->stack, t->capacity * 2 * event_count,
                                           sizeof *grown);
        if (!grown) {
            /* Out of memory: stop counting below this depth rather than
             * misattribute readings; the stack stays consistent. */
            t->stack_lost = true;
            t->lost_depth = 1;
            return;
        }
        t->stack = grown;
        t->capacity *= 2;
    }
    uint64_t *frame = &t->stack[t->depth * event_count];
    if (!read_values(t, frame)) frame[0] = UINT64_MAX; /* marks "no reading" */
    t->depth++;
}

static bool grow_regions(spi_perf_thread *t, size_t region) {
    size_t capacity = t->region_capacity ? t->region_capacity : 16;
    while (capacity <= region) capacity *= 2;
    int64_t *calls = spi_reallocarray(t->calls, capacity, sizeof *calls);
    if (!calls) return false;
    t->calls = calls;
    uint64_t *totals = spi_reallocarray(t->totals, capacity * event_count, sizeof *totals);
    if (!totals) return false;
    t->totals = totals;
    memset(calls + t->region_capacity, 0, (capacity - t->region_capacity) * sizeof *calls);
    memset(totals + t->region_capacity * event_count, 0,
           (capacity - t->region_capacity) * event_count * sizeof *totals);
    t->region_capacity = capacity;
    return true;
}

void spi_perf_end(spi_perf_thread *t, int region) {
    if (t->stack_lost) {
        if (--t->lost_depth == 0) t->stack_lost = false;
        return;
    }
    if (t->depth == 0) return;
    uint64_t now[MAX_EVENTS];
    bool ok = read_values(t, now);
    const uint64_t *begin = &t->stack[--t->depth * event_count];
    if (!ok || begin[0] == UINT64_MAX) return;
    if ((size_t)region >= t->region_capacity && !grow_regions(t, (size_t)region)) return;
    uint64_t *total = &t->totals[(size_t)region * event_count];
    for (size_t i = 0; i < event_count; i++) total[i] += now[i] - begin[i];
    t->calls[region]++;
}

bool spi_perf_totals(const spi_perf_thread *t, int region, int64_t *calls,
                     const uint64_t **values) {
    if (!t || region < 0 || (size_t)region >= t->region_capacity || t->calls[region] == 0)
        return false;
    *calls = t->calls[region];
    *values = &t->totals[(size_t)region * event_count];
    return true;
}
