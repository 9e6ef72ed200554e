/*
 * Active-set solution of a factor's weighted QP from its MAP oracle (see
 * active_set.h for the problem and the matrix K).
 *
 * Invariants: the active configurations are affinely independent in the
 * D-metric, so K is invertible; their weights p are positive and sum to 1.
 * An iteration solves K [tau; p*] = [1; c] with c_s = a.u_s + b.v_s. If p*
 * leaves the simplex, p moves towards p* until a weight reaches zero and
 * that configuration leaves. Otherwise p = p*, and the oracle is asked for
 * the best configuration under the gradient scores (a - D u, b): if it
 * scores no more than tau, p is optimal; else it enters. A configuration
 * whose entry would make K singular is affinely dependent on the active ones:
 * along the null direction the objective is linear and increasing, so the
 * weights move along it until one reaches zero and leaves, which restores
 * independence (the degenerate step).
 */
#include "active_set.h"

#include <math.h>
#include <string.h>

struct active_set {
    int32_t degree, n_add;
    int32_t capacity;    /* most configurations held */
    int32_t config_size; /* most ones in a configuration */
    int32_t size;        /* active configurations */
    int32_t updates;     /* inverse updates since the last rebuild */
    bool have_d;
    bool uniform;    /* every d_i is the same */
    double *d;       /* the d the inverse was built for (degree) */
    double *mark;    /* degree: d_i on the links of the configuration being
                        bordered, 0 elsewhere (kept all zero in between) */
    double *p;       /* weights (capacity) */
    double *score;   /* per configuration: its score under the a, b of the
                        solve under way (capacity) */
    double *kinv;    /* inverse of K, (capacity+1)^2, row stride capacity+1 */
    double *kinv_w;  /* the same for the metric of the backward pass */
    int32_t jvp_size; /* configurations kinv_w was built for (-1: none) */
    int32_t *ones;   /* configurations: capacity rows of config_size */
    int32_t *count;  /* ones per configuration */
    uint64_t *hash;  /* of each configuration's index list */
    int32_t *cand;   /* the oracle's configuration (config_size) */
    double *rhs, *sol, *w; /* capacity+1 each */
};

enum { MAX_CONFIGS = 128, REBUILD_EVERY = 256 };

static int32_t capacity_of(const factor *f) {
    int64_t k = (int64_t)f->degree + 1;
    return k > MAX_CONFIGS ? MAX_CONFIGS : (int32_t)k;
}

static int32_t config_size_of(const factor *f) {
    return f->ops->config_size ? f->ops->config_size(f) : f->degree + f->n_add;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

size_t active_set_bytes(const factor *f) {
    size_t k = (size_t)capacity_of(f), l = (size_t)config_size_of(f);
    size_t bytes = align8(sizeof(active_set));
    bytes += 2 * align8((size_t)f->degree * sizeof(double));
    bytes += 2 * align8(k * sizeof(double));
    bytes += 2 * align8((k + 1) * (k + 1) * sizeof(double));
    bytes += align8(k * l * sizeof(int32_t));
    bytes += align8(k * sizeof(int32_t));
    bytes += align8(k * sizeof(uint64_t));
    bytes += align8(l * sizeof(int32_t));
    bytes += 3 * align8((k + 1) * sizeof(double));
    return bytes;
}

active_set *active_set_init(const factor *f, void *memory) {
    char *m = memory;
    active_set *s = (active_set *)m;
    memset(s, 0, sizeof *s);
    s->degree = f->degree;
    s->n_add = f->n_add;
    s->capacity = capacity_of(f);
    s->config_size = config_size_of(f);
    size_t k = (size_t)s->capacity, l = (size_t)s->config_size;
    m += align8(sizeof(active_set));
    s->d = (double *)m, m += align8((size_t)f->degree * sizeof(double));
    s->mark = (double *)m, m += align8((size_t)f->degree * sizeof(double));
    memset(s->mark, 0, (size_t)f->degree * sizeof(double));
    s->p = (double *)m, m += align8(k * sizeof(double));
    s->score = (double *)m, m += align8(k * sizeof(double));
    s->kinv = (double *)m, m += align8((k + 1) * (k + 1) * sizeof(double));
    s->kinv_w = (double *)m, m += align8((k + 1) * (k + 1) * sizeof(double));
    s->jvp_size = -1;
    s->ones = (int32_t *)m, m += align8(k * l * sizeof(int32_t));
    s->count = (int32_t *)m, m += align8(k * sizeof(int32_t));
    s->hash = (uint64_t *)m, m += align8(k * sizeof(uint64_t));
    s->cand = (int32_t *)m, m += align8(l * sizeof(int32_t));
    s->rhs = (double *)m, m += align8((k + 1) * sizeof(double));
    s->sol = (double *)m, m += align8((k + 1) * sizeof(double));
    s->w = (double *)m;
    return s;
}

void active_set_reset(active_set *s) {
    s->size = 0;
    s->jvp_size = -1;
    /* Forget the weights and the update count too: a reset solve then
     * repeats the first one bit for bit, whatever ran before. */
    s->have_d = false;
    s->updates = 0;
}

int32_t active_set_size(const active_set *s) { return s->size; }
double active_set_weight(const active_set *s, int32_t k) { return s->p[k]; }
int32_t active_set_config(const active_set *s, int32_t k, const int32_t **ones) {
    *ones = s->ones + (size_t)k * (size_t)s->config_size;
    return s->count[k];
}

static inline double *at(const active_set *s, double *matrix, int32_t i, int32_t j) {
    return &matrix[(size_t)i * (size_t)(s->capacity + 1) + (size_t)j];
}

static inline double *kinv_at(active_set *s, int32_t i, int32_t j) {
    return at(s, s->kinv, i, j);
}

/* x . y with four partial sums: a single running sum waits on each
 * addition, and these products are the active set's inner loops. */
static double dot(const double *x, const double *y, int32_t n) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * y[i];
        s1 += x[i + 1] * y[i + 1];
        s2 += x[i + 2] * y[i + 2];
        s3 += x[i + 3] * y[i + 3];
    }
    for (; i < n; ++i) s0 += x[i] * y[i];
    return (s0 + s1) + (s2 + s3);
}

