/*
 * Safeguarded type-II Anderson acceleration of the ADMM iteration over the
 * links that move (see anderson.h for the method and its safeguards).
 *
 * Invariant after each step: x holds the state lambda_l + eta ubar_i of
 * every link. The STRIDE plain iterations up to the next step change the
 * state of the links of the variables that move; at that step f (the image
 * T(x)), g = f - x and the differences with the previous step's f and g
 * are formed on the live links, those of variables that moved during the
 * last (m + 1) STRIDE iterations. A quiet link's true differences are zero
 * in every stored column, so restricting the work to live links changes no
 * result; its stored row is cleared when it becomes live again (a history
 * restart may have left older values there).
 *
 * Every per-link array here is indexed by slot: the position of the link
 * in the workspace's variable-major list (var_links), so that a variable's
 * links are contiguous and a pass over the live variables walks these
 * arrays in order, where indexed by link the same passes jumped from
 * factor to factor through some 0.4 MB of state on srl_fract_003 (in slot
 * order its solve takes 8% less time, with the same results bit for bit).
 * Only the solver's own arrays (multipliers, consensus) are reached through
 * the link. The history is stored by slot (the m differences of a slot
 * side by side), so one pass over the live variables forms the new
 * differences, their row of the Gram matrix and the right-hand side of the
 * least-squares problem.
 */
#include "anderson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workspace.h"

/* Acceleration stops for the rest of a solve when, after USEFUL_AFTER
 * iterations, fewer than a third of the extrapolations it tried were kept
 * (steps spent rebuilding the history after a restart are not failures),
 * and is not used at all on graphs of more than MAX_LIVE_LINKS links
 * (measured: on AD3's mln_large, 2e5 links with most factors cached, its
 * O(m) work per live link costs four times the iterations it saves, while on
 * graphs of a few thousand links it divides the iterations by 2 to 8).
 *
 * It extrapolates the map of STRIDE plain iterations (the same fixed
 * points, still nonexpansive): between its steps the plain iterations keep
 * the factor caching that an extrapolation, moving every live link, breaks,
 * and its vector work is shared by STRIDE iterations. Measured on AD3's
 * graphs, a stride of 3 against 1 (solve ms): srl_fract_003 2.7 -> 0.9
 * (121 -> 50 iterations), coref 10.9 -> 7.4, parsing01 506 -> 193 (9445 ->
 * 1157 iterations; over initial penalties 0.05-0.5 its count went from
 * 1308-10575 to 1157-3035; docs/performance.md has the current table);
 * parsing02 55 -> 66 iterations (+9% time); Promedas ~15% more iterations
 * at about the same time. With the stride, stopping after a few refusals
 * in a row no longer paid (srl_fract_004 234 iterations without it, 1017
 * with it). */
enum { USEFUL_AFTER = 100, MAX_LIVE_LINKS = 50000, STRIDE = 3 };

/* A solve starts with a memory of at most SHORT_MEMORY and takes the full
 * memory (the history restarting) once it has run LONG_AFTER iterations.
 * Most graphs converge before that, and on them the short memory costs
 * fewer page faults and less vector work per step for about as few
 * iterations (srl_fract_001..005: 79 / 59 / 50 / 234 / 91 iterations with
 * memory 5, 63 / 55 / 59 / 239 / 82 with 8 throughout); slow solves profit
 * from the longer one. Measured over initial penalties 0.03-2 against
 * memory 5 throughout: coref 235-454 -> 178-297 iterations (369 -> 237 at
 * the default), parsing01 843-4160 -> 615-1860 (total over the eleven
 * penalties halved; 1376 -> 1210 at the default), the srl graphs unchanged
 * but for srl_fract_004 (+12% in total, 234 -> 239 at the default), the
 * UAI grids 1-19% fewer, Promedas and ObjectDetection within +-5%. Growing
 * at 60 instead of 80 iterations gave about the same on average but
 * parsing01 4195 at the default penalty: the counts of these long solves are
 * chaotic in the details, hence the averages. */
enum { SHORT_MEMORY = 5, LONG_AFTER = 80 };

