/*
 * spn_symbols.c - code address -> symbol name, from the ELF symbol tables.
 *
 * Why our own reader and not dladdr or elfutils: dladdr sees only the
 * dynamic symbol table (.dynsym), so static functions, Fortran internal
 * procedures and every function of an executable built without
 * -rdynamic come back unnamed. elfutils (libdw/libelf) reads .symtab, but
 * it is one more run-time dependency for every instrumented program and is
 * not installed everywhere; what we need of it is small: the section
 * headers, one symbol table and its string table of a 64-bit ELF file of
 * this machine's byte order. So: dl_iterate_phdr says which loaded object
 * (executable, shared library, dlopen'ed library, PIE or not) holds the
 * address and at which load bias; that object's file is mapped read-only
 * once and its function symbols (.symtab, or .dynsym when stripped) are
 * indexed by address; dladdr remains the fallback for what the tables do
 * not cover (another ELF class, a file that cannot be opened).
 *
 * Objects are keyed by (path, load bias): a library dlclose'd and loaded
 * again elsewhere gets a fresh entry. Memory grows with the objects the
 * program's functions live in, never with calls.
 */
#define _GNU_SOURCE
#include "spn_symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))

/* One function symbol: its address range inside the object and its name. */
typedef struct func_symbol {
    uintptr_t value;
    uintptr_t size;
    const char *name;
} func_symbol;

/* One loaded object whose symbols were indexed. */
typedef struct object_symbols {
    struct object_symbols *next;
    char *path;
    uintptr_t bias;
    void *map;
    size_t map_len;
    func_symbol *funcs; /* sorted by value */
    size_t func_count;
} object_symbols;

static object_symbols *objects = NULL;

/* What dl_iterate_phdr found for one address. */
typedef struct object_match {
    uintptr_t address;
    int found;
    uintptr_t bias;
    char path[4096];
} object_match;

NO_INSTRUMENT static int match_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    object_match *match = data;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr;
        if (match->address < start || match->address - start >= ph->p_memsz) continue;
        match->found = 1;
        match->bias = info->dlpi_addr;
        /* The executable has no name here: its file is /proc/self/exe. */
        const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
        size_t len = strlen(name);
        if (len >= sizeof match->path) len = sizeof match->path - 1;
        memcpy(match->path, name, len);
        match->path[len] = '\0';
        return 1;
    }
    return 0;
}

NO_INSTRUMENT static int by_value(const void *a, const void *b) {
    const func_symbol *x = a, *y = b;
    return (x->value > y->value) - (x->value < y->value);
}

/* Whether [offset, offset + len) lies inside a mapping of `size` bytes. */
NO_INSTRUMENT static int in_file(uint64_t offset, uint64_t len, size_t size) {
    return offset <= size && len <= size - offset;
}

/* Index the function symbols of one symbol table section (`symtab`, its
 * string table at `strtab`). Returns the number added to *funcs. */
NO_INSTRUMENT static size_t index_table(const unsigned char *base, size_t size,
                                        const Elf64_Shdr *symtab, const Elf64_Shdr *strtab,
                                        func_symbol *funcs) {
    if (symtab->sh_entsize != sizeof(Elf64_Sym)) return 0;
    if (!in_file(symtab->sh_offset, symtab->sh_size, size)) return 0;
    if (!in_file(strtab->sh_offset, strtab->sh_size, size) || strtab->sh_size == 0) return 0;
    const Elf64_Sym *syms = (const Elf64_Sym *)(base + symtab->sh_offset);
    const char *strings = (const char *)(base + strtab->sh_offset);
    size_t count = symtab->sh_size / sizeof(Elf64_Sym), added = 0;
    for (size_t i = 0; i < count; i++) {
        unsigned type = ELF64_ST_TYPE(syms[i].st_info);
        if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
        if (syms[i].st_shndx == SHN_UNDEF || syms[i].st_value == 0) continue;
        if (syms[i].st_name >= strtab->sh_size) continue;
        const char *name = strings + syms[i].st_name;
        /* A name must end inside its string table. */
        if (!memchr(name, '\0', strtab->sh_size - syms[i].st_name) || !*name) continue;
        funcs[added].value = (uintptr_t)syms[i].st_value;
        funcs[added].size = (uintptr_t)syms[i].st_size;
        funcs[added].name = name;
        added++;
    }
    return added;
}

