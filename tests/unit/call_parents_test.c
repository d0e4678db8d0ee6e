/*
 * call_parents_test.c - parents recovered from the nesting of events
 * (c/src/record/call_parents.h: the walk, and the backward event cursor
 * under it), against the truth of a simulated thread.
 *
 * A seeded random program begins and ends calls on one simulated thread
 * (depths up to 40, long runs of siblings, deep recursion), writing the
 * events a recorder would: one per end, in end order, with the key of
 * recorder.h, spread over chunks of random sizes (empty ones too). Each
 * recovered parent is compared with the parent the program had:
 *   - every call recorded;
 *   - the calls still open at the end never recorded (their ancestors are
 *     open too: their completed children are roots);
 *   - a buffer limit: every end after some point dropped (a child of a
 *     dropped call is a root);
 *   - random single calls lost (a failed flush): a child attaches to its
 *     nearest recorded ancestor.
 * Also the key's packing at its limits, and that a releasing cursor gives
 * every chunk back and leaves the thread with none.
 *
 * A unit test of internal headers (scripts/check-layout allows c/src
 * headers in tests/unit only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record/call_parents.h"
#include "record/event_cursor.h"
#include "util/alloc.h"

int check_failures = 0;

typedef struct program {
    int64_t calls;          /* begun */
    int64_t *parent;        /* [calls]: the true parent sequence, -1 = root */
    uint32_t *region;       /* [calls] */
    spi_event *events;      /* in end order */
    size_t event_count;
} program;

static uint64_t rng_state;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* `ops` begins and ends at random, biased towards depth `target` that
 * drifts; leaves `left_open` calls open at the end. */
static void run_program(program *p, size_t ops, size_t left_open) {
    int64_t *stack = malloc((ops + 1) * sizeof *stack);
    p->parent = malloc((ops + 1) * sizeof *p->parent);
    p->region = malloc((ops + 1) * sizeof *p->region);
    p->events = malloc((ops + 1) * sizeof *p->events);
    p->calls = 0;
    p->event_count = 0;
    size_t depth = 0, target = 3;
    int64_t now = 1000;
    for (size_t op = 0; op < ops; op++) {
        if (next_random() % 1000 == 0) target = 1 + next_random() % 40;
        bool begin = depth == 0 || (depth < target ? next_random() % 4 != 0 : next_random() % 4 == 0);
        now += (int64_t)(next_random() % 3); /* equal times happen */
        if (begin) {
            int64_t s = p->calls++;
            p->parent[s] = depth ? stack[depth - 1] : -1;
            /* the in-parallel flag on some calls: it must not leak into regions */
            p->region[s] = (uint32_t)(next_random() % 50) | (next_random() % 7 == 0 ? SPI_EVENT_IN_PARALLEL : 0);
            stack[depth++] = s;
        } else {
            int64_t s = stack[--depth];
            p->events[p->event_count++] = (spi_event){
                .start_ns = 0, .duration_ns = now, /* the end, here */ .key = spi_event_key(s, p->region[s])};
        }
    }
    /* close to `left_open` calls: those stay open, as at finalize */
    while (depth > left_open) {
        int64_t s = stack[--depth];
        p->events[p->event_count++] =
            (spi_event){.start_ns = 0, .duration_ns = ++now, .key = spi_event_key(s, p->region[s])};
    }
    free(stack);
}

/* The events' chunks: random sizes, some empty, mapped as the recorder
 * maps them (a releasing cursor unmaps them). */
static void give_chunks(spi_thread *t, const spi_event *events, const bool *kept, size_t count) {
    t->head = t->tail = NULL;
    size_t at = 0;
    while (at < count || !t->head) {
        size_t want = next_random() % 5 == 0 ? 0 : 1 + next_random() % 3000;
        size_t bytes = sizeof(spi_chunk) + (want ? want : 1) * sizeof(spi_event);
        spi_chunk *c = spi_map_populated(bytes);
        if (!c) {
            fprintf(stderr, "cannot map a chunk\n");
            exit(1);
        }
        *c = (spi_chunk){.next = NULL, .used = 0, .bytes = bytes, .capacity = want ? want : 1};
        for (; at < count && c->used < want; at++)
            if (kept[at]) c->events[c->used++] = events[at];
        if (t->tail) t->tail->next = c;
        else t->head = c;
        t->tail = c;
    }
}

static bool is_recorded(const bool *recorded, int64_t s) { return s >= 0 && recorded[s]; }

/* Walk the kept events backward and compare each parent with the nearest
 * recorded ancestor in the program. */
