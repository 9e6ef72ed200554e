/*
 * Active-set solution of a factor's weighted QP from its MAP oracle (see
 * active_set.h for the problem and the matrix K).
 *
 * Invariants: the active configurations are affinely independent in the
 * D-metric, so K is invertible; their weights p are positive and sum to 1
 * (apart from the tied configurations of weight 0 that
 * active_set_complete_face appends, which the next solve removes first).
 * An iteration solves K [tau; p*] = [1; c] with c_s = a.u_s + b.v_s. If p*
 * leaves the simplex, p moves towards p* until a weight reaches zero and
 * that configuration leaves. Otherwise p = p*, and the oracle is asked for
 * the best configuration under the gradient scores (a - D u, b): if it
 * improves the linearized objective at (u, v) by no more than rounding,
 * (u, v) is optimal (the Frank-Wolfe gap is the certificate); else it
 * enters. A configuration whose entry would make K singular is affinely
 * dependent on the active ones: along the null direction the objective is
 * linear and increasing, so the weights move along it until one reaches
 * zero and leaves, which restores independence (the degenerate step).
 *
 * Accuracy: the inverse of K is updated, not refactored, and its rounding
 * accumulates. With hundreds of overlapping configurations (a tree over a
 * thousand nodes) the error of K^{-1} [1; c] reached 1e-8 relative, far
 * above the gaps the solve must resolve: entering configurations got
 * negative weights and left at once, and the solve churned without end.
 * So the Gram matrix Q is kept too (its entries are sums of d, exact up
 * to rounding): the residual of a solve formed with Q costs O(k^2), like
 * the solve, and when it shows more than rounding the solves take a step
 * of iterative refinement (solve_target says when). Q also makes a
 * rebuild of the inverse O(k^3) with no pass over the configurations.
 *
 * Configurations are stored as the sorted indices of their nonzero
 * outputs; a user factor's additional outputs may be any value in
 * [-1, 1], and then each entry's value is stored beside its index (1 for
 * a link).
 *
 * Memory: the struct and the arrays sized by the factor (d, marks, the
 * oracle's configuration) come in one allocation; the arrays sized by the
 * capacity (weights, Q, the inverse, the configurations) in a second one,
 * replaced by one twice as large when an independent configuration finds
 * no room, up to degree + 1 configurations (more cannot be affinely
 * independent). At that bound an "independent" entry can only be rounding,
 * so it is treated as the dependent case.
 */
#include "active_set.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "concord.h"
#include "../util.h"

struct active_set {
    int32_t degree, n_add;
    int32_t config_size;  /* most ones in a configuration */
    int32_t capacity;     /* configurations there is room for now */
    int32_t max_capacity; /* degree + 1: the most that can be independent */
    int32_t size;         /* active configurations */
    int32_t updates;      /* inverse updates since the last rebuild */
    bool have_d;
    bool uniform;    /* every d_i is the same */
    bool refine;     /* refine every solve until the next rebuild */
    bool real_values; /* configurations' additional outputs may be reals */
    int32_t checked; /* the update count at the last accurate check */
    /* sized by the factor, allocated with the struct */
    double *d;       /* the d the inverse was built for (degree) */
    double *mark;    /* degree: d_i on the links of the configuration being
                        bordered, 0 elsewhere (kept all zero in between) */
    int32_t *cand;   /* the oracle's configuration (config_size) */
    double *cand_value; /* its entries' values (config_size) */
    /* sized by the capacity k, in one block */
    void *block;
    double *p;       /* weights (k) */
    double *score;   /* per configuration: its score c under the a, b of
                        the solve under way (k) */
    double *kinv;    /* inverse of K, (k+1)^2, row stride k+1 */
    double *gram;    /* Q, k^2, row stride k */
    double *rhs, *sol, *w; /* k+1 each */
    uint64_t *hash;  /* of each configuration's index list (k) */
    int32_t *count;  /* ones per configuration (k) */
    int32_t *links;  /* of which links, listed first (k) */
    int32_t *ones;   /* configurations: k rows of config_size */
    double *values;  /* with real_values, their entries' values (same
                        layout); NULL otherwise: every entry is 1 */
    /* the inverse for the metric of the backward pass, on demand */
    double *kinv_w;
    int32_t jvp_capacity; /* kinv_w has room for this many (stride +1) */
    int32_t jvp_size;     /* configurations kinv_w was built for (-1: none) */
    int32_t solution_size; /* after active_set_complete_face: the
                              configurations of the solution, which the
                              tied ones it added follow (-1: none added) */
    /* the solution's inverse of K (row stride solution_size + 1) and
     * update count as they were before the tied ones entered */
    double *solution_kinv;
    size_t solution_room; /* doubles solution_kinv has room for */
    int32_t solution_updates;
};

/* REBUILD_EVERY: inverse updates between rebuilds, at least (the
 * refinement makes drift harmless, so rebuilds only keep it small: with
 * large active sets they wait for 2k updates, which amortizes their
 * O(k^3) to O(k^2) per update). */
enum { INITIAL_CAPACITY = 16, REBUILD_EVERY = 256 };

/* How often the solve is checked: an active set of at least CHECK_FROM
 * configurations forms the residual of its target (O(k^2)) whenever
 * CHECK_EVERY inverse updates were made since the last check, and from a
 * check that finds more than rounding on it refines every solve, until
 * the next rebuild. Smaller sets stay accurate between rebuilds, and a
 * warm-started solve that changes nothing is not checked again: refining
 * every solve cost LP-MAP on parsing01.fg 18% more instructions. */
enum { CHECK_FROM = 16, CHECK_EVERY = 16 };

/* Outcomes of bordering the inverse with a configuration. */
enum { DEPENDENT = 0, ENTERED = 1, FULL = 2, NO_MEMORY = 3 };

static int32_t config_size_of(const factor *f) {
    return f->ops->config_size ? f->ops->config_size(f) : f->degree + f->n_add;
}

/* Byte counts saturate at SIZE_MAX, which no allocation can satisfy: a
 * state too large for the address space fails as out of memory. */
static size_t align8(size_t n) { return n > SIZE_MAX - 7 ? SIZE_MAX : (n + 7) & ~(size_t)7; }

static size_t mul_size(size_t a, size_t b) {
    return b && a > SIZE_MAX / b ? SIZE_MAX : a * b;
}