static uint64_t hash_list(const int32_t *x, int32_t n) {
    uint64_t h = 1469598103934665603ull;
    for (int32_t k = 0; k < n; ++k) {
        h ^= (uint64_t)(uint32_t)x[k];
        h *= 1099511628211ull;
    }
    return h;
}

/* u_x^T D u_t for the configuration x marked in s->mark: the sum of d
 * over the links t switches on that x does too (t's links come first in
 * its sorted list). */
static double gram_marked(const active_set *s, const int32_t *t, int32_t nt) {
    double sum = 0.0;
    for (int32_t j = 0; j < nt && t[j] < s->degree; ++j) sum += s->mark[t[j]];
    return sum;
}

/* Marks configuration x's links with their d; returns u_x^T D u_x. */
static double mark_links(active_set *s, const double *d, const int32_t *x, int32_t n) {
    double gamma = 0.0;
    for (int32_t j = 0; j < n && x[j] < s->degree; ++j) {
        s->mark[x[j]] = d[x[j]];
        gamma += d[x[j]];
    }
    return gamma;
}

static void unmark_links(active_set *s, const int32_t *x, int32_t n) {
    for (int32_t j = 0; j < n && x[j] < s->degree; ++j) s->mark[x[j]] = 0.0;
}

static double score(const active_set *s, const int32_t *x, int32_t n, const double *a,
                    const double *b) {
    double sum = 0.0;
    for (int32_t k = 0; k < n; ++k) sum += x[k] < s->degree ? a[x[k]] : b[x[k] - s->degree];
    return sum;
}

static const int32_t *config(const active_set *s, int32_t k) {
    return s->ones + (size_t)k * (size_t)s->config_size;
}

/* Borders `inv`, the inverse of K for metric d over the first `size`
 * configurations, with configuration x. Returns 0 and leaves
 * K^{-1} [1; q] in s->w when x is affinely dependent on them (the Schur
 * complement vanishes); NO_ROOM, writing nothing, when x is independent
 * but `size` is the capacity; 1 when the bordered inverse was written. */