struct anderson {
    const concord_graph *g;
    int m;        /* the memory in use */
    int full_m;   /* the memory asked for */
    int capacity; /* the memory the difference arrays hold */
    int32_t *moved_at; /* per variable: last iteration it moved */
    bool *is_live;     /* per variable: live at the last collection */
    int32_t *live;     /* the live variables */
    int32_t n_live;
    int32_t *undo;     /* the variables the last extrapolation changed */
    int32_t n_undo;
    double *x, *f_prev, *res_prev, *undo_state; /* per slot */
    double *dres, *df; /* per slot, its m differences side by side */
    double gram[ANDERSON_MAX_MEMORY][ANDERSON_MAX_MEMORY];
    double rhs[ANDERSON_MAX_MEMORY]; /* column j dotted with the residual */
    int count, head, extrapolated, cooldown;
    const char *stopped; /* why acceleration stopped for this solve, or NULL */
    int32_t stopped_at;
    int waited; /* plain iterations since the last step */
    double norm_prev;
    int32_t accepted, refused; /* extrapolations in this solve */
    int32_t accepted_before, refused_before; /* the same when the memory last grew */
};

/* Allocates zeroed difference arrays for memory m in place of the current
 * ones; returns 0 (keeping the current ones) when out of memory. */
static int alloc_history(anderson *a, int m) {
    size_t n = (size_t)(a->g->n_links ? a->g->n_links : 1) * (size_t)m;
    double *dres = calloc(n, sizeof(double)), *df = calloc(n, sizeof(double));
    if (!dres || !df) {
        free(dres);
        free(df);
        return 0;
    }
    free(a->dres);
    free(a->df);
    a->dres = dres;
    a->df = df;
    a->capacity = m;
    return 1;
}

anderson *anderson_new(const concord_graph *g, int m) {
    anderson *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->g = g;
    a->full_m = m < 1 ? 1 : (m > ANDERSON_MAX_MEMORY ? ANDERSON_MAX_MEMORY : m);
    a->m = a->full_m < SHORT_MEMORY ? a->full_m : SHORT_MEMORY;
    size_t nl = (size_t)(g->n_links ? g->n_links : 1), nv = (size_t)(g->n_vars ? g->n_vars : 1);
    a->moved_at = malloc(nv * sizeof(int32_t));
    a->is_live = calloc(nv, sizeof(bool));
    a->live = malloc(nv * sizeof(int32_t));
    a->undo = malloc(nv * sizeof(int32_t));
    a->x = calloc(nl, sizeof(double));
    a->f_prev = calloc(nl, sizeof(double));
    a->res_prev = calloc(nl, sizeof(double));
    a->undo_state = calloc(nl, sizeof(double));
    if (!a->moved_at || !a->is_live || !a->live || !a->undo || !a->x || !a->f_prev ||
        !a->res_prev || !a->undo_state || !alloc_history(a, a->m)) {
        anderson_free(a);
        return NULL;
    }
    return a;
}

void anderson_free(anderson *a) {
    if (!a) return;
    free(a->moved_at);
    free(a->is_live);
    free(a->live);
    free(a->undo);
    free(a->x);
    free(a->f_prev);
    free(a->res_prev);
    free(a->undo_state);
    free(a->dres);
    free(a->df);
    free(a);
}

/* Forgets the history: the next m + 1 steps rebuild it. */
static void forget(anderson *a) {
    a->count = 0;
    a->head = 0;
    a->extrapolated = 0;
}

void anderson_restart(anderson *a, admm_workspace *w, double eta, int32_t t) {
    const concord_graph *g = a->g;
    forget(a);
    a->cooldown = 0;
    a->waited = 0;
    /* Every variable counts as moved: all links are live until the
     * history holds only zeros for the quiet ones. */
    for (int32_t i = 0; i < g->n_vars; ++i) {
        a->moved_at[i] = t;
        a->is_live[i] = 1;
    }
    for (int32_t i = 0; i < g->n_vars; ++i) {
        const double consensus = eta * w->ubar[i];
        for (int32_t q = w->var_link_begin[i]; q < w->var_link_begin[i + 1]; ++q) {
            a->x[q] = w->lambda[w->var_links[q]] + consensus;
            a->f_prev[q] = a->x[q];
            a->res_prev[q] = 0.0;
        }
    }
    /* The stored differences need no clearing: a step reads only the
     * columns written since the history was last forgotten, and a link that
     * was quiet in between has its row cleared when it becomes live. */
}

