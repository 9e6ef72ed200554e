# The C API of include/concord.h, as Cython sees it. Only declarations:
# every call goes through concord._core, which owns the handles.

from libc.stdint cimport int32_t, int64_t
cdef extern from "<stdbool.h>":
    ctypedef bint cbool "bool"

cdef extern from "concord.h" nogil:
    const char *concord_version()

    enum:
        CONCORD_OK
        CONCORD_EINVAL
        CONCORD_ENOMEM
        CONCORD_EPARSE
        CONCORD_EIO
        CONCORD_ENOTCONVERGED
        CONCORD_ENUMERIC
        CONCORD_EINFEASIBLE
        CONCORD_ECALLBACK

    const char *concord_strerror(int code)
    const char *concord_status_name(int status)

    ctypedef struct concord_graph:
        pass

    concord_graph *concord_graph_new()
    void concord_graph_free(concord_graph *g)
    const char *concord_last_error(const concord_graph *g)

    int concord_add_variables(concord_graph *g, int32_t count, const double *scores,
                              int32_t *first)
    const char *concord_score_refusal(double x)
    const char *concord_additional_score_refusal(const concord_graph *g, int32_t output,
                                                 double x)

    ctypedef enum concord_logic:
        CONCORD_XOR
        CONCORD_XOROUT
        CONCORD_ATMOSTONE
        CONCORD_OR
        CONCORD_OROUT
        CONCORD_ANDOUT
        CONCORD_IMPLY

    int concord_add_logic(concord_graph *g, concord_logic kind, int32_t degree,
                          const int32_t *vars, const cbool *negated, int32_t *factor)
    int concord_add_budget(concord_graph *g, int32_t degree, const int32_t *vars,
                           const cbool *negated, double budget, cbool exact, int32_t *factor)
    int concord_add_knapsack(concord_graph *g, int32_t degree, const int32_t *vars,
                             const cbool *negated, const double *costs, double budget,
                             int32_t *factor)
    int concord_add_pair(concord_graph *g, int32_t var1, int32_t var2, double score,
                         int32_t *factor)
    int concord_add_multi_variable(concord_graph *g, int32_t num_states, const double *scores,
                                   cbool one_hot, int32_t *first)
    int32_t concord_num_multi_variables(const concord_graph *g)
    int concord_multi_variable(const concord_graph *g, int32_t m, int32_t *first,
                               int32_t *num_states)
    int concord_multi_variable_labels(const concord_graph *g, int32_t m, int32_t *labels)
    int concord_add_dense(concord_graph *g, int32_t n_vars, const int32_t *num_states,
                          const int32_t *vars, const double *scores, int32_t *factor)

    enum:
        CONCORD_TREE_PROJECTIVE
        CONCORD_TREE_SINGLE_ROOT
        CONCORD_MATCHING_EVERY_ROW
        CONCORD_MATCHING_EVERY_COL

    int concord_add_tree(concord_graph *g, int32_t length, int32_t n_arcs, const int32_t *heads,
                         const int32_t *modifiers, const int32_t *vars, unsigned flags,
                         int32_t *factor)
    int concord_add_matching(concord_graph *g, int32_t rows, int32_t cols, const int32_t *vars,
                             unsigned flags, int32_t *factor)
    int concord_add_sequence(concord_graph *g, int32_t length, const int32_t *num_states,
                             const int32_t *vars, const double *scores, int32_t *factor)
    int concord_add_sequence_budget(concord_graph *g, int32_t length, const int32_t *num_states,
                                    const int32_t *vars, int32_t budget, const double *scores,
                                    int32_t *factor)
    int concord_add_head_automaton(concord_graph *g, int32_t n_modifiers, const int32_t *vars,
                                   const double *scores, int32_t *factor)
    int concord_add_grandparent_head_automaton(concord_graph *g, int32_t n_grandparents,
                                               int32_t n_modifiers, const int32_t *vars,
                                               const double *scores, int32_t *factor)
    int concord_add_general_tree(concord_graph *g, int32_t n_nodes, const int32_t *num_states,
                                 const int32_t *parents, const int32_t *vars,
                                 const double *scores, int32_t *factor)
    int concord_add_general_tree_counts(concord_graph *g, int32_t n_nodes,
                                        const int32_t *num_states, const int32_t *parents,
                                        const int32_t *vars, const double *scores,
                                        int32_t *factor)
    int concord_add_sequence_compressor(concord_graph *g, int32_t n_words, const int32_t *vars,
                                        const double *scores, int32_t *factor)

    int concord_add_binary_tree(concord_graph *g, int32_t n_nodes, const int32_t *parents,
                                const int32_t *vars, const double *scores, int32_t *factor)
    int concord_add_binary_tree_counts(concord_graph *g, int32_t n_nodes,
                                       const int32_t *parents, const cbool *counted,
                                       const cbool *has_count_scores, int32_t max_bins,
                                       const int32_t *vars, const double *scores,
                                       int32_t *factor)
    int concord_add_compression_budget(concord_graph *g, int32_t length, int32_t budget,
                                       const cbool *counted, int32_t n_bigrams,
                                       const int32_t *bigram_positions, const int32_t *vars,
                                       const double *scores, int32_t *factor)

    ctypedef int (*concord_map_fn)(void *user, const double *variable_scores,
                                   const double *additional_scores, double *variable_values,
                                   double *additional_values, double *value)
    ctypedef int (*concord_qp_fn)(void *user, const double *variable_scores,
                                  const double *additional_scores, const double *weights,
                                  double *variable_values, double *additional_values)
    int concord_add_factor(concord_graph *g, int32_t degree, const int32_t *vars,
                           const cbool *negated, int32_t num_additionals,
                           const double *additional_scores, concord_map_fn map, void *user,
                           int32_t *factor)
    int concord_set_factor_qp(concord_graph *g, int32_t factor, concord_qp_fn qp)

    int32_t concord_num_variables(const concord_graph *g)
    int32_t concord_num_factors(const concord_graph *g)
    int32_t concord_num_additionals(const concord_graph *g)
    int concord_factor_additionals(const concord_graph *g, int32_t f, int32_t *first,
                                   int32_t *count)
    int concord_factor_degree(const concord_graph *g, int32_t f, int32_t *degree)
    int concord_factor_variables(const concord_graph *g, int32_t f, int32_t *vars,
                                 cbool *negated)
    int concord_set_variable_scores(concord_graph *g, int32_t first, int32_t count,
                                    const double *scores)
    int concord_set_additional_scores(concord_graph *g, int32_t first, int32_t count,
                                      const double *scores)
    const double *concord_variable_scores(const concord_graph *g)
    int concord_set_regularization(concord_graph *g, int32_t first, int32_t count,
                                   const double *weights)
    const double *concord_regularization(const concord_graph *g)
    const double *concord_additional_scores(const concord_graph *g)

    ctypedef struct concord_solver:
        pass

    ctypedef struct concord_progress:
        int32_t iteration
        double value
        double upper_bound
        double primal_residual
        double dual_residual
        double eta
        double seconds
        int64_t nodes
        int64_t open_nodes

    ctypedef int (*concord_progress_fn)(void *context, const concord_progress *progress)

    ctypedef enum concord_search:
        CONCORD_SEARCH_BEST_FIRST
        CONCORD_SEARCH_DEPTH_FIRST

    ctypedef enum concord_step_rule:
        CONCORD_STEP_SQRT
        CONCORD_STEP_DECREASE
        CONCORD_STEP_POLYAK

    ctypedef struct concord_settings:
        int32_t max_iter
        double tol
        double eta
        cbool adapt_eta
        double relaxation
        int32_t bound_every
        int32_t max_inner_iter
        int32_t acceleration
        cbool warm_start
        double time_limit
        concord_progress_fn progress
        void *progress_context
        double backward_tol
        int32_t backward_max_iter
        cbool backward_power
        cbool acyclic
        int64_t node_limit
        concord_search search
        double exact_gap
        int32_t heuristic_every
        concord_step_rule psdd_step
        double psdd_eta

    void concord_default_settings(concord_settings *s)
    int concord_check_settings(const concord_settings *s, char *error, size_t error_size)

    ctypedef struct concord_info:
        int status
        int32_t iterations
        double value
        double upper_bound
        double primal_residual
        double dual_residual
        cbool integral
        double eta
        double seconds
        int64_t factor_solves
        int64_t oracle_calls
        cbool acyclic

    int concord_solver_new(const concord_graph *g, concord_solver **out)
    void concord_solver_free(concord_solver *s)
    const char *concord_solver_last_error(const concord_solver *s)
    int concord_solver_callback_code(const concord_solver *s)
    int concord_solver_set_scores(concord_solver *s, const double *variable_scores,
                                  const double *additional_scores)
    const double *concord_solver_variable_scores(const concord_solver *s)
    const double *concord_solver_additional_scores(const concord_solver *s)
    int concord_solver_map(concord_solver *s, const concord_settings *settings,
                           concord_info *info)
    int concord_solver_sparse(concord_solver *s, const concord_settings *settings,
                              concord_info *info)
    int concord_solver_exact(concord_solver *s, const concord_settings *settings,
                             concord_info *info)
    int concord_solver_psdd(concord_solver *s, const concord_settings *settings,
                            concord_info *info)
    int concord_solver_mplp(concord_solver *s, const concord_settings *settings,
                            concord_info *info)

    ctypedef struct concord_exact_info:
        int64_t nodes
        int64_t pruned
        int64_t infeasible
        int64_t open
        int64_t improvements
        int32_t max_depth
        double root_bound
        double gap
        double best_seconds
        cbool acyclic

    int concord_solver_exact_info(const concord_solver *s, concord_exact_info *out)
    const double *concord_solver_variables(const concord_solver *s)
    const double *concord_solver_additionals(const concord_solver *s)

    ctypedef enum concord_algorithm:
        CONCORD_ALGORITHM_AD3
        CONCORD_ALGORITHM_SPARSE
        CONCORD_ALGORITHM_EXACT
        CONCORD_ALGORITHM_PSDD
        CONCORD_ALGORITHM_MPLP

    int concord_solve_batch(concord_solver **solvers, size_t count,
                            concord_algorithm algorithm, const concord_settings *settings,
                            concord_info *infos, int threads)

    enum: CONCORD_FACE_COMPLETION_LIMIT

    ctypedef struct concord_backward_info:
        int32_t iterations
        double residual
        cbool converged
        double seconds
        int32_t incomplete_faces

    int concord_solver_backward(concord_solver *s, const concord_settings *settings,
                                const double *du, const double *dv, double *dtheta,
                                double *dphi, concord_backward_info *info)
    int concord_solver_links(concord_solver *s, double *multipliers, double *copies)
    int concord_solver_factor_map(concord_solver *s, int32_t f, const double *variable_scores,
                                  const double *additional_scores, double *u, double *v,
                                  double *value)
    int concord_solver_factor_qp(concord_solver *s, int32_t f, const double *variable_scores,
                                 const double *additional_scores, const double *weights,
                                 double *u, double *v, int32_t *count)
    int concord_solver_factor_distribution(concord_solver *s, int32_t f, int32_t *count)
    int concord_solver_distribution_entry(const concord_solver *s, int32_t k, double *weight,
                                          double *u, double *v)
    int concord_solver_loss_sparsemap(concord_solver *s, const concord_settings *settings,
                                      const double *u_gold, const double *v_gold,
                                      double *loss, double *dtheta, double *dphi,
                                      concord_info *info)
    int concord_solver_loss_hinge(concord_solver *s, const concord_settings *settings,
                                  const double *u_gold, const double *v_gold, double *loss,
                                  double *dtheta, double *dphi, concord_info *info)

    ctypedef struct concord_decoding:
        double value
        int32_t violated
        int32_t passes

    int concord_solver_decode(concord_solver *s, concord_decoding *result)
    const double *concord_solver_decoded(const concord_solver *s)
    int concord_solver_decoded_additionals(concord_solver *s, double *v)
    int concord_solver_decoded_labels(const concord_solver *s, int32_t *labels)
    int concord_solver_evaluate(concord_solver *s, const double *x, concord_decoding *result)
    int concord_assignment_from_labels(const concord_graph *g, const int32_t *labels,
                                       double *x)

    ctypedef enum concord_format:
        CONCORD_FORMAT_AUTO
        CONCORD_FORMAT_FG
        CONCORD_FORMAT_UAI

    ctypedef void (*concord_warning_fn)(void *context, const char *message)

    ctypedef struct concord_reader:
        pass

    int concord_reader_open_file(const char *path, concord_format format,
                                 concord_reader **reader, char *error, size_t error_size,
                                 concord_warning_fn warn, void *context)
    int concord_reader_open_buffer(const char *data, size_t size, const char *name,
                                   concord_format format, concord_reader **reader,
                                   char *error, size_t error_size, concord_warning_fn warn,
                                   void *context)
    int concord_reader_set_evidence(concord_reader *reader, const char *path)
    int concord_reader_next(concord_reader *reader, concord_graph **graph)
    int concord_reader_uai_states(const concord_reader *reader, int32_t var,
                                  int32_t *num_states, const int32_t **state_vars)
    void concord_reader_close(concord_reader *reader)
