/*
 * The closed-form weighted QP of every factor kind, checked against an
 * independent reference. For each kind, thousands of random one-factor
 * problems (degrees 1..8, random negations, scores from several regimes
 * including ties and scales 1e-3..1e3, curvatures d from 1e-3 to 1e3) are
 * solved through the library's variable-space entry point
 * factor_qp_variables and by ref_qp (Frank-Wolfe over the enumerated
 * vertices, exact active-set polish, verified KKT certificate; see
 * support/ref_factor.c). The library's u must equal the reference, its
 * objective must equal the optimum, its point must lie in the polytope
 * (checked by an LP over the allowed configurations), and PAIR's v must
 * equal the reference whenever the score b makes it unique. A hand-solved
 * set of cases checks the reference itself, and known inside and outside
 * points check the feasibility test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factor.h"
#include "graph.h"
#include "ref_factor.h"
#include "ref_semantics.h"
#include "testutil.h"

/* The AddressSanitizer twin checks the first quarter of the cases (the
 * same draws): memory errors show on any of them, and all 4000 took it 14
 * of the suite's seconds. */
enum { CASES_PER_KIND = UNDER_ASAN ? 1000 : 4000, MAX_TEST_DEGREE = 8, MAX_REPORTS = 5 };

/*
 * Tolerances. u lies in [0, 1], so its errors are absolute. Even an exact
 * algorithm in double precision computes an interior coordinate as
 * (a_i - tau c_i) / d_i, with |a_i| and |tau c_i| up to the input scale
 * S = sum|a| + sum d + sum|b| and d_i down to d_min: cancellation alone
 * costs ~eps * S / d_min. So the tolerance is relative to the conditioning
 * kappa = S / d_min: U_REL * eps * kappa, capped at U_CAP = 1e-8. On
 * well-scaled inputs (kappa ~ 10) that is ~1e-12, so even tiny errors are
 * caught; on the worst ones (scores 1e3, d 1e-3, kappa ~ 1e7) the cap
 * applies. The reference's own error is of the same order (its KKT solve
 * has condition number ~kappa, cured by iterative refinement). A point
 * whose u is off by delta can be outside the polytope by ~delta and its
 * objective off by at most (sum|a| + sum d) * delta <= S * delta (to first
 * order: at a constrained optimum the gradient need not vanish), so the
 * feasibility tolerance is the same as for u (but at least FEAS_FLOOR:
 * the membership LP is solved by GLPK's simplex with bound tolerance
 * 1e-12, so distances below ~1e-12 are not resolved) and the objective's
 * is S times it. Measured: over 330,000 cases (30,000 per kind, another
 * seed) the largest |du| was 1.5 eps kappa, so U_REL = 50 leaves a margin
 * of ~30 while staying far below any real error.
 */
#define U_REL 50.0
#define U_CAP 1e-8
#define FEAS_FLOOR 1e-11
/* PAIR's v is unique when b != 0: moving v by delta at fixed u changes the
 * objective linearly by b delta, so the reference's final linear-oracle gap
 * (at rounding level, ~eps S) bounds |b| * |v error|. v is compared (with
 * the u tolerance) when |b| >= 1e-6 * S, which pins the reference's v to
 * ~1e-9; otherwise v is only checked feasible (jointly with u, by the
 * membership LP) and through the objective. */
#define V_UNIQUE_B 1e-6

static const double eps = 2.220446049250313e-16;

typedef struct qp_stats {
    double max_du, max_dv, max_dobj, max_viol;
    double max_du_ratio; /* largest |du| / (eps kappa) */
    int failures, reference_failures;
} qp_stats;

