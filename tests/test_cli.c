/*
 * The contract of the `concord` command-line tool, run as a separate
 * process (fork/exec, stdout and stderr captured to files): exit codes
 * (0 solved, 2 usage error, 3 bad input, 4 not converged, 5 output
 * failure); bad input names file:line on stderr and never leaves an output
 * file or a temporary behind; posteriors are written in AD3's layout (per
 * graph: one value per variable, a blank line, one value per additional,
 * a blank line), also when a graph did not converge; --json prints one
 * well-formed object per graph with the documented keys; '-' reads stdin;
 * and --help documents exactly the flags the parser accepts. Scripts and
 * users depend on all of this, so it is checked from the outside.
 */
#include <dirent.h>
#include <signal.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "child_process.h"
#include "testutil.h"

/* Inputs in the repository (tests/data, scripts/gen-test-data.py): three
 * graphs of logic factors and PAIRs; a coreference graph (36 variables, 252
 * OR factors) that needs tens of iterations; a UAI grid with evidence. */
#define FG_LOGIC CONCORD_TEST_DATA "/fg/logic.fg"
#define FG_SLOW CONCORD_TEST_DATA "/fg/transitivity.fg"
#define UAI_GRID CONCORD_TEST_DATA "/uai/grid3x3.uai"
static const int logic_vars[] = {14, 24, 6}, logic_adds[] = {5, 8, 6}; /* PAIRs */

/* ------------------------------------------------------------------------
 * Running the CLI
 * ------------------------------------------------------------------------ */

/* The tool under test: in the sanitized twin, the tool built with
 * ASan+UBSan, which cannot run in a limited address space (its shadow
 * memory alone takes terabytes of it). */
#ifdef CONCORD_SANITIZED_CLI
#define CLI_BINARY CONCORD_SANITIZED_CLI
#else
#define CLI_BINARY CONCORD_BINARY
#endif

static char work_dir[256]; /* a private temporary directory for all runs */

typedef struct run_result {
    int status; /* exit code; 128 + signal if killed */
    char *out, *err;
} run_result;

/* Runs CLI_BINARY with the NULL-terminated arguments (argv[0] is
 * added), stdin from `input` (NULL: /dev/null), stdout to `out_path`
 * (NULL: a file read back into r->out), its address space limited to
 * `address_space_mb` (0: no limit), for at most 60 s. */
static void run_cli_with(run_result *r, const char *input, const char *const *args,
                         const char *out_path, int address_space_mb) {
#ifdef CONCORD_SANITIZED_CLI
    if (address_space_mb > 0) skip();
#endif
    const char *argv[64];
    int n = 0;
    argv[n++] = CLI_BINARY;
    while (args && args[n - 1] && n < 63) {
        argv[n] = args[n - 1];
        ++n;
    }
    argv[n] = NULL;
    char own_out[512], err_path[512];
    snprintf(own_out, sizeof own_out, "%s/stdout.txt", work_dir);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", work_dir);
    int pid = start_program(argv, input, out_path ? out_path : own_out, err_path,
                            address_space_mb);
    r->status = wait_program(pid, CLI_BINARY, 60);
    r->out = out_path ? strdup("") : read_whole_file(own_out, NULL);
    r->err = read_whole_file(err_path, NULL);
    assert_non_null(r->out);
    assert_non_null(r->err);
    if (r->status == 127 || r->status == 126) fail_msg("could not run %s", CLI_BINARY);
}

static void run_cli(run_result *r, const char *input, const char *const *args) {
    run_cli_with(r, input, args, NULL, 0);
}

static void free_result(run_result *r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* Runs and checks the exit code, printing the run's output if it differs. */
static void run_expect(run_result *r, const char *input, const char *const *args, int status) {
    run_cli(r, input, args);
    if (r->status != status) {
        print_message("command: concord");
        for (int k = 0; args[k]; ++k) print_message(" %s", args[k]);
        print_message("\nexit %d (expected %d)\nstdout:\n%s\nstderr:\n%s\n", r->status, status,
                      r->out, r->err);
    }
    assert_int_equal(r->status, status);
}

/* A fresh empty directory inside work_dir, for one output file. */
static void fresh_dir(char *path, size_t size) {
    static int serial = 0;
    snprintf(path, size, "%s/out%d", work_dir, ++serial);
    assert_int_equal(mkdir(path, 0700), 0);
}

/* Number of entries in a directory (besides . and ..); the first name. */
static int dir_entries(const char *path, char *first, size_t size) {
    DIR *d = opendir(path);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (n++ == 0 && first) snprintf(first, size, "%s", e->d_name);
    }
    closedir(d);
    return n;
}

/* ------------------------------------------------------------------------
 * Fixtures
 * ------------------------------------------------------------------------ */

/* Three small graphs: (variables, additionals) = (2, 0), (3, 1), (4, 2). */
static const char three_graphs[] = "2\n1\n0.5\n-0.5\nXOR 2 1 2\n"
                                   "\n"
                                   "3\n2\n0.2\n-0.3\n0.1\nOR 3 1 2 3\nPAIR 2 1 2 0.5\n"
                                   "\n"
                                   "4\n3\n0.3\n-0.1\n0.2\n-0.4\n"
                                   "PAIR 2 1 2 -1\nPAIR 2 3 4 1\nATMOSTONE 2 2 3\n";
static const int three_vars[] = {2, 3, 4}, three_adds[] = {0, 1, 2};

/* Error on line 6: a PAIR with a negated index. */
static const char malformed[] = "3\n1\n0.5\n-0.5\n0.25\nPAIR 2 1 -3 0.5\n";

static char three_path[512], malformed_path[512];

static int setup(void **state) {
    (void)state;
    snprintf(work_dir, sizeof work_dir, "/tmp/concord_test_cli_XXXXXX");
    if (!mkdtemp(work_dir)) return -1;
    snprintf(three_path, sizeof three_path, "%s/three.fg", work_dir);
    snprintf(malformed_path, sizeof malformed_path, "%s/malformed.fg", work_dir);
    if (write_text_file(three_path, three_graphs) != 0) return -1;
    return write_text_file(malformed_path, malformed);
}

static int teardown(void **state) {
    (void)state;
    remove_tree(work_dir);
    return 0;
}

/* Checks text is AD3's posteriors layout for graphs of the given sizes,
 * every value a number in [0, 1], or "nan" throughout the blocks of the
 * graphs marked in `infeasible` (NULL: none). */
static void assert_blocks_layout(const char *text, int n_graphs, const int *n_vars,
                                 const int *n_adds, const int *infeasible) {
    const char *p = text;
    int line = 0;
    for (int k = 0; k < n_graphs; ++k) {
        for (int part = 0; part < 2; ++part) {
            int n = part == 0 ? n_vars[k] : n_adds[k];
            for (int i = 0; i <= n; ++i) {
                const char *eol = strchr(p, '\n');
                ++line;
                if (!eol) fail_msg("posteriors line %d: missing (graph %d)", line, k + 1);
                char buf[128];
                size_t len = (size_t)(eol - p);
                if (len >= sizeof buf) {
                    fail_msg("posteriors line %d: too long", line);
                    len = sizeof buf - 1;
                }
                memcpy(buf, p, len);
                buf[len] = '\0';
                if (i == n) {
                    if (len != 0)
                        fail_msg("posteriors line %d: '%s' where graph %d needs a blank line",
                                 line, buf, k + 1);
                } else if (infeasible && infeasible[k]) {
                    if (strcmp(buf, "nan") != 0)
                        fail_msg("posteriors line %d: '%s' where infeasible graph %d needs nan",
                                 line, buf, k + 1);
                } else {
                    char *end;
                    double x = strtod(buf, &end);
                    if (len == 0 || *end != '\0' || !(x >= 0.0 && x <= 1.0))
                        fail_msg("posteriors line %d: '%s' is not a value in [0, 1]", line, buf);
                }
                p = eol + 1;
            }
        }
    }
    if (*p != '\0') fail_msg("posteriors: unexpected text after line %d: '%.40s'", line, p);
}

static void assert_posteriors_layout(const char *text, int n_graphs, const int *n_vars,
                                     const int *n_adds) {
    assert_blocks_layout(text, n_graphs, n_vars, n_adds, NULL);
}

/* ------------------------------------------------------------------------
 * A minimal JSON reader: validates one object, and returns its members.
 * ------------------------------------------------------------------------ */

typedef enum json_kind { J_NULL, J_BOOL, J_NUMBER, J_STRING, J_OBJECT, J_ARRAY } json_kind;

typedef struct json_member {
    char key[64];
    json_kind kind;
    double number;
    int boolean;
    char string[64];
} json_member;

static void json_space(const char **p) {
    while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r') ++*p;
}

/* A string; copies it (truncated) into out if not NULL. */
static int json_string(const char **p, char *out, size_t size) {
    if (**p != '"') return -1;
    ++*p;
    size_t n = 0;
    for (;;) {
        unsigned char c = (unsigned char)**p;
        if (c == '\0' || c < 0x20) return -1;
        ++*p;
        if (c == '"') break;
        if (c == '\\') {
            char e = **p;
            ++*p;
            if (e == 'u') {
                for (int k = 0; k < 4; ++k, ++*p)
                    if (!strchr("0123456789abcdefABCDEF", **p) || **p == '\0') return -1;
                c = '?';
            } else if (e && strchr("\"\\/bfnrt", e)) {
                c = (unsigned char)e;
            } else {
                return -1;
            }
        }
        if (out && n + 1 < size) out[n++] = (char)c;
    }
    if (out && size) out[n] = '\0';
    return 0;
}

static int json_number(const char **p, double *out) {
    const char *s = *p, *q = s;
    if (*q == '-') ++q;
    if (*q == '0') ++q;
    else if (*q >= '1' && *q <= '9')
        while (*q >= '0' && *q <= '9') ++q;
    else return -1;
    if (*q == '.') {
        ++q;
        if (!(*q >= '0' && *q <= '9')) return -1;
        while (*q >= '0' && *q <= '9') ++q;
    }
    if (*q == 'e' || *q == 'E') {
        ++q;
        if (*q == '+' || *q == '-') ++q;
        if (!(*q >= '0' && *q <= '9')) return -1;
        while (*q >= '0' && *q <= '9') ++q;
    }
    *out = strtod(s, NULL);
    *p = q;
    return 0;
}

static int json_value(const char **p, json_member *m, int depth);

static int json_container(const char **p, char close, int depth) {
    ++*p;
    json_space(p);
    if (**p == close) {
        ++*p;
        return 0;
    }
    for (;;) {
        json_space(p);
        if (close == '}') {
            if (json_string(p, NULL, 0)) return -1;
            json_space(p);
            if (**p != ':') return -1;
            ++*p;
        }
        if (json_value(p, NULL, depth + 1)) return -1;
        json_space(p);
        if (**p == ',') {
            ++*p;
            continue;
        }
        if (**p != close) return -1;
        ++*p;
        return 0;
    }
}