static size_t add_size(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

static void *alloc_bytes(size_t bytes) { return bytes == SIZE_MAX ? NULL : malloc(bytes); }

/* Bytes of the capacity block, laying it out in s when memory != NULL. */
static size_t block_layout(active_set *s, int32_t capacity, char *memory) {
    const size_t k = (size_t)capacity, l = (size_t)s->config_size;
    const size_t doubles_k = align8(mul_size(k, sizeof(double)));
    const size_t doubles_k1 = align8(mul_size(k + 1, sizeof(double)));
    const size_t inverse = align8(mul_size(mul_size(k + 1, k + 1), sizeof(double)));
    const size_t gram = align8(mul_size(mul_size(k, k), sizeof(double)));
    const size_t hashes = align8(mul_size(k, sizeof(uint64_t)));
    const size_t ints_k = align8(mul_size(k, sizeof(int32_t)));
    const size_t configs = align8(mul_size(mul_size(k, l), sizeof(int32_t)));
    const size_t values = s->real_values ? mul_size(mul_size(k, l), sizeof(double)) : 0;
    if (memory) {
        char *m = memory;
        s->p = (double *)m, m += doubles_k;
        s->score = (double *)m, m += doubles_k;
        s->kinv = (double *)m, m += inverse;
        s->gram = (double *)m, m += gram;
        s->rhs = (double *)m, m += doubles_k1;
        s->sol = (double *)m, m += doubles_k1;
        s->w = (double *)m, m += doubles_k1;
        s->hash = (uint64_t *)m, m += hashes;
        s->count = (int32_t *)m, m += ints_k;
        s->links = (int32_t *)m, m += ints_k;
        s->ones = (int32_t *)m, m += configs;
        s->values = s->real_values ? (double *)m : NULL;
    }
    size_t bytes = add_size(mul_size(doubles_k, 2), inverse);
    bytes = add_size(bytes, gram);
    bytes = add_size(bytes, mul_size(doubles_k1, 3));
    bytes = add_size(bytes, hashes);
    bytes = add_size(bytes, mul_size(ints_k, 2));
    bytes = add_size(bytes, configs);
    return add_size(bytes, values);
}

active_set *active_set_new(const factor *f) {
    const int32_t l = config_size_of(f);
    const size_t deg = (size_t)f->degree;
    size_t fixed = align8(sizeof(active_set));
    fixed = add_size(fixed, mul_size(align8(mul_size(deg, sizeof(double))), 2));
    fixed = add_size(fixed, align8(mul_size((size_t)l, sizeof(int32_t))));
    fixed = add_size(fixed, mul_size((size_t)l, sizeof(double)));
    char *m = alloc_bytes(fixed);
    if (!m) return NULL;
    active_set *s = (active_set *)m;
    memset(s, 0, sizeof *s);
    s->degree = f->degree;
    s->n_add = f->n_add;
    s->config_size = l;
    s->real_values = f->ops->real_additionals;
    s->max_capacity = f->degree < INT32_MAX ? f->degree + 1 : INT32_MAX;
    s->capacity = s->max_capacity < INITIAL_CAPACITY ? s->max_capacity : INITIAL_CAPACITY;
    s->jvp_size = -1;
    s->solution_size = -1;
    m += align8(sizeof(active_set));
    s->d = (double *)m, m += align8(deg * sizeof(double));
    s->mark = (double *)m, m += align8(deg * sizeof(double));
    memset(s->mark, 0, deg * sizeof(double));
    s->cand = (int32_t *)m, m += align8((size_t)l * sizeof(int32_t));
    s->cand_value = (double *)m;
    s->block = alloc_bytes(block_layout(s, s->capacity, NULL));
    if (!s->block) {
        free(s);
        return NULL;
    }
    block_layout(s, s->capacity, s->block);
    return s;
}

void active_set_free(active_set *s) {
    if (!s) return;
    free(s->block);
    free(s->kinv_w);
    free(s->solution_kinv);
    free(s);
}

void active_set_reset(active_set *s) {
    s->size = 0;
    s->jvp_size = -1;
    s->solution_size = -1;
    /* Forget the weights and the update count too: a reset solve then
     * repeats the first one bit for bit, whatever ran before. */
    s->have_d = false;
    s->updates = 0;
    s->checked = 0;
    s->refine = false;
}

int32_t active_set_size(const active_set *s) { return s->size; }
double active_set_weight(const active_set *s, int32_t k) { return s->p[k]; }
int32_t active_set_capacity(const active_set *s) { return s->capacity; }
const double *active_set_weights(const active_set *s) { return s->d; }

static inline double *at(double *matrix, int32_t stride, int32_t i, int32_t j) {
    return &matrix[(size_t)i * (size_t)stride + (size_t)j];
}

static inline double *kinv_at(active_set *s, int32_t i, int32_t j) {
    return at(s->kinv, s->capacity + 1, i, j);
}

static inline double *gram_at(active_set *s, int32_t i, int32_t j) {
    return at(s->gram, s->capacity, i, j);
}

/* Doubles the room (at most max_capacity): the weights, scores, the
 * configurations, Q, the inverse and the bordering vectors q (in rhs) and
 * w move into a larger block, the matrices row by row into the wider
 * strides. Returns 0 when out of memory, leaving the state as it was. */
static int grow(active_set *s) {
    int32_t capacity = s->capacity > s->max_capacity / 2 ? s->max_capacity : 2 * s->capacity;
    active_set next = *s;
    void *block = alloc_bytes(block_layout(&next, capacity, NULL));
    if (!block) return 0;
    block_layout(&next, capacity, block);
    const size_t n = (size_t)s->size, m = n + 1, l = (size_t)s->config_size;
    memcpy(next.p, s->p, n * sizeof(double));
    memcpy(next.score, s->score, n * sizeof(double));
    memcpy(next.rhs, s->rhs, m * sizeof(double));
    memcpy(next.w, s->w, m * sizeof(double));
    memcpy(next.hash, s->hash, n * sizeof(uint64_t));
    memcpy(next.count, s->count, n * sizeof(int32_t));
    memcpy(next.links, s->links, n * sizeof(int32_t));
    memcpy(next.ones, s->ones, n * l * sizeof(int32_t));
    if (s->values) memcpy(next.values, s->values, n * l * sizeof(double));
    for (size_t i = 0; i < m; ++i)
        memcpy(next.kinv + i * ((size_t)capacity + 1), s->kinv + i * ((size_t)s->capacity + 1),
               m * sizeof(double));
    for (size_t i = 0; i < n; ++i)
        memcpy(next.gram + i * (size_t)capacity, s->gram + i * (size_t)s->capacity,
               n * sizeof(double));
    free(s->block);
    next.block = block;
    next.capacity = capacity;
    *s = next;
    return 1;
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

/* out = M x for the m x m block of a matrix with the given row stride. */
static void matvec(const double *matrix, int32_t stride, const double *x, int32_t m,
                   double *out) {
    for (int32_t i = 0; i < m; ++i) out[i] = dot(matrix + (size_t)i * (size_t)stride, x, m);
}

static uint64_t hash_mix(uint64_t h, uint64_t word) { return (h ^ word) * 1099511628211ull; }

/* Of a configuration's indices x and, with real values, their values xv. */
static uint64_t hash_config(const active_set *s, const int32_t *x, const double *xv, int32_t n) {
    uint64_t h = 1469598103934665603ull;
    for (int32_t k = 0; k < n; ++k) h = hash_mix(h, (uint32_t)x[k]);
    for (int32_t k = 0; s->real_values && k < n; ++k) {
        uint64_t bits;
        memcpy(&bits, &xv[k], sizeof bits);
        h = hash_mix(h, bits);
    }
    return h;
}

static const int32_t *config(const active_set *s, int32_t k) {
    return s->ones + (size_t)k * (size_t)s->config_size;
}

/* The values of configuration k's entries, or NULL: all 1. */
static const double *config_values(const active_set *s, int32_t k) {
    return s->values ? s->values + (size_t)k * (size_t)s->config_size : NULL;
}

/* Moves configuration `from` (entries, values, weight, score) into slot
 * `to`. */
static void move_config(active_set *s, int32_t to, int32_t from) {
    const size_t l = (size_t)s->config_size, n = (size_t)s->count[from];
    memmove(s->ones + (size_t)to * l, config(s, from), n * sizeof(int32_t));
    if (s->values) memmove(s->values + (size_t)to * l, config_values(s, from), n * sizeof(double));
    s->count[to] = s->count[from];
    s->links[to] = s->links[from];
    s->hash[to] = s->hash[from];
    s->p[to] = s->p[from];
    s->score[to] = s->score[from];
}

void active_set_config(const active_set *s, int32_t k, double *u, double *v) {
    const int32_t *x = config(s, k);
    const double *xv = config_values(s, k);
    for (int32_t i = 0; i < s->degree; ++i) u[i] = 0.0;
    for (int32_t i = 0; i < s->n_add; ++i) v[i] = 0.0;
    int32_t j = 0;
    for (; j < s->links[k]; ++j) u[x[j]] = 1.0;
    for (; j < s->count[k]; ++j) v[x[j] - s->degree] = xv ? xv[j] : 1.0;
}

/* The number of links in index list x (they come first). */
static int32_t links_of(const active_set *s, const int32_t *x, int32_t n) {
    int32_t j = 0;
    while (j < n && x[j] < s->degree) ++j;
    return j;
}

/* Marks the links x with their d; returns u_x^T D u_x. */
static double mark_links(active_set *s, const double *d, const int32_t *x, int32_t links) {
    double gamma = 0.0;
    for (int32_t j = 0; j < links; ++j) {
        s->mark[x[j]] = d[x[j]];
        gamma += d[x[j]];
    }
    return gamma;
}

static void unmark_links(active_set *s, const int32_t *x, int32_t links) {
    for (int32_t j = 0; j < links; ++j) s->mark[x[j]] = 0.0;
}

/* u_x^T D u_t for the configuration x marked in s->mark: the sum of d
 * over t's links that x switches on too. */
static double gram_marked(const active_set *s, int32_t t) {
    const int32_t *x = config(s, t);
    double sum = 0.0;
    for (int32_t j = 0; j < s->links[t]; ++j) sum += s->mark[x[j]];
    return sum;
}

/* The border of K for configuration x in metric d against the first
 * `size` configurations: q = [1; u_t^T D u_x] into s->rhs; returns
 * u_x^T D u_x. */
static double border_column(active_set *s, const double *d, int32_t size, const int32_t *x,
                            int32_t links) {
    double gamma = mark_links(s, d, x, links);
    s->rhs[0] = 1.0;
    for (int32_t t = 0; t < size; ++t) s->rhs[t + 1] = gram_marked(s, t);
    unmark_links(s, x, links);
    return gamma;
}

/* With q in s->rhs, leaves w = K^{-1} q in s->w (for `inv`, the inverse
 * over the first `size` configurations, row stride `stride`: when x
 * depends on them, w holds its affine coefficients) and returns the Schur
 * complement gamma - q^T w, the squared D-distance of u_x from their
 * affine hull. */
static double border_schur(active_set *s, const double *inv, int32_t stride, int32_t size,
                           double gamma) {
    const int32_t m = size + 1;
    matvec(inv, stride, s->rhs, m, s->w);
    return gamma - dot(s->rhs, s->w, m);
}

/* border_schur for the active inverse, where a Schur complement near the
 * independence threshold takes one step of iterative refinement of w
 * (the residual q - K w formed with Q; s->sol is scratch). The Schur
 * complement of a dependent configuration is a difference of nearly
 * equal numbers: computed from the updated inverse alone it came out
 * anywhere in +-5e-10 gamma on parsing01.fg, so dependent configurations
 * passed for independent ones, and their entry wrecked the solves that
 * followed (one with a 5e-11 gap made 30 others leave). */
static double border_schur_refined(active_set *s, double gamma, double scale) {
    const int32_t n = s->size, m = n + 1, stride = s->capacity + 1;
    double schur = border_schur(s, s->kinv, stride, n, gamma);
    if (schur > 1e-6 * fmax(gamma, scale)) return schur;
    double total = 0.0;
    for (int32_t t = 0; t < n; ++t) total += s->w[t + 1];
    double *residual = s->sol;
    residual[0] = 1.0 - total;
    for (int32_t t = 0; t < n; ++t)
        residual[t + 1] = s->rhs[t + 1] - s->w[0] - dot(gram_at(s, t, 0), s->w + 1, n);
    for (int32_t i = 0; i < m; ++i) s->w[i] += dot(kinv_at(s, i, 0), residual, m);
    return gamma - dot(s->rhs, s->w, m);
}

/* Whether a Schur complement is more than the rounding of a dependent
 * configuration's: relative to the squared D-norms of the configurations
 * involved, the new one's (gamma) and the largest active one's (scale).
 * gamma alone is not enough: a configuration with u = 0 has gamma = 0, and
 * when it depended on the active ones the rounding of its complement
 * (1e-16) passed, its entry made the inverse blow up (1e15) and the
 * weights NaN. */
static bool independent(double schur, double gamma, double scale) {
    const double size = fmax(gamma, scale);
    return schur > 1e-11 * (size > 1e-300 ? size : 1e-300);
}

/* The largest diagonal entry of Q over the first n configurations. */
static double largest_norm(active_set *s, int32_t n) {
    double largest = 0.0;
    for (int32_t t = 0; t < n; ++t) largest = fmax(largest, *gram_at(s, t, t));
    return largest;
}

/* Writes the bordered inverse from s->w and the Schur complement (block
 * inversion). The inverse of the 1x1 K = [0] does not exist, so the first
 * configuration is written directly: [0 1; 1 gamma]^-1 = [-gamma 1; 1 0]. */
static void border_commit(active_set *s, double *inv, int32_t stride, int32_t size,
                          double schur, double gamma) {
    if (size == 0) {
        *at(inv, stride, 0, 0) = -gamma;
        *at(inv, stride, 0, 1) = *at(inv, stride, 1, 0) = 1.0;
        *at(inv, stride, 1, 1) = 0.0;
        return;
    }
    const int32_t m = size + 1;
    for (int32_t i = 0; i < m; ++i) {
        const double wi = s->w[i] / schur;
        double *row = at(inv, stride, i, 0);
        for (int32_t j = 0; j < m; ++j) row[j] += wi * s->w[j];
        *at(inv, stride, i, m) = *at(inv, stride, m, i) = -wi;
    }
    *at(inv, stride, m, m) = 1.0 / schur;
}

/* Appends configuration x (values xv) with weight 0; its row of Q is q in
 * s->rhs. */
static void append_config(active_set *s, const int32_t *x, const double *xv, int32_t n,
                          double gamma) {
    const int32_t k = s->size;
    const size_t row = (size_t)k * (size_t)s->config_size;
    memcpy(s->ones + row, x, (size_t)n * sizeof(int32_t));
    if (s->values) memcpy(s->values + row, xv, (size_t)n * sizeof(double));
    s->count[k] = n;
    s->links[k] = links_of(s, x, n);
    s->hash[k] = hash_config(s, x, xv, n);
    s->p[k] = 0.0;
    for (int32_t t = 0; t < k; ++t) *gram_at(s, k, t) = *gram_at(s, t, k) = s->rhs[t + 1];
    *gram_at(s, k, k) = gamma;
    s->size += 1;
    s->updates += 1;
    s->jvp_size = -1;
}

/* Borders the active set's inverse with configuration x and, when it is
 * independent of the active ones, appends it with weight 0, growing the
 * room if needed. DEPENDENT and FULL leave x's affine coefficients in s->w
 * (FULL: x looks independent, but degree + 1 configurations are already
 * active, so that can only be rounding). */
static int border(active_set *s, const int32_t *x, const double *xv, int32_t n) {
    const double gamma = border_column(s, s->d, s->size, x, links_of(s, x, n));
    double schur = 0.0;
    if (s->size > 0) {
        const double scale = largest_norm(s, s->size);
        schur = border_schur_refined(s, gamma, scale);
        if (!independent(schur, gamma, scale)) return DEPENDENT;
        if (s->size == s->capacity) {
            if (s->capacity == s->max_capacity) return FULL;
            if (!grow(s)) return NO_MEMORY;
        }
    }
    border_commit(s, s->kinv, s->capacity + 1, s->size, schur, gamma);
    append_config(s, x, xv, n, gamma);
    return ENTERED;
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
    const int32_t last = s->size - 1;
    if (r != last) {
        for (int32_t i = 0; i < m; ++i) *kinv_at(s, i, rr) = *kinv_at(s, i, last + 1);
        for (int32_t j = 0; j < m; ++j) *kinv_at(s, rr, j) = *kinv_at(s, last + 1, j);
        for (int32_t i = 0; i < s->size; ++i) *gram_at(s, i, r) = *gram_at(s, i, last);
        for (int32_t j = 0; j < s->size; ++j) *gram_at(s, r, j) = *gram_at(s, last, j);
        move_config(s, r, last);
    }
    s->size -= 1;
    s->updates += 1;
    s->jvp_size = -1;
}

/* Keeps the solution's inverse of K and update count before
 * active_set_complete_face adds the tied configurations; returns 0 when
 * out of memory. */
static int keep_solution(active_set *s) {
    const size_t m = (size_t)s->size + 1;
    if (s->solution_room < m * m) {
        double *room = alloc_bytes(mul_size(mul_size(m, m), sizeof(double)));
        if (!room) return 0;
        free(s->solution_kinv);
        s->solution_kinv = room;
        s->solution_room = m * m;
    }
    for (size_t i = 0; i < m; ++i)
        memcpy(s->solution_kinv + i * m, kinv_at(s, (int32_t)i, 0), m * sizeof(double));
    s->solution_updates = s->updates;
    s->solution_size = s->size;
    return 1;
}

/* Removes the tied configurations active_set_complete_face added (all of
 * weight 0), so that a solve starts from those of the solution. They were
 * appended, and Q's rows and the configurations before them are as they
 * were, so the kept inverse makes the state the solution's again, bit for
 * bit: a solve after a backward pass is the one without it. (Downdating
 * the inverse once per configuration would cost O(k^2) each: 18 ms before
 * the next solve of a 23-word tree at zero scores, whose face has 507
 * configurations, and whose solve takes 0.2 ms.) */
static void drop_face_completion(active_set *s) {
    if (s->solution_size < 0) return;
    const size_t m = (size_t)s->solution_size + 1;
    for (size_t i = 0; i < m; ++i)
        memcpy(kinv_at(s, (int32_t)i, 0), s->solution_kinv + i * m, m * sizeof(double));
    s->size = s->solution_size;
    s->updates = s->solution_updates;
    s->jvp_size = -1;
    s->solution_size = -1;
}

/* Recomputes Q from the configurations (after d changed). */
static void recompute_gram(active_set *s) {
    for (int32_t t = 0; t < s->size; ++t) {
        const int32_t *x = config(s, t);
        double gamma = mark_links(s, s->d, x, s->links[t]);
        for (int32_t j = 0; j < t; ++j) *gram_at(s, t, j) = *gram_at(s, j, t) = gram_marked(s, j);
        *gram_at(s, t, t) = gamma;
        unmark_links(s, x, s->links[t]);
    }
}

/* Rebuilds the inverse from Q by bordering the configurations in turn
 * (after d changed, or to shed accumulated rounding). A configuration that
 * no longer enters cleanly is dropped, and the weights renormalized. */
static void rebuild(active_set *s) {
    const int32_t n = s->size, stride = s->capacity + 1;
    int32_t kept = 0;
    double total = 0.0, largest = 0.0;
    /* s->sol records the kept configurations' old indices */
    for (int32_t t = 0; t < n; ++t) {
        const double gamma = *gram_at(s, t, t);
        double schur = 0.0;
        s->rhs[0] = 1.0;
        for (int32_t j = 0; j < kept; ++j) s->rhs[j + 1] = *gram_at(s, (int32_t)s->sol[j], t);
        if (kept > 0) {
            schur = border_schur(s, s->kinv, stride, kept, gamma);
            if (!independent(schur, gamma, largest)) continue;
        }
        border_commit(s, s->kinv, stride, kept, schur, gamma);
        largest = fmax(largest, gamma);
        s->sol[kept++] = (double)t;
        total += s->p[t];
    }
    /* Compact in place: kept indices only grow, so every slot is read
     * (row-major) before it is overwritten. */
    for (int32_t i = 0; i < kept; ++i) {
        const int32_t from = (int32_t)s->sol[i];
        for (int32_t j = 0; j < kept; ++j)
            *gram_at(s, i, j) = *gram_at(s, from, (int32_t)s->sol[j]);
        if (from != i) move_config(s, i, from);
    }
    s->size = kept;
    if (kept > 0 && total > 0.0)
        for (int32_t k = 0; k < kept; ++k) s->p[k] /= total;
    else if (kept > 0)
        for (int32_t k = 0; k < kept; ++k) s->p[k] = 1.0 / kept;
    s->updates = 0;
    s->checked = 0;
    s->jvp_size = -1;
    s->refine = false;
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
    for (int32_t i = 0; i < s->size; ++i)
        for (int32_t j = 0; j < s->size; ++j) *gram_at(s, i, j) *= rho;
}

/* The oracle's configuration as a sorted list of its nonzero entries in
 * s->cand, their values in s->cand_value. */
static int32_t oracle_config(active_set *s, const double *u, const double *v) {
    int32_t n = 0;
    for (int32_t i = 0; i < s->degree && n < s->config_size; ++i)
        if (u[i] > 0.5) {
            s->cand_value[n] = 1.0;
            s->cand[n++] = i;
        }
    for (int32_t k = 0; k < s->n_add && n < s->config_size; ++k)
        if (s->real_values ? v[k] != 0.0 : v[k] > 0.5) {
            s->cand_value[n] = s->real_values ? v[k] : 1.0;
            s->cand[n++] = s->degree + k;
        }
    return n;
}

/* Calls f's MAP oracle at scores (a, b): its configuration goes to
 * s->cand and s->cand_value, and its score to *best. Returns the
 * configuration's number of entries. */
static int32_t call_oracle(active_set *s, const factor *f, const double *a, const double *b,
                           factor_buffers *buf, double *best) {
    if (f->ops->map_ones) {
        const int32_t n = f->ops->map_ones(f, a, b, s->cand, best, buf->scratch);
        for (int32_t k = 0; k < n; ++k) s->cand_value[k] = 1.0;
        return n;
    }
    *best = f->ops->map(f, a, b, buf->oracle_u, buf->oracle_v, buf->scratch);
    return oracle_config(s, buf->oracle_u, buf->oracle_v);
}

/* The active configuration equal to the oracle's, or -1. */
static int32_t find_candidate(const active_set *s, int32_t n) {
    const uint64_t h = hash_config(s, s->cand, s->cand_value, n);
    for (int32_t k = 0; k < s->size; ++k)
        if (s->hash[k] == h && s->count[k] == n &&
            memcmp(config(s, k), s->cand, (size_t)n * sizeof(int32_t)) == 0 &&
            (!s->values ||
             memcmp(config_values(s, k), s->cand_value, (size_t)n * sizeof(double)) == 0))
            return k;
    return -1;
}

/* The score a.u + b.v of the configuration with entries x (the first
 * `links` of them links) and values xv (NULL: all 1). Inlined: it is
 * score_config's loop, which the active set's solves run per
 * configuration (as a call, LP-SparseMAP on AD3's parsing02 ran 0.8% more
 * instructions than with score_config's own loop; inlined, 0.2%). */
static inline __attribute__((always_inline)) double entries_score(const active_set *s, const int32_t *x, const double *xv,
                            int32_t links, int32_t n, const double *a, const double *b) {
    double sum = 0.0;
    int32_t j = 0;
    for (; j < links; ++j) sum += a[x[j]];
    for (; j < n; ++j) sum += b[x[j] - s->degree] * (xv ? xv[j] : 1.0);
    return sum;
}

/* Configuration k's score a.u_k + b.v_k into s->score. */
static void score_config(active_set *s, int32_t k, const double *a, const double *b) {
    s->score[k] = entries_score(s, config(s, k), config_values(s, k), s->links[k], s->count[k],
                                a, b);
}

/* The sum of the magnitudes of the terms of configuration k's score: the
 * scale of its rounding; *largest (unless NULL) is raised to the largest
 * magnitude of a term. */
static double score_magnitude(const active_set *s, int32_t k, const double *a, const double *b,
                              double *largest) {
    const int32_t *x = config(s, k);
    const double *xv = config_values(s, k);
    double size = 0.0, most = 0.0;
    int32_t j = 0;
    for (; j < s->links[k]; ++j) {
        const double term = fabs(a[x[j]]);
        size += term;
        most = fmax(most, term);
    }
    for (; j < s->count[k]; ++j) {
        const double term = fabs(b[x[j] - s->degree] * (xv ? xv[j] : 1.0));
        size += term;
        most = fmax(most, term);
    }
    if (largest) *largest = fmax(*largest, most);
    return size;
}

/* u = sum_k p_k u_k (literal space): the oracle needs only u. */
static void combine_u(const active_set *s, double *u) {
    for (int32_t i = 0; i < s->degree; ++i) u[i] = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const int32_t *x = config(s, k);
        const double pk = s->p[k];
        for (int32_t j = 0; j < s->links[k]; ++j) u[x[j]] += pk;
    }
}

/* The weights sum to 1 only up to rounding, so a sum of them can exceed 1
 * by an ulp: the additional outputs, read once a solve is over, are
 * capped, means of 0/1 values lying in [0, 1]. Only the entries some
 * configuration holds can exceed 1, so only they are visited (a SEQUENCE
 * factor has L S^2 additional outputs). The iteration's u, which only the
 * oracle and the consensus read, is left as it is: capped in every factor
 * solve it cost 5% of the instructions of LP-SparseMAP on the generated
 * sequence graphs; the solvers clip their solutions instead. */
static void cap_additionals_at_one(const active_set *s, double *v) {
    for (int32_t k = 0; k < s->size; ++k) {
        const int32_t *x = config(s, k);
        for (int32_t j = s->links[k]; j < s->count[k]; ++j) {
            double *entry = &v[x[j] - s->degree];
            *entry = *entry > 1.0 ? 1.0 : *entry;
        }
    }
}

/* v = sum_k p_k v_k, capped at 1, or for a factor whose additional outputs
 * take real values (a user factor's, in [-1, 1]) clipped into [-1, 1]:
 * a mean of its 1s could exceed 1 by an ulp as well, and its solution
 * would then be refused as a gold structure. */
void active_set_additionals(const active_set *s, double *v) {
    for (int32_t k = 0; k < s->n_add; ++k) v[k] = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const int32_t *x = config(s, k);
        const double *xv = config_values(s, k);
        for (int32_t j = s->links[k]; j < s->count[k]; ++j)
            v[x[j] - s->degree] += s->p[k] * (xv ? xv[j] : 1.0);
    }
    if (!s->real_values) cap_additionals_at_one(s, v);
    else
        for (int32_t k = 0; k < s->n_add; ++k) v[k] = clip_signed_unit(v[k]);
}

