/*
 * The C code of the documentation compiles, runs and tells the truth:
 * every ```c block of docs/c_api.md and README.md, cut out of the pages by
 * tests/doc_blocks.awk. A block's file-scope lines are included here at
 * file scope and its statements inside a test, which first declares what
 * the block takes from the text around it (a graph g, a solver s, ...) and
 * afterwards checks what the block's comments claim against a computation
 * of its own (brute force, projections), reading the claimed numbers from
 * the page itself. README.md's block is a whole program (doc_readme, built
 * from the page), which the last test runs.
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "c_api_count.h"
#include "child_process.h"
#include "concord.h"
#include "readme_count.h"
#include "testutil.h"

_Static_assert(C_API_BLOCKS == 7, "docs/c_api.md has C blocks this test does not run");
_Static_assert(README_BLOCKS == 1, "README.md has C blocks this test does not run");

/* ---- Claims and independent answers ------------------------------------ */

/* The numbers a page claims: the `count` numbers between the braces that
 * follow `code` on the page's first line that starts with it (after
 * indentation). */
static void claimed(const char *page, const char *code, int count, double *values) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", CONCORD_SOURCE_DIR, page);
    char *text = read_whole_file_or_fail(path, NULL);
    const char *line = text, *start;
    while (strncmp(start = line + strspn(line, " "), code, strlen(code)) != 0) {
        line = strchr(line, '\n');
        if (!line) fail_msg("%s: no line starts with \"%s\"", page, code);
        ++line;
    }
    const char *p = start + strlen(code) + strcspn(start + strlen(code), "{\n");
    if (*p != '{') fail_msg("%s: no {...} after \"%s\"", page, code);
    for (int i = 0; i < count; ++i) {
        const char *number = p + 1;
        char *end;
        values[i] = strtod(number, &end);
        p = end + strspn(end, " ");
        if (end == number || *p != (i + 1 < count ? ',' : '}'))
            fail_msg("%s: the braces after \"%s\" do not hold %d numbers", page, code, count);
    }
    free(text);
}

/* The claim of `code`'s line (see claimed) is `expected`, to 1e-12. */
static void assert_claim(const char *page, const char *code, int count, const double *expected) {
    double claim[8];
    assert_true(count <= 8);
    claimed(page, code, count, claim);
    for (int i = 0; i < count; ++i)
        if (!(fabs(claim[i] - expected[i]) <= 1e-12))
            fail_msg("%s, at \"%s\": claims %g as entry %d, which is %.17g", page, code,
                     claim[i], i, expected[i]);
}

/* What concord computed (`what`) is `expected`, to `tolerance`. */
static void assert_near(const char *what, const double *got, const double *expected, int n,
                        double tolerance) {
    for (int i = 0; i < n; ++i)
        if (!(fabs(got[i] - expected[i]) <= tolerance))
            fail_msg("%s, entry %d: %.17g, expected %.17g", what, i, got[i], expected[i]);
}

/* The best 0/1 assignment of n <= 16 variables at least `least` and at
 * most `most` of which are 1, by trying them all; u gets it. */
static void best_assignment(const double *theta, int n, int least, int most, double *u) {
    double best = -INFINITY;
    for (unsigned bits = 0; bits < 1u << n; ++bits) {
        int on = 0;
        double value = 0;
        for (int i = 0; i < n; ++i)
            if (bits >> i & 1) ++on, value += theta[i];
        if (on < least || on > most || value <= best) continue;
        best = value;
        for (int i = 0; i < n; ++i) u[i] = bits >> i & 1;
    }
}

/* The Euclidean projection of theta onto the simplex (SparseMAP of an XOR):
 * u = max(theta - tau, 0), tau set by the k largest entries that stay. */
static void simplex_projection(const double *theta, int n, double *u) {
    double tau = INFINITY;
    for (int k = 1; k <= n; ++k) {
        /* the k largest entries, assumed to be the support */
        double sum = 0, smallest = INFINITY;
        for (int i = 0; i < n; ++i) {
            int above = 0;
            for (int j = 0; j < n; ++j)
                above += theta[j] > theta[i] || (theta[j] == theta[i] && j < i);
            if (above < k) sum += theta[i], smallest = fmin(smallest, theta[i]);
        }
        double t = (sum - 1) / k;
        if (smallest > t) tau = t;
    }
    for (int i = 0; i < n; ++i) u[i] = fmax(theta[i] - tau, 0);
}