static int json_value(const char **p, json_member *m, int depth) {
    json_member dummy;
    if (!m) m = &dummy;
    if (depth > 32) return -1;
    json_space(p);
    if (**p == '{') return m->kind = J_OBJECT, json_container(p, '}', depth);
    if (**p == '[') return m->kind = J_ARRAY, json_container(p, ']', depth);
    if (**p == '"') return m->kind = J_STRING, json_string(p, m->string, sizeof m->string);
    if (!strncmp(*p, "true", 4) || !strncmp(*p, "false", 5)) {
        m->kind = J_BOOL;
        m->boolean = **p == 't';
        *p += m->boolean ? 4 : 5;
        return 0;
    }
    if (!strncmp(*p, "null", 4)) {
        m->kind = J_NULL;
        *p += 4;
        return 0;
    }
    m->kind = J_NUMBER;
    return json_number(p, &m->number);
}

/* Parses a line holding exactly one JSON object; returns its member count
 * (members up to max are stored), or -1 if it is not valid JSON. */
static int json_parse_object(const char *line, json_member *members, int max) {
    const char *p = line;
    json_space(&p);
    if (*p != '{') return -1;
    ++p;
    int n = 0;
    json_space(&p);
    if (*p == '}') {
        ++p;
    } else {
        for (;;) {
            json_member m;
            memset(&m, 0, sizeof m);
            json_space(&p);
            if (json_string(&p, m.key, sizeof m.key)) return -1;
            json_space(&p);
            if (*p != ':') return -1;
            ++p;
            if (json_value(&p, &m, 1)) return -1;
            for (int k = 0; k < n && k < max; ++k)
                if (!strcmp(members[k].key, m.key)) return -1; /* duplicate key */
            if (n < max) members[n] = m;
            ++n;
            json_space(&p);
            if (*p == ',') {
                ++p;
                continue;
            }
            if (*p != '}') return -1;
            ++p;
            break;
        }
    }
    json_space(&p);
    return *p == '\0' ? n : -1;
}

static const json_member *json_get(const json_member *members, int n, const char *key) {
    for (int k = 0; k < n; ++k)
        if (!strcmp(members[k].key, key)) return &members[k];
    return NULL;
}

/* Checks one line of --json output for graph number `graph`. */
static void assert_json_summary(const char *line, int graph, const char *expected_status) {
    json_member m[32];
    int n = json_parse_object(line, m, 32);
    if (n < 0) fail_msg("not a JSON object: '%s'", line);
    if (n > 32) n = 32;
    static const char *const keys[] = {"graph",      "status",   "value",  "upper_bound",
                                       "iterations", "integral", "seconds"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; ++k)
        if (!json_get(m, n, keys[k])) fail_msg("JSON line lacks '%s': %s", keys[k], line);
    const json_member *g = json_get(m, n, "graph"), *s = json_get(m, n, "status"),
                      *it = json_get(m, n, "iterations"), *in = json_get(m, n, "integral"),
                      *sec = json_get(m, n, "seconds"), *v = json_get(m, n, "value"),
                      *ub = json_get(m, n, "upper_bound");
    assert_int_equal(g->kind, J_NUMBER);
    assert_true(g->number == graph);
    assert_int_equal(s->kind, J_STRING);
    if (expected_status) assert_string_equal(s->string, expected_status);
    assert_int_equal(it->kind, J_NUMBER);
    assert_true(it->number >= 1 && it->number == floor(it->number));
    assert_int_equal(in->kind, J_BOOL);
    assert_int_equal(sec->kind, J_NUMBER);
    assert_true(sec->number >= 0);
    assert_int_equal(v->kind, J_NUMBER);
    assert_int_equal(ub->kind, J_NUMBER);
}

/* Splits text into lines (modifies it); returns the count. */
/* A JSON line without a value (null): valid JSON, with the status and a
 * finite upper bound. */
static void assert_json_without_value(const char *line, const char *expected_status) {
    json_member m[32];
    int n = json_parse_object(line, m, 32);
    if (n < 0) fail_msg("not a JSON object: '%s'", line);
    if (n > 32) n = 32;
    const json_member *s = json_get(m, n, "status"), *v = json_get(m, n, "value"),
                      *ub = json_get(m, n, "upper_bound");
    if (!s || !v || !ub) fail_msg("JSON line lacks status, value or upper_bound: %s", line);
    assert_int_equal(s->kind, J_STRING);
    assert_string_equal(s->string, expected_status);
    assert_int_equal(v->kind, J_NULL);
    assert_int_equal(ub->kind, J_NUMBER);
}

static int split_lines(char *text, char **lines, int max) {
    int n = 0;
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        if (n < max) lines[n] = p;
        ++n;
        if (!eol) break;
        *eol = '\0';
        p = eol + 1;
    }
    return n;
}

/* ------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------ */

static void a_good_file_exits_0_and_writes_posteriors(void **state) {
    (void)state;
    char dir[512], out[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    run_result r;
    const char *args[] = {"solve", FG_LOGIC, "-o", out, NULL};
    run_expect(&r, NULL, args, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "graph 3:")); /* the summary goes to stdout with -o */
    free_result(&r);
    char *text = read_whole_file(out, NULL);
    assert_non_null(text);
    assert_posteriors_layout(text, 3, logic_vars, logic_adds);
    free(text);
    assert_int_equal(dir_entries(dir, NULL, 0), 1); /* no temporary left */

    /* Without -o and --json: posteriors on stdout, summary on stderr. */
    const char *args2[] = {"solve", three_path, NULL};
    run_expect(&r, NULL, args2, 0);
    assert_posteriors_layout(r.out, 3, three_vars, three_adds);
    assert_non_null(strstr(r.err, "graph 3:"));
    free_result(&r);

    /* -q: no summary at all, posteriors still written. */
    const char *args3[] = {"solve", "-q", three_path, NULL};
    run_expect(&r, NULL, args3, 0);
    assert_posteriors_layout(r.out, 3, three_vars, three_adds);
    assert_string_equal(r.err, "");
    free_result(&r);
}

/* Posteriors go through a symbolic link or a device in place: replacing
 * /dev/null with a regular file (as renaming a temporary over it would, run
 * as root) would break every program on the machine. The link is checked
 * first, so that a regression fails there before /dev/null is at stake. */
