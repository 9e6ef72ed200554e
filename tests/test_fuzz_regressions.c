/*
 * Replays every input kept in tests/data/fuzz/ (fuzzing seeds and inputs
 * that once crashed; see scripts/fuzz.sh) through concord_read_buffer and,
 * when it parses, concord_solver_map and concord_solver_sparse with
 * max_iter 50, as the libFuzzer target does. Nothing may crash (the
 * ASan+UBSan twin of this program catches memory and undefined-behaviour
 * errors), every call must return a defined code, a failed read must
 * return no graph and a "name:line:" message, and a solve must leave
 * variable and additional values in [0, 1]. Every prefix of
 * each input and a fixed set of byte mutations of it are replayed too, so
 * the truncation and junk-byte paths of the reader stay covered without a
 * fuzzer.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "concord.h"
#include "testutil.h"

#define FUZZ_DIR CONCORD_TEST_DATA "/fuzz"

typedef struct input_file {
    char name[256];
    char *data;
    size_t size;
} input_file;

static input_file *inputs;
static size_t n_inputs;

static int compare_inputs(const void *a, const void *b) {
    return strcmp(((const input_file *)a)->name, ((const input_file *)b)->name);
}

static int load_inputs(void **state) {
    (void)state;
    DIR *d = opendir(FUZZ_DIR);
    if (!d) return 0; /* no regression inputs: nothing to replay */
    struct dirent *e;
    size_t cap = 0;
    while ((e = readdir(d))) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", FUZZ_DIR, e->d_name);
        struct stat st;
        if (e->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (n_inputs == cap) {
            cap = cap ? 2 * cap : 16;
            input_file *p = realloc(inputs, cap * sizeof *p);
            if (!p) return -1;
            inputs = p;
        }
        input_file *f = &inputs[n_inputs];
        snprintf(f->name, sizeof f->name, "%s", e->d_name);
        f->data = read_whole_file(path, &f->size);
        if (!f->data) return -1;
        ++n_inputs;
    }
    closedir(d);
    if (n_inputs) qsort(inputs, n_inputs, sizeof *inputs, compare_inputs);
    return 0;
}

static int free_inputs(void **state) {
    (void)state;
    for (size_t k = 0; k < n_inputs; ++k) free(inputs[k].data);
    free(inputs);
    inputs = NULL;
    n_inputs = 0;
    return 0;
}

static int is_defined_code(int rc) { return rc >= CONCORD_OK && rc <= CONCORD_EINFEASIBLE; }

typedef int (*solve_fn)(concord_solver *, const concord_settings *, concord_info *);

/* One solve of graph k (numbered from 0) of input `name`: a defined code,
 * and, when it ran, a solution of the right sizes in the box. */
static void check_solve(const char *name, size_t k, const concord_graph *g,
                        concord_solver *solver, solve_fn solve,
                        const concord_settings *settings) {
    concord_info info;
    memset(&info, 0, sizeof info);
    int rc = solve(solver, settings, &info);
    if (!is_defined_code(rc))
        fail_msg("%s graph %zu: solve returned undefined code %d", name, k + 1, rc);
    if (rc != CONCORD_OK && rc != CONCORD_ENOTCONVERGED) return;
    if (info.iterations < 1 || info.iterations > settings->max_iter)
        fail_msg("%s graph %zu: %d iterations", name, k + 1, (int)info.iterations);
    const double *u = concord_solver_variables(solver);
    const double *v = concord_solver_additionals(solver);
    int32_t n = concord_num_variables(g), m = concord_num_additionals(g);
    if ((n > 0 && !u) || (m > 0 && !v)) fail_msg("%s graph %zu: no solution", name, k + 1);
    for (int32_t i = 0; i < n; ++i)
        if (!(u[i] >= 0.0 && u[i] <= 1.0))
            fail_msg("%s graph %zu: u[%d] = %.17g", name, k + 1, (int)i, u[i]);
    for (int32_t i = 0; i < m; ++i)
        if (!(v[i] >= 0.0 && v[i] <= 1.0))
            fail_msg("%s graph %zu: v[%d] = %.17g", name, k + 1, (int)i, v[i]);
}

/* Replays one input; returns 1 if it parsed, 0 if it was rejected. Any
 * broken contract fails the test with the input's name. */
