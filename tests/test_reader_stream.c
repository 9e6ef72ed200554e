/*
 * The streaming reader (concord_reader_*): graphs come one at a time, in
 * order, each complete and owned by the caller; the end of the input is a
 * NULL graph; an input without any graph and a malformed graph are errors
 * with "name:line:", after which the reader keeps returning the error while
 * the graphs already returned stay usable; warnings come with the graph
 * they belong to; a UAI reader tells where every state of every model
 * variable went (removed states included); and reading a file of a great
 * many graphs one at a time takes memory for the input and one graph, not
 * for all of them (checked under an address-space limit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "concord.h"
#include "testutil.h"

/* Three graphs: (variables, factors) = (2, 1), (3, 2), (4, 3). */
static const char three_graphs[] = "2\n1\n0.5\n-0.5\nXOR 2 1 2\n"
                                   "\n"
                                   "3\n2\n0.2\n-0.3\n0.1\nOR 3 1 2 3\nPAIR 2 1 2 0.5\n"
                                   "\n"
                                   "4\n3\n0.3\n-0.1\n0.2\n-0.4\n"
                                   "PAIR 2 1 2 -1\nPAIR 2 3 4 1\nATMOSTONE 2 2 3\n";

static concord_reader *open_text(const char *text, const char *name, concord_format format,
                                 char *error, size_t size) {
    concord_reader *r = NULL;
    assert_int_equal(
        concord_reader_open_buffer(text, strlen(text), name, format, &r, error, size, NULL, NULL),
        CONCORD_OK);
    assert_non_null(r);
    return r;
}

static void graphs_come_one_at_a_time_in_order_then_null(void **state) {
    (void)state;
    char error[256];
    concord_reader *r = open_text(three_graphs, "three.fg", CONCORD_FORMAT_AUTO, error,
                                  sizeof error);
    concord_graph *g;
    for (int k = 0; k < 3; ++k) {
        assert_int_equal(concord_reader_next(r, &g), CONCORD_OK);
        assert_non_null(g);
        assert_int_equal(concord_num_variables(g), 2 + k);
        assert_int_equal(concord_num_factors(g), 1 + k);
        assert_int_equal(concord_num_additionals(g), k);
        /* each graph is complete: it solves on its own */
        concord_solver *solver = new_solver_or_fail(g);
        assert_int_equal(concord_solver_map(solver, NULL, NULL), CONCORD_OK);
        concord_solver_free(solver);
        concord_graph_free(g);
    }
    for (int k = 0; k < 2; ++k) { /* the end, and it stays the end */
        g = (concord_graph *)&g;
        assert_int_equal(concord_reader_next(r, &g), CONCORD_OK);
        assert_null(g);
    }
    concord_reader_close(r);
    concord_reader_close(NULL);
}

static void an_error_in_a_later_graph_keeps_the_earlier_ones_and_sticks(void **state) {
    (void)state;
    /* graph 2 has a PAIR with a negated index, on line 9 */
    static const char text[] = "1\n0\n0.5\n\n2\n1\n0\n0\nPAIR 2 1 -2 0.5\n\n1\n0\n1\n";
    char error[256];
    concord_reader *r = open_text(text, "bad.fg", CONCORD_FORMAT_FG, error, sizeof error);
    concord_graph *first, *g;
    assert_int_equal(concord_reader_next(r, &first), CONCORD_OK);
    assert_non_null(first);
    assert_string_equal(error, "");
    g = first;
    assert_int_equal(concord_reader_next(r, &g), CONCORD_EPARSE);
    assert_null(g);
    assert_int_equal(strncmp(error, "bad.fg:9: ", 10), 0);
    assert_non_null(strstr(error, "negated"));
    /* the third graph is never read: the error sticks */
    assert_int_equal(concord_reader_next(r, &g), CONCORD_EPARSE);
    assert_null(g);
    concord_reader_close(r);
    /* the first graph is still whole */
    assert_int_equal(concord_num_variables(first), 1);
    concord_solver *solver = new_solver_or_fail(first);
    assert_int_equal(concord_solver_map(solver, NULL, NULL), CONCORD_OK);
    assert_true(concord_solver_variables(solver)[0] == 1.0);
    concord_solver_free(solver);
    concord_graph_free(first);
}

static void an_input_without_graphs_is_an_error_at_the_first_call(void **state) {
    (void)state;
    static const char *const inputs[] = {"", "\n\n# only a comment\n\n"};
    for (size_t k = 0; k < 2; ++k) {
        char error[256];
        concord_reader *r = open_text(inputs[k], "empty.fg", CONCORD_FORMAT_FG, error,
                                      sizeof error);
        concord_graph *g;
        assert_int_equal(concord_reader_next(r, &g), CONCORD_EPARSE);
        assert_null(g);
        assert_non_null(strstr(error, "empty.fg"));
        assert_non_null(strstr(error, "no graph"));
        concord_reader_close(r);
    }
}

typedef struct warnings {
    int count;
    char last[256];
} warnings;