/* u and v (unless NULL) = sum_k p_k (u_k, v_k). */
static void combine(const active_set *s, double *u, double *v) {
    combine_u(s, u);
    if (v) active_set_additionals(s, v);
}

/* The score the targets measure the others from: the first
 * configuration's. The weights sum to 1, so a score common to every
 * configuration only moves tau; taken out, it leaves the right-hand side
 * the differences between the scores, exact in floating point however
 * large the scores (SEQUENCE and DENSE scores all raised by 1e10: with
 * them in, the inverse's rounding of 1e10 reached the weights). */
static double reference_score(const active_set *s) { return s->size ? s->score[0] : 0.0; }

static void plain_target(active_set *s) {
    const int32_t m = s->size + 1;
    const double reference = reference_score(s);
    s->rhs[0] = 1.0;
    for (int32_t k = 0; k < s->size; ++k) s->rhs[k + 1] = s->score[k] - reference;
    matvec(s->kinv, s->capacity + 1, s->rhs, m, s->sol);
}

/* The target [tau; p*] = K^{-1} [1; c] into s->sol. When the inverse is
 * due for a check (or known to be inaccurate), the residual [1; c] - K sol
 * is formed with Q. More than rounding on the scores' rows (their
 * residuals are the spread of the gradient scores the certificate reads;
 * the first row only scales p, which is normalized anyway, so it is
 * allowed more) makes this and every later solve take a step of iterative
 * refinement, until the next rebuild; a residual beyond what one step can
 * repair (a removal with a tiny pivot once left 4e-2 on parsing01.fg)
 * rebuilds the inverse at once. */
