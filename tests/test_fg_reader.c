/*
 * The strict .fg reader, through the public concord_read_buffer and
 * concord_read_file: every kind of malformed input (non-finite numbers,
 * bad indices, bad budgets, truncation, junk tokens, NUL bytes, overflowing
 * counts...) must be rejected with CONCORD_EPARSE (CONCORD_EIO for files
 * that cannot be read), return no graph at all, and explain itself with
 * "name:LINE: " and a phrase naming the problem; well-formed input (several
 * graphs, comments, CRLF, no final newline, AD3's stray separator lines,
 * negated links, every factor type) must load with exactly the structure
 * written, checked through the API getters; the repository's files of
 * every factor type (tests/data/fg) must load with the sizes and scores
 * their lines list, dense.fg solving to a brute force's optimum; and AD3's
 * own example files (../shared/data/ad3, skipped when absent) must load
 * with the sizes their headers declare.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "concord.h"
#include "io/text.h"
#include "testutil.h"

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

/* Collects the warnings sent by the reader. */
typedef struct warnings {
    int count;
    char first[512];
} warnings;

static void collect_warning(void *context, const char *message) {
    warnings *w = context;
    if (w->count++ == 0) snprintf(w->first, sizeof w->first, "%s", message);
}

/* One malformed input: its bytes, the line the message must name (0: the
 * message has no line, only "name: ") and a phrase it must contain. */
typedef struct bad_case {
    const char *data;
    size_t size;
    int line;
    const char *phrase;
} bad_case;

#define BAD(text, line, phrase) {text, sizeof(text) - 1, line, phrase}

/* Reads one malformed input; returns 0 when it was rejected as it should
 * be, or prints what went wrong and returns 1. */
static int check_rejected(const bad_case *c) {
    concord_graph *sentinel[1] = {NULL};
    concord_graph **graphs = sentinel; /* must be reset to NULL */
    size_t count = 99;
    char error[512];
    warnings w = {0};
    int rc = concord_read_buffer(c->data, c->size, "bad.fg", CONCORD_FORMAT_FG, &graphs, &count,
                                 error, sizeof error, collect_warning, &w);
    char prefix[64];
    if (c->line > 0) snprintf(prefix, sizeof prefix, "bad.fg:%d: ", c->line);
    else snprintf(prefix, sizeof prefix, "bad.fg: ");
    const char *problem = NULL;
    if (rc != CONCORD_EPARSE) problem = "the code is not CONCORD_EPARSE";
    else if (graphs != NULL) problem = "the graphs pointer is not NULL";
    else if (count != 0) problem = "the count is not 0";
    else if (strncmp(error, prefix, strlen(prefix)) != 0) problem = "the message does not start with the expected name:line";
    else if (!strstr(error, c->phrase)) problem = "the message lacks the expected phrase";
    if (!problem) return 0;
    print_message("FAILED: %s\n  input: \"", problem);
    for (size_t k = 0; k < c->size; ++k) {
        unsigned char ch = (unsigned char)c->data[k];
        if (ch == '\n') print_message("\\n");
        else if (ch == '\r') print_message("\\r");
        else if (ch < 32 || ch > 126) print_message("\\%03o", ch);
        else print_message("%c", ch);
    }
    print_message("\"\n  code %d, message \"%s\"\n  expected prefix \"%s\" and phrase \"%s\"\n",
                  rc, error, prefix, c->phrase);
    if (rc == CONCORD_OK) concord_free_graphs(graphs, count);
    return 1;
}

static void check_all_rejected(const bad_case *cases, size_t n) {
    int failures = 0;
    for (size_t k = 0; k < n; ++k) failures += check_rejected(&cases[k]);
    assert_int_equal(failures, 0);
}

#define CHECK_ALL_REJECTED(cases) check_all_rejected(cases, sizeof cases / sizeof cases[0])

/* Reads input that must load; returns the graphs. */
static concord_graph **read_ok(const char *data, size_t size, size_t expected_count,
                               warnings *w) {
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512];
    int rc = concord_read_buffer(data, size, "good.fg", CONCORD_FORMAT_FG, &graphs, &count, error,
                                 sizeof error, collect_warning, w);
    if (rc != CONCORD_OK) print_message("unexpected error %d: %s\n", rc, error);
    assert_int_equal(rc, CONCORD_OK);
    assert_string_equal(error, "");
    assert_non_null(graphs);
    assert_int_equal(count, expected_count);
    return graphs;
}

#define READ_OK(text, expected_count, w) read_ok(text, sizeof(text) - 1, expected_count, w)

static void assert_sizes(const concord_graph *g, int32_t n_vars, int32_t n_factors,
                         int32_t n_add) {
    assert_int_equal(concord_num_variables(g), n_vars);
    assert_int_equal(concord_num_factors(g), n_factors);
    assert_int_equal(concord_num_additionals(g), n_add);
}

static void assert_scores(const concord_graph *g, const double *expected, int32_t n) {
    const double *s = concord_variable_scores(g);
    assert_non_null(s);
    for (int32_t i = 0; i < n; ++i) assert_true(s[i] == expected[i]);
}

/* ------------------------------------------------------------------------
 * Malformed input
 * ------------------------------------------------------------------------ */

static void scores_out_of_range_are_rejected_naming_the_line(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("1\n0\nnan\n", 3, "score of variable 1 (nan) is not finite"),
        BAD("2\n0\n0.5\nNaN\n", 4, "score of variable 2 (NaN) is not finite"),
        BAD("2\n0\n0.5\ninf\n", 4, "score of variable 2 (inf) is not finite"),
        BAD("2\n0\n0.5\n-inf\n", 4, "score of variable 2 (-inf) is not finite"),
        BAD("2\n0\n0.5\n1e999\n", 4,
            "score of variable 2 (1e999) is beyond the largest double (1.8e308) in magnitude"),
        BAD("2\n0\n0.5\n-1e999\n", 4,
            "score of variable 2 (-1e999) is beyond the largest double (1.8e308) in magnitude"),
        /* -1e999 is no -inf: it does not forbid a transition, it is refused */
        BAD("2\n1\n0\n0\nSEQUENCE 2 1 2 1 2 -1e999 0 0 0\n", 5,
            "SEQUENCE factor: a transition score '-1e999' is beyond the largest double"),
        BAD("2\n0\n0.5\nInfinity\n", 4, "score of variable 2 (Infinity) is not finite"),
        /* finite, but beyond what the solvers take: named on its own line */
        BAD("4\n0\n0.5\n1e-305\n0.5\n0.5\n", 4, "score of variable 2 (1e-305) is out of range"),
        BAD("3\n0\n-1e301\n0.5\n0.5\n", 3, "score of variable 1 (-1e301) is out of range"),
        BAD("2\n1\n0\n0\nPAIR 2 1 2 nan\n", 5, "PAIR score"),
        BAD("2\n1\n0\n0\nPAIR 2 1 2 -inf\n", 5, "PAIR score"),
        BAD("2\n1\n0\n0\nPAIR 2 1 2 1e999\n", 5, "PAIR score"),
        BAD("2\n1\n0\n0\nBUDGET 2 1 2 nan\n", 5, "budget"),
        BAD("2\n1\n0\n0\nKNAPSACK 2 1 2 inf 1 1\n", 5, "cost"),
        BAD("2\n1\n0\n0\nKNAPSACK 2 1 2 1 1 nan\n", 5, "budget"),
    };
    CHECK_ALL_REJECTED(cases);
}

/* Numbers are decimal: strtod's hexadecimal forms (which AD3's atof takes,
 * but neither format has) are refused naming the token, wherever a number
 * is read. */
static void hexadecimal_numbers_are_rejected_naming_the_token(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("2\n0\n0.5\n0x10\n", 4,
            "expected the score of variable 2 (a decimal number), found '0x10'"),
        BAD("1\n0\n-0X1P3\n", 3,
            "expected the score of variable 1 (a decimal number), found '-0X1P3'"),
        BAD("2\n1\n0\n0\nPAIR 2 1 2 0x1p3\n", 5,
            "PAIR factor: expected the PAIR score (a finite decimal number), found '0x1p3'"),
        BAD("2\n1\n0\n0\nBUDGET 2 1 2 0x1\n", 5,
            "expected the budget (a finite decimal number), found '0x1'"),
        BAD("2\n1\n0\n0\nKNAPSACK 2 1 2 1 +0x.8 1\n", 5,
            "expected a cost (a finite decimal number), found '+0x.8'"),
        BAD("2\n1\n0\n0\nDENSE 2 1 2 1 2 0 0x0\n", 5,
            "expected a joint score (a finite decimal number), found '0x0'"),
        BAD("0x2\n0\n0\n0\n", 1, "expected the number of variables (an integer"),
        BAD("2\n1\n0\n0\nOR 2 1 0x2\n", 5, "'0x2' is not an integer"),
    };
    CHECK_ALL_REJECTED(cases);
}

