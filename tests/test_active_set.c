/*
 * DENSE's MAP oracle against enumeration of the joint states, and the
 * generic active-set QP on DENSE factors, checked against references
 * that share nothing with it: (1) an optimality certificate computed by
 * enumerating every joint state -- the returned weights must form a valid
 * convex combination of allowed configurations reproducing u and v, and no
 * configuration may improve the linearized objective (Frank-Wolfe gap ~ 0);
 * (2) an independent solve by accelerated projected gradient (FISTA) over
 * the joint distribution; plus warm-started solves equal to cold ones, and
 * re-solves after d changes. Inputs include ties, forbidden joint states
 * and weights from 1e-3 to 1e3. Then the room of the state: solutions that
 * need more configurations than it starts with (16) and than the former
 * fixed limit (128), certified over every joint state of tables of up to
 * 90 x 90 states; and a factor whose solutions need degree + 1
 * configurations, the most the state may hold (the unit cube, where the
 * answer clip(a / d) is known). Last, whole solves through the active set
 * (parsers and coupled sequences) return values inside [0, 1].
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "graph.h"
#include "pair_table.h"
#include "qp/active_set.h"
#include "structured_gen.h"
#include "testutil.h"

enum { MAX_VARS = 3, MAX_STATES = 5, MAX_LINKS = MAX_VARS * MAX_STATES, MAX_JOINT = 125 };

typedef struct dense_case {
    int n_vars;
    int states[MAX_VARS];
    int degree, n_joint;
    double a[MAX_LINKS], d[MAX_LINKS], b[MAX_JOINT];
    int forbidden[MAX_JOINT];
} dense_case;

/* Joint state c -> the link of each variable's state (last var fastest). */
static void joint_links(const dense_case *t, int c, int *links) {
    int offset[MAX_VARS];
    for (int j = 0, at = 0; j < t->n_vars; ++j) {
        offset[j] = at;
        at += t->states[j];
    }
    for (int j = t->n_vars - 1; j >= 0; --j) {
        links[j] = offset[j] + c % t->states[j];
        c /= t->states[j];
    }
}

static double draw_score(test_rng *rng, int regime) {
    switch (regime) {
    case 0: return rng_normal(rng);
    case 1: return (double)(rng_int(rng, 5) - 2); /* ties */
    case 2: return rng_normal(rng) * pow(10.0, rng_int(rng, 5) - 2);
    default: return 0.0;
    }
}

static void random_case(test_rng *rng, dense_case *t) {
    memset(t, 0, sizeof *t);
    t->n_vars = 2 + rng_int(rng, 2);
    t->n_joint = 1;
    for (int j = 0; j < t->n_vars; ++j) {
        t->states[j] = 2 + rng_int(rng, 4);
        t->degree += t->states[j];
        t->n_joint *= t->states[j];
    }
    int regime = rng_int(rng, 4);
    int equal_d = rng_int(rng, 3) == 0;
    double d0 = exp(log(1e-3) + rng_uniform(rng) * log(1e6));
    for (int i = 0; i < t->degree; ++i) {
        t->a[i] = draw_score(rng, regime);
        t->d[i] = equal_d ? d0 : exp(log(1e-3) + rng_uniform(rng) * log(1e6));
    }
    int any_allowed = 0;
    for (int c = 0; c < t->n_joint; ++c) {
        t->b[c] = draw_score(rng, regime);
        t->forbidden[c] = rng_int(rng, 6) == 0;
        any_allowed |= !t->forbidden[c];
    }
    if (!any_allowed) t->forbidden[0] = 0;
}

static concord_graph *build(const dense_case *t) {
    concord_graph *g = concord_graph_new();
    int32_t vars[MAX_LINKS], ns[MAX_VARS];
    for (int j = 0; j < t->n_vars; ++j) {
        int32_t first;
        assert_int_equal(concord_add_multi_variable(g, t->states[j], NULL, false, &first), 0);
        ns[j] = t->states[j];
        for (int k = 0; k < t->states[j]; ++k) vars[first + k] = first + k;
    }
    double table[MAX_JOINT];
    for (int c = 0; c < t->n_joint; ++c) table[c] = t->forbidden[c] ? -INFINITY : t->b[c];
    assert_int_equal(concord_add_dense(g, t->n_vars, ns, vars, table, NULL), 0);
    return g;
}