static void solve_target(active_set *s) {
    plain_target(s);
    const bool due = s->size >= CHECK_FROM && s->updates - s->checked >= CHECK_EVERY;
    if (s->size < 2 || !(s->refine || due)) return;
    double total = 0.0, size = fabs(s->sol[0]), worst = 0.0;
    const double reference = reference_score(s);
    for (int32_t k = 0; k < s->size; ++k) total += s->sol[k + 1];
    s->rhs[0] = 1.0 - total;
    for (int32_t k = 0; k < s->size; ++k) {
        const double *row = gram_at(s, k, 0);
        const double score = s->score[k] - reference;
        const double r = score - s->sol[0] - dot(row, s->sol + 1, s->size);
        s->rhs[k + 1] = r;
        worst = fmax(worst, fabs(r));
        size = fmax(size, fmax(fabs(score), row[k]));
    }
    if (!s->refine && worst <= 1e-12 * size && fabs(s->rhs[0]) <= 1e-11) {
        s->checked = s->updates;
        return;
    }
    if (worst > 1e-8 * size || fabs(s->rhs[0]) > 1e-8) {
        rebuild(s);
        plain_target(s);
        return;
    }
    s->refine = true;
    matvec(s->kinv, s->capacity + 1, s->rhs, s->size + 1, s->w);
    for (int32_t i = 0; i <= s->size; ++i) s->sol[i] += s->w[i];
}