/* A nonzero number below the smallest double is refused rather than read
 * as 0; a zero written with an exponent is 0. */
static void numbers_that_underflow_to_zero_are_rejected_naming_the_token(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("2\n0\n0.5\n1e-400\n", 4,
            "score of variable 2 (1e-400) is below the smallest positive double"),
        BAD("2\n1\n0\n0\nPAIR 2 1 2 -2e-324\n", 5,
            "PAIR factor: the PAIR score '-2e-324' is below the smallest positive double"),
    };
    CHECK_ALL_REJECTED(cases);
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[256];
    static const char zero[] = "1\n0\n0e-999\n";
    assert_int_equal(concord_read_buffer(zero, sizeof zero - 1, "z.fg", CONCORD_FORMAT_FG,
                                         &graphs, &count, error, sizeof error, NULL, NULL),
                     CONCORD_OK);
    concord_free_graphs(graphs, count);
}

static void out_of_range_indices_are_rejected_naming_the_line(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("2\n1\n0\n0\nOR 2 0 1\n", 5, "out of range"),
        BAD("2\n1\n0\n0\nOR 2 1 3\n", 5, "out of range"),
        BAD("2\n1\n0\n0\nOR 2 1 -3\n", 5, "out of range"),
        BAD("2\n1\n0\n0\nOR 2 1 -0\n", 5, "out of range"),
        BAD("2\n1\n0\n0\nOR 2 1 2147483649\n", 5, "out of range"),
        BAD("2\n1\n0\n0\nPAIR 2 1 3 0.5\n", 5, "out of range"),
        BAD("2\n2\n0\n0\nXOR 2 1 2\nBUDGET 2 1 0 1\n", 6, "out of range"),
        BAD("0\n1\nXOR 1 1\n", 3, "out of range"),
    };
    CHECK_ALL_REJECTED(cases);
}

static void a_variable_repeated_in_one_factor_is_rejected(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("2\n1\n0\n0\nXOR 2 2 2\n", 5, "more than once"),
        BAD("3\n1\n0\n0\n0\nOR 3 1 2 1\n", 6, "more than once"),
        BAD("3\n1\n0\n0\n0\nATMOSTONE 3 1 -1 2\n", 6, "more than once"),
        BAD("2\n1\n0\n0\nPAIR 2 1 1 0.5\n", 5, "more than once"),
        BAD("3\n1\n0\n0\n0\nKNAPSACK 2 3 3 1 1 1\n", 6, "more than once"),
        BAD("3\n1\n0\n0\n0\nBUDGET 3 1 2 -2 1\n", 6, "more than once"),
    };
    CHECK_ALL_REJECTED(cases);
}

static void bad_budgets_and_costs_are_rejected(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("2\n1\n0\n0\nBUDGET 2 1 2 -1\n", 5, "budget -1"),
        BAD("2\n1\n0\n0\nBUDGET_EXACT 2 1 2 -1\n", 5, "budget -1"),
        BAD("2\n1\n0\n0\nBUDGET 2 1 2 1.5\n", 5, "not an integer"),
        BAD("2\n1\n0\n0\nBUDGET 2 1 2 0.0001\n", 5, "not an integer"),
        BAD("2\n1\n0\n0\nBUDGET_EXACT 2 1 2 3\n", 5, "exceeds the degree"),
        BAD("2\n1\n0\n0\nKNAPSACK 2 1 2 -1 1 1\n", 5, "cost"),
        BAD("2\n1\n0\n0\nKNAPSACK 2 1 2 1 -0.5 1\n", 5, "-0.5"),
        BAD("2\n1\n0\n0\nKNAPSACK 2 1 2 1 1 -1\n", 5, "budget -1"),
    };
    CHECK_ALL_REJECTED(cases);
}

static void pair_with_wrong_degree_or_negated_index_is_rejected(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("3\n1\n0\n0\n0\nPAIR 3 1 2 3 0.5\n", 6, "degree 2"),
        BAD("3\n1\n0\n0\n0\nPAIR 1 1 0.5\n", 6, "degree 2"),
        BAD("2\n1\n0\n0\nPAIR 2 -1 2 0.5\n", 5, "negated"),
        BAD("2\n1\n0\n0\nPAIR 2 1 -2 0.5\n", 5, "negated"),
        BAD("2\n1\n0\n0\nPAIR 2 1 2\n", 5, "expected 1 field after the indices (the score of both on), found 0"),
    };
    CHECK_ALL_REJECTED(cases);
}

static void truncated_files_are_rejected_at_their_last_line(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("3\n", 1, "truncated file"),                        /* N line only */
        BAD("3", 1, "truncated file"),                          /* no newline */
        BAD("3\n2\n", 2, "truncated file"),                     /* no scores */
        BAD("3\n2\n0.1\n", 3, "truncated file: expected 3 variable scores, found 1"),
        BAD("3\n0\n0.1\n0.2\n\n\n", 6, "truncated file"),       /* blank tail */
        BAD("2\n2\n0\n0\nOR 2 1 2\n", 5, "truncated file: expected 2 factors, found 1"),
        BAD("2\n1\n0\n0\n", 4, "truncated file: expected 1 factors, found 0"),
        BAD("2\n1\n0\n0\nOR 2 1", 5, "expected 2 variable indices, found 1"),
        /* the error is in the second graph: its absolute line is named */
        BAD("1\n0\n0.5\n\n2\n1\n0\n0\n", 8, "truncated file"),
    };
    CHECK_ALL_REJECTED(cases);
}

static void non_numeric_tokens_are_rejected_naming_the_field(void **state) {
    (void)state;
    static const bad_case cases[] = {
        /* counts */
        BAD("x\n0\n", 1, "number of variables"),
        BAD("3.0\n0\n", 1, "number of variables"),
        BAD("0x3\n0\n", 1, "number of variables"),
        BAD("3 2\n", 1, "number of variables"),
        BAD("1\nabc\n0\n", 2, "number of factors"),
        BAD("1\n1e2\n0\n", 2, "number of factors"),
        /* scores */
        BAD("2\n0\n0.5\nabc\n", 4, "score of variable 2"),
        BAD("2\n0\n0.5\n1.0.0\n", 4, "score of variable 2"),
        BAD("2\n0\n0.5 0.25\n0\n", 3, "score of variable 1"),
        BAD("2\n0\n0.5\n--1\n", 4, "score of variable 2"),
        /* indices and degrees */
        BAD("2\n1\n0\n0\nOR 2 1 b\n", 5, "'b' is not an integer"),
        BAD("2\n1\n0\n0\nOR 2 1 2.0\n", 5, "'2.0' is not an integer"),
        BAD("2\n1\n0\n0\nOR 2 1 --2\n", 5, "not an integer"),
        BAD("2\n1\n0\n0\nOR 2 1 99999999999999999999\n", 5, "99999999999999999999"),
        BAD("2\n1\n0\n0\nOR two 1 2\n", 5, "degree"),
        BAD("2\n1\n0\n0\nOR\n", 5, "degree"),
        BAD("2\n1\n0\n0\nOR -2 1 2\n", 5, "degree"),
        /* budgets and parameters */
        BAD("2\n1\n0\n0\nBUDGET 2 1 2 one\n", 5, "expected the budget"),
        BAD("2\n1\n0\n0\nKNAPSACK 2 1 2 a 1 1\n", 5, "expected a cost"),
        BAD("2\n1\n0\n0\nPAIR 2 1 2 x\n", 5, "expected the PAIR score"),
    };
    CHECK_ALL_REJECTED(cases);
}

static void input_without_any_graph_is_rejected(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("", 0, "no graph"),
        BAD("\n  \n\t\n# only a comment\n", 4, "no graph"),
        BAD("# comment without newline", 1, "no graph"),
        BAD("\r\n\r\n", 2, "no graph"),
    };
    CHECK_ALL_REJECTED(cases);
    /* A NULL buffer of size 0 is the empty input. */
    concord_graph **graphs = NULL;
    size_t count = 7;
    char error[256];
    assert_int_equal(concord_read_buffer(NULL, 0, "empty.fg", CONCORD_FORMAT_FG, &graphs, &count,
                                         error, sizeof error, NULL, NULL),
                     CONCORD_EPARSE);
    assert_null(graphs);
    assert_int_equal(count, 0);
    assert_non_null(strstr(error, "empty.fg"));
    assert_non_null(strstr(error, "no graph"));
}