/* One random problem of the given kind: library versus reference. */
static void check_one(test_rng *r, ref_kind kind, int case_id, qp_stats *stats) {
    ref_graph *rg = calloc(1, sizeof *rg);
    assert_non_null(rg);
    ref_factor *f = &rg->factors[0];
    ref_draw_factor(r, kind, MAX_TEST_DEGREE, f);
    int p = f->degree, q = ref_num_additionals(f);
    double d[REF_MAX_DEGREE], a[REF_MAX_DEGREE], b[1] = {0.0};
    ref_draw_curvatures(r, p, d);
    ref_draw_scores(r, f, d, a, b);

    concord_graph *g = ref_build_single_factor(rg, b);
    assert_non_null(g);
    const factor *fa = &g->factors[0];
    assert_int_equal(fa->degree, p);
    assert_int_equal(fa->n_add, q);
    /* Exact-size buffers, so that ASan sees any access out of bounds. */
    size_t scratch_bytes = factor_scratch_bytes(fa);
    /* Closed forms use the literal buffers only; the oracle ones stay NULL. */
    factor_buffers buf = {.lit_a = malloc((size_t)p * sizeof(double)),
                          .lit_u = malloc((size_t)p * sizeof(double)),
                          .scratch = scratch_bytes ? malloc(scratch_bytes) : NULL};
    double *ain = malloc((size_t)p * sizeof(double)), *din = malloc((size_t)p * sizeof(double));
    double *u = malloc((size_t)p * sizeof(double));
    double *bin = q ? malloc((size_t)q * sizeof(double)) : NULL;
    double *v = q ? malloc((size_t)q * sizeof(double)) : NULL;
    assert_true(buf.lit_a && buf.lit_u && (buf.scratch || !scratch_bytes) && ain && din && u);
    assert_true(!q || (bin && v));
    memcpy(ain, a, (size_t)p * sizeof(double));
    memcpy(din, d, (size_t)p * sizeof(double));
    if (q) memcpy(bin, b, (size_t)q * sizeof(double));
    qp_outcome out;
    factor_qp_variables(fa, NULL, g->link_neg + fa->link_begin, ain, bin, din, u, v, 1, &buf,
                        &out);
    assert_true(out.exact);

    double uref[REF_MAX_DEGREE], vref[1] = {0.0};
    ref_qp_report rep;
    int ref_status = ref_qp(f, a, b, d, uref, vref, &rep);
    double scale = rep.scale, d_min = HUGE_VAL;
    for (int j = 0; j < p; ++j) d_min = fmin(d_min, d[j]);
    double kappa = scale / d_min;
    double tol = fmin(U_CAP, U_REL * eps * kappa);

    bool bad = false;
    double du = 0.0, dv = 0.0;
    for (int j = 0; j < p; ++j) du = fmax(du, fabs(u[j] - uref[j]));
    if (!(du <= tol)) bad = true;
    double obj = ref_qp_objective(f, a, b, d, u, v);
    double obj_ref = ref_qp_objective(f, a, b, d, uref, vref);
    double dobj = fabs(obj - obj_ref) / scale;
    if (!(dobj <= tol)) bad = true;
    if (q && fabs(b[0]) >= V_UNIQUE_B * scale) {
        dv = fabs(v[0] - vref[0]);
        if (!(dv <= tol)) bad = true;
    }
    double viol = ref_polytope_violation(f, u, v);
    if (!(viol <= fmax(tol, FEAS_FLOOR))) bad = true;
    if (ref_status != 0) {
        ++stats->reference_failures;
        bad = true;
    }
    stats->max_du = fmax(stats->max_du, du);
    stats->max_du_ratio = fmax(stats->max_du_ratio, du / (eps * kappa));
    stats->max_dv = fmax(stats->max_dv, dv);
    stats->max_dobj = fmax(stats->max_dobj, dobj);
    stats->max_viol = fmax(stats->max_viol, viol);
    if (bad && stats->failures++ < MAX_REPORTS) {
        fprintf(stderr,
                "%s QP case %d: |du| %.3g |dv| %.3g |dobj|/scale %.3g violation %.3g "
                "(tolerance %.3g)%s\n",
                ref_kind_name(kind), case_id, du, dv, dobj, viol, tol,
                ref_status ? " (reference not verified)" : "");
        ref_print_case(f, a, b, d);
        ref_print_vector("library u", p, u);
        ref_print_vector("reference u", p, uref);
        if (q) fprintf(stderr, "  library v %.17g reference v %.17g\n", v[0], vref[0]);
        fprintf(stderr, "  reference: gap %.3g scale %.3g support %d fw %d polish %d\n", rep.gap,
                rep.scale, rep.support, rep.fw_iterations, rep.polish_steps);
    }

    free(buf.lit_a);
    free(buf.lit_u);
    free(buf.scratch);
    free(ain);
    free(din);
    free(u);
    free(bin);
    free(v);
    concord_graph_free(g);
    free(rg);
}

