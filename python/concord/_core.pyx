# cython: language_level=3
"""concord's low-level module: the C API of include/concord.h, one call for one.

Everything here maps onto a C function or struct, with NumPy arrays in
place of pointers; the pythonic layer (concord.FactorGraph and the factor
classes) and the drop-in layers are built on it.

- ``Graph``: a concord_graph (the problem). Its ``add_*`` methods take
  variable ids as integer arrays and return the new factor's id (or the
  first new variable's id); scores are read from any float array (float64
  and C-contiguous arrays are read in place, others are converted).
- ``Solver``: a concord_solver over a Graph (its own scores, solves, the
  solution, the backward pass, decoding, distributions, losses).
- ``solve_batch``: many solvers on C threads, the GIL released.
- ``Settings``: a concord_settings, built from keyword arguments.
- ``Reader``, ``read_file``, ``read_buffer``, ``read_uai``: the readers.

Errors: a C function's error code becomes an exception carrying the C
message: CONCORD_EINVAL, EPARSE and EINFEASIBLE are ``ValueError``
subclasses, ENOMEM is ``MemoryError``, EIO ``OSError``, ENUMERIC
``ArithmeticError``. A solve that stops early (iteration cap, time limit,
interrupt) or finds the constraints infeasible is not an error: its
``Info.status`` says so. An exception raised by a Python oracle or progress
callback during a C call is stored, the C call ends (CONCORD_ECALLBACK, or
an interrupted solve), and the exception is raised again when it returns.

Every solve, backward pass, decoding and loss runs with the GIL released;
Python callbacks take it back while they run.
"""

import math
import os
import sys
import warnings
from collections import namedtuple

import numpy as np

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy, memset
from libc.stdlib cimport malloc, free
from cpython.number cimport PyNumber_Index
cimport cython

from concord._capi cimport *

__all__ = ["Graph", "Solver", "solve_batch", "Settings", "Info", "BackwardInfo", "Decoding",
           "Progress", "Reader", "read_file", "read_buffer", "read_uai", "refused_score",
           "strerror", "status_name", "version", "LOGIC_KINDS", "ALGORITHMS", "ExactInfo", "ConcordError",
           "InvalidArgumentError", "ParseError", "InfeasibleError", "NumericError", "FileError",
           "CallbackError", "OK", "EINVAL", "ENOMEM", "EPARSE", "EIO", "ENOTCONVERGED",
           "ENUMERIC", "EINFEASIBLE", "ECALLBACK"]

# ---------------------------------------------------------------------------
# Errors

cdef extern from *:
    """
    #define CONCORD_INT32_MAX 2147483647
    """
    int64_t CONCORD_INT32_MAX


class ConcordError(Exception):
    """An error reported by the C library. ``code`` is the C return code
    (``CONCORD_E*``), the message is the library's."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code

    def __reduce__(self):
        """Pickled (and copied) as the call that made it, with its code and
        message: an error raised in a worker process (multiprocessing,
        ProcessPoolExecutor) reaches the parent as itself, where unpickling
        it with the message alone failed and broke the pool."""
        return type(self), (self.code, str(self)), self.__dict__


class InvalidArgumentError(ConcordError, ValueError):
    """CONCORD_EINVAL: a bad argument (index out of range, repeated
    variable, non-finite score, wrong size...)."""


class ParseError(ConcordError, ValueError):
    """CONCORD_EPARSE: a malformed file ("name:line: ..." in the message)."""


class InfeasibleError(ConcordError, ValueError):
    """CONCORD_EINFEASIBLE from a builder: the factor has no allowed
    configuration (a tree over arcs that span no tree, a matching flag that
    cannot be met...)."""


class NumericError(ConcordError, ArithmeticError):
    """CONCORD_ENUMERIC: the solve produced non-finite values."""


class FileError(ConcordError, OSError):
    """CONCORD_EIO: a file could not be read."""


class CallbackError(ConcordError, RuntimeError):
    """CONCORD_ECALLBACK when no Python exception explains it: a user
    factor's oracle wrote an invalid configuration."""


_ERRORS = {
    CONCORD_EINVAL: InvalidArgumentError,
    CONCORD_EPARSE: ParseError,
    CONCORD_EINFEASIBLE: InfeasibleError,
    CONCORD_ENUMERIC: NumericError,
    CONCORD_EIO: FileError,
    CONCORD_ECALLBACK: CallbackError,
}


cdef str _text(const char *message):
    """A C string as a str. The library's messages quote their input (a
    file's bytes, a path), which need not be UTF-8: undecodable bytes
    become U+FFFD rather than an error that would hide the message."""
    return message.decode("utf-8", "replace")


def _error(int code, message):
    """The exception for C return code `code` with the C message."""
    if code == CONCORD_ENOMEM:
        return MemoryError(message or "out of memory")
    text = message or _text(concord_strerror(code))
    return _ERRORS.get(code, ConcordError)(code, text)


def strerror(code):
    """concord_strerror: a short description of a return code."""
    return _text(concord_strerror(_as_int32(code, "code")))


def status_name(status):
    """concord_status_name: "integral", "fractional", "max_iter", ..."""
    return _text(concord_status_name(_as_int32(status, "status")))


def version():
    """The C library's version, "MAJOR.MINOR.PATCH"."""
    return _text(concord_version())


OK = CONCORD_OK
EINVAL = CONCORD_EINVAL
ENOMEM = CONCORD_ENOMEM
EPARSE = CONCORD_EPARSE
EIO = CONCORD_EIO
ENOTCONVERGED = CONCORD_ENOTCONVERGED
ENUMERIC = CONCORD_ENUMERIC
EINFEASIBLE = CONCORD_EINFEASIBLE
ECALLBACK = CONCORD_ECALLBACK

LOGIC_KINDS = {"XOR": CONCORD_XOR, "XOROUT": CONCORD_XOROUT,
               "ATMOSTONE": CONCORD_ATMOSTONE, "OR": CONCORD_OR, "OROUT": CONCORD_OROUT,
               "ANDOUT": CONCORD_ANDOUT, "IMPLY": CONCORD_IMPLY}

# ---------------------------------------------------------------------------
# Arrays in

cdef object _float64 = np.float64
cdef object _int32 = np.int32
cdef object _int64 = np.int64


cpdef object real_array(object values, str what):
    """values as a NumPy array of real numbers (booleans, integers or
    floats, not yet converted): complex numbers (their imaginary parts would
    be lost), strings, dates and other objects are a TypeError, a masked
    array a ValueError (its masked entries would be read) naming `what`."""
    if isinstance(values, np.ma.MaskedArray):
        raise ValueError("%s: masked arrays are not accepted (fill the masked entries first)"
                         % what)
    array = np.asarray(values)
    if array.dtype.kind not in "biuf":
        raise TypeError("%s must be real numbers, not %s" % (what, array.dtype))
    return array


cdef const double[::1] _doubles(object values, Py_ssize_t size, str what):
    """values as a flat float64 buffer (no copy when it already is one),
    checked by real_array and to hold `size` numbers (any size when
    size < 0)."""
    array = np.ascontiguousarray(real_array(values, what), dtype=_float64).reshape(-1)
    if size >= 0 and array.shape[0] != size:
        raise ValueError("%s: expected %d values, got %d" % (what, size, array.shape[0]))
    return array


cdef const int32_t[::1] _ids(object values, Py_ssize_t size, str what):
    """values as a flat int32 buffer: integers only, each within int32 (the C
    library checks that they name existing variables)."""
    array = np.asarray(values)
    if array.size == 0:
        array = array.astype(_int32)
    elif array.dtype.kind not in "iu":
        raise TypeError("%s: expected integers, got %s" % (what, array.dtype))
    elif array.dtype == _int64:
        array = _narrowed(np.ascontiguousarray(array).reshape(-1), what)
    elif array.dtype.itemsize > 4 or array.dtype == np.uint32:
        if array.min() < -CONCORD_INT32_MAX - 1 or array.max() > CONCORD_INT32_MAX:
            raise _out_of_range(array, what)
    array = np.ascontiguousarray(array, dtype=_int32).reshape(-1)
    if size >= 0 and array.shape[0] != size:
        raise ValueError("%s: expected %d values, got %d" % (what, size, array.shape[0]))
    return array


cdef object _narrowed(wide, str what):
    """A flat int64 array of ids as a new int32 array, checked to fit in
    one pass (int64 is what lists of Python ints become)."""
    cdef const int64_t[::1] values = wide
    out = np.empty(values.shape[0], dtype=_int32)
    cdef int32_t[::1] narrow = out
    cdef Py_ssize_t i
    for i in range(values.shape[0]):
        if values[i] < -CONCORD_INT32_MAX - 1 or values[i] > CONCORD_INT32_MAX:
            raise _out_of_range(wide, what)
        narrow[i] = <int32_t>values[i]
    return out


cdef object _out_of_range(array, str what):
    """The error for ids beyond int32, with their range."""
    return ValueError("%s: index out of range (%d..%d)" % (what, array.min(), array.max()))


cdef const unsigned char[::1] _flags(object values, Py_ssize_t size, str what):
    """values (one truth value per link: bools, or numbers 0 and 1) as C
    bools, or None for none."""
    if values is None:
        return None
    given = np.asarray(values).reshape(-1)
    if given.dtype != np.bool_ and not (given.dtype.kind in "iuf" and np.isin(given, (0, 1)).all()):
        raise ValueError("%s: expected truth values (True, False, 0 or 1), got %s"
                         % (what, values))
    array = np.ascontiguousarray(given, dtype=np.bool_)
    if array.shape[0] != size:
        raise ValueError("%s: expected %d flags, got %d" % (what, size, array.shape[0]))
    return array.view(np.uint8)


cdef inline const double *_dptr(const double[::1] view):
    return &view[0] if view is not None and view.shape[0] > 0 else NULL


cdef inline const int32_t *_iptr(const int32_t[::1] view):
    return &view[0] if view is not None and view.shape[0] > 0 else NULL


cdef inline const cbool *_bptr(const unsigned char[::1] view):
    return <const cbool *>&view[0] if view is not None and view.shape[0] > 0 else NULL


cdef object _copy_doubles(const double *data, Py_ssize_t n):
    """A new float64 array holding n doubles copied from data."""
    out = np.empty(n, dtype=_float64)
    cdef double[::1] view = out
    if n > 0 and data != NULL:
        memcpy(&view[0], data, n * sizeof(double))
    return out


# ---------------------------------------------------------------------------
# Results

# module=__name__: namedtuple would take its module from the caller's frame,
# which in an extension module's initialisation is importlib's, and pickle
# would then look the class up there and fail
_InfoBase = namedtuple("Info", "status iterations value upper_bound primal_residual "
                               "dual_residual integral eta seconds factor_solves oracle_calls "
                               "acyclic", module=__name__)


class Info(_InfoBase):
    """How a solve ended (concord_info). ``status`` is the status name:
    "integral", "fractional" (both converged), "optimal" (exact MAP with a
    closed gap), "max_iter", "time_limit", "node_limit", "stalled" (PSDD's
    or MPLP's bound stopped improving), "interrupted" (stopped early; the
    solution is the last iterate, or exact MAP's best assignment so far) or
    "infeasible"; ``value`` the objective at the
    solution, ``upper_bound`` the dual bound, the residuals those of the
    stopping rule; ``acyclic`` True when the graph was solved exactly by
    dynamic programming over its acyclic structure, in one pass."""

    __slots__ = ()

    @property
    def converged(self):
        """True when the solve met its tolerance (exact MAP: proved its
        optimum)."""
        return self.status in ("integral", "fractional", "optimal")


