/*
 * spn_patch.c - hook calls of silenced functions rewritten into NOPs
 * (spn_patch.h).
 *
 * What a site looks like. GCC's -finstrument-functions calls the hooks with
 * `call rel32` (E8 + 4 bytes), to the hook itself or, from another object
 * (the usual case: the program calls into this library), to its PLT stub:
 * `jmp *slot(%rip)` (FF 25), or with IBT `endbr64; [bnd] jmp *slot(%rip)`
 * in .plt.sec. With -fno-plt the call is `call *slot(%rip)` (FF 15 + 4
 * bytes). The slot is the object's GOT entry for the hook; we are running
 * inside the hook, called through it, so it is resolved even with lazy
 * binding. A site is only patched when its bytes and where they lead say
 * "this calls our hook": any other bytes before a return address (a tail
 * call, a hand-written call through a register) are left alone.
 *
 * How it is rewritten. The call becomes a NOP of its own length (0F 1F 44
 * 00 00, or 66 0F 1F 44 00 00) when it lies within one aligned 8-byte word,
 * otherwise a 2-byte `jmp` over the rest of it (EB 03 / EB 04) when those 2
 * bytes lie within one word. A `call rel32` whose first 2 bytes straddle a
 * word (1 site in 8) keeps its opcode and gets a new displacement, alone in
 * the next word, to a `ret` byte (C3) of the same segment: a call and a
 * return instead of the hook (about 1 ns; a direct call to a `ret` is fine
 * under CET too: the shadow stack sees a call and its return). Other
 * straddling sites (-fno-plt's 6-byte form) are left. The word is stored
 * whole, with one atomic aligned 8-byte store (its other bytes rewritten
 * unchanged), so a thread running that code sees the old instruction or
 * the new one, never a mix (the technique XRay uses for
 * its 2-byte sled jumps; instruction fetch of an aligned word within a
 * cache line is not torn on x86-64 processors in practice, though the SDM
 * asks for a serializing instruction on the executing CPU: the worst case,
 * a stale decode, calls the hook once more, which returns at once and finds
 * the site patched). The page is made RWX for the store and set back to
 * R+X, under one mutex, so two threads never race on one page's
 * protection; writing a private file mapping copies that page (4 KiB per
 * patched page, bounded by the code's size).
 *
 * Where. Only inside a PT_LOAD segment that is R+X and not W of an object
 * dl_iterate_phdr lists: the check and the store run in its callback, which
 * holds the loader's lock, so the object cannot be unloaded meanwhile.
 *
 * Memory is fixed: sites that could not be patched are remembered in a
 * fixed table (so a site is tried once, and the fallback hook does not take
 * the mutex again); patched sites never call again. Once the table is full
 * no new site is tried (nor counted). Once mprotect was refused (a system
 * policy: it would refuse every page) new sites are only counted.
 */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "spn_patch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

#define NO_INSTRUMENT __attribute__((no_instrument_function))

int spn_patching = 0;

static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long patched_sites = 0;     /* under patch_lock */
static unsigned long unpatchable_sites = 0; /* under patch_lock */

NO_INSTRUMENT void spn_patch_counts(unsigned long *patched, unsigned long *unpatchable) {
    pthread_mutex_lock(&patch_lock);
    *patched = patched_sites;
    *unpatchable = unpatchable_sites;
    pthread_mutex_unlock(&patch_lock);
}

NO_INSTRUMENT void spn_patch_publish(void) {
    char text[96] = "off";
    if (spn_patching) {
        unsigned long patched, unpatchable;
        spn_patch_counts(&patched, &unpatchable);
        snprintf(text, sizeof text, "%lu patched, %lu unpatchable", patched, unpatchable);
    }
    (void)sp_set_metadata("instrument_patched", text);
}

NO_INSTRUMENT void spn_patch_fork_prepare(void) { pthread_mutex_lock(&patch_lock); }
NO_INSTRUMENT void spn_patch_fork_parent(void) { pthread_mutex_unlock(&patch_lock); }
NO_INSTRUMENT void spn_patch_fork_child(void) { pthread_mutex_unlock(&patch_lock); }