typedef struct qp_run {
    concord_graph *g;
    active_set *state;
    factor_buffers buf;
    double *buffers;
    void *scratch;
} qp_run;

static void run_init(qp_run *r, const dense_case *t) {
    r->g = build(t);
    const factor *f = &r->g->factors[0];
    r->state = active_set_new(f);
    assert_non_null(r->state);
    r->buffers = calloc(4 * MAX_LINKS + MAX_JOINT, sizeof(double));
    r->scratch = malloc(factor_scratch_bytes(f) + 1);
    r->buf = (factor_buffers){r->buffers, r->buffers + MAX_LINKS, r->buffers + 2 * MAX_LINKS,
                              r->buffers + 3 * MAX_LINKS, r->buffers + 4 * MAX_LINKS, r->scratch};
}

static void run_free(qp_run *r) {
    concord_graph_free(r->g);
    active_set_free(r->state);
    free(r->buffers);
    free(r->scratch);
}

static qp_outcome run_solve(qp_run *r, const dense_case *t, double *u, double *v) {
    const factor *f = &r->g->factors[0];
    qp_outcome out;
    factor_qp_variables(f, r->state, r->g->link_neg + f->link_begin, t->a, t->b, t->d, u, v, 100,
                        &r->buf, &out);
    return out;
}

static double scale_of(const dense_case *t) {
    double s = 1.0;
    for (int i = 0; i < t->degree; ++i) s = fmax(s, fmax(fabs(t->a[i]), t->d[i]));
    for (int c = 0; c < t->n_joint; ++c) s = fmax(s, fabs(t->b[c]));
    return s;
}

/* The certificate: the active set is a convex combination of allowed joint
 * states reproducing (u, v), and the best joint state under the gradient
 * (a - D u, b) gains nothing over (u, v). */
static double assert_certified(const qp_run *r, const dense_case *t, const double *u,
                               const double *v) {
    double ru[MAX_LINKS] = {0}, rv[MAX_JOINT] = {0}, total = 0.0;
    for (int32_t k = 0; k < active_set_size(r->state); ++k) {
        double cu[MAX_LINKS], cv[MAX_JOINT];
        active_set_config(r->state, k, cu, cv);
        double w = active_set_weight(r->state, k);
        assert_true(w >= -1e-12);
        total += w;
        /* One allowed joint state, and one state per variable: its own. */
        int c = -1, on = 0;
        for (int j = 0; j < t->n_joint; ++j) {
            assert_true(cv[j] == 0.0 || cv[j] == 1.0);
            if (cv[j] == 1.0) c = j, ++on;
        }
        assert_int_equal(on, 1);
        assert_true(!t->forbidden[c]);
        int links[MAX_VARS];
        joint_links(t, c, links);
        on = 0;
        for (int i = 0; i < t->degree; ++i) on += cu[i] == 1.0;
        assert_int_equal(on, t->n_vars);
        for (int j = 0; j < t->n_vars; ++j) assert_true(cu[links[j]] == 1.0);
        for (int j = 0; j < t->n_vars; ++j) ru[links[j]] += w;
        rv[c] += w;
    }
    assert_true(fabs(total - 1.0) <= 1e-9);
    for (int i = 0; i < t->degree; ++i) assert_true(fabs(ru[i] - u[i]) <= 1e-9);
    for (int c = 0; c < t->n_joint; ++c) assert_true(fabs(rv[c] - v[c]) <= 1e-9);
    double here = 0.0, best = -INFINITY;
    for (int i = 0; i < t->degree; ++i) here += (t->a[i] - t->d[i] * u[i]) * u[i];
    for (int c = 0; c < t->n_joint; ++c) here += t->b[c] * v[c];
    for (int c = 0; c < t->n_joint; ++c) {
        if (t->forbidden[c]) continue;
        int links[MAX_VARS];
        joint_links(t, c, links);
        double s = t->b[c];
        for (int j = 0; j < t->n_vars; ++j) s += t->a[links[j]] - t->d[links[j]] * u[links[j]];
        best = fmax(best, s);
    }
    double gap = best - here;
    if (!(gap <= 1e-9 * scale_of(t))) fprintf(stderr, "Frank-Wolfe gap %g\n", gap);
    assert_true(gap <= 1e-9 * scale_of(t));
    return gap > 0.0 ? gap : 0.0;
}

