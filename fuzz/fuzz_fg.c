/*
 * libFuzzer target for the .fg reader, read as the CLI reads it (one graph
 * at a time through the streaming reader): any input must either be
 * rejected with an error or yield graphs that the solver runs on without
 * crashing.
 */
#include <stddef.h>
#include <stdint.h>

#include "concord.h"

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
            concord_solver_free(solver);
        }
        concord_graph_free(g);
    }
    concord_reader_close(reader);
    return 0;
}
