/*
 * Safeguarded type-II Anderson acceleration over the blocks that move (see
 * anderson.h for the method and its safeguards).
 *
 * Invariant after each step: x holds the vector as the step left it. The
 * STRIDE plain iterations up to the next step change the entries of the
 * blocks the caller reports; at that step f (the image T(x), the caller's
 * z) gives g = f - x, and the differences with the previous step's f and g
 * are formed on the live blocks, those that changed during the last
 * (m + 1) STRIDE iterations. A quiet block's true differences are zero in
 * every stored column, so restricting the work to live blocks changes no
 * result; its stored rows are cleared when it becomes live again (a
 * history restart may have left older values there). The history is
 * stored entry by entry (the m differences of an entry side by side), so
 * one pass over the live blocks forms the new differences, their row of
 * the Gram matrix and the right-hand side of the least-squares problem.
 */
#include "anderson.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../util.h"

/* Acceleration stops for the rest of a solve when, after USEFUL_AFTER
 * iterations, fewer than a third of the extrapolations the memory in use
 * tried were kept, judged once it has tried at least JUDGED_AFTER_TRIES
 * (steps spent rebuilding the history after a restart are not failures).
 * Without that minimum the memory that grows at LONG_AFTER was judged at
 * iteration 101 on a single extrapolation, and one refusal switched a
 * useful acceleration off: AD3's parsing01 then took 4026 and 10161
 * iterations at two of nine initial penalties, 541-603 at the others and
 * at all nine with the minimum. It is not used at all on graphs of more
 * than MAX_LIVE_LINKS links
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
enum { USEFUL_AFTER = 100, JUDGED_AFTER_TRIES = 3, MAX_LIVE_LINKS = 50000, STRIDE = 3 };

/* An extrapolation longer than LONGEST_STEP plain steps is refused, as
 * one from an ill-conditioned history. In a linear tail that contracts by
 * rho per step the fixed point lies rho / (1 - rho) steps ahead: 19 at
 * rho = 0.95, where LP-SparseMAP's slow tails are, and a cap of 10 refused
 * every extrapolation there (20 x 20 LP-matchings at the default penalty:
 * 224-421 iterations instead of 73-153). */
enum { LONGEST_STEP = 100 };

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
    int32_t n_blocks;
    const int32_t *block_begin;
    int m;        /* the memory in use */
    int full_m;   /* the memory asked for */
    int capacity; /* the memory the difference arrays hold */
    int32_t *moved_at; /* per block: last iteration it changed */
    bool *is_live;     /* per block: live at the last collection */
    int32_t *live;     /* the live blocks */
    int32_t n_live;
    int32_t *undo;     /* the blocks the last extrapolation changed */
    int32_t n_undo;
    anderson_apply_fn apply; /* the owner's, during a step */
    void *context;
    double *x, *f_prev, *res_prev, *undo_state; /* per entry (res_prev times
                                                   inv_unit) */
    double *dres, *df; /* per entry, its m differences side by side (dres
                          times inv_unit) */
    double gram[ANDERSON_MAX_MEMORY][ANDERSON_MAX_MEMORY];
    double rhs[ANDERSON_MAX_MEMORY]; /* column j dotted with the residual */
    int count, head, extrapolated, cooldown;
    bool stopped; /* for the rest of this solve: too few extrapolations kept */
    int waited; /* plain iterations since the last step */
    int32_t due_at; /* the iteration of the step anderson_due announced */
    double norm_prev;
    double inv_unit; /* see inverse_unit; set by restarts */
    int32_t kept, refused; /* extrapolations in this solve */
    int32_t kept_before, refused_before; /* the same when the memory last grew */
};

/* Allocates zeroed difference arrays for memory m in place of the current
 * ones; returns 0 (keeping the current ones) when out of memory. */