static void a_link_or_a_device_as_output_is_written_through_in_place(void **state) {
    (void)state;
    struct stat before, after;
    run_result r;
    char dir[512], target[600], link[600];
    fresh_dir(dir, sizeof dir);
    snprintf(target, sizeof target, "%s/target.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    FILE *fp = fopen(target, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(symlink("target.txt", link), 0);
    const char *args[] = {"solve", FG_LOGIC, "-o", link, NULL};
    run_expect(&r, NULL, args, 0);
    free_result(&r);
    assert_int_equal(lstat(link, &after), 0);
    assert_true(S_ISLNK(after.st_mode));
    char *text = read_whole_file(target, NULL);
    assert_non_null(text);
    assert_posteriors_layout(text, 3, logic_vars, logic_adds);
    /* a failed run leaves the link's target as it was, and no temporary */
    char bad[600];
    snprintf(bad, sizeof bad, "%s/bad-later.fg", work_dir);
    assert_int_equal(write_text_file(bad, "2\n1\n1\n1\nXOR 2 1 2\n\n2\n1\nzz\n"), 0);
    const char *failing[] = {"solve", bad, "-o", link, NULL};
    run_expect(&r, NULL, failing, 3);
    free_result(&r);
    char *kept = read_whole_file(target, NULL);
    assert_non_null(kept);
    assert_string_equal(kept, text);
    free(kept);
    free(text);
    assert_int_equal(dir_entries(dir, NULL, 0), 2);

    if (stat("/dev/null", &before) != 0 || !S_ISCHR(before.st_mode)) return;
    const char *to_null[] = {"solve", FG_LOGIC, "-o", "/dev/null", NULL};
    run_expect(&r, NULL, to_null, 0);
    free_result(&r);
    assert_int_equal(lstat("/dev/null", &after), 0);
    assert_true(S_ISCHR(after.st_mode));
    assert_true(after.st_rdev == before.st_rdev);
}

/* A symbolic link to nothing yet as the output: its target is created
 * when the run succeeds, and not at all when the input turns out malformed
 * (it was written through in place and kept half written). */
static void a_link_to_nothing_yet_gets_its_target_only_when_the_run_succeeds(void **state) {
    (void)state;
    char dir[512], target[600], link[600], bad[600];
    fresh_dir(dir, sizeof dir);
    snprintf(target, sizeof target, "%s/target.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    assert_int_equal(symlink("target.txt", link), 0);
    snprintf(bad, sizeof bad, "%s/bad-later.fg", work_dir);
    assert_int_equal(write_text_file(bad, "2\n1\n1\n1\nXOR 2 1 2\n\n2\n1\nzz\n"), 0);
    run_result r;
    const char *failing[] = {"solve", bad, "-o", link, NULL};
    run_expect(&r, NULL, failing, 3);
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 1); /* the link alone */
    const char *args[] = {"solve", FG_LOGIC, "-o", link, NULL};
    run_expect(&r, NULL, args, 0);
    free_result(&r);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    char *text = read_whole_file(target, NULL);
    assert_non_null(text);
    assert_posteriors_layout(text, 3, logic_vars, logic_adds);
    free(text);
    assert_int_equal(dir_entries(dir, NULL, 0), 2);
}

static void usage_errors_exit_2_with_a_message_and_write_nothing(void **state) {
    (void)state;
    char dir[512], out[600], other[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    snprintf(other, sizeof other, "%s/other.txt", dir);
    const char *good = three_path;
    const char *cases[][10] = {
        {NULL},                                          /* no arguments */
        {"solve", NULL},                                 /* no input file */
        {"solve", "-o", out, NULL},                      /* no input file */
        {"solve", "--bogus", good, "-o", out, NULL},     /* unknown flag */
        {"solve", "-x", good, "-o", out, NULL},          /* unknown short flag */
        {"frobnicate", good, NULL},                      /* unknown command */
        {"--bogus", NULL},                               /* unknown top-level flag */
        {"solve", good, "--tol", NULL},                  /* missing value */
        {"solve", good, "-o", NULL},                     /* missing value */
        {"solve", good, "--max-iter", NULL},             /* missing value */
        {"solve", "--tol", "abc", good, "-o", out, NULL},
        {"solve", "--tol", "1e-3x", good, "-o", out, NULL},
        {"solve", "--tol", "", good, "-o", out, NULL},
        {"solve", "--eta", "nan", good, "-o", out, NULL},
        {"solve", "--relaxation", "inf", good, "-o", out, NULL},
        {"solve", "--max-iter", "0", good, "-o", out, NULL},
        {"solve", "--max-iter", "-5", good, "-o", out, NULL},
        {"solve", "--max-iter", "1.5", good, "-o", out, NULL},
        {"solve", "--max-iter", "99999999999", good, "-o", out, NULL},
        {"solve", "--format", "xml", good, "-o", out, NULL},
        {"solve", "--algorithm", "gibbs", good, "-o", out, NULL},
        {"solve", good, good, "-o", out, NULL},          /* two input files */
        {"solve", good, "-", NULL},                      /* two inputs, one stdin */
        {"--version", "extra", NULL},                    /* an argument --version ignores */
        {"help", "bogus", NULL},                         /* an argument help ignores */
        {"solve", good, "-o", out, "--decode-output", out, NULL}, /* one file, two outputs */
        {"solve", good, "-o", out, "--output", other, NULL},      /* two files, one output */
        {"solve", good, "-o", "-", NULL},                /* '-' is no output path */
        {"solve", good, "--decode-output", "-", NULL},
        {"solve", UAI_GRID, "--evid", "-", NULL},        /* evidence is read from a file */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        run_result r;
        run_expect(&r, NULL, cases[k], 2);
        if (r.err[0] == '\0') fail_msg("case %zu: no message on stderr", k);
        assert_null(strstr(r.out, "graph 1")); /* nothing was solved */
        free_result(&r);
        assert_int_equal(dir_entries(dir, NULL, 0), 0);
    }
    /* one file through a link to nothing yet (which writing creates) */
    char linked[512], link[600], decoded[600];
    fresh_dir(linked, sizeof linked);
    snprintf(link, sizeof link, "%s/link.txt", linked);
    snprintf(decoded, sizeof decoded, "%s/decoded.txt", linked);
    assert_int_equal(symlink("decoded.txt", link), 0);
    const char *through_link[] = {"solve", good, "-o", link, "--decode-output", decoded, NULL};
    run_result r;
    run_expect(&r, NULL, through_link, 2);
    assert_non_null(strstr(r.err, "would go to the same file"));
    free_result(&r);
    assert_int_equal(dir_entries(linked, NULL, 0), 1); /* the link alone */
}

/* An output file that is where stdout or stderr goes (stdout is captured
 * to a file here) is a usage error: with --json, -o /dev/stdout renamed the
 * posteriors over the file the JSON went to (lost, exit 0). A stdout that
 * carries nothing else may take it. */
static void an_output_that_is_stdout_or_stderr_is_a_usage_error(void **state) {
    (void)state;
    char out_file[600], err_file[600];
    snprintf(out_file, sizeof out_file, "%s/stdout.txt", work_dir);
    snprintf(err_file, sizeof err_file, "%s/stderr.txt", work_dir);
    static const struct {
        const char *flag, *path, *message;
    } cases[] = {
        {"-o", "/dev/stdout", "-o /dev/stdout is where stdout goes"},
        {"-o", "OUT", "is where stdout goes"},
        {"--decode-output", "/dev/stderr", "--decode-output /dev/stderr is where stderr goes"},
        {"--decode-output", "ERR", "is where stderr goes"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        const char *path = !strcmp(cases[k].path, "OUT")   ? out_file
                           : !strcmp(cases[k].path, "ERR") ? err_file
                                                           : cases[k].path;
        const char *args[] = {"solve", FG_LOGIC, "--json", cases[k].flag, path, NULL};
        run_result r;
        run_expect(&r, NULL, args, 2);
        if (!strstr(r.err, cases[k].message)) fail_msg("case %zu: stderr '%s'", k, r.err);
        assert_string_equal(r.out, "");
        free_result(&r);
    }
    /* /dev/null takes any number of outputs */
    const char *to_null[] = {"solve", FG_LOGIC, "-o", "/dev/null", NULL};
    run_result r;
    run_cli_with(&r, NULL, to_null, "/dev/null", 0);
    assert_int_equal(r.status, 0);
    free_result(&r);
    /* stdout that carries nothing else (-q, no --json) may take an output */
    const char *quiet[] = {"solve", FG_LOGIC, "-q", "-o", "/dev/stdout", NULL};
    run_expect(&r, NULL, quiet, 0);
    assert_posteriors_layout(r.out, 3, logic_vars, logic_adds);
    free_result(&r);
}

/* An output that is the file stdout goes to (-o /dev/stdout -q, stdout
 * redirected) is written through stdout, at its offset: it was written
 * under a temporary name and renamed over that file, which lost what the
 * shell had written there before and cut off what it wrote after. */
static void an_output_that_is_stdouts_file_is_written_through_stdout(void **state) {
    (void)state;
    char dir[512], log[600], command[2048];
    fresh_dir(dir, sizeof dir);
    snprintf(log, sizeof log, "%s/log.txt", dir);
    assert_int_equal(write_text_file(log, "before\n"), 0);
    snprintf(command, sizeof command,
             "{ echo header; '%s' solve '%s' -q -o /dev/stdout; echo footer; } >> '%s'",
             CLI_BINARY, FG_LOGIC, log);
    const char *argv[] = {"/bin/sh", "-c", command, NULL};
    char err_path[600];
    snprintf(err_path, sizeof err_path, "%s/err.txt", dir);
    const int pid = start_program(argv, NULL, err_path, err_path, 0);
    assert_int_equal(wait_program(pid, "sh", 60), 0);
    char *text = read_whole_file(log, NULL);
    assert_non_null(text);
    const char *head = "before\nheader\n";
    assert_memory_equal(text, head, strlen(head));
    const size_t n = strlen(text), tail = strlen("footer\n");
    assert_true(n > strlen(head) + tail);
    assert_string_equal(text + n - tail, "footer\n");
    text[n - tail] = '\0';
    assert_posteriors_layout(text + strlen(head), 3, logic_vars, logic_adds);
    free(text);
    assert_int_equal(dir_entries(dir, NULL, 0), 2); /* the log and stderr: no temporary */
}

/* An output that would replace the input or the evidence file is a usage
 * error, and the file stays as it was: -o naming the input replaced the
 * graph by its posteriors (exit 0). */
static void an_output_that_is_an_input_is_a_usage_error(void **state) {
    (void)state;
    char dir[512], graph[600], model[600], evidence[600];
    fresh_dir(dir, sizeof dir);
    snprintf(graph, sizeof graph, "%s/graph.fg", dir);
    snprintf(model, sizeof model, "%s/model.uai", dir);
    snprintf(evidence, sizeof evidence, "%s/model.evid", dir);
    const char *graph_text = "2\n1\n1.0\n0.5\nXOR 2 1 2\n";
    const char *model_text = "MARKOV\n2\n2 2\n1\n2 0 1\n4\n1 2 3 4\n";
    assert_int_equal(write_text_file(graph, graph_text), 0);
    assert_int_equal(write_text_file(model, model_text), 0);
    assert_int_equal(write_text_file(evidence, "1 0 1\n"), 0);
    static const struct {
        const char *flag;
        bool uai;
        bool evidence; /* the output names the evidence, else the input */
    } cases[] = {
        {"-o", false, false},
        {"--decode-output", false, false},
        {"--uai-map", true, false},
        {"-o", true, true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        const char *input = cases[k].uai ? model : graph;
        const char *target = cases[k].evidence ? evidence : input;
        const char *args[] = {"solve", input, cases[k].flag, target, "--evid", evidence, NULL};
        if (!cases[k].uai) args[4] = NULL;
        run_result r;
        run_expect(&r, NULL, args, 2);
        char message[1400];
        snprintf(message, sizeof message, "%s %s is the %s file", cases[k].flag, target,
                 cases[k].evidence ? "evidence" : "input");
        if (!strstr(r.err, message)) fail_msg("case %zu: stderr '%s'", k, r.err);
        free_result(&r);
    }
    char *text = read_whole_file(graph, NULL);
    assert_string_equal(text, graph_text);
    free(text);
    text = read_whole_file(model, NULL);
    assert_string_equal(text, model_text);
    free(text);
    text = read_whole_file(evidence, NULL);
    assert_string_equal(text, "1 0 1\n");
    free(text);
    assert_int_equal(dir_entries(dir, NULL, 0), 3);
}

/* Values outside the documented ranges (--tol and --eta positive,
 * --relaxation in [1, 2)) are usage errors too, caught before any input is
 * read: not numerical failures (exit 5) after reading it. */
static void out_of_range_option_values_are_usage_errors(void **state) {
    (void)state;
    char dir[512], out[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    const char *good = three_path;
    static const char *const cases[][2] = {
        {"--tol", "0"},          {"--tol", "-1"},         {"--eta", "0"},
        {"--eta", "-3"},         {"--relaxation", "2"},   {"--relaxation", "0.5"},
        /* surrounding spaces, on either side, as strtod and strtoll would skip */
        {"--max-iter", " 5"},    {"--max-iter", "5 "},    {"--tol", " 1e-3"},
    };
    int failures = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        run_result r;
        const char *args[] = {"solve", cases[k][0], cases[k][1], good, "-o", out, NULL};
        run_cli(&r, NULL, args);
        if (r.status != 2) {
            print_message("concord solve %s %s FILE: exit %d (expected 2): %s", cases[k][0],
                          cases[k][1], r.status, r.err);
            ++failures;
        }
        free_result(&r);
        assert_int_equal(dir_entries(dir, NULL, 0), 0);
    }
    assert_int_equal(failures, 0);
}

/* A flag of another algorithm than the one chosen (--node-limit without
 * --algorithm exact, say) leaves the run as it is without the flag, and a
 * warning on stderr names the algorithms it applies to; flags of the chosen
 * algorithm warn about nothing. */
static void a_flag_the_algorithm_does_not_use_is_ignored_with_a_warning(void **state) {
    (void)state;
    char dir[512], plain_path[600], flagged_path[600];
    fresh_dir(dir, sizeof dir);
    snprintf(plain_path, sizeof plain_path, "%s/plain.txt", dir);
    snprintf(flagged_path, sizeof flagged_path, "%s/flagged.txt", dir);
    run_result r;
    const char *plain[] = {"solve", three_path, "-o", plain_path, NULL};
    run_expect(&r, NULL, plain, 0);
    assert_null(strstr(r.err, "warning"));
    free_result(&r);
    const char *flagged[] = {"solve", "--node-limit", "5", three_path, "--psdd-eta", "2",
                             "-o", flagged_path, NULL};
    run_expect(&r, NULL, flagged, 0);
    assert_non_null(strstr(r.err, "concord: warning: --node-limit applies to --algorithm exact "
                                  "only; ignored with --algorithm ad3\n"));
    assert_non_null(strstr(r.err, "concord: warning: --psdd-eta applies to --algorithm psdd "
                                  "only; ignored with --algorithm ad3\n"));
    free_result(&r);
    char *a = read_whole_file(plain_path, NULL), *b = read_whole_file(flagged_path, NULL);
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    free(a);
    free(b);
    const char *mplp[] = {"solve", "--algorithm", "mplp", "--accelerate", "3", "-q",
                          three_path, "-o", flagged_path, NULL};
    run_expect(&r, NULL, mplp, 0);
    assert_non_null(strstr(r.err, "--accelerate applies to --algorithm ad3, sparse or exact "
                                  "only; ignored with --algorithm mplp"));
    free_result(&r);
    const char *exact[] = {"solve", "--algorithm", "exact", "--node-limit", "5", "--no-acyclic",
                           "--eta", "0.5", "-q", three_path, "-o", flagged_path, NULL};
    run_expect(&r, NULL, exact, 0);
    assert_null(strstr(r.err, "warning"));
    free_result(&r);
}

static void bad_input_exits_3_names_file_and_line_and_leaves_no_output(void **state) {
    (void)state;
    char dir[512], out[600], expected[700];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    run_result r;

    const char *args[] = {"solve", malformed_path, "-o", out, NULL};
    run_expect(&r, NULL, args, 3);
    snprintf(expected, sizeof expected, "%s:6: ", malformed_path);
    if (!strstr(r.err, expected)) fail_msg("stderr lacks '%s': %s", expected, r.err);
    assert_non_null(strstr(r.err, "negated"));
    free_result(&r);
    char name[256];
    if (dir_entries(dir, name, sizeof name) != 0) fail_msg("left behind: %s", name);

    /* The same through --json: no JSON line for a file that was not read. */
    const char *args_json[] = {"solve", "--json", malformed_path, "-o", out, NULL};
    run_expect(&r, NULL, args_json, 3);
    assert_string_equal(r.out, "");
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 0);

    /* A missing file. */
    char missing[600];
    snprintf(missing, sizeof missing, "%s/does-not-exist.fg", work_dir);
    const char *args2[] = {"solve", missing, "-o", out, NULL};
    run_expect(&r, NULL, args2, 3);
    if (!strstr(r.err, missing)) fail_msg("stderr does not name the file: %s", r.err);
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 0);

    /* A directory given as the input. */
    const char *args3[] = {"solve", work_dir, "-o", out, NULL};
    run_expect(&r, NULL, args3, 3);
    assert_non_null(strstr(r.err, work_dir));
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 0);

    /* Malformed stdin is named <stdin>. */
    const char *args4[] = {"solve", "-", "-o", out, NULL};
    run_expect(&r, malformed_path, args4, 3);
    assert_non_null(strstr(r.err, "<stdin>:6: "));
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 0);

    /* An empty input has no graph. */
    char empty[600];
    snprintf(empty, sizeof empty, "%s/empty.fg", work_dir);
    assert_int_equal(write_text_file(empty, ""), 0);
    const char *args5[] = {"solve", empty, "-o", out, NULL};
    run_expect(&r, NULL, args5, 3);
    assert_non_null(strstr(r.err, "no graph"));
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 0);

    /* An existing output file is left untouched by a failed run. */
    assert_int_equal(write_text_file(out, "previous contents\n"), 0);
    run_expect(&r, NULL, args, 3);
    free_result(&r);
    char *text = read_whole_file(out, NULL);
    assert_string_equal(text, "previous contents\n");
    free(text);
    assert_int_equal(dir_entries(dir, NULL, 0), 1);
}