/* ThreadSanitizer: its shadow of the program's code cannot take our
 * instrumented store (it faults in the runtime), and no suppression covers
 * that; a TSan build of this library does not patch (SCOPE_PROFILER_PATCH
 * is then "off", as on other platforms). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SPN_UNDER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define SPN_UNDER_TSAN 1
#endif

#if defined(__x86_64__) && defined(__linux__) && !defined(SPN_UNDER_TSAN)

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

/* Sites left as they are: a lock-free set (open addressing, entries never
 * removed) read before taking the mutex. 8192 sites, 64 KiB of zero pages
 * touched as sites arrive. */
#define MEMO_SLOTS 8192u
#define MEMO_PROBES 64u

static _Atomic(uintptr_t) memo[MEMO_SLOTS];
static atomic_int gave_up = 0; /* the memo is full: try no new site */
static int refused = 0;        /* under patch_lock: mprotect was refused, patch nothing more */

NO_INSTRUMENT void spn_patch_configure(int enabled) { spn_patching = enabled != 0; }

NO_INSTRUMENT static unsigned memo_slot(uintptr_t site) {
    return (unsigned)((site * 0x9E3779B97F4A7C15ull) >> 51) & (MEMO_SLOTS - 1);
}

NO_INSTRUMENT static int memo_has(uintptr_t site) {
    unsigned slot = memo_slot(site);
    for (unsigned i = 0; i < MEMO_PROBES; i++) {
        uintptr_t held = atomic_load_explicit(&memo[(slot + i) & (MEMO_SLOTS - 1)],
                                              memory_order_acquire);
        if (held == site) return 1;
        if (held == 0) return 0;
    }
    return 0;
}

/* Under patch_lock (the only writer). */
NO_INSTRUMENT static void memo_add(uintptr_t site) {
    unsigned slot = memo_slot(site);
    for (unsigned i = 0; i < MEMO_PROBES; i++) {
        _Atomic(uintptr_t) *entry = &memo[(slot + i) & (MEMO_SLOTS - 1)];
        uintptr_t held = atomic_load_explicit(entry, memory_order_relaxed);
        if (held == site) return;
        if (held == 0) {
            atomic_store_explicit(entry, site, memory_order_release);
            return;
        }
    }
    atomic_store(&gave_up, 1);
}

enum outcome { NOT_FOUND, PATCHED, ALREADY_PATCHED, UNPATCHABLE, REFUSED };

typedef struct search {
    uintptr_t return_address;
    uintptr_t hook, hook_alias;
    enum outcome outcome;
} search;

static const unsigned char NOP5[5] = {0x0F, 0x1F, 0x44, 0x00, 0x00};
static const unsigned char NOP6[6] = {0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00};

/* The PT_LOAD segment of `info` holding [address, address + len), or NULL. */
NO_INSTRUMENT static const ElfW(Phdr) *segment_of(const struct dl_phdr_info *info,
                                                  uintptr_t address, size_t len) {
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD) continue;
        uintptr_t start = (uintptr_t)info->dlpi_addr + p->p_vaddr;
        if (address >= start && address - start <= p->p_memsz && len <= p->p_memsz &&
            address - start <= p->p_memsz - len)
            return p;
    }
    return NULL;
}

NO_INSTRUMENT static int is_text(const ElfW(Phdr) *p) {
    return p && (p->p_flags & PF_R) && (p->p_flags & PF_X) && !(p->p_flags & PF_W);
}

NO_INSTRUMENT static int32_t rel32_at(uintptr_t address) {
    int32_t value;
    memcpy(&value, (const void *)address, sizeof value);
    return value;
}

/* Whether the GOT slot at `slot` (in a loaded segment of `info`) holds the hook. */
NO_INSTRUMENT static int slot_holds_hook(const struct dl_phdr_info *info, uintptr_t slot,
                                         const search *s) {
    if (!segment_of(info, slot, sizeof(uintptr_t))) return 0;
    uintptr_t held;
    memcpy(&held, (const void *)slot, sizeof held);
    return held == s->hook || held == s->hook_alias;
}

