/*
 * The structured graph generators of structured_gen.h.
 */
#include "structured_gen.h"

#include <math.h>
#include <stdlib.h>

/* splitmix64: the generators' only source of randomness. */
typedef struct gen_rng {
    uint64_t state;
} gen_rng;

static uint64_t rng_next(gen_rng *r) {
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, n), n >= 1 and below 2^32. */
static int rng_below(gen_rng *r, int n) {
    return (int)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Normal with the given standard deviation (Box-Muller, one draw per two
 * uniforms; the first uniform is in (0, 1] so its log is finite). */
static double rng_normal(gen_rng *r, double sd) {
    double u1 = ((double)(rng_next(r) >> 11) + 1.0) / 9007199254740992.0;
    double u2 = (double)(rng_next(r) >> 11) / 9007199254740992.0;
    return sd * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void write_normals(FILE *out, gen_rng *r, int count, double sd) {
    for (int k = 0; k < count; ++k) fprintf(out, " %.9g", rng_normal(r, sd));
}

static void write_vars(FILE *out, const int *vars, int count) {
    for (int k = 0; k < count; ++k) fprintf(out, " %d", vars[k]);
}

/* ---- shape A: dependency parsing ---- */

/* The parsing graph's arcs: (head, mod) sorted by head then modifier, the
 * variable of arc k being k + 1; `incoming` lists each word's incoming
 * arcs' variables in order of head (`per_word` of them per word). */
typedef struct parse_arcs {
    int count, per_word;
    int *head, *mod;
    unsigned char *gold; /* 1 on the gold tree's arcs */
    int *first_out; /* arcs first_out[h] .. first_out[h+1]-1 leave h */
    int *incoming;  /* word m's: incoming[(m-1)*per_word ...] */
} parse_arcs;

/* The gold tree: gold[m] is word m's head (gold[0] unused). */
static void draw_gold_tree(gen_rng *r, int n, int *gold, int *order) {
    for (int m = 1; m <= n; ++m) order[m - 1] = m;
    for (int k = n - 1; k > 0; --k) {
        int j = rng_below(r, k + 1), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    /* order[0..k) are attached once word order[k] is placed; the root too */
    for (int k = 0; k < n; ++k) {
        int pick = rng_below(r, k + 1);
        gold[order[k]] = pick == k ? 0 : order[pick];
    }
}

/* Word m's candidate heads (per_word of them) into heads: the gold head,
 * then the nearest other positions, a coin deciding ties. */
static void candidate_heads(gen_rng *r, int n, int m, int gold_head, int per_word, int *heads) {
    int count = 0;
    heads[count++] = gold_head;
    for (int d = 1; count < per_word; ++d) {
        int at[2] = {m - d, m + d};
        if (rng_below(r, 2)) {
            at[0] = m + d;
            at[1] = m - d;
        }
        for (int k = 0; k < 2 && count < per_word; ++k)
            if (at[k] >= 0 && at[k] <= n && at[k] != gold_head) heads[count++] = at[k];
    }
}

static void parse_arcs_free(parse_arcs *a) {
    free(a->head);
    free(a->mod);
    free(a->gold);
    free(a->first_out);
    free(a->incoming);
}

/* Draws the gold tree and the candidate arcs; -1 when out of memory. */
static int parse_arcs_draw(gen_rng *r, int n, int K, parse_arcs *a) {
    a->per_word = K < n ? K : n;
    a->count = n * a->per_word;
    a->head = malloc((size_t)a->count * sizeof(int));
    a->mod = malloc((size_t)a->count * sizeof(int));
    a->gold = malloc((size_t)a->count);
    a->first_out = calloc((size_t)n + 2, sizeof(int));
    a->incoming = malloc((size_t)a->count * sizeof(int));
    int *gold = malloc(((size_t)n + 1) * sizeof(int));
    int *order = malloc((size_t)n * sizeof(int));
    int *heads = malloc((size_t)a->count * sizeof(int)); /* word m's at (m-1)*per_word */
    int *filled = calloc((size_t)n + 1, sizeof(int));
    int ok = a->head && a->mod && a->gold && a->first_out && a->incoming && gold && order && heads && filled;
    if (ok) {
        draw_gold_tree(r, n, gold, order);
        for (int m = 1; m <= n; ++m)
            candidate_heads(r, n, m, gold[m], a->per_word, heads + (m - 1) * a->per_word);
        /* counting sort by head, modifiers in increasing order within it */
        for (int k = 0; k < a->count; ++k) a->first_out[heads[k] + 1]++;
        for (int h = 0; h <= n; ++h) a->first_out[h + 1] += a->first_out[h];
        for (int m = 1; m <= n; ++m)
            for (int j = 0; j < a->per_word; ++j) {
                int h = heads[(m - 1) * a->per_word + j];
                int k = a->first_out[h] + filled[h]++;
                a->head[k] = h;
                a->mod[k] = m;
                a->gold[k] = j == 0;
            }
        for (int m = 0; m <= n; ++m) filled[m] = 0;
        for (int k = 0; k < a->count; ++k) {
            int m = a->mod[k];
            a->incoming[(m - 1) * a->per_word + filled[m]++] = k + 1;
        }
    }
    free(gold);
    free(order);
    free(heads);
    free(filled);
    if (!ok) parse_arcs_free(a);
    return ok ? 0 : -1;
}

/* A (grandparent) head automaton line: the grandparent links (none for a
 * plain HEAD_AUTOMATON), then the modifier links of head h on one side
 * (side -1: left, +1: right), nearest first, then its scores. */
static void write_automaton(FILE *out, gen_rng *r, const parse_arcs *a, int h, int side,
                            const int *grandparents, int n_grandparents) {
    int first = a->first_out[h], end = a->first_out[h + 1], n_mods = 0;
    for (int k = first; k < end; ++k) n_mods += (a->mod[k] - h) * side > 0;
    fprintf(out, "%s %d", n_grandparents ? "GRANDPARENT_HEAD_AUTOMATON" : "HEAD_AUTOMATON",
            n_grandparents + n_mods);
    write_vars(out, grandparents, n_grandparents);
    if (side > 0) {
        for (int k = first; k < end; ++k)
            if (a->mod[k] > h) fprintf(out, " %d", k + 1);
    } else {
        for (int k = end - 1; k >= first; --k)
            if (a->mod[k] < h) fprintf(out, " %d", k + 1);
    }
    if (n_grandparents) {
        fprintf(out, " %d", n_grandparents);
        write_normals(out, r, n_grandparents * n_mods, 0.3);
    }
    write_normals(out, r, (n_mods + 1) * (n_mods + 2) / 2, 0.3);
    fputc('\n', out);
}

int gen_parsing_fg(FILE *out, uint64_t seed, int n, int K) {
    if (!out || n < 1 || n > GEN_PARSING_MAX_WORDS || K < 1) return -1;
    gen_rng r = {seed};
    parse_arcs a;
    if (parse_arcs_draw(&r, n, K, &a) != 0) return -1;
    fprintf(out, "%d\n%d\n", a.count, 2 * n + 3);
    for (int k = 0; k < a.count; ++k) fprintf(out, "%.9g\n", rng_normal(&r, 1.0) + a.gold[k]);
    fprintf(out, "ARBORESCENCE %d", a.count);
    for (int k = 0; k < a.count; ++k) fprintf(out, " %d", k + 1);
    fprintf(out, " %d", n + 1);
    for (int k = 0; k < a.count; ++k) fprintf(out, " %d %d", a.head[k], a.mod[k]);
    fputc('\n', out);
    write_automaton(out, &r, &a, 0, -1, NULL, 0);
    write_automaton(out, &r, &a, 0, +1, NULL, 0);
    for (int h = 1; h <= n; ++h) {
        const int *grandparents = a.incoming + (h - 1) * a.per_word;
        write_automaton(out, &r, &a, h, -1, grandparents, a.per_word);
        write_automaton(out, &r, &a, h, +1, grandparents, a.per_word);
    }
    parse_arcs_free(&a);
    return ferror(out) ? -1 : 0;
}

/* ---- shape B: coupled sequences ---- */

/* Variable (1-based) of sequence k, position p, state s. */
static int sequence_var(int L, int S, int k, int p, int s) {
    return (k * L + p) * S + s + 1;
}

int gen_sequences_fg(FILE *out, uint64_t seed, int M, int L, int S) {
    if (!out || M < 2 || L < 1 || S < 2 ||
        (int64_t)M * L * S > GEN_SEQUENCES_MAX_VARIABLES)
        return -1;
    gen_rng r = {seed};
    int n_vars = M * L * S;
    int *budget_state = malloc((size_t)M * sizeof(int));
    int *or_state = malloc((size_t)M * sizeof(int));
    int *hidden = malloc((size_t)M * L * sizeof(int)); /* the feasible labelling */
    int *vars = malloc((size_t)(L > 2 ? L : 2) * sizeof(int));
    if (!budget_state || !or_state || !hidden || !vars) {
        free(budget_state);
        free(or_state);
        free(hidden);
        free(vars);
        return -1;
    }
    for (int k = 0; k < M; ++k) {
        budget_state[k] = rng_below(&r, S);
        or_state[k] = rng_below(&r, S - 1);
        or_state[k] += or_state[k] >= budget_state[k];
        for (int p = 0; p < L; ++p) {
            int s = rng_below(&r, S - 1);
            hidden[k * L + p] = s + (s >= budget_state[k]);
        }
        hidden[k * L + rng_below(&r, L)] = or_state[k];
    }

    fprintf(out, "%d\n%d\n", n_vars, M + M * L + 2 * M);
    for (int v = 0; v < n_vars; ++v) fprintf(out, "%.9g\n", rng_normal(&r, 1.0));
    for (int k = 0; k < M; ++k) {
        fprintf(out, "SEQUENCE %d", L * S);
        for (int v = 1; v <= L * S; ++v) fprintf(out, " %d", sequence_var(L, S, k, 0, 0) + v - 1);
        fprintf(out, " %d", L);
        for (int p = 0; p < L; ++p) fprintf(out, " %d", S);
        write_normals(out, &r, S + (L - 1) * S * S + S, 0.5);
        fputc('\n', out);
    }
    for (int c = 0; c < M * L; ++c) {
        int a = rng_below(&r, M), b = rng_below(&r, M - 1);
        b += b >= a;
        int p = rng_below(&r, L), q = rng_below(&r, L), s;
        do s = rng_below(&r, S);
        while (hidden[a * L + p] == s && hidden[b * L + q] == s);
        fprintf(out, "ATMOSTONE 2 %d %d\n", sequence_var(L, S, a, p, s),
                sequence_var(L, S, b, q, s));
    }
    for (int k = 0; k < M; ++k) {
        for (int p = 0; p < L; ++p) vars[p] = sequence_var(L, S, k, p, budget_state[k]);
        fprintf(out, "BUDGET %d", L);
        write_vars(out, vars, L);
        fprintf(out, " 2\n");
        for (int p = 0; p < L; ++p) vars[p] = sequence_var(L, S, k, p, or_state[k]);
        fprintf(out, "OR %d", L);
        write_vars(out, vars, L);
        fputc('\n', out);
    }
    free(budget_state);
    free(or_state);
    free(hidden);
    free(vars);
    return ferror(out) ? -1 : 0;
}

/* ---- the benchmark suite ---- */

#define PARSING(seed, n, K) {GEN_PARSING, seed, {n, K, 0}}
#define SEQUENCES(seed, M, L, S) {GEN_SEQUENCES, seed, {M, L, S}}
const gen_spec gen_suite[] = {
    PARSING(1, 10, 3),        PARSING(2, 10, 5),        PARSING(3, 10, 8),
    PARSING(4, 20, 3),        PARSING(5, 20, 5),        PARSING(6, 20, 8),
    PARSING(7, 30, 3),        PARSING(8, 30, 5),        PARSING(9, 30, 8),
    PARSING(10, 40, 3),       PARSING(11, 40, 5),       PARSING(12, 40, 8),
    PARSING(13, 50, 3),       PARSING(14, 50, 4),       PARSING(15, 50, 5),
    PARSING(16, 50, 6),       PARSING(17, 50, 8),       PARSING(18, 60, 3),
    PARSING(19, 60, 5),       PARSING(20, 60, 8),       PARSING(21, 80, 3),
    PARSING(22, 80, 5),       PARSING(23, 80, 8),       PARSING(24, 100, 3),
    PARSING(25, 100, 5),      PARSING(26, 100, 8),
    SEQUENCES(27, 2, 10, 5),  SEQUENCES(28, 2, 10, 20), SEQUENCES(29, 2, 30, 10),
    SEQUENCES(30, 2, 50, 5),  SEQUENCES(31, 2, 50, 20), SEQUENCES(32, 4, 10, 10),
    SEQUENCES(33, 4, 20, 5),  SEQUENCES(34, 4, 30, 20), SEQUENCES(35, 4, 50, 10),
    SEQUENCES(36, 6, 10, 20), SEQUENCES(37, 6, 25, 10), SEQUENCES(38, 6, 40, 5),
    SEQUENCES(39, 6, 50, 20), SEQUENCES(40, 8, 15, 10), SEQUENCES(41, 8, 30, 5),
    SEQUENCES(42, 8, 50, 10), SEQUENCES(43, 10, 10, 5), SEQUENCES(44, 10, 20, 20),
    SEQUENCES(45, 10, 40, 10), SEQUENCES(46, 10, 50, 20),
};
const int gen_suite_count = (int)(sizeof gen_suite / sizeof gen_suite[0]);

int gen_write_fg(FILE *out, const gen_spec *spec) {
    const int *z = spec->size;
    return spec->shape == GEN_PARSING ? gen_parsing_fg(out, spec->seed, z[0], z[1])
                                      : gen_sequences_fg(out, spec->seed, z[0], z[1], z[2]);
}

void gen_name(const gen_spec *spec, char *name, size_t size) {
    const int *z = spec->size;
    unsigned long long seed = spec->seed;
    if (spec->shape == GEN_PARSING)
        snprintf(name, size, "parsing_n%03d_K%d_seed%llu", z[0], z[1], seed);
    else
        snprintf(name, size, "sequences_M%02d_L%02d_S%02d_seed%llu", z[0], z[1], z[2], seed);
}