static void collect(void *context, const char *message) {
    warnings *w = context;
    w->count += 1;
    snprintf(w->last, sizeof w->last, "%s", message);
}

static void a_stray_separator_warns_with_its_graph(void **state) {
    (void)state;
    static const char text[] = "1\n0\n0.5\nSTRAY\n1\n0\n-0.5\n";
    warnings w = {0};
    char error[256];
    concord_reader *r = NULL;
    assert_int_equal(concord_reader_open_buffer(text, strlen(text), "stray.fg", CONCORD_FORMAT_FG,
                                                &r, error, sizeof error, collect, &w),
                     CONCORD_OK);
    concord_graph *g;
    assert_int_equal(concord_reader_next(r, &g), CONCORD_OK);
    assert_non_null(g);
    assert_int_equal(w.count, 1);
    assert_non_null(strstr(w.last, "stray.fg:4: "));
    assert_non_null(strstr(w.last, "STRAY"));
    concord_graph_free(g);
    assert_int_equal(concord_reader_next(r, &g), CONCORD_OK);
    assert_non_null(g);
    concord_graph_free(g);
    assert_int_equal(w.count, 1);
    concord_reader_close(r);
}

static void bad_arguments_are_rejected(void **state) {
    (void)state;
    char error[256];
    concord_reader *r = (concord_reader *)error;
    assert_int_equal(concord_reader_open_buffer(NULL, 3, "x", CONCORD_FORMAT_FG, &r, error,
                                                sizeof error, NULL, NULL),
                     CONCORD_EINVAL);
    assert_null(r);
    assert_int_equal(concord_reader_open_buffer("1\n0\n0\n", 6, "x", (concord_format)9, &r,
                                                error, sizeof error, NULL, NULL),
                     CONCORD_EINVAL);
    assert_null(r);
    assert_int_equal(concord_reader_open_file("/nonexistent/dir/x.fg", CONCORD_FORMAT_AUTO, &r,
                                              error, sizeof error, NULL, NULL),
                     CONCORD_EIO);
    assert_null(r);
    assert_non_null(strstr(error, "/nonexistent/dir/x.fg"));
    assert_int_equal(concord_reader_next(NULL, NULL), CONCORD_EINVAL);
    /* evidence goes with a UAI model only */
    r = open_text(three_graphs, "three.fg", CONCORD_FORMAT_FG, error, sizeof error);
    assert_int_equal(concord_reader_set_evidence(r, "/dev/null"), CONCORD_EINVAL);
    assert_int_equal(concord_reader_uai_states(r, 0, NULL, NULL), CONCORD_EINVAL);
    concord_reader_close(r);
}

/* Variable 0 has 3 states, the zero in its unary table removes state 1;
 * variable 1 has 2 states and the evidence fixes it to state 1; variable 2
 * (2 states) keeps both. */
static const char model[] = "MARKOV\n3\n3 2 2\n3\n1 0\n2 0 1\n2 1 2\n"
                            "3\n0.5 0 2\n6\n1 2 3 4 5 6\n4\n1 2 3 4\n";

/* Format AUTO takes a name ending in ".uai" in any case for UAI, as the
 * command-line tool does: "MODEL.UAI" read as .fg failed on "MARKOV". */
static void the_uai_extension_is_recognized_in_any_case(void **state) {
    (void)state;
    char error[256];
    for (int k = 0; k < 3; ++k) {
        const char *name = (const char *[]){"m.uai", "MODEL.UAI", "Model.Uai"}[k];
        concord_reader *r = open_text(model, name, CONCORD_FORMAT_AUTO, error, sizeof error);
        concord_graph *g = NULL;
        assert_int_equal(concord_reader_next(r, &g), CONCORD_OK);
        assert_int_equal(concord_num_multi_variables(g), 3);
        concord_graph_free(g);
        concord_reader_close(r);
    }
}