static void check_kind(ref_kind kind) {
    test_rng r = {0x5eed0000u + (uint64_t)kind * 7919u};
    qp_stats stats = {0};
    for (int c = 0; c < CASES_PER_KIND; ++c) check_one(&r, kind, c, &stats);
    printf("%-12s max |du| %.2e (%.2g eps kappa)  |dv| %.2e  |dobj|/scale %.2e  violation %.2e\n",
           ref_kind_name(kind), stats.max_du, stats.max_du_ratio, stats.max_dv, stats.max_dobj,
           stats.max_viol);
    if (stats.failures)
        fail_msg("%s: %d of %d QP cases disagree with the reference (%d unverified references)",
                 ref_kind_name(kind), stats.failures, CASES_PER_KIND, stats.reference_failures);
}

static void xor_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_XOR);
}

static void xorout_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_XOROUT);
}

static void atmostone_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_ATMOSTONE);
}

static void or_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_OR);
}

static void orout_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_OROUT);
}

static void andout_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_ANDOUT);
}

static void imply_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_IMPLY);
}

static void budget_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_BUDGET);
}

static void exact_budget_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_BUDGET_EXACT);
}

static void knapsack_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_KNAPSACK);
}

static void pair_qp_equals_reference_on_random_inputs(void **state) {
    (void)state;
    check_kind(REF_PAIR);
}

/* The library's closed form on (a, b, d) in variable space: u, v. */
static void library_qp(const concord_graph *g, const double *a, const double *b,
                       const double *d, double *u, double *v) {
    const factor *fa = &g->factors[0];
    size_t scratch_bytes = factor_scratch_bytes(fa);
    double lit_a[REF_MAX_DEGREE], lit_u[REF_MAX_DEGREE];
    factor_buffers buf = {.lit_a = lit_a, .lit_u = lit_u,
                          .scratch = scratch_bytes ? malloc(scratch_bytes) : NULL};
    assert_true(buf.scratch || !scratch_bytes);
    qp_outcome out;
    factor_qp_variables(fa, NULL, g->link_neg + fa->link_begin, a, b, d, u, v, 1, &buf, &out);
    assert_true(out.exact);
    free(buf.scratch);
}

/* Whether the library negates link j of f in literal space (concord.h:
 * XOROUT is an XOR whose last link is flipped, ANDOUT an OROUT with all
 * flipped, IMPLY an OR with all but the last flipped), on top of the
 * caller's negations. */
static bool literal_negated(const ref_factor *f, int j) {
    bool last = j == f->degree - 1;
    bool flipped = (f->kind == REF_XOROUT && last) || f->kind == REF_ANDOUT ||
                   (f->kind == REF_IMPLY && !last);
    return f->negated[j] != flipped;
}

/*
 * Scores far beyond the weights, up to 1e300 with d near 1: a_j = k_j m +
 * r_j (and b = k_b m + r_b) with tiers k in {-2, ..., 2}, m = 2^p, residuals
 * r multiples of 1/64 in [-2, 2] and d multiples of 1/8 in [1/8, 2]
 * (KNAPSACK: costs multiples of 1/8 up to 2, a budget a multiple of 1/8).
 * Once m is beyond a threshold of the order of degree (|r| + d), the
 * solution lies on the face of the polytope that maximizes k.u + k_b v and
 * solves the QP with scores r there: it no longer depends on m. So the
 * library at m = 2^p must give the reference's answer at m = 2^14.
 * Residuals need bits below m: beyond p = 40 they are kept on tier 0 only.
 * A link negated in literal space takes the input d - a, which is rounded
 * once a is beyond 2^53 d (the weight is lost in it): such links stay on
 * tier 0 there, and a second pass with negations everywhere asks only for
 * a point of the polytope.
 */
