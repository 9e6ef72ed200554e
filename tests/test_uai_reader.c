/*
 * The UAI reader (concord_read_uai_buffer) on hand-written models and
 * evidence: every malformed input is rejected with CONCORD_EPARSE (or
 * CONCORD_EINFEASIBLE when zeros and evidence leave nothing possible), no
 * graph, and a message that starts with the right "name:line:" and names the
 * problem; valid models become the graph the UAI semantics call for: one
 * multi-variable per UAI variable with the states that evidence and zero
 * unary potentials leave, one DENSE factor per table of two or more
 * variables (zero entries forbidden), unary tables added (not replaced) into
 * the state scores, scores that are natural logs, in both evidence layouts
 * and for BAYES files (checked against brute-force enumeration here).
 */
#include <math.h>
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

enum { ERROR_SIZE = 512 };

/* Reads a model (and evidence, NULL: none) named "m.uai" / "e.evid". */
static int read_model(const char *model, const char *evidence, concord_graph **g, char *error) {
    return concord_read_uai_buffer(model, strlen(model), "m.uai", evidence,
                                   evidence ? strlen(evidence) : 0, "e.evid", g, error,
                                   ERROR_SIZE);
}

/* Reads a model that must be valid. */
static concord_graph *read_ok(const char *model, const char *evidence) {
    char error[ERROR_SIZE];
    concord_graph *g = NULL;
    int rc = read_model(model, evidence, &g, error);
    if (rc != CONCORD_OK) print_error("unexpected failure: %s\n", error);
    assert_int_equal(rc, CONCORD_OK);
    assert_non_null(g);
    return g;
}

/* The read must fail with `code`, no graph, and a message that starts with
 * `where` ("m.uai:3:") and contains `phrase`. */
static void expect_error(const char *model, const char *evidence, int code, const char *where,
                         const char *phrase) {
    char error[ERROR_SIZE];
    concord_graph *sentinel = concord_graph_new(); /* the reader must reset *graph */
    concord_graph *g = sentinel;
    int rc = read_model(model, evidence, &g, error);
    concord_graph_free(sentinel);
    if (rc != code || g != NULL || strncmp(error, where, strlen(where)) != 0 ||
        !strstr(error, phrase))
        print_error("model:\n%s\nevidence: %s\nexpected code %d at '%s' with '%s'\n"
                    "got code %d: '%s'\n",
                    model, evidence ? evidence : "(none)", code, where, phrase, rc, error);
    assert_int_equal(rc, code);
    assert_null(g);
    assert_int_equal(strncmp(error, where, strlen(where)), 0);
    /* "m.uai:3:" must not match "m.uai:31:" */
    assert_true(error[strlen(where)] == ' ');
    assert_non_null(strstr(error, phrase));
}

/* A valid two-variable model used as the base of the evidence cases. */
static const char two_vars[] = "MARKOV\n"
                               "2\n"
                               "2 3\n"
                               "2\n"
                               "1 0\n"
                               "2 0 1\n"
                               "\n"
                               "2\n"
                               " 0.25 0.75\n"
                               "\n"
                               "6\n"
                               " 1 2 3\n"
                               " 4 5 6\n";

static void bad_header_word_is_rejected(void **state) {
    (void)state;
    expect_error("MARKOF\n1\n2\n0\n", NULL, CONCORD_EPARSE, "m.uai:1:",
                 "expected MARKOV or BAYES, found 'MARKOF'");
    expect_error("\n\nmarkov\n1\n2\n0\n", NULL, CONCORD_EPARSE, "m.uai:3:",
                 "expected MARKOV or BAYES, found 'markov'");
    expect_error("1\n2\n0\n", NULL, CONCORD_EPARSE, "m.uai:1:", "expected MARKOV or BAYES");
    expect_error("", NULL, CONCORD_EPARSE, "m.uai:", "empty file");
    expect_error("  \n\n", NULL, CONCORD_EPARSE, "m.uai:", "empty file");
}

static void bad_counts_are_rejected(void **state) {
    (void)state;
    /* No variables, or a count that is not a positive integer. */
    expect_error("MARKOV\n0\n0\n", NULL, CONCORD_EPARSE, "m.uai:2:",
                 "expected the number of variables");
    expect_error("MARKOV\ntwo\n2 2\n0\n", NULL, CONCORD_EPARSE, "m.uai:2:",
                 "found 'two'");
    expect_error("MARKOV\n2.0\n2 2\n0\n", NULL, CONCORD_EPARSE, "m.uai:2:",
                 "expected the number of variables");
    /* Fewer cardinalities than N: the file ends in them... */
    expect_error("MARKOV\n3\n2 2\n", NULL, CONCORD_EPARSE, "m.uai:3:",
                 "truncated file: expected a cardinality");
    /* ...or the numbers that follow are taken as cardinalities and the
     * misalignment shows up at the first impossible token (the format is
     * whitespace-separated, so line breaks do not delimit the list). */
    expect_error("MARKOV\n3\n2 2\n1\n1 0\n2 0.5 0.5\n", NULL, CONCORD_EPARSE, "m.uai:5:",
                 "expected a scope size (an integer in [1, 3]), found '0'");
    /* A cardinality of zero or a negative one. */
    expect_error("MARKOV\n2\n2 0\n0\n", NULL, CONCORD_EPARSE, "m.uai:3:",
                 "expected a cardinality");
    expect_error("MARKOV\n2\n-2 2\n0\n", NULL, CONCORD_EPARSE, "m.uai:3:",
                 "expected a cardinality");
    /* A negative number of functions. */
    expect_error("MARKOV\n2\n2 2\n-1\n", NULL, CONCORD_EPARSE, "m.uai:4:",
                 "expected the number of functions");
    /* Scope sizes beyond N (and empty scopes). */
    expect_error("MARKOV\n2\n2 2\n1\n3 0 1 0\n8 1 1 1 1 1 1 1 1\n", NULL, CONCORD_EPARSE,
                 "m.uai:5:", "expected a scope size (an integer in [1, 2]), found '3'");
    expect_error("MARKOV\n2\n2 2\n1\n0\n1 1\n", NULL, CONCORD_EPARSE, "m.uai:5:",
                 "expected a scope size");
    /* Variable indices out of range (they are 0-based). */
    expect_error("MARKOV\n2\n2 2\n2\n1 0\n2 0 2\n2 1 1\n4 1 1 1 1\n", NULL, CONCORD_EPARSE,
                 "m.uai:6:", "expected a variable of the scope (an integer in [0, 1]), found '2'");
    expect_error("MARKOV\n2\n2 2\n1\n2 -1 0\n4 1 1 1 1\n", NULL, CONCORD_EPARSE, "m.uai:5:",
                 "expected a variable of the scope (an integer in [0, 1]), found '-1'");
    /* A variable repeated in a scope. */
    expect_error("MARKOV\n3\n2 2 2\n2\n1 0\n3 1 2 1\n2 1 1\n8 1 1 1 1 1 1 1 1\n", NULL,
                 CONCORD_EPARSE, "m.uai:6:", "function 1: variable 1 appears twice in its scope");
}

