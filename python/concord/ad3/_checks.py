"""Argument conversion with the exceptions AD3's typed Cython signatures
raise, which scripts and test suites rely on: TypeError for a wrong
container or element type, AttributeError for None where a variable is
expected (Cython's none-check), a truncated integer for a float passed as
an int."""

import numbers
import operator
from collections.abc import Iterable

import numpy as np

from concord.graph import is_tensor


def as_double(value, name):
    """A Cython `double` argument: anything with __float__ (numbers, numpy
    scalars, 0-d arrays and tensors), not strings, None or complex numbers
    (whose imaginary part float() would drop)."""
    complex_ = value.is_complex() if is_tensor(value) else np.iscomplexobj(value)
    if value is None or isinstance(value, (str, bytes)) or complex_:
        raise TypeError("%s: must be real number, not %s" % (name, type(value).__name__))
    return float(value)


def as_int(value, name):
    """A Cython `int` argument: integers, or a float truncated as C does."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError("%s: an integer is required" % name)
    try:
        return operator.index(value)
    except TypeError:
        if isinstance(value, numbers.Real):
            return int(value)
        raise TypeError("%s: an integer is required" % name) from None


def _listed(values):
    """An iterable that NumPy takes for a scalar (a generator, an iterator,
    a dict view) as the list of its items, as Cython's conversion to a
    vector reads it; anything else unchanged."""
    if (isinstance(values, Iterable) and not isinstance(values, (str, bytes, np.ndarray))
            and np.ndim(values) == 0):
        return list(values)
    return values


def as_doubles(values, name):
    """A Cython `vector[double]` argument: any iterable of numbers (a
    tensor, a generator too), as a new flat float64 array; TypeError for
    None, a scalar, non-numbers or complex numbers."""
    if is_tensor(values):
        if values.dim() == 0 or values.is_complex():
            raise TypeError("%s: expected a sequence of real numbers, got a %d-d %s tensor"
                            % (name, values.dim(), values.dtype))
        return values.detach().cpu().double().reshape(-1).numpy().copy()
    values = _listed(values)
    if (values is None or isinstance(values, (str, bytes)) or np.ndim(values) == 0
            or np.iscomplexobj(values)):
        raise TypeError("%s: expected a sequence of real numbers, got %s"
                        % (name, type(values).__name__))
    try:
        return np.array(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError("%s: expected a sequence of numbers" % name) from None


def as_ints(values, name):
    """A Cython `vector[int]` argument: any iterable of integers (a
    generator too)."""
    values = _listed(values)
    if values is None or np.ndim(values) == 0:
        raise TypeError("%s: expected a sequence of integers, got %s"
                        % (name, type(values).__name__))
    return [as_int(x, name) for x in values]


def as_list(value, name, allow_none=True):
    """A Cython `list` argument: a list (or None when allowed), nothing
    else (not a tuple, not an array)."""
    if value is None and allow_none:
        return None
    if not isinstance(value, list):
        raise TypeError("Argument '%s' has incorrect type (expected list, got %s)"
                        % (name, type(value).__name__))
    return value


def variables_of(items, kind, graph, name="p_variables"):
    """The elements of a `list` of variables of one kind, checked as AD3
    converts them: None is an AttributeError, another type a TypeError,
    and a variable of another graph a ValueError (AD3 would corrupt
    memory). None for the list itself is a TypeError (not iterable)."""
    if items is None:
        raise TypeError("'NoneType' object is not iterable")
    as_list(items, name)
    for item in items:
        if item is None:
            raise AttributeError("'NoneType' object has no attribute 'thisptr'")
        if not isinstance(item, kind):
            raise TypeError("Cannot convert %s to %s" % (type(item).__name__, kind.__name__))
        if item._graph is not graph:
            raise ValueError("a variable of another factor graph (or of none)")
    return items


def negations(negated, count):
    """AD3's negated flags: None or an empty list for none, else one truth
    value per variable (ValueError otherwise); returned as a list of bools
    or None."""
    as_list(negated, "negated")
    if not negated:
        return None
    if len(negated) != count:
        raise ValueError("Expected one negated flag per variable, or none at all.")
    return [bool(x) for x in negated]
