/*
 * path_pool_test.c - the summary's fold of many ranks' call paths
 * (profile/path_pool.h) on known calls: two ranks whose paths name their
 * regions through different name tables, two threads on one rank, a
 * recursion collapsed into its parent, the threads view's counts. The
 * pooled entries must hold the exact sums, min/max, the variance of all
 * the calls together, the first start / last end and the per-rank spread;
 * a damaged rank leaves the pool as it was; a thousand more ranks of the
 * same paths add no entry and no memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "profile/path_pool.h"
#include "util/error.h"

#include "unit_check.h"

/* A path from its calls' durations: the fields a rank's fold gives. */
static spi_call_path path_of(uint32_t name_offset, int64_t parent, int64_t thread,
                             const int64_t *durations, size_t n, int64_t exclusive,
                             uint64_t recursions, int64_t start, int64_t end) {
    spi_call_path p = {.region = name_offset, .parent = parent, .thread = thread, .count = n,
                       .recursions = recursions, .minimum = INT64_MAX, .maximum = INT64_MIN,
                       .exclusive = exclusive, .start_minimum = start, .end_maximum = end};
    for (size_t i = 0; i < n; i++) {
        p.total += durations[i];
        if (durations[i] < p.minimum) p.minimum = durations[i];
        if (durations[i] > p.maximum) p.maximum = durations[i];
    }
    double mean = (double)p.total / (double)n;
    for (size_t i = 0; i < n; i++) p.m2 += ((double)durations[i] - mean) * ((double)durations[i] - mean);
    return p;
}

static const spi_call_path *entry_named(const spi_path_pool *pool, const char *name) {
    for (size_t i = 0; i < pool->count; i++)
        if (strcmp(pool->names[pool->paths[i].region], name) == 0) return &pool->paths[i];
    return NULL;
}

static bool near(double got, double want) { return fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want)); }

