/*
 * status.c - the status table's names and messages, the per-thread last
 * error, and spi_error. Everything is generated from SP_STATUS_TABLE in the
 * public header, so a new code needs one line there and nothing here.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "util/diag.h"
#include "util/error.h"

static _Thread_local int last_error = SP_OK;
/* Per thread: diagnostics withheld (a caller that reports errors itself,
 * such as the Fortran module with stat= present) and the last message,
 * kept even when withheld so the caller can show it. */
static _Thread_local bool thread_silenced = false;
static _Thread_local char last_message[1024];


#define SP_STATUS_MESSAGE_(name, value, message) [value] = message,
static const char *const status_messages[] = {SP_STATUS_TABLE(SP_STATUS_MESSAGE_)};
#undef SP_STATUS_MESSAGE_
#define SP_STATUS_NAME_(name, value, message) [value] = #name,
static const char *const status_names[] = {SP_STATUS_TABLE(SP_STATUS_NAME_)};
#undef SP_STATUS_NAME_

static int status_known(int status) {
    return status >= 0 && status < SP_STATUS_COUNT_ && status_messages[status];
}

SP_API const char *sp_error_string(int status) {
    return status_known(status) ? status_messages[status] : "unknown status";
}

SP_API const char *sp_status_name(int status) {
    return status_known(status) ? status_names[status] : "SP_UNKNOWN";
}

SP_API int sp_last_error(void) { return last_error; }

SP_API void sp_clear_error(void) {
    last_error = SP_OK;
    last_message[0] = '\0';
}

void spi_status_remember(int status) {
    if (status != SP_OK) last_error = status;
}

void spi_error_clear(spi_error *err) {
    if (!err) return;
    err->status = SP_OK;
    err->message[0] = '\0';
}

int spi_error_set(spi_error *err, int status, const char *format, ...) {
    if (!err || err->status != SP_OK) return status;
    err->status = status;
    va_list args;
    va_start(args, format);
    vsnprintf(err->message, sizeof err->message, format, args);
    va_end(args);
    return status;
}

/* ---- diagnostics ------------------------------------------------------- */

static atomic_bool quiet_flag = false;

SP_API void sp_set_thread_diagnostics(int enabled) { thread_silenced = !enabled; }

SP_API const char *sp_last_error_message(void) { return last_message; }

void spi_diag_set_quiet(bool quiet) { atomic_store(&quiet_flag, quiet); }

static atomic_int diag_rank = -1;
void spi_diag_set_rank(int rank) { atomic_store(&diag_rank, rank); }

bool spi_diag_is_quiet(void) { return atomic_load(&quiet_flag); }

void spi_diag(const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(last_message, sizeof last_message, format, args);
    va_end(args);
    if (thread_silenced || atomic_load_explicit(&quiet_flag, memory_order_relaxed)) return;
    /* One fprintf per line so lines of concurrent threads do not interleave. */
    int rank = atomic_load_explicit(&diag_rank, memory_order_relaxed);
    if (rank > 0) fprintf(stderr, "scope-profiler: [rank %d] %s\n", rank, last_message);
    else fprintf(stderr, "scope-profiler: %s\n", last_message);
}
