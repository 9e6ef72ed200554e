/*
 * Helpers shared by the benchmark programs: a clock, medians of repeated
 * measurements, a seeded random generator, and the path of the shared data
 * folder. Benchmarks print figures; they never pass or fail on time.
 */
#ifndef CONCORD_BENCH_COMMON_H
#define CONCORD_BENCH_COMMON_H

#include <math.h>
#include <stdlib.h>
#include <time.h>

/* Seconds of CPU time used by this process. Every solve is single-threaded,
 * so on a quiet machine this equals wall time; on the shared machines the
 * benchmarks run on, wall time mostly measures the neighbours. */
static inline double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Uniform in (0, 1) from a fixed-seed 64-bit LCG: the same figures on every
 * run. */
static unsigned long long bench_rng_state = 0x9e3779b97f4a7c15ull;
static inline double bench_uniform(void) {
    bench_rng_state = bench_rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(bench_rng_state >> 11) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller). */
static inline double bench_normal(void) {
    return sqrt(-2.0 * log(bench_uniform())) * cos(6.283185307179586 * bench_uniform());
}

static inline int bench_compare(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median of n values (sorts them). */
static inline double bench_median(double *values, int n) {
    qsort(values, (size_t)n, sizeof *values, bench_compare);
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* The shared data folder: argv[1] if given, else ../shared/data. */
static inline const char *bench_data_dir(int argc, char **argv) {
    return argc > 1 ? argv[1] : "../shared/data";
}

#endif /* CONCORD_BENCH_COMMON_H */
