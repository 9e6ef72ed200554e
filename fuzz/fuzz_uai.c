/*
 * libFuzzer target for the UAI reader: the input is a model, optionally
 * followed by a 0xFF byte and an evidence file (0xFF never occurs in a
 * valid text file, so it cleanly splits the two). Any input must either be
 * rejected with an error and no graph, or yield a graph that solves (a few
 * iterations) and decodes without crashing, whose decoded labels map back
 * to the decoded assignment, and whose evaluation agrees with the decoder;
 * LP-SparseMAP and its backward pass run on it too (fuzz_checks.h).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "concord.h"
#include "fuzz_checks.h"

/* Checks the decoder's outputs against each other; traps on a mismatch. */
static void check_decoding(const concord_graph *g, concord_solver *s,
                           const concord_decoding *dec) {
    int32_t n_multi = concord_num_multi_variables(g), n_vars = concord_num_variables(g);
    int32_t *labels = malloc((size_t)(n_multi ? n_multi : 1) * sizeof *labels);
    double *x = malloc((size_t)(n_vars ? n_vars : 1) * sizeof *x);
    if (!labels || !x) goto done;
    if (concord_solver_decoded_labels(s, labels) != CONCORD_OK) __builtin_trap();
    if (concord_assignment_from_labels(g, labels, x) != CONCORD_OK) __builtin_trap();
    const double *decoded = concord_solver_decoded(s);
    /* Every variable of a UAI graph is a state of some multi-variable. */
    for (int32_t i = 0; i < n_vars; ++i)
        if (x[i] != decoded[i]) __builtin_trap();
    concord_decoding again;
    if (concord_solver_evaluate(s, x, &again) != CONCORD_OK) __builtin_trap();
    if (again.violated != dec->violated) __builtin_trap();
    if (dec->violated == 0 && !(again.value == dec->value ||
                                fabs(again.value - dec->value) <= 1e-9 * (1 + fabs(dec->value))))
        __builtin_trap();
done:
    free(labels);
    free(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *split = memchr(data, 0xFF, size);
    size_t model_size = split ? (size_t)(split - data) : size;
    const char *evidence = split ? (const char *)split + 1 : NULL;
    size_t evidence_size = split ? size - model_size - 1 : 0;
    concord_graph *g = NULL;
    char error[256];
    int rc = concord_read_uai_buffer((const char *)data, model_size, "fuzz.uai", evidence,
                                     evidence_size, "fuzz.evid", &g, error, sizeof error);
    if (rc != CONCORD_OK) {
        if (g != NULL || error[0] == '\0') __builtin_trap();
        return 0;
    }
    /* Decoding is quadratic in the states of a multi-variable (a 17-byte
     * "MARKOV 1 3000 0" takes seconds under the sanitizers), so big graphs
     * are only read, not solved. */
    if (concord_num_variables(g) > 512) {
        concord_graph_free(g);
        return 0;
    }
    concord_settings settings;
    concord_default_settings(&settings);
    settings.max_iter = 50;
    concord_solver *solver;
    if (concord_solver_new(g, &solver) == CONCORD_OK) {
        rc = concord_solver_map(solver, &settings, NULL);
        if (rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED) {
            concord_decoding dec;
            if (concord_solver_decode(solver, &dec) == CONCORD_OK) check_decoding(g, solver, &dec);
        }
        sparse_and_backward(solver, g, settings);
        concord_solver_free(solver);
    }
    concord_graph_free(g);
    return 0;
}
