/*
 * MATCHING factor: a bipartite matching between `rows` and `cols` items.
 * Its links are the rows x cols pairs in row-major order; a configuration
 * switches on a set of pairs that uses each row and each column at most
 * once. Flags ask for every row to be matched (rows <= cols), every
 * column (cols <= rows), or both (a perfect matching, rows == cols).
 *
 * The MAP oracle is the Hungarian method in its shortest-augmenting-path
 * form with dual potentials (Jonker-Volgenant style): rows are inserted one
 * at a time, each by a Dijkstra-like search over reduced costs, in
 * O(r^2 c) for r <= c (O(n^3) when square). Matchings that may leave rows
 * unmatched add one zero-score dummy column per row, so that a row whose
 * pairs all score below zero stays alone. The side with fewer items plays
 * the rows. The factor has no additional outputs and only a MAP oracle:
 * its weighted QP goes through the generic active set.
 */
#include <math.h>
#include <stdlib.h>

#include "../graph.h"

typedef struct matching_params {
    int32_t rows, cols;
    unsigned flags; /* CONCORD_MATCHING_* */
} matching_params;

static const matching_params *params_of(const factor *f) {
    return (const matching_params *)f->params;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* The assignment problem solved by the oracle: r rows, c >= r columns of
 * which the first `real` are items and the others dummies. */
typedef struct assign_shape {
    int32_t r, real, c;
    int transpose; /* problem row i is the factor's column i */
} assign_shape;

static assign_shape shape_of(const matching_params *p) {
    assign_shape s;
    if (p->flags == CONCORD_MATCHING_EVERY_COL) s.transpose = 1;
    else if (p->flags == 0) s.transpose = p->rows > p->cols;
    else s.transpose = 0;
    s.r = s.transpose ? p->cols : p->rows;
    s.real = s.transpose ? p->rows : p->cols;
    s.c = s.real + (p->flags == 0 ? s.r : 0);
    return s;
}

typedef struct assign_work {
    double *cost;     /* r x c, row-major */
    double *row_pot;  /* r */
    double *col_pot;  /* c + 1: column c is the search's virtual start */
    double *slack;    /* c: shortest reduced distance found to each column */
    int32_t *owner;   /* c + 1: row matched to each column, -1 none */
    int32_t *via;     /* c: previous column on the shortest path */
    uint8_t *reached; /* c + 1 */
} assign_work;

static size_t assign_layout(assign_shape s, void *base, assign_work *w) {
    size_t r = (size_t)s.r, c = (size_t)s.c, used = 0;
    char *b = base;
#define CARVE(field, count, type)                              \
    do {                                                       \
        w->field = b ? (type *)(b + used) : NULL;              \
        used += align8((count) * sizeof(type));                \
    } while (0)
    CARVE(cost, r * c, double);
    CARVE(row_pot, r, double);
    CARVE(col_pot, c + 1, double);
    CARVE(slack, c, double);
    CARVE(owner, c + 1, int32_t);
    CARVE(via, c, int32_t);
    CARVE(reached, c + 1, uint8_t);
#undef CARVE
    return used;
}

/* Minimum-cost assignment of every row to a distinct column. Invariant:
 * cost[i][j] - row_pot[i] - col_pot[j] >= 0 for every pair, with equality
 * on matched pairs; each row insertion grows a shortest-path tree of
 * columns from the new row until it reaches a free column, shifting the
 * potentials so that the tree's pairs stay tight, then flips the path. */
static void assign_solve(assign_shape s, assign_work *w) {
    const int32_t r = s.r, c = s.c, start = c;
    for (int32_t i = 0; i < r; ++i) w->row_pot[i] = 0.0;
    for (int32_t j = 0; j <= c; ++j) w->col_pot[j] = 0.0, w->owner[j] = -1;
    for (int32_t i = 0; i < r; ++i) {
        for (int32_t j = 0; j < c; ++j) w->slack[j] = INFINITY, w->reached[j] = 0;
        w->reached[start] = 0;
        w->owner[start] = i;
        int32_t col = start;
        do {
            w->reached[col] = 1;
            const int32_t row = w->owner[col];
            const double *cost = w->cost + (size_t)row * (size_t)c;
            double delta = INFINITY;
            int32_t next = -1;
            for (int32_t j = 0; j < c; ++j) {
                if (w->reached[j]) continue;
                double reduced = cost[j] - w->row_pot[row] - w->col_pot[j];
                if (reduced < w->slack[j]) w->slack[j] = reduced, w->via[j] = col;
                if (next < 0 || w->slack[j] < delta) delta = w->slack[j], next = j;
            }
            for (int32_t j = 0; j <= c; ++j) {
                if (w->reached[j]) {
                    w->row_pot[w->owner[j]] += delta;
                    w->col_pot[j] -= delta;
                } else {
                    w->slack[j] -= delta;
                }
            }
            col = next;
        } while (w->owner[col] >= 0);
        while (col != start) {
            int32_t prev = w->via[col];
            w->owner[col] = w->owner[prev];
            col = prev;
        }
    }
}

static double matching_map(const factor *f, const double *a, const double *b, double *u,
                           double *v, void *scratch) {
    (void)b, (void)v;
    const matching_params *p = params_of(f);
    const assign_shape s = shape_of(p);
    assign_work w;
    assign_layout(s, scratch, &w);
    for (int32_t i = 0; i < s.r; ++i) {
        double *row = w.cost + (size_t)i * (size_t)s.c;
        for (int32_t j = 0; j < s.real; ++j)
            row[j] = -a[s.transpose ? (size_t)j * (size_t)p->cols + (size_t)i
                                    : (size_t)i * (size_t)p->cols + (size_t)j];
        for (int32_t j = s.real; j < s.c; ++j) row[j] = 0.0;
    }
    assign_solve(s, &w);
    for (int32_t k = 0; k < f->degree; ++k) u[k] = 0.0;
    double score = 0.0;
    for (int32_t j = 0; j < s.real; ++j) {
        int32_t i = w.owner[j];
        if (i < 0) continue;
        size_t k = s.transpose ? (size_t)j * (size_t)p->cols + (size_t)i
                               : (size_t)i * (size_t)p->cols + (size_t)j;
        u[k] = 1.0;
        score += a[k];
    }
    return score;
}

static size_t matching_scratch(const factor *f) {
    assign_work w;
    return assign_layout(shape_of(params_of(f)), NULL, &w);
}

static int32_t matching_config_size(const factor *f) {
    const matching_params *p = params_of(f);
    return p->rows < p->cols ? p->rows : p->cols;
}

const factor_ops factor_matching_ops = {.name = "MATCHING",
                                        .map = matching_map,
                                        .scratch_bytes = matching_scratch,
                                        .config_size = matching_config_size};

int concord_add_matching(concord_graph *g, int32_t rows, int32_t cols, const int32_t *vars,
                         unsigned flags, int32_t *factor_id) {
    if (!g) return CONCORD_EINVAL;
    if (flags & ~(unsigned)CONCORD_MATCHING_PERFECT)
        return graph_fail(g, CONCORD_EINVAL, "MATCHING factor: unknown flags 0x%x", flags);
    if (rows < 1 || cols < 1 || (int64_t)rows * cols > INT32_MAX / 2)
        return graph_fail(g, CONCORD_EINVAL,
                          "MATCHING factor: %d x %d is not a valid size (each side >= 1, "
                          "rows x cols at most %d)",
                          rows, cols, INT32_MAX / 2);
    if ((flags & CONCORD_MATCHING_EVERY_ROW) && rows > cols)
        return graph_fail(g, CONCORD_EINFEASIBLE,
                          "MATCHING factor: %d rows cannot all be matched to %d columns", rows,
                          cols);
    if ((flags & CONCORD_MATCHING_EVERY_COL) && cols > rows)
        return graph_fail(g, CONCORD_EINFEASIBLE,
                          "MATCHING factor: %d columns cannot all be matched to %d rows", cols,
                          rows);
    matching_params *p = malloc(sizeof *p);
    if (!p) return graph_fail(g, CONCORD_ENOMEM, "out of memory");
    *p = (matching_params){rows, cols, flags};
    return graph_add_factor(g, &factor_matching_ops, rows * cols, vars, NULL, false, 0, NULL, p,
                            factor_id);
}
