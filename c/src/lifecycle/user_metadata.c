/*
 * user_metadata.c - sp_set_metadata (scope_profiler.h): string pairs kept
 * in a small list until sp_finalize adds them to the file's /metadata.
 *
 * The pairs are copied into a spi_meta of their own (its setters already
 * replace a key set twice and cut a string that is too long, FORMAT.md
 * 2.3), so memory grows with what the caller asked to keep. They are not
 * checked against the library's keys when set (those are collected only
 * at finalize): there, a pair whose key the library wrote is left out.
 */
#include "lifecycle/user_metadata.h"

#include <pthread.h>

#include "util/error.h"
#include "scope_profiler.h"

static pthread_mutex_t pairs_lock = PTHREAD_MUTEX_INITIALIZER;
static spi_meta pairs; /* under pairs_lock */

SP_API int sp_set_metadata(const char *key, const char *value) {
    if (!key || !*key || !value) {
        spi_status_remember(SP_ERR_INVALID_ARGUMENT);
        return SP_ERR_INVALID_ARGUMENT;
    }
    pthread_mutex_lock(&pairs_lock);
    int status = spi_meta_set_str(&pairs, key, value);
    pthread_mutex_unlock(&pairs_lock);
    if (status != SP_OK) spi_status_remember(status);
    return status;
}

int spi_user_metadata_apply(spi_meta *meta) {
    pthread_mutex_lock(&pairs_lock);
    int status = SP_OK;
    for (size_t i = 0; i < pairs.count && status == SP_OK; i++)
        status = spi_meta_add_missing(meta, &pairs.entries[i]);
    spi_meta_free(&pairs);
    pthread_mutex_unlock(&pairs_lock);
    return status;
}