enum { NO_ROOM = 2 };
static int border_into(active_set *s, double *inv, const double *d, int32_t size,
                       const int32_t *x, int32_t n) {
    const int32_t m = size + 1; /* current matrix order */
    double gamma = mark_links(s, d, x, n);
    if (size == 0) {
        unmark_links(s, x, n);
        *at(s, inv, 0, 0) = -gamma;
        *at(s, inv, 0, 1) = *at(s, inv, 1, 0) = 1.0;
        *at(s, inv, 1, 1) = 0.0;
        return 1;
    }
    double *q = s->rhs;
    q[0] = 1.0;
    for (int32_t t = 0; t < size; ++t) q[t + 1] = gram_marked(s, config(s, t), s->count[t]);
    unmark_links(s, x, n);
    double schur = gamma;
    for (int32_t i = 0; i < m; ++i) {
        double wi = dot(at(s, inv, i, 0), q, m);
        s->w[i] = wi;
        schur -= q[i] * wi;
    }
    if (!(schur > 1e-11 * (gamma > 1e-300 ? gamma : 1e-300))) return 0;
    if (size == s->capacity) return NO_ROOM;
    for (int32_t i = 0; i < m; ++i) {
        const double wi = s->w[i] / schur;
        double *row = at(s, inv, i, 0);
        for (int32_t j = 0; j < m; ++j) row[j] += wi * s->w[j];
        *at(s, inv, i, m) = *at(s, inv, m, i) = -wi;
    }
    *at(s, inv, m, m) = 1.0 / schur;
    return 1;
}

/* Borders the active set's inverse with configuration x and, when it is
 * independent of the active ones, appends it with weight 0. */
static int border(active_set *s, const int32_t *x, int32_t n) {
    int outcome = border_into(s, s->kinv, s->d, s->size, x, n);
    if (outcome != 1) return outcome;
    int32_t k = s->size;
    memcpy(s->ones + (size_t)k * (size_t)s->config_size, x, (size_t)n * sizeof(int32_t));
    s->count[k] = n;
    s->hash[k] = hash_list(x, n);
    s->p[k] = 0.0;
    s->size += 1;
    s->updates += 1;
    s->jvp_size = -1;
    return 1;
}

/* Removes configuration r: downdates the inverse, then moves the last
 * configuration into its slot. */
static void remove_config(active_set *s, int32_t r) {
    const int32_t m = s->size + 1, rr = r + 1;
    double pivot = *kinv_at(s, rr, rr);
    const double *pivot_row = kinv_at(s, rr, 0);
    for (int32_t i = 0; i < m; ++i) {
        if (i == rr) continue;
        double factor_i = *kinv_at(s, i, rr) / pivot;
        double *row = kinv_at(s, i, 0);
        /* column rr too: it is overwritten or dropped below */
        for (int32_t j = 0; j < m; ++j) row[j] -= factor_i * pivot_row[j];
    }
    int32_t last = m - 1;
    if (rr != last) {
        for (int32_t i = 0; i < m; ++i) *kinv_at(s, i, rr) = *kinv_at(s, i, last);
        for (int32_t j = 0; j < m; ++j) *kinv_at(s, rr, j) = *kinv_at(s, last, j);
        int32_t k = s->size - 1;
        memcpy(s->ones + (size_t)r * (size_t)s->config_size, config(s, k),
               (size_t)s->count[k] * sizeof(int32_t));
        s->count[r] = s->count[k];
        s->hash[r] = s->hash[k];
        s->p[r] = s->p[k];
        s->score[r] = s->score[k];
    }
    s->size -= 1;
    s->updates += 1;
    s->jvp_size = -1;
}

/* Rebuilds the inverse from scratch by bordering the configurations in
 * turn (after d changed, or to shed accumulated rounding). A configuration
 * that no longer enters cleanly is dropped. */
static void rebuild(active_set *s) {
    int32_t n = s->size;
    double total = 0.0;
    s->size = 0;
    for (int32_t k = 0; k < n; ++k) {
        double pk = s->p[k], score_k = s->score[k];
        /* border() appends at s->size <= k, so slot k is read before reuse */
        int32_t cnt = s->count[k];
        if (s->size != k) {
            memmove(s->ones + (size_t)s->size * (size_t)s->config_size, config(s, k),
                    (size_t)cnt * sizeof(int32_t));
        }
        if (border(s, config(s, s->size), cnt) == 1) {
            s->p[s->size - 1] = pk;
            s->score[s->size - 1] = score_k;
            total += pk;
        }
    }
    if (s->size > 0 && total > 0.0)
        for (int32_t k = 0; k < s->size; ++k) s->p[k] /= total;
    else if (s->size > 0)
        for (int32_t k = 0; k < s->size; ++k) s->p[k] = 1.0 / s->size;
    s->updates = 0;
}

/* When every d_i is multiplied by rho, K = [0 1^T; 1 Q] becomes
 * [0 1^T; 1 rho Q], whose inverse is the old one with its tau entry
 * multiplied by rho and its weight block divided by rho (the mixed blocks
 * stay): an O(k^2) update instead of a rebuild. */