static void bad_factor_lines_are_rejected_naming_the_problem(void **state) {
    (void)state;
    static const bad_case cases[] = {
        /* empty factors */
        BAD("2\n1\n0\n0\nOR 0\n", 5, "no variables"),
        BAD("2\n1\n0\n0\nXOR 0\n", 5, "no variables"),
        BAD("2\n1\n0\n0\nBUDGET 0 1\n", 5, "no variables"),
        BAD("2\n1\n0\n0\nKNAPSACK 0 1\n", 5, "no variables"),
        BAD("2\n1\n0\n0\nPAIR 0 0.5\n", 5, "no variables"),
        /* unknown types (names are case-sensitive, as in AD3) */
        BAD("2\n1\n0\n0\nFOO 2 1 2\n", 5, "unknown factor type 'FOO'"),
        BAD("2\n1\n0\n0\nor 2 1 2\n", 5, "unknown factor type 'or'"),
        BAD("2\n1\n0\n0\nSEQUENCE 2 1 2 2 1 1 0 0 0 0 0 0\n", 5, "expected 6 fields after the indices (the length, the state counts and the transition scores), found 9"),
        BAD("2\n1\n0\n0\n1 2\n", 5, "unknown factor type '1'"),
        /* too many or too few fields */
        BAD("3\n1\n0\n0\n0\nOR 2 1 2 3\n", 6, "nothing may follow its indices, found 1 more field"),
        BAD("3\n1\n0\n0\n0\nOR 3 1 2\n", 6, "expected 3 variable indices, found 2"),
        BAD("3\n1\n0\n0\n0\nBUDGET 2 1 2\n", 6, "expected 1 field after the indices (the budget), found 0"),
        BAD("3\n1\n0\n0\n0\nBUDGET 2 1 2 1 1\n", 6, "expected 1 field after the indices (the budget), found 2"),
        BAD("3\n1\n0\n0\n0\nKNAPSACK 2 1 2 1 1\n", 6, "expected 3 fields after the indices (one cost per index, then the budget), found 2"),
        BAD("3\n1\n0\n0\n0\nXOR 99999 1 2\n", 6, "expected 99999 variable indices, found 2"),
        BAD("3\n1\n0\n0\n0\nXOR 9999999999999 1 2\n", 6, "found 2"),
        /* a factor line where a score was expected */
        BAD("2\n1\n0\nOR 2 1 2\n", 4, "score of variable 2"),
    };
    CHECK_ALL_REJECTED(cases);
}

static void negative_and_oversized_counts_are_rejected(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("-1\n0\n", 1, "number of variables"),
        BAD("2\n-1\n0\n0\n", 2, "number of factors"),
        BAD("2147483648\n0\n", 1, "number of variables"),
        BAD("1\n2147483648\n0\n", 2, "number of factors"),
        BAD("99999999999999999999999\n0\n", 1, "number of variables"),
        BAD("1\n18446744073709551617\n0\n", 2, "number of factors"),
        /* the largest allowed count, truncated right away */
        BAD("2147483647\n0\n1\n", 3, "truncated file"),
    };
    CHECK_ALL_REJECTED(cases);
}

static void embedded_nul_bytes_are_rejected(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("\000", 1, "number of variables"),
        BAD("3\000\n0\n0\n0\n0\n", 1, "number of variables"),
        BAD("1\n\000\n0\n", 2, "number of factors"),
        BAD("1\n0\n0.5\000\n", 3, "score of variable 1"),
        BAD("1\n0\n\0000.5\n", 3, "score of variable 1"),
        BAD("2\n1\n0\n0\nOR\000 2 1 2\n", 5, "unknown factor type"),
        BAD("2\n1\n0\n0\nOR 2 1 2\000\n", 5, "not an integer"),
        BAD("2\n1\n0\n0\nOR 2 1 \000 2\n", 5, "variable index '?' is not an integer"),
        BAD("2\n1\n0.5\n\001\377\376\nXOR 2 1 2\n", 4, "found '\?\?\?'"), /* a binary file's bytes */
        BAD("2\n1\n0\n0\nPAIR 2 1 2 0.5\000\n", 5, "PAIR score"),
    };
    CHECK_ALL_REJECTED(cases);
}

/* A token holding a NUL byte is shown whole (the NUL replaced by a visible
 * character), never cut at the NUL: "found '3'" would claim a valid count
 * was rejected. */
static void a_nul_byte_is_shown_in_the_message_not_cut_off(void **state) {
    (void)state;
    static const struct {
        const char *data;
        size_t size;
        const char *misleading;
    } cases[] = {
        {"3\0000\n0\n", 6, "found '3'"},
        {"3\000\n0\n", 5, "found '3'"},
        {"1\n0\n0.5\000\n", 9, "found '0.5'"},
        {"2\n1\n0\n0\nOR 2 1 2\000\n", 18, "'2' is not"},
    };
    int failures = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        concord_graph **graphs = NULL;
        size_t count = 0;
        char error[512];
        int rc = concord_read_buffer(cases[k].data, cases[k].size, "bad.fg", CONCORD_FORMAT_FG,
                                     &graphs, &count, error, sizeof error, NULL, NULL);
        assert_int_equal(rc, CONCORD_EPARSE);
        if (strstr(error, cases[k].misleading)) {
            print_message("case %zu: the token is cut at its NUL byte: \"%s\"\n", k, error);
            ++failures;
        }
    }
    assert_int_equal(failures, 0);
}

/* A failure in a later graph returns none of the earlier ones. */
static void an_error_in_a_later_graph_discards_all_graphs(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("1\n0\n0.5\n\n1\n0\nnan\n", 7, "not finite"),
        BAD("1\n0\n0.5\n\n1\n0\n1\n\n2\n1\n0\n0\nOR 2 1 5\n", 13, "out of range"),
        BAD("1\n0\n0.5\nJUNK\n1\n0\nx\n", 7, "score of variable 1"),
    };
    CHECK_ALL_REJECTED(cases);
}

/* Messages are cut to the caller's buffer, NUL-terminated, never beyond. */
static void a_small_error_buffer_is_truncated_not_overflowed(void **state) {
    (void)state;
    static const char text[] = "2\n1\n0\n0\nFOO 2 1 2\n";
    for (size_t size = 1; size <= 40; ++size) {
        char buffer[64];
        memset(buffer, 'Z', sizeof buffer);
        concord_graph **graphs = NULL;
        size_t count = 0;
        assert_int_equal(concord_read_buffer(text, sizeof text - 1, "bad.fg", CONCORD_FORMAT_FG,
                                             &graphs, &count, buffer, size, NULL, NULL),
                         CONCORD_EPARSE);
        assert_null(graphs);
        assert_true(memchr(buffer, '\0', size) != NULL);
        for (size_t k = size; k < sizeof buffer; ++k) assert_int_equal(buffer[k], 'Z');
        assert_int_equal(strncmp(buffer, "bad.fg:5: unknown factor type 'FOO'", size - 1), 0);
    }
    /* No buffer at all is allowed too. */
    concord_graph **graphs = NULL;
    size_t count = 0;
    assert_int_equal(concord_read_buffer(text, sizeof text - 1, "bad.fg", CONCORD_FORMAT_FG,
                                         &graphs, &count, NULL, 0, NULL, NULL),
                     CONCORD_EPARSE);
    assert_null(graphs);
}

/* Degrees near INT64_MAX must be rejected by comparing counts without
 * overflow: the field count 2 + degree (+ degree + 1 for KNAPSACK) must not
 * wrap around into a negative or zero "expected" count (signed overflow is
 * undefined behaviour; the UBSan build aborts on it). Kept last in main()
 * because an abort there ends the program. */
static void huge_degrees_are_rejected_without_integer_overflow(void **state) {
    (void)state;
    static const char *const lines[] = {
        "XOR 9223372036854775807 1 2",
        "XOR 9223372036854775806 1 2",
        "KNAPSACK 9223372036854775807 1 2",
        "KNAPSACK 4611686018427387904 1 2",
        "PAIR 9223372036854775807 1 2",
        "BUDGET 9223372036854775807 1 2",
    };
    int failures = 0;
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; ++k) {
        char text[128];
        int n = snprintf(text, sizeof text, "2\n1\n0\n0\n%s\n", lines[k]);
        bad_case c = {text, (size_t)n, 5, "degree"};
        failures += check_rejected(&c);
        concord_graph **graphs = NULL;
        size_t count = 0;
        char error[512];
        concord_read_buffer(text, (size_t)n, "bad.fg", CONCORD_FORMAT_FG, &graphs, &count, error,
                            sizeof error, NULL, NULL);
        if (strstr(error, "expected -") || strstr(error, "expected 0 fields")) {
            print_message("'%s': wrapped-around field count: %s\n", lines[k], error);
            ++failures;
        }
    }
    assert_int_equal(failures, 0);
}