/* The objective is strongly concave in u with modulus d, so a point whose
 * Frank-Wolfe gap is g lies within sqrt(2 g / d_i) of the optimum in
 * coordinate i: the tolerance two certified points may differ by. */
static double certified_distance(double gap, double d) { return sqrt(2.0 * gap / d); }

static double objective_of(const dense_case *t, const double *u, const double *v) {
    double obj = 0.0;
    for (int c = 0; c < t->n_joint; ++c) obj += t->b[c] * v[c];
    for (int l = 0; l < t->degree; ++l) obj += t->a[l] * u[l] - 0.5 * t->d[l] * u[l] * u[l];
    return obj;
}

/* Euclidean projection onto the simplex restricted to allowed entries. */
static void project_simplex(double *p, const int *forbidden, int n) {
    double sorted[MAX_JOINT];
    int m = 0;
    for (int c = 0; c < n; ++c)
        if (!forbidden[c]) sorted[m++] = p[c];
    for (int i = 1; i < m; ++i)
        for (int j = i; j > 0 && sorted[j - 1] < sorted[j]; --j) {
            double x = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = x;
        }
    double cum = 0.0, theta = 0.0;
    for (int k = 0; k < m; ++k) {
        cum += sorted[k];
        double th = (cum - 1.0) / (k + 1);
        if (sorted[k] - th > 0.0) theta = th;
    }
    for (int c = 0; c < n; ++c) p[c] = forbidden[c] ? 0.0 : fmax(p[c] - theta, 0.0);
}

/* An independent solve: FISTA over the joint distribution p, maximizing
 * sum_c p_c (b_c + sum_j a_{link}) - 1/2 sum_i d_i u_i(p)^2, u = marginals. */
/* Returns the objective of the point reached. */
static double fista(const dense_case *t, double *u) {
    double p[MAX_JOINT], y[MAX_JOINT], prev[MAX_JOINT], grad[MAX_JOINT];
    int links[MAX_JOINT][MAX_VARS];
    for (int c = 0; c < t->n_joint; ++c) {
        joint_links(t, c, links[c]);
        p[c] = y[c] = prev[c] = 0.0;
    }
    /* The Lipschitz constant of the gradient, the top eigenvalue of
     * M^T D M (M: joint states -> marginals), by power iteration. */
    double z[MAX_JOINT], lipschitz = 0.0;
    for (int c = 0; c < t->n_joint; ++c) z[c] = 1.0 + 0.01 * c;
    for (int it = 0; it < 200; ++it) {
        double m[MAX_LINKS] = {0}, norm = 0.0;
        for (int c = 0; c < t->n_joint; ++c)
            for (int j = 0; j < t->n_vars; ++j) m[links[c][j]] += z[c];
        for (int c = 0; c < t->n_joint; ++c) {
            double x = 0.0;
            for (int j = 0; j < t->n_vars; ++j) x += t->d[links[c][j]] * m[links[c][j]];
            grad[c] = x;
            norm += x * x;
        }
        norm = sqrt(norm);
        double zn = 0.0;
        for (int c = 0; c < t->n_joint; ++c) zn += z[c] * z[c];
        lipschitz = norm / sqrt(zn);
        for (int c = 0; c < t->n_joint; ++c) z[c] = grad[c] / norm;
    }
    lipschitz *= 1.01;
    project_simplex(p, t->forbidden, t->n_joint);
    memcpy(y, p, sizeof p);
    double momentum = 1.0;
    for (int it = 0; it < 400000; ++it) {
        double m[MAX_LINKS] = {0};
        for (int c = 0; c < t->n_joint; ++c)
            for (int j = 0; j < t->n_vars; ++j) m[links[c][j]] += y[c];
        for (int c = 0; c < t->n_joint; ++c) {
            grad[c] = t->b[c];
            for (int j = 0; j < t->n_vars; ++j) {
                int l = links[c][j];
                grad[c] += t->a[l] - t->d[l] * m[l];
            }
        }
        memcpy(prev, p, sizeof p);
        for (int c = 0; c < t->n_joint; ++c) p[c] = y[c] + grad[c] / lipschitz;
        project_simplex(p, t->forbidden, t->n_joint);
        double next = 0.5 * (1.0 + sqrt(1.0 + 4.0 * momentum * momentum));
        double change = 0.0;
        for (int c = 0; c < t->n_joint; ++c) {
            y[c] = p[c] + (momentum - 1.0) / next * (p[c] - prev[c]);
            change = fmax(change, fabs(p[c] - prev[c]));
        }
        momentum = next;
        if (it % 500 == 499) {
            /* restart the momentum: keeps convergence monotone */
            momentum = 1.0;
            memcpy(y, p, sizeof p);
        }
        if (change < 1e-16) break;
    }
    for (int i = 0; i < t->degree; ++i) u[i] = 0.0;
    for (int c = 0; c < t->n_joint; ++c)
        for (int j = 0; j < t->n_vars; ++j) u[links[c][j]] += p[c];
    return objective_of(t, u, p);
}

