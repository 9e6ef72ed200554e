"""ctypes binding of the parts of concord's C API the Python tests use.

The tests load the shared library the CMake build produces (libconcord.so),
named by the environment variable CONCORD_LIB (default: build-test/ or build/
at the top of the source tree). Every prototype below mirrors the one in
include/concord.h, and concord_settings, concord_info and
concord_backward_info are ctypes Structures with their fields in header
order, so ctypes lays them out as the C compiler does.

Besides the raw binding, this module holds GraphSpec: a plain description of
a factor graph (build steps in order, scores) and `build`, which creates the
graph through the public API. The tests' references read the same GraphSpec
and derive the factors' meaning from concord.h's documentation on their own;
nothing here knows how concord solves anything.
"""

import ctypes
import os
from ctypes import (POINTER, Structure, byref, c_bool, c_char_p, c_double, c_int,
                    c_int32, c_int64, c_size_t)

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(os.path.dirname(_HERE))


def library_path():
    path = os.environ.get("CONCORD_LIB")
    if path:
        return path
    for build in ("build-test", "build"):
        candidate = os.path.join(_ROOT, build, "libconcord.so")
        if os.path.exists(candidate):
            return candidate
    return os.path.join(_ROOT, "build-test", "libconcord.so")


lib = ctypes.CDLL(library_path())

# ---------------------------------------------------------------------------
# Constants (enum concord_code, concord_status, concord_logic)

OK, EINVAL, ENOMEM, EPARSE, EIO, ENOTCONVERGED, ENUMERIC, EINFEASIBLE, ECALLBACK = range(9)
(STATUS_UNSOLVED, STATUS_INTEGRAL, STATUS_FRACTIONAL, STATUS_MAX_ITER, STATUS_NUMERIC,
 STATUS_INFEASIBLE, STATUS_TIME_LIMIT, STATUS_INTERRUPTED, STATUS_CALLBACK_FAILED) = range(9)
XOR, XOROUT, ATMOSTONE, OR, OROUT, ANDOUT, IMPLY = range(7)
LOGIC_KINDS = {"XOR": XOR, "XOROUT": XOROUT, "ATMOSTONE": ATMOSTONE, "OR": OR,
               "OROUT": OROUT, "ANDOUT": ANDOUT, "IMPLY": IMPLY}


class Settings(Structure):
    _fields_ = [
        ("max_iter", c_int32),
        ("tol", c_double),
        ("eta", c_double),
        ("adapt_eta", c_bool),
        ("relaxation", c_double),
        ("bound_every", c_int32),
        ("max_inner_iter", c_int32),
        ("acceleration", c_int32),
        ("warm_start", c_bool),
        ("time_limit", c_double),
        ("progress", ctypes.c_void_p),
        ("progress_context", ctypes.c_void_p),
        ("backward_tol", c_double),
        ("backward_max_iter", c_int32),
        ("backward_power", c_bool),
        ("acyclic", c_bool),
        ("node_limit", c_int64),
        ("search", c_int),
        ("exact_gap", c_double),
        ("heuristic_every", c_int32),
        ("psdd_step", c_int),
        ("psdd_eta", c_double),
    ]


class Info(Structure):
    _fields_ = [
        ("status", c_int),
        ("iterations", c_int32),
        ("value", c_double),
        ("upper_bound", c_double),
        ("primal_residual", c_double),
        ("dual_residual", c_double),
        ("integral", c_bool),
        ("eta", c_double),
        ("seconds", c_double),
        ("factor_solves", c_int64),
        ("oracle_calls", c_int64),
        ("acyclic", c_bool),
    ]


class BackwardInfo(Structure):
    _fields_ = [
        ("iterations", c_int32),
        ("residual", c_double),
        ("converged", c_bool),
        ("seconds", c_double),
    ]


_graph_p = ctypes.c_void_p
_dp = POINTER(c_double)
_ip = POINTER(c_int32)
_bp = POINTER(c_bool)