static void draw_tiered(test_rng *r, ref_kind kind, int p, bool exact_inputs, ref_factor *f,
                        double *a, double *a_ref, double *b, double *b_ref, double *d) {
    ref_draw_factor(r, kind, MAX_TEST_DEGREE, f);
    if (kind == REF_KNAPSACK) {
        double total = 0.0;
        for (int j = 0; j < f->degree; ++j) total += f->costs[j] = rng_int(r, 17) / 8.0;
        f->budget = rng_int(r, (int)(8 * total) + 1) / 8.0;
    }
    bool residual_room = p <= 40;
    if (exact_inputs && !residual_room)
        for (int j = 0; j < f->degree; ++j) f->negated[j] = false;
    for (int j = 0; j < f->degree + 1; ++j) {
        int tier = rng_int(r, 5) - 2;
        double residual = rng_int(r, 4) ? (rng_int(r, 257) - 128) / 64.0 : 0.0;
        bool link = j < f->degree;
        if (exact_inputs && !residual_room && link && literal_negated(f, j)) tier = 0;
        if (!residual_room && tier != 0) residual = 0.0;
        double *x = link ? &a[j] : b, *x_ref = link ? &a_ref[j] : b_ref;
        *x = ldexp(tier, p) + residual;
        *x_ref = ldexp(tier, 14) + residual;
        if (link) d[j] = rng_int(r, 2) ? 1.0 : (1 + rng_int(r, 16)) / 8.0;
    }
}

static void closed_forms_at_huge_scores_answer_as_their_tiers_do(void **state) {
    (void)state;
    test_rng r = {0x1e300u};
    for (int kind = 0; kind < REF_NUM_KINDS; ++kind) {
        int failures = 0;
        for (int c = 0; c < 600; ++c) {
            bool exact_inputs = c % 3 != 0;
            /* up to 2^995: scores reach 2 m, and 2^997 > 1e300 */
            int p = exact_inputs ? 16 + rng_int(&r, 980) : 54 + rng_int(&r, 942);
            ref_graph *rg = calloc(1, sizeof *rg);
            assert_non_null(rg);
            ref_factor *f = &rg->factors[0];
            double a[REF_MAX_DEGREE], a_ref[REF_MAX_DEGREE], d[REF_MAX_DEGREE];
            double b[1], b_ref[1];
            draw_tiered(&r, (ref_kind)kind, p, exact_inputs, f, a, a_ref, b, b_ref, d);
            concord_graph *g = ref_build_single_factor(rg, b_ref); /* its own b is not used */
            assert_non_null(g);
            int q = ref_num_additionals(f);
            double u[REF_MAX_DEGREE], v[1] = {0.0}, uref[REF_MAX_DEGREE], vref[1] = {0.0};
            library_qp(g, a, b, d, u, v);
            double viol = ref_polytope_violation(f, u, v);
            bool bad = !(viol <= 1e-9);
            double du = 0.0;
            if (exact_inputs) {
                ref_qp_report rep;
                assert_int_equal(ref_qp(f, a_ref, b_ref, d, uref, vref, &rep), 0);
                double tol = fmin(U_CAP, U_REL * eps * rep.scale / 0.125);
                for (int j = 0; j < f->degree; ++j) du = fmax(du, fabs(u[j] - uref[j]));
                if (!(du <= tol)) bad = true;
            }
            if (bad && failures++ < MAX_REPORTS) {
                fprintf(stderr, "%s at m = 2^%d: |du| %.3g, violation %.3g\n",
                        ref_kind_name((ref_kind)kind), p, du, viol);
                ref_print_case(f, a, b, d);
                ref_print_vector("library u", f->degree, u);
                if (exact_inputs) ref_print_vector("reference u (m = 2^14)", f->degree, uref);
                if (q) fprintf(stderr, "  library v %.17g\n", v[0]);
            }
            concord_graph_free(g);
            free(rg);
        }
        if (failures)
            fail_msg("%s: %d cases at huge scores disagree with their tiers",
                     ref_kind_name((ref_kind)kind), failures);
    }
}

/* Cases at huge scores solved by hand, each once lost to rounding. XOR
 * (m, -m, m): the two tied items share the simplex. BUDGET 2 of (m, 1,
 * 1/2): the first at 1, the others 1 - tau, 1/2 - tau summing to 1. OROUT
 * (m, r, m | -2m): k.u = u_1 + u_3 - 2t is at most 0, so u_1 = u_3 = t = s,
 * and r u_2 - (3 s^2 + u_2^2)/2 with u_2 <= s peaks at u_2 = s = r/4.
 * OROUT (-m | m) of degree 2 (t = u_1): the scores cancel on the diagonal,
 * so the point is 0. PAIR (3/10, -1e16), b = 1e16 + 2, d = 2: on the
 * diagonal (23/10) s - 2 s^2 peaks at s = 23/40. */