/* The DENSE MAP oracle, both ways it answers (the dense configuration and
 * the list of its ones, which the active set reads), against enumeration
 * of the allowed joint states: the configuration is the joint state's,
 * allowed, and worth the best score. */
static void the_dense_oracle_finds_the_best_allowed_joint_state(void **state) {
    (void)state;
    test_rng rng = {17};
    for (int trial = 0; trial < 2000; ++trial) {
        dense_case t;
        random_case(&rng, &t);
        concord_graph *g = build(&t);
        const factor *f = &g->factors[0];
        void *scratch = malloc(factor_scratch_bytes(f) + 1);
        double best = -INFINITY;
        for (int c = 0; c < t.n_joint; ++c) {
            if (t.forbidden[c]) continue;
            int links[MAX_VARS];
            joint_links(&t, c, links);
            double score = t.b[c];
            for (int j = 0; j < t.n_vars; ++j) score += t.a[links[j]];
            best = fmax(best, score);
        }
        double u[MAX_LINKS], v[MAX_JOINT];
        const double value = f->ops->map(f, t.a, t.b, u, v, scratch);
        int chosen = -1;
        for (int c = 0; c < t.n_joint; ++c) {
            assert_true(v[c] == 0.0 || v[c] == 1.0);
            if (v[c] == 1.0) {
                assert_int_equal(chosen, -1);
                chosen = c;
            }
        }
        assert_true(chosen >= 0 && !t.forbidden[chosen]);
        int links[MAX_VARS];
        joint_links(&t, chosen, links);
        double score = t.b[chosen];
        for (int i = 0, on = 0; i < t.degree; ++i) {
            const bool in_state = on < t.n_vars && links[on] == i;
            assert_true(u[i] == (in_state ? 1.0 : 0.0));
            if (in_state) score += t.a[links[on++]];
        }
        /* the oracle sums the state scores incrementally: equal up to rounding */
        const double rounding = 1e-13 * (t.n_vars + 1) * scale_of(&t);
        assert_true(fabs(value - best) <= rounding && fabs(score - best) <= rounding);
        int32_t ones[MAX_VARS + 1];
        double ones_value;
        const int32_t n = f->ops->map_ones(f, t.a, t.b, ones, &ones_value, scratch);
        assert_int_equal(n, t.n_vars + 1);
        for (int j = 0; j < t.n_vars; ++j) assert_int_equal(ones[j], links[j]);
        assert_int_equal(ones[t.n_vars], t.degree + chosen);
        assert_true(ones_value == value);
        free(scratch);
        concord_graph_free(g);
    }
}