/* The degenerate step for a configuration x dependent on the active set,
 * with s->w = K^{-1} [1; q] its affine coefficients: increasing x's weight
 * by t while moving the active weights by -t w keeps u fixed and the
 * objective increasing. */
static int degenerate_step(active_set *s, const int32_t *x, const double *xv, int32_t n) {
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
    if (border(s, x, xv, n) == ENTERED) {
        s->p[s->size - 1] = t;
        return 1;
    }
    double total = 0.0; /* still dependent (rounding): keep a valid point */
    for (int32_t k = 0; k < s->size; ++k) total += s->p[k];
    for (int32_t k = 0; k < s->size; ++k) s->p[k] /= total;
    return 0;
}

/* How far the best configuration under the gradient (score `best`)
 * improves the linearized objective at (u, v) = sum_k p_k (u_k, v_k):
 *   gap = best - [(a - D u).u + b.v] = best - sum_k p_k c_k + u.D u,
 * every score taken relative to the reference score (the weights sum to
 * 1). Returns whether that is within 1e-12 of the size of the objective's
 * terms relative to the reference, or is rounding: 1e-14 of the size of
 * the terms the scores were summed from (a score common to every
 * configuration, 1e10 added to every state of a SEQUENCE, cancels from
 * the gap but not from its rounding; relative to it, 1e-12 had the solve
 * stop 1e-2 from the answer). That size is first taken from the scores
 * themselves; only when the gap is close does the test pay for the sums
 * of |terms| within each score (which can cancel). */