/* Takes the full memory; out of memory, keeps the short one for good.
 * Returns whether the memory changed. */
static int grow(anderson *a) {
    if (a->capacity < a->full_m && !alloc_history(a, a->full_m)) {
        a->full_m = a->m;
        return 0;
    }
    a->m = a->full_m;
    a->accepted_before = a->accepted;
    a->refused_before = a->refused;
    return 1;
}

void anderson_begin(anderson *a, admm_workspace *w, double eta) {
    a->m = a->full_m < SHORT_MEMORY ? a->full_m : SHORT_MEMORY;
    a->accepted = a->refused = a->accepted_before = a->refused_before = 0;
    a->stopped = NULL;
    anderson_restart(a, w, eta, 0);
}

void anderson_moved(anderson *a, int32_t i, int32_t t) { a->moved_at[i] = t; }

/* Sets variable i's consensus and multipliers from the per-slot state s
 * (read on i's slots only; s may be a->x), marking i active when it moved
 * and the factors whose input moved beyond `slack` dirty. */
static void set_variable(anderson *a, admm_workspace *w, double eta, int32_t i, const double *s,
                         int32_t t, double slack) {
    const int32_t begin = w->var_link_begin[i], end = w->var_link_begin[i + 1];
    double *lambda = w->lambda, *x = a->x;
    double sum = 0.0;
    for (int32_t q = begin; q < end; ++q) sum += s[q];
    double ub = sum * w->inv_deg[i] / eta;
    int moved = ub != w->ubar[i];
    w->ubar[i] = ub;
    const double base = a->g->theta[i] * w->inv_deg[i] + eta * ub;
    for (int32_t q = begin; q < end; ++q) {
        int32_t l = w->var_links[q];
        double next = s[q] - eta * ub;
        moved |= next != lambda[l];
        lambda[l] = next;
        x[q] = next + eta * ub;
        workspace_mark_if_moved(w, l, base + next, slack);
    }
    if (moved) {
        w->active[i] = 1;
        a->moved_at[i] = t;
    }
}

/* set_variable for the n variables in vars. */
static void apply_state(anderson *a, admm_workspace *w, double eta, const int32_t *vars,
                        int32_t n, const double *s, int32_t t, double slack) {
    for (int32_t k = 0; k < n; ++k) set_variable(a, w, eta, vars[k], s, t, slack);
}

/* One pass over the live variables, those that moved during the last
 * m + 1 steps (gathered into a->live), and their slots: the image f = T(x)
 * and its residual f - x, and, with k stored columns, the new differences
 * in column h, their row of the Gram matrix (row) and every column dotted
 * with the residual (rhs). A variable that just became live has its slots'
 * rows cleared first.
 * Leaves x = f and returns the residual norm. When the caller then refuses
 * the last extrapolation, the history is forgotten, so the columns written
 * here are never read. */
static inline __attribute__((always_inline)) double
gather_columns(anderson *a, const admm_workspace *w, double eta, int32_t t, const int k, int h,
               double *row_out, double *rhs_out) {
    double row[ANDERSON_MAX_MEMORY] = {0}, rhs[ANDERSON_MAX_MEMORY] = {0};
    const int32_t n_vars = a->g->n_vars;
    const size_t m = (size_t)a->m;
    const int32_t quiet_after = t - (a->m + 1) * STRIDE;
    const int32_t *moved_at = a->moved_at, *var_links = w->var_links,
                  *var_link_begin = w->var_link_begin;
    const double *lambda = w->lambda, *ubar = w->ubar;
    bool *is_live = a->is_live;
    int32_t *live = a->live;
    double *x = a->x, *res_prev = a->res_prev, *f_prev = a->f_prev, *dres = a->dres,
           *df = a->df;
    double norm = 0.0;
    int32_t n_live = 0;
    for (int32_t i = 0; i < n_vars; ++i) {
        if (moved_at[i] < quiet_after) {
            is_live[i] = 0;
            continue;
        }
        const int32_t begin = var_link_begin[i], end = var_link_begin[i + 1];
        if (begin == end) continue; /* in no factor: its value never changes */
        if (!is_live[i]) {
            memset(dres + (size_t)begin * m, 0, (size_t)(end - begin) * m * sizeof(double));
            memset(df + (size_t)begin * m, 0, (size_t)(end - begin) * m * sizeof(double));
            is_live[i] = 1;
        }
        live[n_live++] = i;
        const double consensus = eta * ubar[i];
        for (int32_t q = begin; q < end; ++q) {
            double *dr = dres + (size_t)q * m, *dfl = df + (size_t)q * m;
            const double f = lambda[var_links[q]] + consensus, res = f - x[q];
            norm += res * res;
            if (k > 0) {
                const double d = res - res_prev[q];
                dr[h] = d;
                dfl[h] = f - f_prev[q];
#pragma GCC unroll 16
                for (int j = 0; j < k; ++j) {
                    row[j] += d * dr[j];
                    rhs[j] += res * dr[j];
                }
            }
            res_prev[q] = res;
            f_prev[q] = f;
            x[q] = f;
        }
    }
    a->n_live = n_live;
    for (int j = 0; j < k; ++j) {
        row_out[j] = row[j];
        rhs_out[j] = rhs[j];
    }
    return sqrt(norm);
}