static void not_converged_exits_4_and_still_writes_posteriors(void **state) {
    (void)state;
    char dir[512], out[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    run_result r;
    const char *args[] = {"solve", "--max-iter", "1", FG_SLOW, "-o", out, NULL};
    run_expect(&r, NULL, args, 4);
    /* the summary, on stdout, says the point is unconverged (a converged
     * one's has no such mark) */
    assert_non_null(strstr(r.out, "(unconverged: the factors' copies disagree by up to "));
    free_result(&r);
    const char *args_converged[] = {"solve", FG_SLOW, "-o", out, NULL};
    run_expect(&r, NULL, args_converged, 0);
    assert_null(strstr(r.out, "unconverged"));
    free_result(&r);
    char *text = read_whole_file(out, NULL);
    if (!text) fail_msg("no posteriors written for a graph that did not converge");
    const int nv[] = {36}, na[] = {0};
    assert_posteriors_layout(text, 1, nv, na);
    free(text);
    assert_int_equal(dir_entries(dir, NULL, 0), 1);

    const char *args_json[] = {"solve", "--json", "--max-iter", "1", FG_SLOW, NULL};
    run_expect(&r, NULL, args_json, 4);
    char *lines[4];
    assert_int_equal(split_lines(r.out, lines, 4), 1);
    assert_json_summary(lines[0], 1, "max_iter");
    free_result(&r);

    /* XOR(x2, x3) and PAIR(x3, x2): PSDD's bound stalls while its average
     * still breaks the XOR (LP-MAP 0.5 at x2 = x3 = 1/2) */
    char xor_pair[600];
    snprintf(xor_pair, sizeof xor_pair, "%s/xor_pair.fg", dir);
    assert_int_equal(
        write_text_file(xor_pair, "3\n2\n-2\n0\n-1\nXOR 2 2 3\nPAIR 2 3 2 2.0\n"), 0);
    const char *args_psdd[] = {"solve", "--json", "--algorithm", "psdd", xor_pair, NULL};
    run_expect(&r, NULL, args_psdd, 4);
    assert_int_equal(split_lines(r.out, lines, 4), 1);
    assert_json_summary(lines[0], 1, "stalled");
    free_result(&r);
    const char *args_psdd_summary[] = {"solve", "--algorithm", "psdd", xor_pair, "-o", out, NULL};
    run_expect(&r, NULL, args_psdd_summary, 4);
    assert_non_null(strstr(r.out, "stalled, value "));
    assert_non_null(strstr(r.out, "(unconverged: the factors' copies disagree by up to "));
    free_result(&r);
}

static void json_prints_one_object_per_graph_and_posteriors_keep_the_layout(void **state) {
    (void)state;
    char dir[512], out[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    run_result r;
    const char *args[] = {"solve", "--json", three_path, "-o", out, NULL};
    run_expect(&r, NULL, args, 0);
    char *lines[8];
    int n = split_lines(r.out, lines, 8);
    if (n != 3) fail_msg("expected 3 JSON lines, got %d:\n%s", n, r.out);
    for (int k = 0; k < 3; ++k) assert_json_summary(lines[k], k + 1, NULL);
    free_result(&r);
    char *text = read_whole_file(out, NULL);
    assert_non_null(text);
    assert_posteriors_layout(text, 3, three_vars, three_adds);
    free(text);
    assert_int_equal(dir_entries(dir, NULL, 0), 1);

    /* --json without -o: JSON only on stdout. */
    const char *args2[] = {"solve", "--json", three_path, NULL};
    run_expect(&r, NULL, args2, 0);
    n = split_lines(r.out, lines, 8);
    assert_int_equal(n, 3);
    for (int k = 0; k < 3; ++k) assert_json_summary(lines[k], k + 1, NULL);
    free_result(&r);

    /* The JSON reader itself rejects what it should. */
    json_member m[4];
    assert_true(json_parse_object("{\"a\":1,}", m, 4) < 0);
    assert_true(json_parse_object("{\"a\":nan}", m, 4) < 0);
    assert_true(json_parse_object("{\"a\":1} x", m, 4) < 0);
    assert_true(json_parse_object("{\"a\":1,\"a\":2}", m, 4) < 0);
    assert_int_equal(json_parse_object("{\"a\":[1,{\"b\":null}],\"c\":\"d\\\"\"}", m, 4), 2);
}

static void stdin_dash_reads_the_input_like_a_file(void **state) {
    (void)state;
    run_result from_file, from_stdin;
    const char *args_file[] = {"solve", "-q", three_path, NULL};
    const char *args_stdin[] = {"solve", "-q", "-", NULL};
    run_expect(&from_file, NULL, args_file, 0);
    run_expect(&from_stdin, three_path, args_stdin, 0);
    assert_posteriors_layout(from_stdin.out, 3, three_vars, three_adds);
    assert_string_equal(from_stdin.out, from_file.out);
    free_result(&from_file);
    free_result(&from_stdin);

    /* Empty stdin is bad input. */
    run_result r;
    run_expect(&r, NULL, args_stdin, 3);
    assert_non_null(strstr(r.err, "<stdin>"));
    free_result(&r);
}

/* '--' ends the options, as POSIX utilities do: an input named with a
 * leading '-' is read after it (and is an unknown option without it), a
 * '--help' after it is a file name, not the help, a second '--' is an
 * operand, and a flag's value may be '--'. Run in a directory of its own,
 * the names being relative. */
static void a_double_dash_ends_the_options(void **state) {
    (void)state;
    char dir[512], cwd[4096];
    fresh_dir(dir, sizeof dir);
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    char *text = read_whole_file(three_path, NULL);
    assert_non_null(text);
    assert_int_equal(write_text_file("-three.fg", text), 0);
    free(text);
    run_result r;
    const char *after_dash[] = {"solve", "-q", "-o", "post.txt", "--", "-three.fg", NULL};
    run_expect(&r, NULL, after_dash, 0);
    free_result(&r);
    text = read_whole_file("post.txt", NULL);
    assert_non_null(text);
    assert_posteriors_layout(text, 3, three_vars, three_adds);
    free(text);

    const char *without_dash[] = {"solve", "-q", "-three.fg", NULL};
    run_expect(&r, NULL, without_dash, 2);
    assert_non_null(strstr(r.err, "unknown option '-three.fg'"));
    free_result(&r);

    const char *help_after_dash[] = {"solve", "--", "--help", NULL};
    run_expect(&r, NULL, help_after_dash, 3);
    assert_null(strstr(r.out, "usage:"));
    assert_non_null(strstr(r.err, "--help: No such file"));
    free_result(&r);

    const char *dash_twice[] = {"solve", "-q", "--", "-three.fg", "--", NULL};
    run_expect(&r, NULL, dash_twice, 2);
    assert_non_null(strstr(r.err, "more than one input file ('--')"));
    free_result(&r);

    /* '--' as the value of -o is the output's name, not the end of options */
    const char *dash_as_value[] = {"solve", "-q", "-o", "--", three_path, NULL};
    run_expect(&r, NULL, dash_as_value, 0);
    free_result(&r);
    text = read_whole_file("--", NULL);
    assert_non_null(text);
    assert_posteriors_layout(text, 3, three_vars, three_adds);
    free(text);

    /* so is '--help': a flag's value is no request for help */
    const char *help_as_value[] = {"solve", "-q", "-o", "--help", three_path, NULL};
    run_expect(&r, NULL, help_as_value, 0);
    assert_null(strstr(r.out, "usage:"));
    free_result(&r);
    text = read_whole_file("--help", NULL);
    assert_non_null(text);
    assert_posteriors_layout(text, 3, three_vars, three_adds);
    free(text);
    assert_int_equal(chdir(cwd), 0);
}

static void an_unwritable_output_path_exits_5(void **state) {
    (void)state;
    char out[600];
    snprintf(out, sizeof out, "%s/no-such-dir/post.txt", work_dir);
    run_result r;
    const char *args[] = {"solve", three_path, "-o", out, NULL};
    run_expect(&r, NULL, args, 5);
    assert_non_null(strstr(r.err, out));
    free_result(&r);
}

/* Option lines of the help: "  -o, --output FILE  text": the flags and the
 * value they take ("" if none). */
typedef struct help_flag {
    char name[32];
    char metavar[32];
    int top_level; /* documented on the "concord --help | --version" line */
} help_flag;

static int extract_help_flags(const char *help, help_flag *flags, int max) {
    int n = 0;
    char *copy = strdup(help);
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *s = line;
        while (*s == ' ') ++s;
        int usage_line = !strncmp(s, "usage:", 6) || !strncmp(s, "concord ", 8);
        if (usage_line) {
            if (strstr(s, "solve")) continue;
            for (char *t = s; (t = strstr(t, " -")); ++t) {
                char name[32];
                if (sscanf(t + 1, "%31[-a-z]", name) == 1 && name[1] && n < max) {
                    memset(&flags[n], 0, sizeof flags[n]);
                    snprintf(flags[n].name, sizeof flags[n].name, "%s", name);
                    flags[n++].top_level = 1;
                }
            }
            continue;
        }
        if (s[0] != '-' || s == line) continue;
        /* "-o, --output FILE  text": up to the first double space. */
        char *gap = strstr(s, "  ");
        if (gap) *gap = '\0';
        char metavar[32] = "";
        char *space = strrchr(s, ' ');
        if (space && space[1] != '-') {
            snprintf(metavar, sizeof metavar, "%s", space + 1);
            *space = '\0';
        }
        char *save2 = NULL;
        for (char *f = strtok_r(s, ", ", &save2); f; f = strtok_r(NULL, ", ", &save2)) {
            int known = 0;
            for (int k = 0; k < n; ++k)
                if (!strcmp(flags[k].name, f)) known = 1;
            if (known || n >= max) continue;
            memset(&flags[n], 0, sizeof flags[n]);
            snprintf(flags[n].name, sizeof flags[n].name, "%s", f);
            snprintf(flags[n].metavar, sizeof flags[n].metavar, "%s", metavar);
            ++n;
        }
    }
    free(copy);
    return n;
}

static int help_mentions(const char *help, const char *flag) {
    size_t n = strlen(flag);
    for (const char *p = help; (p = strstr(p, flag)); p += n) {
        char before = p == help ? ' ' : p[-1];
        char after = p[n];
        if ((before == ' ' || before == ',' || before == '|' || before == '\n') &&
            (after == ' ' || after == ',' || after == '\n' || after == '\0'))
            return 1;
    }
    return 0;
}

static void help_exits_0_and_documents_every_accepted_flag(void **state) {
    (void)state;
    run_result r;
    const char *args[] = {"--help", NULL};
    run_expect(&r, NULL, args, 0);
    char *help = r.out;
    r.out = NULL;
    free_result(&r);
    assert_non_null(strstr(help, "usage:"));
    assert_non_null(strstr(help, "exit status"));

    /* -h and `solve --help` print the same help. */
    const char *args_h[] = {"-h", NULL};
    run_expect(&r, NULL, args_h, 0);
    assert_string_equal(r.out, help);
    free_result(&r);
    const char *args_sh[] = {"solve", "--help", NULL};
    run_expect(&r, NULL, args_sh, 0);
    assert_string_equal(r.out, help);
    free_result(&r);

    /* Every flag the parser handles (tools/concord.c) is in the help. */
    static const char *const parser_flags[] = {
        "--format", "--algorithm", "--max-iter", "--tol",  "--eta",    "--no-adapt",
        "--relaxation", "-o",      "--output",   "--json", "-q",       "--quiet",
        "-v",       "--verbose",   "-h",         "--help", "--version", "--evid",
        "--uai-map", "--decode", "--accelerate", "--decode-output", "--time-limit",
        "--node-limit", "--search", "--exact-gap", "--heuristic-every", "--no-acyclic",
        "--psdd-step", "--psdd-eta",
    };
    for (size_t k = 0; k < sizeof parser_flags / sizeof parser_flags[0]; ++k)
        if (!help_mentions(help, parser_flags[k]))
            fail_msg("the help does not mention %s", parser_flags[k]);

    /* Every flag in the help is accepted by the parser. */
    help_flag flags[64];
    int n = extract_help_flags(help, flags, 64);
    assert_true(n >= 15);
    for (int k = 0; k < n; ++k) {
        char value[600];
        const char *mv = flags[k].metavar;
        if (!strcmp(mv, "FILE")) snprintf(value, sizeof value, "%s/help-out.txt", work_dir);
        else if (!strcmp(mv, "N"))
            snprintf(value, sizeof value, "%s", strcmp(flags[k].name, "--accelerate") ? "50" : "5");
        else if (!strcmp(mv, "X"))
            snprintf(value, sizeof value, "%s",
                     strcmp(flags[k].name, "--tol") && strcmp(flags[k].name, "--exact-gap")
                         ? "1.5"
                         : "1e-4");
        else if (!strcmp(mv, "S")) snprintf(value, sizeof value, "60");
        else if (strchr(mv, '|')) snprintf(value, sizeof value, "%.*s", (int)strcspn(mv, "|"), mv);
        else snprintf(value, sizeof value, "%s", mv);
        if (flags[k].top_level) {
            const char *a[] = {flags[k].name, NULL};
            run_expect(&r, NULL, a, 0);
            assert_true(r.out[0] != '\0');
        } else {
            /* --evid and --uai-map apply to UAI models: give them one, and
             * --evid an evidence file with no observation. */
            int uai = !strcmp(flags[k].name, "--evid") || !strcmp(flags[k].name, "--uai-map");
            if (!strcmp(flags[k].name, "--evid")) {
                snprintf(value, sizeof value, "%s/help-evidence.txt", work_dir);
                FILE *fp = fopen(value, "w");
                assert_non_null(fp);
                fputs("0\n", fp);
                fclose(fp);
            }
            const char *input = uai ? UAI_GRID : three_path;
            const char *a[] = {"solve", flags[k].name, value, input, NULL};
            if (!mv[0]) a[2] = input, a[3] = NULL;
            run_cli(&r, NULL, a);
            if (r.status == 2 || strstr(r.err, "unknown"))
                fail_msg("'concord solve %s %s' is refused (exit %d): %s", flags[k].name,
                         mv[0] ? value : "", r.status, r.err);
            assert_int_equal(r.status, 0);
        }
        free_result(&r);
    }
    free(help);

    /* --version prints the library version, among solve's options too. */
    const char *args_v[] = {"--version", NULL};
    run_expect(&r, NULL, args_v, 0);
    assert_non_null(strstr(r.out, "concord "));
    char *version = r.out;
    r.out = NULL;
    free_result(&r);
    const char *args_sv[] = {"solve", three_path, "--version", NULL};
    run_expect(&r, NULL, args_sv, 0);
    assert_string_equal(r.out, version);
    free_result(&r);
    free(version);
}

/* ------------------------------------------------------------------------
 * Output integrity, streaming, decoding, UAI posteriors, flags
 * ------------------------------------------------------------------------ */

/* An output file written again keeps its permissions, owner and group (it
 * is replaced by a new file renamed over it); a new one gets the umask's.
 * Giving the file to another owner takes root, as these tests run. */
static void a_rewritten_output_keeps_its_mode_and_owner(void **state) {
    (void)state;
    char dir[512], out[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    assert_int_equal(write_text_file(out, "old\n"), 0);
    const int root = geteuid() == 0;
    if (root) assert_int_equal(chown(out, 1234, 2345), 0);
    else print_message("not root: the owner and group are not changed before the run\n");
    assert_int_equal(chmod(out, 0640), 0);
    struct stat before, st;
    assert_int_equal(stat(out, &before), 0);
    run_result r;
    const char *args[] = {"solve", "-q", FG_LOGIC, "-o", out, NULL};
    run_expect(&r, NULL, args, 0);
    free_result(&r);
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(st.st_uid, root ? 1234 : before.st_uid);
    assert_int_equal(st.st_gid, root ? 2345 : before.st_gid);
    assert_true(st.st_ino != before.st_ino); /* a new file, renamed over the old */
    char *text = read_whole_file(out, NULL);
    assert_non_null(text);
    assert_true(strcmp(text, "old\n") != 0);
    free(text);
}

/* A user who may not give a file away (setpriv drops root's rights: user
 * 65534, in group 2345 only) rewrites a file of user 1234 and group 2345:
 * the new file keeps the group, is the user's own, and the run succeeds
 * (the refused change of owner is no failure). */
static void an_output_rewritten_by_another_user_keeps_what_it_can(void **state) {
    (void)state;
    static const char setpriv[] = "/usr/bin/setpriv";
    if (geteuid() != 0 || access(setpriv, X_OK) != 0) {
        print_message("skipped: needs root and %s\n", setpriv);
        return;
    }
    char dir[] = "/tmp/concord_test_owner_XXXXXX", out[64], out_log[600], err_log[600];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chown(dir, 65534, 65534), 0);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    assert_int_equal(write_text_file(out, "old\n"), 0);
    assert_int_equal(chown(out, 1234, 2345), 0);
    assert_int_equal(chmod(out, 0664), 0);
    snprintf(out_log, sizeof out_log, "%s/stdout.txt", work_dir);
    snprintf(err_log, sizeof err_log, "%s/stderr.txt", work_dir);
    const char *argv[] = {setpriv, "--reuid=65534", "--regid=65534", "--groups=2345",
                          CLI_BINARY, "solve", "-q", "-", "-o", out, NULL};
    const int status = run_program(argv, FG_LOGIC, out_log, err_log, 60);
    char *err = read_whole_file(err_log, NULL);
    if (status != 0) fail_msg("exit %d: %s", status, err ? err : "");
    free(err);
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_gid, 2345);
    assert_int_equal(st.st_mode & 07777, 0664);
    char *text = read_whole_file(out, NULL);
    assert_non_null(text);
    assert_true(strncmp(text, "0\n", 2) == 0 || strncmp(text, "1\n", 2) == 0);
    free(text);
    remove_tree(dir);
}