/* Whether a `call rel32` to `target` reaches the hook: the hook itself, or
 * a PLT stub of this object jumping through a slot that holds it. */
NO_INSTRUMENT static int target_is_hook(const struct dl_phdr_info *info, uintptr_t target,
                                        const search *s) {
    if (target == s->hook || target == s->hook_alias) return 1;
    if (!is_text(segment_of(info, target, 11))) return 0;
    unsigned char b[11];
    memcpy(b, (const void *)target, sizeof b);
    static const unsigned char ENDBR64[4] = {0xF3, 0x0F, 0x1E, 0xFA};
    if (b[0] == 0xFF && b[1] == 0x25) /* jmp *disp32(%rip) */
        return slot_holds_hook(info, target + 6 + (intptr_t)rel32_at(target + 2), s);
    if (memcmp(b, ENDBR64, 4) != 0) return 0;
    if (b[4] == 0xFF && b[5] == 0x25) /* endbr64; jmp *disp32(%rip) */
        return slot_holds_hook(info, target + 10 + (intptr_t)rel32_at(target + 6), s);
    if (b[4] == 0xF2 && b[5] == 0xFF && b[6] == 0x25) /* endbr64; bnd jmp *disp32(%rip) */
        return slot_holds_hook(info, target + 11 + (intptr_t)rel32_at(target + 7), s);
    return 0;
}

/* Store `value` in the aligned 8-byte word at `word` of the code: the page
 * made RWX for the store, then set back to R+X. */
