/*
 * clock.c - whether the TSC may be the recording clock (clock.h).
 */
#include "record/clock.h"

#include <stdio.h>
#include <string.h>

/* 1 when the first "flags" line of /proc/cpuinfo names `flag` as a word. */
static bool cpu_has_flag(const char *flags, const char *flag) {
    size_t len = strlen(flag);
    for (const char *p = strstr(flags, flag); p; p = strstr(p + 1, flag))
        if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
            (p[len] == ' ' || p[len] == '\n' || p[len] == '\0'))
            return true;
    return false;
}

bool spi_clock_in_virtual_machine(void) {
#if !defined(__x86_64__) && !defined(__i386__)
    return false;
#else
    char line[8192];
    bool seen = false, guest = false;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && !seen && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0) continue;
        seen = true;
        guest = cpu_has_flag(line, "hypervisor");
    }
    if (f) fclose(f);
    return guest;
#endif
}

bool spi_clock_tsc_usable(char *reason, size_t reason_bytes) {
#if !defined(__x86_64__) && !defined(__i386__)
    snprintf(reason, reason_bytes, "this is not an x86 CPU");
    return false;
#else
    char line[8192];
    bool constant = false, nonstop = false, seen = false;
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && !seen && fgets(line, sizeof line, f)) {
        if (strncmp(line, "flags", 5) != 0) continue;
        seen = true;
        constant = cpu_has_flag(line, "constant_tsc");
        nonstop = cpu_has_flag(line, "nonstop_tsc");
    }
    if (f) fclose(f);
    if (!constant || !nonstop) {
        snprintf(reason, reason_bytes, "the CPU does not report an invariant TSC "
                                       "(constant_tsc and nonstop_tsc)");
        return false;
    }
    char source[64] = "";
    f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f && fgets(source, sizeof source, f)) source[strcspn(source, "\n")] = '\0';
    if (f) fclose(f);
    if (strcmp(source, "tsc") != 0) {
        snprintf(reason, reason_bytes, "the kernel does not trust the TSC (its clocksource is %s)",
                 source[0] ? source : "unknown");
        return false;
    }
    return true;
#endif
}
