/*
 * When the active set needs more room and the allocation fails, the
 * failure is reported (CONCORD_ENOMEM), the state stays a valid point of
 * the polytope, and once memory is available again the same state solves
 * to a certified optimum: never a crash, never a wrong answer. The test
 * replaces malloc with one that refuses requests above 12 kB: the
 * states' first room (16 configurations) takes less here and the doubled
 * room more, so the threshold fails exactly the growth. Checked at three levels: the active set itself, the sparse
 * distribution of a closed-form factor (computed by a fresh active set),
 * and the backward pass (whose inverse for the degree metric is allocated
 * on demand). The AddressSanitizer build replaces malloc itself, so there
 * this test only says that it was skipped.
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

#include "concord.h"
#include "pair_table.h"
#include "qp/active_set.h"
#include "testutil.h"

#if !UNDER_ASAN
/* glibc's allocator under its own name: this program's malloc refuses
 * requests above fail_above and passes the others on. */
extern void *__libc_malloc(size_t size);
static size_t fail_above = SIZE_MAX;

void *malloc(size_t size) { return size > fail_above ? NULL : __libc_malloc(size); }
#endif

enum { LIMIT = 12288 };

static bool allocation_can_fail(void) {
    if (UNDER_ASAN) {
        print_message("skipped: AddressSanitizer replaces malloc, which this test must do\n");
        return false;
    }
    return true;
}

static void set_limit(size_t bytes) {
#if !UNDER_ASAN
    fail_above = bytes;
#else
    (void)bytes;
#endif
}

/* The objective a.u + b.v - 1/2 sum d u^2 of a pair table's solution. */
static double objective(const pair_table *t) {
    double value = 0.0;
    for (int i = 0; i < 2 * t->k; ++i) value += (t->a[i] - 0.5 * t->d[i] * t->u[i]) * t->u[i];
    for (int c = 0; c < t->k * t->k; ++c) value += t->b[c] * t->v[c];
    return value;
}

static void active_set_reports_failed_growth_and_recovers(void **state) {
    (void)state;
    if (!allocation_can_fail()) {
        skip();
        return;
    }
    test_rng rng = {21};
    for (int trial = 0; trial < 3; ++trial) {
        pair_table t;
        pair_table_init(&t, 40, 0.01, &rng);
        set_limit(LIMIT);
        qp_outcome stopped = pair_table_solve(&t, 100000);
        set_limit(SIZE_MAX);
        assert_int_equal(stopped.error, CONCORD_ENOMEM);
        assert_false(stopped.exact);
        /* a full first room, and a valid point of the polytope */
        assert_int_equal(active_set_size(t.state), 16);
        assert_int_equal(active_set_capacity(t.state), 16);
        pair_table_assert_distribution(&t);
        const double partial = objective(&t);
        qp_outcome done = pair_table_solve(&t, 100000);
        assert_int_equal(done.error, CONCORD_OK);
        assert_true(done.exact);
        pair_table_assert_distribution(&t);
        assert_true(pair_table_relative_gap(&t) <= 1e-10);
        assert_true(active_set_size(t.state) > 16 && active_set_capacity(t.state) > 16);
        assert_true(objective(&t) >= partial);
        pair_table_free(&t);
    }
}

/* XOR over 60 variables with equal scores: SparseMAP spreads 1/60 over
 * every variable, a distribution of 60 configurations. */
static void distribution_reports_failed_growth(void **state) {
    (void)state;
    if (!allocation_can_fail()) {
        skip();
        return;
    }
    enum { N = 60 };
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    int32_t vars[N];
    for (int i = 0; i < N; ++i) vars[i] = i;
    assert_int_equal(concord_add_variables(g, N, NULL, NULL), CONCORD_OK);
    assert_int_equal(concord_add_logic(g, CONCORD_XOR, N, vars, NULL, NULL), CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    assert_int_equal(concord_solver_sparse(solver, NULL, NULL), CONCORD_OK);
    int32_t count = -1;
    set_limit(LIMIT);
    int rc = concord_solver_factor_distribution(solver, 0, &count);
    set_limit(SIZE_MAX);
    assert_int_equal(rc, CONCORD_ENOMEM);
    print_message("message: %s\n", concord_solver_last_error(solver));
    assert_int_equal(concord_solver_factor_distribution(solver, 0, &count), CONCORD_OK);
    assert_int_equal(count, N);
    for (int32_t k = 0; k < count; ++k) {
        double w;
        assert_int_equal(concord_solver_distribution_entry(solver, k, &w, NULL, NULL),
                         CONCORD_OK);
        assert_true(fabs(w - 1.0 / N) <= 1e-12);
    }
    concord_solver_free(solver);
    concord_graph_free(g);
}

/* The backward pass builds each active set's inverse for the degree
 * metric on demand: a 40 x 40 table in a two-factor graph (a state XOR on
 * one variable) whose solution needs more than 32 configurations (so room
 * for 64) asks for 65^2 doubles there. */
static void backward_reports_failed_allocation(void **state) {
    (void)state;
    if (!allocation_can_fail()) {
        skip();
        return;
    }
    enum { K = 40 };
    test_rng rng = {22};
    concord_graph *g = concord_graph_new();
    assert_non_null(g);
    int32_t first[2], states[2] = {K, K}, vars[2 * K];
    double theta[K], table[K * K];
    for (int j = 0; j < 2; ++j) {
        for (int s = 0; s < K; ++s) theta[s] = 0.01 * rng_normal(&rng);
        assert_int_equal(concord_add_multi_variable(g, K, theta, j == 0, &first[j]), CONCORD_OK);
    }
    for (int i = 0; i < 2 * K; ++i) vars[i] = i;
    for (int c = 0; c < K * K; ++c) table[c] = 0.01 * rng_normal(&rng);
    assert_int_equal(concord_add_dense(g, 2, states, vars, table, NULL), CONCORD_OK);
    concord_solver *solver = new_solver_or_fail(g);
    assert_int_equal(concord_solver_sparse(solver, NULL, NULL), CONCORD_OK);
    int32_t count = 0;
    assert_int_equal(concord_solver_factor_distribution(solver, 1, &count), CONCORD_OK);
    print_message("the table's solution mixes %d joint states\n", count);
    assert_true(count > 32);
    double du[2 * K], dtheta[2 * K];
    for (int i = 0; i < 2 * K; ++i) du[i] = rng_normal(&rng);
    set_limit(LIMIT);
    int rc = concord_solver_backward(solver, NULL, du, NULL, dtheta, NULL, NULL);
    set_limit(SIZE_MAX);
    assert_int_equal(rc, CONCORD_ENOMEM);
    assert_int_equal(concord_solver_backward(solver, NULL, du, NULL, dtheta, NULL, NULL),
                     CONCORD_OK);
    concord_solver_free(solver);
    concord_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(active_set_reports_failed_growth_and_recovers),
        cmocka_unit_test(distribution_reports_failed_growth),
        cmocka_unit_test(backward_reports_failed_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