/* Map `path` and index its function symbols; NULL when it is not a 64-bit
 * ELF file of this byte order or cannot be read (the dladdr fallback then
 * answers). */
NO_INSTRUMENT static object_symbols *load_object(const char *path, uintptr_t bias) {
    object_symbols *object = calloc(1, sizeof *object);
    if (!object) return NULL;
    object->path = strdup(path);
    object->bias = bias;
    if (!object->path) goto fail;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) goto fail;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        goto fail;
    }
    object->map_len = (size_t)st.st_size;
    object->map = mmap(NULL, object->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (object->map == MAP_FAILED) {
        object->map = NULL;
        goto fail;
    }
    const unsigned char *base = object->map;
    const Elf64_Ehdr *eh = object->map;
    union { uint16_t word; unsigned char byte; } order = {1};
    unsigned char native = order.byte ? ELFDATA2LSB : ELFDATA2MSB;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_ident[EI_DATA] != native || eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), object->map_len))
        goto fail;
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(base + eh->e_shoff);
    /* .symtab when present (it has the static functions), else .dynsym. */
    const Elf64_Shdr *chosen = NULL;
    for (int pass = 0; pass < 2 && !chosen; pass++)
        for (Elf64_Half i = 0; i < eh->e_shnum; i++)
            if (sections[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) &&
                sections[i].sh_link < eh->e_shnum) {
                chosen = &sections[i];
                break;
            }
    if (!chosen || chosen->sh_entsize != sizeof(Elf64_Sym)) goto fail;
    size_t most = chosen->sh_size / sizeof(Elf64_Sym);
    object->funcs = malloc((most ? most : 1) * sizeof *object->funcs);
    if (!object->funcs) goto fail;
    object->func_count = index_table(base, object->map_len, chosen, &sections[chosen->sh_link],
                                     object->funcs);
    qsort(object->funcs, object->func_count, sizeof *object->funcs, by_value);
    return object;
fail:
    /* Keep the entry (no symbols) so that the file is not opened again. */
    if (object->map) munmap(object->map, object->map_len);
    object->map = NULL;
    free(object->funcs);
    object->funcs = NULL;
    object->func_count = 0;
    if (!object->path) {
        free(object);
        return NULL;
    }
    return object;
}

NO_INSTRUMENT static object_symbols *object_for(const char *path, uintptr_t bias) {
    for (object_symbols *o = objects; o; o = o->next)
        if (o->bias == bias && strcmp(o->path, path) == 0) return o;
    object_symbols *o = load_object(path, bias);
    if (o) {
        o->next = objects;
        objects = o;
    }
    return o;
}

/* The symbol covering `offset`: the last one starting at or below it, if
 * its size reaches the offset (size 0: assembler symbols, taken as
 * reaching up to the next symbol). */
NO_INSTRUMENT static const char *symbol_at(const object_symbols *o, uintptr_t offset) {
    size_t low = 0, high = o->func_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (o->funcs[mid].value <= offset) low = mid + 1;
        else high = mid;
    }
    if (low == 0) return NULL;
    const func_symbol *f = &o->funcs[low - 1];
    if (f->size != 0 && offset - f->value >= f->size) return NULL;
    return f->name;
}

NO_INSTRUMENT void spn_symbols_lookup(const void *address, spn_symbol *out) {
    out->symbol = NULL;
    out->object = "";
    out->offset = (uintptr_t)address;
    object_match match;
    match.address = (uintptr_t)address;
    match.found = 0;
    dl_iterate_phdr(match_object, &match);
    if (!match.found) return;
    out->offset = match.address - match.bias;
    object_symbols *o = object_for(match.path, match.bias);
    if (!o) return;
    out->object = o->path;
    out->symbol = symbol_at(o, out->offset);
    if (!out->symbol) {
        /* Exported symbols of a file we could not index. The name stays
         * valid while the object is loaded; it is copied by the caller. */
        Dl_info info;
        if (dladdr(address, &info) && info.dli_sname && info.dli_saddr == address)
            out->symbol = info.dli_sname;
    }
}

NO_INSTRUMENT void spn_symbols_release(void) {
    while (objects) {
        object_symbols *o = objects;
        objects = o->next;
        if (o->map) munmap(o->map, o->map_len);
        free(o->funcs);
        free(o->path);
        free(o);
    }
}
