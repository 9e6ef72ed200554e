/*
 * libFuzzer target for the .fg reader: any input must either be rejected
 * with an error or yield graphs that the solver runs on without crashing.
 */
#include <stddef.h>
#include <stdint.h>

#include "concord.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    concord_graph **graphs;
    size_t count;
    char error[256];
    if (concord_read_buffer((const char *)data, size, "fuzz.fg", CONCORD_FORMAT_FG, &graphs,
                            &count, error, sizeof error, NULL, NULL) != CONCORD_OK)
        return 0;
    concord_settings settings;
    concord_default_settings(&settings);
    settings.max_iter = 50;
    for (size_t k = 0; k < count; ++k) {
        concord_solver *solver;
        if (concord_solver_new(graphs[k], &solver) != CONCORD_OK) continue;
        concord_solver_map(solver, &settings, NULL);
        concord_solver_free(solver);
    }
    concord_free_graphs(graphs, count);
    return 0;
}