static int alloc_history(anderson *a, int m) {
    const int32_t entries = a->block_begin[a->n_blocks];
    size_t n = (size_t)(entries ? entries : 1) * (size_t)m;
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

anderson *anderson_new(int32_t n_blocks, const int32_t *block_begin, int capacity) {
    anderson *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->n_blocks = n_blocks;
    a->block_begin = block_begin;
    size_t ne = (size_t)(block_begin[n_blocks] ? block_begin[n_blocks] : 1),
           nb = (size_t)(n_blocks ? n_blocks : 1);
    a->moved_at = malloc(nb * sizeof(int32_t));
    a->is_live = calloc(nb, sizeof(bool));
    a->live = malloc(nb * sizeof(int32_t));
    a->undo = malloc(nb * sizeof(int32_t));
    a->x = calloc(ne, sizeof(double));
    a->f_prev = calloc(ne, sizeof(double));
    a->res_prev = calloc(ne, sizeof(double));
    a->undo_state = calloc(ne, sizeof(double));
    capacity = capacity < 1 ? 1 : (capacity > ANDERSON_MAX_MEMORY ? ANDERSON_MAX_MEMORY : capacity);
    if (!a->moved_at || !a->is_live || !a->live || !a->undo || !a->x || !a->f_prev ||
        !a->res_prev || !a->undo_state || !alloc_history(a, capacity)) {
        anderson_free(a);
        return NULL;
    }
    return a;
}

bool anderson_reserve(anderson *a, int m) {
    return m <= a->capacity || (m <= ANDERSON_MAX_MEMORY && alloc_history(a, m));
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

/* The inverse of the unit a history measures a state in whose largest
 * entry is `largest`: 1, or for a largest entry beyond 2^400 or below
 * 2^-400 (scores that large or that small), its power of two. Residuals
 * and differences are multiplied by it before they are squared or
 * multiplied together, which for a power of two changes no bit of a
 * result but keeps the squares from overflowing to infinity beyond 1e154
 * (no step could then be measured) or vanishing to 0 below 1e-154. */
static double inverse_unit(double largest) {
    if ((largest > 0x1p-400 && largest < 0x1p400) || largest == 0.0 || !isfinite(largest))
        return 1.0;
    int exponent;
    frexp(largest, &exponent);
    return ldexp(1.0, -exponent);
}

/* Forgets the history: the next m + 1 steps rebuild it. */
static void forget(anderson *a) {
    a->count = 0;
    a->head = 0;
    a->extrapolated = 0;
}

void anderson_restart(anderson *a, const double *z) {
    forget(a);
    a->cooldown = 0;
    a->waited = 0;
    /* The history starts at z: a block that does not change from here on
     * has a zero residual in every step, so only the blocks the caller
     * reports changed are live (marking every block changed made the first
     * m + 1 steps after each restart work on the whole vector: a third of
     * the time of the short solves of AD3's srl graphs). */
    for (int32_t b = 0; b < a->n_blocks; ++b) {
        a->moved_at[b] = INT32_MIN;
        a->is_live[b] = 1;
    }
    const int32_t entries = a->block_begin[a->n_blocks];
    double largest = 0.0; /* in this pass: a second one cost a third of it */
    for (int32_t q = 0; q < entries; ++q) {
        a->x[q] = z[q];
        a->f_prev[q] = z[q];
        a->res_prev[q] = 0.0;
        largest = max_abs(largest, z[q]);
    }
    a->inv_unit = inverse_unit(largest);
    /* The stored differences need no clearing: a step reads only the
     * columns written since the history was last forgotten, and a block
     * that was quiet in between has its rows cleared when it becomes live. */
}

bool anderson_grows(anderson *a, int32_t t) {
    if (a->stopped || t < LONG_AFTER || a->m == a->full_m) return false;
    a->m = a->full_m; /* the capacity holds it */
    a->kept_before = a->kept;
    a->refused_before = a->refused;
    return true;
}

void anderson_begin(anderson *a, int m, const double *z) {
    a->full_m = m < 1 ? 1 : (m > a->capacity ? a->capacity : m);
    a->m = a->full_m < SHORT_MEMORY ? a->full_m : SHORT_MEMORY;
    a->kept = a->refused = a->kept_before = a->refused_before = 0;
    a->stopped = false;
    anderson_restart(a, z);
}

bool anderson_running(const anderson *a) { return !a->stopped; }

void anderson_changed(anderson *a, int32_t b, int32_t t) { a->moved_at[b] = t; }

/* Hands block b, rewritten in z, to the owner, and takes what it leaves
 * there as the iterate. */
static void apply_block(anderson *a, double *z, int32_t b) {
    a->apply(a->context, b);
    for (int32_t q = a->block_begin[b]; q < a->block_begin[b + 1]; ++q) a->x[q] = z[q];
}

/* Sets the n blocks listed to the values in s. */
static void set_blocks(anderson *a, double *z, const int32_t *blocks, int32_t n,
                       const double *s) {
    for (int32_t k = 0; k < n; ++k) {
        const int32_t b = blocks[k];
        for (int32_t q = a->block_begin[b]; q < a->block_begin[b + 1]; ++q) z[q] = s[q];
        apply_block(a, z, b);
    }
}

/* One pass over the blocks: the live ones, those that changed during the
 * last m + 1 steps, are listed in a->live (one that just became live has
 * its rows of the history cleared), and over their entries it forms the
 * image f = z and its residual f - x, and, with k stored columns, the new
 * differences in column h, their row of the Gram matrix (row) and every
 * column dotted with the residual (rhs), residuals and their differences
 * times inv_unit. Leaves x = f and returns the residual norm in that
 * unit. When the caller then refuses the last extrapolation, the
 * history is forgotten, so the columns written here are never read. */
static inline __attribute__((always_inline)) double
gather_columns(anderson *a, const double *z, const int k, int h, double *row_out,
               double *rhs_out) {
    double row[ANDERSON_MAX_MEMORY] = {0}, rhs[ANDERSON_MAX_MEMORY] = {0};
    const size_t m = (size_t)a->m;
    const int32_t n_blocks = a->n_blocks, *block_begin = a->block_begin, *moved_at = a->moved_at;
    const int32_t quiet_after = a->due_at - (a->m + 1) * STRIDE;
    bool *is_live = a->is_live;
    int32_t *live = a->live, n_live = 0;
    double *x = a->x, *res_prev = a->res_prev, *f_prev = a->f_prev, *dres = a->dres,
           *df = a->df;
    const double inv_unit = a->inv_unit;
    double norm = 0.0;
    for (int32_t b = 0; b < n_blocks; ++b) {
        if (moved_at[b] < quiet_after) {
            is_live[b] = 0;
            continue;
        }
        const int32_t begin = block_begin[b], end = block_begin[b + 1];
        if (begin == end) continue;
        if (!is_live[b]) {
            memset(dres + (size_t)begin * m, 0, (size_t)(end - begin) * m * sizeof(double));
            memset(df + (size_t)begin * m, 0, (size_t)(end - begin) * m * sizeof(double));
            is_live[b] = 1;
        }
        live[n_live++] = b;
        for (int32_t q = begin; q < end; ++q) {
            double *dr = dres + (size_t)q * m, *dfl = df + (size_t)q * m;
            const double f = z[q], res = (f - x[q]) * inv_unit;
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

static double gather(anderson *a, const double *z, int k, int h, double *row, double *rhs) {
    switch (k) {
#define GATHER_CASE(K) \
    case K: return gather_columns(a, z, K, h, row, rhs);
        FOR_EACH_COLUMN_COUNT(GATHER_CASE)
#undef GATHER_CASE
    }
    return gather_columns(a, z, k, h, row, rhs);
}

/* Extrapolates x (the plain image, which gather left there) to
 * x - df gamma over the k columns, block by block, handing each block to
 * the owner at once; the plain image stays in undo_state. Returns the
 * length of the step times inv_unit. */
static inline __attribute__((always_inline)) double
extrapolate_columns(anderson *a, double *z, const int k, const double *gamma_in) {
    double gamma[ANDERSON_MAX_MEMORY];
    for (int j = 0; j < k; ++j) gamma[j] = gamma_in[j];
    const size_t m = (size_t)a->m;
    const int32_t n_live = a->n_live, *live = a->live, *block_begin = a->block_begin;
    const double *df = a->df;
    const double *x = a->x;
    double *undo_state = a->undo_state;
    const double inv_unit = a->inv_unit;
    double step = 0.0;
    for (int32_t v = 0; v < n_live; ++v) {
        const int32_t b = live[v];
        for (int32_t q = block_begin[b]; q < block_begin[b + 1]; ++q) {
            const double *dfl = df + (size_t)q * m;
            const double f = x[q];
            double next = f;
#pragma GCC unroll 16
            for (int j = 0; j < k; ++j) next -= dfl[j] * gamma[j];
            undo_state[q] = f;
            z[q] = next;
            const double moved = (next - f) * inv_unit;
            step += moved * moved;
        }
        apply_block(a, z, b);
    }
    return sqrt(step);
}

static double extrapolate(anderson *a, double *z, int k, const double *gamma) {
    switch (k) {
#define EXTRAPOLATE_CASE(K) \
    case K: return extrapolate_columns(a, z, K, gamma);
        FOR_EACH_COLUMN_COUNT(EXTRAPOLATE_CASE)
#undef EXTRAPOLATE_CASE
    }
    return extrapolate_columns(a, z, k, gamma);
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

static void refuse(anderson *a) {
    a->refused += 1;
    forget(a);
    a->cooldown = a->m + 1;
}

bool anderson_due(anderson *a, int32_t t) {
    if (a->stopped || ++a->waited < STRIDE) return false;
    a->waited = 0;
    /* judged on the extrapolations of the memory in use */
    const int32_t kept = a->kept - a->kept_before, refused = a->refused - a->refused_before;
    if (t >= USEFUL_AFTER && kept + refused >= JUDGED_AFTER_TRIES && 2 * kept < refused) {
        a->stopped = true; /* not worth its cost */
        return false;
    }
    a->due_at = t;
    return true;
}

/* One step of the acceleration, on the live blocks. */
static void step(anderson *a, double *z) {
    const int k = a->count < a->m ? a->count : a->m;
    const int h = a->head;
    double row[ANDERSON_MAX_MEMORY] = {0}, rhs[ANDERSON_MAX_MEMORY] = {0};
    const double norm = gather(a, z, k, h, row, rhs);
    if (a->extrapolated && norm > a->norm_prev) {
        /* the extrapolation did not help: back to the plain image it
         * started from (the other blocks keep their plain step) */
        set_blocks(a, z, a->undo, a->n_undo, a->undo_state);
        a->kept -= 1; /* counted when applied, not kept after all */
        refuse(a);
        return;
    }
    a->extrapolated = 0;
    if (!(norm <= DBL_MAX)) {
        /* the squares overflowed (the state grew far beyond its unit):
         * the history cannot measure anything, and a step it took could
         * leave z infinite; it starts again, in a unit of the state now */
        a->inv_unit = inverse_unit(largest_magnitude(a->block_begin[a->n_blocks], a->x));
        forget(a);
        return;
    }
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
    if (!(extrapolate(a, z, k, gamma) <= LONGEST_STEP * norm)) {
        set_blocks(a, z, a->live, a->n_live, a->undo_state);
        refuse(a);
        return;
    }
    memcpy(a->undo, a->live, (size_t)a->n_live * sizeof(int32_t));
    a->n_undo = a->n_live;
    a->extrapolated = 1;
    a->kept += 1;
}

void anderson_step(anderson *a, double *z, anderson_apply_fn apply, void *context) {
    a->apply = apply;
    a->context = context;
    step(a, z);
}

bool anderson_worthwhile(int64_t n) { return n <= MAX_LIVE_LINKS; }