/* The Jacobian of the simplex projection at a solution u, times du: on
 * the support S, du minus its mean over S; 0 elsewhere. */
static void simplex_jacobian_product(const double *u, const double *du, int n, double *out) {
    double sum = 0;
    int support = 0;
    for (int i = 0; i < n; ++i)
        if (u[i] > 0) sum += du[i], ++support;
    for (int i = 0; i < n; ++i) out[i] = u[i] > 0 ? du[i] - sum / support : 0;
}

/* The projection of theta onto {u in [0,1]^n : sum u <= budget}:
 * u = clip(theta - tau, 0, 1), tau >= 0 found by bisection. */
static void capped_simplex_projection(const double *theta, int n, double budget, double *u) {
    double low = 0, high = 0;
    for (int i = 0; i < n; ++i) high = fmax(high, theta[i]);
    for (int step = 0; step < 200; ++step) {
        double tau = (low + high) / 2, sum = 0;
        for (int i = 0; i < n; ++i) sum += fmin(fmax(theta[i] - tau, 0), 1);
        if (sum > budget) low = tau;
        else high = tau;
    }
    for (int i = 0; i < n; ++i) u[i] = fmin(fmax(theta[i] - high, 0), 1);
}

/* A graph of n variables with these scores and one XOR over them all. */
static concord_graph *xor_graph(int n, const double *scores) {
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    int32_t vars[16];
    for (int i = 0; i < n; ++i) vars[i] = i;
    assert_int_equal(concord_add_variables(g, n, scores, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, n, vars, NULL, NULL), CONCORD_OK);
    return g;
}

/* A frustrated triangle: three variables that each want to be on, and a
 * PAIR factor on each side that punishes both ends on. Not a forest, and
 * its LP-MAP is fractional (all halves), so AD3 iterates and exact MAP
 * branches. */
static const double triangle_scores[3] = {1, 1.2, 0.9}, triangle_pair = -1.5;

static concord_graph *triangle_graph(void) {
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    assert_int_equal(concord_add_variables(g, 3, triangle_scores, NULL), CONCORD_OK);
    for (int i = 0; i < 3; ++i)
        assert_int_equal(concord_add_pair(g, i, (i + 1) % 3, triangle_pair, NULL), CONCORD_OK);
    return g;
}

/* The triangle's MAP, by trying every assignment. */
static double triangle_map(double *u) {
    double best = -INFINITY;
    for (unsigned bits = 0; bits < 8; ++bits) {
        double value = 0;
        for (int i = 0; i < 3; ++i)
            value += (bits >> i & 1) *
                     (triangle_scores[i] + triangle_pair * (bits >> (i + 1) % 3 & 1));
        if (value <= best) continue;
        best = value;
        for (int i = 0; i < 3; ++i) u[i] = bits >> i & 1;
    }
    return best;
}

/* ---- docs/c_api.md ----------------------------------------------------- */

#include "c_api_1_global.c"
#include "c_api_2_global.c"

/* "Two objects": one XOR, LP-MAP, LP-SparseMAP, the backward pass, then
 * the frees. */
static void two_objects(void **state) {
    (void)state;
#include "c_api_1_body.c"
    double expected[3], product[3];
    best_assignment(scores, 3, 1, 1, expected); /* the XOR's configurations */
    assert_claim("docs/c_api.md", "const double *u = concord_solver_variables(s);", 3, expected);

    simplex_projection(scores, 3, expected);
    assert_near("LP-SparseMAP", u, expected, 3, 1e-6);
    assert_claim("docs/c_api.md", "u = concord_solver_variables(s);", 3, expected);

    simplex_jacobian_product(expected, du, 3, product);
    assert_near("backward", dtheta, product, 3, 1e-6);
    assert_claim("docs/c_api.md", "concord_solver_backward(s, NULL, du,", 3, product);
#include "c_api_2_body.c"
}

#include "c_api_3_global.c"