def _proto(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


concord_strerror = _proto("concord_strerror", c_char_p, c_int)
concord_graph_new = _proto("concord_graph_new", _graph_p)
concord_graph_free = _proto("concord_graph_free", None, _graph_p)
concord_last_error = _proto("concord_last_error", c_char_p, _graph_p)
concord_add_variables = _proto("concord_add_variables", c_int, _graph_p, c_int32, _dp, _ip)
concord_add_logic = _proto("concord_add_logic", c_int, _graph_p, c_int, c_int32, _ip, _bp, _ip)
concord_add_budget = _proto("concord_add_budget", c_int, _graph_p, c_int32, _ip, _bp, c_double,
                            c_bool, _ip)
concord_add_knapsack = _proto("concord_add_knapsack", c_int, _graph_p, c_int32, _ip, _bp, _dp,
                              c_double, _ip)
concord_add_pair = _proto("concord_add_pair", c_int, _graph_p, c_int32, c_int32, c_double, _ip)
concord_add_multi_variable = _proto("concord_add_multi_variable", c_int, _graph_p, c_int32, _dp,
                                    c_bool, _ip)
concord_add_dense = _proto("concord_add_dense", c_int, _graph_p, c_int32, _ip, _ip, _dp, _ip)
concord_num_variables = _proto("concord_num_variables", c_int32, _graph_p)
concord_num_factors = _proto("concord_num_factors", c_int32, _graph_p)
concord_num_additionals = _proto("concord_num_additionals", c_int32, _graph_p)
concord_factor_additionals = _proto("concord_factor_additionals", c_int, _graph_p, c_int32, _ip,
                                    _ip)
concord_set_variable_scores = _proto("concord_set_variable_scores", c_int, _graph_p, c_int32,
                                     c_int32, _dp)
concord_set_additional_scores = _proto("concord_set_additional_scores", c_int, _graph_p, c_int32,
                                       c_int32, _dp)
concord_default_settings = _proto("concord_default_settings", None, POINTER(Settings))
concord_check_settings = _proto("concord_check_settings", c_int, POINTER(Settings),
                                ctypes.c_char_p, c_size_t)
_solver_p = ctypes.c_void_p
concord_solver_new = _proto("concord_solver_new", c_int, _graph_p, POINTER(_solver_p))
concord_solver_free = _proto("concord_solver_free", None, _solver_p)
concord_solver_last_error = _proto("concord_solver_last_error", c_char_p, _solver_p)
concord_solver_map = _proto("concord_solver_map", c_int, _solver_p, POINTER(Settings),
                            POINTER(Info))
concord_solver_sparse = _proto("concord_solver_sparse", c_int, _solver_p, POINTER(Settings),
                               POINTER(Info))
concord_solver_backward = _proto("concord_solver_backward", c_int, _solver_p, POINTER(Settings),
                                 _dp, _dp, _dp, _dp, POINTER(BackwardInfo))
concord_solver_factor_distribution = _proto("concord_solver_factor_distribution", c_int,
                                            _solver_p, c_int32, _ip)
concord_solver_distribution_entry = _proto("concord_solver_distribution_entry", c_int, _solver_p,
                                           c_int32, _dp, _dp, _dp)
concord_solver_loss_sparsemap = _proto("concord_solver_loss_sparsemap", c_int, _solver_p,
                                       POINTER(Settings), _dp, _dp, _dp, _dp, _dp, POINTER(Info))
concord_solver_loss_hinge = _proto("concord_solver_loss_hinge", c_int, _solver_p,
                                   POINTER(Settings), _dp, _dp, _dp, _dp, _dp, POINTER(Info))
concord_solver_variables = _proto("concord_solver_variables", _dp, _solver_p)
concord_solver_additionals = _proto("concord_solver_additionals", _dp, _solver_p)


def _darr(x):
    """A contiguous float64 copy of x and a pointer to it (None for None)."""
    if x is None:
        return None, None
    a = np.ascontiguousarray(x, dtype=np.float64)
    return a, a.ctypes.data_as(_dp)


def _iarr(x):
    a = np.ascontiguousarray(x, dtype=np.int32)
    return a, a.ctypes.data_as(_ip)


def _barr(x):
    if x is None:
        return None, None
    a = (c_bool * len(x))(*[bool(b) for b in x])
    return a, ctypes.cast(a, _bp)


class ConcordError(RuntimeError):
    def __init__(self, code, message):
        super().__init__("%s: %s" % (concord_strerror(code).decode(), message))
        self.code = code


def default_settings(**overrides):
    s = Settings()
    concord_default_settings(byref(s))
    for key, value in overrides.items():
        if not hasattr(s, key):
            raise AttributeError(key)
        setattr(s, key, value)
    return s


# ---------------------------------------------------------------------------
# Graph descriptions

class GraphSpec:
    """A factor graph as plain data, in build order.

    steps: list of tuples, each one API call:
      ("vars", count)                      binary variables
      ("multi", num_states, one_hot)       a multi-variable (one_hot adds an XOR)
      ("logic", name, vars, negated)       name in LOGIC_KINDS
      ("budget", vars, negated, budget, exact)
      ("knapsack", vars, negated, costs, budget)
      ("pair", var1, var2)                 its score is phi at its additional
      ("dense", num_states, vars, forbidden)  forbidden: joint states (bools)
    theta: variable scores (length n_vars); phi: additional scores (length
    n_add; the entries of forbidden DENSE states are ignored).
    """

    def __init__(self, steps, theta, phi):
        self.steps = list(steps)
        self.theta = np.asarray(theta, dtype=float)
        self.phi = np.asarray(phi, dtype=float)

    def sizes(self):
        """(n_vars, n_add) implied by the steps."""
        n_vars = n_add = 0
        for step in self.steps:
            if step[0] == "vars":
                n_vars += step[1]
            elif step[0] == "multi":
                n_vars += step[1]
            elif step[0] == "pair":
                n_add += 1
            elif step[0] == "dense":
                n_add += int(np.prod(step[1]))
        return n_vars, n_add

    def describe(self):
        """A reproducer: the steps and scores as Python literals."""
        return "GraphSpec(%r,\n  theta=%r,\n  phi=%r)" % (
            self.steps, self.theta.tolist(), self.phi.tolist())


class Graph:
    """An owned concord_graph built from a GraphSpec, with one solver over
    it (which reads the graph's scores)."""

    def __init__(self, spec):
        self.spec = spec
        self.g = concord_graph_new()
        self.s = None
        if not self.g:
            raise MemoryError
        self._keep = []
        try:
            for step in spec.steps:
                self._add(step)
            solver = _solver_p()
            self._check(concord_solver_new(self.g, byref(solver)))
            self.s = solver
        except Exception:
            self.close()
            raise
        self.n_vars = concord_num_variables(self.g)
        self.n_add = concord_num_additionals(self.g)
        self.n_factors = concord_num_factors(self.g)
        assert (self.n_vars, self.n_add) == spec.sizes()
        self.set_scores(spec.theta, spec.phi)

    def last_error(self):
        """The solver's last message, or the graph's when there is none."""
        message = concord_solver_last_error(self.s).decode() if self.s else ""
        return message or concord_last_error(self.g).decode()

    def _check(self, rc):
        if rc != OK:
            raise ConcordError(rc, self.last_error())
        return rc

    def _add(self, step):
        kind = step[0]
        g = self.g
        if kind == "vars":
            self._check(concord_add_variables(g, step[1], None, None))
        elif kind == "multi":
            self._check(concord_add_multi_variable(g, step[1], None, step[2], None))
        elif kind == "logic":
            _, name, vars_, neg = step
            va, vp = _iarr(vars_)
            na, np_ = _barr(neg)
            self._check(concord_add_logic(g, LOGIC_KINDS[name], len(vars_), vp, np_, None))
        elif kind == "budget":
            _, vars_, neg, budget, exact = step
            va, vp = _iarr(vars_)
            na, np_ = _barr(neg)
            self._check(concord_add_budget(g, len(vars_), vp, np_, float(budget), bool(exact),
                                           None))
        elif kind == "knapsack":
            _, vars_, neg, costs, budget = step
            va, vp = _iarr(vars_)
            na, np_ = _barr(neg)
            ca, cp = _darr(costs)
            self._check(concord_add_knapsack(g, len(vars_), vp, np_, cp, float(budget), None))
        elif kind == "pair":
            self._check(concord_add_pair(g, step[1], step[2], 0.0, None))
        elif kind == "dense":
            _, states, vars_, forbidden = step
            sa, sp = _iarr(states)
            va, vp = _iarr(vars_)
            table = np.where(np.asarray(forbidden, dtype=bool), -np.inf, 0.0)
            ta, tp = _darr(table)
            self._check(concord_add_dense(g, len(states), sp, vp, tp, None))
        else:
            raise ValueError(kind)

    def close(self):
        if self.s:
            concord_solver_free(self.s)
            self.s = None
        if self.g:
            concord_graph_free(self.g)
            self.g = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def set_scores(self, theta, phi=None):
        ta, tp = _darr(theta)
        assert ta.shape == (self.n_vars,)
        self._check(concord_set_variable_scores(self.g, 0, self.n_vars, tp))
        if phi is not None and self.n_add:
            pa, pp = _darr(phi)
            assert pa.shape == (self.n_add,)
            self._check(concord_set_additional_scores(self.g, 0, self.n_add, pp))

    def factor_additionals(self, f):
        first, count = c_int32(), c_int32()
        self._check(concord_factor_additionals(self.g, f, byref(first), byref(count)))
        return first.value, count.value

    def solution(self):
        """(u, v) of the last solve."""
        u = np.ctypeslib.as_array(concord_solver_variables(self.s), (self.n_vars,)).copy()
        if self.n_add:
            v = np.ctypeslib.as_array(concord_solver_additionals(self.s), (self.n_add,)).copy()
        else:
            v = np.zeros(0)
        return u, v

    def solve_sparse(self, settings=None, check=True):
        """LP-SparseMAP; returns (rc, u, v, info)."""
        info = Info()
        rc = concord_solver_sparse(self.s, byref(settings) if settings else None, byref(info))
        if check:
            self._check(rc)
        u, v = self.solution() if rc in (OK, ENOTCONVERGED) else (None, None)
        return rc, u, v, info

    def solve_map(self, settings=None, check=True):
        info = Info()
        rc = concord_solver_map(self.s, byref(settings) if settings else None, byref(info))
        if check:
            self._check(rc)
        u, v = self.solution() if rc in (OK, ENOTCONVERGED) else (None, None)
        return rc, u, v, info

    def backward(self, du, dv=None, settings=None):
        """(dtheta, dphi, info) for the last solve_sparse."""
        da, dp = _darr(du)
        ea, ep = _darr(dv)
        dtheta = np.zeros(self.n_vars)
        dphi = np.zeros(max(self.n_add, 1))
        binfo = BackwardInfo()
        self._check(concord_solver_backward(self.s, byref(settings) if settings else None, dp,
                                            ep, dtheta.ctypes.data_as(_dp),
                                            dphi.ctypes.data_as(_dp), byref(binfo)))
        return dtheta, dphi[:self.n_add], binfo

    def distribution(self, f, degree, n_add):
        """Factor f's sparse distribution: (weights, U [k x degree], V [k x n_add])."""
        count = c_int32()
        self._check(concord_solver_factor_distribution(self.s, f, byref(count)))
        k = count.value
        w = np.zeros(k)
        U = np.zeros((k, degree))
        V = np.zeros((k, max(n_add, 1)))
        for j in range(k):
            wj = c_double()
            uj = np.zeros(max(degree, 1))
            vj = np.zeros(max(n_add, 1))
            self._check(concord_solver_distribution_entry(self.s, j, byref(wj),
                                                          uj.ctypes.data_as(_dp),
                                                          vj.ctypes.data_as(_dp)))
            w[j] = wj.value
            U[j] = uj[:degree]
            V[j] = vj
        return w, U, V[:, :n_add]

    def loss(self, which, u_gold, v_gold=None, settings=None):
        """(rc, loss, dtheta, dphi, info) of concord_solver_loss_sparsemap/_hinge."""
        fn = {"sparsemap": concord_solver_loss_sparsemap,
              "hinge": concord_solver_loss_hinge}[which]
        ua, up = _darr(u_gold)
        va, vp = _darr(v_gold)
        loss = c_double()
        dtheta = np.zeros(self.n_vars)
        dphi = np.zeros(max(self.n_add, 1))
        info = Info()
        rc = fn(self.s, byref(settings) if settings else None, up, vp, byref(loss),
                dtheta.ctypes.data_as(_dp), dphi.ctypes.data_as(_dp), byref(info))
        return rc, loss.value, dtheta, dphi[:self.n_add], info
