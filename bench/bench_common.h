/*
 * Helpers shared by the benchmark programs: a monotonic clock, medians of
 * repeated measurements, and the path of the shared data folder. Benchmarks
 * print figures; they never pass or fail on time.
 */
#ifndef CONCORD_BENCH_COMMON_H
#define CONCORD_BENCH_COMMON_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