/* Every output that cannot be written makes the run fail with 5 and a
 * message naming it: stdout carrying JSON, posteriors, the summary, the
 * help or the version, and the posteriors, decoded-assignment and UAI
 * result files. */
static void a_write_to_a_full_device_exits_5(void **state) {
    (void)state;
    struct stat st;
    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode)) skip();
    char dir[512], out[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    const char *fg = FG_LOGIC, *uai = UAI_GRID;
    static const struct {
        const char *args[8];
        int stdout_full;
        const char *named;
    } cases[] = {
        {{"solve", "--json", "X", NULL}, 1, "stdout"},
        {{"solve", "X", NULL}, 1, "stdout"},                /* posteriors on stdout */
        {{"solve", "X", "-o", "OUT", NULL}, 1, "stdout"},   /* the summary on stdout */
        {{"solve", "--decode", "X", "-q", NULL}, 1, "stdout"},
        {{"solve", "X", "-o", "/dev/full", NULL}, 0, "/dev/full"},
        {{"solve", "X", "-q", "--decode-output", "/dev/full", NULL}, 0, "/dev/full"},
        {{"solve", "U", "-q", "--uai-map", "/dev/full", "-o", "OUT", NULL}, 0, "/dev/full"},
        {{"--help", NULL}, 1, "stdout"},
        {{"--version", NULL}, 1, "stdout"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        const char *args[8];
        for (int j = 0; j < 8; ++j) {
            const char *a = cases[k].args[j];
            args[j] = !a ? NULL : !strcmp(a, "X") ? fg : !strcmp(a, "U") ? uai
                                : !strcmp(a, "OUT") ? out : a;
            if (!a) break;
        }
        run_result r;
        run_cli_with(&r, NULL, args, cases[k].stdout_full ? "/dev/full" : NULL, 0);
        if (r.status != 5 || !strstr(r.err, cases[k].named))
            fail_msg("case %zu: exit %d (expected 5), stderr '%s' (expected to name %s)", k,
                     r.status, r.err, cases[k].named);
        free_result(&r);
        assert_int_equal(dir_entries(dir, NULL, 0), 0); /* a failed run keeps no file */
    }
}

/* Runs `concord solve ARGS` through sh with the standard stream `fd`
 * closed (`fd>&-`); the other two go to the files run_cli_with uses. */
static void run_cli_with_a_stream_closed(run_result *r, int fd, const char *const *args) {
    char script[64];
    snprintf(script, sizeof script, "exec \"$0\" \"$@\" %d>&-", fd);
    const char *argv[16] = {"/bin/sh", "-c", script, CLI_BINARY, "solve"};
    int n = 5;
    while (*args && n < 15) argv[n++] = *args++;
    argv[n] = NULL;
    char out[512], err[512];
    snprintf(out, sizeof out, "%s/stdout.txt", work_dir);
    snprintf(err, sizeof err, "%s/stderr.txt", work_dir);
    r->status = run_program(argv, FG_LOGIC, out, err, 60);
    r->out = read_whole_file(out, NULL);
    r->err = read_whole_file(err, NULL);
    assert_non_null(r->out);
    assert_non_null(r->err);
}

/* A file the run opens never takes the number of a standard stream the
 * caller closed: the summary, bound for a closed stdout, does not end up
 * in the posteriors file (it fails as a write to stdout, exit 5, and no
 * file is kept), nor -v's progress, bound for a closed stderr. */
static void a_closed_standard_stream_never_writes_into_an_output_file(void **state) {
    (void)state;
    char dir[512], out[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    run_result r;
    const char *summary_to_stdout[] = {FG_LOGIC, "-o", out, NULL};
    run_cli_with_a_stream_closed(&r, 1, summary_to_stdout);
    assert_int_equal(r.status, 5);
    assert_non_null(strstr(r.err, "concord: cannot write stdout: Bad file descriptor"));
    assert_int_equal(dir_entries(dir, NULL, 0), 0);
    free_result(&r);

    const char *progress_to_stderr[] = {FG_LOGIC, "-v", "-q", "-o", out, NULL};
    run_cli_with_a_stream_closed(&r, 2, progress_to_stderr);
    assert_int_equal(r.status, 0);
    char *text = read_whole_file(out, NULL);
    assert_non_null(text);
    assert_null(strstr(text, "iter"));
    assert_blocks_layout(text, 3, logic_vars, logic_adds, NULL);
    free(text);
    free_result(&r);

    const char *from_stdin[] = {"-", "-o", out, NULL};
    run_cli_with_a_stream_closed(&r, 0, from_stdin);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "concord: could not read stdin: Bad file descriptor"));
    free_result(&r);
}

