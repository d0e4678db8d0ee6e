/*
 * metadata.c - the metadata model and the collection of a run's metadata.
 *
 * The minimal set is what a profile needs to be interpreted (versions,
 * platform, CPU, thread and rank counts, the timeline origin); "full" adds
 * what identifies the machine and the user's environment. Only the variables
 * FORMAT.md 1.2 lists are ever read: a profile is often shared, and an
 * environment can hold secrets.
 */
#include "profile/metadata.h"

#include <ctype.h>
#include <gnu/libc-version.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "util/alloc.h"

extern char **environ;

static void entry_clear(spi_meta_entry *entry) {
    spi_free(entry->str);
    for (size_t i = 0; i < entry->item_count; i++) spi_free(entry->items[i]);
    spi_free(entry->items);
    entry->str = NULL;
    entry->items = NULL;
    entry->item_count = 0;
}

/* FNV-1a: keys are short text, and only spread over the slots matters. */
static size_t key_hash(const char *key) {
    uint64_t hash = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        hash = (hash ^ *p) * 1099511628211ull;
    return (size_t)hash;
}

/* The slot holding `key`, or the empty slot where it would go. */
static size_t *key_slot(const spi_meta *meta, const char *key) {
    size_t mask = meta->slot_count - 1;
    for (size_t i = key_hash(key) & mask;; i = (i + 1) & mask) {
        size_t *slot = &meta->slots[i];
        if (*slot == 0 || strcmp(meta->entries[*slot - 1].key, key) == 0) return slot;
    }
}

/* Room in the index for one more key: kept under half full, so probes stay
 * short. SP_OK or SP_ERR_OUT_OF_MEMORY (the old index kept). */
static int index_reserve(spi_meta *meta) {
    if (meta->slots && (meta->count + 1) * 2 < meta->slot_count) return SP_OK;
    size_t slot_count = meta->slot_count ? meta->slot_count * 2 : 32;
    while ((meta->count + 1) * 2 >= slot_count) slot_count *= 2;
    size_t *slots = spi_calloc(slot_count, sizeof *slots);
    if (!slots) return SP_ERR_OUT_OF_MEMORY;
    spi_free(meta->slots);
    meta->slots = slots;
    meta->slot_count = slot_count;
    for (size_t i = 0; i < meta->count; i++) *key_slot(meta, meta->entries[i].key) = i + 1;
    return SP_OK;
}

/* The entry for key, created at the end if new (its old value cleared). */
static spi_meta_entry *entry_for(spi_meta *meta, const char *key) {
    if (index_reserve(meta) != SP_OK) return NULL;
    size_t *slot = key_slot(meta, key);
    if (*slot) {
        entry_clear(&meta->entries[*slot - 1]);
        return &meta->entries[*slot - 1];
    }
    if (meta->count == meta->capacity) {
        size_t capacity = meta->capacity ? meta->capacity * 2 : 16;
        spi_meta_entry *grown = spi_reallocarray(meta->entries, capacity, sizeof *grown);
        if (!grown) return NULL;
        meta->entries = grown;
        meta->capacity = capacity;
    }
    char *key_copy = spi_strdup(key);
    if (!key_copy) return NULL;
    spi_meta_entry *entry = &meta->entries[meta->count++];
    *entry = (spi_meta_entry){.key = key_copy};
    *slot = meta->count; /* reserved above: the slot is still the key's */
    return entry;
}

/* Copy a metadata string, cutting it to the format's limit with the marker
 * as the last characters (FORMAT.md 1.2). */
static char *limited_copy(const char *value) {
    size_t len = strlen(value);
    if (len <= SPI_METADATA_STRING_MAX) return spi_strndup(value, len);
    size_t marker_len = strlen(SPI_METADATA_TRUNCATION_MARKER);
    size_t keep = SPI_METADATA_STRING_MAX - marker_len;
    char *copy = spi_malloc(SPI_METADATA_STRING_MAX + 1);
    if (!copy) return NULL;
    memcpy(copy, value, keep);
    memcpy(copy + keep, SPI_METADATA_TRUNCATION_MARKER, marker_len + 1);
    return copy;
}

int spi_meta_set_str(spi_meta *meta, const char *key, const char *value) {
    char *copy = limited_copy(value ? value : "");
    spi_meta_entry *entry = copy ? entry_for(meta, key) : NULL;
    if (!entry) {
        spi_free(copy);
        return SP_ERR_OUT_OF_MEMORY;
    }
    entry->kind = SPI_META_STR;
    entry->str = copy;
    return SP_OK;
}

int spi_meta_set_i64(spi_meta *meta, const char *key, int64_t value) {
    spi_meta_entry *entry = entry_for(meta, key);
    if (!entry) return SP_ERR_OUT_OF_MEMORY;
    entry->kind = SPI_META_I64;
    entry->i64 = value;
    return SP_OK;
}