static void table_size_must_match_its_scope(void **state) {
    (void)state;
    expect_error("MARKOV\n2\n2 3\n1\n2 0 1\n5\n1 2 3 4 5\n", NULL, CONCORD_EPARSE, "m.uai:6:",
                 "function 0: the table has 5 entries, its scope needs 6");
    expect_error("MARKOV\n2\n2 3\n1\n2 0 1\n7\n1 2 3 4 5 6 7\n", NULL, CONCORD_EPARSE,
                 "m.uai:6:", "function 0: the table has 7 entries, its scope needs 6");
    /* The count is right, but the second table's entries run into the
     * first: the stray token is reported where it stands. */
    expect_error("MARKOV\n2\n2 3\n2\n1 0\n2 0 1\n2 1 1 1\n6 1 2 3 4 5 6\n", NULL, CONCORD_EPARSE,
                 "m.uai:7:", "function 1: the table has 1 entries, its scope needs 6");
}

static void bad_table_entries_are_rejected(void **state) {
    (void)state;
    static const char *const prefix = "MARKOV\n1\n3\n1\n1 0\n3\n";
    static const struct {
        const char *entries;
        const char *phrase;
    } cases[] = {
        {"1 -0.5 2\n", "function 0: negative potential -0.5"},
        {"1 -1e-300 2\n", "function 0: negative potential -1e-300"},
        {"1 nan 2\n", "function 0: entry 'nan' is not a finite decimal number"},
        {"1 NaN 2\n", "function 0: entry 'NaN' is not a finite decimal number"},
        {"1 inf 2\n", "function 0: entry 'inf' is not a finite decimal number"},
        {"1 -inf 2\n", "function 0: entry '-inf' is not a finite decimal number"},
        {"1 infinity 2\n", "function 0: entry 'infinity' is not a finite decimal number"},
        {"1 1e400 2\n",
         "function 0: entry '1e400' is beyond the largest double (1.8e308) in magnitude"},
        {"1 abc 2\n", "function 0: entry 'abc' is not a finite decimal number"},
        {"1 0.5x 2\n", "function 0: entry '0.5x' is not a finite decimal number"},
        {"1 1,5 2\n", "function 0: entry '1,5' is not a finite decimal number"},
        /* strtod's hexadecimal forms are not numbers of the format */
        {"1 0x10 2\n", "function 0: entry '0x10' is not a finite decimal number"},
        {"1 0X1P-3 2\n", "function 0: entry '0X1P-3' is not a finite decimal number"},
        /* as 0 it would forbid its state */
        {"1 1e-400 2\n",
         "function 0: entry '1e-400' is below the smallest positive double (4.9e-324)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        char model[256];
        snprintf(model, sizeof model, "%s%s", prefix, cases[k].entries);
        expect_error(model, NULL, CONCORD_EPARSE, "m.uai:7:", cases[k].phrase);
    }
    /* The entry is reported on its own line, not the table's first. */
    expect_error("MARKOV\n1\n3\n1\n1 0\n3\n1\n2\n-3\n", NULL, CONCORD_EPARSE, "m.uai:9:",
                 "negative potential -3");
}

/* A bad token is echoed whole, with control characters (NUL included)
 * shown as '?': "2<NUL>3" must not appear as the valid-looking '2'. */
static void bad_tokens_are_echoed_whole_with_control_characters_masked(void **state) {
    (void)state;
    char error[ERROR_SIZE];
    concord_graph *g = NULL;
    static const char with_soh[] = "MARKOV\n1\n2\n1\n1 0\n2\n1 2\0013\n";
    assert_int_equal(concord_read_uai_buffer(with_soh, sizeof with_soh - 1, "m.uai", NULL, 0,
                                             NULL, &g, error, sizeof error),
                     CONCORD_EPARSE);
    assert_null(g);
    assert_non_null(
        strstr(error, "m.uai:7: function 0: entry '2?3' is not a finite decimal number"));
    static const char with_nul[] = "MARKOV\n1\n2\n1\n1 0\n2\n1 2\0003\n";
    assert_int_equal(concord_read_uai_buffer(with_nul, sizeof with_nul - 1, "m.uai", NULL, 0,
                                             NULL, &g, error, sizeof error),
                     CONCORD_EPARSE);
    assert_null(g);
    if (!strstr(error, "entry '2?3'")) print_error("got: %s\n", error);
    assert_non_null(
        strstr(error, "m.uai:7: function 0: entry '2?3' is not a finite decimal number"));
}

/* A file cut after each of its tokens is truncated, and the message says
 * what was expected next and where the file stopped. */
static void truncation_at_every_stage_is_reported(void **state) {
    (void)state;
    static const struct {
        const char *model;
        const char *where;
        const char *phrase;
    } cases[] = {
        {"MARKOV", "m.uai:1:", "truncated file: expected the number of variables"},
        {"MARKOV\n2\n", "m.uai:2:", "truncated file: expected a cardinality"},
        {"MARKOV\n2\n2", "m.uai:3:", "truncated file: expected a cardinality"},
        {"MARKOV\n2\n2 3\n", "m.uai:3:", "truncated file: expected the number of functions"},
        {"MARKOV\n2\n2 3\n2\n", "m.uai:4:", "truncated file: expected a scope size"},
        {"MARKOV\n2\n2 3\n2\n1", "m.uai:5:", "truncated file: expected a variable of the scope"},
        {"MARKOV\n2\n2 3\n2\n1 0\n", "m.uai:5:", "truncated file: expected a scope size"},
        {"MARKOV\n2\n2 3\n2\n1 0\n2 0", "m.uai:6:",
         "truncated file: expected a variable of the scope"},
        {"MARKOV\n2\n2 3\n2\n1 0\n2 0 1\n", "m.uai:6:",
         "truncated file: expected the number of table entries"},
        {"MARKOV\n2\n2 3\n2\n1 0\n2 0 1\n2\n", "m.uai:7:",
         "truncated file: function 0 has 0 of its 2 entries"},
        {"MARKOV\n2\n2 3\n2\n1 0\n2 0 1\n2\n1\n", "m.uai:8:",
         "truncated file: function 0 has 1 of its 2 entries"},
        {"MARKOV\n2\n2 3\n2\n1 0\n2 0 1\n2\n1 1\n", "m.uai:8:",
         "truncated file: expected the number of table entries"},
        {"MARKOV\n2\n2 3\n2\n1 0\n2 0 1\n2\n1 1\n6\n1 2 3 4 5", "m.uai:10:",
         "truncated file: function 1 has 5 of its 6 entries"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
        expect_error(cases[k].model, NULL, CONCORD_EPARSE, cases[k].where, cases[k].phrase);
    /* And every prefix of a valid model that cuts a token off or leaves
     * some out fails without a graph (the full model reads). */
    size_t n = strlen(two_vars);
    for (size_t cut = 0; cut < n; ++cut) {
        char prefix[sizeof two_vars];
        memcpy(prefix, two_vars, cut);
        prefix[cut] = '\0';
        /* Only cuts after the last token ("6") leave a complete model. */
        if (strspn(two_vars + cut, " \n") == n - cut) continue;
        char error[ERROR_SIZE];
        concord_graph *g = NULL;
        int rc = read_model(prefix, NULL, &g, error);
        if (rc == CONCORD_OK) print_error("prefix of %zu bytes read as valid\n", cut);
        assert_int_equal(rc, CONCORD_EPARSE);
        assert_null(g);
        assert_int_equal(strncmp(error, "m.uai:", 6), 0);
    }
    concord_graph_free(read_ok(two_vars, NULL));
}

static void trailing_garbage_is_rejected(void **state) {
    (void)state;
    char model[sizeof two_vars + 32];
    snprintf(model, sizeof model, "%s\n\n7 8\n", two_vars);
    expect_error(model, NULL, CONCORD_EPARSE, "m.uai:16:", "unexpected '7' after the last table");
    snprintf(model, sizeof model, "%sEND\n", two_vars);
    expect_error(model, NULL, CONCORD_EPARSE, "m.uai:14:",
                 "unexpected 'END' after the last table");
    /* Trailing blank space and line ends are fine. */
    snprintf(model, sizeof model, "%s \n\n\t\r\n", two_vars);
    concord_graph_free(read_ok(model, NULL));
}

static void bad_evidence_is_rejected_with_the_evidence_name(void **state) {
    (void)state;
    static const struct {
        const char *evidence;
        const char *where;
        const char *phrase;
    } cases[] = {
        /* variable out of range (N = 2) */
        {"1 2 0", "e.evid:1:", "expected an observed variable (an integer in [0, 1]), found '2'"},
        {"1 -1 0", "e.evid:1:",
         "expected an observed variable (an integer in [0, 1]), found '-1'"},
        /* value out of range (variable 1 has 3 states, variable 0 has 2) */
        {"1 1 3", "e.evid:1:", "expected an observed value (an integer in [0, 2]), found '3'"},
        {"2\n1 2\n0 2\n", "e.evid:3:",
         "expected an observed value (an integer in [0, 1]), found '2'"},
        {"1 0 -1", "e.evid:1:", "expected an observed value (an integer in [0, 1]), found '-1'"},
        {"1 0 x", "e.evid:1:", "expected an observed value"},
        /* contradictory */
        {"2 0 1 0 0", "e.evid:1:", "variable 0 is observed twice with different values"},
        {"1\n2\n1 0\n1 2\n", "e.evid:4:",
         "variable 1 is observed twice with different values"},
        /* wrong number of pairs, in either layout */
        {"2 0 1", "e.evid:1:", "expected 2 (variable, value) pairs after the count"},
        {"1 0 1 1", "e.evid:1:", "the count 1 is followed by 3 values: neither one (variable, "
                                 "value) pair nor"},
        {"1 0 1 extra", "e.evid:1:", "the count 1 is followed by 3 values: neither one (variable, "
                                     "value) pair nor, in the older layout (one sample), a count "
                                     "and that many pairs (here 0, followed by 2 values)"},
        {"1\n2\n0 1\n", "e.evid:2:", "in the older layout (one sample), a count and that many "
                                      "pairs (here 2, followed by 2 values)"},
        {"0 1 1", "e.evid:1:", "expected 0 (variable, value) pairs after the count, found 2 "
                               "values"},
        {"3 0 1 1 1", "e.evid:1:", "expected 3 (variable, value) pairs after the count"},
        /* more than one sample in the older layout */
        {"2\n1 0 1\n1 0 0\n", "e.evid:1:", "(variable, value) pairs after the count"},
        /* not a count at all */
        {"E 0 1", "e.evid:1:", "expected the number of observed variables"},
        {"-1", "e.evid:1:", "expected the number of observed variables"},
        {"\n\n1.5 0 1", "e.evid:3:", "expected the number of observed variables"},
        /* older layout: more observed variables than the model has */
        {"1 3 0 0 1 0 0 1", "e.evid:1:", "expected the number of observed variables"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k)
        expect_error(two_vars, cases[k].evidence, CONCORD_EPARSE, cases[k].where, cases[k].phrase);
}

/* A count so large that twice it overflows int64 must be a plain parse
 * error (the layout check multiplies it by 2). */
static void huge_evidence_count_is_a_parse_error(void **state) {
    (void)state;
    expect_error(two_vars, "9223372036854775807 0 1", CONCORD_EPARSE, "e.evid:1:",
                 "pairs after the count");
    expect_error(two_vars, "4611686018427387904", CONCORD_EPARSE, "e.evid:1:",
                 "pairs after the count");
}

/* Reads the model in a child process limited to 512 MB of address space
 * and returns the reader's code (-1 if the child died). */
static int read_code_with_little_memory(const char *model) {
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit limit = {(rlim_t)512 << 20, (rlim_t)512 << 20};
        if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(100);
        char error[ERROR_SIZE];
        concord_graph *g = NULL;
        int rc = read_model(model, NULL, &g, error);
        concord_graph_free(g);
        _exit(rc);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Counts are checked against the data that follows, not trusted for
 * allocation: a 25-byte file announcing 2e9 variables or functions is a
 * truncated file (a parse error), not a request for gigabytes. */
static void huge_counts_in_a_short_file_are_parse_errors(void **state) {
    (void)state;
    if (UNDER_ASAN) {
        /* AddressSanitizer reserves terabytes of shadow address space, so
         * an address-space limit cannot be used; the plain build checks. */
        print_message("skipped under AddressSanitizer\n");
        skip();
    }
    static const char *const models[] = {
        "MARKOV\n2000000000\n2 2\n",
        "MARKOV\n1\n2\n2000000000\n1 0\n",
        "BAYES\n3\n2 3 2\n777777772\n",
    };
    for (size_t k = 0; k < sizeof models / sizeof models[0]; ++k) {
        int rc = read_code_with_little_memory(models[k]);
        if (rc != CONCORD_EPARSE)
            print_error("%s: code %d (%s), expected a parse error\n", models[k], rc,
                        rc >= 0 ? concord_strerror(rc) : "died");
        assert_int_equal(rc, CONCORD_EPARSE);
    }
    /* A table beyond the reader's size limit is refused before its
     * entries are read. */
    expect_error("MARKOV\n2\n5000 5000\n1\n2 0 1\n25000000\n", NULL, CONCORD_EPARSE,
                 "m.uai:5:", "function 0: table larger than");
}

/* A variable's states need table entries to back them: a short model
 * declaring 10^8 states (in no table, or in a table the file does not
 * hold) is a parse error at that cardinality, within little memory, not
 * gigabytes of states. Small variables in no table still load. */
static void states_the_model_cannot_back_are_parse_errors(void **state) {
    (void)state;
    expect_error("MARKOV\n1\n100000000\n0\n", NULL, CONCORD_EPARSE, "m.uai:3:",
                 "variable 0 has 100000000 states");
    expect_error("MARKOV\n2\n2 100000000\n1\n1 0\n2 1 1\n", NULL, CONCORD_EPARSE,
                 "m.uai:3:", "variable 1 has 100000000 states, 100000002 in all");
    expect_error("MARKOV\n3\n40000 30000 2\n0\n", NULL, CONCORD_EPARSE, "m.uai:3:",
                 "variable 1 has 30000 states, 70000 in all");
    if (!UNDER_ASAN) {
        static const char *const models[] = {"MARKOV\n1\n100000000\n0\n",
                                             "BAYES\n1\n2147483647\n1\n1 0\n1 1\n"};
        for (size_t k = 0; k < sizeof models / sizeof models[0]; ++k)
            assert_int_equal(read_code_with_little_memory(models[k]), CONCORD_EPARSE);
    }
    concord_graph *g = read_ok("MARKOV\n2\n1000 2\n1\n1 1\n2 1 1\n", NULL);
    assert_int_equal(concord_num_variables(g), 1002);
    assert_int_equal(concord_num_multi_variables(g), 2);
    concord_graph_free(g);
}

static void models_with_nothing_possible_are_infeasible(void **state) {
    (void)state;
    /* A unary table of zeros leaves variable 0 no state. */
    expect_error("MARKOV\n2\n2 2\n2\n1 0\n2 0 1\n2 0 0\n4 1 1 1 1\n", NULL, CONCORD_EINFEASIBLE,
                 "m.uai:", "variable 0 has no possible state left");
    /* Two unary tables whose zeros together exclude both states. */
    expect_error("MARKOV\n1\n2\n2\n1 0\n1 0\n2 0 1\n2 1 0\n", NULL, CONCORD_EINFEASIBLE,
                 "m.uai:", "variable 0 has no possible state left");
    /* The evidence picks the one state a unary table forbids. */
    expect_error("MARKOV\n2\n2 2\n2\n1 0\n2 0 1\n2 0 1\n4 1 1 1 1\n", "1 0 0",
                 CONCORD_EINFEASIBLE, "m.uai:", "variable 0 has no possible state left");
    /* A pairwise table that is zero wherever the evidence allows: the
     * message points at the table. */
    expect_error("MARKOV\n2\n2 2\n1\n2 0 1\n4\n1 1\n0 0\n", "1 0 1", CONCORD_EINFEASIBLE,
                 "m.uai:6:", "function 0 gives probability zero to every state");
    expect_error("MARKOV\n2\n2 2\n1\n2 0 1\n4\n0 0\n0 0\n", NULL, CONCORD_EINFEASIBLE,
                 "m.uai:6:", "function 0 gives probability zero");
}

static void errors_fit_any_buffer_and_bad_arguments_are_rejected(void **state) {
    (void)state;
    const char *model = "MARKOV\n2\n2 2\n1\n2 0 1\n4 1 1 1 x\n";
    concord_graph *g = NULL;
    char small[12];
    memset(small, 'Z', sizeof small);
    assert_int_equal(concord_read_uai_buffer(model, strlen(model), "m.uai", NULL, 0, NULL, &g,
                                             small, 8),
                     CONCORD_EPARSE);
    assert_int_equal(strlen(small), 7); /* truncated and terminated */
    assert_int_equal(small[8], 'Z');    /* nothing written past the size */
    assert_int_equal(concord_read_uai_buffer(model, strlen(model), "m.uai", NULL, 0, NULL, &g,
                                             NULL, 0),
                     CONCORD_EPARSE);
    assert_null(g);
    assert_int_equal(concord_read_uai_buffer(model, strlen(model), "m.uai", NULL, 0, NULL, NULL,
                                             NULL, 0),
                     CONCORD_EINVAL);
    assert_int_equal(concord_read_uai_buffer(NULL, 5, "m.uai", NULL, 0, NULL, &g, NULL, 0),
                     CONCORD_EINVAL);
    assert_int_equal(concord_read_uai_buffer(model, strlen(model), "m.uai", NULL, 3, NULL, &g,
                                             NULL, 0),
                     CONCORD_EINVAL);
    /* Default names when none is given. */
    char error[ERROR_SIZE];
    assert_int_equal(concord_read_uai_buffer(model, strlen(model), NULL, NULL, 0, NULL, &g, error,
                                             sizeof error),
                     CONCORD_EPARSE);
    assert_int_equal(strncmp(error, "<model>:6:", 10), 0);
    assert_int_equal(concord_read_uai_buffer(two_vars, strlen(two_vars), NULL, "1 5 0", 5, NULL,
                                             &g, error, sizeof error),
                     CONCORD_EPARSE);
    assert_int_equal(strncmp(error, "<evidence>:1:", 13), 0);
}

/* ------------------------------------------------------------------------
 * Valid models
 * ------------------------------------------------------------------------ */

static int32_t multi_states(const concord_graph *g, int32_t m) {
    int32_t first = -1, count = -1;
    assert_int_equal(concord_multi_variable(g, m, &first, &count), CONCORD_OK);
    return count;
}

static int32_t multi_first(const concord_graph *g, int32_t m) {
    int32_t first = -1, count = -1;
    assert_int_equal(concord_multi_variable(g, m, &first, &count), CONCORD_OK);
    return first;
}

static void assert_close(double got, double expected, double tol) {
    if (!(fabs(got - expected) <= tol * (1.0 + fabs(expected))))
        print_error("got %.17g, expected %.17g\n", got, expected);
    assert_true(fabs(got - expected) <= tol * (1.0 + fabs(expected)));
}

/* concord_solver_evaluate with a solver of its own. */
static int evaluate(const concord_graph *g, const double *x, concord_decoding *d) {
    concord_solver *solver = new_solver_or_fail(g);
    int rc = concord_solver_evaluate(solver, x, d);
    concord_solver_free(solver);
    return rc;
}

/* Solves, decodes, and checks the decoded labels and value. */
static void assert_map(concord_graph *g, const int32_t *labels, double value) {
    concord_solver *solver = new_solver_or_fail(g);
    concord_info info;
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    assert_close(info.value, value, 1e-6);
    assert_true(info.upper_bound >= value - 1e-6 * (1 + fabs(value)));
    concord_decoding dec;
    assert_int_equal(concord_solver_decode(solver, &dec), CONCORD_OK);
    assert_int_equal(dec.violated, 0);
    assert_close(dec.value, value, 1e-9);
    int32_t n = concord_num_multi_variables(g);
    int32_t got[16];
    assert_true(n <= 16);
    assert_int_equal(concord_solver_decoded_labels(solver, got), CONCORD_OK);
    for (int32_t m = 0; m < n; ++m) assert_int_equal(got[m], labels[m]);
    concord_solver_free(solver);
}

/* Two unary tables on one variable multiply (their logs add): with
 * a = (4, 1, 3) and b = (1, 4, 3) the product (4, 4, 9) picks state 2,
 * which neither table alone (nor the last one, as AD3 does) would pick. */
static void unary_tables_on_one_variable_add_their_logs(void **state) {
    (void)state;
    const char *model = "MARKOV\n1\n3\n2\n1 0\n1 0\n3\n4 1 3\n3\n1 4 3\n";
    concord_graph *g = read_ok(model, NULL);
    assert_int_equal(concord_num_multi_variables(g), 1);
    assert_int_equal(multi_states(g, 0), 3);
    const double *theta = concord_variable_scores(g);
    assert_close(theta[0], log(4.0), 1e-15);
    assert_close(theta[1], log(4.0), 1e-15);
    assert_close(theta[2], log(9.0), 1e-15);
    int32_t labels[1] = {2};
    assert_map(g, labels, log(9.0));
    concord_graph_free(g);

    /* Same with a pairwise table present (the variable then has no XOR of
     * its own) and the unary tables listed after and before it. */
    model = "MARKOV\n2\n3 2\n3\n1 0\n2 0 1\n1 0\n"
            "3\n4 1 3\n6\n2 1\n2 1\n2 1\n3\n1 4 3\n";
    g = read_ok(model, NULL);
    assert_int_equal(concord_num_factors(g), 1); /* the DENSE; its states are one-hot */
    int32_t both[2] = {2, 0};
    assert_map(g, both, log(18.0));
    concord_graph_free(g);
}

/* Evidence and zero unary potentials remove states; tables of two or more
 * variables become DENSE factors sliced to the remaining states; variables
 * in no such table get an XOR. */
static void graph_structure_follows_tables_evidence_and_zeros(void **state) {
    (void)state;
    static const char model[] = "MARKOV\n"
                                "4\n"
                                "2 3 2 2\n"
                                "5\n"
                                "1 0\n"
                                "2 0 1\n"
                                "3 0 1 2\n"
                                "1 2\n"
                                "1 3\n"
                                "2 0.5 0.5\n"
                                "6 1 2 3 4 5 6\n"
                                "12 1 2 3 4 5 6 7 8 9 10 11 12\n"
                                "2 0 1\n"
                                "2 2 3\n";
    /* Without evidence: var 2 loses state 0 (zero), all else stays; var 3
     * is in no table of two or more and gets an XOR (factor 0). */
    concord_graph *g = read_ok(model, NULL);
    assert_int_equal(concord_num_multi_variables(g), 4);
    assert_int_equal(multi_states(g, 0), 2);
    assert_int_equal(multi_states(g, 1), 3);
    assert_int_equal(multi_states(g, 2), 1);
    assert_int_equal(multi_states(g, 3), 2);
    assert_int_equal(concord_num_variables(g), 8);
    assert_int_equal(concord_num_factors(g), 3); /* XOR(var 3), two DENSE */
    int32_t first, count;
    assert_int_equal(concord_factor_additionals(g, 0, &first, &count), CONCORD_OK);
    assert_int_equal(count, 0);
    assert_int_equal(concord_factor_additionals(g, 1, &first, &count), CONCORD_OK);
    assert_int_equal(count, 6);
    assert_int_equal(concord_factor_additionals(g, 2, &first, &count), CONCORD_OK);
    assert_int_equal(count, 6); /* 2 x 3 x 1 */
    const double *phi = concord_additional_scores(g);
    /* The triple table sliced to x2 = 1: entries 2, 4, ..., 12. */
    for (int k = 0; k < 6; ++k) assert_close(phi[first + k], log(2.0 * (k + 1)), 1e-15);
    const double *theta = concord_variable_scores(g);
    assert_close(theta[multi_first(g, 2)], 0.0, 1e-15);           /* log 1 */
    assert_close(theta[multi_first(g, 3)], log(2.0), 1e-15);
    assert_close(theta[multi_first(g, 3) + 1], log(3.0), 1e-15);
    int32_t kept[3] = {-1, -1, -1};
    assert_int_equal(concord_multi_variable_labels(g, 1, kept), CONCORD_OK);
    assert_int_equal(kept[0], 0);
    assert_int_equal(kept[1], 1);
    assert_int_equal(kept[2], 2);
    assert_int_equal(concord_multi_variable_labels(g, 2, kept), CONCORD_OK);
    assert_int_equal(kept[0], 1); /* state 0 removed by its zero */
    assert_int_equal(concord_multi_variable_labels(g, 4, kept), CONCORD_EINVAL);
    assert_int_equal(concord_multi_variable_labels(g, -1, kept), CONCORD_EINVAL);
    assert_int_equal(concord_multi_variable_labels(g, 0, NULL), CONCORD_EINVAL);
    concord_graph_free(g);

    /* With evidence x1 = 2: var 1 keeps one state, var 2 one. */
    g = read_ok(model, "1\n1 2\n");
    assert_int_equal(concord_num_multi_variables(g), 4);
    assert_int_equal(multi_states(g, 0), 2);
    assert_int_equal(multi_states(g, 1), 1);
    assert_int_equal(multi_states(g, 2), 1);
    assert_int_equal(multi_states(g, 3), 2);
    assert_int_equal(concord_multi_variable_labels(g, 1, kept), CONCORD_OK);
    assert_int_equal(kept[0], 2); /* the evidence's state */
    assert_int_equal(concord_num_variables(g), 6);
    assert_int_equal(concord_num_factors(g), 3);
    assert_int_equal(concord_factor_additionals(g, 1, &first, &count), CONCORD_OK);
    assert_int_equal(count, 2);
    phi = concord_additional_scores(g);
    assert_close(phi[first], log(3.0), 1e-15); /* (0, 2) */
    assert_close(phi[first + 1], log(6.0), 1e-15); /* (1, 2) */
    assert_int_equal(concord_factor_additionals(g, 2, &first, &count), CONCORD_OK);
    assert_int_equal(count, 2);
    assert_close(phi[first], log(6.0), 1e-15);      /* (0, 2, 1): entry 5 */
    assert_close(phi[first + 1], log(12.0), 1e-15); /* (1, 2, 1): entry 11 */
    /* MAP: x0 = 1 (6 * 12 * 0.5), x1 = 2, x2 = 1, x3 = 1 (3 > 2). */
    int32_t labels[4] = {1, 2, 1, 1};
    assert_map(g, labels, log(0.5 * 6.0 * 12.0 * 3.0));
    /* Labels of removed states have no assignment. */
    double x[8];
    int32_t removed[4] = {1, 0, 1, 1};
    assert_int_equal(concord_assignment_from_labels(g, removed, x), CONCORD_EINFEASIBLE);
    int32_t zeroed[4] = {1, 2, 0, 1};
    assert_int_equal(concord_assignment_from_labels(g, zeroed, x), CONCORD_EINFEASIBLE);
    concord_graph_free(g);
}

/* A zero entry of a pairwise table forbids that joint state: the MAP
 * avoids it even though the unary tables favour it, and evaluating it
 * reports a violation and -inf. */
static void zero_in_a_table_forbids_that_joint_state(void **state) {
    (void)state;
    const char *model = "MARKOV\n2\n2 2\n3\n1 0\n1 1\n2 0 1\n"
                        "2 1 5\n2 1 4\n4 1 1 1 0\n";
    concord_graph *g = read_ok(model, NULL);
    int32_t labels[2] = {1, 0};
    assert_map(g, labels, log(5.0));
    double x[4];
    int32_t both[2] = {1, 1};
    assert_int_equal(concord_assignment_from_labels(g, both, x), CONCORD_OK);
    concord_decoding d;
    assert_int_equal(evaluate(g, x, &d), CONCORD_OK);
    assert_int_equal(d.violated, 1);
    int32_t other[2] = {0, 1};
    assert_int_equal(concord_assignment_from_labels(g, other, x), CONCORD_OK);
    assert_int_equal(evaluate(g, x, &d), CONCORD_OK);
    assert_int_equal(d.violated, 0);
    assert_close(d.value, log(4.0), 1e-15);
    concord_graph_free(g);
}

static void both_evidence_layouts_fix_the_same_states(void **state) {
    (void)state;
    static const char *const layouts[] = {
        "2 1 1 0 1",           /* current: E, then E pairs */
        "2\n1 1\n0 1\n",       /* current, one pair a line */
        "1\n2 1 1 0 1\n",      /* older: 1 sample, then E and E pairs */
        "1 2\n1 1\n0 1",       /* older, no final newline */
    };
    for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; ++k) {
        concord_graph *g = read_ok(two_vars, layouts[k]);
        assert_int_equal(concord_num_multi_variables(g), 2);
        assert_int_equal(multi_states(g, 0), 1);
        assert_int_equal(multi_states(g, 1), 1);
        int32_t labels[2] = {1, 1};
        assert_map(g, labels, log(0.75) + log(5.0));
        concord_graph_free(g);
    }
    /* The same pair twice is consistent and allowed. */
    concord_graph *g = read_ok(two_vars, "3 1 1 0 1 1 1");
    assert_int_equal(multi_states(g, 1), 1);
    concord_graph_free(g);
    /* No evidence: empty file, "0", and the older "1 0". */
    static const char *const none[] = {"", "\n", "0", "0\n", "1 0", "1\n0\n"};
    for (size_t k = 0; k < sizeof none / sizeof none[0]; ++k) {
        g = read_ok(two_vars, none[k]);
        assert_int_equal(multi_states(g, 0), 2);
        assert_int_equal(multi_states(g, 1), 3);
        int32_t labels[2] = {1, 2};
        assert_map(g, labels, log(0.75) + log(6.0));
        concord_graph_free(g);
    }
}

/* The format is whitespace-separated: one line, tabs, CRLF line ends and
 * numbers in any floating-point notation give the same graph. */
static void layout_is_free_and_numbers_are_read_exactly(void **state) {
    (void)state;
    static const char *const variants[] = {
        "MARKOV 2 2 3 2 1 0 2 0 1 2 0.25 0.75 6 1 2 3 4 5 6",
        "MARKOV\r\n2\r\n2 3\r\n2\r\n1 0\r\n2 0 1\r\n\r\n2\r\n0.25 0.75\r\n6\r\n1 2 3\r\n4 5 6\r\n",
        "MARKOV\t2\t2\t3\n2\n1\t0\n2\t0\t1\n2\n2.5e-1 7.5E-1\n6\n1.0 2e0 +3 .4e1 5. 6\n",
    };
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; ++k) {
        concord_graph *g = read_ok(variants[k], NULL);
        assert_int_equal(concord_num_variables(g), 5);
        const double *theta = concord_variable_scores(g);
        assert_true(theta[0] == log(0.25));
        assert_true(theta[1] == log(0.75));
        int32_t first, count;
        assert_int_equal(concord_factor_additionals(g, 0, &first, &count), CONCORD_OK);
        assert_int_equal(count, 6);
        const double *phi = concord_additional_scores(g);
        for (int e = 0; e < 6; ++e) assert_true(phi[first + e] == log(e + 1.0));
        concord_graph_free(g);
    }
    /* A model without functions: one XOR per variable, all scores 0. */
    concord_graph *g = read_ok("MARKOV\n3\n2 1 4\n0\n", NULL);
    assert_int_equal(concord_num_multi_variables(g), 3);
    assert_int_equal(concord_num_factors(g), 3);
    assert_int_equal(concord_num_variables(g), 7);
    concord_graph_free(g);
}

/* A Bayes net by hand: A (2 states) -> B (3) -> C (2), B -> D (2), with
 * CPTs p(A), p(B|A), p(C|B), p(D|B) (the child is the last of the scope).
 * It is a tree, so the LP is tight: the LP value and the decoded value are
 * the brute-force MAP, with and without evidence, and concord_solver_evaluate
 * agrees with the product of the CPT entries on every assignment. */
static const char bayes[] = "BAYES\n"
                            "4\n"
                            "2 3 2 2\n"
                            "4\n"
                            "1 0\n"
                            "2 0 1\n"
                            "2 1 2\n"
                            "2 1 3\n"
                            "\n"
                            "2\n 0.6 0.4\n"
                            "\n"
                            "6\n 0.7 0.2 0.1\n 0.1 0.3 0.6\n"
                            "\n"
                            "6\n 0.9 0.1\n 0.5 0.5\n 0.0 1.0\n"
                            "\n"
                            "6\n 0.8 0.2\n 0.25 0.75\n 0.45 0.55\n";

static double bayes_prob(const int *x) {
    static const double pa[2] = {0.6, 0.4};
    static const double pba[2][3] = {{0.7, 0.2, 0.1}, {0.1, 0.3, 0.6}};
    static const double pcb[3][2] = {{0.9, 0.1}, {0.5, 0.5}, {0.0, 1.0}};
    static const double pdb[3][2] = {{0.8, 0.2}, {0.25, 0.75}, {0.45, 0.55}};
    return pa[x[0]] * pba[x[0]][x[1]] * pcb[x[1]][x[2]] * pdb[x[1]][x[3]];
}

static void bayes_file_matches_brute_force(void **state) {
    (void)state;
    static const char *const evidence[] = {NULL, "1 2 0", "2 3 1 0 0", "1\n1\n1 2\n"};
    for (size_t ev = 0; ev < sizeof evidence / sizeof evidence[0]; ++ev) {
        concord_graph *g = read_ok(bayes, evidence[ev]);
        int observed[4] = {-1, -1, -1, -1};
        if (ev == 1) observed[2] = 0;
        if (ev == 2) observed[3] = 1, observed[0] = 0;
        if (ev == 3) observed[1] = 2;
        double best = -INFINITY;
        int32_t best_labels[4] = {0, 0, 0, 0};
        double x[9];
        assert_true(concord_num_variables(g) <= 9);
        for (int code = 0; code < 24; ++code) {
            int a[4] = {code % 2, (code / 2) % 3, (code / 6) % 2, (code / 12) % 2};
            int32_t labels[4] = {a[0], a[1], a[2], a[3]};
            int allowed = 1;
            for (int i = 0; i < 4; ++i) allowed &= observed[i] < 0 || observed[i] == a[i];
            int rc = concord_assignment_from_labels(g, labels, x);
            if (!allowed) {
                assert_int_equal(rc, CONCORD_EINFEASIBLE);
                continue;
            }
            assert_int_equal(rc, CONCORD_OK);
            concord_decoding d;
            assert_int_equal(evaluate(g, x, &d), CONCORD_OK);
            double p = bayes_prob(a);
            if (p == 0.0) {
                assert_int_equal(d.violated, 1);
                assert_true(d.value == -INFINITY);
                continue;
            }
            assert_int_equal(d.violated, 0);
            assert_close(d.value, log(p), 1e-12);
            if (log(p) > best) {
                best = log(p);
                memcpy(best_labels, labels, sizeof labels);
            }
        }
        assert_map(g, best_labels, best);
        concord_graph_free(g);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_header_word_is_rejected),
        cmocka_unit_test(bad_counts_are_rejected),
        cmocka_unit_test(table_size_must_match_its_scope),
        cmocka_unit_test(bad_table_entries_are_rejected),
        cmocka_unit_test(bad_tokens_are_echoed_whole_with_control_characters_masked),
        cmocka_unit_test(truncation_at_every_stage_is_reported),
        cmocka_unit_test(trailing_garbage_is_rejected),
        cmocka_unit_test(bad_evidence_is_rejected_with_the_evidence_name),
        cmocka_unit_test(models_with_nothing_possible_are_infeasible),
        cmocka_unit_test(errors_fit_any_buffer_and_bad_arguments_are_rejected),
        cmocka_unit_test(unary_tables_on_one_variable_add_their_logs),
        cmocka_unit_test(graph_structure_follows_tables_evidence_and_zeros),
        cmocka_unit_test(zero_in_a_table_forbids_that_joint_state),
        cmocka_unit_test(both_evidence_layouts_fix_the_same_states),
        cmocka_unit_test(layout_is_free_and_numbers_are_read_exactly),
        cmocka_unit_test(bayes_file_matches_brute_force),
        /* Last: under UBSan a signed overflow in the reader aborts the
         * program, and the tests above should have run by then. */
        cmocka_unit_test(huge_counts_in_a_short_file_are_parse_errors),
        cmocka_unit_test(states_the_model_cannot_back_are_parse_errors),
        cmocka_unit_test(huge_evidence_count_is_a_parse_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
