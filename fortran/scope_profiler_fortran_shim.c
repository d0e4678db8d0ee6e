/*
 * scope_profiler_fortran_shim.c - the one piece of C in the Fortran library.
 *
 * sp_setup_with_options takes a struct sp_options. Mirroring that struct as a
 * bind(C) derived type would tie the Fortran module to its exact layout: a
 * field appended in a later version would make sp_options_init write past
 * the end of the Fortran copy. Here the struct is filled by C, from the
 * header itself, so the module only ever sees sized strings and an int.
 *
 * Strings arrive as Fortran passes them (characters + length, no NUL). They
 * are copied to NUL-terminated buffers because sp_options takes C strings;
 * this happens once per sp_setup, never on the recording path. A length of
 * 0 means "not given" (NULL: the environment default applies).
 */
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"
#ifdef SCOPE_PROFILER_HAVE_MPI
#include "scope_profiler_mpi.h"
#endif

/* Internal to the Fortran library: the spf_ prefix marks it as not public
 * API (only the module calls it), hidden when built shared. */
int spf_setup(const char *file_path, size_t file_path_len, const char *label,
              size_t label_len, int mode);
int spf_setup_mpi(int comm, const char *file_path, size_t file_path_len, const char *label,
                  size_t label_len, int mode);

static char *copy_sized(const char *text, size_t len) {
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, text, len);
    copy[len] = '\0';
    return copy;
}

/* Fill options from the sized strings and run setup: with MPI on the given
 * Fortran communicator handle when use_comm, else the default job. */
static int setup_from_fortran(int use_comm, int comm, const char *file_path,
                              size_t file_path_len, const char *label, size_t label_len,
                              int mode) {
    sp_options options;
    sp_options_init(&options);
    /* the module's SP_MODE_* are sp_mode's values; setup rejects others */
    options.mode = (sp_mode)mode;
    char *path_copy = NULL;
    char *label_copy = NULL;
    int status = SP_ERR_OUT_OF_MEMORY;
    if (file_path_len && !(path_copy = copy_sized(file_path, file_path_len))) goto done;
    if (label_len && !(label_copy = copy_sized(label, label_len))) goto done;
    options.file_path = path_copy;
    options.label = label_copy;
    /* A program set up through the Fortran module is a Fortran program. */
    options.source_language = "fortran";
    /* sp_options documents both strings as copied, so they can go now. */
#ifdef SCOPE_PROFILER_HAVE_MPI
    status = use_comm ? sp_setup_mpi_f((MPI_Fint)comm, &options) : sp_setup_with_options(&options);
#else
    (void)comm;
    status = use_comm ? SP_ERR_UNSUPPORTED : sp_setup_with_options(&options);
#endif
done:
    free(label_copy);
    free(path_copy);
    return status;
}

int spf_setup(const char *file_path, size_t file_path_len, const char *label,
              size_t label_len, int mode) {
    return setup_from_fortran(0, 0, file_path, file_path_len, label, label_len, mode);
}

int spf_setup_mpi(int comm, const char *file_path, size_t file_path_len, const char *label,
                  size_t label_len, int mode) {
    return setup_from_fortran(1, comm, file_path, file_path_len, label, label_len, mode);
}