int spi_meta_set_f64(spi_meta *meta, const char *key, double value) {
    spi_meta_entry *entry = entry_for(meta, key);
    if (!entry) return SP_ERR_OUT_OF_MEMORY;
    entry->kind = SPI_META_F64;
    entry->f64 = value;
    return SP_OK;
}

int spi_meta_set_bool(spi_meta *meta, const char *key, bool value) {
    spi_meta_entry *entry = entry_for(meta, key);
    if (!entry) return SP_ERR_OUT_OF_MEMORY;
    entry->kind = SPI_META_BOOL;
    entry->i64 = value ? 1 : 0;
    return SP_OK;
}

int spi_meta_set_str_array(spi_meta *meta, const char *key,
                           const char *const *items, size_t count) {
    char **copies = spi_calloc(count ? count : 1, sizeof *copies);
    if (!copies) return SP_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < count; i++) {
        copies[i] = limited_copy(items[i]);
        if (!copies[i]) {
            for (size_t j = 0; j < i; j++) spi_free(copies[j]);
            spi_free(copies);
            return SP_ERR_OUT_OF_MEMORY;
        }
    }
    spi_meta_entry *entry = entry_for(meta, key);
    if (!entry) {
        for (size_t i = 0; i < count; i++) spi_free(copies[i]);
        spi_free(copies);
        return SP_ERR_OUT_OF_MEMORY;
    }
    entry->kind = SPI_META_STR_ARRAY;
    entry->items = copies;
    entry->item_count = count;
    return SP_OK;
}

int spi_meta_add_missing(spi_meta *meta, const spi_meta_entry *entry) {
    if (spi_meta_find(meta, entry->key)) return SP_OK;
    switch (entry->kind) {
    case SPI_META_STR: return spi_meta_set_str(meta, entry->key, entry->str);
    case SPI_META_I64: return spi_meta_set_i64(meta, entry->key, entry->i64);
    case SPI_META_F64: return spi_meta_set_f64(meta, entry->key, entry->f64);
    case SPI_META_BOOL: return spi_meta_set_bool(meta, entry->key, entry->i64 != 0);
    case SPI_META_STR_ARRAY:
        return spi_meta_set_str_array(meta, entry->key,
                                      (const char *const *)entry->items, entry->item_count);
    }
    return SP_ERR_INVALID_ARGUMENT;
}

const spi_meta_entry *spi_meta_find(const spi_meta *meta, const char *key) {
    if (!meta->slots) return NULL; /* no key was ever set */
    size_t index = *key_slot(meta, key);
    return index ? &meta->entries[index - 1] : NULL;
}

void spi_meta_free(spi_meta *meta) {
    for (size_t i = 0; i < meta->count; i++) {
        entry_clear(&meta->entries[i]);
        spi_free(meta->entries[i].key);
    }
    spi_free(meta->entries);
    spi_free(meta->slots);
    *meta = (spi_meta){0};
}

/* ---- collection --------------------------------------------------------- */

/* ISO-8601 UTC like Python's datetime.now(timezone.utc).isoformat(). */
static void utc_timestamp(char *buf, size_t buf_bytes) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm utc;
    gmtime_r(&now.tv_sec, &utc);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
    snprintf(buf, buf_bytes, "%s.%06ld+00:00", date, now.tv_nsec / 1000);
}

/* The CPU model from /proc/cpuinfo ("model name"), or the machine name. */
static void chip_information(char *buf, size_t buf_bytes, const char *machine) {
    snprintf(buf, buf_bytes, "%s", machine);
    FILE *cpuinfo = fopen("/proc/cpuinfo", "r");
    if (!cpuinfo) return;
    char line[512];
    while (fgets(line, sizeof line, cpuinfo)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *value = strchr(line, ':');
        if (!value) break;
        value++;
        while (*value == ' ' || *value == '\t') value++;
        size_t len = strcspn(value, "\n");
        snprintf(buf, buf_bytes, "%.*s", (int)len, value);
        break;
    }
    fclose(cpuinfo);
}

static int64_t omp_threads_from_environment(void) {
    const char *value = getenv("OMP_NUM_THREADS");
    if (!value || !*value) return 1;
    long threads = strtol(value, NULL, 10); /* "4,2" (nested) reads as 4 */
    return threads > 0 ? threads : 1;
}

/* The cores of the machines the job ran on: this node's online cores times
 * the number of nodes (the nodes of one job are taken to be alike). Python
 * writes mpi_size * omp_num_threads here, which is the run's threads, not
 * the machine's cores (1 on a 2-core VM for a serial run); that number is
 * still in the file as the product of those two keys. */
static int64_t machine_cores(const spi_meta_context *context) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t nodes = context->num_nodes > 0 ? context->num_nodes : 1;
    return (online > 0 ? (int64_t)online : 1) * nodes;
}

