/*
 * Single-factor references (see ref_factor.h): vertex enumeration from the
 * factor semantics, brute-force MAP, GLPK LPs for KNAPSACK and for polytope
 * membership, and a weighted-QP solver (pairwise Frank-Wolfe, then an exact
 * active-set polish with its own Gaussian elimination, then a KKT check)
 * that shares no code and no algorithm with the library's closed forms.
 */
#include "ref_factor.h"

#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Vertices
 * ------------------------------------------------------------------------ */

void ref_points_free(ref_points *pts) {
    free(pts->u);
    free(pts->v);
    memset(pts, 0, sizeof *pts);
}

static void push_point(ref_points *pts, const double *u, const double *v) {
    memcpy(pts->u + (size_t)pts->count * (size_t)pts->degree, u,
           (size_t)pts->degree * sizeof *u);
    if (pts->n_add)
        memcpy(pts->v + (size_t)pts->count * (size_t)pts->n_add, v,
               (size_t)pts->n_add * sizeof *v);
    ++pts->count;
}

int ref_factor_vertices(const ref_factor *f, ref_points *out) {
    memset(out, 0, sizeof *out);
    int p = f->degree, q = ref_num_additionals(f);
    if (p < 1 || p > REF_FACTOR_MAX_DEGREE || q > 2) return -1;
    size_t cap = (size_t)1 << (p + q);
    if (f->kind == REF_KNAPSACK) cap += (size_t)p << (p - 1);
    out->degree = p;
    out->n_add = q;
    out->u = malloc(cap * (size_t)p * sizeof(double));
    out->v = q ? malloc(cap * (size_t)q * sizeof(double)) : NULL;
    if (!out->u || (q && !out->v)) {
        ref_points_free(out);
        return -1;
    }
    int x[REF_MAX_DEGREE], y[2] = {0, 0};
    double pu[REF_MAX_DEGREE], pv[2];
    for (unsigned long mask = 0; mask < (1ul << (p + q)); ++mask) {
        for (int j = 0; j < p; ++j) x[j] = (int)((mask >> j) & 1u);
        for (int k = 0; k < q; ++k) y[k] = (int)((mask >> (p + k)) & 1u);
        if (!ref_allowed(f, x, y)) continue;
        for (int j = 0; j < p; ++j) pu[j] = x[j];
        for (int k = 0; k < q; ++k) pv[k] = y[k];
        push_point(out, pu, pv);
    }
    if (f->kind == REF_KNAPSACK) {
        /* A vertex of {l in [0,1]^p : c.l <= B} has p independent tight
         * constraints, so at least p-1 integral literals; if one literal k
         * is fractional the budget is tight and c_k > 0. */
        for (int k = 0; k < p; ++k) {
            if (!(f->costs[k] > 0.0)) continue;
            for (unsigned long mask = 0; mask < (1ul << (p - 1)); ++mask) {
                double lit[REF_MAX_DEGREE], spent = 0.0;
                int bit = 0;
                for (int j = 0; j < p; ++j) {
                    if (j == k) continue;
                    lit[j] = (double)((mask >> bit++) & 1u);
                    spent += f->costs[j] * lit[j];
                }
                double rest = f->budget - spent;
                if (!(rest > 0.0 && rest < f->costs[k])) continue;
                lit[k] = rest / f->costs[k];
                for (int j = 0; j < p; ++j) pu[j] = f->negated[j] ? 1.0 - lit[j] : lit[j];
                push_point(out, pu, NULL);
            }
        }
    }
    if (out->count == 0) {
        ref_points_free(out);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------
 * MAP and LPs
 * ------------------------------------------------------------------------ */

static double point_score(const ref_points *pts, int s, const double *a, const double *b) {
    double value = 0.0;
    const double *pu = pts->u + (size_t)s * (size_t)pts->degree;
    for (int j = 0; j < pts->degree; ++j) value += a[j] * pu[j];
    for (int k = 0; k < pts->n_add; ++k) value += b[k] * pts->v[(size_t)s * (size_t)pts->n_add + (size_t)k];
    return value;
}

double ref_map(const ref_factor *f, const double *a, const double *b, double *u, double *v) {
    ref_points pts;
    if (ref_factor_vertices(f, &pts)) return NAN;
    int best = 0;
    double best_value = point_score(&pts, 0, a, b);
    for (int s = 1; s < pts.count; ++s) {
        double value = point_score(&pts, s, a, b);
        if (value > best_value) best_value = value, best = s;
    }
    if (u) memcpy(u, pts.u + (size_t)best * (size_t)pts.degree, (size_t)pts.degree * sizeof *u);
    if (v && pts.n_add)
        memcpy(v, pts.v + (size_t)best * (size_t)pts.n_add, (size_t)pts.n_add * sizeof *v);
    ref_points_free(&pts);
    return best_value;
}

/* GLPK's simplex, silent. Its exact rational simplex (glp_exact) is not
 * used: it converts the data to rationals approximately and returns
 * answers ~1e-10 off. Tight tolerances instead keep the floating-point
 * simplex from stopping at a basis that is optimal only to 1e-7; its
 * basic solution is then exact up to rounding of a small LU solve. */
static void quiet_simplex(glp_smcp *parm, bool tight) {
    glp_init_smcp(parm);
    parm->msg_lev = GLP_MSG_OFF;
    if (tight) {
        parm->tol_bnd = 1e-12;
        parm->tol_dj = 1e-12;
    }
}

int ref_knapsack_lp(const ref_factor *f, const double *a, double *u, double *value) {
    int p = f->degree;
    if (f->kind != REF_KNAPSACK || p < 1 || p > REF_MAX_DEGREE) return -1;
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MAX);
    glp_add_rows(lp, 1);
    glp_add_cols(lp, p);
    int ind[REF_MAX_DEGREE + 1], nz = 0;
    double val[REF_MAX_DEGREE + 1], rhs = f->budget;
    for (int j = 0; j < p; ++j) {
        glp_set_col_bnds(lp, j + 1, GLP_DB, 0.0, 1.0);
        glp_set_obj_coef(lp, j + 1, a[j]);
        if (f->costs[j] == 0.0) continue;
        /* c (1 - u) on a negated link: -c u on the left, -c on the right. */
        ++nz;
        ind[nz] = j + 1;
        val[nz] = f->negated[j] ? -f->costs[j] : f->costs[j];
        if (f->negated[j]) rhs -= f->costs[j];
    }
    if (nz > 0) {
        glp_set_row_bnds(lp, 1, GLP_UP, 0.0, rhs);
        glp_set_mat_row(lp, 1, nz, ind, val);
    } else {
        glp_set_row_bnds(lp, 1, GLP_FR, 0.0, 0.0);
    }
    glp_smcp parm;
    quiet_simplex(&parm, true);
    int rc = glp_simplex(lp, &parm);
    if (rc == 0 && glp_get_status(lp) == GLP_OPT) {
        *value = glp_get_obj_val(lp);
        if (u)
            for (int j = 0; j < p; ++j) u[j] = glp_get_col_prim(lp, j + 1);
    } else {
        rc = -1;
    }
    glp_delete_prob(lp);
    return rc ? -1 : 0;
}

/* Distance to conv(points) by the L1 LP
 *   min sum (s+ + s-)  s.t.  sum_s w_s P_s + s+ - s- = z,  sum w = 1, all >= 0,
 * then the max-norm residual of the LP's weights, clipped and renormalized,
 * computed here. tight: with tight simplex tolerances. */
static double hull_distance(const ref_points *pts, const double *u, const double *v, bool tight) {
    int p = pts->degree, q = pts->n_add, n = pts->count, dim = p + q;
    glp_prob *lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_rows(lp, dim + 1);
    glp_add_cols(lp, n + 2 * dim);
    size_t cap = (size_t)n * (size_t)(dim + 1) + 2u * (size_t)dim + 1u;
    int *ia = malloc(cap * sizeof *ia), *ja = malloc(cap * sizeof *ja);
    double *ar = malloc(cap * sizeof *ar), *w = malloc((size_t)n * sizeof *w);
    double result = NAN;
    if (!ia || !ja || !ar || !w) goto done;
    int nz = 0;
    for (int i = 0; i < dim; ++i)
        glp_set_row_bnds(lp, i + 1, GLP_FX, i < p ? u[i] : v[i - p], 0.0);
    glp_set_row_bnds(lp, dim + 1, GLP_FX, 1.0, 0.0);
    for (int s = 0; s < n; ++s) {
        glp_set_col_bnds(lp, s + 1, GLP_LO, 0.0, 0.0);
        for (int i = 0; i < dim; ++i) {
            double coef = i < p ? pts->u[(size_t)s * (size_t)p + (size_t)i]
                                : pts->v[(size_t)s * (size_t)q + (size_t)(i - p)];
            if (coef == 0.0) continue;
            ++nz, ia[nz] = i + 1, ja[nz] = s + 1, ar[nz] = coef;
        }
        ++nz, ia[nz] = dim + 1, ja[nz] = s + 1, ar[nz] = 1.0;
    }
    for (int i = 0; i < dim; ++i) {
        for (int sign = 0; sign < 2; ++sign) {
            int col = n + 2 * i + sign + 1;
            glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
            glp_set_obj_coef(lp, col, 1.0);
            ++nz, ia[nz] = i + 1, ja[nz] = col, ar[nz] = sign ? -1.0 : 1.0;
        }
    }
    glp_load_matrix(lp, nz, ia, ja, ar);
    glp_smcp parm;
    quiet_simplex(&parm, tight);
    int rc = glp_simplex(lp, &parm);
    if (rc != 0 || glp_get_status(lp) != GLP_OPT) goto done;
    double total = 0.0;
    for (int s = 0; s < n; ++s) {
        w[s] = fmax(0.0, glp_get_col_prim(lp, s + 1));
        total += w[s];
    }
    if (!(total > 0.0)) goto done;
    result = 0.0;
    for (int i = 0; i < dim; ++i) {
        double coord = 0.0;
        for (int s = 0; s < n; ++s)
            coord += w[s] / total * (i < p ? pts->u[(size_t)s * (size_t)p + (size_t)i]
                                           : pts->v[(size_t)s * (size_t)q + (size_t)(i - p)]);
        result = fmax(result, fabs(coord - (i < p ? u[i] : v[i - p])));
    }
done:
    free(ia);
    free(ja);
    free(ar);
    free(w);
    glp_delete_prob(lp);
    return result;
}

double ref_polytope_violation(const ref_factor *f, const double *u, const double *v) {
    int p = f->degree;
    if (f->kind == REF_KNAPSACK) {
        double worst = 0.0, cost = 0.0, cmax = 0.0;
        for (int j = 0; j < p; ++j) {
            worst = fmax(worst, fmax(-u[j], u[j] - 1.0));
            cost += f->costs[j] * (f->negated[j] ? 1.0 - u[j] : u[j]);
            cmax = fmax(cmax, f->costs[j]);
        }
        if (cmax > 0.0) worst = fmax(worst, (cost - f->budget) / cmax);
        return worst;
    }
    ref_points pts;
    if (ref_factor_vertices(f, &pts)) return NAN;
    double dist = hull_distance(&pts, u, v, false);
    /* The floating-point simplex may stop at a slightly suboptimal basis. */
    if (!(dist <= 1e-13)) {
        double again = hull_distance(&pts, u, v, true);
        if (again < dist || isnan(dist)) dist = again;
    }
    ref_points_free(&pts);
    return dist;
}

/* ------------------------------------------------------------------------
 * Weighted QP
 * ------------------------------------------------------------------------ */

double ref_qp_objective(const ref_factor *f, const double *a, const double *b,
                        const double *d, const double *u, const double *v) {
    double value = 0.0;
    for (int j = 0; j < f->degree; ++j) value += a[j] * u[j] - 0.5 * d[j] * u[j] * u[j];
    for (int k = 0; k < ref_num_additionals(f); ++k) value += b[k] * v[k];
    return value;
}

double ref_qp_scale(const ref_factor *f, const double *a, const double *b, const double *d) {
    double scale = 0.0;
    for (int j = 0; j < f->degree; ++j) scale += fabs(a[j]) + d[j];
    for (int k = 0; k < ref_num_additionals(f); ++k) scale += fabs(b[k]);
    return scale;
}

enum { KKT_MAX = REF_FACTOR_MAX_DEGREE + 3 };

/* The state of the QP solver: a convex combination of vertices. */
typedef struct qp_state {
    const ref_points *pts;
    const double *a, *b, *d;
    int p, q, n;
    double *lin;   /* a.U_s + b.Y_s for every vertex */
    double *score; /* gradient . vertex, for every vertex */
    int *active;   /* vertex ids of the active set */
    double *w;     /* their weights */
    int m;         /* size of the active set */
    double *zu, *zv;
    double *null_work; /* (p + 1) x n */
    double scale;
} qp_state;

static const double *vert_u(const qp_state *st, int s) {
    return st->pts->u + (size_t)s * (size_t)st->p;
}

static double vert_v(const qp_state *st, int s, int k) {
    return st->pts->v[(size_t)s * (size_t)st->q + (size_t)k];
}

static void recompute_point(qp_state *st) {
    for (int j = 0; j < st->p; ++j) st->zu[j] = 0.0;
    for (int k = 0; k < st->q; ++k) st->zv[k] = 0.0;
    for (int t = 0; t < st->m; ++t) {
        const double *pu = vert_u(st, st->active[t]);
        for (int j = 0; j < st->p; ++j) st->zu[j] += st->w[t] * pu[j];
        for (int k = 0; k < st->q; ++k) st->zv[k] += st->w[t] * vert_v(st, st->active[t], k);
    }
}

/* Scores of all vertices for the gradient at the current point; returns the
 * gradient times the point and the best vertex in *best. */
static double score_vertices(qp_state *st, int *best) {
    double g[REF_FACTOR_MAX_DEGREE], gz = 0.0;
    for (int j = 0; j < st->p; ++j) {
        g[j] = st->a[j] - st->d[j] * st->zu[j];
        gz += g[j] * st->zu[j];
    }
    for (int k = 0; k < st->q; ++k) gz += st->b[k] * st->zv[k];
    *best = 0;
    for (int s = 0; s < st->n; ++s) {
        const double *pu = vert_u(st, s);
        double value = 0.0;
        for (int j = 0; j < st->p; ++j) value += g[j] * pu[j];
        for (int k = 0; k < st->q; ++k) value += st->b[k] * vert_v(st, s, k);
        st->score[s] = value;
        if (value > st->score[*best]) *best = s;
    }
    return gz;
}

/* The linear-oracle gap of vertex s at the current point z = sum_t w_t P_t
 * (weights summing to 1), g.(P_s - z) = sum_t w_t g.(P_s - P_t): written
 * with differences of vertices, which are exact, so that neither the
 * rounding of z nor cancellation between large terms enters it. *err
 * receives the sum of the magnitudes its rounding errors are relative to
 * (each g_j is accurate to a few ulps of |a_j| + d_j |z_j|): its rounding
 * error is a few eps * *err typically, (p + q + m + 4) eps * *err at worst. */
static double vertex_gap(const qp_state *st, int s, double *err) {
    const double *ps = vert_u(st, s);
    double g[REF_FACTOR_MAX_DEGREE], gerr[REF_FACTOR_MAX_DEGREE];
    for (int j = 0; j < st->p; ++j) {
        g[j] = st->a[j] - st->d[j] * st->zu[j];
        gerr[j] = fabs(st->a[j]) + st->d[j] * fabs(st->zu[j]) + fabs(g[j]);
    }
    double gap = 0.0, sum_err = 0.0, total = 0.0;
    for (int t = 0; t < st->m; ++t) {
        const double *pt = vert_u(st, st->active[t]);
        double inner = 0.0, inner_err = 0.0;
        for (int j = 0; j < st->p; ++j) {
            double diff = ps[j] - pt[j];
            inner += g[j] * diff;
            inner_err += gerr[j] * fabs(diff);
        }
        for (int k = 0; k < st->q; ++k) {
            double diff = vert_v(st, s, k) - vert_v(st, st->active[t], k);
            inner += st->b[k] * diff;
            inner_err += fabs(st->b[k] * diff);
        }
        gap += st->w[t] * inner;
        sum_err += fabs(st->w[t]) * inner_err;
        total += st->w[t];
    }
    *err = sum_err / total;
    return gap / total;
}

/* The worst-case rounding bound of vertex_gap for an error sum. */
static double gap_noise(const qp_state *st, double err) {
    return (st->p + st->q + st->m + 4) * 2.220446049250313e-16 * err;
}

/* The vertex with the largest gap (written to *best, its error sum to
 * *err); returns that gap. */
static double best_gap(const qp_state *st, int *best, double *err) {
    double top = -HUGE_VAL;
    *best = 0, *err = 0.0;
    for (int s = 0; s < st->n; ++s) {
        double e, gap = vertex_gap(st, s, &e);
        if (gap > top) top = gap, *best = s, *err = e;
    }
    return top;
}

static int find_active(const qp_state *st, int s) {
    for (int t = 0; t < st->m; ++t)
        if (st->active[t] == s) return t;
    return -1;
}

static void drop_active(qp_state *st, int t) {
    st->active[t] = st->active[st->m - 1];
    st->w[t] = st->w[st->m - 1];
    --st->m;
}

/* Pairwise Frank-Wolfe with exact line search. */
static int frank_wolfe(qp_state *st, int max_iter) {
    int it;
    for (it = 0; it < max_iter; ++it) {
        if (it % 16 == 0) recompute_point(st);
        int fw;
        double gz = score_vertices(st, &fw);
        if (st->score[fw] - gz <= 1e-14 * st->scale) break;
        int away = 0;
        for (int t = 1; t < st->m; ++t)
            if (st->score[st->active[t]] < st->score[st->active[away]]) away = t;
        int aw = st->active[away];
        double slope = st->score[fw] - st->score[aw];
        if (!(slope > 0.0)) break;
        const double *pf = vert_u(st, fw), *pa = vert_u(st, aw);
        double curv = 0.0;
        for (int j = 0; j < st->p; ++j) curv += st->d[j] * (pf[j] - pa[j]) * (pf[j] - pa[j]);
        double tmax = st->w[away];
        double step = curv > 0.0 ? fmin(slope / curv, tmax) : tmax;
        for (int j = 0; j < st->p; ++j) st->zu[j] += step * (pf[j] - pa[j]);
        for (int k = 0; k < st->q; ++k) st->zv[k] += step * (vert_v(st, fw, k) - vert_v(st, aw, k));
        int tf = find_active(st, fw);
        if (tf < 0) {
            tf = st->m++;
            st->active[tf] = fw;
            st->w[tf] = 0.0;
        }
        st->w[tf] += step;
        if (step >= tmax) {
            drop_active(st, away);
        } else {
            st->w[away] -= step;
        }
    }
    recompute_point(st);
    return it;
}

/* A nonzero x (cols) with M x = 0 when the columns of M (rows x cols,
 * row-major, destroyed) are linearly dependent, by reduction to row
 * echelon form with complete pivoting; false when they are independent. */
static bool null_vector(int rows, int cols, double *M, double *x, int *perm) {
    const double tol = 1e-9; /* entries are coordinates in [0, 1] and ones */
    for (int j = 0; j < cols; ++j) perm[j] = j;
    int r;
    for (r = 0; r < rows && r < cols; ++r) {
        int pi = r, pj = r;
        double big = 0.0;
        for (int i = r; i < rows; ++i)
            for (int jj = r; jj < cols; ++jj) {
                double mag = fabs(M[(size_t)i * (size_t)cols + (size_t)perm[jj]]);
                if (mag > big) big = mag, pi = i, pj = jj;
            }
        if (big <= tol) break;
        if (pi != r)
            for (int j = 0; j < cols; ++j) {
                double tmp = M[(size_t)r * (size_t)cols + (size_t)j];
                M[(size_t)r * (size_t)cols + (size_t)j] = M[(size_t)pi * (size_t)cols + (size_t)j];
                M[(size_t)pi * (size_t)cols + (size_t)j] = tmp;
            }
        int tmp = perm[r];
        perm[r] = perm[pj];
        perm[pj] = tmp;
        double *row = M + (size_t)r * (size_t)cols;
        double piv = row[perm[r]];
        for (int j = 0; j < cols; ++j) row[j] /= piv;
        for (int i = 0; i < rows; ++i) {
            if (i == r) continue;
            double *other = M + (size_t)i * (size_t)cols;
            double factor = other[perm[r]];
            if (factor == 0.0) continue;
            for (int j = 0; j < cols; ++j) other[j] -= factor * row[j];
        }
    }
    if (r == cols) return false;
    int free_col = perm[r];
    for (int j = 0; j < cols; ++j) x[j] = 0.0;
    x[free_col] = 1.0;
    for (int i = 0; i < r; ++i) x[perm[i]] = -M[(size_t)i * (size_t)cols + (size_t)free_col];
    return true;
}

/* While the active vertices are affinely dependent in u, moves the weights
 * along the dependence (which leaves u unchanged) in the direction that
 * does not decrease the objective until a weight reaches zero, and drops
 * that vertex. Afterwards the KKT system of the active set is regular. */
static void make_affinely_independent(qp_state *st, double *dir, int *perm) {
    while (st->m > 1) {
        int rows = st->p + 1, cols = st->m;
        double *M = st->null_work;
        for (int t = 0; t < cols; ++t) {
            const double *pu = vert_u(st, st->active[t]);
            for (int j = 0; j < st->p; ++j) M[(size_t)j * (size_t)cols + (size_t)t] = pu[j];
            M[(size_t)st->p * (size_t)cols + (size_t)t] = 1.0;
        }
        if (!null_vector(rows, cols, M, dir, perm)) return;
        /* Along dir, u is fixed, so the objective changes by lin . dir. */
        double slope = 0.0;
        for (int t = 0; t < cols; ++t) slope += dir[t] * st->lin[st->active[t]];
        if (slope < 0.0)
            for (int t = 0; t < cols; ++t) dir[t] = -dir[t];
        int hit = -1;
        double step = HUGE_VAL;
        for (int t = 0; t < cols; ++t)
            if (dir[t] < 0.0 && st->w[t] / -dir[t] < step) step = st->w[t] / -dir[t], hit = t;
        if (hit < 0) return; /* cannot happen: dir sums to zero */
        for (int t = 0; t < cols; ++t) st->w[t] = fmax(0.0, st->w[t] + step * dir[t]);
        drop_active(st, hit);
    }
}

/* Solves A x = rhs (n x n, row-major) by Gaussian elimination with partial
 * pivoting and two steps of iterative refinement; -1 if A is singular. */
static int solve_dense(int n, const double *A, const double *rhs, double *x) {
    double LU[KKT_MAX * KKT_MAX], r[KKT_MAX], dx[KKT_MAX];
    int piv[KKT_MAX];
    if (n > KKT_MAX) return -1;
    memcpy(LU, A, (size_t)n * (size_t)n * sizeof *LU);
    double big = 0.0;
    for (int i = 0; i < n * n; ++i) big = fmax(big, fabs(A[i]));
    for (int k = 0; k < n; ++k) {
        int pk = k;
        for (int i = k + 1; i < n; ++i)
            if (fabs(LU[i * n + k]) > fabs(LU[pk * n + k])) pk = i;
        if (!(fabs(LU[pk * n + k]) > 1e-14 * big)) return -1;
        piv[k] = pk;
        if (pk != k)
            for (int j = 0; j < n; ++j) {
                double tmp = LU[k * n + j];
                LU[k * n + j] = LU[pk * n + j];
                LU[pk * n + j] = tmp;
            }
        for (int i = k + 1; i < n; ++i) {
            LU[i * n + k] /= LU[k * n + k];
            for (int j = k + 1; j < n; ++j) LU[i * n + j] -= LU[i * n + k] * LU[k * n + j];
        }
    }
    for (int i = 0; i < n; ++i) x[i] = 0.0;
    memcpy(r, rhs, (size_t)n * sizeof *r);
    for (int round = 0; round < 3; ++round) {
        /* Solve LU dx = P r. */
        for (int k = 0; k < n; ++k) {
            double tmp = r[k];
            r[k] = r[piv[k]];
            r[piv[k]] = tmp;
        }
        for (int i = 0; i < n; ++i) {
            dx[i] = r[i];
            for (int j = 0; j < i; ++j) dx[i] -= LU[i * n + j] * dx[j];
        }
        for (int i = n - 1; i >= 0; --i) {
            for (int j = i + 1; j < n; ++j) dx[i] -= LU[i * n + j] * dx[j];
            dx[i] /= LU[i * n + i];
        }
        for (int i = 0; i < n; ++i) x[i] += dx[i];
        for (int i = 0; i < n; ++i) {
            r[i] = rhs[i];
            for (int j = 0; j < n; ++j) r[i] -= A[i * n + j] * x[j];
        }
    }
    return 0;
}

/* Solves the KKT system of the active set,
 *   Q x + mu 1 = rhs,  1.x = rhs_sum,  Q_tt' = U_t . D U_t',
 * for x (m values; mu is discarded). With rhs = lin and rhs_sum = 1 its
 * solution maximizes lin.w - 1/2 |sum_t w_t U_t|_D^2 over the affine hull
 * (sum w = 1) of the active set. */
static int kkt_solve(const qp_state *st, const double *rhs_w, double rhs_sum, double *x_out) {
    int m = st->m, n = m + 1;
    double A[KKT_MAX * KKT_MAX], rhs[KKT_MAX], x[KKT_MAX];
    if (n > KKT_MAX) return -1;
    for (int t = 0; t < m; ++t) {
        const double *pt = vert_u(st, st->active[t]);
        for (int s = 0; s < m; ++s) {
            const double *ps = vert_u(st, st->active[s]);
            double qts = 0.0;
            for (int j = 0; j < st->p; ++j) qts += st->d[j] * pt[j] * ps[j];
            A[t * n + s] = qts;
        }
        A[t * n + m] = 1.0;
        A[m * n + t] = 1.0;
        rhs[t] = rhs_w[t];
    }
    A[m * n + m] = 0.0;
    rhs[m] = rhs_sum;
    if (solve_dense(n, A, rhs, x)) return -1;
    memcpy(x_out, x, (size_t)m * sizeof *x_out);
    return 0;
}

static int affine_optimum(const qp_state *st, double *what) {
    double rhs[KKT_MAX];
    if (st->m + 1 > KKT_MAX) return -1;
    for (int t = 0; t < st->m; ++t) rhs[t] = st->lin[st->active[t]];
    return kkt_solve(st, rhs, 1.0, what);
}

/* Iterative refinement of the affine optimum `what` with residuals that
 * are more accurate than the solve: at the affine optimum every active
 * vertex has the same score, so their gaps (exact-difference form) at the
 * point of weights `what` are the residual of the KKT rows; the correction
 * solves the KKT system for them, with the weights' sum unchanged. This
 * resolves tiny weights (a vertex entering with weight ~gap / curvature)
 * that the first solve only gets to within rounding of the large ones. */
static void refine_affine_optimum(qp_state *st, double *what) {
    double saved[KKT_MAX], r[KKT_MAX], dw[KKT_MAX], err;
    size_t bytes = (size_t)st->m * sizeof *what;
    memcpy(saved, st->w, bytes);
    for (int round = 0; round < 2; ++round) {
        memcpy(st->w, what, bytes);
        recompute_point(st);
        for (int t = 0; t < st->m; ++t) r[t] = vertex_gap(st, st->active[t], &err);
        if (kkt_solve(st, r, 0.0, dw)) break;
        for (int t = 0; t < st->m; ++t) what[t] += dw[t];
    }
    memcpy(st->w, saved, bytes);
    recompute_point(st);
}

int ref_qp(const ref_factor *f, const double *a, const double *b, const double *d,
           double *u, double *v, ref_qp_report *report) {
    ref_points pts;
    ref_qp_report rep = {0, 0, 0, NAN, NAN, NAN};
    if (report) *report = rep;
    if (ref_factor_vertices(f, &pts)) return -1;
    qp_state st = {0};
    st.pts = &pts;
    st.a = a, st.b = b, st.d = d;
    st.p = pts.degree, st.q = pts.n_add, st.n = pts.count;
    st.scale = ref_qp_scale(f, a, b, d);
    if (!(st.scale > 0.0)) st.scale = 1.0;
    rep.scale = st.scale;
    size_t n = (size_t)st.n;
    st.lin = malloc(n * sizeof *st.lin);
    st.score = malloc(n * sizeof *st.score);
    st.active = malloc((n + 1) * sizeof *st.active);
    st.w = malloc((n + 1) * sizeof *st.w);
    st.zu = malloc((size_t)st.p * sizeof *st.zu);
    st.zv = malloc((size_t)(st.q + 1) * sizeof *st.zv);
    st.null_work = malloc((size_t)(st.p + 1) * (n + 1) * sizeof *st.null_work);
    double *dir = malloc((n + 1) * sizeof *dir);
    int *perm = malloc((n + 1) * sizeof *perm);
    int status = -1;
    if (!st.lin || !st.score || !st.active || !st.w || !st.zu || !st.zv || !st.null_work ||
        !dir || !perm)
        goto done;

    /* Start from the best vertex for the linear part. */
    int start = 0;
    for (int s = 0; s < st.n; ++s) {
        st.lin[s] = point_score(&pts, s, a, b);
        if (st.lin[s] > st.lin[start]) start = s;
    }
    st.m = 1;
    st.active[0] = start;
    st.w[0] = 1.0;
    rep.fw_iterations = frank_wolfe(&st, 400);

    /* Polish: a primal active-set method on the vertex weights, started
     * from the Frank-Wolfe combination. */
    double what[KKT_MAX];
    int max_steps = 200 + 4 * st.n, best = 0, last_added = -1;
    double gap = HUGE_VAL;
    for (rep.polish_steps = 0; rep.polish_steps < max_steps; ++rep.polish_steps) {
        make_affinely_independent(&st, dir, perm);
        if (affine_optimum(&st, what)) break;
        refine_affine_optimum(&st, what);
        int hit = -1;
        double step = 1.0;
        for (int t = 0; t < st.m; ++t)
            if (what[t] < 0.0) {
                double ratio = st.w[t] / (st.w[t] - what[t]);
                if (ratio < step) step = ratio, hit = t;
            }
        if (hit >= 0 && step == 0.0 && st.active[hit] == last_added) {
            /* The vertex just added cannot enter: numerically optimal. */
            drop_active(&st, hit);
            break;
        }
        if (hit >= 0) {
            /* Move toward the affine optimum until a weight vanishes. */
            for (int t = 0; t < st.m; ++t) st.w[t] = fmax(0.0, st.w[t] + step * (what[t] - st.w[t]));
            drop_active(&st, hit);
            continue;
        }
        memcpy(st.w, what, (size_t)st.m * sizeof *st.w);
        recompute_point(&st);
        double err;
        gap = best_gap(&st, &best, &err);
        /* Stop at the typical rounding level, not the worst-case bound: a
         * vertex left out with a positive gap moves u by gap / curvature. */
        if (gap <= 2.0 * 2.220446049250313e-16 * err) break;
        if (find_active(&st, best) >= 0) break; /* no further progress possible */
        st.active[st.m] = best;
        st.w[st.m] = 0.0;
        last_added = best;
        ++st.m;
    }

    /* Verify the KKT conditions: a convex combination, whose linear-oracle
     * gap is small, and whose best vertex outside the active set improves
     * on the best active vertex only by rounding (the active vertices'
     * own gaps measure the accuracy of the last KKT solve). */
    double total = 0.0, min_w = HUGE_VAL;
    for (int t = 0; t < st.m; ++t) {
        total += st.w[t];
        min_w = fmin(min_w, st.w[t]);
    }
    recompute_point(&st);
    double err, active_gap = -HUGE_VAL, active_err = 0.0;
    gap = best_gap(&st, &best, &err);
    for (int t = 0; t < st.m; ++t) {
        double e, g = vertex_gap(&st, st.active[t], &e);
        if (g > active_gap) active_gap = g, active_err = e;
    }
    rep.gap = gap;
    rep.min_weight = min_w;
    rep.support = 0;
    for (int t = 0; t < st.m; ++t) rep.support += st.w[t] > 0.0;
    if (min_w >= -1e-12 && fabs(total - 1.0) <= 1e-12 && gap <= 1e-11 * st.scale &&
        gap - active_gap <= gap_noise(&st, err) + gap_noise(&st, active_err))
        status = 0;
    for (int j = 0; j < st.p; ++j) u[j] = st.zu[j];
    for (int k = 0; k < st.q; ++k) v[k] = st.zv[k];

done:
    if (report) *report = rep;
    free(st.lin);
    free(st.score);
    free(st.active);
    free(st.w);
    free(st.zu);
    free(st.zv);
    free(st.null_work);
    free(dir);
    free(perm);
    ref_points_free(&pts);
    return status;
}

/* ------------------------------------------------------------------------
 * Random inputs
 * ------------------------------------------------------------------------ */

static double log_uniform(test_rng *r, double lo, double hi) {
    return exp(log(lo) + (log(hi) - log(lo)) * rng_uniform(r));
}

void ref_draw_factor(test_rng *r, ref_kind kind, int max_degree, ref_factor *f) {
    memset(f, 0, sizeof *f);
    f->kind = kind;
    int min_degree = (kind == REF_OROUT || kind == REF_ANDOUT) ? 2 : 1;
    if (max_degree < min_degree) max_degree = min_degree;
    f->degree = kind == REF_PAIR ? 2 : min_degree + rng_int(r, max_degree - min_degree + 1);
    for (int j = 0; j < f->degree; ++j) {
        f->vars[j] = j;
        f->negated[j] = kind != REF_PAIR && rng_int(r, 2);
    }
    switch (kind) {
    case REF_BUDGET: f->budget = rng_int(r, f->degree + 2); break;
    case REF_BUDGET_EXACT: f->budget = rng_int(r, f->degree + 1); break;
    case REF_KNAPSACK: {
        double total = 0.0;
        for (int j = 0; j < f->degree; ++j) {
            int pick = rng_int(r, 20);
            f->costs[j] = pick < 3 ? 0.0 : pick < 10 ? (double)(1 + rng_int(r, 3))
                                                     : 0.05 + 1.95 * rng_uniform(r);
            total += f->costs[j];
        }
        int pick = rng_int(r, 20);
        if (pick < 3) f->budget = 0.0;
        else if (pick < 8) f->budget = rng_int(r, (int)ceil(total) + 1);
        else f->budget = (total > 0.0 ? 1.1 * total : 1.0) * rng_uniform(r);
        break;
    }
    default: break;
    }
}

void ref_draw_curvatures(test_rng *r, int degree, double *d) {
    int regime = rng_int(r, 4);
    double common = log_uniform(r, 1e-3, 1e3);
    for (int j = 0; j < degree; ++j) {
        switch (regime) {
        case 0: d[j] = log_uniform(r, 1e-3, 1e3); break;
        case 1: d[j] = common; break;
        case 2: d[j] = 1.0; break;
        default: d[j] = log_uniform(r, 0.5, 2.0); break;
        }
    }
}

static double draw_value(test_rng *r, int regime, double power, const double *pool,
                         double dj) {
    switch (regime) {
    case 0: return rng_normal(r);
    case 1: return power * rng_normal(r);
    case 2: return (double)(rng_int(r, 7) - 3);
    case 3: return pool[rng_int(r, 2)];
    case 4: return dj * (-0.5 + 2.0 * rng_uniform(r));
    case 5: return dj * 0.5 * (double)(rng_int(r, 5) - 1);
    default: return dj * (0.5 * (double)(rng_int(r, 5) - 1) + 1e-9 * rng_normal(r));
    }
}

void ref_draw_scores(test_rng *r, const ref_factor *f, const double *d, double *a, double *b) {
    int regime = rng_int(r, d ? 7 : 4);
    double power = pow(10.0, (double)(rng_int(r, 7) - 3));
    double pool[2];
    pool[0] = rng_normal(r);
    pool[1] = rng_int(r, 3) ? rng_normal(r) : pool[0];
    for (int j = 0; j < f->degree; ++j) a[j] = draw_value(r, regime, power, pool, d ? d[j] : 1.0);
    for (int k = 0; k < ref_num_additionals(f); ++k) {
        int pick = rng_int(r, 8);
        if (pick < 2) {
            b[k] = 0.0;
        } else {
            int bregime = rng_int(r, d ? 7 : 4);
            double scale = d ? 0.5 * (d[0] + d[f->degree - 1]) : 1.0;
            b[k] = draw_value(r, bregime, power, pool, scale);
        }
    }
}

void ref_print_case(const ref_factor *f, const double *a, const double *b, const double *d) {
    fprintf(stderr, "  kind %s degree %d", ref_kind_name(f->kind), f->degree);
    if (f->kind == REF_BUDGET || f->kind == REF_BUDGET_EXACT || f->kind == REF_KNAPSACK)
        fprintf(stderr, " budget %.17g", f->budget);
    fprintf(stderr, "\n  negated {");
    for (int j = 0; j < f->degree; ++j) fprintf(stderr, "%s%d", j ? ", " : "", f->negated[j]);
    fprintf(stderr, "}\n");
    if (f->kind == REF_KNAPSACK) ref_print_vector("costs", f->degree, f->costs);
    ref_print_vector("a", f->degree, a);
    if (ref_num_additionals(f)) fprintf(stderr, "  b {%.17g}\n", b[0]);
    if (d) ref_print_vector("d", f->degree, d);
}

void ref_print_vector(const char *name, int n, const double *x) {
    fprintf(stderr, "  %s {", name);
    for (int j = 0; j < n; ++j) fprintf(stderr, "%s%.17g", j ? ", " : "", x[j]);
    fprintf(stderr, "}\n");
}
