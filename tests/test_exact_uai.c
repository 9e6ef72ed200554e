/*
 * Exact MAP against toulbar2 (Debian package toulbar2, run live) on the
 * UAI 2014 MAP instances it solves within seconds (Promedas 11, 20, 30,
 * Segmentation 12, 14, in ../shared/data/uai2014, with their evidence) and
 * on AD3's small UAI models (grids, pedigree, networks). toulbar2 proves
 * an optimum on costs rounded to 7 digits and writes its assignment; the
 * test reads the optimum's energy (-ln of the probability, 3 decimals) and
 * the assignment, and checks that concord's proven optimum (status
 * "optimal") matches the energy, that toulbar2's assignment evaluated in
 * concord's graph is no better than concord's value, and no worse than it
 * beyond toulbar2's rounding of the costs. A missing toulbar2 or data file
 * skips with a message naming it; under AddressSanitizer the slowest,
 * Promedas_11, is skipped. The comparison on every instance with
 * 60-second limits is bench/bench_exact (docs/performance.md).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "child_process.h"
#include "concord.h"
#include "testutil.h"

/* ---- tolerances (and why) ------------------------------------------------
 * ENERGY_TOL: toulbar2 prints the energy with 3 decimals: 5e-4, plus its
 *   cost rounding (7 digits of each table entry's probability, summed
 *   over the tables: COST_TOL).
 * COST_TOL: toulbar2's assignment may be worse than concord's optimum by
 *   its rounding of the costs, 1e-7 relative per table entry, summed: 1e-5
 *   of |value| covers the instances here; it may never be better beyond
 *   concord's gap (1e-9 of sum |scores|) and rounding.
 */
#define ENERGY_TOL 5e-4
#define COST_TOL 1e-5

/* Skips the running test, saying why. */
#define SKIP_BECAUSE(...)                                                                       \
    do {                                                                                        \
        printf("skipped: " __VA_ARGS__);                                                        \
        printf("\n");                                                                           \
        skip();                                                                                 \
    } while (0)

static char work_dir[256];
static char toulbar2[512];

/* toulbar2's path on PATH, or "" */
static void find_toulbar2(void) {
    toulbar2[0] = '\0';
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char candidate[512];
        snprintf(candidate, sizeof candidate, "%.*s/toulbar2", (int)n, path);
        if (n && access(candidate, X_OK) == 0) {
            snprintf(toulbar2, sizeof toulbar2, "%s", candidate);
            return;
        }
        path += n + (path[n] == ':');
    }
}

static int setup(void **state) {
    (void)state;
    snprintf(work_dir, sizeof work_dir, "/tmp/concord-test-exact-uai-XXXXXX");
    if (!mkdtemp(work_dir)) return -1;
    find_toulbar2();
    return 0;
}

static int teardown(void **state) {
    (void)state;
    remove_tree(work_dir);
    return 0;
}

typedef struct toulbar2_answer {
    double energy;
    int32_t *labels;
    int32_t n;
} toulbar2_answer;

/* Runs toulbar2 on the model (and evidence, may be NULL); false when it
 * did not prove an optimum. */
static bool run_toulbar2(const char *model, const char *evidence, toulbar2_answer *out) {
    char sol[600], log[600];
    snprintf(sol, sizeof sol, "%s/solution.txt", work_dir);
    snprintf(log, sizeof log, "%s/toulbar2.txt", work_dir);
    char w[640];
    snprintf(w, sizeof w, "-w=%s", sol);
    const char *argv[] = {toulbar2, model, evidence ? evidence : w, evidence ? w : NULL, NULL};
    const int status = run_program(argv, NULL, log, log, 120);
    char *text = read_whole_file(log, NULL);
    const char *opt = text ? strstr(text, "Optimum:") : NULL;
    const char *energy = opt ? strstr(opt, "energy:") : NULL;
    if (status != 0 || !energy || sscanf(energy, "energy: %lf", &out->energy) != 1) {
        printf("toulbar2 on %s: exit %d, no optimum\n%s\n", model, status, text ? text : "");
        free(text);
        return false;
    }
    free(text);
    char *assignment = read_whole_file(sol, NULL);
    assert_non_null(assignment);
    out->n = 0;
    out->labels = NULL;
    char *p = assignment, *end;
    for (long x; (x = strtol(p, &end, 10)), end != p; p = end) {
        out->labels = realloc(out->labels, (size_t)(out->n + 1) * sizeof(int32_t));
        assert_non_null(out->labels);
        out->labels[out->n++] = (int32_t)x;
    }
    free(assignment);
    return true;
}