static void rescale(active_set *s, double rho) {
    const int32_t m = s->size + 1;
    if (s->size == 0) return;
    *kinv_at(s, 0, 0) *= rho;
    for (int32_t i = 1; i < m; ++i)
        for (int32_t j = 1; j < m; ++j) *kinv_at(s, i, j) /= rho;
}

/* The oracle's configuration as a sorted index list in s->cand. */
static int32_t oracle_config(active_set *s, const double *u, const double *v) {
    int32_t n = 0;
    for (int32_t i = 0; i < s->degree && n < s->config_size; ++i)
        if (u[i] > 0.5) s->cand[n++] = i;
    for (int32_t k = 0; k < s->n_add && n < s->config_size; ++k)
        if (v[k] > 0.5) s->cand[n++] = s->degree + k;
    return n;
}

static int32_t find_config(const active_set *s, const int32_t *x, int32_t n) {
    uint64_t h = hash_list(x, n);
    for (int32_t k = 0; k < s->size; ++k)
        if (s->hash[k] == h && s->count[k] == n &&
            memcmp(config(s, k), x, (size_t)n * sizeof(int32_t)) == 0)
            return k;
    return -1;
}

/* u = sum_k p_k u_k and v likewise (literal space). */
static void combine(const active_set *s, double *u, double *v) {
    for (int32_t i = 0; i < s->degree; ++i) u[i] = 0.0;
    for (int32_t k = 0; k < s->n_add; ++k) v[k] = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const int32_t *x = config(s, k);
        for (int32_t j = 0; j < s->count[k]; ++j) {
            if (x[j] < s->degree) u[x[j]] += s->p[k];
            else v[x[j] - s->degree] += s->p[k];
        }
    }
}

/* The degenerate step for a configuration x dependent on the active set,
 * with s->w = K^{-1} [1; q]: increasing x's weight by t while moving the
 * active weights by -t w keeps u fixed and the objective increasing. */
static int degenerate_step(active_set *s, const int32_t *x, int32_t n) {
    int32_t r = -1;
    double t = INFINITY;
    for (int32_t k = 0; k < s->size; ++k) {
        double wk = s->w[k + 1];
        if (wk > 1e-12 && s->p[k] / wk < t) {
            t = s->p[k] / wk;
            r = k;
        }
    }
    if (r < 0) return 0;
    for (int32_t k = 0; k < s->size; ++k) s->p[k] -= t * s->w[k + 1];
    s->p[r] = 0.0;
    remove_config(s, r);
    if (border(s, x, n) == 1) {
        s->p[s->size - 1] = t;
        return 1;
    }
    double total = 0.0; /* still dependent (rounding): keep a valid point */
    for (int32_t k = 0; k < s->size; ++k) total += s->p[k];
    for (int32_t k = 0; k < s->size; ++k) s->p[k] /= total;
    return 0;
}