static bool gap_is_rounding(const active_set *s, const double *a, const double *b,
                            const double *d, const double *u, double best) {
    const double reference = reference_score(s);
    double linear = 0.0, size = fabs(best - reference), rounding = fabs(best), quadratic = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        linear += s->p[k] * (s->score[k] - reference);
        size += s->p[k] * fabs(s->score[k] - reference);
        rounding += s->p[k] * fabs(s->score[k]);
    }
    for (int32_t i = 0; i < s->degree; ++i) quadratic += d[i] * u[i] * u[i];
    const double gap = (best - reference) - linear + quadratic;
    size += quadratic;
    rounding += quadratic;
    if (gap <= 1e-12 * size + 1e-14 * rounding) return true;
    if (gap > 1e-9 * size + 1e-11 * rounding) return false;
    rounding = fabs(best) + quadratic;
    for (int32_t k = 0; k < s->size; ++k) rounding += s->p[k] * score_magnitude(s, k, a, b, NULL);
    return gap <= 1e-12 * size + 1e-14 * rounding;
}

/* Takes new weights d: the inverse is rescaled when every d_i was and is
 * the same, rebuilt otherwise. */
static void change_weights(active_set *s, const double *d) {
    int uniform = 1;
    for (int32_t i = 1; i < s->degree && uniform; ++i) uniform = d[i] == d[0];
    if (s->have_d && s->uniform && uniform && s->degree > 0) {
        rescale(s, d[0] / s->d[0]);
        memcpy(s->d, d, (size_t)s->degree * sizeof(double));
    } else {
        memcpy(s->d, d, (size_t)s->degree * sizeof(double));
        s->have_d = true;
        recompute_gram(s);
        rebuild(s);
    }
    s->uniform = uniform;
}

void active_set_hold_vertex(active_set *s, const double *d, const double *u, const double *v) {
    active_set_reset(s);
    change_weights(s, d);
    border(s, s->cand, s->cand_value, oracle_config(s, u, v));
    s->p[0] = 1.0;
}

