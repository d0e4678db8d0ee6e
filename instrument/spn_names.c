/*
 * spn_names.c - raw symbols -> the names a user wrote.
 *
 * C++: the demangler is the C++ runtime's own __cxa_demangle, looked up at
 * run time (dlsym): a C++ program has libstdc++ loaded, a C or Fortran
 * program has no mangled names, so the library never links the C++
 * runtime. Parameter lists are kept ("solve(int)"): overloads stay apart.
 *
 * gfortran (its ABI, stable since gfortran 4): a module procedure is the
 * symbol `__<module>_MOD_<procedure>`, the main program `MAIN__`, an
 * internal procedure a local symbol `<procedure>.<n>`. GCC's clones of a
 * C function (`f.constprop.0`, `f.isra.0`, `f.part.0`, `f.cold`) carry a
 * suffix after a dot too; no C or Fortran identifier has a dot, so
 * everything from the first dot on is cut.
 */
#define _GNU_SOURCE
#include "spn_names.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_INSTRUMENT __attribute__((no_instrument_function))

typedef char *(*demangle_fn)(const char *mangled, char *buffer, size_t *length, int *status);

NO_INSTRUMENT static size_t copy_name(char *out, size_t out_len, const char *text, size_t len) {
    if (out_len == 0) return 0;
    if (len >= out_len) len = out_len - 1;
    memcpy(out, text, len);
    out[len] = '\0';
    return len;
}

NO_INSTRUMENT static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

NO_INSTRUMENT static size_t demangled(const char *symbol, char *out, size_t out_len) {
    static demangle_fn demangle = NULL;
    static int looked = 0;
    if (!looked) {
        looked = 1;
        demangle = (demangle_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    }
    if (!demangle) return 0;
    int status = -1;
    char *text = demangle(symbol, NULL, NULL, &status);
    if (!text || status != 0) {
        free(text);
        return 0;
    }
    size_t len = copy_name(out, out_len, text, strlen(text));
    free(text);
    return len;
}

NO_INSTRUMENT size_t spn_readable_name(const spn_symbol *symbol, char *out, size_t out_len) {
    const char *raw = symbol->symbol;
    if (!raw) {
        char text[512];
        snprintf(text, sizeof text, "0x%llx@%s", (unsigned long long)symbol->offset,
                 *symbol->object ? base_name(symbol->object) : "unknown");
        return copy_name(out, out_len, text, strlen(text));
    }
    if (strncmp(raw, "_Z", 2) == 0) {
        size_t len = demangled(raw, out, out_len);
        if (len) return len;
    }
    if (strcmp(raw, "MAIN__") == 0) return copy_name(out, out_len, "main program", 12);
    size_t len = strcspn(raw, ".");
    if (len == 0) len = strlen(raw); /* a name that starts with a dot stays whole */
    const char *mod = strstr(raw, "_MOD_");
    if (raw[0] == '_' && raw[1] == '_' && mod && mod > raw + 2 && mod < raw + len) {
        char text[1024];
        snprintf(text, sizeof text, "%.*s::%.*s", (int)(mod - raw - 2), raw + 2,
                 (int)(raw + len - mod - 5), mod + 5);
        return copy_name(out, out_len, text, strlen(text));
    }
    return copy_name(out, out_len, raw, len);
}