/* Graph 2 of three admits no solution: it is reported as infeasible, its
 * posteriors block keeps its size with nan in every place, the graphs on
 * either side are solved and written where they belong, and the run exits
 * with 3. A single infeasible graph gets its block too, not an empty file. */
static void an_infeasible_graph_keeps_its_block_and_the_others_stay_aligned(void **state) {
    (void)state;
    static const char text[] = "2\n1\n0.5\n-0.5\nXOR 2 1 2\n"
                               "\n"
                               "2\n3\n1\n1\nXOR 2 1 2\nBUDGET_EXACT 2 1 2 2\nPAIR 2 1 2 1\n"
                               "\n"
                               "3\n1\n0.2\n0.1\n0.3\nATMOSTONE 3 1 2 3\n";
    char path[600], dir[512], out[600];
    snprintf(path, sizeof path, "%s/infeasible.fg", work_dir);
    assert_int_equal(write_text_file(path, text), 0);
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    run_result r;
    const char *args[] = {"solve", path, "-o", out, NULL};
    run_expect(&r, NULL, args, 3);
    assert_non_null(strstr(r.out, "graph 2: infeasible"));
    assert_non_null(strstr(r.out, "graph 3: integral"));
    assert_non_null(strstr(r.err, "graph 2: "));
    free_result(&r);
    char *posteriors = read_whole_file(out, NULL);
    assert_non_null(posteriors);
    const int nv[] = {2, 2, 3}, na[] = {0, 1, 0}, infeasible[] = {0, 1, 0};
    assert_blocks_layout(posteriors, 3, nv, na, infeasible);
    assert_string_equal(posteriors, "1\n0\n\n\nnan\nnan\n\nnan\n\n0\n0\n1\n\n\n");
    free(posteriors);

    /* JSON: one object per graph, the infeasible one with no value. */
    const char *args_json[] = {"solve", "--json", path, NULL};
    run_expect(&r, NULL, args_json, 3);
    char *lines[8];
    assert_int_equal(split_lines(r.out, lines, 8), 3);
    assert_json_summary(lines[0], 1, "integral");
    assert_json_summary(lines[2], 3, "integral");
    json_member m[32];
    int n = json_parse_object(lines[1], m, 32);
    assert_true(n > 0);
    assert_string_equal(json_get(m, n, "status")->string, "infeasible");
    assert_int_equal(json_get(m, n, "value")->kind, J_NULL);
    free_result(&r);

    /* The decoded assignments keep the same alignment. */
    const char *args_dec[] = {"solve", "--decode", "-q", path, NULL};
    run_expect(&r, NULL, args_dec, 3);
    assert_string_equal(r.out, "1\n0\n\nnan\nnan\n\n0\n0\n1\n\n");
    free_result(&r);

    /* One infeasible graph alone: its block, not an empty file. */
    snprintf(path, sizeof path, "%s/one_infeasible.fg", work_dir);
    assert_int_equal(write_text_file(path, "2\n2\n1\n1\nXOR 2 1 2\nBUDGET_EXACT 2 1 2 2\n"), 0);
    const char *args_one[] = {"solve", "-q", path, "-o", out, NULL};
    run_expect(&r, NULL, args_one, 3);
    free_result(&r);
    posteriors = read_whole_file(out, NULL);
    assert_string_equal(posteriors, "nan\nnan\n\n\n");
    free(posteriors);
}

/* A malformed graph after good ones: the output file is not written (nor a
 * temporary left), while what stdout received for the graphs before it
 * stays there, and the message names the line. */
static void a_malformed_later_graph_leaves_no_output_file(void **state) {
    (void)state;
    static const char text[] = "1\n0\n0.5\n\n2\n1\n0\n0\nPAIR 2 1 -2 0.5\n";
    char path[600], dir[512], out[600], expected[700];
    snprintf(path, sizeof path, "%s/later.fg", work_dir);
    assert_int_equal(write_text_file(path, text), 0);
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    run_result r;
    const char *args[] = {"solve", "--json", path, "-o", out, NULL};
    run_expect(&r, NULL, args, 3);
    snprintf(expected, sizeof expected, "%s:9: ", path);
    assert_non_null(strstr(r.err, expected));
    char *lines[4];
    assert_int_equal(split_lines(r.out, lines, 4), 1); /* graph 1 was solved and printed */
    assert_json_summary(lines[0], 1, "integral");
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 0);
}

/* SIGTERM or SIGINT while a graph is being solved: the process ends by
 * that signal, and neither the output nor its temporary is left. */
static void a_signal_during_a_solve_leaves_no_temporary_file(void **state) {
    (void)state;
    /* 1500 copies of the coreference graph: most of a second of solving,
     * far more than needed */
    char path[600];
    snprintf(path, sizeof path, "%s/many_coref.fg", work_dir);
    size_t size;
    char *coref = read_whole_file_or_fail(FG_SLOW, &size);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (int k = 0; k < 1500; ++k) {
        fwrite(coref, 1, size, fp);
        fputc('\n', fp);
    }
    assert_int_equal(fclose(fp), 0);
    free(coref);
    static const int signals[] = {SIGTERM, SIGINT};
    for (size_t k = 0; k < 2; ++k) {
        char dir[512], out[600], out_path[600];
        fresh_dir(dir, sizeof dir);
        snprintf(out, sizeof out, "%s/post.txt", dir);
        snprintf(out_path, sizeof out_path, "%s/stdout.txt", work_dir);
        const char *argv[] = {CLI_BINARY, "solve", "-q", path, "-o", out, NULL};
        int pid = start_program(argv, NULL, out_path, out_path, 0);
        /* wait for the temporary output to appear, i.e. for solving to start */
        int seen = 0;
        struct timespec pause = {0, 2000000L};
        for (int waited = 0; waited < 5000 && !seen; ++waited) {
            seen = dir_entries(dir, NULL, 0) > 0;
            if (!seen) nanosleep(&pause, NULL);
        }
        assert_true(seen);
        assert_int_equal(kill(pid, signals[k]), 0);
        int status = wait_program(pid, CLI_BINARY, 60);
        assert_int_equal(status, 128 + signals[k]);
        char name[256] = "";
        if (dir_entries(dir, name, sizeof name) != 0) fail_msg("left behind: %s", name);
    }
}

/* The graphs of a file are read, solved and written one at a time: 300 000
 * empty graphs (1.5 MB) run in 64 MB of address space, which holding them
 * all (0.6 GB) did not; and a 21-byte UAI model declaring a variable of
 * 10^8 states is refused at its line instead of taking gigabytes. */