/* Reads `text` in a child process limited to `limit_mb` of address space;
 * returns the reader's code, or -1 when the child died. */
static int read_code_with_little_memory(const char *text, int limit_mb) {
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit limit = {(rlim_t)limit_mb << 20, (rlim_t)limit_mb << 20};
        if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(100);
        concord_graph **graphs = NULL;
        size_t count = 0;
        int rc = concord_read_buffer(text, strlen(text), "bad.fg", CONCORD_FORMAT_FG, &graphs,
                                     &count, NULL, 0, NULL, NULL);
        concord_free_graphs(graphs, count);
        _exit(rc);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A TREE's sentence length sizes its oracle's work memory (quadratic in
 * it: 1.2 GB for 4096 nodes with Eisner's algorithm), so a length the
 * line's arcs cannot cover (every token needs an arc) is refused at the
 * line before any of it is allocated. */
static void a_tree_longer_than_its_arcs_is_refused_in_little_memory(void **state) {
    (void)state;
    static const bad_case cases[] = {
        BAD("2\n1\n0\n0\nTREE 2 1 2 4096 0 1 0 2 PROJECTIVE\n", 5,
            "a tree over 4095 tokens needs at least 4095 arcs, 2 given"),
        BAD("2\n1\n0\n0\nARBORESCENCE 2 1 2 4 0 1 0 2\n", 5,
            "a tree over 3 tokens needs at least 3 arcs, 2 given"),
    };
    CHECK_ALL_REJECTED(cases);
    if (!UNDER_ASAN)
        assert_int_equal(
            read_code_with_little_memory("2\n1\n0\n0\nTREE 2 1 2 4096 0 1 0 2 PROJECTIVE\n", 256),
            CONCORD_EPARSE);
}

/* ------------------------------------------------------------------------
 * Files that cannot be read
 * ------------------------------------------------------------------------ */

static void unreadable_paths_give_eio_and_name_the_path(void **state) {
    (void)state;
    const char *paths[] = {"/nonexistent-concord-dir/missing.fg", CONCORD_TEST_DATA "/no-such-file.fg",
                           CONCORD_TEST_DATA, "/", CONCORD_TEST_DATA "/fg/logic.fg/x.fg"};
    for (size_t k = 0; k < sizeof paths / sizeof paths[0]; ++k) {
        concord_graph *sentinel[1] = {NULL};
        concord_graph **graphs = sentinel;
        size_t count = 5;
        char error[512];
        int rc = concord_read_file(paths[k], CONCORD_FORMAT_FG, &graphs, &count, error,
                                   sizeof error, NULL, NULL);
        if (rc != CONCORD_EIO) print_message("%s: code %d, message '%s'\n", paths[k], rc, error);
        assert_int_equal(rc, CONCORD_EIO);
        if (graphs != NULL || count != 0)
            print_message("%s: failed read left graphs=%p count=%zu (expected NULL, 0)\n",
                          paths[k], (void *)graphs, count);
        assert_null(graphs);
        assert_int_equal(count, 0);
        assert_int_equal(strncmp(error, paths[k], strlen(paths[k])), 0);
        assert_true(strlen(error) > strlen(paths[k]) + 2);
    }
    /* A file without read permission (not testable as root, who reads all). */
    if (geteuid() == 0) {
        print_message("note: running as root; the permission-denied case is skipped\n");
        return;
    }
    char path[] = "/tmp/concord_unreadable_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "1\n0\n0\n", 6), 6);
    close(fd);
    assert_int_equal(chmod(path, 0), 0);
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512];
    int rc = concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                               NULL, NULL);
    unlink(path);
    assert_int_equal(rc, CONCORD_EIO);
    assert_null(graphs);
    assert_non_null(strstr(error, "ermission denied"));
}

/* concord_read_file names the file path in its parse messages. */
static void a_malformed_file_is_reported_with_its_path_and_line(void **state) {
    (void)state;
    char path[] = "/tmp/concord_bad_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char text[] = "2\n1\n0.5\n-0.5\nPAIR 2 -1 2 0.5\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512], expected[128];
    int rc = concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                               NULL, NULL);
    unlink(path);
    assert_int_equal(rc, CONCORD_EPARSE);
    assert_null(graphs);
    assert_int_equal(count, 0);
    snprintf(expected, sizeof expected, "%s:5: ", path);
    assert_int_equal(strncmp(error, expected, strlen(expected)), 0);
    assert_non_null(strstr(error, "negated"));
}

/* ------------------------------------------------------------------------
 * Well-formed input
 * ------------------------------------------------------------------------ */

static void several_graphs_separated_by_blank_lines_all_load(void **state) {
    (void)state;
    static const char text[] = "2\n1\n0.5\n-0.5\nXOR 2 1 2\n"
                               "\n"
                               "3\n2\n1\n2\n3\nOR 2 1 2\nPAIR 2 2 3 0.25\n"
                               "\n\n\n\n"
                               "1\n0\n7\n"
                               "\n"
                               "4\n3\n0\n0\n0\n0\nPAIR 2 1 2 -1\nATMOSTONE 2 3 4\nPAIR 2 3 4 2.5\n";
    warnings w = {0};
    concord_graph **graphs = READ_OK(text, 4, &w);
    assert_int_equal(w.count, 0);
    assert_sizes(graphs[0], 2, 1, 0);
    assert_sizes(graphs[1], 3, 2, 1);
    assert_sizes(graphs[2], 1, 0, 0);
    assert_sizes(graphs[3], 4, 3, 2);
    const double s0[] = {0.5, -0.5}, s1[] = {1, 2, 3}, s2[] = {7};
    assert_scores(graphs[0], s0, 2);
    assert_scores(graphs[1], s1, 3);
    assert_scores(graphs[2], s2, 1);
    assert_true(concord_additional_scores(graphs[1])[0] == 0.25);
    int32_t first, count;
    assert_int_equal(concord_factor_additionals(graphs[1], 0, &first, &count), CONCORD_OK);
    assert_int_equal(count, 0);
    assert_int_equal(concord_factor_additionals(graphs[1], 1, &first, &count), CONCORD_OK);
    assert_int_equal(first, 0);
    assert_int_equal(count, 1);
    /* graph 4: PAIR, ATMOSTONE, PAIR -> additionals 0 and 1 */
    assert_int_equal(concord_factor_additionals(graphs[3], 0, &first, &count), CONCORD_OK);
    assert_int_equal(first, 0);
    assert_int_equal(count, 1);
    assert_int_equal(concord_factor_additionals(graphs[3], 1, &first, &count), CONCORD_OK);
    assert_int_equal(count, 0);
    assert_int_equal(concord_factor_additionals(graphs[3], 2, &first, &count), CONCORD_OK);
    assert_int_equal(first, 1);
    assert_int_equal(count, 1);
    const double *v = concord_additional_scores(graphs[3]);
    assert_true(v[0] == -1.0 && v[1] == 2.5);
    assert_int_equal(concord_factor_additionals(graphs[3], 3, &first, &count), CONCORD_EINVAL);
    concord_free_graphs(graphs, 4);
}

static void comments_are_ignored_everywhere(void **state) {
    (void)state;
    static const char text[] = "# a file header\n"
                               "# another\n"
                               "3 # variables\n"
                               "# between the counts\n"
                               "2# factors, no space before the hash\n"
                               "0.5 # score 1\n"
                               "\n"
                               "-1.5e-1\n"
                               "#\n"
                               "+2\n"
                               "OR 3 1 2 3 # an OR\n"
                               "PAIR 2 1 3 0.75#pair\n"
                               "# trailing comment\n";
    warnings w = {0};
    concord_graph **graphs = READ_OK(text, 1, &w);
    assert_int_equal(w.count, 0);
    assert_sizes(graphs[0], 3, 2, 1);
    const double s[] = {0.5, -0.15, 2.0};
    assert_scores(graphs[0], s, 3);
    assert_true(concord_additional_scores(graphs[0])[0] == 0.75);
    concord_free_graphs(graphs, 1);
}

static void crlf_line_endings_load_like_lf(void **state) {
    (void)state;
    static const char text[] = "2\r\n1\r\n0.5\r\n-0.5\r\nPAIR 2 1 2 1.25\r\n"
                               "\r\n"
                               "1\r\n0\r\n3\r\n";
    warnings w = {0};
    concord_graph **graphs = READ_OK(text, 2, &w);
    assert_int_equal(w.count, 0);
    assert_sizes(graphs[0], 2, 1, 1);
    assert_sizes(graphs[1], 1, 0, 0);
    const double s[] = {0.5, -0.5}, t[] = {3.0};
    assert_scores(graphs[0], s, 2);
    assert_scores(graphs[1], t, 1);
    assert_true(concord_additional_scores(graphs[0])[0] == 1.25);
    concord_free_graphs(graphs, 2);
}

