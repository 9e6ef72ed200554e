/*
 * Batches: many solvers solved at once on threads. Solvers never share
 * mutable state (their graphs are only read), so each thread takes the next
 * unsolved solver and runs the same sequential solve on it: every result is
 * bit for bit that of a sequential solve, whatever the thread count.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "solver.h"

typedef struct batch {
    concord_solver *const *solvers;
    size_t count;
    concord_algorithm algorithm;
    const concord_settings *settings;
    concord_info *infos;
    int *codes;
    atomic_size_t next; /* the next solver to take */
} batch;

static void solve_one(batch *b, size_t k) {
    concord_info *info = b->infos ? &b->infos[k] : NULL;
    concord_solver *s = b->solvers[k];
    const concord_solver *outer = solver_set_batch_solve(s);
    switch (b->algorithm) {
    case CONCORD_ALGORITHM_SPARSE: b->codes[k] = concord_solver_sparse(s, b->settings, info); break;
    case CONCORD_ALGORITHM_EXACT: b->codes[k] = concord_solver_exact(s, b->settings, info); break;
    case CONCORD_ALGORITHM_PSDD: b->codes[k] = concord_solver_psdd(s, b->settings, info); break;
    case CONCORD_ALGORITHM_MPLP: b->codes[k] = concord_solver_mplp(s, b->settings, info); break;
    default: b->codes[k] = concord_solver_map(s, b->settings, info); break;
    }
    solver_set_batch_solve(outer);
}

static void *worker(void *arg) {
    batch *b = arg;
    for (size_t k; (k = atomic_fetch_add(&b->next, 1)) < b->count;) solve_one(b, k);
    return NULL;
}

/* Claims every solver for this batch; false (claiming none) when one is
 * listed twice, already in another batch, or in a call (the refusal then
 * on the calling thread: a batch thread's refusal would be lost). */
static bool claim(concord_solver *const *solvers, size_t count) {
    for (size_t k = 0; k < count; ++k) {
        if (atomic_exchange(&solvers[k]->in_batch, true)) {
            for (size_t j = 0; j < k; ++j) atomic_store(&solvers[j]->in_batch, false);
            return false;
        }
    }
    for (size_t k = 0; k < count; ++k) {
        if (solver_refuse_if_busy(solvers[k])) {
            for (size_t j = 0; j < count; ++j) atomic_store(&solvers[j]->in_batch, false);
            return false;
        }
    }
    return true;
}

/* The threads a batch of count solvers runs on; a single solver never asks
 * the system how many processors it has (a file read, 5 us a call). */
static int thread_count(int threads, size_t count) {
    if (count <= 1) return 1;
    if (threads <= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        threads = online > 0 ? (int)online : 1;
    }
    return (size_t)threads > count ? (int)count : threads;
}

int concord_solve_batch(concord_solver *const *solvers, size_t count,
                        concord_algorithm algorithm, const concord_settings *settings,
                        concord_info *infos, int threads) {
    /* an unknown algorithm is an error even in an empty batch, which
     * would otherwise hide the caller's bug until a batch is not empty */
    for (size_t k = 0; infos && k < count; ++k)
        infos[k] = (concord_info){.status = CONCORD_STATUS_UNSOLVED};
    if (algorithm < CONCORD_ALGORITHM_AD3 || algorithm > CONCORD_ALGORITHM_MPLP)
        return CONCORD_EINVAL;
    if (count == 0) return CONCORD_OK;
    if (!solvers) return CONCORD_EINVAL;
    for (size_t k = 0; k < count; ++k)
        if (!solvers[k]) return CONCORD_EINVAL;
    if (!claim(solvers, count)) return CONCORD_EINVAL;
    batch b = {.solvers = solvers,
               .count = count,
               .algorithm = algorithm,
               .settings = settings,
               .infos = infos,
               .codes = malloc(count * sizeof(int))};
    atomic_init(&b.next, 0);
    if (!b.codes) {
        for (size_t k = 0; k < count; ++k) atomic_store(&solvers[k]->in_batch, false);
        return CONCORD_ENOMEM;
    }
    const int n_threads = thread_count(threads, count);
    pthread_t *helpers = n_threads > 1 ? malloc((size_t)(n_threads - 1) * sizeof *helpers) : NULL;
    int started = 0;
    if (helpers)
        while (started < n_threads - 1 && pthread_create(&helpers[started], NULL, worker, &b) == 0)
            ++started;
    worker(&b); /* the calling thread works too; with no helper it does all */
    for (int k = 0; k < started; ++k) pthread_join(helpers[k], NULL);
    free(helpers);
    int rc = CONCORD_OK;
    for (size_t k = 0; k < count; ++k) {
        if (rc == CONCORD_OK) rc = b.codes[k];
        solver_forget_refusal(solvers[k]);
        atomic_store(&solvers[k]->in_batch, false);
    }
    free(b.codes);
    return rc;
}