static void check_walk(const char *label, program *p, const bool *kept, bool release) {
    bool *recorded = calloc((size_t)p->calls + 1, 1);
    size_t kept_count = 0;
    for (size_t i = 0; i < p->event_count; i++)
        if (kept[i]) {
            recorded[spi_event_sequence(&p->events[i])] = true;
            kept_count++;
        }
    spi_session session = {0};
    spi_thread thread = {0};
    give_chunks(&thread, p->events, kept, p->event_count);
    spi_call_walk walk;
    spi_call_walk_open(&walk, &session, &thread, release);
    const spi_event *e;
    const spi_enclosing_call *parent;
    size_t visited = 0, wrong = 0;
    int64_t later_end = INT64_MAX;
    size_t out_of_order = 0;
    int status;
    while ((status = spi_call_walk_next(&walk, &e, &parent)) == SP_OK && e) {
        int64_t s = spi_event_sequence(e);
        int64_t want = p->parent[s];
        while (want >= 0 && !is_recorded(recorded, want)) want = p->parent[want];
        int64_t got = parent ? parent->sequence : -1;
        uint32_t want_region = want >= 0 ? p->region[want] & (SPI_EVENT_IN_PARALLEL - 1) : 0;
        if (got != want || (parent && parent->region != want_region)) {
            if (wrong++ < 5)
                fprintf(stderr, "%s: call %lld: parent %lld (region %u), want %lld (region %u)\n",
                        label, (long long)s, (long long)got, parent ? parent->region : 0,
                        (long long)want, want_region);
        }
        /* end order, backward: the stored end readings never increase */
        if (e->duration_ns > later_end) out_of_order++;
        later_end = e->duration_ns;
        visited++;
    }
    spi_call_walk_close(&walk);
    CHECK_EQ_INT(status, SP_OK);
    CHECK_EQ_INT(visited, kept_count);
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(out_of_order, 0);
    if (release) {
        CHECK(thread.head == NULL && thread.tail == NULL);
    } else {
        for (spi_chunk *c = thread.head; c;) {
            spi_chunk *next = c->next;
            spi_unmap(c, c->bytes);
            c = next;
        }
    }
    free(recorded);
    printf("%s: %zu calls walked, %lld begun\n", label, visited, (long long)p->calls);
}

static void free_program(program *p) {
    free(p->parent);
    free(p->region);
    free(p->events);
}

static void test_nesting(void) {
    program p;
    run_program(&p, 400000, 6);
    REQUIRE(p.event_count > 100000 && p.calls > (int64_t)p.event_count);
    bool *kept = malloc(p.event_count);

    memset(kept, 1, p.event_count);
    check_walk("all recorded", &p, kept, false);
    check_walk("all recorded, released", &p, kept, true);

    /* a buffer limit: everything ended after 60% of the events dropped */
    for (size_t i = 0; i < p.event_count; i++) kept[i] = i < p.event_count * 6 / 10;
    check_walk("buffer limit", &p, kept, true);

    /* lost calls, one in 50, and a run of 2000 in the middle (a failed
     * flush), after which the thread records again */
    for (size_t i = 0; i < p.event_count; i++)
        kept[i] = next_random() % 50 != 0 && !(i >= p.event_count / 3 && i < p.event_count / 3 + 2000);
    check_walk("lost calls", &p, kept, false);

    free(kept);
    free_program(&p);
}

static void test_key(void) {
    int64_t sequences[] = {0, 1, (INT64_C(1) << 32) + 5, SPI_SEQUENCE_LIMIT - 1,
                           SPI_SEQUENCE_LIMIT + (INT64_C(1) << 32) - 1};
    uint32_t regions[] = {0, 1, (uint32_t)SPI_REGION_LIMIT - 1};
    for (size_t i = 0; i < sizeof sequences / sizeof *sequences; i++)
        for (size_t j = 0; j < sizeof regions / sizeof *regions; j++)
            for (int flag = 0; flag < 2; flag++) {
                spi_event e = {.key = spi_event_key(sequences[i],
                                                    regions[j] | (flag ? SPI_EVENT_IN_PARALLEL : 0))};
                CHECK_EQ_INT(spi_event_sequence(&e), sequences[i]);
                CHECK_EQ_INT(spi_event_region(&e), regions[j]);
                CHECK_EQ_INT(spi_event_in_parallel(&e), flag);
            }
    CHECK_EQ_INT(sizeof(spi_event), 24);
}

int main(void) {
    rng_state = 0x9e3779b97f4a7c15ull;
    test_key();
    test_nesting();
    if (check_failures) fprintf(stderr, "call_parents_test: %d check(s) failed\n", check_failures);
    return check_failures ? 1 : 0;
}