NO_INSTRUMENT static enum outcome store_word(uintptr_t word, const unsigned char bytes[8]) {
    long page_size = sysconf(_SC_PAGESIZE);
    if (page_size <= 0) return UNPATCHABLE;
    void *page = (void *)(word & ~((uintptr_t)page_size - 1));
    if (mprotect(page, (size_t)page_size, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return REFUSED;
    uint64_t value;
    memcpy(&value, bytes, sizeof value);
    __atomic_store_n((uint64_t *)word, value, __ATOMIC_SEQ_CST);
    /* Back to what the segment asked for (checked R+X, not W). Should this
     * fail the page stays writable, which is what the program's own JIT or
     * a debugger would leave too; the patch itself is in place. */
    (void)mprotect(page, (size_t)page_size, PROT_READ | PROT_EXEC);
    return PATCHED;
}

/* Rewrite the `len`-byte call at `site` (5 or 6 bytes) with one aligned
 * 8-byte store: a NOP of the same length, or a 2-byte jump over it. A
 * `call rel32` whose first 2 bytes straddle a word (its opcode is the last
 * byte of one) has its 4-byte displacement alone in the next word: that is
 * rewritten instead, to call `a_ret` (a C3 byte of the same segment, 0 if
 * none), so the site costs a call and a return instead of the hook. */
NO_INSTRUMENT static enum outcome rewrite(uintptr_t site, size_t len, uintptr_t a_ret) {
    uintptr_t word = site & ~(uintptr_t)7;
    size_t at = site - word;
    unsigned char bytes[8];
    memcpy(bytes, (const void *)word, sizeof bytes);
    if (at + len <= 8) {
        memcpy(bytes + at, len == 5 ? NOP5 : NOP6, len);
    } else if (at + 2 <= 8) {
        bytes[at] = 0xEB; /* jmp rel8 over the rest of the old call */
        bytes[at + 1] = (unsigned char)(len - 2);
    } else if (len == 5 && a_ret) {
        intptr_t distance = (intptr_t)(a_ret - (site + 5));
        if (distance < INT32_MIN || distance > INT32_MAX) return UNPATCHABLE;
        int32_t rel = (int32_t)distance;
        word = site + 1; /* aligned: at == 7 */
        memcpy(bytes, (const void *)word, sizeof bytes);
        memcpy(bytes, &rel, sizeof rel);
    } else {
        return UNPATCHABLE; /* even a 2-byte jump would straddle two words */
    }
    return store_word(word, bytes);
}

/* A site we rewrote before (a thread that decoded the old bytes called
 * once more): 5 bytes NOP5 ending at `end`, or a jump we wrote. */
NO_INSTRUMENT static int already_patched(uintptr_t end, uintptr_t lowest) {
    unsigned char b[6];
    if (end - 5 >= lowest) {
        memcpy(b, (const void *)(end - 5), 5);
        if (memcmp(b, NOP5, 5) == 0 || (b[0] == 0xEB && b[1] == 3)) return 1;
    }
    if (end - 6 >= lowest) {
        memcpy(b, (const void *)(end - 6), 6);
        if (b[0] == 0xEB && b[1] == 4) return 1;
    }
    return 0;
}

NO_INSTRUMENT static int patch_in_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    search *s = data;
    uintptr_t end = s->return_address;
    /* The call's last byte is just before the return address. */
    const ElfW(Phdr) *text = segment_of(info, end - 1, 1);
    if (!text) return 0; /* another object */
    if (!is_text(text)) {
        s->outcome = UNPATCHABLE;
        return 1;
    }
    uintptr_t lowest = (uintptr_t)info->dlpi_addr + text->p_vaddr;
    if (already_patched(end, lowest)) {
        s->outcome = ALREADY_PATCHED;
        return 1;
    }
    s->outcome = UNPATCHABLE;
    int is_call = end - 5 >= lowest && *(const unsigned char *)(end - 5) == 0xE8;
    uintptr_t target = is_call ? end + (intptr_t)rel32_at(end - 4) : 0;
    if (is_call && segment_of(info, target, 1) == text && *(const unsigned char *)target == 0xC3) {
        s->outcome = ALREADY_PATCHED; /* redirected to a `ret` before */
    } else if (is_call && target_is_hook(info, target, s)) {
        const void *a_ret = memchr((const void *)lowest, 0xC3, text->p_memsz);
        s->outcome = rewrite(end - 5, 5, (uintptr_t)a_ret);
    } else if (end - 6 >= lowest && *(const unsigned char *)(end - 6) == 0xFF &&
               *(const unsigned char *)(end - 5) == 0x15 &&
               slot_holds_hook(info, end + (intptr_t)rel32_at(end - 4), s)) {
        s->outcome = rewrite(end - 6, 6, 0);
    }
    return 1;
}

NO_INSTRUMENT void spn_patch_call_site(const void *return_address, const void *hook,
                                       const void *hook_alias) {
    uintptr_t site = (uintptr_t)return_address;
    if (!spn_patching || memo_has(site) || atomic_load_explicit(&gave_up, memory_order_relaxed))
        return;
    /* Busy: another thread is patching (or this thread is, and a signal
     * handler's silenced call came here): this site is tried at its next
     * call instead of waiting, which could deadlock in the handler. */
    if (pthread_mutex_trylock(&patch_lock) != 0) return;
    search s = {site, (uintptr_t)hook, (uintptr_t)hook_alias, NOT_FOUND};
    int changed = 0;
    if (!memo_has(site) && !atomic_load(&gave_up)) { /* not decided by another thread meanwhile */
        if (refused) s.outcome = UNPATCHABLE;
        else (void)dl_iterate_phdr(patch_in_object, &s);
        if (s.outcome == PATCHED) {
            patched_sites++;
            changed = 1;
        } else if (s.outcome != ALREADY_PATCHED) { /* NOT_FOUND: code no object maps (JIT) */
            if (s.outcome == REFUSED) refused = 1;
            unpatchable_sites++;
            memo_add(site);
            changed = 1;
        }
    }
    pthread_mutex_unlock(&patch_lock);
    if (changed) spn_patch_publish();
}

#else /* no call-site patching on this platform (or under TSan): the silenced hooks stay */

NO_INSTRUMENT void spn_patch_configure(int enabled) {
    (void)enabled;
    spn_patching = 0;
}

NO_INSTRUMENT void spn_patch_call_site(const void *return_address, const void *hook,
                                       const void *hook_alias) {
    (void)return_address;
    (void)hook;
    (void)hook_alias;
}

#endif
