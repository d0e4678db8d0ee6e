/*
 * run_threads.c - what the in-memory (run.c) and the streamed (run_stream.c)
 * collection of a session share, so that both give the same ids, parents
 * and thread table: each thread's first call id, a call's parent id (its
 * recorded parent, or a worker root's OpenMP fork parent), the thread table.
 */
#include "record/run_threads.h"

#include "util/alloc.h"

int64_t *spi_run_thread_bases(const spi_session *session) {
    int64_t *bases = spi_calloc((size_t)session->thread_count + 1, sizeof *bases);
    size_t index = 0;
    int64_t next = 0;
    for (const spi_thread *t = session->threads; bases && t; t = t->next) {
        bases[index++] = next;
        next += t->next_sequence;
    }
    return bases;
}

int64_t spi_run_parent_id(const spi_thread *t, const spi_event *e,
                          const spi_enclosing_call *parent, int64_t base,
                          const spi_omp_hosts *hosts) {
    if (parent) return base + parent->sequence;
    if (!t->omp_worker) return -1;
    return spi_omp_host_parent(hosts, e->start_ns, e->start_ns + e->duration_ns,
                               base + spi_event_sequence(e));
}

int spi_run_walk_order(spi_session *session, spi_thread ***threads, size_t **walk) {
    size_t count = (size_t)session->thread_count;
    *threads = spi_malloc((count ? count : 1) * sizeof **threads);
    *walk = spi_malloc((count ? count : 1) * sizeof **walk);
    if (!*threads || !*walk) {
        spi_free(*threads);
        spi_free(*walk);
        *threads = NULL;
        *walk = NULL;
        return SP_ERR_OUT_OF_MEMORY;
    }
    size_t index = 0, next = 0;
    for (spi_thread *t = session->threads; t; t = t->next) (*threads)[index++] = t;
    for (int workers = 0; workers < 2; workers++)
        for (size_t i = 0; i < index; i++)
            if ((*threads)[i]->omp_worker == (workers == 1)) (*walk)[next++] = i;
    return SP_OK;
}

bool spi_run_has_omp_workers(const spi_session *session) {
    for (const spi_thread *t = session->threads; t; t = t->next)
        if (t->omp_worker && (t->head || t->spilled_count)) return true;
    return false;
}

int spi_run_fill_threads(const spi_session *session, uint32_t rank, spi_profile *profile) {
    profile->threads = spi_calloc((size_t)session->thread_count, sizeof *profile->threads);
    if (!profile->threads) return SP_ERR_OUT_OF_MEMORY;
    for (const spi_thread *t = session->threads; t; t = t->next) {
        spi_thread_row *row = &profile->threads[profile->thread_count++];
        *row = (spi_thread_row){.rank = rank, .index = t->index, .ident = t->ident,
                                .native_id = t->native_id, .daemon = 0,
                                .start_ns = t->start_ns, .end_ns = t->alive ? -1 : t->end_ns,
                                .cpu_ns = t->cpu_ns, .name = spi_strdup(t->name)};
        if (!row->name) return SP_ERR_OUT_OF_MEMORY;
    }
    return SP_OK;
}