/* gather and extrapolate are compiled for each number of columns k: with
 * k a constant, the loops over the columns are unrolled and their sums and
 * coefficients stay in registers (a fifth of the acceleration's
 * instructions went to keeping them in memory). */
#define FOR_EACH_COLUMN_COUNT(CASE) \
    CASE(0) CASE(1) CASE(2) CASE(3) CASE(4) CASE(5) CASE(6) CASE(7) CASE(8) CASE(9) CASE(10) \
    CASE(11) CASE(12) CASE(13) CASE(14) CASE(15) CASE(16)
_Static_assert(ANDERSON_MAX_MEMORY == 16,
               "FOR_EACH_COLUMN_COUNT lists every column count up to the maximum memory");

static double gather(anderson *a, const admm_workspace *w, double eta, int32_t t, int k, int h,
                     double *row, double *rhs) {
    switch (k) {
#define GATHER_CASE(K) \
    case K: return gather_columns(a, w, eta, t, K, h, row, rhs);
        FOR_EACH_COLUMN_COUNT(GATHER_CASE)
#undef GATHER_CASE
    }
    return gather_columns(a, w, eta, t, k, h, row, rhs);
}

/* Extrapolates x (the plain image, which gather left there) to
 * x - df gamma over the k columns, variable by variable, applying each
 * variable at once; the plain image stays in undo_state. Returns the
 * length of the step. */
static inline __attribute__((always_inline)) double
extrapolate_columns(anderson *a, admm_workspace *w, double eta, int32_t t, double slack,
                    const int k, const double *gamma_in) {
    double gamma[ANDERSON_MAX_MEMORY];
    for (int j = 0; j < k; ++j) gamma[j] = gamma_in[j];
    const size_t m = (size_t)a->m;
    const int32_t n_live = a->n_live, *live = a->live, *var_link_begin = w->var_link_begin;
    const double *df = a->df;
    double *x = a->x, *undo_state = a->undo_state;
    double step = 0.0;
    for (int32_t v = 0; v < n_live; ++v) {
        const int32_t i = live[v];
        for (int32_t q = var_link_begin[i]; q < var_link_begin[i + 1]; ++q) {
            const double *dfl = df + (size_t)q * m;
            const double f = x[q];
            double next = f;
#pragma GCC unroll 16
            for (int j = 0; j < k; ++j) next -= dfl[j] * gamma[j];
            undo_state[q] = f;
            x[q] = next;
            step += (next - f) * (next - f);
        }
        set_variable(a, w, eta, i, x, t, slack);
    }
    return sqrt(step);
}

static double extrapolate(anderson *a, admm_workspace *w, double eta, int32_t t, double slack,
                          int k, const double *gamma) {
    switch (k) {
#define EXTRAPOLATE_CASE(K) \
    case K: return extrapolate_columns(a, w, eta, t, slack, K, gamma);
        FOR_EACH_COLUMN_COUNT(EXTRAPOLATE_CASE)
#undef EXTRAPOLATE_CASE
    }
    return extrapolate_columns(a, w, eta, t, slack, k, gamma);
}

/* Solves min |res - dres gamma| over the k stored columns (Cholesky of the
 * regularized Gram matrix); returns 0 when it is singular. */
