/*
 * recorder_state.c - the definitions of the recorder's shared state
 * (recorder_state.h): the thread-local hot block and the live session.
 * Nothing else: every file of the recorder stands on this one.
 */
#include "record/recorder_state.h"

SPI_TLS spi_hot spi_tls = {0};

_Atomic uint64_t spi_session_generation = 0; /* 0: not recording */
pthread_mutex_t spi_session_lock = PTHREAD_MUTEX_INITIALIZER;
spi_session spi_live_session;                     /* under spi_session_lock */
atomic_size_t spi_buffer_bytes = 0;
/* The current session's thread hooks (recorder.h); NULL = none. */
_Atomic(const spi_thread_hooks *) spi_session_hooks = NULL;
/* The current session's mode and clock, read by threads attaching to it. */
atomic_bool spi_session_aggregate = false;
atomic_bool spi_session_tsc = false;
_Atomic int64_t spi_session_anchor_interval = 0; /* ticks */
atomic_uint spi_unmatched_reports = 0;
_Atomic uint64_t spi_omp_fork_path = 0;