active_set_result active_set_solve(active_set *s, const factor *f, const double *a,
                                   const double *b, const double *d, double *u, double *v,
                                   int32_t max_iter, factor_buffers *buf) {
    active_set_result res = {0, false, CONCORD_OK, 0};
    drop_face_completion(s);
    if (!s->have_d || memcmp(s->d, d, (size_t)s->degree * sizeof(double)) != 0)
        change_weights(s, d);
    else if (s->updates > REBUILD_EVERY && s->updates > 2 * s->size)
        rebuild(s);
    /* The call that starts an empty set is not one of the max_iter: with
     * max_iter 1, a cold solve that spent its one call there returned the
     * MAP configuration unchecked, and on UAI graphs of DENSE tables the
     * first iterations' moves were a subgradient method's (wcsp_15: 20
     * iterations instead of 5; docs/design.md). */
    int32_t seeding_calls = 0;
    if (s->size == 0) {
        double best;
        const int32_t n = call_oracle(s, f, a, b, buf, &best);
        res.oracle_calls++;
        seeding_calls = 1;
        if ((res.callback_error = factor_failure(f, buf->scratch))) return res;
        border(s, s->cand, s->cand_value, n);
        s->p[0] = 1.0;
    }
    for (int32_t k = 0; k < s->size; ++k) score_config(s, k, a, b);
    /* Every pass either calls the oracle or removes a configuration, and a
     * removal follows an entry, so this bounds the passes as well. */
    int refreshed = 0, u_current = 0; /* u_current: u is that of p */
    int32_t entered_last = -1; /* the configuration the last pass added */
    for (int32_t pass = 0; pass < 4 * max_iter + 8; ++pass) {
        solve_target(s);
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
        if (r >= 0 && r == entered_last && step == 0.0 && !s->refine) {
            /* The configuration that just entered improves the objective,
             * so its target weight is positive: a negative one is the
             * inverse's rounding. Solve again, refined. */
            s->refine = true;
            entered_last = -1;
            continue;
        }
        entered_last = -1;
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
        if (res.oracle_calls - seeding_calls >= max_iter) break;
        combine_u(s, u);
        for (int32_t i = 0; i < s->degree; ++i) buf->oracle_a[i] = a[i] - d[i] * u[i];
        double best;
        const int32_t n = call_oracle(s, f, buf->oracle_a, b, buf, &best);
        res.oracle_calls++;
        if ((res.callback_error = factor_failure(f, buf->scratch))) break;
        if (gap_is_rounding(s, a, b, d, u, best)) {
            res.exact = true;
            u_current = 1;
            break;
        }
        if (find_candidate(s, n) >= 0) {
            /* The best configuration is already active although the gap
             * is positive: the solve is inaccurate. Refine it; if that is
             * not enough, rebuild the inverse once and solve again; if
             * that changes nothing, the gap is rounding. */
            if (!s->refine) {
                s->refine = true;
                continue;
            }
            if (refreshed) {
                res.exact = true;
                u_current = 1;
                break;
            }
            rebuild(s);
            refreshed = 1;
            continue;
        }
        int entered = border(s, s->cand, s->cand_value, n);
        if (entered == NO_MEMORY) {
            res.error = CONCORD_ENOMEM;
            break;
        }
        if (entered != ENTERED && !degenerate_step(s, s->cand, s->cand_value, n)) break;
        /* either way the entering configuration holds the last slot */
        score_config(s, s->size - 1, a, b);
        entered_last = s->size - 1;
    }
    if (u_current) {
        if (v) active_set_additionals(s, v);
    } else {
        combine(s, u, v);
    }
    return res;
}

/* Face completion. A configuration ties with the solution's when its
 * score under the gradient (a - D u, b) is within TIED times the size of
 * the objective's terms apart from a score common to every configuration
 * (per held configuration, its score under (a, b) measured from the
 * first's and d_i u_i over its links), plus ROUNDING_TIED times the size
 * of the terms the best score is summed from, |a_i| + d_i u_i per link
 * and |b_k v_k|, its rounding (the solve certifies its gap likewise: with
 * TIED of these terms alone, scores raised by 1e8 made configurations
 * 0.01 below the best tie). Not the size of the gradient's entries:
 * they can be 0 at the solution, and in a graph of several factors what
 * the solve leaves of them is then its residual (1e-14 on a head
 * automaton beside a sequence at zero scores), by which no configuration
 * would tie. The oracle is asked at the gradient moved along a direction
 * h by PERTURBATIONS[0] times the largest of those terms in the held
 * configurations, and by the smaller PERTURBATIONS[1] when that picked a
 * configuration that does not tie (a near tie the larger move reached;
 * a last move, ROUNDING_MOVE, below). The terms the held
 * configurations do not have leave the move alone: a score of -1e9
 * masking a state would make it 1e3, then 1, and every round would pick
 * configurations 0.5 below the ties and end the completion with the face
 * incomplete. Only where every held term is 0 do the others set it. */
static const double TIED = 1e-10, ROUNDING_TIED = 1e-14;
static const double PERTURBATIONS[] = {1e-6, 1e-9};
/* Where the scores share a part far larger than their differences (1e10
 * on every state of a SEQUENCE), the held terms are that large, and so
 * are both moves: they pick configurations below the ties every time. A
 * last move is then PERTURBATIONS[0] of the objective's size apart from
 * that part, but at least ROUNDING_MOVE of the size of the terms, so that
 * it outweighs their rounding (a mask 1 below ties at 1e10: without it the
 * products were 0.25 off the Jacobian). */
static const double ROUNDING_MOVE = 1e-13;

/* A pseudo-random number in [-1, 1) (xorshift64): deterministic, so a
 * completion gives the same configurations on any thread. */
static double random_unit(uint64_t *state) {
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return (double)(x >> 11) * 0x1.0p-52 - 1.0;
}

/* A random direction h (degree) under which every point of the active
 * configurations' affine hull scores the same: h = D (x - pi), x random
 * and pi its D-projection onto the hull, [tau; p] = K^{-1} [1; S^T D x],
 * pi = S p (the KKT system of that projection), so h.(u_t - u_0) =
 * (u_t - u_0)^T D (x - pi) = 0. Returns the largest |h_i|. */
static double direction_off_hull(active_set *s, uint64_t *rng, double *h) {
    const int32_t n = s->size;
    for (int32_t i = 0; i < s->degree; ++i) h[i] = random_unit(rng);
    s->rhs[0] = 1.0;
    for (int32_t t = 0; t < n; ++t) {
        const int32_t *x = config(s, t);
        double sum = 0.0;
        for (int32_t j = 0; j < s->links[t]; ++j) sum += s->d[x[j]] * h[x[j]];
        s->rhs[t + 1] = sum;
    }
    matvec(s->kinv, s->capacity + 1, s->rhs, n + 1, s->sol);
    for (int32_t t = 0; t < n; ++t) {
        const int32_t *x = config(s, t);
        for (int32_t j = 0; j < s->links[t]; ++j) h[x[j]] -= s->sol[t + 1];
    }
    double largest = 0.0;
    for (int32_t i = 0; i < s->degree; ++i) {
        h[i] *= s->d[i];
        largest = fmax(largest, fabs(h[i]));
    }
    return largest;
}

