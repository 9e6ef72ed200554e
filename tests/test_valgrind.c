/*
 * The `concord` CLI under valgrind (memcheck, full leak check, definite and
 * indirect leaks counted as errors): a good multi-graph file, a UAI model
 * with evidence, a coreference graph (the repository's, and AD3's coref.fg
 * from ../shared/data, skipped when absent), an infeasible graph, a
 * malformed file and a missing file must run without a single
 * memory error or leak, on the success path and on every error path, and
 * still exit with the CLI's own code. This covers the plain (uninstrumented)
 * executable that users run, which the ASan tests do not. Valgrind and ASan
 * do not mix, so the ASan twin of this program
 * only prints a notice and skips.
 */
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
#include "testutil.h"

/* The repository's inputs (tests/data): a UAI grid with evidence, a
 * coreference graph of 252 OR factors. */
#define UAI_GRID CONCORD_TEST_DATA "/uai/grid3x3.uai"
#define FG_COREF CONCORD_TEST_DATA "/fg/transitivity.fg"

static char work_dir[256];

/* Three graphs covering logic, budget, knapsack and pair factors. */
static const char good_graphs[] = "2\n1\n0.5\n-0.5\nXOR 2 1 2\n"
                                  "\n"
                                  "3\n3\n0.2\n-0.3\n0.1\nOR 3 1 2 3\nPAIR 2 1 2 0.5\n"
                                  "BUDGET 3 1 -2 3 1\n"
                                  "\n"
                                  "4\n3\n0.3\n-0.1\n0.2\n-0.4\n"
                                  "PAIR 2 1 2 -1\nKNAPSACK 3 2 3 4 1 2 1 2\nOROUT 3 1 -3 4\n";

/* Fails in the second graph, after the first was built. */
static const char malformed_graphs[] = "1\n0\n0.5\n\n2\n1\n0\n0\nPAIR 2 1 -2 0.5\n";

static char good_path[512], malformed_path[512];

/* Path of an executable found on PATH, or NULL. */
static const char *find_valgrind(char *buf, size_t size) {
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, size, "%.*s/valgrind", (int)n, path);
        if (access(buf, X_OK) == 0) return buf;
        path += n + (path[n] == ':');
    }
    return NULL;
}

static int setup(void **state) {
    (void)state;
    snprintf(work_dir, sizeof work_dir, "/tmp/concord_test_valgrind_XXXXXX");
    if (!mkdtemp(work_dir)) return -1;
    snprintf(good_path, sizeof good_path, "%s/good.fg", work_dir);
    snprintf(malformed_path, sizeof malformed_path, "%s/malformed.fg", work_dir);
    if (write_text_file(good_path, good_graphs) != 0) return -1;
    return write_text_file(malformed_path, malformed_graphs);
}

static int teardown(void **state) {
    (void)state;
    remove_tree(work_dir);
    return 0;
}

/* Runs the CLI with `args` under valgrind (stdin from `input` or
 * /dev/null); checks the exit code is the CLI's `expected` one and that
 * valgrind saw no error. */
static void run_under_valgrind(const char *const *args, const char *input, int expected) {
    char valgrind[512];
    if (!find_valgrind(valgrind, sizeof valgrind))
        fail_msg("valgrind is not installed (`make test` installs it; apt-get install valgrind)");
    char log_path[600], out_path[600], log_arg[700];
    snprintf(log_path, sizeof log_path, "%s/valgrind.log", work_dir);
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", work_dir);
    snprintf(log_arg, sizeof log_arg, "--log-file=%s", log_path);
    const char *argv[32];
    int n = 0;
    argv[n++] = valgrind;
    argv[n++] = "--error-exitcode=99";
    argv[n++] = "--leak-check=full";
    argv[n++] = "--errors-for-leak-kinds=definite,indirect";
    argv[n++] = "--track-origins=yes";
    argv[n++] = log_arg;
    argv[n++] = CONCORD_BINARY;
    for (int k = 0; args[k] && n < 31; ++k) argv[n++] = args[k];
    argv[n] = NULL;
    int status = run_program(argv, input, out_path, out_path, 120);
    char *log = read_whole_file(log_path, NULL);
    char *out = read_whole_file(out_path, NULL);
    assert_non_null(log);
    /* memcheck must have seen the allocator at work, or it checked nothing */
    if (status != expected || !strstr(log, "ERROR SUMMARY: 0 errors") ||
        strstr(log, "total heap usage: 0 allocs")) {
        print_message("command: valgrind ... concord");
        for (int k = 0; args[k]; ++k) print_message(" %s", args[k]);
        print_message("\nexit %d (expected %d%s)\noutput:\n%s\nvalgrind log:\n%s\n", status,
                      expected, status == 99 ? "; 99 means valgrind found errors" : "",
                      out ? out : "", log);
    }
    free(out);
    assert_int_not_equal(status, 99);
    assert_int_equal(status, expected);
    assert_non_null(strstr(log, "ERROR SUMMARY: 0 errors"));
    /* Nothing is still reachable either: every path frees what it owns. */
    if (strstr(log, "still reachable:") && !strstr(log, "still reachable: 0 bytes"))
        print_message("note: valgrind reports still-reachable memory:\n%s\n", log);
    free(log);
}