static int replay(const char *name, const char *data, size_t size) {
    concord_graph *sentinel[1] = {NULL};
    concord_graph **graphs = sentinel;
    size_t count = 12345;
    char error[512];
    int rc = concord_read_buffer(data, size, name, CONCORD_FORMAT_FG, &graphs, &count, error,
                                 sizeof error, NULL, NULL);
    if (rc != CONCORD_OK) {
        if (rc != CONCORD_EPARSE && rc != CONCORD_ENOMEM)
            fail_msg("%s (%zu bytes): read returned %d", name, size, rc);
        if (graphs != NULL || count != 0)
            fail_msg("%s (%zu bytes): a failed read returned graphs", name, size);
        size_t n = strlen(name);
        if (strncmp(error, name, n) != 0 || error[n] != ':' || strlen(error) < n + 4)
            fail_msg("%s (%zu bytes): unclear message '%s'", name, size, error);
        return 0;
    }
    if (!graphs || count == 0) fail_msg("%s: read succeeded without a graph", name);
    concord_settings settings;
    concord_default_settings(&settings);
    settings.max_iter = 50;
    for (size_t k = 0; k < count; ++k) {
        concord_solver *solver = new_solver_or_fail(graphs[k]);
        check_solve(name, k, graphs[k], solver, concord_solver_map, &settings);
        check_solve(name, k, graphs[k], solver, concord_solver_sparse, &settings);
        concord_solver_free(solver);
    }
    concord_free_graphs(graphs, count);
    return 1;
}

static void every_regression_input_is_read_and_solved_without_crashing(void **state) {
    (void)state;
    if (n_inputs == 0) {
        print_message("notice: no inputs in %s\n", FUZZ_DIR);
        return;
    }
    int parsed = 0;
    for (size_t k = 0; k < n_inputs; ++k)
        parsed += replay(inputs[k].name, inputs[k].data, inputs[k].size);
    print_message("replayed %zu inputs, %d parsed\n", n_inputs, parsed);
}

/* Every prefix: truncation at each byte, including mid-token and mid-CRLF. */
static void every_prefix_of_each_input_is_handled(void **state) {
    (void)state;
    for (size_t k = 0; k < n_inputs; ++k) {
        size_t limit = inputs[k].size < 4096 ? inputs[k].size : 4096;
        for (size_t n = 0; n <= limit; ++n) {
            /* A copy of exactly n bytes, so ASan sees any read past the end. */
            char *copy = malloc(n ? n : 1);
            assert_non_null(copy);
            memcpy(copy, inputs[k].data, n);
            replay(inputs[k].name, copy, n);
            free(copy);
        }
    }
}

/* Fixed, seeded mutations: byte changes towards tricky characters,
 * deletions, duplications of a line. */
static void mutated_inputs_are_handled(void **state) {
    (void)state;
    static const char tricky[] = {'\0', '\n', '\r', ' ', '#', '-', '+', '0', '1', '9',
                                  'e', '.', 'n', 'i', '\t', '\v', (char)0xff, 'X'};
    test_rng rng = {20240601};
    for (size_t k = 0; k < n_inputs; ++k) {
        size_t size = inputs[k].size;
        if (size == 0 || size > 4096) continue;
        for (int trial = 0; trial < 300; ++trial) {
            char *buf = malloc(2 * size + 1);
            assert_non_null(buf);
            memcpy(buf, inputs[k].data, size);
            size_t n = size;
            int edits = 1 + rng_int(&rng, 3);
            for (int e = 0; e < edits && n > 0; ++e) {
                size_t at = (size_t)rng_int(&rng, (int)n);
                switch (rng_int(&rng, 3)) {
                case 0: buf[at] = tricky[rng_int(&rng, (int)sizeof tricky)]; break;
                case 1:
                    memmove(buf + at, buf + at + 1, n - at - 1);
                    --n;
                    break;
                default: {
                    /* duplicate the line containing `at`, within capacity */
                    size_t s = at, t = at;
                    while (s > 0 && buf[s - 1] != '\n') --s;
                    while (t < n && buf[t] != '\n') ++t;
                    if (t < n) ++t;
                    size_t len = t - s;
                    if (n + len <= 2 * size) {
                        memmove(buf + t + len, buf + t, n - t);
                        memcpy(buf + t, buf + s, len);
                        n += len;
                    }
                }
                }
            }
            char *exact = malloc(n ? n : 1);
            assert_non_null(exact);
            memcpy(exact, buf, n);
            free(buf);
            replay(inputs[k].name, exact, n);
            free(exact);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_regression_input_is_read_and_solved_without_crashing),
        cmocka_unit_test(every_prefix_of_each_input_is_handled),
        cmocka_unit_test(mutated_inputs_are_handled),
    };
    return cmocka_run_group_tests(tests, load_inputs, free_inputs);
}
