/*
 * replay_main.c - a fuzz harness without libFuzzer: feeds every file named
 * on the command line (a directory: every file in it, sorted) through
 * LLVMFuzzerTestOneInput, as the fuzzer would. ctest (label fuzz) runs it
 * over the seeds and the kept crashers of tests/fuzz/regressions/<target>/
 * in the normal and the sanitizer builds, so a fixed crash stays fixed.
 *
 * A crash, an abort or a sanitizer report ends the program: the test
 * fails, and the last "replay:" line on stderr names the input. Exits 1
 * when no input was found at all (a replay of nothing proves nothing).
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return -1;
    }
    size_t size = 0, capacity = 1 << 16, got;
    uint8_t *data = malloc(capacity);
    while (data && (got = fread(data + size, 1, capacity - size, file)) > 0) {
        size += got;
        if (size < capacity) continue;
        uint8_t *grown = realloc(data, capacity *= 2);
        if (!grown) free(data);
        data = grown;
    }
    fclose(file);
    if (!data) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return -1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, size);
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 1;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files directly in dir (no recursion, dot files skipped), sorted. */
static int replay_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay: cannot open directory %s\n", dir);
        return -1;
    }
    char **names = NULL;
    size_t count = 0;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        char **grown = realloc(names, (count + 1) * sizeof *names);
        if (!grown) break;
        names = grown;
        size_t len = strlen(dir) + strlen(entry->d_name) + 2;
        if ((names[count] = malloc(len)) == NULL) break;
        snprintf(names[count++], len, "%s/%s", dir, entry->d_name);
    }
    closedir(d);
    if (count) qsort(names, count, sizeof *names, by_name);
    int replayed = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            int one = replay_file(names[i]);
            if (one < 0) replayed = -1;
            else if (replayed >= 0) replayed += one;
        }
        free(names[i]);
    }
    free(names);
    return replayed;
}

int main(int argc, char **argv) {
    int total = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        int got = stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? replay_dir(argv[i])
                                                                 : replay_file(argv[i]);
        if (got < 0) return 1;
        total += got;
    }
    if (total == 0) {
        fprintf(stderr, "replay: no input found\n");
        return 1;
    }
    fprintf(stderr, "replay: %d input(s), no crash\n", total);
    return 0;
}
