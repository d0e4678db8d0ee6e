/*
 * user_metadata.h - metadata a program or a tool adds to the file
 * (sp_set_metadata, scope_profiler.h), kept until the next finalize
 * writes it.
 *
 * Thread-safety: sp_set_metadata from any thread (a mutex);
 * spi_user_metadata_apply from sp_finalize.
 */
#ifndef SPI_USER_METADATA_H
#define SPI_USER_METADATA_H

#include "profile/metadata.h"

/* Add every pair set since the last finalize to `meta`, except keys it
 * already has (the library's own keys win), and forget them. Returns SP_OK
 * or SP_ERR_OUT_OF_MEMORY. */
int spi_user_metadata_apply(spi_meta *meta);

#endif