static void a_uai_reader_maps_every_model_state(void **state) {
    (void)state;
    char dir[] = "/tmp/concord_test_reader_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char model_path[128], evid_path[128];
    snprintf(model_path, sizeof model_path, "%s/m.uai", dir);
    snprintf(evid_path, sizeof evid_path, "%s/m.uai.evid", dir);
    assert_int_equal(write_text_file(model_path, model), 0);
    assert_int_equal(write_text_file(evid_path, "1 1 1\n"), 0);

    char error[256];
    concord_reader *r = NULL;
    assert_int_equal(concord_reader_open_file(model_path, CONCORD_FORMAT_AUTO, &r, error,
                                              sizeof error, NULL, NULL),
                     CONCORD_OK);
    assert_int_equal(concord_reader_uai_states(r, 0, NULL, NULL), CONCORD_EINVAL); /* not yet */
    assert_int_equal(concord_reader_set_evidence(r, evid_path), CONCORD_OK);
    concord_graph *g;
    assert_int_equal(concord_reader_next(r, &g), CONCORD_OK);
    assert_non_null(g);
    assert_int_equal(concord_reader_set_evidence(r, evid_path), CONCORD_EINVAL); /* too late */
    assert_int_equal(concord_num_multi_variables(g), 3);
    static const int32_t cards[] = {3, 2, 2};
    static const int removed[3][3] = {{0, 1, 0}, {1, 0, 0}, {0, 0, 0}};
    for (int32_t i = 0; i < 3; ++i) {
        int32_t n, first, kept;
        const int32_t *vars;
        assert_int_equal(concord_reader_uai_states(r, i, &n, &vars), CONCORD_OK);
        assert_int_equal(n, cards[i]);
        assert_int_equal(concord_multi_variable(g, i, &first, &kept), CONCORD_OK);
        int32_t next = first; /* kept states are the multi-variable's, in order */
        for (int32_t x = 0; x < n; ++x) {
            if (removed[i][x]) {
                assert_int_equal(vars[x], -1);
            } else {
                assert_int_equal(vars[x], next);
                ++next;
            }
        }
        assert_int_equal(next, first + kept);
    }
    assert_int_equal(concord_reader_uai_states(r, 3, NULL, NULL), CONCORD_EINVAL);
    concord_graph *end = g;
    assert_int_equal(concord_reader_next(r, &end), CONCORD_OK); /* one graph per model */
    assert_null(end);
    concord_graph_free(g);
    concord_reader_close(r);

    /* concord_read_uai reads the same graph */
    concord_graph *h = NULL;
    assert_int_equal(concord_read_uai(model_path, evid_path, &h, error, sizeof error),
                     CONCORD_OK);
    assert_int_equal(concord_num_variables(h), 3 + 2 + 2 - 2);
    concord_graph_free(h);
    remove_tree(dir);
}

/* Runs `count` empty graphs through a reader in a child process limited to
 * `limit_mb` of address space, freeing each graph before the next (one at
 * a time: want 1) or keeping them all (concord_read_buffer: want 0).
 * Returns the number of graphs read, or -1 when the child failed. */
static long read_many_graphs(const char *text, size_t size, int one_at_a_time, int limit_mb) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        struct rlimit limit = {(rlim_t)limit_mb << 20, (rlim_t)limit_mb << 20};
        if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(100);
        long n = 0;
        char error[256];
        if (one_at_a_time) {
            concord_reader *r;
            concord_graph *g;
            int rc = concord_reader_open_buffer(text, size, "many.fg", CONCORD_FORMAT_FG, &r,
                                                error, sizeof error, NULL, NULL);
            while (rc == CONCORD_OK && (rc = concord_reader_next(r, &g)) == CONCORD_OK && g) {
                concord_solver *solver;
                if (concord_solver_new(g, &solver) != CONCORD_OK ||
                    concord_solver_map(solver, NULL, NULL) != CONCORD_OK)
                    rc = -1;
                concord_solver_free(solver);
                concord_graph_free(g);
                ++n;
            }
            concord_reader_close(r);
            if (rc != CONCORD_OK) n = -1;
        } else {
            concord_graph **graphs;
            size_t count;
            n = concord_read_buffer(text, size, "many.fg", CONCORD_FORMAT_FG, &graphs, &count,
                                    error, sizeof error, NULL, NULL) == CONCORD_OK
                    ? (long)count
                    : -1;
            if (n >= 0) concord_free_graphs(graphs, count);
        }
        ssize_t w = write(fds[1], &n, sizeof n);
        _exit(w == (ssize_t)sizeof n ? 0 : 101);
    }
    close(fds[1]);
    long n = -1;
    if (read(fds[0], &n, sizeof n) != (ssize_t)sizeof n) n = -1;
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? n : -1;
}

static void many_graphs_read_one_at_a_time_need_little_memory(void **state) {
    (void)state;
    if (UNDER_ASAN) {
        print_message("skipped under AddressSanitizer (it reserves terabytes of address space)\n");
        skip();
    }
    enum { COUNT = 300000 };
    size_t size = 5 * (size_t)COUNT;
    char *text = malloc(size + 1);
    assert_non_null(text);
    for (size_t k = 0; k < COUNT; ++k) memcpy(text + 5 * k, "0\n0\n\n", 5);
    text[size] = '\0';
    /* every graph, in 64 MB of address space (the input is 1.5 MB) */
    assert_int_equal(read_many_graphs(text, size, 1, 64), COUNT);
    /* and the point of streaming: all of them at once do not fit there */
    assert_int_equal(read_many_graphs(text, size, 0, 64), -1);
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(graphs_come_one_at_a_time_in_order_then_null),
        cmocka_unit_test(an_error_in_a_later_graph_keeps_the_earlier_ones_and_sticks),
        cmocka_unit_test(an_input_without_graphs_is_an_error_at_the_first_call),
        cmocka_unit_test(a_stray_separator_warns_with_its_graph),
        cmocka_unit_test(bad_arguments_are_rejected),
        cmocka_unit_test(the_uai_extension_is_recognized_in_any_case),
        cmocka_unit_test(a_uai_reader_maps_every_model_state),
        cmocka_unit_test(many_graphs_read_one_at_a_time_need_little_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