static void large_inputs_run_in_memory_proportional_to_them(void **state) {
    (void)state;
    enum { COUNT = 300000 };
    char path[600], dir[512], out[600];
    snprintf(path, sizeof path, "%s/empty_graphs.fg", work_dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    for (int k = 0; k < COUNT; ++k) fputs("0\n0\n\n", fp);
    assert_int_equal(fclose(fp), 0);
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/post.txt", dir);
    run_result r;
    const char *args[] = {"solve", "-q", path, "-o", out, NULL};
    run_cli_with(&r, NULL, args, NULL, 64);
    if (r.status != 0) fail_msg("exit %d: %s", r.status, r.err);
    free_result(&r);
    size_t size = 0;
    char *text = read_whole_file(out, &size);
    assert_non_null(text);
    assert_int_equal(size, 2 * (size_t)COUNT); /* a blank line per block */
    free(text);

    char model[600];
    snprintf(model, sizeof model, "%s/huge_states.uai", work_dir);
    assert_int_equal(write_text_file(model, "MARKOV\n1\n100000000\n0\n"), 0);
    const char *args_uai[] = {"solve", model, "-o", out, NULL};
    run_cli_with(&r, NULL, args_uai, NULL, 64);
    assert_int_equal(r.status, 3);
    char expected[700];
    snprintf(expected, sizeof expected, "%s:3: variable 0 has 100000000 states", model);
    if (!strstr(r.err, expected)) fail_msg("stderr lacks '%s': %s", expected, r.err);
    free_result(&r);
}

/* A directory on stdin is bad input (exit 3), with the reason; input that
 * does not fit in memory is out of memory (exit 5) on stdin as in a file,
 * and said so: 80 MB (a sparse file) in 64 MB of address space. */
static void stdin_says_why_it_could_not_be_read(void **state) {
    (void)state;
    run_result r;
    const char *from_stdin[] = {"solve", "-", NULL};
    run_cli_with(&r, work_dir, from_stdin, NULL, 0);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "concord: could not read stdin: Is a directory"));
    free_result(&r);
    char path[600];
    snprintf(path, sizeof path, "%s/sparse.fg", work_dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(ftruncate(fileno(fp), 80 << 20), 0);
    assert_int_equal(fclose(fp), 0);
    const char *from_file[] = {"solve", path, NULL};
    run_cli_with(&r, NULL, from_file, NULL, 64);
    assert_int_equal(r.status, 5);
    assert_non_null(strstr(r.err, ": out of memory"));
    free_result(&r);
    run_cli_with(&r, path, from_stdin, NULL, 64);
    assert_int_equal(r.status, 5);
    assert_non_null(strstr(r.err, "concord: could not read stdin: out of memory"));
    free_result(&r);
    assert_int_equal(remove(path), 0);
}

/* --decode prints the decoded assignment (one 0/1 per variable, a blank
 * line per graph), on stdout or in --decode-output's file, and in JSON as
 * "assignment". The three graphs' MAP assignments, by hand: (1, 0); (1, 1,
 * 1) worth 0.5; (1, 0, 1, 1) worth 1.1. */
static void decode_prints_the_decoded_assignment(void **state) {
    (void)state;
    static const char expected[] = "1\n0\n\n1\n1\n1\n\n1\n0\n1\n1\n\n";
    run_result r;
    const char *args[] = {"solve", "--decode", three_path, NULL};
    run_expect(&r, NULL, args, 0);
    assert_string_equal(r.out, expected);
    assert_non_null(strstr(r.err, "graph 3: integral, value 1.1, upper bound 1.1"));
    assert_non_null(strstr(r.err, "decoded value 1.1 (gap 0)"));
    free_result(&r);

    char dir[512], out[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/decoded.txt", dir);
    const char *args_file[] = {"solve", "-q", three_path, "--decode-output", out, NULL};
    run_expect(&r, NULL, args_file, 0);
    assert_posteriors_layout(r.out, 3, three_vars, three_adds); /* posteriors on stdout */
    free_result(&r);
    char *text = read_whole_file(out, NULL);
    assert_non_null(text);
    assert_string_equal(text, expected);
    free(text);

    const char *args_json[] = {"solve", "--json", "--decode", three_path, NULL};
    run_expect(&r, NULL, args_json, 0);
    char *lines[4];
    assert_int_equal(split_lines(r.out, lines, 4), 3);
    assert_non_null(strstr(lines[1], "\"assignment\":[1,1,1]"));
    assert_non_null(strstr(lines[2], "\"assignment\":[1,0,1,1]"));
    free_result(&r);
}

/* An exact search stopped by its time limit before any solution (1 ns)
 * has nothing to decode: status time_limit and exit 4 as for any limit,
 * the decoded block holds nan, JSON says null, and a UAI result file,
 * which cannot say "none", is not written. */
static void a_search_stopped_before_any_solution_decodes_nothing(void **state) {
    (void)state;
    run_result r;
    const char *args[] = {"solve", FG_SLOW, "--algorithm", "exact", "--time-limit", "1e-9",
                          "--decode", NULL};
    run_expect(&r, NULL, args, 4);
    assert_non_null(strstr(r.err, "time_limit"));
    assert_non_null(strstr(r.err, "no solution"));
    assert_true(strncmp(r.out, "nan\nnan\n", 8) == 0);
    free_result(&r);
    const char *args_json[] = {"solve", FG_SLOW, "--algorithm", "exact", "--time-limit", "1e-9",
                               "--decode", "--json", NULL};
    run_expect(&r, NULL, args_json, 4);
    assert_non_null(strstr(r.out, "\"status\":\"time_limit\""));
    assert_non_null(strstr(r.out, "\"map_value\":null"));
    assert_non_null(strstr(r.out, "\"assignment\":null"));
    free_result(&r);
    char dir[512], map[600];
    fresh_dir(dir, sizeof dir);
    snprintf(map, sizeof map, "%s/grid.MAP", dir);
    const char *args_uai[] = {"solve", "-q", UAI_GRID, "--algorithm", "exact", "--time-limit",
                              "1e-9", "--uai-map", map, NULL};
    run_expect(&r, NULL, args_uai, 4);
    assert_true(strncmp(r.out, "nan nan\n", 8) == 0);
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 0);
}

/* A UAI result file cannot mark an assignment of probability zero: for a
 * model whose constraints no assignment meets (three variables that must
 * pairwise differ), LP-MAP's relaxation is solved (a fractional point,
 * exit 0), its decoded assignment violates a factor, and the result file
 * is not written, with a warning that says why. */
static void a_decoding_of_probability_zero_writes_no_uai_result_file(void **state) {
    (void)state;
    char model[600], dir[512], map[600];
    snprintf(model, sizeof model, "%s/odd_cycle.uai", work_dir);
    assert_int_equal(write_text_file(model, "MARKOV\n3\n2 2 2\n3\n2 0 1\n2 1 2\n2 0 2\n"
                                            "4\n0 1 1 0\n4\n0 1 1 0\n4\n0 1 1 0\n"),
                     0);
    fresh_dir(dir, sizeof dir);
    snprintf(map, sizeof map, "%s/odd_cycle.MAP", dir);
    run_result r;
    const char *args[] = {"solve", "-q", model, "--uai-map", map, NULL};
    run_expect(&r, NULL, args, 0);
    assert_string_equal(r.out, "0.5 0.5\n0.5 0.5\n0.5 0.5\n\n"); /* a blank line ends a graph */
    assert_non_null(strstr(r.err, "the decoded assignment has probability zero"));
    assert_non_null(strstr(r.err, "the result file is not written"));
    free_result(&r);
    assert_int_equal(dir_entries(dir, NULL, 0), 0);
    /* nor is it printed on stdout (it was, a "MAP" that violates a factor) */
    const char *printed[] = {"solve", model, "--decode", NULL};
    run_expect(&r, NULL, printed, 0);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "no result is printed"));
    free_result(&r);
}

/* The format comes from the extension whatever its case. */
static void an_upper_case_uai_extension_reads_uai(void **state) {
    (void)state;
    char model[600];
    snprintf(model, sizeof model, "%s/GRID.UAI", work_dir);
    char *text = read_whole_file(UAI_GRID, NULL);
    assert_non_null(text);
    assert_int_equal(write_text_file(model, text), 0);
    free(text);
    run_result r, expected;
    const char *args[] = {"solve", "-q", model, NULL};
    const char *args_lower[] = {"solve", "-q", UAI_GRID, NULL};
    run_expect(&r, NULL, args, 0);
    run_expect(&expected, NULL, args_lower, 0);
    assert_string_equal(r.out, expected.out);
    free_result(&r);
    free_result(&expected);
}

/* UAI posteriors: one line per model variable with one value per state of
 * its cardinality, in the model's numbering; a state the evidence or a zero
 * potential removed is there with 0. Here evidence fixes variable 0 (3
 * states) to state 2 and a zero removes state 0 of variable 1 (2 states),
 * so the solution is known exactly. */
static void uai_posteriors_have_a_line_per_model_variable(void **state) {
    (void)state;
    char model[600], evidence[600];
    snprintf(model, sizeof model, "%s/small.uai", work_dir);
    snprintf(evidence, sizeof evidence, "%s/small.uai.evid", work_dir);
    assert_int_equal(write_text_file(model, "MARKOV\n2\n3 2\n2\n1 1\n2 0 1\n"
                                            "2\n0 1\n6\n1 2 3 4 5 6\n"),
                     0);
    assert_int_equal(write_text_file(evidence, "1 0 2\n"), 0);
    run_result r;
    const char *args[] = {"solve", "-q", model, "--evid", evidence, NULL};
    run_expect(&r, NULL, args, 0);
    assert_string_equal(r.out, "0 0 1\n0 1\n\n");
    free_result(&r);
    const char *args_map[] = {"solve", "-q", model, "--evid", evidence, "--decode", NULL};
    run_expect(&r, NULL, args_map, 0);
    assert_string_equal(r.out, "MAP\n2 2 1\n");
    free_result(&r);
    /* of two evidence files one would be ignored: refused */
    const char *args_twice[] = {"solve", "-q", model, "--evid", evidence, "--evid", evidence, NULL};
    run_expect(&r, NULL, args_twice, 2);
    assert_non_null(strstr(r.err, "already read from"));
    free_result(&r);
}

/* Every flag that takes a value takes it after '=' too; messages name the
 * flag as typed; --tol must lie strictly between 0 and 1. */