static int least_squares(const anderson *a, int k, double *gamma) {
    double m[ANDERSON_MAX_MEMORY][ANDERSON_MAX_MEMORY];
    double trace = 0.0;
    for (int i = 0; i < k; ++i) trace += a->gram[i][i];
    for (int i = 0; i < k; ++i)
        for (int j = 0; j < k; ++j) m[i][j] = a->gram[i][j] + (i == j ? 1e-10 * trace : 0.0);
    for (int i = 0; i < k; ++i) {
        for (int j = 0; j <= i; ++j) {
            double sum = m[i][j];
            for (int q = 0; q < j; ++q) sum -= m[i][q] * m[j][q];
            if (i == j) {
                if (!(sum > 0.0)) return 0;
                m[i][i] = sqrt(sum);
            } else {
                m[i][j] = sum / m[j][j];
            }
        }
    }
    for (int i = 0; i < k; ++i) {
        double sum = a->rhs[i];
        for (int q = 0; q < i; ++q) sum -= m[i][q] * gamma[q];
        gamma[i] = sum / m[i][i];
    }
    for (int i = k - 1; i >= 0; --i) {
        double sum = gamma[i];
        for (int q = i + 1; q < k; ++q) sum -= m[q][i] * gamma[q];
        gamma[i] = sum / m[i][i];
    }
    return 1;
}

static void stop(anderson *a, int32_t t, const char *why) {
    a->stopped = why;
    a->stopped_at = t;
}

static void refuse(anderson *a) {
    a->refused += 1;
    forget(a);
    a->cooldown = a->m + 1;
}

/* Every STRIDE-th call: one step of the acceleration. */
static void step(anderson *a, admm_workspace *w, double eta, int32_t t, double slack) {
    if (++a->waited < STRIDE) return;
    a->waited = 0;
    /* judged on the extrapolations of the memory in use */
    if (t >= USEFUL_AFTER &&
        2 * (a->accepted - a->accepted_before) < a->refused - a->refused_before) {
        stop(a, t, "extrapolations rarely kept"); /* not worth its cost */
        return;
    }
    const int k = a->count < a->m ? a->count : a->m;
    const int h = a->head;
    double row[ANDERSON_MAX_MEMORY] = {0}, rhs[ANDERSON_MAX_MEMORY] = {0};
    const double norm = gather(a, w, eta, t, k, h, row, rhs);
    if (a->extrapolated && norm > a->norm_prev) {
        /* the extrapolation did not help: back to the plain image it
         * started from (the other links keep their plain step) */
        apply_state(a, w, eta, a->undo, a->n_undo, a->undo_state, t, slack);
        refuse(a);
        return;
    }
    a->extrapolated = 0;
    if (k > 0) {
        for (int j = 0; j < k; ++j) {
            a->gram[h][j] = a->gram[j][h] = row[j];
            a->rhs[j] = rhs[j];
        }
        a->head = (h + 1) % a->m;
    }
    a->norm_prev = norm;
    a->count += 1;
    if (a->cooldown > 0) {
        a->cooldown -= 1;
        return;
    }
    double gamma[ANDERSON_MAX_MEMORY];
    if (k == 0 || norm == 0.0 || !least_squares(a, k, gamma)) return;
    /* a step found too long afterwards is undone like a refused one */
    if (!(extrapolate(a, w, eta, t, slack, k, gamma) <= 10.0 * norm)) {
        apply_state(a, w, eta, a->live, a->n_live, a->undo_state, t, slack);
        refuse(a);
        return;
    }
    memcpy(a->undo, a->live, (size_t)a->n_live * sizeof(int32_t));
    a->n_undo = a->n_live;
    a->extrapolated = 1;
    a->accepted += 1;
}

void anderson_after(anderson *a, admm_workspace *w, double eta, int32_t t, double slack) {
    if (a->stopped) return;
    step(a, w, eta, t, slack);
    if (!a->stopped && t >= LONG_AFTER && a->m < a->full_m && grow(a))
        anderson_restart(a, w, eta, t);
}

void anderson_report(const anderson *a, FILE *out) {
    fprintf(out, "acceleration: %d extrapolations kept, %d refused", a->accepted, a->refused);
    if (a->stopped) fprintf(out, "; stopped at iteration %d (%s)", a->stopped_at, a->stopped);
    fputc('\n', out);
}

int anderson_worthwhile(const concord_graph *g) { return g->n_links <= MAX_LIVE_LINKS; }