static void dense_qp_is_certified_optimal_on_random_factors(void **state) {
    (void)state;
    test_rng rng = {11};
    for (int trial = 0; trial < 1500; ++trial) {
        dense_case t;
        random_case(&rng, &t);
        qp_run r;
        run_init(&r, &t);
        double u[MAX_LINKS], v[MAX_JOINT];
        qp_outcome q = run_solve(&r, &t, u, v);
        assert_true(q.exact);
        assert_certified(&r, &t, u, v);
        run_free(&r);
    }
}

static void dense_qp_matches_an_independent_solver(void **state) {
    (void)state;
    test_rng rng = {12};
    for (int trial = 0; trial < 1000; ++trial) {
        dense_case t;
        random_case(&rng, &t);
        /* FISTA's rate depends on the spread of d: keep it moderate here
         * (the certificate test covers the extreme weights). */
        for (int i = 0; i < t.degree; ++i) t.d[i] = 0.5 + rng_uniform(&rng);
        qp_run r;
        run_init(&r, &t);
        double u[MAX_LINKS], v[MAX_JOINT], ref[MAX_LINKS];
        assert_true(run_solve(&r, &t, u, v).exact);
        double gap = assert_certified(&r, &t, u, v);
        double ref_objective = fista(&t, ref);
        double objective = objective_of(&t, u, v);
        /* The active set is at least as good as the independent solve,
         * and the solve lies where its objective says it must: within
         * sqrt(2 (f(u) + gap - f(ref)) / d_i) of u. */
        assert_true(objective >= ref_objective - 1e-12 * scale_of(&t));
        double slack = objective + gap - ref_objective;
        for (int i = 0; i < t.degree; ++i) {
            double tol = certified_distance(slack > 0.0 ? slack : 0.0, t.d[i]) + 1e-9;
            if (fabs(u[i] - ref[i]) > tol)
                fprintf(stderr, "trial %d link %d: active set %.12f, FISTA %.12f, tol %g\n", trial,
                        i, u[i], ref[i], tol);
            assert_true(fabs(u[i] - ref[i]) <= tol);
        }
        run_free(&r);
    }
}

/* ADMM calls a factor again and again with nearby scores: the warm start
 * must land exactly where a cold start does. */
static void warm_started_solves_equal_cold_solves(void **state) {
    (void)state;
    test_rng rng = {13};
    for (int trial = 0; trial < 300; ++trial) {
        dense_case t;
        random_case(&rng, &t);
        qp_run warm;
        run_init(&warm, &t);
        for (int step = 0; step < 20; ++step) {
            for (int i = 0; i < t.degree; ++i) t.a[i] += 0.1 * rng_normal(&rng);
            if (step % 7 == 6)
                for (int i = 0; i < t.degree; ++i) t.d[i] *= 2.0; /* the penalty changed */
            double uw[MAX_LINKS], vw[MAX_JOINT], uc[MAX_LINKS], vc[MAX_JOINT];
            assert_true(run_solve(&warm, &t, uw, vw).exact);
            double gap_warm = assert_certified(&warm, &t, uw, vw);
            qp_run cold;
            run_init(&cold, &t);
            assert_true(run_solve(&cold, &t, uc, vc).exact);
            double gap_cold = assert_certified(&cold, &t, uc, vc);
            for (int i = 0; i < t.degree; ++i) {
                double tol = certified_distance(gap_warm, t.d[i]) +
                             certified_distance(gap_cold, t.d[i]) + 1e-12;
                if (fabs(uw[i] - uc[i]) > tol)
                    fprintf(stderr, "trial %d step %d link %d: warm %.15f cold %.15f tol %g\n", trial,
                            step, i, uw[i], uc[i], tol);
                assert_true(fabs(uw[i] - uc[i]) <= tol);
            }
            run_free(&cold);
        }
        run_free(&warm);
    }
}

