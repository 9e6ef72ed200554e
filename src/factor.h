/*
 * The factor interface: the seam of the whole library.
 *
 * A factor touches `degree` binary variables through links (each possibly
 * negated) and may own `n_add` additional outputs. Its polytope is the
 * convex hull of its allowed configurations. Factors work in literal space:
 * the caller flips negated links (u -> 1 - u) before and after, so no factor
 * ever sees a negation. A factor family fills in a factor_ops table: a MAP
 * oracle always, a closed-form weighted QP optionally (the generic active
 * set answers the QP otherwise). Solvers never switch on the factor type.
 */
#ifndef CONCORD_FACTOR_H
#define CONCORD_FACTOR_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct factor factor;

/* How a family's oracle avoids forbidden outputs (factor_ops.forbids). */
typedef enum factor_forbidding {
    FORBIDS_NOTHING = 0,
    FORBIDS_BY_FLAGS,  /* it reads factor.forbidden itself (DENSE's enumeration skips them) */
    FORBIDS_BY_SCORES, /* it runs on factor_allowed_scores: a copy of the scores with -inf at
                          them, which a dynamic program never takes; factor_scratch_bytes
                          makes room for it after the family's own scratch */
} factor_forbidding;

/* The links a family flips from the negations its builder is given:
 * XOROUT, ANDOUT and IMPLY are XOR, OROUT and OR over flipped links. */
typedef enum link_flips {
    FLIPS_NONE,
    FLIPS_LAST,        /* XOROUT: the output */
    FLIPS_ALL,         /* ANDOUT */
    FLIPS_ALL_BUT_LAST /* IMPLY: the premises */
} link_flips;

typedef struct factor_ops {
    const char *name;
    /* Best configuration for literal scores a[degree] and additional scores
     * b[n_add]: writes it into u and v, returns its score a.u + b.v.
     * `scratch` holds at least scratch_bytes(f) bytes. Never fails. */
    double (*map)(const factor *f, const double *a, const double *b,
                  double *u, double *v, void *scratch);
    /* Optional, for families whose configurations have few ones
     * (config_size): the configuration map would find, written as the
     * increasing indices of its entries equal to 1 (variable j as j,
     * additional k as degree + k; at most config_size of them), its score
     * in *value. Returns how many. The active set calls it in place of map,
     * which would write and then scan degree + n_add entries per call (a
     * fifth of the solve of a long sequence with many states, a tenth of
     * parsing01's, whose head automata have a pair output per two
     * modifiers). */
    int32_t (*map_ones)(const factor *f, const double *a, const double *b, int32_t *ones,
                        double *value, void *scratch);
    /* Optional closed form of the weighted QP
     *   argmax over the polytope of  a.u + b.v - 1/2 sum_i d_i u_i^2,
     * d_i > 0. `scratch` holds at least scratch_bytes(f) bytes. Returns a
     * code naming the face of the polytope that holds the solution, for
     * face_jvp: the solve knows it exactly, where reading it off u would
     * have to guess through rounding. */
    int32_t (*qp)(const factor *f, const double *a, const double *b,
                  const double *d, double *u, double *v, void *scratch);
    /* Bytes of scratch `map` and `qp` need (NULL: none). */
    size_t (*scratch_bytes)(const factor *f);
    /* Most entries equal to 1 in a configuration (u and v together), which
     * sizes the active set's storage (NULL: degree + n_add). */
    int32_t (*config_size)(const factor *f);
    /* The polytope has fractional vertices (KNAPSACK): its points are not
     * mixtures of 0/1 configurations, so it has no sparse distribution. */
    bool fractional_vertices;
    /* A configuration's additional outputs may take any value in [-1, 1]
     * (user factors); otherwise they are 0 or 1, like its variables, and
     * the active set stores only which ones are 1. */
    bool real_additionals;
    /* The factor has no additional outputs and its qp, at unit weights, is
     * the Euclidean projection onto the polytope in closed form: a point
     * lies in the polytope when it is its own projection, an exact test
     * the losses use for fractional gold structures (the logic families
     * and BUDGET; not KNAPSACK, whose projection moves a value by up to
     * its cost over the sum of the squared costs times the violation, so
     * no one slack fits float32 golds at every cost). */
    bool qp_projects_exactly;
    /* Which links the factor stores flipped from the negations given to
     * its builder (factor_flips_link). */
    link_flips flips;
    /* With qp, optional: the derivative of the QP solution on the face of
     * the polytope that holds it: `face` is the code qp returned with the
     * literal solution u (at additional scores b), so no QP is solved
     * again. Without it (a user factor's qp), the backward pass solves the
     * factor's QP once more by the active set at its final inputs and
     * takes the derivative from there. On that face u moves in a tangent
     * space T and v = G u + const. Given the metric weights w (> 0), x
     * (degree) and y (n_add), writes
     *   du = Pi (x + W^-1 G^T y),  dv = G du,
     * Pi the W-orthogonal projection onto T; y == NULL means zero and
     * dv == NULL that dv is not wanted. */
    void (*face_jvp)(const factor *f, int32_t face, const double *b, const double *u,
                     const double *w, const double *x, const double *y, double *du, double *dv,
                     void *scratch);
    /* Whether an additional score of -inf given to the builder forbids its
     * output (the factor's `forbidden` flags; its stored score is then 0),
     * and how the oracle avoids it; FORBIDS_NOTHING: such scores are
     * refused as not finite. */
    factor_forbidding forbids;
    /* User factors only (src/factors/user.c), whose callbacks may fail:
     * the nonzero code the last map or qp call made with this scratch
     * reported, or 0. NULL for the built-in families, which never fail. */
    int (*failure)(const factor *f, const void *scratch);
} factor_ops;

