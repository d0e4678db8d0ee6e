/*
 * region_filter.c - SCOPE_PROFILER_REGIONS (region_filter.h).
 *
 * The decision is made once per handle, when the registry issues it, and
 * kept as one bit in a bitmap indexed by handle: a begin or end then costs
 * the gate word's load and, only when a filter is set, one bit test. The
 * bitmap has a bit for every handle the registry can issue (2^23, 1 MiB
 * of zero pages that are touched only where excluded handles fall); the
 * bit is set before the registry publishes the handle (its release store),
 * so any thread that holds the handle sees it.
 *
 * The list is read from the environment at the first handle of the
 * process, not at sp_setup: handles may be resolved before setup, and a
 * handle's decision never changes.
 */
#define _POSIX_C_SOURCE 200809L
#include "record/region_filter.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"

#define HANDLE_BITS (1u << 23) /* SPI_REGION_LIMIT (registry.h) */
#define MAX_PATTERNS 64
#define MAX_PATTERN_LEN 256

atomic_uint spi_gate_word = 0;

static _Atomic uint8_t excluded_bits[HANDLE_BITS / 8];

typedef struct name_rule {
    bool include;
    char pattern[MAX_PATTERN_LEN];
} name_rule;

static name_rule rules[MAX_PATTERNS];
static size_t rule_count = 0;
static bool has_include = false;
static pthread_once_t rules_once = PTHREAD_ONCE_INIT;

/* Parse the list; on a problem, report it and keep no rule (a partial
 * filter could drop regions the user meant to keep). */
static void read_rules(void) {
    const char *value = getenv("SCOPE_PROFILER_REGIONS");
    if (!value || !*value) return;
    size_t count = 0;
    bool include_seen = false;
    const char *problem = NULL;
    for (const char *p = value; *p && !problem;) {
        size_t len = strcspn(p, ",");
        const char *item = p;
        p += len;
        if (*p == ',') p++;
        while (len > 0 && (*item == ' ' || *item == '\t')) item++, len--;
        while (len > 0 && (item[len - 1] == ' ' || item[len - 1] == '\t')) len--;
        if (len == 0) continue;
        bool include = true;
        if (*item == '+' || *item == '-') {
            include = *item == '+';
            item++, len--;
        }
        if (len == 0) problem = "a '+' or '-' without a pattern";
        else if (len >= MAX_PATTERN_LEN) problem = "a pattern longer than 255 bytes";
        else if (count == MAX_PATTERNS) problem = "more than 64 patterns";
        if (problem) break;
        rules[count].include = include;
        memcpy(rules[count].pattern, item, len);
        rules[count].pattern[len] = '\0';
        include_seen |= include;
        count++;
    }
    if (problem) {
        spi_diag("SCOPE_PROFILER_REGIONS=\"%s\": %s; every region is recorded", value, problem);
        return;
    }
    rule_count = count;
    has_include = include_seen;
    if (rule_count) atomic_fetch_or(&spi_gate_word, SPI_GATE_NAME_FILTER);
}

static bool name_excluded(const char *name) {
    bool excluded = has_include;
    for (size_t i = 0; i < rule_count; i++)
        if (fnmatch(rules[i].pattern, name, 0) == 0) excluded = !rules[i].include;
    return excluded;
}

void spi_region_filter_decide(int region, const char *name) {
    (void)pthread_once(&rules_once, read_rules);
    if (rule_count == 0 || region < 0 || (unsigned)region >= HANDLE_BITS) return;
    if (name_excluded(name))
        atomic_fetch_or_explicit(&excluded_bits[(unsigned)region / 8],
                                 (uint8_t)(1u << ((unsigned)region % 8)), memory_order_relaxed);
}

bool spi_region_excluded(int region) {
    if (region < 0 || (unsigned)region >= HANDLE_BITS) return false;
    uint8_t bits = atomic_load_explicit(&excluded_bits[(unsigned)region / 8], memory_order_relaxed);
    return (bits >> ((unsigned)region % 8)) & 1u;
}