static void a_file_without_final_newline_loads(void **state) {
    (void)state;
    warnings w = {0};
    concord_graph **graphs = READ_OK("3\n1\n0.75\n1.25\n-0.5\nOR 3 1 2 3", 1, &w);
    assert_sizes(graphs[0], 3, 1, 0);
    concord_free_graphs(graphs, 1);
    graphs = READ_OK("2\n1\n0\n0\nPAIR 2 1 2 -0.5", 1, &w);
    assert_sizes(graphs[0], 2, 1, 1);
    assert_true(concord_additional_scores(graphs[0])[0] == -0.5);
    concord_free_graphs(graphs, 1);
    graphs = READ_OK("1\n0\n2.5", 1, &w);
    assert_sizes(graphs[0], 1, 0, 0);
    concord_free_graphs(graphs, 1);
    assert_int_equal(w.count, 0);
}

/* AD3 swallows one line after each graph; a non-blank one is skipped with
 * exactly one warning naming its line. */
static void a_stray_separator_line_gives_one_warning_and_loads(void **state) {
    (void)state;
    warnings w = {0};
    concord_graph **graphs =
        READ_OK("2\n1\n0.5\n-0.5\nXOR 2 1 2\nJUNK here\n1\n0\n3\n", 2, &w);
    assert_int_equal(w.count, 1);
    assert_int_equal(strncmp(w.first, "good.fg:6: ", 11), 0);
    assert_non_null(strstr(w.first, "JUNK"));
    assert_sizes(graphs[0], 2, 1, 0);
    assert_sizes(graphs[1], 1, 0, 0);
    concord_free_graphs(graphs, 2);

    /* At the very end, as in AD3's srl_fract_003.fg. */
    warnings w2 = {0};
    graphs = READ_OK("1\n0\n0.5\nCARALHO9\n", 1, &w2);
    assert_int_equal(w2.count, 1);
    assert_int_equal(strncmp(w2.first, "good.fg:4: ", 11), 0);
    assert_non_null(strstr(w2.first, "CARALHO9"));
    concord_free_graphs(graphs, 1);

    /* A comment-only separator is blank: no warning. */
    warnings w3 = {0};
    graphs = READ_OK("1\n0\n0.5\n# separator\n1\n0\n0.25\n", 2, &w3);
    assert_int_equal(w3.count, 0);
    concord_free_graphs(graphs, 2);

    /* Without a callback the warning is simply dropped. */
    concord_graph **g = NULL;
    size_t count = 0;
    assert_int_equal(concord_read_buffer("1\n0\n0.5\nJUNK\n", 13, "x.fg", CONCORD_FORMAT_FG, &g,
                                         &count, NULL, 0, NULL, NULL),
                     CONCORD_OK);
    assert_int_equal(count, 1);
    concord_free_graphs(g, count);
}

/* Negated links change the solution: XOR(u1, not u2) forces u1 = u2 and
 * OR(not u1, not u2) forbids both. */
static void negated_indices_in_logic_factors_are_honoured(void **state) {
    (void)state;
    struct {
        const char *text;
        double u[2];
    } cases[] = {
        {"2\n1\n1\n-0.5\nXOR 2 1 2\n", {1, 0}},
        {"2\n1\n1\n-0.5\nXOR 2 1 -2\n", {1, 1}},
        {"2\n1\n1\n2\nOR 2 1 2\n", {1, 1}},
        {"2\n1\n1\n2\nOR 2 -1 -2\n", {0, 1}},
        {"2\n1\n-1\n-2\nBUDGET_EXACT 2 -1 -2 1\n", {1, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        warnings w = {0};
        concord_graph **graphs = read_ok(cases[k].text, strlen(cases[k].text), 1, &w);
        concord_solver *solver = new_solver_or_fail(graphs[0]);
        concord_info info;
        assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
        assert_int_equal(info.status, CONCORD_STATUS_INTEGRAL);
        const double *u = concord_solver_variables(solver);
        if (u[0] != cases[k].u[0] || u[1] != cases[k].u[1])
            print_message("case %zu: got (%g, %g), expected (%g, %g)\n", k, u[0], u[1],
                          cases[k].u[0], cases[k].u[1]);
        assert_true(u[0] == cases[k].u[0] && u[1] == cases[k].u[1]);
        concord_solver_free(solver);
        concord_free_graphs(graphs, 1);
    }
}

static void every_factor_type_of_the_reader_loads(void **state) {
    (void)state;
    static const char text[] = "5\n14\n0.1\n-0.2\n0.3\n-0.4\n0.5\n"
                               "XOR 3 1 -2 3\n"
                               "XOROUT 3 1 2 3\n"
                               "ATMOSTONE 2 1 -2\n"
                               "OR 2 -3 4\n"
                               "OROUT 2 1 2\n"       /* degree 2 as in parsing_excerpt.fg */
                               "OROUT 3 1 -2 4\n"
                               "ANDOUT 3 1 2 4\n"
                               "IMPLY 3 1 2 3\n"
                               "BUDGET 4 1 2 3 -4 2\n"
                               "BUDGET_EXACT 3 -1 2 3 1\n"
                               "BUDGET 2 1 2 0\n"
                               "KNAPSACK 3 1 2 3 0.5 1 2 1.5\n"
                               "PAIR 2 1 4 -0.75\n"
                               "PAIR 2 5 2 1e-3\n";
    warnings w = {0};
    concord_graph **graphs = READ_OK(text, 1, &w);
    assert_int_equal(w.count, 0);
    concord_graph *g = graphs[0];
    assert_sizes(g, 5, 14, 2);
    const double s[] = {0.1, -0.2, 0.3, -0.4, 0.5};
    assert_scores(g, s, 5);
    for (int32_t f = 0; f < 14; ++f) {
        int32_t first = -1, count = -1;
        assert_int_equal(concord_factor_additionals(g, f, &first, &count), CONCORD_OK);
        assert_int_equal(count, f >= 12 ? 1 : 0);
        if (f >= 12) assert_int_equal(first, f - 12);
    }
    const double *v = concord_additional_scores(g);
    assert_true(v[0] == -0.75 && v[1] == 1e-3);
    concord_settings settings;
    concord_default_settings(&settings);
    settings.max_iter = 200;
    concord_solver *solver = new_solver_or_fail(g);
    int rc = concord_solver_map(solver, &settings, NULL);
    assert_true(rc == CONCORD_OK || rc == CONCORD_ENOTCONVERGED || rc == CONCORD_EINFEASIBLE);
    concord_solver_free(solver);
    concord_free_graphs(graphs, 1);

    /* Each type alone, at its smallest degree. */
    static const char *const alone[] = {
        "XOR 1 1",          "XOROUT 1 1",     "ATMOSTONE 1 1",     "OR 1 1",
        "OROUT 2 1 2",      "ANDOUT 2 1 2",   "IMPLY 1 1",         "BUDGET 1 1 1",
        "BUDGET_EXACT 1 1 0", "KNAPSACK 1 1 2 1", "PAIR 2 2 1 0.5",
    };
    for (size_t k = 0; k < sizeof alone / sizeof alone[0]; ++k) {
        char buffer[128];
        int n = snprintf(buffer, sizeof buffer, "2\n1\n0.25\n-0.75\n%s\n", alone[k]);
        concord_graph **one = read_ok(buffer, (size_t)n, 1, &w);
        assert_sizes(one[0], 2, 1, strncmp(alone[k], "PAIR", 4) == 0 ? 1 : 0);
        concord_free_graphs(one, 1);
    }
}

/* Numbers in the forms AD3's files and printf produce. */
static void numbers_in_usual_notations_load_exactly(void **state) {
    (void)state;
    static const char text[] = "6\n0\n1e-3\n-2.5E+2\n+.5\n-0\n0.32230078999998757\n5.\n";
    warnings w = {0};
    concord_graph **graphs = READ_OK(text, 1, &w);
    const double s[] = {1e-3, -250.0, 0.5, -0.0, 0.32230078999998757, 5.0};
    assert_scores(graphs[0], s, 6);
    concord_free_graphs(graphs, 1);
}

/* ------------------------------------------------------------------------
 * AD3's example files
 * ------------------------------------------------------------------------ */

/* The first two content lines of a file (N and M). */
static void header_counts(const char *data, long *n_vars, long *n_factors) {
    long values[2] = {-1, -1};
    int got = 0;
    const char *p = data;
    while (*p && got < 2) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[64];
        snprintf(line, sizeof line, "%.*s", (int)(len < 63 ? len : 63), p);
        char *end;
        long x = strtol(line, &end, 10);
        if (end != line) values[got++] = x;
        p += len + (eol ? 1 : 0);
    }
    *n_vars = values[0];
    *n_factors = values[1];
}

/* Number of lines starting with `word ` and the 1-based line of the first. */
static long count_lines_starting(const char *data, const char *word, long *first_line) {
    long count = 0, line = 1;
    size_t n = strlen(word);
    *first_line = 0;
    for (const char *p = data; *p;) {
        if (strncmp(p, word, n) == 0 && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0')) {
            if (!count) *first_line = line;
            ++count;
        }
        const char *eol = strchr(p, '\n');
        if (!eol) break;
        p = eol + 1;
        ++line;
    }
    return count;
}

static void ad3_example_files_load_with_their_declared_sizes(void **state) {
    (void)state;
    static const char *const names[] = {
        "coref.fg",         "example1.fg",      "example2.fg",      "mln_large.fg",
        "parsing_excerpt.fg", "srl_fract_001.fg", "srl_fract_002.fg", "srl_fract_003.fg",
        "srl_fract_004.fg", "srl_fract_005.fg",
    };
    enum { N_NAMES = sizeof names / sizeof names[0] };
    char paths[N_NAMES][1024];
    for (size_t k = 0; k < N_NAMES; ++k) {
        char relative[64];
        snprintf(relative, sizeof relative, "ad3/%s", names[k]);
        snprintf(paths[k], sizeof paths[k], "%s", shared_data_path_or_skip(relative));
    }
    for (size_t k = 0; k < N_NAMES; ++k) {
        const char *path = paths[k];
        size_t size;
        char *data = read_whole_file_or_fail(path, &size);
        long n_vars, n_factors, stray_line;
        header_counts(data, &n_vars, &n_factors);
        long n_pairs = count_lines_starting(data, "PAIR", &stray_line);
        /* srl_fract_00D.fg may end with a stray "CARALHOD" line. */
        char stray[16] = "";
        long n_stray = 0;
        if (strncmp(names[k], "srl_fract_00", 12) == 0) {
            snprintf(stray, sizeof stray, "CARALHO%c", names[k][12]);
            n_stray = count_lines_starting(data, stray, &stray_line);
        }
        free(data);

        concord_graph **graphs = NULL;
        size_t count = 0;
        char error[512];
        warnings w = {0};
        int rc = concord_read_file(path, CONCORD_FORMAT_AUTO, &graphs, &count, error,
                                   sizeof error, collect_warning, &w);
        if (rc != CONCORD_OK) print_message("%s: %s\n", names[k], error);
        assert_int_equal(rc, CONCORD_OK);
        assert_int_equal(count, 1);
        assert_sizes(graphs[0], (int32_t)n_vars, (int32_t)n_factors, (int32_t)n_pairs);
        int expected_warnings = !strcmp(names[k], "srl_fract_003.fg") ||
                                !strcmp(names[k], "srl_fract_004.fg");
        if (w.count != expected_warnings) print_message("%s: %d warnings\n", names[k], w.count);
        assert_int_equal(w.count, expected_warnings);
        assert_int_equal(n_stray, expected_warnings);
        if (expected_warnings) {
            char line_part[64]; /* the warning starts with "PATH:LINE: " */
            snprintf(line_part, sizeof line_part, ":%ld: ", stray_line);
            assert_int_equal(strncmp(w.first, path, strlen(path)), 0);
            assert_int_equal(strncmp(w.first + strlen(path), line_part, strlen(line_part)), 0);
            assert_non_null(strstr(w.first, stray));
        }
        concord_free_graphs(graphs, count);
    }
}

/* Additional outputs a structured factor line declares: its scores, i.e.
 * the fields after the indices minus the type's counts and structure. */
static long declared_additionals(const char *line) {
    char type[64];
    long degree;
    if (sscanf(line, "%63s %ld", type, &degree) != 2) return -1;
    long fields = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t') ++p;
        if (!*p || *p == '\n') break;
        ++fields;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n') ++p;
    }
    long params = fields - 2 - degree;
    /* the first field after the indices (L, G or n) sizes the structure */
    const char *q = line;
    for (long k = 0; k < 2 + degree; ++k) {
        while (*q == ' ' || *q == '\t') ++q;
        while (*q && *q != ' ' && *q != '\t') ++q;
    }
    long first = strtol(q, NULL, 10);
    if (!strcmp(type, "PAIR")) return 1;
    if (!strcmp(type, "SEQUENCE")) return params - 1 - first;
    if (!strcmp(type, "SEQUENCE_BUDGET")) return params - 2 - first;
    if (!strcmp(type, "HEAD_AUTOMATON") || !strcmp(type, "SEQUENCE_COMPRESSOR")) return params;
    if (!strcmp(type, "GRANDPARENT_HEAD_AUTOMATON")) return params - 1;
    if (!strcmp(type, "GENERAL_TREE") || !strcmp(type, "GENERAL_TREE_COUNTS"))
        return params - 1 - 2 * first;
    if (!strcmp(type, "DENSE")) return params - 1 - first; /* the table after m, K1..Km */
    return 0;
}