/* concord's exact MAP of the model against toulbar2's. Returns false when
 * a file is missing (skipped). */
static bool compare(const char *model, const char *evidence) {
    if (access(model, R_OK) != 0 || (evidence && access(evidence, R_OK) != 0)) {
        printf("skipped: %s not found\n", access(model, R_OK) != 0 ? model : evidence);
        return false;
    }
    toulbar2_answer tb;
    double t0 = monotonic_seconds();
    assert_true(run_toulbar2(model, evidence, &tb));
    const double tb_seconds = monotonic_seconds() - t0;
    concord_graph *g;
    char error[512];
    assert_int_equal(concord_read_uai(model, evidence, &g, error, sizeof error), CONCORD_OK);
    concord_solver *s = new_solver_or_fail(g);
    concord_info info;
    t0 = monotonic_seconds();
    const int rc = concord_solver_exact(s, NULL, &info);
    const double seconds = monotonic_seconds() - t0;
    if (rc != CONCORD_OK || info.status != CONCORD_STATUS_OPTIMAL)
        fail_msg("%s: code %d, status %s: %s", model, rc, concord_status_name(info.status),
                 concord_solver_last_error(s));
    /* toulbar2's assignment in concord's graph */
    assert_int_equal(tb.n, concord_num_multi_variables(g));
    double *x = malloc((size_t)concord_num_variables(g) * sizeof *x);
    assert_non_null(x);
    assert_int_equal(concord_assignment_from_labels(g, tb.labels, x), CONCORD_OK);
    concord_decoding theirs;
    assert_int_equal(concord_solver_evaluate(s, x, &theirs), CONCORD_OK);
    assert_int_equal(theirs.violated, 0);
    const double value = info.value;
    printf("%-40s concord %.9f (%.3f s), toulbar2 energy %.3f (%.3f s), its assignment %.9f\n",
           strrchr(model, '/') + 1, value, seconds, tb.energy, tb_seconds, theirs.value);
    if (fabs(value + tb.energy) > ENERGY_TOL + COST_TOL * fabs(value))
        fail_msg("%s: concord's optimum %.9f, toulbar2's energy %.3f", model, value, tb.energy);
    if (theirs.value > value + 1e-9 * fabs(value) + 1e-12)
        fail_msg("%s: toulbar2's assignment (%.12f) beats concord's optimum (%.12f)", model,
                 theirs.value, value);
    if (theirs.value < value - COST_TOL * fabs(value))
        fail_msg("%s: toulbar2's assignment %.12f, concord's optimum %.12f", model, theirs.value,
                 value);
    free(x);
    free(tb.labels);
    concord_solver_free(s);
    concord_graph_free(g);
    return true;
}

static void exact_map_matches_toulbar2_on_uai2014(void **state) {
    (void)state;
    if (!toulbar2[0]) SKIP_BECAUSE("toulbar2 not found on PATH (Debian package toulbar2)");
    static const char *const names[] = {"Segmentation_12", "Segmentation_14", "Promedas_30",
                                        "Promedas_20", "Promedas_11"};
    int compared = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
        if (UNDER_ASAN && !strcmp(names[k], "Promedas_11")) {
            printf("skipped under AddressSanitizer (slow): %s\n", names[k]);
            continue;
        }
        char model[512], evidence[520];
        snprintf(model, sizeof model, "%s/uai2014/%s.uai", CONCORD_SHARED_DATA, names[k]);
        snprintf(evidence, sizeof evidence, "%s.evid", model);
        compared += compare(model, evidence);
    }
    if (compared == 0)
        SKIP_BECAUSE("no UAI 2014 instance found in %s/uai2014", CONCORD_SHARED_DATA);
}

static void exact_map_matches_toulbar2_on_ad3_models(void **state) {
    (void)state;
    if (!toulbar2[0]) SKIP_BECAUSE("toulbar2 not found on PATH (Debian package toulbar2)");
    static const char *const names[] = {
        "grid3x3",       "grid4x4",           "Family2Dominant.1.5loci",
        "10_14_s.binary", "deer_rescaled_0034.K10.F1.25.model", "30markers",
        "or_chain_10.fg", "network",          "smokers_10"};
    int compared = 0;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
        char model[512];
        snprintf(model, sizeof model, "%s/ad3/%s.uai", CONCORD_SHARED_DATA, names[k]);
        compared += compare(model, NULL);
    }
    if (compared == 0) SKIP_BECAUSE("no UAI model found in %s/ad3", CONCORD_SHARED_DATA);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_map_matches_toulbar2_on_uai2014),
        cmocka_unit_test(exact_map_matches_toulbar2_on_ad3_models),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
