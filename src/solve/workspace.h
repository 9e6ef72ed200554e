/*
 * The solver workspace: everything a solve needs besides the graph, sized
 * once from the graph's structure (variable degrees and links by variable,
 * multipliers, factor copies, consensus, per-factor active sets, buffers),
 * so that iterations and repeated solves allocate nothing. Shared by the
 * ADMM solver and the decoder.
 */
#ifndef CONCORD_WORKSPACE_H
#define CONCORD_WORKSPACE_H

#include <math.h>
#include <stdbool.h>

#include "../graph.h"
#include "../qp/active_set.h"

struct admm_workspace {
    int32_t *deg;            /* factors per variable */
    double *inv_deg;         /* 1/deg (0 for isolated variables) */
    int32_t *var_link_begin; /* CSR: links of variable i are */
    int32_t *var_links;      /* var_links[var_link_begin[i] .. [i+1]) */
    int32_t *link_factor;
    double *lambda;    /* multipliers, one per link */
    double *uf;        /* factor solutions, variable space, one per link */
    double *ubar;      /* consensus */
    double *v;         /* factors' additional outputs */
    double *round_u;   /* candidate integral point (n_vars, n_add) */
    double *round_v;
    /* Flags are bool, not uint8_t: a store through a character type may
     * alias anything, which made the compiler reload every array pointer
     * after each flag set in the solver's inner loops. */
    bool *dirty;       /* factor inputs changed since its last solve */
    bool *active;      /* variable must be revisited: a factor's copy of it
                          changed, or it moved last time */
    double *a_solved;  /* per link: the input of the factor's last solve */
    double *link_score; /* per link: theta_i / deg_i, set when a solve starts */
    int32_t *face;     /* per factor: the face code of its last closed-form QP */
    double *a, *d, *u; /* one factor's inputs and output, variable space */
    int32_t max_degree; /* the length of a, d, u and the factor buffers */
    double *b;         /* one factor's additional scores (feasibility test) */
    double *vmap;      /* additional outputs of a MAP call */
    factor_buffers buf;
    active_set **state; /* per factor: its active set (NULL: closed form) */
    double *backward_memory; /* the backward pass's link vectors, on demand */
    struct anderson *anderson; /* acceleration state, on demand */
    int anderson_memory;
    int sparse;         /* the last solve was LP-SparseMAP */
    double eta;         /* its final penalty (absolute) */
    int32_t n_states;   /* entries of state (the number of factors) */
};

/* The caching rule: link l's factor must be solved again when the link's
 * input a (theta_i/deg_i + lambda_l + eta ubar_i) left the one of the
 * factor's last solve by more than slack. Written as a flag update, not a
 * branch: which inputs move is as good as random from link to link. */
static inline void workspace_mark_if_moved(admm_workspace *w, int32_t l, double a, double slack) {
    w->dirty[w->link_factor[l]] |= fabs(a - w->a_solved[l]) > slack;
}

/* The QP weights of one factor's links (var: their variables): the
 * penalty eta for LP-MAP, eta + 1/deg of the variable for LP-SparseMAP,
 * whose -1/2 |u|^2 is split evenly among a variable's copies. */
static inline void workspace_link_weights(const admm_workspace *w, const int32_t *var,
                                          int32_t n, int sparse, double eta, double *d) {
    for (int32_t j = 0; j < n; ++j) d[j] = sparse ? eta + w->inv_deg[var[j]] : eta;
}

/* Builds the workspace for g's current structure; NULL when out of memory. */
admm_workspace *workspace_build(const concord_graph *g);

/* Evaluates factor f at the 0/1 point x (indexed by variable): returns
 * whether x restricted to f is allowed, and then the best additional score
 * phi_f . v over the v allowed with it (in *score) and that v (in v, if not
 * NULL; n_add entries). Asks the oracle to score each link +M when on in x
 * and -M when off, with M above twice the factor's total |phi|, so the best
 * configuration equals x on the links exactly when x is allowed. */
bool workspace_factor_at(const concord_graph *g, admm_workspace *w, int32_t f,
                         const double *x, double *score, double *v);

#endif /* CONCORD_WORKSPACE_H */