int main(void) {
    /* rank 0: names "main", "solve", "io" (io unused); main on two threads */
    static const char names0[] = "main\0solve\0io";
    const int64_t main_a[] = {40, 60}, solve_a[] = {10, 20, 30}, main_b[] = {70};
    spi_call_path rank0[] = {
        path_of(0, -1, 0, main_a, 2, 30, 0, 10, 300),
        path_of(5, 0, 0, solve_a, 3, 60, 0, 20, 250),
        path_of(0, -1, 1, main_b, 1, 70, 0, 5, 400),
    };
    rank0[1].threads = 2; /* the threads view's counts add up over ranks */
    rank0[1].other_threads = 7;
    /* rank 1: the names in another order; solve recurses once */
    static const char names1[] = "solve\0main";
    const int64_t main_c[] = {90}, solve_c[] = {15, 25}, solve_d[] = {5};
    spi_call_path rank1[] = {
        path_of(6, -1, 0, main_c, 1, 50, 0, 1, 500),
        path_of(0, 0, 0, solve_c, 2, 40, 0, 30, 480),
        path_of(0, 1, 0, solve_d, 1, 5, 1, 35, 36),
    };
    spi_path_pool pool;
    spi_path_pool_init(&pool);
    CHECK(spi_path_pool_add_rank(&pool, 0, rank0, 3, names0, sizeof names0) == SP_OK, "rank 0");
    CHECK(spi_path_pool_add_rank(&pool, 1, rank1, 3, names1, sizeof names1) == SP_OK, "rank 1");
    CHECK(pool.count == 2, "%zu entries, want 2 (main, solve)", pool.count);
    CHECK(pool.name_count == 2, "%zu names, want 2 (io is unused)", pool.name_count);

    const spi_call_path *m = entry_named(&pool, "main"), *s = entry_named(&pool, "solve");
    CHECK(m && s, "main and solve pooled");
    if (!m || !s) return 1;
    const spi_path_ranks *mr = &pool.ranks[m - pool.paths], *sr = &pool.ranks[s - pool.paths];
    /* main: calls 40, 60, 70, 90 */
    CHECK(m->parent == -1 && m->count == 4 && m->total == 260 && m->exclusive == 150,
          "main count %llu total %lld excl %lld", (unsigned long long)m->count,
          (long long)m->total, (long long)m->exclusive);
    CHECK(m->minimum == 40 && m->maximum == 90, "main min %lld max %lld",
          (long long)m->minimum, (long long)m->maximum);
    CHECK(near(m->m2, 1300.0), "main m2 %.17g, want 1300", m->m2);
    CHECK(m->start_minimum == 1 && m->end_maximum == 500, "main start %lld end %lld",
          (long long)m->start_minimum, (long long)m->end_maximum);
    CHECK(mr->ranks == 2 && !mr->recursive, "main ranks %u", mr->ranks);
    /* per rank: rank 0 ran main for 170 (two threads), rank 1 for 90 */
    CHECK(mr->inclusive.minimum == 90 && mr->inclusive.maximum == 170 &&
              mr->inclusive.sum == 260.0 && mr->inclusive.positive_ranks == 2,
          "main spread min %lld max %lld sum %g", (long long)mr->inclusive.minimum,
          (long long)mr->inclusive.maximum, mr->inclusive.sum);
    CHECK(mr->exclusive.minimum == 50 && mr->exclusive.maximum == 100 && mr->exclusive.sum == 150.0,
          "main exclusive spread min %lld max %lld", (long long)mr->exclusive.minimum,
          (long long)mr->exclusive.maximum);
    CHECK(near(spi_rank_spread_imbalance(&mr->inclusive), 170.0 / 130.0), "main imbalance %g",
          spi_rank_spread_imbalance(&mr->inclusive));
    /* solve under main: 10, 20, 30 | 15, 25 and the recursive 5 folded in */
    CHECK(s->parent == m - pool.paths, "solve's parent is main");
    CHECK(s->count == 6 && s->total == 105 && s->exclusive == 105 && s->recursions == 1,
          "solve count %llu total %lld excl %lld rec %llu", (unsigned long long)s->count,
          (long long)s->total, (long long)s->exclusive, (unsigned long long)s->recursions);
    CHECK(s->minimum == 5 && s->maximum == 30, "solve min/max");
    CHECK(s->threads == 2 && s->other_threads == 7, "solve threads %u other %lld", s->threads,
          (long long)s->other_threads);
    CHECK(near(s->m2, 437.5), "solve m2 %.17g, want 437.5", s->m2);
    CHECK(sr->recursive && sr->ranks == 2, "solve recursive %d ranks %u", sr->recursive, sr->ranks);
    CHECK(sr->inclusive.minimum == 45 && sr->inclusive.maximum == 60, "solve spread %lld..%lld",
          (long long)sr->inclusive.minimum, (long long)sr->inclusive.maximum);

    /* a damaged rank: a name offset past the names, a parent after the path */
    spi_call_path bad[] = {path_of(0, -1, 0, main_c, 1, 90, 0, 1, 2),
                           path_of(99, 0, 0, main_c, 1, 90, 0, 1, 2)};
    CHECK(spi_path_pool_add_rank(&pool, 2, bad, 2, names1, sizeof names1) == SP_ERR_CORRUPT,
          "a name offset outside the names is refused");
    bad[1] = path_of(0, 1, 0, main_c, 1, 90, 0, 1, 2);
    CHECK(spi_path_pool_add_rank(&pool, 2, bad, 2, names1, sizeof names1) == SP_ERR_CORRUPT,
          "a parent that is not before its child is refused");
    CHECK(pool.count == 2 && m->count == 4 && mr->ranks == 2, "the pool is unchanged");

    /* a thousand more ranks of the same paths: no entry, no memory */
    size_t capacity = pool.capacity, slots = pool.slot_capacity;
    for (uint32_t r = 2; r < 1002; r++)
        CHECK(spi_path_pool_add_rank(&pool, r, rank1, 3, names1, sizeof names1) == SP_OK, "rank %u", r);
    CHECK(pool.count == 2 && pool.capacity == capacity && pool.slot_capacity == slots,
          "entries %zu capacity %zu (was %zu)", pool.count, pool.capacity, capacity);
    m = entry_named(&pool, "main");
    mr = &pool.ranks[m - pool.paths];
    CHECK(mr->ranks == 1002 && m->count == 4 + 1000 && mr->inclusive.minimum == 90,
          "main after 1002 ranks: ranks %u count %llu", mr->ranks, (unsigned long long)m->count);
    spi_path_pool_free(&pool);
    CHECK(pool.count == 0 && pool.paths == NULL, "freed");
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("path_pool_test: all checks passed\n");
    return failures ? 1 : 0;
}
