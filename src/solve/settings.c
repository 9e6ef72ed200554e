/*
 * Solver settings: their defaults and their validation.
 */
#include <math.h>
#include <stdio.h>

#include "anderson.h"
#include "concord.h"

void concord_default_settings(concord_settings *s) {
    if (!s) return;
    *s = (concord_settings){.max_iter = 100000,
                            .tol = 1e-6,
                            .eta = 0.1,
                            .adapt_eta = true,
                            .relaxation = 1.0,
                            .bound_every = 25,
                            .max_inner_iter = 1,
                            .acceleration = 8,
                            .warm_start = true,
                            .time_limit = 0.0,
                            .progress = NULL,
                            .progress_context = NULL,
                            .backward_tol = 1e-10,
                            .backward_max_iter = 1000,
                            .backward_power = false,
                            .acyclic = true,
                            .node_limit = 0,
                            .search = CONCORD_SEARCH_BEST_FIRST,
                            .exact_gap = 1e-9,
                            .heuristic_every = 1,
                            .psdd_step = CONCORD_STEP_SQRT,
                            .psdd_eta = 1.0};
}

int concord_check_settings(const concord_settings *s, char *error, size_t error_size) {
    char message[128] = "";
    if (!s) snprintf(message, sizeof message, "no settings");
    else if (s->max_iter < 1)
        snprintf(message, sizeof message, "max_iter must be >= 1 (got %d)", s->max_iter);
    else if (!(s->tol > 0.0 && s->tol < 1.0))
        snprintf(message, sizeof message, "tol must be in (0, 1) (got %g)", s->tol);
    else if (!(s->eta >= CONCORD_MIN_ETA && s->eta <= CONCORD_MAX_ETA))
        snprintf(message, sizeof message, "eta must be in [%g, %g] (got %g)", CONCORD_MIN_ETA,
                 CONCORD_MAX_ETA, s->eta);
    else if (!(s->relaxation >= 1.0 && s->relaxation < 2.0))
        snprintf(message, sizeof message, "relaxation must be in [1, 2) (got %g)", s->relaxation);
    else if (s->max_inner_iter < 1)
        snprintf(message, sizeof message, "max_inner_iter must be >= 1 (got %d)",
                 s->max_inner_iter);
    else if (s->bound_every < 1)
        snprintf(message, sizeof message, "bound_every must be >= 1 (got %d)", s->bound_every);
    else if (s->acceleration < 0 || s->acceleration > ANDERSON_MAX_MEMORY)
        snprintf(message, sizeof message, "acceleration must be in [0, %d] (got %d)",
                 ANDERSON_MAX_MEMORY, s->acceleration);
    else if (!(s->time_limit >= 0.0) || isnan(s->time_limit))
        snprintf(message, sizeof message, "time_limit must be >= 0 (got %g)", s->time_limit);
    else if (!(s->backward_tol > 0.0) || !isfinite(s->backward_tol))
        snprintf(message, sizeof message, "backward_tol must be positive and finite (got %g)",
                 s->backward_tol);
    else if (s->backward_max_iter < 1)
        snprintf(message, sizeof message, "backward_max_iter must be >= 1 (got %d)",
                 s->backward_max_iter);
    else if (s->node_limit < 0)
        snprintf(message, sizeof message, "node_limit must be >= 0 (got %lld)",
                 (long long)s->node_limit);
    else if (s->search != CONCORD_SEARCH_BEST_FIRST && s->search != CONCORD_SEARCH_DEPTH_FIRST)
        snprintf(message, sizeof message, "search must be best first or depth first (got %d)",
                 (int)s->search);
    else if (!(s->exact_gap >= 0.0 && s->exact_gap < 1.0))
        snprintf(message, sizeof message, "exact_gap must be in [0, 1) (got %g)", s->exact_gap);
    else if (s->heuristic_every < 0)
        snprintf(message, sizeof message, "heuristic_every must be >= 0 (got %d)",
                 s->heuristic_every);
    else if (s->psdd_step != CONCORD_STEP_SQRT && s->psdd_step != CONCORD_STEP_DECREASE &&
             s->psdd_step != CONCORD_STEP_POLYAK)
        snprintf(message, sizeof message, "psdd_step must be a concord_step_rule (got %d)",
                 (int)s->psdd_step);
    else if (!(s->psdd_eta >= 1e-12) || !isfinite(s->psdd_eta))
        snprintf(message, sizeof message, "psdd_eta must be at least 1e-12 and finite (got %g)",
                 s->psdd_eta);
    if (!message[0]) return CONCORD_OK;
    if (error && error_size) snprintf(error, error_size, "%s", message);
    return CONCORD_EINVAL;
}