static void flags_take_values_after_equals_and_messages_name_them(void **state) {
    (void)state;
    char dir[512], out[600], value[700], evidence[600];
    fresh_dir(dir, sizeof dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(evidence, sizeof evidence, "%s/empty.evid", work_dir);
    assert_int_equal(write_text_file(evidence, "0\n"), 0);
    static const char *const with_values[][2] = {
        {"--format", "fg"},  {"--algorithm", "sparse"}, {"--max-iter", "50"},
        {"--tol", "1e-4"},   {"--eta", "0.5"},          {"--relaxation", "1.5"},
        {"--accelerate", "3"}, {"--output", "OUT"},     {"--decode-output", "OUT"},
        {"--evid", "EVID"},  {"--uai-map", "OUT"},      {"-o", "OUT"},
        {"--node-limit", "9223372036854775807"},
    };
    for (size_t k = 0; k < sizeof with_values / sizeof with_values[0]; ++k) {
        const char *v = with_values[k][1];
        snprintf(value, sizeof value, "%s=%s", with_values[k][0],
                 !strcmp(v, "OUT") ? out : !strcmp(v, "EVID") ? evidence : v);
        int uai = !strcmp(v, "EVID") || !strcmp(with_values[k][0], "--uai-map");
        const char *args[] = {"solve", "-q", value, uai ? UAI_GRID : three_path, NULL};
        run_result r;
        run_cli(&r, NULL, args);
        if (r.status != 0) fail_msg("'concord solve %s': exit %d: %s", value, r.status, r.err);
        free_result(&r);
    }
    static const struct {
        const char *arg, *value, *message;
    } bad[] = {
        {"--tol=0", NULL, "--tol must be in (0, 1), not '0'"},
        {"--tol", "1", "--tol must be in (0, 1), not '1'"},
        {"--tol", "1.5", "--tol must be in (0, 1), not '1.5'"},
        {"--time-limit", "0", "--time-limit must be greater than 0, not '0'"},
        {"--psdd-eta", "1e-13", "--psdd-eta must be at least 1e-12, not '1e-13'"},
        {"--exact-gap", "1", "--exact-gap must be in [0, 1), not '1'"},
        {"--eta=-1", NULL, "--eta must be in [0.0001, 10000]"},
        {"--eta", "1e5", "--eta must be in [0.0001, 10000]"},
        {"--relaxation=2", NULL, "--relaxation must be in [1, 2)"},
        {"--max-iter=0", NULL, "--max-iter expects a positive integer"},
        {"--max-iter", "2147483648", "--max-iter expects a positive integer (at most 2147483647)"},
        {"--node-limit", "9223372036854775808", "--node-limit expects a positive integer"},
        {"--accelerate=17", NULL, "--accelerate expects an integer in [0, 16]"},
        {"--output=", NULL, "--output needs a path"},
        {"-o", "", "-o needs a path"},
        {"--json=yes", NULL, "--json takes no value"},
        {"--tol=abc", NULL, "--tol expects a number, not 'abc'"},
        /* a number strtod cannot hold (ERANGE) is out of range, with the flag's range */
        {"--tol", "1e-400", "--tol: '1e-400' is out of range (outside a double's normal "
                            "range, 2.2e-308 to 1.8e+308 in magnitude); --tol must be in (0, 1)"},
        {"--tol=1e-310", NULL, "--tol: '1e-310' is out of range"},
        {"--eta", "-1e999", "--eta: '-1e999' is out of range (outside a double's normal "
                            "range, 2.2e-308 to 1.8e+308 in magnitude); --eta must be in "
                            "[0.0001, 10000]"},
        {"--time-limit=1e400", NULL, "--time-limit must be greater than 0"},
        {"--exact-gap", "1e-999", "--exact-gap must be in [0, 1)"},
        /* numbers are decimal: strtod's and strtoll's hexadecimal forms are refused */
        {"--tol", "0x1p-10", "--tol expects a decimal number, not hexadecimal '0x1p-10'"},
        {"--time-limit=-0X10", NULL,
         "--time-limit expects a decimal number, not hexadecimal '-0X10'"},
        {"--eta", "0x.2", "--eta expects a decimal number, not hexadecimal '0x.2'"},
        {"--eta", " 0.2", "--eta expects a number, not ' 0.2'"},
        {"--max-iter", "0x10", "--max-iter expects a decimal integer, not hexadecimal '0x10'"},
        {"--accelerate=0X3", NULL,
         "--accelerate expects a decimal integer, not hexadecimal '0X3'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; ++k) {
        const char *args[] = {"solve", bad[k].arg, three_path, NULL, NULL};
        if (bad[k].value) args[2] = bad[k].value, args[3] = three_path;
        run_result r;
        run_cli(&r, NULL, args);
        if (r.status != 2 || !strstr(r.err, bad[k].message))
            fail_msg("'concord solve %s %s': exit %d, stderr '%s' (expected 2 and '%s')",
                     bad[k].arg, bad[k].value ? bad[k].value : "", r.status, r.err,
                     bad[k].message);
        free_result(&r);
    }
}

/* The summary says "1 iteration" (graph 1 of three_path, a single
 * factor, is solved in one). */
static void the_summary_reads_right(void **state) {
    (void)state;
    run_result r;
    const char *args[] = {"solve", three_path, "-o", "/dev/null", NULL};
    run_expect(&r, NULL, args, 0);
    assert_non_null(strstr(r.out, "graph 1: "));
    assert_non_null(strstr(r.out, ", 1 iteration, "));
    free_result(&r);
    /* exact MAP stopped before its root's LP: no solution, said so in
     * place of the value, which JSON has as null (not a -inf beside it) */
    const char *stopped[] = {"solve", "--algorithm", "exact", "--time-limit", "1e-300",
                             FG_SLOW, "-o", "/dev/null", NULL};
    run_expect(&r, NULL, stopped, 4);
    assert_non_null(strstr(r.out, "graph 1: time_limit, no solution found, upper bound "));
    assert_null(strstr(r.out, "inf"));
    assert_null(strstr(r.out, "value"));
    free_result(&r);
    const char *stopped_json[] = {"solve", "--algorithm", "exact", "--time-limit", "1e-300",
                                  FG_SLOW, "--json", NULL};
    run_expect(&r, NULL, stopped_json, 4);
    assert_json_without_value(r.out, "time_limit");
    free_result(&r);
    /* MPLP on three variables that must pairwise differ by XORs (no
     * assignment allows them all) returns an assignment that violates a
     * factor: JSON's value is null, and the summary says so in words */
    char triangle[600];
    snprintf(triangle, sizeof triangle, "%s/triangle.fg", work_dir);
    assert_int_equal(
        write_text_file(triangle, "3\n3\n0\n0\n0\nXOR 2 1 2\nXOR 2 2 3\nXOR 2 1 3\n"), 0);
    const char *mplp[] = {"solve", "--algorithm", "mplp", triangle, "-o", "/dev/null", NULL};
    run_expect(&r, NULL, mplp, 4);
    assert_non_null(strstr(r.out, "graph 1: stalled, no allowed solution found (the one "
                                  "returned violates a factor), upper bound 0, "));
    assert_null(strstr(r.out, "inf"));
    free_result(&r);
    const char *mplp_json[] = {"solve", "--algorithm", "mplp", triangle, "--json", NULL};
    run_expect(&r, NULL, mplp_json, 4);
    assert_json_without_value(r.out, "stalled");
    free_result(&r);
}

/* The summary never shows a value above the upper bound or a negative
 * gap that round-off alone gives (on AD3's parsing_excerpt.fg the value is
 * 4e-12 above the bound; the repository's transitivity.fg can come out a
 * few 1e-14 above), while the JSON keeps the raw numbers. */
static void the_summary_keeps_the_bound_above_the_value_on(const char *path) {
    run_result r;
    /* with --decode-output, the summary goes to stdout */
    const char *args2[] = {"solve", "--decode-output", "/dev/null", path, "-o", "/dev/null", NULL};
    run_expect(&r, NULL, args2, 0);
    double value, bound, decoded, gap;
    const char *p = strstr(r.out, "value ");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "value %lf, upper bound %lf", &value, &bound), 2);
    p = strstr(r.out, "decoded value ");
    assert_non_null(p);
    assert_int_equal(sscanf(p, "decoded value %lf (gap %lf)", &decoded, &gap), 2);
    assert_true(bound >= value);
    assert_true(bound >= decoded);
    assert_true(gap >= 0.0);
    assert_null(strstr(r.out, "gap -"));
    free_result(&r);

    const char *args_json[] = {"solve", "--json", "--decode", path, NULL};
    run_expect(&r, NULL, args_json, 0);
    json_member m[32];
    int n = json_parse_object(r.out, m, 32);
    assert_true(n > 0);
    double ub = json_get(m, n, "upper_bound")->number, mv = json_get(m, n, "map_value")->number;
    assert_true(json_get(m, n, "gap")->number == ub - mv); /* raw, whatever its sign */
    free_result(&r);
}

static void the_summary_keeps_the_bound_above_the_value(void **state) {
    (void)state;
    the_summary_keeps_the_bound_above_the_value_on(FG_SLOW);
}

static void the_summary_keeps_the_bound_above_the_value_on_parsing_excerpt(void **state) {
    (void)state;
    const char *path = shared_data_path_or_skip("ad3/parsing_excerpt.fg");
    the_summary_keeps_the_bound_above_the_value_on(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_good_file_exits_0_and_writes_posteriors),
        cmocka_unit_test(usage_errors_exit_2_with_a_message_and_write_nothing),
        cmocka_unit_test(out_of_range_option_values_are_usage_errors),
        cmocka_unit_test(a_flag_the_algorithm_does_not_use_is_ignored_with_a_warning),
        cmocka_unit_test(an_output_that_is_stdout_or_stderr_is_a_usage_error),
        cmocka_unit_test(an_output_that_is_stdouts_file_is_written_through_stdout),
        cmocka_unit_test(an_output_that_is_an_input_is_a_usage_error),
        cmocka_unit_test(bad_input_exits_3_names_file_and_line_and_leaves_no_output),
        cmocka_unit_test(not_converged_exits_4_and_still_writes_posteriors),
        cmocka_unit_test(json_prints_one_object_per_graph_and_posteriors_keep_the_layout),
        cmocka_unit_test(stdin_dash_reads_the_input_like_a_file),
        cmocka_unit_test(a_double_dash_ends_the_options),
        cmocka_unit_test(an_unwritable_output_path_exits_5),
        cmocka_unit_test(a_link_or_a_device_as_output_is_written_through_in_place),
        cmocka_unit_test(a_link_to_nothing_yet_gets_its_target_only_when_the_run_succeeds),
        cmocka_unit_test(help_exits_0_and_documents_every_accepted_flag),
        cmocka_unit_test(a_rewritten_output_keeps_its_mode_and_owner),
        cmocka_unit_test(an_output_rewritten_by_another_user_keeps_what_it_can),
        cmocka_unit_test(a_write_to_a_full_device_exits_5),
        cmocka_unit_test(a_closed_standard_stream_never_writes_into_an_output_file),
        cmocka_unit_test(an_infeasible_graph_keeps_its_block_and_the_others_stay_aligned),
        cmocka_unit_test(a_malformed_later_graph_leaves_no_output_file),
        cmocka_unit_test(a_signal_during_a_solve_leaves_no_temporary_file),
        cmocka_unit_test(large_inputs_run_in_memory_proportional_to_them),
        cmocka_unit_test(stdin_says_why_it_could_not_be_read),
        cmocka_unit_test(decode_prints_the_decoded_assignment),
        cmocka_unit_test(a_search_stopped_before_any_solution_decodes_nothing),
        cmocka_unit_test(a_decoding_of_probability_zero_writes_no_uai_result_file),
        cmocka_unit_test(an_upper_case_uai_extension_reads_uai),
        cmocka_unit_test(uai_posteriors_have_a_line_per_model_variable),
        cmocka_unit_test(flags_take_values_after_equals_and_messages_name_them),
        cmocka_unit_test(the_summary_reads_right),
        cmocka_unit_test(the_summary_keeps_the_bound_above_the_value),
        cmocka_unit_test(the_summary_keeps_the_bound_above_the_value_on_parsing_excerpt),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