/* Whether a factor of family `ops` and the given degree stores link j
 * flipped from the negation given for it. */
static inline bool factor_flips_link(const factor_ops *ops, int32_t j, int32_t degree) {
    switch (ops->flips) {
    case FLIPS_LAST: return j == degree - 1;
    case FLIPS_ALL: return true;
    case FLIPS_ALL_BUT_LAST: return j != degree - 1;
    case FLIPS_NONE: break;
    }
    return false;
}

/* The failure code of a user callback that returned 0 but wrote an
 * invalid configuration (a variable value outside [0, 1], an additional
 * value outside [-1, 1]). */
enum { FACTOR_INVALID_OUTPUT = -2147483647 - 1 };

struct factor {
    const factor_ops *ops;
    int32_t link_begin; /* first link in the graph's link arrays */
    int32_t degree;     /* number of links */
    int32_t add_begin;  /* first additional output (global index) */
    int32_t n_add;      /* number of additional outputs */
    void *params;       /* family-specific parameters, owned, freed with free() */
    uint8_t *forbidden; /* per additional output, 1 when forbidden (ops->forbids);
                           NULL when none is; owned, freed with free() */
};

/* Scratch bytes a factor needs for its MAP and QP (0 when none): its
 * family's, and room for factor_allowed_scores when it has forbidden
 * outputs and its family forbids by scores. */
size_t factor_scratch_bytes(const factor *f);

/* Where factor_allowed_scores's copy begins in a factor's scratch: after
 * the family's own bytes, rounded up to a double. */
static inline size_t factor_allowed_scores_offset(const factor *f) {
    const size_t own = f->ops->scratch_bytes ? f->ops->scratch_bytes(f) : 0;
    return (own + sizeof(double) - 1) / sizeof(double) * sizeof(double);
}

/* The additional scores b as the oracle of a FORBIDS_BY_SCORES family reads
 * them: b itself, or, when the factor forbids some outputs, a copy in its
 * scratch with -inf at those. */
static inline const double *factor_allowed_scores(const factor *f, const double *b,
                                                  void *scratch) {
    if (!f->forbidden) return b;
    double *room = (double *)((char *)scratch + factor_allowed_scores_offset(f));
    for (int32_t k = 0; k < f->n_add; ++k) room[k] = f->forbidden[k] ? -INFINITY : b[k];
    return room;
}

/* map for a family with map_ones: calls map_ones with `ones` (room for
 * config_size entries, apart from the scratch map_ones uses) and writes
 * the configuration densely into u (degree) and v (n_add). Returns its
 * score. */
double factor_map_by_ones(const factor *f, const double *a, const double *b, double *u,
                          double *v, void *scratch, int32_t *ones);

/* Whether the generic active set holds the factor's state in a solve: it
 * has no closed-form QP, or one without a face derivative (the backward
 * pass then re-solves it by the active set). */
static inline bool factor_needs_active_set(const factor *f) {
    return !f->ops->qp || !f->ops->face_jvp;
}

/* The error the factor's last map or qp call with this scratch reported
 * (user factors), or 0. The one way a user callback's failure is read,
 * after a MAP oracle, a closed-form QP or an active-set QP alike (the
 * active set stops at the first oracle call that fails, so the scratch
 * holds its code); callers read it only when the graph has user factors. */
static inline int factor_failure(const factor *f, const void *scratch) {
    return f->ops->failure ? f->ops->failure(f, scratch) : 0;
}

