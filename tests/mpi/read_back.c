/*
 * read_back.c - the job file as our own reader sees it: one line per
 * (rank, region) row, "rank region calls first_call_id", for check_mpi.py to
 * compare with h5py's view and the recording plan.
 */
#include <stdio.h>

#include "scope_profiler_results.h"

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    char message[1024];
    sp_results *results = NULL;
    int status = sp_results_open(argv[1], 0, &results, message, sizeof message);
    if (status != SP_OK) {
        fprintf(stderr, "%s\n", message);
        return 1;
    }
    printf("ranks %u\n", sp_results_rank_count(results));
    for (size_t row = 0; row < sp_results_row_count(results); row++) {
        const int64_t *ids = sp_results_row_call_ids(results, row);
        printf("%u %s %llu %lld\n", sp_results_row_rank(results, row),
               sp_results_region_name(results, sp_results_row_region(results, row)),
               (unsigned long long)sp_results_row_calls(results, row),
               ids && sp_results_row_calls(results, row) ? (long long)ids[0] : -1LL);
    }
    sp_results_close(results);
    return 0;
}
