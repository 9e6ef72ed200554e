/*
 * libFuzzer target for the .fg reader, read as the CLI reads it (one graph
 * at a time through the streaming reader): any input must either be
 * rejected with an error or yield graphs that the solvers (AD3, a few
 * nodes of exact MAP, PSDD, MPLP, LP-SparseMAP and its backward pass) run
 * on without crashing; an optimum that exact MAP proves must be an allowed
 * assignment worth its value, and LP-SparseMAP's solution and gradients
 * must be finite, the solution in [0, 1].
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "concord.h"
#include "fuzz_checks.h"

/* Exact MAP, PSDD and MPLP, briefly; traps when a proven optimum is not
 * an allowed assignment worth the reported value. */
static void other_solvers(concord_solver *solver, concord_settings settings) {
    concord_info info;
    settings.node_limit = 8;
    if (concord_solver_exact(solver, &settings, &info) == CONCORD_OK &&
        info.status == CONCORD_STATUS_OPTIMAL) {
        concord_decoding dec;
        const double *x = concord_solver_variables(solver);
        if (!x || concord_solver_evaluate(solver, x, &dec) != CONCORD_OK || dec.violated ||
            !(fabs(dec.value - info.value) <= 1e-9 * (1.0 + fabs(info.value))))
            __builtin_trap();
    }
    concord_solver_psdd(solver, &settings, NULL);
    settings.max_iter = 5;
    concord_solver_mplp(solver, &settings, NULL);
}

enum { SMALL_GRAPH = 50 }; /* variables */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    concord_reader *reader;
    char error[256];
    if (concord_reader_open_buffer((const char *)data, size, "fuzz.fg", CONCORD_FORMAT_FG,
                                   &reader, error, sizeof error, NULL, NULL) != CONCORD_OK)
        return 0;
    concord_settings settings;
    concord_default_settings(&settings);
    settings.max_iter = 50;
    concord_graph *g;
    while (concord_reader_next(reader, &g) == CONCORD_OK && g) {
        concord_solver *solver;
        if (concord_solver_new(g, &solver) == CONCORD_OK) {
            concord_solver_map(solver, &settings, NULL);
            /* the other solvers on small graphs only: the seeds include
             * AD3's large graphs, whose searches would take the run's time */
            if (concord_num_variables(g) <= SMALL_GRAPH) {
                other_solvers(solver, settings);
                sparse_and_backward(solver, g, settings);
            }
            concord_solver_free(solver);
        }
        concord_graph_free(g);
    }
    concord_reader_close(reader);
    return 0;
}
