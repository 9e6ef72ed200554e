/*
 * Writes the structured graphs of bench/gen/structured_gen.h as .fg files:
 * one graph of either shape on stdout, or the whole benchmark suite into a
 * folder (see usage below).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "structured_gen.h"

static const char usage[] =
    "usage: gen_structured parsing SEED N K       > FILE.fg\n"
    "       gen_structured sequences SEED M L S   > FILE.fg\n"
    "       gen_structured suite DIR\n"
    "       gen_structured --help\n"
    "\n"
    "Writes seeded random factor graphs in AD3's .fg format; the same SEED\n"
    "and sizes always give the same file.\n"
    "\n"
    "  parsing     second-order dependency parsing over N words (1 to 10000):\n"
    "              a random gold tree, K candidate heads per word (the gold\n"
    "              head and the nearest other positions; at most N), one\n"
    "              variable per candidate arc scored N(0,1) plus 1 on gold\n"
    "              arcs, one ARBORESCENCE, the root's two HEAD_AUTOMATONs and\n"
    "              two GRANDPARENT_HEAD_AUTOMATONs per word (2N+3 factors;\n"
    "              sibling and grandparent scores N(0,0.3^2))\n"
    "  sequences   M >= 2 sequences of length L >= 1 over S >= 2 states, one\n"
    "              variable per (sequence, position, state) scored N(0,1):\n"
    "              a SEQUENCE per sequence (transition scores N(0,0.5^2)),\n"
    "              M*L ATMOSTONE couplings of one state at two positions of\n"
    "              two sequences, and per sequence a BUDGET (one state at\n"
    "              most twice) and an OR (another state at least once);\n"
    "              M*L*S at most 10000000\n"
    "  suite       the benchmark suite of bench_structured, 26 parsing and 20\n"
    "              sequence graphs, into DIR (which must exist), one file per\n"
    "              graph named after its shape, sizes and seed, e.g.\n"
    "              parsing_n050_K5_seed15.fg, sequences_M04_L30_S20_seed34.fg\n"
    "\n"
    "Exit status: 0 on success, 1 on a write error, 2 on bad arguments.\n";

/* The integer in text, or -1 when it is not a non-negative int. */
static long long parse_count(const char *text, long long max) {
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10);
    if (errno || end == text || *end || value < 0 || value > max) return -1;
    return value;
}

static int bad_usage(void) {
    fputs(usage, stderr);
    return 2;
}

static int write_suite(const char *dir) {
    for (int k = 0; k < gen_suite_count; ++k) {
        char name[128], path[4096];
        gen_name(&gen_suite[k], name, sizeof name);
        snprintf(path, sizeof path, "%s/%s.fg", dir, name);
        FILE *out = fopen(path, "w");
        if (!out) {
            fprintf(stderr, "gen_structured: cannot write %s: %s\n", path, strerror(errno));
            return 1;
        }
        int failed = gen_write_fg(out, &gen_suite[k]) != 0;
        failed |= fclose(out) != 0;
        if (failed) {
            fprintf(stderr, "gen_structured: cannot write %s\n", path);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "suite") == 0) return write_suite(argv[2]);
    gen_spec spec = {0};
    int n_sizes;
    if (argc == 5 && strcmp(argv[1], "parsing") == 0) {
        spec.shape = GEN_PARSING;
        n_sizes = 2;
    } else if (argc == 6 && strcmp(argv[1], "sequences") == 0) {
        spec.shape = GEN_SEQUENCES;
        n_sizes = 3;
    } else {
        return bad_usage();
    }
    char *end;
    errno = 0;
    spec.seed = strtoull(argv[2], &end, 10);
    if (errno || end == argv[2] || *end || argv[2][0] == '-') return bad_usage();
    for (int k = 0; k < n_sizes; ++k) {
        long long size = parse_count(argv[3 + k], INT_MAX);
        if (size < 0) return bad_usage();
        spec.size[k] = (int)size;
    }
    if (gen_write_fg(stdout, &spec) != 0) {
        if (ferror(stdout)) {
            fputs("gen_structured: write error\n", stderr);
            return 1;
        }
        return bad_usage();
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