BackwardInfo = namedtuple("BackwardInfo",
                          "iterations residual converged seconds incomplete_faces",
                          module=__name__)
BackwardInfo.__doc__ = ("The backward pass's conjugate-gradient (or power) iterations, "
                        "relative residual, whether it reached backward_tol, time, and "
                        "the number of factors whose face at (nearly) tied scores was too "
                        "large to complete (Solver.backward).")

Decoding = namedtuple("Decoding", "value violated passes", module=__name__)
Decoding.__doc__ = ("A decoded (or evaluated) 0/1 assignment: its value, the number of "
                    "factors it violates (0: feasible), local-search passes.")

ExactInfo = namedtuple("ExactInfo", "nodes pruned infeasible open improvements max_depth "
                                    "root_bound gap best_seconds acyclic", module=__name__)
ExactInfo.__doc__ = ("What the last exact MAP search did (concord_exact_info): nodes "
                     "solved, pruned by their bound, infeasible, left open; improvements of "
                     "the best assignment; the deepest node; the root's LP-MAP bound; the "
                     "final gap; when the best assignment was found; whether dynamic "
                     "programming solved the graph without a search.")

Progress = namedtuple("Progress", "iteration value upper_bound primal_residual dual_residual "
                                  "eta seconds nodes open_nodes", module=__name__)
Progress.__doc__ = "What a progress callback receives (concord_progress)."


cdef object _info(const concord_info *c):
    return Info(status_name(c.status), c.iterations, c.value, c.upper_bound,
                c.primal_residual, c.dual_residual, bool(c.integral), c.eta, c.seconds,
                c.factor_solves, c.oracle_calls, bool(c.acyclic))


# ---------------------------------------------------------------------------
# Settings

_SETTING_NAMES = ("max_iter", "tol", "eta", "adapt_eta", "relaxation", "bound_every",
                  "max_inner_iter", "acceleration", "warm_start", "time_limit", "progress",
                  "backward_tol", "backward_max_iter", "backward_power", "acyclic",
                  "node_limit", "search", "exact_gap", "heuristic_every", "psdd_step",
                  "psdd_eta")

_SEARCHES = {"best_first": CONCORD_SEARCH_BEST_FIRST, "depth_first": CONCORD_SEARCH_DEPTH_FIRST}
_STEP_RULES = {"sqrt": CONCORD_STEP_SQRT, "decrease": CONCORD_STEP_DECREASE,
               "polyak": CONCORD_STEP_POLYAK}


cpdef object as_integer(value, str what):
    """An integer argument as an int (anything with __index__: NumPy
    integers too); anything else (a float, which Cython would truncate
    silently, even 2.0) is a TypeError naming it."""
    try:
        return PyNumber_Index(value)
    except TypeError:
        raise TypeError("%s must be an integer, not %r" % (what, value)) from None


cdef int32_t _as_int32(value, str what) except? -1:
    """An integer argument of a C function, checked by as_integer; beyond
    int32_t, an OverflowError naming it."""
    number = as_integer(value, what)
    if number < -CONCORD_INT32_MAX - 1 or number > CONCORD_INT32_MAX:
        raise OverflowError("%s must fit in 32 bits, not %d" % (what, number))
    return number