static int skip_under_asan(void) {
    if (!UNDER_ASAN) return 0;
    print_message("notice: valgrind checks skipped in the ASan build "
                  "(valgrind and AddressSanitizer do not mix)\n");
    return 1;
}

static void a_good_multi_graph_file_runs_clean_under_valgrind(void **state) {
    (void)state;
    if (skip_under_asan()) skip();
    char out[600];
    snprintf(out, sizeof out, "%s/post.txt", work_dir);
    const char *args[] = {"solve", good_path, "-o", out, NULL};
    run_under_valgrind(args, NULL, 0);
    const char *args_json[] = {"solve", "--json", "-", NULL};
    run_under_valgrind(args_json, good_path, 0);
    /* a UAI model: posteriors per model variable, decoded labels */
    const char *args_uai[] = {"solve", UAI_GRID, "--decode", "-o", out, NULL};
    run_under_valgrind(args_uai, NULL, 0);
    const char *args_uai_json[] = {"solve",    "--json",         "--decode", UAI_GRID,
                                   "--evid",   UAI_GRID ".evid", "--uai-map", out, NULL};
    run_under_valgrind(args_uai_json, NULL, 0);
    unlink(out);
}

static void an_infeasible_graph_runs_clean_under_valgrind(void **state) {
    (void)state;
    if (skip_under_asan()) skip();
    char path[600], out[600];
    snprintf(path, sizeof path, "%s/infeasible.fg", work_dir);
    snprintf(out, sizeof out, "%s/post.txt", work_dir);
    assert_int_equal(write_text_file(path, "1\n0\n0.5\n\n2\n2\n1\n1\nXOR 2 1 2\n"
                                           "BUDGET_EXACT 2 1 2 2\n"),
                     0);
    const char *args[] = {"solve", "--decode", path, "-o", out, NULL};
    run_under_valgrind(args, NULL, 3);
    unlink(out);
}

/* A graph of hundreds of factors solved to the end, and the not-converged
 * path. */
static void coref_runs_clean_under_valgrind_on(const char *path) {
    const char *args[] = {"solve", "-q", path, NULL};
    run_under_valgrind(args, NULL, 0);
    const char *args_iter[] = {"solve", "--json", "--max-iter", "3", path, NULL};
    run_under_valgrind(args_iter, NULL, 4);
}

static void coref_runs_clean_under_valgrind(void **state) {
    (void)state;
    if (skip_under_asan()) skip();
    coref_runs_clean_under_valgrind_on(FG_COREF);
}

static void ad3_coref_runs_clean_under_valgrind(void **state) {
    (void)state;
    if (skip_under_asan()) skip();
    coref_runs_clean_under_valgrind_on(shared_data_path_or_skip("ad3/coref.fg"));
}

static void a_malformed_file_runs_clean_under_valgrind(void **state) {
    (void)state;
    if (skip_under_asan()) skip();
    char out[600];
    snprintf(out, sizeof out, "%s/post.txt", work_dir);
    const char *args[] = {"solve", malformed_path, "-o", out, NULL};
    run_under_valgrind(args, NULL, 3);
    const char *args_stdin[] = {"solve", "-", NULL};
    run_under_valgrind(args_stdin, malformed_path, 3);
}

static void a_missing_file_runs_clean_under_valgrind(void **state) {
    (void)state;
    if (skip_under_asan()) skip();
    char missing[600];
    snprintf(missing, sizeof missing, "%s/does-not-exist.fg", work_dir);
    const char *args[] = {"solve", missing, NULL};
    run_under_valgrind(args, NULL, 3);
    /* And a usage error. */
    const char *args_usage[] = {"solve", "--tol", "abc", missing, NULL};
    run_under_valgrind(args_usage, NULL, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_good_multi_graph_file_runs_clean_under_valgrind),
        cmocka_unit_test(coref_runs_clean_under_valgrind),
        cmocka_unit_test(ad3_coref_runs_clean_under_valgrind),
        cmocka_unit_test(an_infeasible_graph_runs_clean_under_valgrind),
        cmocka_unit_test(a_malformed_file_runs_clean_under_valgrind),
        cmocka_unit_test(a_missing_file_runs_clean_under_valgrind),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