/* "Scores": a solver's own scores, then the graph's again. */
static void own_scores(void **state) {
    (void)state;
    double graph_scores[3] = {0.75, 1.25, -0.5}, expected[3];
    double theta[3] = {2, -1, 0.5};
    const double *phi = NULL; /* an XOR has no additional outputs */
    concord_graph *g = xor_graph(3, graph_scores);
    concord_solver *s = new_solver_or_fail(g);
#include "c_api_3_body.c"
    assert_string_equal(concord_solver_last_error(s), "");
    assert_memory_equal(concord_solver_variable_scores(s), graph_scores, sizeof graph_scores);
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
    best_assignment(graph_scores, 3, 1, 1, expected);
    assert_near("LP-MAP", concord_solver_variables(s), expected, 3, 0);
    concord_solver_free(s);
    concord_graph_free(g);
}

#include "c_api_4_global.c"

/* "Batches on threads": 64 solvers of one graph, each with its scores. */
static void batch(void **state) {
    (void)state;
    double example_scores[64][3], expected[3];
    test_rng rng = {4};
    for (int k = 0; k < 64; ++k)
        for (int i = 0; i < 3; ++i) example_scores[k][i] = rng_normal(&rng);
    concord_graph *g = xor_graph(3, NULL);
#include "c_api_4_body.c"
    assert_int_equal(rc, CONCORD_OK);
    for (int k = 0; k < 64; ++k) {
        /* bit for bit the solve alone; the XOR's SparseMAP */
        concord_solver *alone = new_solver_or_fail(g);
        assert_int_equal(concord_solver_set_scores(alone, example_scores[k], NULL), CONCORD_OK);
        assert_int_equal(concord_solver_sparse(alone, NULL, NULL), CONCORD_OK);
        assert_memory_equal(concord_solver_variables(alone), concord_solver_variables(solvers[k]),
                            sizeof expected);
        simplex_projection(example_scores[k], 3, expected);
        assert_near("LP-SparseMAP", concord_solver_variables(solvers[k]), expected, 3, 1e-5);
        concord_solver_free(alone);
        concord_solver_free(solvers[k]);
    }
    concord_graph_free(g);
}

#include "c_api_5_global.c"

/* "Settings, progress, limits": the callback stops a solve when the flag
 * is set. */
static void progress(void **state) {
    (void)state;
    concord_settings st;
    concord_default_settings(&st);
#include "c_api_5_body.c"
    concord_graph *g = triangle_graph();
    concord_info info;
    for (int stop = 0; stop <= 1; ++stop) {
        stop_requested = stop;
        concord_solver *s = new_solver_or_fail(g);
        int rc = concord_solver_map(s, &st, &info);
        assert_int_equal(rc, stop ? CONCORD_ENOTCONVERGED : CONCORD_OK);
        assert_int_equal(info.status,
                         stop ? CONCORD_STATUS_INTERRUPTED : CONCORD_STATUS_FRACTIONAL);
        concord_solver_free(s);
    }
    concord_graph_free(g);
}

#include "c_api_6_global.c"

/* "Your own factors": the oracle against brute force, and AD3 and
 * LP-SparseMAP over the factor against its polytope's own answers. */
static void own_factor(void **state) {
    (void)state;
    double scores[5] = {0.3, -0.2, 1.1, 0.7, 0.5}, expected[5];
    int32_t vars[5] = {0, 1, 2, 3, 4};
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    assert_int_equal(concord_add_variables(g, 5, scores, NULL), CONCORD_OK);
#include "c_api_6_body.c"
    assert_int_equal(concord_num_factors(g), 1);

    test_rng rng = {6};
    for (int trial = 0; trial < 200; ++trial) {
        double a[5], u[5], value;
        for (int i = 0; i < 5; ++i) a[i] = rng_normal(&rng);
        assert_int_equal(at_most_two(&n, a, NULL, u, NULL, &value), 0);
        best_assignment(a, 5, 0, 2, expected);
        assert_near("the oracle", u, expected, 5, 0);
        double best = 0;
        for (int i = 0; i < 5; ++i) best += a[i] * expected[i];
        assert_true(fabs(value - best) <= 1e-12);
    }

    concord_solver *s = new_solver_or_fail(g);
    assert_int_equal(concord_solver_map(s, NULL, NULL), CONCORD_OK);
    best_assignment(scores, 5, 0, 2, expected);
    assert_near("LP-MAP", concord_solver_variables(s), expected, 5, 1e-6);
    assert_int_equal(concord_solver_sparse(s, NULL, NULL), CONCORD_OK);
    capped_simplex_projection(scores, 5, 2, expected);
    assert_near("LP-SparseMAP", concord_solver_variables(s), expected, 5, 1e-5);
    concord_solver_free(s);
    concord_graph_free(g);
}