/* AD3's files with structured factors load with the sizes their own lines
 * declare (variables, factors, and additional outputs: one per score). */
static void ad3_structured_files_load_with_their_declared_sizes(void **state) {
    (void)state;
    static const char *const names[] = {"parsing01.fg", "parsing02.fg", "sequence.fg",
                                        "sequence_budget.fg", "general_tree.fg",
                                        "general_tree_counts.fg"};
    enum { N_NAMES = sizeof names / sizeof names[0] };
    char paths[N_NAMES][1024];
    for (size_t k = 0; k < N_NAMES; ++k) {
        char relative[64];
        snprintf(relative, sizeof relative, "ad3/%s", names[k]);
        snprintf(paths[k], sizeof paths[k], "%s", shared_data_path_or_skip(relative));
    }
    for (size_t k = 0; k < N_NAMES; ++k) {
        const char *path = paths[k];
        size_t size;
        char *data = read_whole_file_or_fail(path, &size);
        long n_vars, n_factors, additionals = 0, line_no = 0;
        header_counts(data, &n_vars, &n_factors);
        for (char *p = data; *p;) {
            char *eol = strchr(p, '\n');
            if (++line_no > 2 + n_vars && *p >= 'A' && *p <= 'Z') {
                long declared = declared_additionals(p);
                assert_true(declared >= 0);
                additionals += declared;
            }
            if (!eol) break;
            p = eol + 1;
        }
        free(data);
        concord_graph **graphs = NULL;
        size_t count = 0;
        char error[512];
        int rc = concord_read_file(path, CONCORD_FORMAT_AUTO, &graphs, &count, error,
                                   sizeof error, NULL, NULL);
        if (rc != CONCORD_OK) print_message("%s: %s\n", names[k], error);
        assert_int_equal(rc, CONCORD_OK);
        assert_int_equal(count, 1);
        assert_sizes(graphs[0], (int32_t)n_vars, (int32_t)n_factors, (int32_t)additionals);
        concord_free_graphs(graphs, count);
    }
}

/* The repository's own .fg files (tests/data/fg, written by
 * scripts/gen-test-data.py; every factor type of the format among them)
 * load with exactly what their lines say, read here field by field: per
 * graph the number of variables and their scores, the number of factors,
 * and for each factor as many additional outputs as its line lists scores
 * (its last fields), with those scores in that order. */