static void closed_forms_at_huge_scores_match_hand_solved_cases(void **state) {
    (void)state;
    const double m996 = ldexp(1.0, 996), m750 = ldexp(1.0, 750), m288 = ldexp(1.0, 288);
    static const double s = 0.36328125;
    const struct {
        ref_kind kind;
        int degree;
        double budget, a[4], b, d[4], u[4];
    } cases[] = {
        {REF_XOR, 3, 0, {m996, -m996, m996}, 0, {1, 1, 1}, {0.5, 0, 0.5}},
        {REF_BUDGET, 3, 2, {m996, 1, 0.5}, 0, {1, 1, 1}, {1, 0.75, 0.25}},
        {REF_OROUT, 4, 0, {m750, 4 * s, m750, -2 * m750}, 0, {1, 1, 1, 1}, {s, s, s, s}},
        {REF_OROUT, 2, 0, {-m288, m288}, 0, {1.625, 1}, {0, 0}},
        {REF_PAIR, 2, 0, {0.3, -1e16}, 1e16 + 2, {2, 2}, {0.575, 0.575}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        ref_graph *rg = calloc(1, sizeof *rg);
        assert_non_null(rg);
        ref_factor *f = &rg->factors[0];
        f->kind = cases[c].kind;
        f->degree = cases[c].degree;
        f->budget = cases[c].budget;
        for (int j = 0; j < f->degree; ++j) f->vars[j] = j;
        double b[1] = {cases[c].b}, u[4], v[1] = {0.0};
        concord_graph *g = ref_build_single_factor(rg, b);
        assert_non_null(g);
        library_qp(g, cases[c].a, b, cases[c].d, u, v);
        for (int j = 0; j < f->degree; ++j) {
            if (!(fabs(u[j] - cases[c].u[j]) <= 1e-12))
                fail_msg("%s case %zu: u[%d] is %.17g, %.17g expected",
                         ref_kind_name(f->kind), c, j, u[j], cases[c].u[j]);
        }
        if (f->kind == REF_PAIR) assert_true(fabs(v[0] - 0.575) <= 1e-12);
        concord_graph_free(g);
        free(rg);
    }
}

/* Scores and weights scaled together by 2^-980 or 2^980 (the same QP)
 * against the reference at their O(1) values, and tiny scores (near
 * 1e-300) with the same weights against the reference at zero scores. */
static void closed_forms_at_tiny_and_scaled_scores_match_the_reference(void **state) {
    (void)state;
    test_rng r = {0x7e57u};
    for (int kind = 0; kind < REF_NUM_KINDS; ++kind) {
        int failures = 0;
        for (int c = 0; c < 400; ++c) {
            ref_graph *rg = calloc(1, sizeof *rg);
            assert_non_null(rg);
            ref_factor *f = &rg->factors[0];
            ref_draw_factor(&r, (ref_kind)kind, MAX_TEST_DEGREE, f);
            int p = f->degree;
            double d[REF_MAX_DEGREE], a[REF_MAX_DEGREE], b[1] = {0.0};
            ref_draw_curvatures(&r, p, d);
            ref_draw_scores(&r, f, d, a, b);
            int e = c % 2 ? 980 : -980;
            double as[REF_MAX_DEGREE], ds[REF_MAX_DEGREE], bs[1] = {ldexp(b[0], e)};
            double tiny[REF_MAX_DEGREE], btiny[1] = {ldexp(b[0], -1000)};
            for (int j = 0; j < p; ++j) {
                as[j] = ldexp(a[j], e);
                ds[j] = ldexp(d[j], e);
                tiny[j] = ldexp(a[j], -1000);
            }
            concord_graph *g = ref_build_single_factor(rg, b); /* its own b is not used */
            assert_non_null(g);
            double u[REF_MAX_DEGREE], v[1] = {0.0}, uref[REF_MAX_DEGREE], vref[1] = {0.0};
            ref_qp_report rep;
            double du = 0.0;
            library_qp(g, as, bs, ds, u, v);
            assert_int_equal(ref_qp(f, a, b, d, uref, vref, &rep), 0);
            double d_min = HUGE_VAL;
            for (int j = 0; j < p; ++j) d_min = fmin(d_min, d[j]);
            double tol = fmin(U_CAP, U_REL * eps * rep.scale / d_min);
            for (int j = 0; j < p; ++j) du = fmax(du, fabs(u[j] - uref[j]));
            /* u moves by at most |a| / d_min with a: the solution at 0 */
            double zero[REF_MAX_DEGREE] = {0.0}, bzero[1] = {0.0};
            library_qp(g, tiny, btiny, d, u, v);
            assert_int_equal(ref_qp(f, zero, bzero, d, uref, vref, &rep), 0);
            for (int j = 0; j < p; ++j) du = fmax(du, fabs(u[j] - uref[j]));
            if (!(du <= fmax(tol, 1e-12)) && failures++ < MAX_REPORTS) {
                fprintf(stderr, "%s scaled by 2^%d or tiny: |du| %.3g\n",
                        ref_kind_name((ref_kind)kind), e, du);
                ref_print_case(f, a, b, d);
            }
            concord_graph_free(g);
            free(rg);
        }
        if (failures)
            fail_msg("%s: %d cases at tiny or scaled scores disagree with the reference",
                     ref_kind_name((ref_kind)kind), failures);
    }
}

/* Cases solved by hand (stationarity on the right face), so that the
 * reference is itself checked against something other than the library. */
typedef struct hand_case {
    ref_kind kind;
    int degree;
    bool negated[3];
    double budget, costs[3];
    double a[3], b, d[3];
    double u[3], v;
} hand_case;

static void reference_qp_matches_hand_solved_cases(void **state) {
    (void)state;
    static const hand_case cases[] = {
        /* The unit interval: u = clip(a / d). */
        {REF_ATMOSTONE, 1, {0}, 0, {0}, {0.3}, 0, {1}, {0.3}, 0},
        {REF_ATMOSTONE, 1, {0}, 0, {0}, {3.0}, 0, {2}, {1.0}, 0},
        {REF_ATMOSTONE, 1, {1}, 0, {0}, {-1.0}, 0, {4}, {0.0}, 0},
        /* u1 + u2 = 1: 0.5 - u1 + (1 - u1) = 0. */
        {REF_XOR, 2, {0, 0}, 0, {0}, {0.5, 0.0}, 0, {1, 1}, {0.75, 0.25}, 0},
        /* u1 + (1 - u2) = 1, so u1 = u2 = t: max 0.7 t - t^2. */
        {REF_XOR, 2, {0, 1}, 0, {0}, {0.5, 0.2}, 0, {1, 1}, {0.35, 0.35}, 0},
        /* u1 + u2 >= 1 binds: symmetric. */
        {REF_OR, 2, {0, 0}, 0, {0}, {-1.0, -1.0}, 0, {1, 1}, {0.5, 0.5}, 0},
        /* Three equal scores, at most one on: 1 - tau each, sum 1. */
        {REF_BUDGET, 3, {0, 0, 0}, 1, {0}, {1, 1, 1}, 0, {1, 1, 1}, {1.0 / 3, 1.0 / 3, 1.0 / 3}, 0},
        /* Projection of (1, 1) onto u1 + 2 u2 <= 1: (1, 1) - 0.4 (1, 2). */
        {REF_KNAPSACK, 2, {0, 0}, 1, {1, 2}, {1, 1}, 0, {1, 1}, {0.6, 0.2}, 0},
        /* Same on literals l2 = 1 - u2: u2 = 1 - 0.2. */
        {REF_KNAPSACK, 2, {0, 1}, 1, {1, 2}, {1, 0}, 0, {1, 1}, {0.6, 0.8}, 0},
        /* PAIR, b = 1 > 0: v = min(u1, u2), symmetric t - t^2. */
        {REF_PAIR, 2, {0, 0}, 0, {0}, {0, 0}, 1, {1, 1}, {0.5, 0.5}, 0.5},
        /* PAIR, b = -3: v = max(0, u1 + u2 - 1), optimum on u1 + u2 <= 1. */
        {REF_PAIR, 2, {0, 0}, 0, {0}, {1, 1}, -3, {1, 1}, {0.5, 0.5}, 0.0},
        /* OROUT of degree 2 is the diagonal u1 = u2 = t: max 0.8 t - t^2. */
        {REF_OROUT, 2, {0, 0}, 0, {0}, {0.5, 0.3}, 0, {1, 1}, {0.4, 0.4}, 0},
        /* OROUT of degree 3 with u3 >= u1, u2 binding (multipliers 2/3):
         * u1 = u2 = u3 = s, max s - 3/2 s^2. */
        {REF_OROUT, 3, {0, 0, 0}, 0, {0}, {1, 1, -1}, 0, {1, 1, 1}, {1.0 / 3, 1.0 / 3, 1.0 / 3}, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        const hand_case *hc = &cases[c];
        ref_factor f;
        memset(&f, 0, sizeof f);
        f.kind = hc->kind;
        f.degree = hc->degree;
        f.budget = hc->budget;
        for (int j = 0; j < hc->degree; ++j) {
            f.vars[j] = j;
            f.negated[j] = hc->negated[j];
            f.costs[j] = hc->costs[j];
        }
        double u[3], v[1] = {0.0}, b[1] = {hc->b};
        assert_int_equal(ref_qp(&f, hc->a, b, hc->d, u, v, NULL), 0);
        for (int j = 0; j < hc->degree; ++j) assert_true(fabs(u[j] - hc->u[j]) <= 1e-12);
        if (hc->kind == REF_PAIR) assert_true(fabs(v[0] - hc->v) <= 1e-12);
    }
}

/* The feasibility check used above must not be vacuous: the centroid of a
 * factor's vertices is inside, a point pushed out of the unit box (or, for
 * XOR, off the simplex) is not. */
static void polytope_check_accepts_centroids_and_rejects_outside_points(void **state) {
    (void)state;
    test_rng r = {0xfea5u};
    for (int kind = 0; kind < REF_NUM_KINDS; ++kind) {
        for (int c = 0; c < 50; ++c) {
            ref_factor f;
            ref_draw_factor(&r, (ref_kind)kind, MAX_TEST_DEGREE, &f);
            ref_points pts;
            assert_int_equal(ref_factor_vertices(&f, &pts), 0);
            double u[REF_MAX_DEGREE] = {0.0}, v[1] = {0.0};
            for (int s = 0; s < pts.count; ++s) {
                for (int j = 0; j < pts.degree; ++j) u[j] += pts.u[s * pts.degree + j] / pts.count;
                for (int k = 0; k < pts.n_add; ++k) v[k] += pts.v[s * pts.n_add + k] / pts.count;
            }
            ref_points_free(&pts);
            assert_true(ref_polytope_violation(&f, u, v) <= 1e-12);
            int j = rng_int(&r, f.degree);
            double keep = u[j];
            u[j] = rng_int(&r, 2) ? -0.01 : 1.01;
            assert_true(ref_polytope_violation(&f, u, v) >= 0.01 * (1.0 - 1e-9));
            u[j] = keep;
            if (f.kind == REF_PAIR) {
                v[0] = 1.01;
                assert_true(ref_polytope_violation(&f, u, v) >= 0.01 * (1.0 - 1e-9));
            }
        }
    }
    /* XOR of degree 3 at (1/2, 1/2, 1/2): max-norm distance 1/6 to the
     * simplex, and the bound is at most degree times the distance. */
    ref_factor f;
    memset(&f, 0, sizeof f);
    f.kind = REF_XOR;
    f.degree = 3;
    double u[3] = {0.5, 0.5, 0.5};
    double viol = ref_polytope_violation(&f, u, NULL);
    assert_true(viol >= 1.0 / 6.0 - 1e-12 && viol <= 0.5 + 1e-12);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_qp_matches_hand_solved_cases),
        cmocka_unit_test(polytope_check_accepts_centroids_and_rejects_outside_points),
        cmocka_unit_test(xor_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(xorout_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(atmostone_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(or_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(orout_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(andout_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(imply_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(budget_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(exact_budget_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(knapsack_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(pair_qp_equals_reference_on_random_inputs),
        cmocka_unit_test(closed_forms_at_huge_scores_answer_as_their_tiers_do),
        cmocka_unit_test(closed_forms_at_huge_scores_match_hand_solved_cases),
        cmocka_unit_test(closed_forms_at_tiny_and_scaled_scores_match_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