/* Two binary variables with equal scores everywhere: the four joint states
 * are affinely dependent in u-space, which the degenerate step handles. */
static void affinely_dependent_configurations_are_handled(void **state) {
    (void)state;
    dense_case t = {0};
    t.n_vars = 2;
    t.states[0] = t.states[1] = 2;
    t.degree = 4;
    t.n_joint = 4;
    for (int i = 0; i < 4; ++i) t.d[i] = 1.0;
    double cases[][8] = {{0, 0, 0, 0, 1, 0, 0, 1},
                         {0.5, 0.5, 0.5, 0.5, 0, 1, 1, 0},
                         {1, 0, 0, 1, 0.3, 0.3, 0.3, 0.3},
                         {0.2, 0.1, -0.1, 0.4, 2, -1, -1, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        for (int i = 0; i < 4; ++i) t.a[i] = cases[k][i];
        for (int c = 0; c < 4; ++c) t.b[c] = cases[k][4 + c];
        qp_run r;
        run_init(&r, &t);
        double u[MAX_LINKS], v[MAX_JOINT];
        for (int rep = 0; rep < 3; ++rep) {
            assert_true(run_solve(&r, &t, u, v).exact);
            assert_certified(&r, &t, u, v);
        }
        run_free(&r);
    }
}

/* Small table scores spread the solution over up to 2k - 1 joint states:
 * the state must grow its room (16 at first) as the solve needs it, past
 * the former fixed limit of 128, and warm starts must keep working. */
static void solutions_beyond_the_initial_room_are_certified(void **state) {
    (void)state;
    test_rng rng = {14};
    const int sizes[] = {12, 40, 90};
    int32_t largest = 0;
    for (size_t n = 0; n < sizeof sizes / sizeof sizes[0]; ++n) {
        for (int trial = 0; trial < 2; ++trial) {
            pair_table t;
            pair_table_init(&t, sizes[n], 0.01, &rng);
            for (int step = 0; step < 3; ++step) {
                qp_outcome q = pair_table_solve(&t, 100000);
                assert_true(q.exact);
                assert_int_equal(q.error, CONCORD_OK);
                pair_table_assert_distribution(&t);
                const double gap = pair_table_relative_gap(&t);
                if (!(gap <= 1e-10)) fail_msg("k %d: relative Frank-Wolfe gap %g", t.k, gap);
                const int32_t size = active_set_size(t.state);
                assert_true(active_set_capacity(t.state) >= size);
                if (size > largest) largest = size;
                /* the next solve starts warm from this one */
                for (int i = 0; i < 2 * t.k; ++i) t.a[i] += 0.002 * rng_normal(&rng);
            }
            pair_table_free(&t);
        }
    }
    print_message("largest active set: %d configurations\n", largest);
    assert_true(largest > 128);
}

/* Every subset is allowed: the polytope is the unit cube, the QP is
 * separable and its solution is clip(a_i / d_i, 0, 1). Points inside the
 * cube take mixtures of up to degree + 1 vertices (fewer suffice for some:
 * the centre of a square is the midpoint of a diagonal), the most the
 * state may hold. */
static double cube_map(const factor *f, const double *a, const double *b, double *u, double *v,
                       void *scratch) {
    (void)b, (void)v, (void)scratch;
    double best = 0.0;
    for (int32_t i = 0; i < f->degree; ++i) {
        u[i] = a[i] > 0.0;
        best += a[i] > 0.0 ? a[i] : 0.0;
    }
    return best;
}

static const factor_ops cube_ops = {.name = "cube", .map = cube_map};

static void cube_solutions_stay_within_degree_plus_one(void **state) {
    (void)state;
    enum { D = 40 };
    test_rng rng = {15};
    factor f = {.ops = &cube_ops, .degree = D};
    double a[D], d[D], u[D], v[1], lit_a[D], lit_u[D], oracle_a[D], oracle_u[D], oracle_v[1];
    char scratch[1];
    factor_buffers buf = {lit_a, lit_u, oracle_a, oracle_u, oracle_v, scratch};
    int32_t largest = 0;
    for (int trial = 0; trial < 20; ++trial) {
        active_set *s = active_set_new(&f);
        assert_non_null(s);
        int interior = trial % 2 == 0;
        for (int i = 0; i < D; ++i) {
            d[i] = 0.5 + rng_uniform(&rng);
            /* interior: a / d in (0.05, 0.95); else some coordinates clip */
            double target = interior ? 0.05 + 0.9 * rng_uniform(&rng) : 2.0 * rng_uniform(&rng) - 0.5;
            a[i] = target * d[i];
        }
        active_set_result r = active_set_solve(s, &f, a, NULL, d, u, v, 100000, &buf);
        assert_true(r.exact);
        assert_int_equal(r.error, CONCORD_OK);
        for (int i = 0; i < D; ++i) {
            double expected = fmin(fmax(a[i] / d[i], 0.0), 1.0);
            if (!(fabs(u[i] - expected) <= 1e-9))
                fail_msg("trial %d coordinate %d: %.15g, expected %.15g", trial, i, u[i], expected);
        }
        assert_true(active_set_size(s) <= D + 1 && active_set_capacity(s) <= D + 1);
        if (active_set_size(s) > largest) largest = active_set_size(s);
        active_set_free(s);
    }
    print_message("largest active set: %d configurations of at most %d\n", largest, D + 1);
}

/* max_iter counts the oracle calls that check or improve a solution: a
 * cold solve with a budget of one starts its set with one call and checks
 * or improves it with a second. A vertex answer (every a / d outside
 * [0, 1]) is then certified at once; an interior one, which needs D + 1
 * configurations, is left unfinished after those two calls. */
static void a_cold_solve_checks_the_configuration_it_starts_with(void **state) {
    (void)state;
    enum { D = 40 };
    test_rng rng = {16};
    factor f = {.ops = &cube_ops, .degree = D};
    double a[D], d[D], u[D], v[1], lit_a[D], lit_u[D], oracle_a[D], oracle_u[D], oracle_v[1];
    char scratch[1];
    factor_buffers buf = {lit_a, lit_u, oracle_a, oracle_u, oracle_v, scratch};
    for (int interior = 0; interior < 2; ++interior) {
        active_set *s = active_set_new(&f);
        assert_non_null(s);
        for (int i = 0; i < D; ++i) {
            d[i] = 0.5 + rng_uniform(&rng);
            double target = interior ? 0.05 + 0.9 * rng_uniform(&rng)
                                     : (rng_uniform(&rng) < 0.5 ? -0.5 : 1.5);
            a[i] = target * d[i];
        }
        active_set_result r = active_set_solve(s, &f, a, NULL, d, u, v, 1, &buf);
        assert_int_equal(r.oracle_calls, 2);
        assert_int_equal(r.error, CONCORD_OK);
        assert_int_equal(r.exact, !interior);
        if (!interior)
            for (int i = 0; i < D; ++i) assert_true(u[i] == (a[i] > 0.0 ? 1.0 : 0.0));
        active_set_free(s);
    }
}

/* Values that must lie in [0, 1]: fails naming the first that does not. */
static void check_in_box(const double *x, int32_t n, const char *what, int seed, int graph) {
    for (int32_t i = 0; i < n; ++i)
        if (!(x[i] >= 0.0 && x[i] <= 1.0))
            fail_msg("seed %d graph %d %s[%d] = %.17g", seed, graph, what, (int)i, x[i]);
}

/* Every factor of g on its own (concord_solver_factor_qp) at the scores of
 * its variables: its u and v in the box. */
static void factor_qps_lie_in_the_box(concord_solver *solver, const concord_graph *g, int seed,
                                      int graph) {
    const double *theta = concord_variable_scores(g);
    for (int32_t f = 0; f < concord_num_factors(g); ++f) {
        int32_t degree, first, count;
        assert_int_equal(concord_factor_degree(g, f, &degree), CONCORD_OK);
        assert_int_equal(concord_factor_additionals(g, f, &first, &count), CONCORD_OK);
        int32_t *vars = malloc((size_t)degree * sizeof *vars);
        double *a = malloc((size_t)degree * sizeof *a), *u = malloc((size_t)degree * sizeof *u);
        double *v = malloc((size_t)(count ? count : 1) * sizeof *v);
        assert_true(vars && a && u && v);
        assert_int_equal(concord_factor_variables(g, f, vars, NULL), CONCORD_OK);
        for (int32_t j = 0; j < degree; ++j) a[j] = theta[vars[j]];
        assert_int_equal(concord_solver_factor_qp(solver, f, a, NULL, NULL, u, v, NULL),
                         CONCORD_OK);
        check_in_box(u, degree, "factor QP u", seed, graph);
        check_in_box(v, count, "factor QP v", seed, graph);
        free(vars);
        free(a);
        free(u);
        free(v);
    }
}

/* A mean of 0/1 configurations lies in [0, 1], though its weights sum to 1
 * only up to rounding: LP-MAP and LP-SparseMAP on generated parsers and
 * coupled sequences (head automata, sequences: the active set) return
 * every variable and additional value inside the box, and so does each
 * factor's QP on its own. Sums of weights once came out at 1 + 2^-52 on
 * 8 of these 60 graphs. */
static void solutions_through_the_active_set_lie_in_the_box(void **state) {
    (void)state;
    for (uint64_t seed = 1; seed <= 30; ++seed) {
        const gen_spec specs[] = {{GEN_SEQUENCES, seed, {3, 10, 5}},
                                  {GEN_PARSING, seed, {15, 4, 0}}};
        for (int k = 0; k < 2; ++k) {
            size_t size;
            char *text = generated_text_or_fail(&specs[k], &size);
            concord_graph **graphs;
            size_t count;
            assert_int_equal(concord_read_buffer(text, size, "generated", CONCORD_FORMAT_FG,
                                                 &graphs, &count, NULL, 0, NULL, NULL),
                             CONCORD_OK);
            const concord_graph *g = graphs[0];
            concord_solver *solver = new_solver_or_fail(g);
            concord_settings settings;
            concord_default_settings(&settings);
            for (int sparse = 0; sparse < 2; ++sparse) {
                assert_int_equal(sparse ? concord_solver_sparse(solver, &settings, NULL)
                                        : concord_solver_map(solver, &settings, NULL),
                                 CONCORD_OK);
                check_in_box(concord_solver_variables(solver), concord_num_variables(g),
                             sparse ? "LP-SparseMAP u" : "LP-MAP u", (int)seed, k);
                check_in_box(concord_solver_additionals(solver), concord_num_additionals(g),
                             sparse ? "LP-SparseMAP v" : "LP-MAP v", (int)seed, k);
            }
            factor_qps_lie_in_the_box(solver, g, (int)seed, k);
            /* PSDD's step-weighted average of MAP configurations, unconverged */
            settings.max_iter = 30;
            const int rc = concord_solver_psdd(solver, &settings, NULL);
            assert_true(rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED);
            check_in_box(concord_solver_variables(solver), concord_num_variables(g), "PSDD u",
                         (int)seed, k);
            check_in_box(concord_solver_additionals(solver), concord_num_additionals(g),
                         "PSDD v", (int)seed, k);
            concord_solver_free(solver);
            concord_free_graphs(graphs, count);
            free(text);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_dense_oracle_finds_the_best_allowed_joint_state),
        cmocka_unit_test(dense_qp_is_certified_optimal_on_random_factors),
        cmocka_unit_test(dense_qp_matches_an_independent_solver),
        cmocka_unit_test(warm_started_solves_equal_cold_solves),
        cmocka_unit_test(affinely_dependent_configurations_are_handled),
        cmocka_unit_test(solutions_beyond_the_initial_room_are_certified),
        cmocka_unit_test(cube_solutions_stay_within_degree_plus_one),
        cmocka_unit_test(a_cold_solve_checks_the_configuration_it_starts_with),
        cmocka_unit_test(solutions_through_the_active_set_lie_in_the_box),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