static void repository_files_load_with_the_sizes_and_scores_they_list(void **state) {
    (void)state;
    static const struct {
        const char *name;
        size_t graphs;
    } files[] = {
        {"logic.fg", 3},        {"transitivity.fg", 1}, {"sequence.fg", 1},
        {"sequence_budget.fg", 1}, {"general_tree.fg", 1}, {"general_tree_counts.fg", 1},
        {"parser.fg", 1},       {"trees.fg", 4},        {"matching.fg", 4},
        {"dense.fg", 1},        {"compressor.fg", 1},   {"mixture.fg", 3},
        {"sequence_forbidden.fg", 1}, {"sequence_budget_forbidden.fg", 1},
    };
    long checked_scores = 0;
    for (size_t k = 0; k < sizeof files / sizeof files[0]; ++k) {
        char relative[64];
        snprintf(relative, sizeof relative, "fg/%s", files[k].name);
        const char *path = test_data_path(relative);
        concord_graph **graphs = NULL;
        size_t count = 0;
        char error[512];
        warnings w = {0};
        int rc = concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                                   collect_warning, &w);
        if (rc != CONCORD_OK) fail_msg("%s: %s", path, error);
        assert_int_equal(count, files[k].graphs);
        assert_int_equal(w.count, 0);
        /* the text: per graph N, M, N scores, M factor lines (blank
         * separator lines vanish in the split) */
        char *text = read_whole_file_or_fail(path, NULL), *save = NULL;
        char *line = strtok_r(text, "\n", &save);
        for (size_t gi = 0; gi < count; ++gi) {
            const concord_graph *g = graphs[gi];
            assert_non_null(line);
            long n_vars = strtol(line, NULL, 10);
            long n_factors = strtol(strtok_r(NULL, "\n", &save), NULL, 10);
            assert_int_equal(concord_num_variables(g), n_vars);
            assert_int_equal(concord_num_factors(g), n_factors);
            for (long i = 0; i < n_vars; ++i) {
                double x = strtod(strtok_r(NULL, "\n", &save), NULL);
                if (concord_variable_scores(g)[i] != x)
                    fail_msg("%s graph %zu: variable %ld scored %.17g, the file says %.17g", path,
                             gi + 1, i + 1, concord_variable_scores(g)[i], x);
                ++checked_scores;
            }
            long total = 0;
            for (long f = 0; f < n_factors; ++f) {
                line = strtok_r(NULL, "\n", &save);
                assert_non_null(line);
                long declared = declared_additionals(line);
                int32_t first, n_add;
                assert_int_equal(concord_factor_additionals(g, (int32_t)f, &first, &n_add),
                                 CONCORD_OK);
                if (n_add != declared)
                    fail_msg("%s graph %zu factor %ld: %d additionals, the line lists %ld scores",
                             path, gi + 1, f + 1, n_add, declared);
                /* the line's last `declared` fields, in order */
                long n_fields = 0;
                const char *fields[1024];
                for (const char *p = line; *p && n_fields < 1024;) {
                    while (*p == ' ') ++p;
                    if (!*p) break;
                    fields[n_fields++] = p;
                    while (*p && *p != ' ') ++p;
                }
                assert_true(n_fields >= declared && n_fields < 1024);
                for (long j = 0; j < declared; ++j) {
                    double x = strtod(fields[n_fields - declared + j], NULL);
                    double got = concord_additional_scores(g)[first + j];
                    /* a forbidden DENSE state or transition (-inf) is a
                     * constraint, and its score is not said (the brute
                     * forces of dense.fg and test_sequence check it) */
                    if (x == -INFINITY) continue;
                    if (got != x)
                        fail_msg("%s graph %zu factor %ld: additional score %ld is %.17g, the "
                                 "file says %.17g",
                                 path, gi + 1, f + 1, j + 1, got, x);
                    ++checked_scores;
                }
                total += declared;
            }
            assert_int_equal(concord_num_additionals(g), total);
            line = strtok_r(NULL, "\n", &save);
        }
        assert_null(line); /* nothing after the last graph */
        free(text);
        concord_free_graphs(graphs, count);
    }
    print_message("%zu files of tests/data/fg: %ld scores as listed\n",
                  sizeof files / sizeof files[0], checked_scores);
}

/* tests/data/fg/dense.fg (multi-valued variables: two DENSE tables with
 * forbidden joint states, an XOR, a PAIR; a tree over the multi-variables,
 * so LP-MAP is the MAP) solves to the optimum of a brute force over all
 * 2^14 assignments of its binary variables, which reads the file itself
 * and scores assignments from the format's words: a DENSE factor allows
 * exactly one state per multi-variable, its table is row-major with the
 * last variable fastest, -inf forbids; XOR exactly one; PAIR scores both
 * on. */
enum { DENSE_MAX_VARS = 20, DENSE_MAX_FACTORS = 8, DENSE_MAX_LINKS = 16 };

typedef struct dense_factor {
    char type[16];
    int degree, vars[DENSE_MAX_LINKS];
    int m, card[DENSE_MAX_LINKS]; /* DENSE */
    double table[256];           /* DENSE: the table; PAIR: table[0] */
} dense_factor;

static double dense_score(const dense_factor *f, const int *x) {
    if (!strcmp(f->type, "XOR")) {
        int on = 0;
        for (int j = 0; j < f->degree; ++j) on += x[f->vars[j]];
        return on == 1 ? 0.0 : -INFINITY;
    }
    if (!strcmp(f->type, "PAIR")) return x[f->vars[0]] && x[f->vars[1]] ? f->table[0] : 0.0;
    long index = 0;
    for (int q = 0, link = 0; q < f->m; ++q) {
        int state = -1, on = 0;
        for (int k = 0; k < f->card[q]; ++k, ++link)
            if (x[f->vars[link]]) state = k, ++on;
        if (on != 1) return -INFINITY;
        index = index * f->card[q] + state;
    }
    return f->table[index];
}

static void dense_file_solves_to_the_brute_force_optimum(void **state) {
    (void)state;
    const char *path = test_data_path("fg/dense.fg");
    char *text = read_whole_file_or_fail(path, NULL), *save = NULL;
    int n = atoi(strtok_r(text, " \n", &save)), m = atoi(strtok_r(NULL, " \n", &save));
    assert_true(n <= DENSE_MAX_VARS && m <= DENSE_MAX_FACTORS);
    double theta[DENSE_MAX_VARS];
    dense_factor factors[DENSE_MAX_FACTORS];
    for (int i = 0; i < n; ++i) theta[i] = strtod(strtok_r(NULL, " \n", &save), NULL);
    int n_dense = 0;
    for (int f = 0; f < m; ++f) {
        dense_factor *fa = &factors[f];
        snprintf(fa->type, sizeof fa->type, "%s", strtok_r(NULL, " \n", &save));
        fa->degree = atoi(strtok_r(NULL, " \n", &save));
        assert_true(fa->degree <= DENSE_MAX_LINKS);
        for (int j = 0; j < fa->degree; ++j) fa->vars[j] = atoi(strtok_r(NULL, " \n", &save)) - 1;
        if (!strcmp(fa->type, "PAIR")) {
            fa->table[0] = strtod(strtok_r(NULL, " \n", &save), NULL);
        } else if (!strcmp(fa->type, "DENSE")) {
            fa->m = atoi(strtok_r(NULL, " \n", &save));
            long size = 1;
            for (int q = 0; q < fa->m; ++q) {
                fa->card[q] = atoi(strtok_r(NULL, " \n", &save));
                size *= fa->card[q];
            }
            assert_true(size <= 256);
            for (long e = 0; e < size; ++e)
                fa->table[e] = strtod(strtok_r(NULL, " \n", &save), NULL);
            ++n_dense;
        } else {
            assert_string_equal(fa->type, "XOR");
        }
    }
    assert_null(strtok_r(NULL, " \n", &save));
    free(text);
    assert_int_equal(n_dense, 2);

    int x[DENSE_MAX_VARS] = {0}, best_x[DENSE_MAX_VARS] = {0}, radix[DENSE_MAX_VARS];
    for (int i = 0; i < n; ++i) radix[i] = 2;
    top_two top = {-INFINITY, -INFINITY};
    long allowed = 0;
    do {
        double score = 0.0;
        for (int i = 0; i < n; ++i) score += theta[i] * x[i];
        for (int f = 0; f < m && score > -INFINITY; ++f) score += dense_score(&factors[f], x);
        if (score == -INFINITY) continue;
        ++allowed;
        if (top_two_offer(&top, score)) memcpy(best_x, x, sizeof x);
    } while (odometer_next(x, radix, n));

    concord_graph **graphs = NULL;
    size_t count = 0;
    char error[512];
    int rc = concord_read_file(path, CONCORD_FORMAT_FG, &graphs, &count, error, sizeof error,
                               NULL, NULL);
    if (rc != CONCORD_OK) fail_msg("%s", error);
    assert_int_equal(count, 1);
    concord_info info;
    concord_solver *solver = new_solver_or_fail(graphs[0]);
    assert_int_equal(concord_solver_map(solver, NULL, &info), CONCORD_OK);
    print_message("dense.fg: %ld allowed assignments, brute force %.10f (runner-up %.10f); "
                  "concord %s, value %.10f, upper bound %.10f\n",
                  allowed, top.best, top.second, concord_status_name(info.status), info.value,
                  info.upper_bound);
    assert_true(top.best - top.second > 1e-6); /* the optimum is unique */
    assert_int_equal(info.status, CONCORD_STATUS_INTEGRAL);
    assert_true(fabs(info.value - top.best) <= 1e-8 * (1.0 + fabs(top.best)));
    assert_true(fabs(info.upper_bound - top.best) <= 1e-6 * (1.0 + fabs(top.best)));
    const double *u = concord_solver_variables(solver);
    for (int i = 0; i < n; ++i)
        if (u[i] != (double)best_x[i])
            fail_msg("dense.fg: variable %d is %g, the brute force's optimum has %d", i + 1, u[i],
                     best_x[i]);
    concord_solver_free(solver);
    concord_free_graphs(graphs, count);
}