/* Work buffers for the variable-space calls: the *_a and *_u arrays hold
 * at least `degree` doubles, oracle_v at least n_add, scratch at least
 * factor_scratch_bytes(f) bytes. */
typedef struct factor_buffers {
    double *lit_a, *lit_u;                   /* literal-space input, output */
    double *oracle_a, *oracle_u, *oracle_v;  /* the active set's oracle calls */
    void *scratch;
} factor_buffers;

struct active_set;

typedef struct qp_outcome {
    int32_t oracle_calls;
    bool exact;   /* solved to optimality (closed forms always are) */
    int32_t face; /* closed forms: the code of the solution's face (else 0) */
    int32_t error; /* CONCORD_OK, or CONCORD_ENOMEM: the active set needed
                      room it could not allocate (exact is then false) */
} qp_outcome;

/* A negated link's QP input and solution in literal space (l = 1 - u): the
 * input a with weight d becomes d - a, and a literal value l is the
 * variable value 1 - l. */
static inline double literal_qp_input(uint8_t negated, double a, double d) {
    return negated ? d - a : a;
}
static inline double variable_value(uint8_t negated, double literal) {
    return negated ? 1.0 - literal : literal;
}

/* factor_qp_literals for a factor without a closed form (out of line). */
void factor_qp_generic(const factor *f, struct active_set *state, const double *lit_a,
                       const double *b, const double *d, double *lit_u, double *v,
                       int32_t max_inner, factor_buffers *buf, qp_outcome *out);

/* The weighted QP in literal space (inputs through literal_qp_input, the
 * solution back through variable_value); v receives the additional
 * outputs. Factors without a closed form go through the active set
 * `state` (which must then be non-NULL), with at most max_inner oracle
 * calls; for them v may be NULL (active_set_additionals writes it
 * later). A user callback's failure is read afterwards with
 * factor_failure. The outcome goes to *out rather than being returned: a
 * returned struct is assembled on the stack and read back in one load
 * wider than the stores, which stalls store forwarding on every factor
 * solve. Inline, so that the ADMM loop calls a closed form directly. */
static inline void factor_qp_literals(const factor *f, struct active_set *state,
                                      const double *lit_a, const double *b, const double *d,
                                      double *lit_u, double *v, int32_t max_inner,
                                      factor_buffers *buf, qp_outcome *out) {
    if (f->ops->qp) {
        out->face = f->ops->qp(f, lit_a, b, d, lit_u, v, buf->scratch);
        out->oracle_calls = 0;
        out->exact = true;
        out->error = 0;
    } else {
        /* through a local: the address of *out then never reaches the
         * out-of-line call, and the ADMM loop keeps it in registers instead
         * of storing and reloading it around every closed-form solve
         * (coref: -1% instructions) */
        qp_outcome generic;
        factor_qp_generic(f, state, lit_a, b, d, lit_u, v, max_inner, buf, &generic);
        *out = generic;
    }
}

/* factor_qp_literals in variable space: a, d, u are indexed by link, neg[j]
 * says whether link j is negated; buf->lit_a and lit_u hold the literals. */
void factor_qp_variables(const factor *f, struct active_set *state, const uint8_t *neg,
                         const double *a, const double *b, const double *d, double *u,
                         double *v, int32_t max_inner, factor_buffers *buf, qp_outcome *out);

/* The face derivative (factor_ops.face_jvp) in variable space, for either
 * kind of factor: closed forms take the variable-space solution u and the
 * face code that factor_qp_variables gave with it; generic factors use
 * their active set, which must still hold that solution. buf->lit_a, lit_u
 * serve as literal buffers and buf->oracle_a as a third one. */
void factor_face_jvp_variables(const factor *f, struct active_set *state, int32_t face,
                               const uint8_t *neg, const double *u, const double *b,
                               const double *w, const double *x, const double *y, double *du,
                               double *dv, factor_buffers *buf);

/* The MAP oracle in variable space; returns the best score a.u + b.v. A
 * user oracle's failure is then read with factor_failure(f, buf->scratch)
 * (callers check only when the graph has user factors: the check on every
 * call of the dual bound cost 2% of a solve of AD3's mln_large). */
double factor_map_variables(const factor *f, const uint8_t *neg, const double *a,
                            const double *b, double *u, double *v, factor_buffers *buf);

/* The structured families' tables, which tests compare factors against
 * (every family's builder lives beside its table in src/factors/). */
extern const factor_ops factor_tree_ops;
extern const factor_ops factor_matching_ops;

#endif /* CONCORD_FACTOR_H */