/* The exact-MAP block's placeholders: what they were given. */
static double used_u[3], used_value;
static int used, stopped;

static void use(const double *u, double value) {
    memcpy(used_u, u, sizeof used_u);
    used_value = value;
    ++used;
}

static void report_stopped(double value, double upper_bound) {
    (void)value, (void)upper_bound;
    ++stopped;
}

#include "c_api_7_global.c"

/* "Exact MAP, PSDD, MPLP": branch and bound on the frustrated triangle. */
static void exact(void **state) {
    (void)state;
    concord_graph *g = triangle_graph();
    concord_solver *solver = new_solver_or_fail(g);
#include "c_api_7_body.c"
    double expected[3], best = triangle_map(expected);
    assert_int_equal(rc, CONCORD_OK);
    assert_int_equal(info.status, CONCORD_STATUS_OPTIMAL);
    assert_int_equal(used, 1);
    assert_int_equal(stopped, 0);
    assert_near("exact MAP", used_u, expected, 3, 0);
    assert_true(fabs(used_value - best) <= 1e-9);
    assert_true(search.nodes > 1); /* it branched */
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* ---- README.md --------------------------------------------------------- */

/* The README's program prints the XOR's LP-MAP and LP-SparseMAP solutions:
 * they, and the numbers its comments claim, are the XOR's at its scores;
 * then its batch's solutions, each the projection of its example's printed
 * scores onto the simplex, and not all the same. */
static void readme_program(void **state) {
    (void)state;
    char dir[] = "/tmp/concord_doc_readme_XXXXXX", out[64];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/out", dir);
    const char *argv[] = {DOC_README_PROGRAM, NULL};
    assert_int_equal(run_program(argv, NULL, out, NULL, 60), 0);
    char *text = read_whole_file_or_fail(out, NULL);
    remove_tree(dir);
    double map[3], sparse[3];
    int fields = sscanf(text, "LP-MAP %*[a-z_]: %lf %lf %lf\nLP-SparseMAP %*[a-z_]: %lf %lf %lf\n",
                        &map[0], &map[1], &map[2], &sparse[0], &sparse[1], &sparse[2]);
    if (fields != 6) fail_msg("README.md's program printed \"%s\"", text);
    const char *line = strstr(text, "example 0,");
    if (!line) fail_msg("README.md's program printed no batch: \"%s\"", text);
    double first_batch[3];
    int differs = 0;
    for (int k = 0; k < 8; ++k) {
        int printed_k;
        double example[3], solved[3], projected[3];
        if (sscanf(line, "example %d, scores %lf %lf %lf: %lf %lf %lf", &printed_k, &example[0],
                   &example[1], &example[2], &solved[0], &solved[1], &solved[2]) != 7 ||
            printed_k != k)
            fail_msg("README.md's program printed \"%s\" for example %d", line, k);
        simplex_projection(example, 3, projected);
        assert_near("a batch solution", solved, projected, 3, 1e-4); /* 4 decimals */
        if (k == 0) memcpy(first_batch, solved, sizeof first_batch);
        differs |= memcmp(first_batch, solved, sizeof solved) != 0;
        line = strchr(line, '\n');
        line = line ? line + 1 : "";
    }
    assert_true(differs);
    free(text);

    double scores[3], du[3], expected[3], product[3];
    claimed("README.md", "double scores[3] =", 3, scores);
    best_assignment(scores, 3, 1, 1, expected);
    assert_near("the printed LP-MAP", map, expected, 3, 0);
    assert_claim("README.md", "const double *u = concord_solver_variables(s);", 3, expected);

    simplex_projection(scores, 3, expected);
    assert_near("the printed LP-SparseMAP", sparse, expected, 3, 1e-5); /* 6 digits */
    assert_claim("README.md", "u = concord_solver_variables(s);", 3, expected);

    claimed("README.md", "double du[3] =", 3, du);
    simplex_jacobian_product(expected, du, 3, product);
    assert_claim("README.md", "concord_solver_backward(s, NULL, du,", 3, product);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_objects), cmocka_unit_test(own_scores),
        cmocka_unit_test(batch),       cmocka_unit_test(progress),
        cmocka_unit_test(own_factor),  cmocka_unit_test(exact),
        cmocka_unit_test(readme_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