/* The environment variables FORMAT.md 1.2 lists for "full" metadata. */
static const char *const listed_variables[] = {
    "LD_LIBRARY_PATH", "LOADEDMODULES", "MODULEPATH", "MODULESHOME",
    "MODULES_CMD", "MODULES_RUN_QUARANTINE", "PATH", "PYTHON_HOME",
    "PYTHON_INC", "PYTHON_INCLUDE", "PYTHON_LIB", "VIRTUAL_ENV"};

static int collect_environment(spi_meta *meta) {
    int status = SP_OK;
    for (size_t i = 0; i < sizeof listed_variables / sizeof *listed_variables; i++) {
        const char *value = getenv(listed_variables[i]);
        if (value && status == SP_OK) status = spi_meta_set_str(meta, listed_variables[i], value);
    }
    for (char **var = environ; var && *var && status == SP_OK; var++) {
        if (strncmp(*var, "SLURM_", 6) != 0 && strncmp(*var, "SLURMD_", 7) != 0) continue;
        const char *equals = strchr(*var, '=');
        if (!equals || equals[1] == '\0') continue;
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(equals - *var), *var);
        status = spi_meta_set_str(meta, key, equals + 1);
    }
    const char *modules = getenv("LOADEDMODULES");
    if (status == SP_OK) {
        /* Split on ':' into a string array (empty list when unset). */
        char *copy = spi_strdup(modules ? modules : "");
        const char **items = spi_calloc(copy ? strlen(copy) + 1 : 1, sizeof *items);
        if (!copy || !items) {
            status = SP_ERR_OUT_OF_MEMORY;
        } else {
            size_t count = 0;
            for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok;
                 tok = strtok_r(NULL, ":", &save))
                items[count++] = tok;
            status = spi_meta_set_str_array(meta, "modules", items, count);
        }
        spi_free(items);
        spi_free(copy);
    }
    return status;
}

static int collect_full(spi_meta *meta, const struct utsname *uts) {
    char buf[4096];
    int status = SP_OK;
    struct passwd *pw = getpwuid(geteuid());
    if (pw && pw->pw_name) status = spi_meta_set_str(meta, "user", pw->pw_name);
    if (status == SP_OK && gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        status = spi_meta_set_str(meta, "hostname", buf);
    }
    if (status == SP_OK) {
        snprintf(buf, sizeof buf, "%s %s %s %s %s", uts->sysname, uts->nodename,
                 uts->release, uts->version, uts->machine);
        status = spi_meta_set_str(meta, "uname", buf);
    }
    if (status == SP_OK && getcwd(buf, sizeof buf))
        status = spi_meta_set_str(meta, "working_directory", buf);
    if (status == SP_OK) status = collect_environment(meta);
    return status;
}

int spi_meta_collect(spi_meta *meta, const spi_meta_context *context) {
    char buf[1024];
    struct utsname uts;
    if (uname(&uts) != 0) memset(&uts, 0, sizeof uts);
    int64_t omp_threads = omp_threads_from_environment();

    int status = SP_OK;
    utc_timestamp(buf, sizeof buf);
    status = spi_meta_set_str(meta, "timestamp", buf);
    if (status == SP_OK) {
        /* The shape of Python's platform.platform() on Linux. */
        snprintf(buf, sizeof buf, "%s-%s-%s-with-glibc%s", uts.sysname, uts.release,
                 uts.machine, gnu_get_libc_version());
        status = spi_meta_set_str(meta, "platform", buf);
    }
    if (status == SP_OK) {
        chip_information(buf, sizeof buf, uts.machine);
        status = spi_meta_set_str(meta, "chip_information", buf);
    }
    if (status == SP_OK) status = spi_meta_set_str(meta, "scope_profiler_version", SCOPE_PROFILER_VERSION);
    if (status == SP_OK) status = spi_meta_set_str(meta, "source", "native");
    if (status == SP_OK) status = spi_meta_set_str(meta, "source_language",
                                                        context->source_language
                                                            ? context->source_language
                                                            : "c");
    if (status == SP_OK && context->clock) status = spi_meta_set_str(meta, "clock", context->clock);
    if (status == SP_OK && context->mode)
        status = spi_meta_set_str(meta, "profile_mode", context->mode);
    if (status == SP_OK) status = spi_meta_set_i64(meta, "omp_num_threads", omp_threads);
    if (status == SP_OK) status = spi_meta_set_i64(meta, "mpi_size", context->mpi_size);
    if (status == SP_OK) status = spi_meta_set_i64(meta, "total_cores", machine_cores(context));
    if (status == SP_OK) status = spi_meta_set_i64(meta, "num_nodes", context->num_nodes);
    if (status == SP_OK && context->label && *context->label)
        status = spi_meta_set_str(meta, "label", context->label);
    if (status == SP_OK) status = spi_meta_set_i64(meta, "start_time_ns", context->start_time_ns);
    if (status == SP_OK) status = spi_meta_set_i64(meta, "finalize_time_ns", context->finalize_time_ns);
    if (status == SP_OK && context->detail == SP_METADATA_FULL) status = collect_full(meta, &uts);
    return status;
}