active_set_result active_set_solve(active_set *s, const factor *f, const double *a,
                                   const double *b, const double *d, double *u, double *v,
                                   int32_t max_iter, factor_buffers *buf) {
    active_set_result res = {0, false, 0};
    if (!s->have_d || memcmp(s->d, d, (size_t)s->degree * sizeof(double)) != 0) {
        int uniform = 1;
        for (int32_t i = 1; i < s->degree && uniform; ++i) uniform = d[i] == d[0];
        if (s->have_d && s->uniform && uniform && s->degree > 0) {
            rescale(s, d[0] / s->d[0]);
        } else {
            memcpy(s->d, d, (size_t)s->degree * sizeof(double));
            s->have_d = true;
            rebuild(s);
        }
        memcpy(s->d, d, (size_t)s->degree * sizeof(double));
        s->uniform = uniform;
    } else if (s->updates > REBUILD_EVERY) {
        rebuild(s);
    }
    if (s->size == 0) {
        f->ops->map(f, a, b, buf->oracle_u, buf->oracle_v, buf->scratch);
        res.oracle_calls++;
        if ((res.error = factor_failure(f, buf->scratch))) return res;
        int32_t n = oracle_config(s, buf->oracle_u, buf->oracle_v);
        border(s, s->cand, n);
        s->p[0] = 1.0;
    }
    for (int32_t k = 0; k < s->size; ++k) s->score[k] = score(s, config(s, k), s->count[k], a, b);
    /* Every pass either calls the oracle or removes a configuration, and a
     * removal follows an entry, so this bounds the passes as well. */
    int refreshed = 0, combined = 0; /* combined: u, v are those of p */
    for (int32_t pass = 0; pass < 4 * max_iter + 8; ++pass) {
        const int32_t m = s->size + 1;
        s->rhs[0] = 1.0;
        double scale = 1.0;
        for (int32_t k = 0; k < s->size; ++k) {
            s->rhs[k + 1] = s->score[k];
            if (fabs(s->score[k]) > scale) scale = fabs(s->score[k]);
        }
        for (int32_t i = 0; i < m; ++i) s->sol[i] = dot(kinv_at(s, i, 0), s->rhs, m);
        double tau = s->sol[0];
        /* Ratio test towards p*: the first weight to reach zero leaves. */
        int32_t r = -1;
        double step = 1.0;
        for (int32_t k = 0; k < s->size; ++k) {
            double target = s->sol[k + 1];
            if (target < -1e-14 && target < s->p[k]) {
                double ratio = s->p[k] / (s->p[k] - target);
                if (ratio < step) {
                    step = ratio;
                    r = k;
                }
            }
        }
        if (r >= 0) {
            for (int32_t k = 0; k < s->size; ++k) s->p[k] += step * (s->sol[k + 1] - s->p[k]);
            s->p[r] = 0.0;
            remove_config(s, r);
            continue;
        }
        double total = 0.0;
        for (int32_t k = 0; k < s->size; ++k) {
            s->p[k] = s->sol[k + 1] > 0.0 ? s->sol[k + 1] : 0.0;
            total += s->p[k];
        }
        for (int32_t k = 0; k < s->size; ++k) s->p[k] /= total;
        if (res.oracle_calls >= max_iter) break;
        combine(s, u, v);
        combined = 1;
        for (int32_t i = 0; i < s->degree; ++i) buf->oracle_a[i] = a[i] - d[i] * u[i];
        double best = f->ops->map(f, buf->oracle_a, b, buf->oracle_u, buf->oracle_v, buf->scratch);
        res.oracle_calls++;
        if ((res.error = factor_failure(f, buf->scratch))) break;
        if (best <= tau + 1e-12 * scale) {
            res.exact = true;
            break;
        }
        int32_t n = oracle_config(s, buf->oracle_u, buf->oracle_v);
        combined = 0; /* the paths below may move the weights */
        if (find_config(s, s->cand, n) >= 0) {
            /* The best configuration is already active although the gap
             * is positive: the updated inverse has drifted. Rebuild it once
             * and solve again; if that changes nothing, the gap is rounding. */
            if (refreshed) {
                res.exact = true;
                break;
            }
            rebuild(s);
            refreshed = 1;
            continue;
        }
        int entered = border(s, s->cand, n);
        if (entered == NO_ROOM) break;
        if (entered == 0 && !degenerate_step(s, s->cand, n)) break;
        /* either way the entering configuration holds the last slot */
        s->score[s->size - 1] = score(s, s->cand, n, a, b);
    }
    if (!combined) combine(s, u, v);
    return res;
}

int active_set_prepare_jvp(active_set *s, const double *w) {
    for (int32_t k = 0; k < s->size; ++k)
        if (!border_into(s, s->kinv_w, w, k, config(s, k), s->count[k])) return 0;
    s->jvp_size = s->size;
    return 1;
}

void active_set_jvp(active_set *s, const double *w, const double *x, const double *y,
                    double *du, double *dv) {
    const int32_t m = s->size + 1;
    /* right-hand side [0; S^T W x + N^T y] */
    s->rhs[0] = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const int32_t *c = config(s, k);
        double r = 0.0;
        for (int32_t j = 0; j < s->count[k]; ++j)
            r += c[j] < s->degree ? w[c[j]] * x[c[j]] : (y ? y[c[j] - s->degree] : 0.0);
        s->rhs[k + 1] = r;
    }
    for (int32_t i = 0; i < s->degree; ++i) du[i] = 0.0;
    for (int32_t k = 0; dv && k < s->n_add; ++k) dv[k] = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const double dp = dot(at(s, s->kinv_w, k + 1, 0), s->rhs, m);
        const int32_t *c = config(s, k);
        for (int32_t j = 0; j < s->count[k]; ++j) {
            if (c[j] < s->degree) du[c[j]] += dp;
            else if (dv) dv[c[j] - s->degree] += dp;
        }
    }
}