/* A number token converts to exactly the double strtod gives, and only
 * when strtod consumes all of it (tokens are not NUL-terminated: "1e5e5",
 * "1-2" or "0.5x" must be refused, not read as a prefix) and it is not one
 * of strtod's hexadecimal forms ("0x10", "-0X1P3"), which are refused; a
 * nonzero number strtod rounds to 0 ("1e-400", "2e-324": ERANGE) is
 * TOKEN_UNDERFLOW, while "0e-999" is 0; one strtod rounds to an infinity
 * ("1e400": ERANGE) is TOKEN_OVERFLOW, while "inf" is an infinity. */
static void numbers_convert_exactly_as_strtod_does(void **state) {
    (void)state;
    static const char *const fixed[] = {
        "0", "-0", "+0", "0.0", "-0.0", ".5", "5.", "-.5", "+5.", ".", "-", "+", "e5", "1e",
        "1e+", "1e-", "1.5e3", "1.5E-3", "-2.25e+22", "9007199254740992", "9007199254740993",
        "90071992547409921", "0.1", "0.3", "123456789012345678901234567890", "1e22", "1e23",
        "1e-22", "1e-23", "4.9406564584124654e-324", "1.7976931348623157e308", "1e400",
        "0.000000000000000000000000001", "00000000000000000000000000012.5", "1..2", "1e5e5",
        "1-2", "--1", "0x10", "inf", "nan", "1e0000000000000000000005", "2.5e-0000000000001",
        "1e-400", "-1e-400", "2e-324", "3e-324", "0e-999", "-0.0e-999", "-1e400", "-inf",
        "-0.432565", "0.32230078999998757", "1.25e+1000000000000", "0.5x", "0x1p3", "-0X1P3",
        "+0x.8", "0x", "0X0", "00x1", "0.0x1",
        /* halfway between two doubles, and long ones */
        "18014398509481986", "1.8014398509481986e16", "18014398509481990", "9007199254740993e5",
        "-9007199254740995", "0.9007199254740993e-10", "1234567890123456789",
        "12345678901234567890", "18446744073709551615", "9999999999999999999e-27",
        "9999999999999999999e27", "1e-27", "1e27", "1e28"};
    const int n_fixed = (int)(sizeof fixed / sizeof *fixed);
    srand(7);
    char text[64];
    for (int k = 0; k < n_fixed + 200000; ++k) {
        if (k < n_fixed) {
            snprintf(text, sizeof text, "%s", fixed[k]);
        } else {
            /* random sign, digits, point position and exponent */
            int len = 0, n_digits = 1 + rand() % 20, point = rand() % (n_digits + 2);
            if (rand() % 3 == 0) text[len++] = rand() % 2 ? '-' : '+';
            for (int d = 0; d < n_digits; ++d) {
                if (d == point) text[len++] = '.';
                text[len++] = (char)('0' + rand() % 10);
            }
            if (rand() % 3 == 0)
                len += snprintf(text + len, sizeof text - (size_t)len, "e%d", rand() % 61 - 30);
            text[len] = '\0';
        }
        char *end;
        errno = 0;
        double expected = strtod(text, &end);
        const bool underflow = expected == 0.0 && errno == ERANGE;
        const bool overflow = isinf(expected) && errno == ERANGE;
        const char *digits = text + (text[0] == '-' || text[0] == '+');
        int hexadecimal = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
        int valid = *text && *end == '\0' && !hexadecimal;
        double got = -1.0;
        int rc = token_to_double((text_token){text, (int32_t)strlen(text)}, &got);
        const int expected_rc =
            !valid ? -1 : underflow ? TOKEN_UNDERFLOW : overflow ? TOKEN_OVERFLOW : 0;
        if (rc != expected_rc || (rc == 0 && memcmp(&got, &expected, sizeof got) != 0))
            fail_msg("'%s': token_to_double %d %.17g, strtod %s %.17g", text, rc, got,
                     valid ? "valid" : "invalid", expected);
    }
}

/* A program whose locale writes numbers with a decimal comma (what
 * setlocale(LC_ALL, "") sets for a German user) reads the formats' decimal
 * points as any other: .fg and UAI scores of 0.5 read as 0.5, and "0,5"
 * is refused. Before, strtod followed that locale and every file with a
 * decimal score failed. The locale is generated by `make test`'s
 * dependencies (scripts/install-deps.sh); without it the test skips. */
static void numbers_read_alike_in_a_locale_with_a_decimal_comma(void **state) {
    (void)state;
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8")) {
        printf("skipped: locale de_DE.UTF-8 not installed (scripts/install-deps.sh test)\n");
        skip();
    }
    assert_true(strtod("0,5", NULL) == 0.5); /* the locale is in effect */
    const char *fg = "1\n0\n0.5\n", *comma = "1\n0\n0,5\n";
    const char *uai = "MARKOV\n1\n2\n1\n1 0\n2\n0.5 1.5\n";
    concord_graph **graphs = NULL, *model = NULL;
    size_t count = 0;
    char error[256];
    const int fg_rc = concord_read_buffer(fg, strlen(fg), "x.fg", CONCORD_FORMAT_FG, &graphs,
                                          &count, error, sizeof error, NULL, NULL);
    const double score = fg_rc == CONCORD_OK ? concord_variable_scores(graphs[0])[0] : NAN;
    concord_free_graphs(graphs, count);
    const int comma_rc = concord_read_buffer(comma, strlen(comma), "comma.fg", CONCORD_FORMAT_FG,
                                             &graphs, &count, error, sizeof error, NULL, NULL);
    const int uai_rc = concord_read_uai_buffer(uai, strlen(uai), "m.uai", NULL, 0, NULL, &model,
                                               error, sizeof error);
    concord_graph_free(model);
    setlocale(LC_NUMERIC, "C");
    assert_int_equal(fg_rc, CONCORD_OK);
    assert_true(score == 0.5);
    assert_int_equal(comma_rc, CONCORD_EPARSE);
    assert_int_equal(uai_rc, CONCORD_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers_convert_exactly_as_strtod_does),
        cmocka_unit_test(numbers_read_alike_in_a_locale_with_a_decimal_comma),
        cmocka_unit_test(scores_out_of_range_are_rejected_naming_the_line),
        cmocka_unit_test(hexadecimal_numbers_are_rejected_naming_the_token),
        cmocka_unit_test(numbers_that_underflow_to_zero_are_rejected_naming_the_token),
        cmocka_unit_test(out_of_range_indices_are_rejected_naming_the_line),
        cmocka_unit_test(a_variable_repeated_in_one_factor_is_rejected),
        cmocka_unit_test(bad_budgets_and_costs_are_rejected),
        cmocka_unit_test(pair_with_wrong_degree_or_negated_index_is_rejected),
        cmocka_unit_test(truncated_files_are_rejected_at_their_last_line),
        cmocka_unit_test(non_numeric_tokens_are_rejected_naming_the_field),
        cmocka_unit_test(input_without_any_graph_is_rejected),
        cmocka_unit_test(bad_factor_lines_are_rejected_naming_the_problem),
        cmocka_unit_test(negative_and_oversized_counts_are_rejected),
        cmocka_unit_test(embedded_nul_bytes_are_rejected),
        cmocka_unit_test(a_nul_byte_is_shown_in_the_message_not_cut_off),
        cmocka_unit_test(an_error_in_a_later_graph_discards_all_graphs),
        cmocka_unit_test(a_small_error_buffer_is_truncated_not_overflowed),
        cmocka_unit_test(unreadable_paths_give_eio_and_name_the_path),
        cmocka_unit_test(a_malformed_file_is_reported_with_its_path_and_line),
        cmocka_unit_test(several_graphs_separated_by_blank_lines_all_load),
        cmocka_unit_test(comments_are_ignored_everywhere),
        cmocka_unit_test(crlf_line_endings_load_like_lf),
        cmocka_unit_test(a_file_without_final_newline_loads),
        cmocka_unit_test(a_stray_separator_line_gives_one_warning_and_loads),
        cmocka_unit_test(negated_indices_in_logic_factors_are_honoured),
        cmocka_unit_test(every_factor_type_of_the_reader_loads),
        cmocka_unit_test(numbers_in_usual_notations_load_exactly),
        cmocka_unit_test(ad3_example_files_load_with_their_declared_sizes),
        cmocka_unit_test(ad3_structured_files_load_with_their_declared_sizes),
        cmocka_unit_test(repository_files_load_with_the_sizes_and_scores_they_list),
        cmocka_unit_test(dense_file_solves_to_the_brute_force_optimum),
        cmocka_unit_test(huge_degrees_are_rejected_without_integer_overflow),
        cmocka_unit_test(a_tree_longer_than_its_arcs_is_refused_in_little_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
