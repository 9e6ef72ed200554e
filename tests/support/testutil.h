/*
 * Helpers shared by the C tests: a seeded random generator (splitmix64, so
 * every run draws the same cases), whether the build is sanitized,
 * enumeration (an odometer, the best two values), a clock, reading,
 * writing and removing files, and the paths of the tests' input files.
 */
#ifndef CONCORD_TESTUTIL_H
#define CONCORD_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "concord.h"

/* UNDER_ASAN is 1 in the AddressSanitizer build of a test (GCC and Clang
 * say so differently), else 0: for what that build must skip. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

typedef struct test_rng {
    uint64_t state;
} test_rng;

static inline uint64_t rng_next(test_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double rng_uniform(test_rng *r) {
    return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n). */
static inline int rng_int(test_rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }

/* Standard normal (Box-Muller). */
double rng_normal(test_rng *r);

/* Steps digits (digit i in [0, radix[i])) to the next assignment in
 * odometer order, the last digit fastest; false after the last one, with
 * the digits back at all zero. */
bool odometer_next(int *digits, const int *radix, int n);

/* The best and the runner-up of values offered one at a time; start with
 * both at -INFINITY. */
typedef struct top_two {
    double best, second;
} top_two;

/* Offers x; true when x is the new best. */
bool top_two_offer(top_two *t, double x);

/* Seconds on the monotonic clock, for timing a step of a test. */
double monotonic_seconds(void);

/* The whole content of the file at path, in a malloc'd buffer followed by
 * a NUL byte that *size (size may be NULL) does not count; NULL if the file
 * cannot be opened or read. */
char *read_whole_file(const char *path, size_t *size);

/* read_whole_file, failing the running cmocka test with the path and the
 * reason when the file cannot be read. */
char *read_whole_file_or_fail(const char *path, size_t *size);

/* Writes text to the file at path, created or truncated; 0, or -1 on any
 * failure. */
int write_text_file(const char *path, const char *text);

/* Real inputs kept outside the repository, in ../shared/data beside it
 * (CONCORD_SHARED_DATA), which a clone of the repository alone lacks: the
 * path of `relative` under that directory when the file exists; otherwise
 * prints one line, "skipped: ../shared/data/RELATIVE not found", and skips
 * the running cmocka test (skip() does not return). Call it before
 * allocating anything the test would free, and for every file a test needs
 * before using any. The path lives in a ring of 8 static buffers: it stays
 * valid for the next 7 calls (to this and to test_data_path). */
const char *shared_data_path_or_skip(const char *relative);

/* The path of `relative` under tests/data (CONCORD_TEST_DATA), the inputs
 * that live in the repository; in the same ring of buffers. */
const char *test_data_path(const char *relative);

/* The next graph of a .fg text made of one-factor graphs, split into lines
 * with strtok_r(text for the first graph, else NULL, "\n", lines): the
 * lines N, 1 and N scores (into theta; N at most max) and the factor line,
 * which must start with `kind`, its degree (at most max) and its 1-based
 * variables (into link_var, 0-based). Returns the degree; *words holds the
 * factor line's strtok_r state (" ") for the rest of it. Fails the running
 * cmocka test on anything else. Blank separator lines vanish in the split. */
int read_one_factor_graph(char *text, char **lines, const char *kind, int max, double *theta,
                          int *link_var, char **words);

/* A new solver over g, failing the running cmocka test if it cannot be
 * made. */
concord_solver *new_solver_or_fail(const concord_graph *g);

struct gen_spec;
/* The .fg text of the generated graph `spec` describes (structured_gen.h),
 * malloc'd and NUL-terminated, its length in *size (may be NULL); fails
 * the running cmocka test when the generator refuses the spec. */
char *generated_text_or_fail(const struct gen_spec *spec, size_t *size);

/* Removes path: a file, or a directory with everything below it. A path
 * that does not exist is not an error. */
void remove_tree(const char *path);

#endif /* CONCORD_TESTUTIL_H */