/* Each round draws h constant on the hull of the configurations held and
 * asks the oracle for the best configuration at gradient +- a small
 * multiple of h: among the tied configurations that is one maximizing
 * (or minimizing) h. A tied configuration off the hull has h.(y - u_0)
 * != 0 for almost every h, so the maximum or the minimum lies off the hull
 * whenever one exists, and the round adds it; a round that adds none ends
 * the completion. */
active_set_result active_set_complete_face(active_set *s, const factor *f, const double *a,
                                           const double *b, factor_buffers *buf) {
    active_set_result res = {0, true, CONCORD_OK, 0};
    if (s->size == 0 || s->degree == 0) return res;
    const size_t deg = (size_t)s->degree;
    double *memory = alloc_bytes(mul_size(deg, 3 * sizeof(double)));
    if (!memory) {
        res.error = CONCORD_ENOMEM;
        return res;
    }
    double *gradient = memory, *h = memory + deg, *scores = memory + 2 * deg;
    /* u into h; the gradient, and into `scores` the size of the terms
     * each of its entries is computed from */
    combine_u(s, h);
    for (size_t i = 0; i < deg; ++i) {
        gradient[i] = a[i] - s->d[i] * h[i];
        scores[i] = fabs(a[i]) + s->d[i] * fabs(h[i]);
    }
    /* size and rounding: the two sizes of the tolerance (see TIED), the
     * scores under (a, b) measured from the first configuration's */
    double reference = 0.0, best = -INFINITY, size = 0.0, rounding = 0.0, scale = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const int32_t *x = config(s, k);
        score_config(s, k, a, b);
        if (k == 0) reference = s->score[0];
        double relative = fabs(s->score[k] - reference);
        for (int32_t j = 0; j < s->links[k]; ++j) relative += s->d[x[j]] * fabs(h[x[j]]);
        size = fmax(size, relative);
        score_config(s, k, gradient, b);
        best = fmax(best, s->score[k]);
        rounding = fmax(rounding, score_magnitude(s, k, scores, b, &scale));
    }
    if (scale == 0.0) {
        for (size_t i = 0; i < deg; ++i) scale = fmax(scale, scores[i]);
        for (int32_t k = 0; k < s->n_add; ++k) scale = fmax(scale, fabs(b[k]));
    }
    if (scale == 0.0) scale = 1.0;
    const double tied = best - (TIED * size + ROUNDING_TIED * rounding);
    const double moves[3] = {PERTURBATIONS[0] * scale, PERTURBATIONS[1] * scale,
                             fmax(PERTURBATIONS[0] * size, ROUNDING_MOVE * rounding)};
    const int n_moves = moves[2] < moves[1] ? 3 : 2;
    if (s->solution_size < 0 && !keep_solution(s)) {
        res.error = CONCORD_ENOMEM;
        goto done;
    }
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (bool grew = true; grew && s->size < s->max_capacity;) {
        grew = false;
        const double length = direction_off_hull(s, &rng, h);
        if (!(length > 0.0)) break;
        for (int sign = 1; sign >= -1 && !grew; sign -= 2) {
            for (int level = 0; level < n_moves; ++level) {
                const double step = sign * moves[level] / length;
                for (size_t i = 0; i < deg; ++i) scores[i] = gradient[i] + step * h[i];
                double ignored;
                const int32_t n = call_oracle(s, f, scores, b, buf, &ignored);
                res.oracle_calls++;
                if ((res.callback_error = factor_failure(f, buf->scratch))) goto done;
                const double score = entries_score(s, s->cand, s->cand_value,
                                                   links_of(s, s->cand, n), n, gradient, b);
                if (score < tied) continue;
                const int entered = border(s, s->cand, s->cand_value, n);
                if (entered == NO_MEMORY) {
                    res.error = CONCORD_ENOMEM;
                    goto done;
                }
                grew = entered == ENTERED;
                break;
            }
        }
        /* a solution holding the limit already is complete if nothing enters */
        if (grew && s->size > CONCORD_FACE_COMPLETION_LIMIT) {
            res.exact = false;
            break;
        }
    }
done:
    free(memory);
    return res;
}

int active_set_prepare_jvp(active_set *s, const double *w) {
    if (s->jvp_capacity < s->size) {
        const size_t k1 = (size_t)s->capacity + 1;
        double *matrix = alloc_bytes(mul_size(mul_size(k1, k1), sizeof(double)));
        if (!matrix) return CONCORD_ENOMEM;
        free(s->kinv_w);
        s->kinv_w = matrix;
        s->jvp_capacity = s->capacity;
    }
    const int32_t stride = s->jvp_capacity + 1;
    double largest = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const int32_t *x = config(s, k);
        const double gamma = border_column(s, w, k, x, s->links[k]);
        double schur = 0.0;
        if (k > 0) {
            schur = border_schur(s, s->kinv_w, stride, k, gamma);
            if (!independent(schur, gamma, largest)) return CONCORD_ENUMERIC;
        }
        border_commit(s, s->kinv_w, stride, k, schur, gamma);
        largest = fmax(largest, gamma);
    }
    s->jvp_size = s->size;
    return CONCORD_OK;
}

void active_set_jvp(active_set *s, const double *w, const double *x, const double *y,
                    double *du, double *dv) {
    const int32_t m = s->size + 1, stride = s->jvp_capacity + 1;
    /* right-hand side [0; S^T W x + N^T y] */
    s->rhs[0] = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const int32_t *c = config(s, k);
        const double *cv = config_values(s, k);
        double r = 0.0;
        int32_t j = 0;
        for (; j < s->links[k]; ++j) r += w[c[j]] * x[c[j]];
        for (; y && j < s->count[k]; ++j) r += y[c[j] - s->degree] * (cv ? cv[j] : 1.0);
        s->rhs[k + 1] = r;
    }
    for (int32_t i = 0; i < s->degree; ++i) du[i] = 0.0;
    for (int32_t k = 0; dv && k < s->n_add; ++k) dv[k] = 0.0;
    for (int32_t k = 0; k < s->size; ++k) {
        const double dp = dot(at(s->kinv_w, stride, k + 1, 0), s->rhs, m);
        const int32_t *c = config(s, k);
        const double *cv = config_values(s, k);
        int32_t j = 0;
        for (; j < s->links[k]; ++j) du[c[j]] += dp;
        for (; dv && j < s->count[k]; ++j) dv[c[j] - s->degree] += dp * (cv ? cv[j] : 1.0);
    }
}
