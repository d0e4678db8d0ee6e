/*
 * kernel.c - the overhead benchmark's program (bench/instrument/run.py):
 * a kernel-heavy code as a compiler-instrumented user would have it. A
 * Jacobi sweep whose point update is a small function of its own, called
 * once per point (ROWS*COLS*SWEEPS = 10^8 calls at the defaults), and a
 * blocked matrix multiply as the rest of the real work. Built twice by the
 * script, with and without -finstrument-functions; the point function
 * stays a call (noinline) in both, as a separate translation unit's
 * function would.
 */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 1000
#define COLS 1000

static double grid_a[ROWS][COLS], grid_b[ROWS][COLS];

__attribute__((noinline)) double relax_point(double centre, double north, double south,
                                             double west, double east) {
    return 0.5 * centre + 0.125 * (north + south + west + east);
}

__attribute__((noinline)) void sweep(double (*from)[COLS], double (*to)[COLS]) {
    for (int i = 1; i < ROWS - 1; i++)
        for (int j = 1; j < COLS - 1; j++)
            to[i][j] = relax_point(from[i][j], from[i - 1][j], from[i + 1][j], from[i][j - 1],
                                   from[i][j + 1]);
}

__attribute__((noinline)) void jacobi(int sweeps) {
    for (int s = 0; s < sweeps; s++) {
        if (s % 2 == 0) sweep(grid_a, grid_b);
        else sweep(grid_b, grid_a);
    }
}

__attribute__((noinline)) void matmul(int n, const double *a, const double *b, double *c) {
    enum { BLOCK = 64 };
    for (int ii = 0; ii < n; ii += BLOCK)
        for (int kk = 0; kk < n; kk += BLOCK)
            for (int i = ii; i < ii + BLOCK && i < n; i++)
                for (int k = kk; k < kk + BLOCK && k < n; k++) {
                    double aik = a[(size_t)i * n + k];
                    for (int j = 0; j < n; j++) c[(size_t)i * n + j] += aik * b[(size_t)k * n + j];
                }
}

int main(int argc, char **argv) {
    int sweeps = argc > 1 ? atoi(argv[1]) : 100;
    int n = argc > 2 ? atoi(argv[2]) : 1200;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) grid_a[i][j] = grid_b[i][j] = (i * 7 + j * 3) % 11;
    jacobi(sweeps);
    double *a = malloc(sizeof(double) * (size_t)n * n), *b = malloc(sizeof(double) * (size_t)n * n);
    double *c = calloc((size_t)n * n, sizeof(double));
    if (!a || !b || !c) return 1;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        a[i] = (double)(i % 13);
        b[i] = (double)(i % 7);
    }
    matmul(n, a, b, c);
    printf("checksum %.6e %.6e\n", grid_a[ROWS / 2][COLS / 2], c[(size_t)n * n / 3]);
    free(a);
    free(b);
    free(c);
    return 0;
}