cdef object _setting_integer(value, str what, int bits):
    """An integer setting of `bits` bits (32 or 64), checked by as_integer;
    True and False are refused (max_iter=True is a mistake, not 1)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("%s must be an integer, not %r" % (what, value))
    if bits == 32:
        return _as_int32(value, what)
    number = as_integer(value, what)
    if number < -(1 << 63) or number >= (1 << 63):
        raise OverflowError("%s must fit in 64 bits, not %d" % (what, number))
    return number


cdef double _as_real(value, str what) except? -1.0:
    """A real setting or builder argument: a number (int, float, NumPy
    scalar), not a string or a truth value; anything else is a TypeError
    naming it."""
    if not isinstance(value, (str, bytes, bool, np.bool_)):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise TypeError("%s must be a number, not %r" % (what, value))


cpdef bint as_flag(value, str what) except -1:
    """A yes/no setting or builder flag: True or False (NumPy's too), or
    the integers 0 and 1; anything else ("no", which Python counts as
    true) is a TypeError."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    try:
        number = PyNumber_Index(value)
    except TypeError:
        number = None
    if number is not None and number in (0, 1):
        return number == 1
    raise TypeError("%s must be True or False, not %r" % (what, value))


cdef object _named(dict names, value, what):
    """The C enumerator a setting's name stands for."""
    if value not in names:
        raise ValueError("%s must be one of %s, not %r" % (what, ", ".join(names), value))
    return names[value]


cdef object _name_of(dict names, int value):
    for name, number in names.items():
        if number == value:
            return name
    return value


cdef int _progress_trampoline(void *context, const concord_progress *p) nogil:
    with gil:
        return (<_ProgressRelay>context).report(p)


def _refuse_copy(obj):
    """Raises the TypeError that pickling or copying a C-backed object
    gets."""
    raise TypeError("a %s holds C state and cannot be pickled or copied: build it again from "
                    "its inputs" % type(obj).__name__)


def _settings_from_fields(fields):
    """Settings(**fields): what an unpickled Settings is made from."""
    return Settings(**fields)


cdef class Settings:
    """Solver settings (concord_settings), from keyword arguments; the rest
    keep the library's defaults:

    max_iter (100000), tol (1e-6), eta (0.1), adapt_eta (True), relaxation
    (1.0), bound_every (25), max_inner_iter (1; at least 10 once the
    residuals are within tol), acceleration (8),
    warm_start (True), time_limit (0: none), backward_tol (1e-10),
    backward_max_iter (1000), backward_power (False); acyclic (True: solve
    forests by dynamic programming); for exact MAP node_limit (0: none),
    search ("best_first" or "depth_first"), exact_gap (1e-9, relative to the
    best value, as tol is to LP-MAP's), heuristic_every (1); for PSDD
    psdd_step ("sqrt", "decrease" or "polyak") and psdd_eta (1.0); and
    progress: None or a callable taking a ``Progress`` and returning True
    to stop the solve (called whenever the dual bound is fresh: every bound_every iterations,
    more often near the end; an exception it raises stops the
    solve and is raised again by the solving call).

    A setting out of range raises ValueError naming it (OverflowError, as
    for every integer argument, when an integer setting does not fit its C
    type: 32 bits, node_limit 64); TypeError names an
    integer setting given anything but an integer (1.5, True), a real one
    given anything but a number ("1"), and a flag given anything but True,
    False, 0 or 1 ("no").
    """

    cdef concord_settings c  # progress NULL: each call relays to _progress
    cdef object _progress

    def __init__(self, **settings):
        concord_default_settings(&self.c)
        for name, value in settings.items():
            if name not in _SETTING_NAMES:
                raise TypeError("unknown setting %r (settings: %s)" % (name,
                                                                      ", ".join(_SETTING_NAMES)))
            setattr(self, name, value)
        cdef char message[160]
        if concord_check_settings(&self.c, message, sizeof(message)) != CONCORD_OK:
            raise ValueError(_text(message))

    property max_iter:
        """Iterations at most (default 100000; for exact MAP, per node)."""

        def __get__(self): return self.c.max_iter
        def __set__(self, value): self.c.max_iter = _setting_integer(value, "max_iter", 32)
    property tol:
        """Convergence tolerance on the residuals and the gap (default 1e-6)."""

        def __get__(self): return self.c.tol
        def __set__(self, value): self.c.tol = _as_real(value, "tol")
    property eta:
        """Initial ADMM penalty, relative to the scores' scale (default 0.1)."""

        def __get__(self): return self.c.eta
        def __set__(self, value): self.c.eta = _as_real(value, "eta")
    property adapt_eta:
        """Whether the penalty adapts by residual balancing (default True)."""

        def __get__(self): return self.c.adapt_eta
        def __set__(self, value): self.c.adapt_eta = as_flag(value, "adapt_eta")
    property relaxation:
        """ADMM over-relaxation factor (default 1.0)."""

        def __get__(self): return self.c.relaxation
        def __set__(self, value): self.c.relaxation = _as_real(value, "relaxation")
    property bound_every:
        """Iterations between dual bounds (default 25)."""

        def __get__(self): return self.c.bound_every
        def __set__(self, value): self.c.bound_every = _setting_integer(value, "bound_every", 32)
    property max_inner_iter:
        """Oracle calls per active-set solve and iteration (default 1)."""

        def __get__(self): return self.c.max_inner_iter
        def __set__(self, value): self.c.max_inner_iter = _setting_integer(value, "max_inner_iter", 32)
    property acceleration:
        """Anderson acceleration memory (default 8; 0: off)."""

        def __get__(self): return self.c.acceleration
        def __set__(self, value): self.c.acceleration = _setting_integer(value, "acceleration", 32)
    property warm_start:
        """Whether a solve starts from the solver's previous state (default True)."""

        def __get__(self): return self.c.warm_start
        def __set__(self, value): self.c.warm_start = as_flag(value, "warm_start")
    property time_limit:
        """Seconds a solve may take (default 0: no limit)."""

        def __get__(self): return self.c.time_limit
        def __set__(self, value): self.c.time_limit = _as_real(value, "time_limit")
    property backward_tol:
        """Relative tolerance of the backward pass (default 1e-10)."""

        def __get__(self): return self.c.backward_tol
        def __set__(self, value): self.c.backward_tol = _as_real(value, "backward_tol")
    property backward_max_iter:
        """Iterations of the backward pass at most (default 1000)."""

        def __get__(self): return self.c.backward_max_iter
        def __set__(self, value): self.c.backward_max_iter = _setting_integer(value, "backward_max_iter", 32)
    property backward_power:
        """Whether the backward pass uses power iteration (default False:
        conjugate gradients)."""

        def __get__(self): return self.c.backward_power
        def __set__(self, value): self.c.backward_power = as_flag(value, "backward_power")
    property acyclic:
        """Whether forests are solved by dynamic programming (default True)."""

        def __get__(self): return self.c.acyclic
        def __set__(self, value): self.c.acyclic = as_flag(value, "acyclic")
    property node_limit:
        """Branch-and-bound nodes at most for exact MAP (default 0: no limit)."""

        def __get__(self): return self.c.node_limit
        def __set__(self, value): self.c.node_limit = _setting_integer(value, "node_limit", 64)
    property search:
        """Exact MAP's node order: "best_first" (default) or "depth_first"."""

        def __get__(self): return _name_of(_SEARCHES, self.c.search)
        def __set__(self, value): self.c.search = _named(_SEARCHES, value, "search")
    property exact_gap:
        """Exact MAP's gap between bound and value, relative to the value,
        that proves optimality (default 1e-9)."""

        def __get__(self): return self.c.exact_gap
        def __set__(self, value): self.c.exact_gap = _as_real(value, "exact_gap")
    property heuristic_every:
        """Exact MAP decodes an assignment from the LP solution of every
        N-th node neither pruned nor integral (default 1; 0: the root only)."""

        def __get__(self): return self.c.heuristic_every
        def __set__(self, value): self.c.heuristic_every = _setting_integer(value, "heuristic_every", 32)
    property psdd_step:
        """PSDD's step rule: "sqrt" (default), "decrease" or "polyak"."""

        def __get__(self): return _name_of(_STEP_RULES, self.c.psdd_step)
        def __set__(self, value): self.c.psdd_step = _named(_STEP_RULES, value, "psdd_step")
    property psdd_eta:
        """PSDD's initial step, relative to the scores' scale (default 1.0)."""

        def __get__(self): return self.c.psdd_eta
        def __set__(self, value): self.c.psdd_eta = _as_real(value, "psdd_eta")

    property progress:
        """None or a callable taking a Progress and returning True to stop the solve."""

        def __get__(self):
            return self._progress

        def __set__(self, callback):
            if callback is not None and not callable(callback):
                raise TypeError("progress must be callable or None")
            self._progress = callback

    def __repr__(self):
        return "Settings(%s)" % ", ".join("%s=%r" % (name, getattr(self, name))
                                          for name in _SETTING_NAMES)

    def __reduce__(self):
        """Pickled and copied as its keyword arguments (the progress
        callback too, which must then be picklable itself)."""
        return (_settings_from_fields, ({name: getattr(self, name) for name in _SETTING_NAMES},))


cdef class _ProgressRelay:
    """One solving call's link to its settings' progress callback: it
    keeps the exception the callback raised during that call, so that
    calls sharing a Settings on several threads neither stop each other
    nor raise each other's exceptions (the solves of one batch share one
    relay: the first exception stops them all)."""

    cdef object callback
    cdef object error

    def __cinit__(self, callback):
        self.callback = callback

    cdef int report(self, const concord_progress *p):
        """Calls the progress callback (with the GIL); nonzero stops."""
        if self.error is not None:
            return 1
        try:
            stop = self.callback(Progress(p.iteration, p.value, p.upper_bound,
                                          p.primal_residual, p.dual_residual, p.eta,
                                          p.seconds, p.nodes, p.open_nodes))
            return 1 if stop else 0
        except BaseException as e:
            self.error = e
            return 1

    cdef object take_stored(self):
        """The exception the callback raised (None if none), forgotten
        here."""
        error, self.error = self.error, None
        return error


cdef _ProgressRelay _relay_progress(Settings settings, concord_settings *c):
    """Gives c (a copy of settings' fields for one call) the relay to
    settings' progress callback, returned (to be kept alive through the
    call); None when it has none."""
    if settings._progress is None:
        return None
    relay = _ProgressRelay(settings._progress)
    c.progress = _progress_trampoline
    c.progress_context = <void *>relay
    return relay


# ---------------------------------------------------------------------------
# Ctrl-C during a long solve. Python runs signal handlers on the main thread
# between bytecodes, never while a C call runs. So a solve or batch called
# from the main thread without a progress callback of its own gets one that,
# on the main thread, at most every INTERRUPT_CHECK_SECONDS takes the GIL
# and asks whether SIGINT arrived; if so, every solve of the call stops
# ("interrupted"; a batch's solves on other threads at their next callback)
# and once the call has taken its results and stored exceptions the signal
# is raised again for Python's handler (KeyboardInterrupt by default; a
# handler that returns lets the call return the interrupted solves'
# results). A batch on several threads runs on a thread of its own, the
# main thread asking between waits (_batch).

cdef extern from "Python.h":
    int PyOS_InterruptOccurred()
    void PyErr_SetInterrupt()
    int PyErr_CheckSignals() except -1

cdef extern from *:
    """
    #include <pthread.h>
    #include <time.h>
    static double concord_py_monotonic(void) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
    }
    static unsigned long concord_py_thread(void) { return (unsigned long)pthread_self(); }
    static int concord_py_flag(const int *flag) { return __atomic_load_n(flag, __ATOMIC_RELAXED); }
    static void concord_py_set_flag(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELAXED); }

    /* A batch run on a thread of its own, for a caller that waits for it
     * in slices (concord_py_batch_wait) and watches for SIGINT between. */
    typedef struct concord_py_batch {
        concord_solver *const *solvers;
        size_t count;
        concord_algorithm algorithm;
        const concord_settings *settings;
        concord_info *infos;
        int threads, rc, done;
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t ended;
    } concord_py_batch;

    static void *concord_py_batch_run(void *arg) {
        concord_py_batch *b = arg;
        const int rc = concord_solve_batch(b->solvers, b->count, b->algorithm, b->settings,
                                           b->infos, b->threads);
        pthread_mutex_lock(&b->lock);
        b->rc = rc;
        b->done = 1;
        pthread_cond_signal(&b->ended);
        pthread_mutex_unlock(&b->lock);
        return NULL;
    }

    /* Starts the batch; 0, or nonzero when no thread could be started.
     * Its waits are timed on the monotonic clock: on the default real-time
     * clock, setting the system's time back would hold a wait, and with it
     * the check for SIGINT, for as long as the clock went back. */
    static int concord_py_batch_start(concord_py_batch *b) {
        b->done = 0;
        pthread_mutex_init(&b->lock, NULL);
        pthread_condattr_t monotonic;
        pthread_condattr_init(&monotonic);
        pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
        pthread_cond_init(&b->ended, &monotonic);
        pthread_condattr_destroy(&monotonic);
        if (pthread_create(&b->thread, NULL, concord_py_batch_run, b) == 0) return 0;
        pthread_cond_destroy(&b->ended);
        pthread_mutex_destroy(&b->lock);
        return 1;
    }

    /* Waits up to `seconds` for the batch: 1 once it has ended (its thread
     * joined, b->rc its code), else 0. */
    static int concord_py_batch_wait(concord_py_batch *b, double seconds) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        const long nanoseconds = until.tv_nsec + (long)(seconds * 1e9);
        until.tv_sec += nanoseconds / 1000000000L;
        until.tv_nsec = nanoseconds % 1000000000L;
        pthread_mutex_lock(&b->lock);
        if (!b->done) pthread_cond_timedwait(&b->ended, &b->lock, &until);
        const int done = b->done;
        pthread_mutex_unlock(&b->lock);
        if (!done) return 0;
        pthread_join(b->thread, NULL);
        pthread_cond_destroy(&b->ended);
        pthread_mutex_destroy(&b->lock);
        return 1;
    }
    """
    double concord_py_monotonic() nogil
    unsigned long concord_py_thread() nogil
    int concord_py_flag(const int *flag) nogil
    void concord_py_set_flag(int *flag) nogil
    ctypedef struct concord_py_batch:
        concord_solver *const *solvers
        size_t count
        concord_algorithm algorithm
        const concord_settings *settings
        concord_info *infos
        int threads
        int rc
    int concord_py_batch_start(concord_py_batch *b) nogil
    int concord_py_batch_wait(concord_py_batch *b, double seconds) nogil

import threading
cdef double INTERRUPT_CHECK_SECONDS = 0.05
cdef unsigned long _MAIN_THREAD = threading.main_thread().ident

ctypedef struct _interrupt_watch:
    double next_check  # read and written by the main thread only
    int interrupted    # set by the main thread, read by every solve of the call


cdef int _interrupt_check(void *context, const concord_progress *p) noexcept nogil:
    cdef _interrupt_watch *watch = <_interrupt_watch *>context
    cdef double now
    if concord_py_thread() == _MAIN_THREAD:
        now = concord_py_monotonic()
        if now >= watch.next_check:
            watch.next_check = now + INTERRUPT_CHECK_SECONDS
            with gil:
                if PyOS_InterruptOccurred():
                    concord_py_set_flag(&watch.interrupted)
    return concord_py_flag(&watch.interrupted)


cdef void _watch_interrupts(concord_settings *c, _interrupt_watch *watch):
    """Gives c (a copy of a call's settings) the interrupt check, when it
    has no progress callback and this is the main thread."""
    watch.next_check = concord_py_monotonic() + INTERRUPT_CHECK_SECONDS
    watch.interrupted = 0
    if c.progress == NULL and concord_py_thread() == _MAIN_THREAD:
        c.progress = _interrupt_check
        c.progress_context = watch


cdef int _batch(concord_solver **solvers, size_t count, concord_algorithm algorithm,
                concord_settings *c, concord_info *infos, int threads,
                _interrupt_watch *watch) except? -1:
    """concord_solve_batch with the GIL released. When this call watches for
    Ctrl-C (c has the interrupt check) and the batch may use several
    threads, the batch runs on a thread of its own while this one checks
    for SIGINT every INTERRUPT_CHECK_SECONDS until it ends: otherwise, once
    this thread had no solver of its own left to solve, a SIGINT waited for
    the other threads' solves to end."""
    cdef concord_py_batch b
    cdef int rc, ended = 0
    if c.progress != _interrupt_check or threads == 1 or count == 1:
        with nogil:
            rc = concord_solve_batch(solvers, count, algorithm, c, infos, threads)
        return rc
    b.solvers = solvers
    b.count = count
    b.algorithm = algorithm
    b.settings = c
    b.infos = infos
    b.threads = threads
    if concord_py_batch_start(&b) != 0:
        with nogil:
            rc = concord_solve_batch(solvers, count, algorithm, c, infos, threads)
        return rc
    while not ended:
        with nogil:
            ended = concord_py_batch_wait(&b, INTERRUPT_CHECK_SECONDS)
        if not ended and PyOS_InterruptOccurred():
            concord_py_set_flag(&watch.interrupted)
    return b.rc


cdef int _deliver_interrupt(_interrupt_watch *watch) except -1:
    """Raises again the SIGINT that stopped a call's solves, for Python's
    handler."""
    if watch.interrupted:
        PyErr_SetInterrupt()
        PyErr_CheckSignals()
    return 0


cdef Settings _settings(object settings):
    """A Settings from None (defaults), a Settings, or a dict of settings."""
    if settings is None:
        return _DEFAULT_SETTINGS
    if isinstance(settings, Settings):
        return settings
    return Settings(**settings)


cdef Settings _DEFAULT_SETTINGS = Settings()


# ---------------------------------------------------------------------------
# User factors: a Python MAP oracle (and optionally a QP) behind the C
# callbacks. The callbacks run with the GIL released around them, take it
# back, and store any exception under a code of its own, which they return:
# the C solver that called them keeps that code (concord_solver_callback_code),
# so the solving call raises its own solver's exception even when solvers
# over one graph run on several threads.

cdef dict _raised = {}  # code -> the exception a callback raised
cdef int _last_code = 0


cdef int _store_raised(exception):
    """Keeps `exception` for the solving call; returns its code (> 0)."""
    global _last_code
    _last_code = _last_code % 2147483646 + 1
    _raised[_last_code] = exception
    return _last_code


cdef object _take_raised(concord_solver *s):
    """The exception a callback raised in solver s's last call (None if
    none), forgotten here."""
    return _raised.pop(concord_solver_callback_code(s), None)

cdef int _map_trampoline(void *user, const double *a, const double *b, double *u, double *v,
                         double *value) nogil:
    with gil:
        return (<_UserFactor>user).call_map(a, b, u, v, value)


cdef int _qp_trampoline(void *user, const double *a, const double *b, const double *d,
                        double *u, double *v) nogil:
    with gil:
        return (<_UserFactor>user).call_qp(a, b, d, u, v)


cdef class _UserFactor:
    """What a user factor's C callbacks call: the oracle `map(a, b)`, which
    returns the best configuration u (0/1, one per link) or (u, v) when the
    factor has additional outputs, and optionally `qp(a, b, d)`, which
    returns the QP's solution the same way."""

    cdef readonly object map
    cdef readonly object qp
    cdef int32_t degree
    cdef int32_t n_add

    def __init__(self, map, qp, int32_t degree, int32_t n_add):
        self.map = map
        self.qp = qp
        self.degree = degree
        self.n_add = n_add

    cdef int write(self, result, double *u, double *v) except -1:
        """Copies an oracle's result (u, or (u, v)) to the C outputs."""
        if isinstance(result, tuple):
            if len(result) != 2:
                raise ValueError("a user factor's callback must return u or (u, v)")
            result_u, result_v = result
        else:
            result_u, result_v = result, None
        cdef const double[::1] ru = _doubles(result_u, self.degree,
                                             "user factor: variable values")
        if self.degree > 0:
            memcpy(u, &ru[0], self.degree * sizeof(double))
        cdef const double[::1] rv
        if self.n_add > 0:
            if result_v is None:
                raise ValueError("user factor with %d additional outputs: its callback "
                                 "must return (u, v)" % self.n_add)
            rv = _doubles(result_v, self.n_add, "user factor: additional values")
            memcpy(v, &rv[0], self.n_add * sizeof(double))
        elif result_v is not None:
            # values for outputs the factor does not have: a mistake, not
            # something to drop
            _doubles(result_v, 0, "user factor without additional outputs: additional values")
        return 0

    cdef int call_map(self, const double *a, const double *b, double *u, double *v,
                      double *value):
        cdef int32_t i
        cdef double total = 0.0
        try:
            self.write(self.map(_copy_doubles(a, self.degree), _copy_doubles(b, self.n_add)),
                       u, v)
            for i in range(self.degree):
                total += a[i] * u[i]
            for i in range(self.n_add):
                total += b[i] * v[i]
            value[0] = total
            return 0
        except BaseException as e:
            return _store_raised(e)

    cdef int call_qp(self, const double *a, const double *b, const double *d, double *u,
                     double *v):
        try:
            self.write(self.qp(_copy_doubles(a, self.degree), _copy_doubles(b, self.n_add),
                               _copy_doubles(d, self.degree)), u, v)
            return 0
        except BaseException as e:
            return _store_raised(e)


def refused_score(scores):
    """The first of these scores (of any shape, read in C order) that the
    C library refuses as a variable score (concord_score_refusal), as
    (flat index, value, why), `why` in the library's words ("is not
    finite", ...); None when it takes them all. A builder made of several
    C calls checks its scores with it before the first."""
    cdef const double[::1] s = _doubles(scores, -1, "scores")
    cdef const char *why
    cdef Py_ssize_t i
    for i in range(s.shape[0]):
        why = concord_score_refusal(s[i])
        if why != NULL:
            return i, s[i], _text(why)
    return None


# ---------------------------------------------------------------------------
# Graphs

@cython.no_gc_clear
cdef class Graph:
    """A concord_graph: binary variables, factors and their scores.

    Variables are numbered from 0 in order of creation; factors too. Every
    ``add_*`` method mirrors the C builder of the same name (see
    include/concord.h for each family's configurations and the layout of
    its additional scores): `vars` are variable ids (any integer array),
    `negated` one truth value per link or None, `scores` the factor's
    additional scores or None (zeros); a count or an index given alone is
    an integer (as_integer: a float is a TypeError). On error nothing is
    added and the C message is raised (ValueError for bad arguments).
    """

    cdef concord_graph *g
    cdef list _user_factors   # keeps the Python oracles alive with the graph
    cdef int _solving         # solves running on this graph (GIL released)

    def __cinit__(self):
        self.g = concord_graph_new()
        if self.g == NULL:
            raise MemoryError("out of memory creating a graph")
        self._user_factors = []
        self._solving = 0

    def __dealloc__(self):
        concord_graph_free(self.g)

    cdef int check(self, int rc) except -1:
        if rc != CONCORD_OK:
            raise _error(rc, _text(concord_last_error(self.g)))
        return 0

    cdef object no_factor(self, int32_t f):
        """The error for a factor id out of range."""
        return InvalidArgumentError(CONCORD_EINVAL, "factor %d out of range (the graph has %d)"
                                    % (f, self.num_factors))

    cdef int writable(self) except -1:
        if self._solving:
            raise RuntimeError("the graph is already being solved and cannot change until "
                               "that solve returns (called from one of its oracles or "
                               "callbacks, or from another thread)")
        return 0

    def __reduce__(self):
        """Refused: a Graph holds C state (TypeError)."""
        _refuse_copy(self)

    def __repr__(self):
        return "<concord._core.Graph: %d variables, %d factors, %d additionals>" % (
            self.num_variables, self.num_factors, self.num_additionals)

    @property
    def num_variables(self):
        """Number of binary variables."""
        return concord_num_variables(self.g)

    @property
    def num_factors(self):
        """Number of factors."""
        return concord_num_factors(self.g)

    @property
    def num_additionals(self):
        """Number of factor additional outputs, all factors together."""
        return concord_num_additionals(self.g)

    @property
    def last_error(self):
        """The message of the last call on this graph that failed ("" if
        none has); calls that succeed leave it."""
        return _text(concord_last_error(self.g))

    def factor_degree(self, factor):
        """The number of links of a factor (concord_factor_degree)."""
        cdef int32_t f = _as_int32(factor, "factor"), degree = 0
        if concord_factor_degree(self.g, f, &degree) != CONCORD_OK:
            raise self.no_factor(f)
        return degree

    def factor_variables(self, factor):
        """A factor's links (concord_factor_variables): (variables, negated)
        arrays in link order, the negations as the factor was given them."""
        cdef int32_t f = _as_int32(factor, "factor")
        cdef int32_t degree = self.factor_degree(f)
        variables = np.zeros(degree, dtype=_int32)
        negated = np.zeros(degree, dtype=np.bool_)
        cdef int32_t[::1] v = variables
        cdef unsigned char[::1] n = negated.view(np.uint8)
        self.check(concord_factor_variables(self.g, f, &v[0] if degree else NULL,
                                            <cbool *>&n[0] if degree else NULL))
        return variables, negated

    def factor_additionals(self, factor):
        """(first, count): factor's additional outputs in the global index."""
        cdef int32_t f = _as_int32(factor, "factor"), first = 0, count = 0
        if concord_factor_additionals(self.g, f, &first, &count) != CONCORD_OK:
            raise self.no_factor(f)
        return first, count

    @property
    def multi_variables(self):
        """The registered multi-variables, in order: (first state variable,
        number of states) each."""
        cdef int32_t first = 0, states = 0
        out = []
        for m in range(concord_num_multi_variables(self.g)):
            self.check(concord_multi_variable(self.g, m, &first, &states))
            out.append((first, states))
        return out

    def multi_variable_labels(self, m):
        """The labels of multi-variable m's states, in state order: for a
        graph read from a UAI model the model's state numbers that evidence
        and zero potentials left, otherwise 0, 1, ... (the labels
        decoded_labels gives and assignment_from_labels takes)."""
        cdef int32_t index = _as_int32(m, "m"), first = 0, states = 0
        if concord_multi_variable(self.g, index, &first, &states) != CONCORD_OK:
            raise InvalidArgumentError(CONCORD_EINVAL, "multi-variable %d out of range (the "
                                       "graph has %d)" % (index, concord_num_multi_variables(self.g)))
        out = np.empty(states, dtype=np.int32)
        cdef int32_t[::1] labels = out
        if states > 0:
            self.check(concord_multi_variable_labels(self.g, index, &labels[0]))
        return out

    # ---- variables

    def add_variables(self, count, scores=None):
        """Adds `count` binary variables (scores: None for zeros); returns
        the first one's id."""
        self.writable()
        cdef int32_t n = _as_int32(count, "count")
        cdef const double[::1] s = None if scores is None else _doubles(scores, n, "scores")
        cdef int32_t first = 0
        self.check(concord_add_variables(self.g, n, _dptr(s), &first))
        return first

    def add_multi_variable(self, num_states, scores=None, one_hot=True):
        """Adds a multi-valued variable: num_states binary variables, one-hot
        (by an XOR factor when one_hot; pass False only when DENSE factors
        cover it). Returns the first state variable's id."""
        self.writable()
        cdef int32_t n = _as_int32(num_states, "num_states")
        cdef const double[::1] s = None if scores is None else _doubles(scores, n, "scores")
        cdef int32_t first = 0
        self.check(concord_add_multi_variable(self.g, n, _dptr(s),
                                              as_flag(one_hot, "one_hot"), &first))
        return first

    # ---- factors over binary variables

    def add_logic(self, kind, vars, negated=None):
        """A logic factor; kind is "XOR", "XOROUT", "ATMOSTONE", "OR",
        "OROUT", "ANDOUT" or "IMPLY" (see concord_add_logic)."""
        self.writable()
        if kind not in LOGIC_KINDS:
            raise ValueError("unknown logic factor %r (kinds: %s)" % (kind, ", ".join(LOGIC_KINDS)))
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef const unsigned char[::1] n = _flags(negated, v.shape[0], "negated")
        cdef int32_t f = 0
        self.check(concord_add_logic(self.g, LOGIC_KINDS[kind], v.shape[0], _iptr(v), _bptr(n),
                                     &f))
        return f

    def add_budget(self, vars, budget, exact=False, negated=None):
        """BUDGET: at most (exact: exactly) `budget` literals are 1."""
        self.writable()
        cdef double limit = _as_real(budget, "budget")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef const unsigned char[::1] n = _flags(negated, v.shape[0], "negated")
        cdef int32_t f = 0
        self.check(concord_add_budget(self.g, v.shape[0], _iptr(v), _bptr(n), limit,
                                      as_flag(exact, "exact"), &f))
        return f

    def add_knapsack(self, vars, costs, budget, negated=None):
        """KNAPSACK: sum of costs[i] * literal_i <= budget."""
        self.writable()
        cdef double limit = _as_real(budget, "budget")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef const double[::1] c = _doubles(costs, v.shape[0], "costs")
        cdef const unsigned char[::1] n = _flags(negated, v.shape[0], "negated")
        cdef int32_t f = 0
        self.check(concord_add_knapsack(self.g, v.shape[0], _iptr(v), _bptr(n), _dptr(c), limit,
                                        &f))
        return f

    def add_pair(self, var1, var2, score):
        """PAIR: `score` when both variables are 1 (one additional output)."""
        self.writable()
        cdef int32_t f = 0
        self.check(concord_add_pair(self.g, _as_int32(var1, "var1"), _as_int32(var2, "var2"),
                                    _as_real(score, "score"), &f))
        return f

    def add_dense(self, num_states, vars, scores=None):
        """DENSE: a score table over the joint states of multi-valued
        variables; vars lists each one's state variables in turn, scores
        has prod(num_states) entries, row-major (-inf forbids a state)."""
        self.writable()
        cdef const int32_t[::1] k = _ids(num_states, -1, "num_states")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef const double[::1] s = _scores_sized(scores, _dense_size(k))
        if v.shape[0] != int(np.sum(np.asarray(k), dtype=np.int64)):
            raise ValueError("DENSE factor: expected %d state variables, got %d" % (
                int(np.sum(np.asarray(k), dtype=np.int64)), v.shape[0]))
        cdef int32_t f = 0
        self.check(concord_add_dense(self.g, k.shape[0], _iptr(k), _iptr(v), _dptr(s), &f))
        return f

    # ---- structured factors

    def add_tree(self, length, heads, modifiers, vars, projective=False,
                 single_root=False):
        """TREE: dependency trees over `length` nodes (the root is 0); arc k
        goes from heads[k] to modifiers[k] and is variable vars[k]."""
        self.writable()
        cdef int32_t n = _as_int32(length, "length")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef const int32_t[::1] h = _ids(heads, v.shape[0], "heads")
        cdef const int32_t[::1] m = _ids(modifiers, v.shape[0], "modifiers")
        cdef unsigned flags = ((CONCORD_TREE_PROJECTIVE if as_flag(projective, "projective")
                                else 0)
                               | (CONCORD_TREE_SINGLE_ROOT if as_flag(single_root, "single_root")
                                  else 0))
        cdef int32_t f = 0
        self.check(concord_add_tree(self.g, n, v.shape[0], _iptr(h), _iptr(m), _iptr(v),
                                    flags, &f))
        return f

    def add_matching(self, rows, cols, vars, every_row=False, every_col=False):
        """MATCHING between rows and cols; vars row-major (rows * cols)."""
        self.writable()
        cdef int32_t n_rows = _as_int32(rows, "rows"), n_cols = _as_int32(cols, "cols")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        if v.shape[0] != <int64_t>n_rows * n_cols:
            raise ValueError("MATCHING factor: expected %d variables (%d x %d), got %d" % (
                <int64_t>n_rows * n_cols, n_rows, n_cols, v.shape[0]))
        cdef unsigned flags = ((CONCORD_MATCHING_EVERY_ROW if as_flag(every_row, "every_row")
                                else 0)
                               | (CONCORD_MATCHING_EVERY_COL if as_flag(every_col, "every_col")
                                  else 0))
        cdef int32_t f = 0
        self.check(concord_add_matching(self.g, n_rows, n_cols, _iptr(v), flags, &f))
        return f

    def add_sequence(self, num_states, vars, scores=None):
        """SEQUENCE: num_states[i] states at position i; vars position by
        position; scores: start, transitions, stop (concord_add_sequence;
        -inf forbids a transition)."""
        self.writable()
        cdef const int32_t[::1] k = _ids(num_states, -1, "num_states")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        _check_sum(v.shape[0], k, "SEQUENCE factor: state variables")
        cdef const double[::1] s = _scores_sized(scores, _sequence_size(k))
        cdef int32_t f = 0
        self.check(concord_add_sequence(self.g, k.shape[0], _iptr(k), _iptr(v), _dptr(s), &f))
        return f

    def add_sequence_budget(self, num_states, vars, budget, scores=None):
        """SEQUENCE_BUDGET: a SEQUENCE with at most `budget` positions in
        state 0."""
        self.writable()
        cdef int32_t b = _as_int32(budget, "budget")
        cdef const int32_t[::1] k = _ids(num_states, -1, "num_states")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        _check_sum(v.shape[0], k, "SEQUENCE_BUDGET factor: state variables")
        cdef const double[::1] s = _scores_sized(scores, _sequence_size(k))
        cdef int32_t f = 0
        self.check(concord_add_sequence_budget(self.g, k.shape[0], _iptr(k), _iptr(v), b,
                                               _dptr(s), &f))
        return f

    def add_head_automaton(self, vars, scores=None):
        """HEAD_AUTOMATON over a head's arcs to its modifiers on one side,
        nearest first; (n+1)(n+2)/2 sibling scores."""
        self.writable()
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef Py_ssize_t n = v.shape[0]
        cdef const double[::1] s = (None if scores is None
                                    else _doubles(scores, (n + 1) * (n + 2) // 2, "scores"))
        cdef int32_t f = 0
        self.check(concord_add_head_automaton(self.g, n, _iptr(v), _dptr(s), &f))
        return f

    def add_grandparent_head_automaton(self, n_grandparents, vars, scores=None):
        """GRANDPARENT_HEAD_AUTOMATON: vars are the n_grandparents incoming
        arcs, then the modifiers' arcs."""
        self.writable()
        cdef int32_t grandparents = _as_int32(n_grandparents, "n_grandparents")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef Py_ssize_t n = v.shape[0] - grandparents
        if n < 0:
            raise ValueError("GRANDPARENT_HEAD_AUTOMATON factor: %d variables for %d "
                             "grandparents" % (v.shape[0], grandparents))
        cdef const double[::1] s = _scores_sized(
            scores, grandparents * n + (n + 1) * (n + 2) // 2 if grandparents >= 1 else -1)
        cdef int32_t f = 0
        self.check(concord_add_grandparent_head_automaton(self.g, grandparents, n, _iptr(v),
                                                          _dptr(s), &f))
        return f

    def add_general_tree(self, num_states, parents, vars, scores=None):
        """GENERAL_TREE: a tree-shaped MRF; parents[0] = -1."""
        self.writable()
        cdef const int32_t[::1] k = _ids(num_states, -1, "num_states")
        cdef const int32_t[::1] p = _ids(parents, k.shape[0], "parents")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        _check_sum(v.shape[0], k, "GENERAL_TREE factor: state variables")
        cdef const double[::1] s = _scores_sized(scores, _tree_size(k, p))
        cdef int32_t f = 0
        self.check(concord_add_general_tree(self.g, k.shape[0], _iptr(k), _iptr(p), _iptr(v),
                                            _dptr(s), &f))
        return f

    def add_general_tree_counts(self, num_states, parents, vars, scores=None):
        """GENERAL_TREE_COUNTS: vars continue with n_nodes + 1 count
        indicators."""
        self.writable()
        cdef const int32_t[::1] k = _ids(num_states, -1, "num_states")
        cdef const int32_t[::1] p = _ids(parents, k.shape[0], "parents")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        _check_sum(v.shape[0] - k.shape[0] - 1, k,
                   "GENERAL_TREE_COUNTS factor: state variables (before the counts)")
        cdef const double[::1] s = _scores_sized(scores, _tree_size(k, p))
        cdef int32_t f = 0
        self.check(concord_add_general_tree_counts(self.g, k.shape[0], _iptr(k), _iptr(p),
                                                   _iptr(v), _dptr(s), &f))
        return f

    def add_binary_tree(self, parents, vars, scores=None):
        """BINARY_TREE: a tree MRF over binary nodes, one link per node
        (on in state 1); parents[0] = -1; 4 scores per non-root node."""
        self.writable()
        cdef const int32_t[::1] p = _ids(parents, -1, "parents")
        cdef const int32_t[::1] v = _ids(vars, p.shape[0], "vars")
        cdef const double[::1] s = (None if scores is None
                                    else _doubles(scores, 4 * max(p.shape[0] - 1, 0), "scores"))
        cdef int32_t f = 0
        self.check(concord_add_binary_tree(self.g, p.shape[0], _iptr(p), _iptr(v), _dptr(s), &f))
        return f

    def add_binary_tree_counts(self, parents, vars, counted=None, has_count_scores=None,
                               max_bins=0, scores=None):
        """BINARY_TREE_COUNTS: a BINARY_TREE whose nodes with count scores
        (has_count_scores; None: the root) score the number of counted
        nodes on in their subtree; max_bins >= 1 merges counts from
        max_bins - 1 up (0: none). scores: edge tables, then count scores."""
        self.writable()
        cdef int32_t bins = _as_int32(max_bins, "max_bins")
        cdef const int32_t[::1] p = _ids(parents, -1, "parents")
        cdef const int32_t[::1] v = _ids(vars, p.shape[0], "vars")
        cdef const unsigned char[::1] c = _flags(counted, p.shape[0], "counted")
        cdef const unsigned char[::1] h = _flags(has_count_scores, p.shape[0], "has_count_scores")
        cdef const double[::1] s = _scores_sized(
            scores, _binary_tree_counts_size(np.asarray(p), has_count_scores))
        cdef int32_t f = 0
        self.check(concord_add_binary_tree_counts(self.g, p.shape[0], _iptr(p), _bptr(c),
                                                  _bptr(h), bins, _iptr(v), _dptr(s), &f))
        return f

    def add_compression_budget(self, length, budget, vars, counted=None, bigram_positions=None,
                               scores=None):
        """COMPRESSION_BUDGET: a chain of `length` tokens, at most `budget`
        of the counted ones kept; vars: the tokens, then one bigram
        indicator per entry of bigram_positions; 4 length - n_bigrams
        scores."""
        self.writable()
        cdef int32_t n = _as_int32(length, "length"), kept = _as_int32(budget, "budget")
        cdef const int32_t[::1] b = _ids([] if bigram_positions is None else bigram_positions,
                                         -1, "bigram_positions")
        cdef const int32_t[::1] v = _ids(vars, n + b.shape[0], "vars")
        cdef const unsigned char[::1] c = _flags(counted, n, "counted")
        cdef const double[::1] s = (None if scores is None
                                    else _doubles(scores, 4 * n - b.shape[0], "scores"))
        cdef int32_t f = 0
        self.check(concord_add_compression_budget(self.g, n, kept, _bptr(c), b.shape[0],
                                                  _iptr(b), _iptr(v), _dptr(s), &f))
        return f

    def add_sequence_compressor(self, vars, scores=None):
        """SEQUENCE_COMPRESSOR: n word indicators then the sentence one;
        (n+1)(n+2)/2 scores."""
        self.writable()
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef Py_ssize_t n = v.shape[0] - 1
        if n < 0:
            raise ValueError("SEQUENCE_COMPRESSOR factor: no sentence variable")
        cdef const double[::1] s = (None if scores is None
                                    else _doubles(scores, (n + 1) * (n + 2) // 2, "scores"))
        cdef int32_t f = 0
        self.check(concord_add_sequence_compressor(self.g, n, _iptr(v), _dptr(s), &f))
        return f

    # ---- user factors

    def add_factor(self, vars, map, negated=None, num_additionals=0, additional_scores=None,
                   qp=None):
        """A factor whose configurations come from a Python MAP oracle.

        map(a, b) gets the link scores a (literals: flipped for negated
        links) and the additional scores b as new float64 arrays, and
        returns the best configuration: u (0 or 1 per link), or (u, v) when
        num_additionals > 0. qp(a, b, d), optional, returns the solution of
        argmax a.u + b.v - sum(d u^2)/2 over the factor's polytope the same
        way. Both must be deterministic; an exception they raise ends the
        solve and is raised by the solving call.
        """
        self.writable()
        cdef int32_t n_add = _as_int32(num_additionals, "num_additionals")
        if not callable(map) or (qp is not None and not callable(qp)):
            raise TypeError("map (and qp, when given) must be callable")
        cdef const int32_t[::1] v = _ids(vars, -1, "vars")
        cdef const unsigned char[::1] n = _flags(negated, v.shape[0], "negated")
        cdef const double[::1] s = (None if additional_scores is None else
                                    _doubles(additional_scores, n_add, "additional_scores"))
        cdef _UserFactor user = _UserFactor(map, qp, v.shape[0], n_add)
        cdef int32_t f = 0
        self.check(concord_add_factor(self.g, v.shape[0], _iptr(v), _bptr(n), n_add,
                                      _dptr(s), _map_trampoline, <void *>user, &f))
        self._user_factors.append(user)
        if qp is not None:
            self.check(concord_set_factor_qp(self.g, f, _qp_trampoline))
        return f

    # ---- scores

    def set_variable_scores(self, scores, first=0):
        """Sets the scores of variables first, first+1, ... (read in place
        when float64 and contiguous)."""
        self.writable()
        cdef int32_t start = _as_int32(first, "first")
        cdef const double[::1] s = _doubles(scores, -1, "scores")
        self.check(concord_set_variable_scores(self.g, start, s.shape[0], _dptr(s)))

    def set_additional_scores(self, scores, first=0):
        """Sets additional scores first, first+1, ... (global index)."""
        self.writable()
        cdef int32_t start = _as_int32(first, "first")
        cdef const double[::1] s = _doubles(scores, -1, "scores")
        self.check(concord_set_additional_scores(self.g, start, s.shape[0], _dptr(s)))

    def refused_additional_score(self, first, scores):
        """The first of these scores (of any shape, read in C order), as the
        scores of additional outputs first, first+1, ..., that the graph
        refuses (concord_additional_score_refusal), as (flat index, value,
        why); None when it takes them all."""
        cdef int32_t start = _as_int32(first, "first")
        cdef const double[::1] s = _doubles(scores, -1, "scores")
        if s.shape[0] and (start < 0 or start + s.shape[0] > self.num_additionals):
            raise IndexError("additional outputs %d to %d: the graph has %d"
                             % (start, start + s.shape[0] - 1, self.num_additionals))
        cdef const char *why
        cdef Py_ssize_t i
        for i in range(s.shape[0]):
            why = concord_additional_score_refusal(self.g, <int32_t>(start + i), s[i])
            if why != NULL:
                return i, s[i], _text(why)
        return None

    def set_regularization(self, weights, first=0):
        """Sets LP-SparseMAP's regularization weights w of variables first,
        first+1, ... (the objective's -1/2 sum_i w_i u_i^2; every weight is
        1 until set), each in [1e-6, 1e6] (concord_set_regularization). The
        weights belong to the structure: solvers made before must be made
        again."""
        self.writable()
        cdef int32_t start = _as_int32(first, "first")
        cdef const double[::1] w = _doubles(weights, -1, "weights")
        self.check(concord_set_regularization(self.g, start, w.shape[0], _dptr(w)))

    @property
    def regularization(self):
        """A copy of LP-SparseMAP's regularization weights, one per variable."""
        return _copy_doubles(concord_regularization(self.g), self.num_variables)

    @property
    def variable_scores(self):
        """A copy of the variable scores."""
        return _copy_doubles(concord_variable_scores(self.g), self.num_variables)

    @property
    def additional_scores(self):
        """A copy of the additional scores."""
        return _copy_doubles(concord_additional_scores(self.g), self.num_additionals)

    def assignment_from_labels(self, labels):
        """The 0/1 assignment putting each multi-variable in the state with
        the given label (concord_assignment_from_labels): labels are state
        numbers from 0, or for a graph read from a UAI model the model's
        state numbers (those evidence and zeros left). ValueError for a
        label that names no state."""
        cdef int32_t n_multi = concord_num_multi_variables(self.g)
        cdef const int32_t[::1] l = _ids(labels, -1, "labels")
        if l.shape[0] != n_multi:
            raise ValueError("labels: expected one per multi-variable (%d), got %d"
                             % (n_multi, l.shape[0]))
        out = np.zeros(self.num_variables)
        if n_multi == 0:
            return out
        cdef double[::1] x = out
        cdef int rc = concord_assignment_from_labels(self.g, _iptr(l), &x[0])
        if rc == CONCORD_OK:
            return out
        for m in range(n_multi):
            allowed = self.multi_variable_labels(m)
            if l[m] not in allowed:
                raise InvalidArgumentError(
                    CONCORD_EINVAL, "labels: label %d names no state of its multi-variable %d, "
                    "whose states are labelled %s" % (l[m], m, _label_list(allowed)))
        raise _error(rc, self.last_error())


def _label_list(labels, shown=10):
    """Labels as '0, 1, 2', the first `shown` of a long list then '...'."""
    text = ", ".join(str(k) for k in labels[:shown])
    return text + (", ..." if len(labels) > shown else "")


cdef int _check_sum(Py_ssize_t n_vars, const int32_t[::1] num_states, str what) except -1:
    expected = int(np.sum(np.asarray(num_states), dtype=np.int64))
    if n_vars != expected:
        raise ValueError("%s: expected %d, got %d" % (what, expected, n_vars))
    return 0


cdef object _scores_sized(scores, Py_ssize_t size):
    """A builder's additional scores: None (zeros) when not given, else
    checked to hold `size` values; also None when size < 0, which the size
    functions below return for a structure the C builder refuses (it says
    why before it reads any score)."""
    return None if scores is None or size < 0 else _doubles(scores, size, "scores")


def _dense_size(k):
    """Additional outputs of a DENSE: the product of the state counts
    (exact, in Python integers); -1 when a count is below 1 or the table
    is larger than any array (the C builder refuses both)."""
    counts = [int(n) for n in k]
    size = math.prod(counts)
    return -1 if min(counts, default=0) < 1 or size > sys.maxsize else size


def _sequence_size(k):
    """Additional outputs of a SEQUENCE: start, transitions, stop; -1 when
    a position has fewer than 1 state."""
    ks = np.asarray(k, dtype=np.int64)
    if ks.size == 0:
        return 0
    if ks.min() < 1:
        return -1
    return int(ks[0] + np.sum(ks[:-1] * ks[1:]) + ks[-1])


def _binary_tree_counts_size(parents, has_count_scores):
    """Additional outputs of a BINARY_TREE_COUNTS: 4 per edge, then each
    scored node's subtree size + 1; -1 when the parents form no tree rooted
    at 0 (the C builder then says why, before reading any score)."""
    n = parents.size
    if n == 0 or parents[0] != -1 or (parents[1:] < 0).any() or (parents[1:] >= n).any():
        return -1
    children = [[] for _ in range(n)]
    for i in range(1, n):
        children[parents[i]].append(i)
    order = [0]  # breadth-first: every node after its parent
    for i in order:
        order.extend(children[i])
    if len(order) != n:
        return -1
    size = np.ones(n, dtype=np.int64)
    for i in reversed(order[1:]):
        size[parents[i]] += size[i]
    scored = np.zeros(n, dtype=bool)
    if has_count_scores is None:
        scored[0] = True
    else:
        scored[:] = np.asarray(has_count_scores, dtype=bool).reshape(-1)[:n]
    return int(4 * (n - 1) + np.sum(size[scored] + 1))


def _tree_size(k, p):
    """Additional outputs of a GENERAL_TREE: one table per edge; -1 when a
    node has fewer than 1 state or a parent is out of range."""
    ks = np.asarray(k, dtype=np.int64)
    ps = np.asarray(p, dtype=np.int64)
    if ks.size < 2:
        return 0
    if ks.min() < 1 or ps[1:].min() < 0 or ps[1:].max() >= ks.size:
        return -1
    return int(np.sum(ks[ps[1:]] * ks[1:]))


# ---------------------------------------------------------------------------
# Solvers

_SOLVER_BUSY = ("the solver is already solving (called from one of its solve's oracles or "
                "callbacks, or from another thread)")


@cython.no_gc_clear
cdef class Solver:
    """A concord_solver over a Graph: its own scores (until set, the
    graph's), the solutions and everything the next solve or the backward
    pass needs. One per thread, or one per example of a batch. A solver
    refuses to work once its graph's structure changed (create a new one).
    ``graph`` is the Graph it solves (kept alive by the solver).
    """

    cdef concord_solver *s
    cdef readonly Graph graph
    cdef bint _busy
    # the graph's sizes when the solver was made: its buffers' sizes
    cdef int32_t n_vars, n_add, n_factors, n_multi

    def __cinit__(self, Graph graph not None):
        self.graph = graph
        # a solver only reads its graph: it may be made while others solve
        cdef int rc = concord_solver_new(graph.g, &self.s)
        if rc != CONCORD_OK:
            raise _error(rc, "creating a solver")
        self.n_vars = concord_num_variables(graph.g)
        self.n_add = concord_num_additionals(graph.g)
        self.n_factors = concord_num_factors(graph.g)
        self.n_multi = concord_num_multi_variables(graph.g)

    def __dealloc__(self):
        concord_solver_free(self.s)

    def __reduce__(self):
        """Refused: a Solver holds C state (TypeError)."""
        _refuse_copy(self)

    def __repr__(self):
        return "<concord._core.Solver over %r>" % (self.graph,)

    @property
    def is_current(self):
        """Whether the graph's structure is still the one this solver was
        made for (a solver refuses to work once its graph grew, or its
        regularization weights or a user factor's QP changed)."""
        # concord_solver_variable_scores is NULL exactly when the C solver
        # is stale; the sizes guard this object's buffers
        return (concord_solver_variable_scores(self.s) != NULL
                and concord_num_variables(self.graph.g) == self.n_vars
                and concord_num_additionals(self.graph.g) == self.n_add
                and concord_num_factors(self.graph.g) == self.n_factors
                and concord_num_multi_variables(self.graph.g) == self.n_multi)

    @property
    def last_error(self):
        """The message of the last error on this solver ("" if none)."""
        return _text(concord_solver_last_error(self.s))

    # ---- running C calls

    cdef int fresh(self) except -1:
        """Refuses a solver whose graph grew since it was made (its buffers
        have the old sizes; the C library refuses its solves too)."""
        if not self.is_current:
            raise InvalidArgumentError(CONCORD_EINVAL, "the graph's structure changed since "
                                       "this solver was created (create a new solver)")
        return 0

    cdef int enter(self) except -1:
        """Marks the solver (and its graph) busy before the GIL is released."""
        self.fresh()
        if self._busy:
            raise RuntimeError(_SOLVER_BUSY)
        self._busy = True
        self.graph._solving += 1
        return 0

    cdef void leave(self):
        self._busy = False
        self.graph._solving -= 1

    cdef int check(self, int rc, _ProgressRelay relay=None) except -1:
        """Raises what a C call's return code means: the exception a Python
        callback stored (the progress callback's through relay), or the C
        error. Solve outcomes (not converged, infeasible) are not errors
        here. The oracle's stored exception is taken first, so that it
        does not outlive this call."""
        stored = _take_raised(self.s) if rc == CONCORD_ECALLBACK else None
        progress_error = None if relay is None else relay.take_stored()
        if progress_error is not None:
            raise progress_error
        if rc == CONCORD_OK or rc == CONCORD_ENOTCONVERGED or rc == CONCORD_EINFEASIBLE:
            return 0
        if stored is not None:
            raise stored
        raise _error(rc, _text(concord_solver_last_error(self.s)))

    # ---- scores

    def set_scores(self, variable_scores=None, additional_scores=None):
        """Gives the solver its own scores (copied): num_variables and
        num_additionals values; None for either keeps reading the graph's."""
        self.fresh()
        cdef const double[::1] t = (None if variable_scores is None else
                                    _doubles(variable_scores, self.n_vars, "variable_scores"))
        cdef const double[::1] p = (None if additional_scores is None else
                                    _doubles(additional_scores, self.n_add, "additional_scores"))
        if self._busy:
            raise RuntimeError(_SOLVER_BUSY)
        # a graph without additionals has no additional scores to copy
        cdef const double *pp = _dptr(p) if p is not None and p.shape[0] else NULL
        self.check(concord_solver_set_scores(self.s, _dptr(t), pp))

    @property
    def variable_scores(self):
        """A copy of the variable scores the solver uses."""
        self.fresh()
        return _copy_doubles(concord_solver_variable_scores(self.s), self.n_vars)

    @property
    def additional_scores(self):
        """A copy of the additional scores the solver uses."""
        self.fresh()
        return _copy_doubles(concord_solver_additional_scores(self.s), self.n_add)

    # ---- solves

    def solve_map(self, settings=None):
        """LP-MAP by AD3 (concord_solver_map); returns an Info. settings:
        None, a Settings or a dict."""
        return self._solve(CONCORD_ALGORITHM_AD3, _settings(settings))

    def solve_sparse(self, settings=None):
        """LP-SparseMAP (concord_solver_sparse); returns an Info."""
        return self._solve(CONCORD_ALGORITHM_SPARSE, _settings(settings))

    def solve_exact(self, settings=None):
        """Exact MAP by branch and bound over AD3 (concord_solver_exact):
        the best assignment becomes the solution; the Info's status is
        "optimal" once its gap to the upper bound is closed, "node_limit",
        "time_limit" or "interrupted" when stopped early (with the best
        assignment so far). exact_info tells how the search went."""
        return self._solve(CONCORD_ALGORITHM_EXACT, _settings(settings))

    def solve_psdd(self, settings=None):
        """LP-MAP dual bounds by projected subgradient dual decomposition
        (concord_solver_psdd); the solution is the step-weighted average of
        the factors' MAPs, or a certified MAP when status is "integral";
        status "stalled" when the bound stopped improving before the
        average solved LP-MAP."""
        return self._solve(CONCORD_ALGORITHM_PSDD, _settings(settings))

    def solve_mplp(self, settings=None):
        """LP-MAP dual bounds by MPLP block coordinate descent
        (concord_solver_mplp), for graphs of PAIR and DENSE factors over
        multi-variables; the solution is the best allowed assignment of
        largest beliefs, a certified MAP when status is "integral"; status
        "stalled" when the bound stopped improving first."""
        return self._solve(CONCORD_ALGORITHM_MPLP, _settings(settings))

    @property
    def exact_info(self):
        """The ExactInfo of the last solve_exact (None before any)."""
        cdef concord_exact_info e
        if concord_solver_exact_info(self.s, &e) != CONCORD_OK:
            return None
        return ExactInfo(e.nodes, e.pruned, e.infeasible, e.open, e.improvements, e.max_depth,
                         e.root_bound, e.gap, e.best_seconds, bool(e.acyclic))

    cdef object _solve(self, concord_algorithm algorithm, Settings settings):
        cdef concord_info info
        cdef int rc
        cdef concord_settings c = settings.c
        cdef _interrupt_watch watch
        relay = _relay_progress(settings, &c)
        _watch_interrupts(&c, &watch)
        memset(&info, 0, sizeof(info))
        self.enter()
        try:
            with nogil:
                rc = _run(self.s, algorithm, &c, &info)
        finally:
            self.leave()
        try:
            self.check(rc, relay)
        finally:
            _deliver_interrupt(&watch)
        return _info(&info)

    @property
    def variables(self):
        """A copy of the last solution's variable values u (None before any
        solve)."""
        self.fresh()
        cdef const double *u = concord_solver_variables(self.s)
        return None if u == NULL else _copy_doubles(u, self.n_vars)

    @property
    def additionals(self):
        """A copy of the last solution's additional values v."""
        self.fresh()
        cdef const double *v = concord_solver_additionals(self.s)
        return None if v == NULL else _copy_doubles(v, self.n_add)

    # ---- backward pass

    def backward(self, du, dv=None, settings=None):
        """The backward pass of the last solve_sparse: returns (dtheta, dphi,
        BackwardInfo) with dtheta = J_u^T du + J_v^T dv w.r.t. the variable
        scores and dphi the same w.r.t. the additional scores (the Jacobian
        is symmetric: this is also the Jacobian-vector product). Where
        scores tie exactly, a factor's face with more than
        CONCORD_FACE_COMPLETION_LIMIT (512) configurations is not completed
        and its part is the derivative on a smaller face: counted in
        BackwardInfo.incomplete_faces, with a RuntimeWarning; so is a pass
        stopped at backward_max_iter (BackwardInfo.converged False), and one
        of a forward solve that stopped before converging (max_iter,
        time_limit, interrupted: the gradient is that of its last iterate)."""
        cdef Settings st = _settings(settings)
        cdef int32_t n = self.n_vars, m = self.n_add
        cdef const double[::1] a = _doubles(du, n, "du")
        cdef const double[::1] b = None if dv is None else _doubles(dv, m, "dv")
        dtheta = np.zeros(n)
        dphi = np.zeros(m)
        cdef double[::1] t = dtheta
        cdef double[::1] p = dphi
        cdef double *pt = &t[0] if n else NULL
        cdef double *pp = &p[0] if m else NULL
        cdef const double *pa = _dptr(a)
        cdef const double *pb = _dptr(b)
        cdef concord_backward_info info
        cdef int rc
        memset(&info, 0, sizeof(info))
        self.enter()
        try:
            with nogil:
                rc = concord_solver_backward(self.s, &st.c, pa, pb, pt, pp, &info)
        finally:
            self.leave()
        self.check(rc)
        if rc == CONCORD_ENOTCONVERGED:
            # conjugate gradients at their cap, or a forward pass stopped early
            warnings.warn("%s: the gradient is inexact" % _text(concord_solver_last_error(self.s)),
                          RuntimeWarning, stacklevel=2)
        if info.incomplete_faces:
            warnings.warn("backward: the faces holding the solution of %d factor(s) have more "
                          "than %d configurations (scores that tie, or nearly); their part of "
                          "the gradient is the derivative on a smaller face"
                          % (info.incomplete_faces,
                                              CONCORD_FACE_COMPLETION_LIMIT),
                          RuntimeWarning, stacklevel=2)
        return dtheta, dphi, BackwardInfo(info.iterations, info.residual, bool(info.converged),
                                          info.seconds, info.incomplete_faces)

    # ---- decoding

    def decode(self):
        """Rounds the last solution to a 0/1 assignment (concord_solver_decode);
        returns (assignment, Decoding)."""
        cdef concord_decoding result
        cdef int rc
        self.enter()
        try:
            with nogil:
                rc = concord_solver_decode(self.s, &result)
        finally:
            self.leave()
        self.check(rc)
        return (_copy_doubles(concord_solver_decoded(self.s), self.n_vars),
                Decoding(result.value, result.violated, result.passes))

    def decoded_additionals(self):
        """The additional outputs at the last decoded assignment
        (concord_solver_decoded_additionals): each factor's best there, NaN
        for a factor the assignment violates."""
        out = np.zeros(self.n_add, dtype=np.float64)
        cdef double[::1] v = out
        cdef double *pv = &v[0] if self.n_add else NULL
        cdef int rc
        self.enter()
        try:
            with nogil:
                rc = concord_solver_decoded_additionals(self.s, pv)
        finally:
            self.leave()
        self.check(rc)
        return out

    def decoded_labels(self):
        """The decoded state label of every multi-variable (after decode,
        or a solve that decodes: exact MAP, MPLP; after PSDD, call decode
        first)."""
        self.fresh()
        if concord_solver_decoded(self.s) == NULL:
            raise InvalidArgumentError(CONCORD_EINVAL, "no decoded assignment yet: call decode() "
                                       "after a solve")
        out = np.zeros(self.n_multi, dtype=_int32)
        cdef int32_t[::1] labels = out
        if self.n_multi:
            self.check(concord_solver_decoded_labels(self.s, &labels[0]))
        return out

    def evaluate(self, x):
        """Value and violated factors of a 0/1 assignment x (a Decoding)."""
        cdef const double[::1] a = _doubles(x, self.n_vars, "x")
        cdef concord_decoding result
        cdef int rc
        cdef const double *pa = _dptr(a)
        self.enter()
        try:
            with nogil:
                rc = concord_solver_evaluate(self.s, pa, &result)
        finally:
            self.leave()
        self.check(rc)
        return Decoding(result.value, result.violated, result.passes)

    # ---- sparse distributions

    def factor_distribution(self, factor):
        """The sparse distribution behind factor's part of the last solution:
        (weights (k,), U (k, degree), V (k, n_additionals)), U and V the
        configurations' variable (link order) and additional values."""
        cdef int32_t f = _as_int32(factor, "factor")
        self.graph.factor_degree(f)  # in range
        cdef int32_t count = 0
        cdef int rc
        self.enter()
        try:
            with nogil:
                rc = concord_solver_factor_distribution(self.s, f, &count)
        finally:
            self.leave()
        self.check(rc)
        return self.distribution(f, count)

    cdef object distribution(self, int32_t factor, int32_t count):
        """The solver's last distribution, of `count` configurations of
        `factor`, as (weights, U, V)."""
        cdef int32_t degree = self.graph.factor_degree(factor)
        cdef int32_t n_add = self.graph.factor_additionals(factor)[1]
        weights = np.zeros(count)
        U = np.zeros((count, degree))
        V = np.zeros((count, n_add))
        cdef double[::1] w = weights
        cdef double[:, ::1] u = U
        cdef double[:, ::1] v = V
        for k in range(count):
            self.check(concord_solver_distribution_entry(
                self.s, k, &w[k], &u[k, 0] if degree else NULL, &v[k, 0] if n_add else NULL))
        return weights, U, V

    # ---- one factor on its own

    def factor_map(self, factor, variable_scores, additional_scores=None):
        """The MAP of one factor alone at the given scores
        (concord_solver_factor_map): variable_scores one per link (in
        variable space), additional_scores its additional outputs' (None:
        the solver's). Returns (value, u, v)."""
        self.fresh()
        cdef int32_t f = _as_int32(factor, "factor")
        cdef int32_t degree = self.graph.factor_degree(f)
        cdef int32_t n_add = self.graph.factor_additionals(f)[1]
        cdef const double[::1] a = _doubles(variable_scores, degree, "variable_scores")
        cdef const double[::1] b = (None if additional_scores is None
                                    else _doubles(additional_scores, n_add, "additional_scores"))
        u = np.zeros(degree)
        v = np.zeros(n_add)
        cdef double[::1] pu = u
        cdef double[::1] pv = v
        cdef double value = 0.0
        cdef int rc
        self.enter()
        try:
            rc = concord_solver_factor_map(self.s, f, _dptr(a),
                                           _dptr(b) if b is not None and n_add else NULL,
                                           &pu[0] if degree else NULL, &pv[0] if n_add else NULL,
                                           &value)
        finally:
            self.leave()
        self.check(rc)
        return value, u, v

    def factor_qp(self, factor, variable_scores, additional_scores=None, weights=None,
                  distribution=False):
        """The QP of one factor alone (concord_solver_factor_qp): argmax
        a.u + b.v - sum(w u^2)/2 over its polytope, w = weights (None: ones,
        SparseMAP; each between 1e-300 and 1e300, the largest at most 1e300
        times the smallest). Returns (u, v), and with distribution=True (u,
        v, (weights, U, V)), the sparse distribution behind the solution."""
        self.fresh()
        cdef int32_t f = _as_int32(factor, "factor")
        cdef int32_t degree = self.graph.factor_degree(f)
        cdef int32_t n_add = self.graph.factor_additionals(f)[1]
        cdef const double[::1] a = _doubles(variable_scores, degree, "variable_scores")
        cdef const double[::1] b = (None if additional_scores is None
                                    else _doubles(additional_scores, n_add, "additional_scores"))
        cdef const double[::1] d = None if weights is None else _doubles(weights, degree, "weights")
        u = np.zeros(degree)
        v = np.zeros(n_add)
        cdef double[::1] pu = u
        cdef double[::1] pv = v
        cdef int32_t count = 0
        cdef int rc
        self.enter()
        try:
            rc = concord_solver_factor_qp(self.s, f, _dptr(a),
                                          _dptr(b) if b is not None and n_add else NULL,
                                          _dptr(d), &pu[0] if degree else NULL,
                                          &pv[0] if n_add else NULL,
                                          &count if distribution else NULL)
        finally:
            self.leave()
        self.check(rc)
        if distribution:
            return u, v, self.distribution(f, count)
        return u, v

    def links(self):
        """The last solve's per-link state (concord_solver_links):
        (multipliers, copies), one value per link, factors in order."""
        self.fresh()
        cdef int32_t n_links = 0
        for f in range(self.n_factors):
            n_links += self.graph.factor_degree(f)
        multipliers = np.zeros(n_links)
        copies = np.zeros(n_links)
        cdef double[::1] m = multipliers
        cdef double[::1] c = copies
        self.check(concord_solver_links(self.s, &m[0] if n_links else NULL,
                                        &c[0] if n_links else NULL))
        return multipliers, copies

    # ---- losses

    def loss_sparsemap(self, u_gold, v_gold=None, settings=None):
        """The LP-SparseMAP (Fenchel-Young) loss of gold (u_gold, v_gold; None:
        the factors' best at u_gold, so a u_gold fractional in a factor
        with additional outputs needs v_gold); returns (loss, dtheta, dphi,
        Info)."""
        return self._loss(True, u_gold, v_gold, _settings(settings))

    def loss_hinge(self, u_gold, v_gold=None, settings=None):
        """The structured hinge loss with the Hamming cost (by cost-augmented
        LP-MAP); returns (loss, dtheta, dphi, Info)."""
        return self._loss(False, u_gold, v_gold, _settings(settings))

    cdef object _loss(self, bint sparse, u_gold, v_gold, Settings settings):
        cdef int32_t n = self.n_vars, m = self.n_add
        cdef const double[::1] ug = _doubles(u_gold, n, "u_gold")
        cdef const double[::1] vg = None if v_gold is None else _doubles(v_gold, m, "v_gold")
        dtheta = np.zeros(n)
        dphi = np.zeros(m)
        cdef double[::1] t = dtheta
        cdef double[::1] p = dphi
        cdef double *pt = &t[0] if n else NULL
        cdef double *pp = &p[0] if m else NULL
        cdef const double *pu = _dptr(ug)
        # a given v_gold is never NULL, which would ask for the factors'
        # best at u_gold (refused where a factor with additional outputs sees
        # it fractional), also when empty
        cdef double no_additionals = 0.0
        cdef const double *pv = NULL if vg is None else (&vg[0] if m else &no_additionals)
        cdef double loss = 0.0
        cdef concord_info info
        cdef int rc
        cdef concord_settings c = settings.c
        cdef _interrupt_watch watch
        relay = _relay_progress(settings, &c)
        _watch_interrupts(&c, &watch)
        memset(&info, 0, sizeof(info))
        self.enter()
        try:
            with nogil:
                if sparse:
                    rc = concord_solver_loss_sparsemap(self.s, &c, pu, pv, &loss, pt, pp, &info)
                else:
                    rc = concord_solver_loss_hinge(self.s, &c, pu, pv, &loss, pt, pp, &info)
        finally:
            self.leave()
        try:
            self.check(rc, relay)
        finally:
            _deliver_interrupt(&watch)
        return loss, dtheta, dphi, _info(&info)


ALGORITHMS = {"map": CONCORD_ALGORITHM_AD3, "sparse": CONCORD_ALGORITHM_SPARSE,
              "exact": CONCORD_ALGORITHM_EXACT, "psdd": CONCORD_ALGORITHM_PSDD,
              "mplp": CONCORD_ALGORITHM_MPLP}


def check_distinct(items, what, kind):
    """Refuses a batch that lists one object twice (it cannot be solved
    twice at once), naming both places in the list the caller passed."""
    seen = {}
    for k, item in enumerate(items):
        first = seen.setdefault(id(item), k)
        if first != k:
            raise ValueError("solve_batch: %s[%d] and %s[%d] are the same %s (a batch lists "
                             "each %s once)" % (what, first, what, k, kind, kind))


cdef int _run(concord_solver *s, concord_algorithm algorithm, const concord_settings *settings,
              concord_info *info) nogil:
    """One solve of the given algorithm (what concord_solve_batch runs)."""
    if algorithm == CONCORD_ALGORITHM_SPARSE:
        return concord_solver_sparse(s, settings, info)
    if algorithm == CONCORD_ALGORITHM_EXACT:
        return concord_solver_exact(s, settings, info)
    if algorithm == CONCORD_ALGORITHM_PSDD:
        return concord_solver_psdd(s, settings, info)
    if algorithm == CONCORD_ALGORITHM_MPLP:
        return concord_solver_mplp(s, settings, info)
    return concord_solver_map(s, settings, info)


def solve_batch(solvers, algorithm="sparse", settings=None, threads=0):
    """Solves many solvers at once on `threads` C threads (0: one per
    processor; never more than the solvers) with the GIL released; each
    result is bit for bit that of a sequential solve. algorithm: one of
    ALGORITHMS: "sparse" (LP-SparseMAP), "map" (AD3), "exact" (exact MAP),
    "psdd" or "mplp". Returns one Info per solver. When callbacks of
    several solvers raise, the first exception (in list order, a progress
    callback's first) is raised and the others are dropped."""
    if algorithm not in ALGORITHMS:
        raise ValueError("algorithm must be one of %s, not %r" % (", ".join(ALGORITHMS),
                                                                  algorithm))
    cdef int n_threads = _as_int32(threads, "threads")
    cdef list items = list(solvers)
    cdef Py_ssize_t count = len(items), k
    cdef Settings st = _settings(settings)
    cdef concord_algorithm alg = ALGORITHMS[algorithm]
    if count == 0:
        return []
    for item in items:
        if not isinstance(item, Solver):
            raise TypeError("solve_batch takes Solver objects, not %s" % type(item).__name__)
    check_distinct(items, "solvers", "Solver")
    cdef concord_solver **handles = <concord_solver **>malloc(count * sizeof(concord_solver *))
    cdef concord_info *infos = <concord_info *>malloc(count * sizeof(concord_info))
    cdef int rc
    cdef Py_ssize_t entered = 0
    cdef concord_settings c = st.c
    cdef _interrupt_watch watch
    relay = _relay_progress(st, &c)
    _watch_interrupts(&c, &watch)
    if handles == NULL or infos == NULL:
        free(handles)
        free(infos)
        raise MemoryError("out of memory for a batch")
    try:
        memset(infos, 0, count * sizeof(concord_info))
        for k in range(count):
            (<Solver>items[k]).enter()
            entered += 1
            handles[k] = (<Solver>items[k]).s
        rc = _batch(handles, count, alg, &c, infos, n_threads, &watch)
    finally:
        for k in range(entered):
            (<Solver>items[k]).leave()
        free(handles)
    try:
        # every exception a callback stored is taken, so that none is left
        # behind to be raised by a later, unrelated solve
        error = None if relay is None else relay.take_stored()
        for k in range(count):
            stored = _take_raised((<Solver>items[k]).s)
            error = stored if error is None else error
        if error is not None:
            raise error
        if rc not in (CONCORD_OK, CONCORD_ENOTCONVERGED, CONCORD_EINFEASIBLE):
            # rc is the code of the first solver that failed: the first one
            # left unsolved, or ended numeric or callback_failed
            for k in range(count):
                if infos[k].status in (0, 4, 8):
                    (<Solver>items[k]).check(rc)
            raise _error(rc, "")
        return [_info(&infos[k]) for k in range(count)]
    finally:
        free(infos)
        _deliver_interrupt(&watch)


# ---------------------------------------------------------------------------
# Readers

cdef void _warning_trampoline(void *context, const char *message) nogil:
    with gil:
        (<list>context).append(_text(message))


_FORMATS = {"auto": CONCORD_FORMAT_AUTO, "fg": CONCORD_FORMAT_FG, "uai": CONCORD_FORMAT_UAI}


cdef Graph _wrap_graph(concord_graph *g):
    """A Graph object owning an existing concord_graph."""
    cdef Graph graph = Graph.__new__(Graph)
    concord_graph_free(graph.g)
    graph.g = g
    return graph


cdef class Reader:
    """The streaming reader (concord_reader_*): iterating over it yields the
    graphs of a file (or bytes) one at a time, as Graph objects. Warnings
    (lines AD3 would skip) collect in ``warnings``. A malformed input raises
    ParseError ("name:line: ...") when its bad graph is reached.

    Reader(path, format="auto") or Reader(data=bytes, name=..., format=...);
    format "auto" (".uai", in any case, is UAI), "fg" or "uai"; evidence: a UAI evidence
    file.
    """

    cdef concord_reader *r
    cdef bytes _data
    cdef char _message[1024]
    cdef readonly list warnings

    def __reduce__(self):
        """Refused: a Reader holds an open file (TypeError)."""
        _refuse_copy(self)

    def __cinit__(self, path=None, format="auto", data=None, name=None, evidence=None):
        self.warnings = []
        self._message[0] = 0
        if format not in _FORMATS:
            raise ValueError("format must be 'auto', 'fg' or 'uai', not %r" % (format,))
        if (path is None) == (data is None):
            raise TypeError("Reader takes a path or data, not both")
        cdef int rc
        cdef bytes bname
        if path is not None:
            bpath = os.fsencode(path)
            rc = concord_reader_open_file(bpath, _FORMATS[format], &self.r, self._message,
                                          sizeof(self._message), _warning_trampoline,
                                          <void *>self.warnings)
        else:
            self._data = bytes(data)
            bname = (name or "<buffer>").encode()
            rc = concord_reader_open_buffer(self._data, len(self._data), bname,
                                            _FORMATS[format], &self.r, self._message,
                                            sizeof(self._message), _warning_trampoline,
                                            <void *>self.warnings)
        if rc != CONCORD_OK:
            raise _error(rc, _text(self._message))
        if evidence is not None:
            rc = concord_reader_set_evidence(self.r, os.fsencode(evidence))
            if rc != CONCORD_OK:
                raise _error(rc, _text(self._message))

    def __dealloc__(self):
        concord_reader_close(self.r)

    def __iter__(self):
        return self

    def __next__(self):
        cdef concord_graph *g = NULL
        cdef int rc = concord_reader_next(self.r, &g)
        if rc != CONCORD_OK:
            raise _error(rc, _text(self._message))
        if g == NULL:
            raise StopIteration
        return _wrap_graph(g)

    def uai_states(self, var):
        """For a UAI model: the graph's binary variable for each state of
        model variable `var` (-1 where evidence or a zero removed it)."""
        cdef int32_t v = _as_int32(var, "var"), count = 0
        cdef const int32_t *states = NULL
        cdef int rc = concord_reader_uai_states(self.r, v, &count, &states)
        if rc != CONCORD_OK:
            raise _error(rc, "no UAI graph read, or variable %d out of range" % v)
        out = np.empty(count, dtype=_int32)
        for k in range(count):
            out[k] = states[k]
        return out


def read_file(path, format="auto"):
    """Every graph in a file (AD3 .fg or UAI), as a list of Graph objects."""
    return list(Reader(path, format=format))


def read_buffer(data, name="<buffer>", format="fg"):
    """Every graph in `data` (bytes or str)."""
    if isinstance(data, str):
        data = data.encode()
    return list(Reader(data=data, name=name, format=format))


def read_uai(model, evidence=None):
    """A UAI model (and optional evidence file) as one Graph; every model
    variable is a multi-variable, in order."""
    graphs = list(Reader(model, format="uai", evidence=evidence))
    return graphs[0]
