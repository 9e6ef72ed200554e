"""scikit-learn's parameter conventions, without depending on scikit-learn:
constructor arguments are parameters, read back by ``get_params`` and
changed by ``set_params`` (``model__C`` reaches a nested estimator's)."""

import inspect
import numbers

import numpy as np


class NotFittedError(ValueError, AttributeError):
    """A learner's predict or score called before fit (scikit-learn's
    exception of that name derives from the same two)."""


class Estimator:
    """get_params / set_params / repr from the constructor's signature."""

    @classmethod
    def _param_names(cls):
        """The constructor's parameter names, in order."""
        signature = inspect.signature(cls.__init__)
        return [name for name, p in signature.parameters.items()
                if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self, deep=True):
        """The constructor's arguments as a dict; with deep, also those of
        nested estimators, as ``name__param``."""
        params = {}
        for name in self._param_names():
            value = getattr(self, name)
            params[name] = value
            if deep and isinstance(value, Estimator):
                for key, nested in value.get_params(deep=True).items():
                    params["%s__%s" % (name, key)] = nested
        return params

    def set_params(self, **params):
        """Sets parameters (``name__param`` sets a nested estimator's);
        returns self."""
        names = self._param_names()
        for key, value in params.items():
            name, _, rest = key.partition("__")
            if name not in names:
                raise ValueError("%s has no parameter %r" % (type(self).__name__, name))
            if rest:
                getattr(self, name).set_params(**{rest: value})
            else:
                setattr(self, name, value)
        return self

    def __repr__(self):
        """The class name and the parameters, as a constructor call."""
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % item for item in self.get_params(deep=False).items()))


def check_count(owner, name, least, or_none=False):
    """Raises ValueError unless the parameter `name` of `owner` (a learner
    or a model) is an integer of at least `least` (or None, when
    or_none)."""
    value = getattr(owner, name)
    if or_none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError("%s must be %san integer >= %d, not %r"
                         % (name, "None or " if or_none else "", least, value))


def check_number(owner, name, least, strictly, infinite=False, note=""):
    """Raises ValueError unless the parameter `name` of `owner` is a real
    number above `least` (strictly) or at least `least`, and finite unless
    `infinite`; `note` is added to the message after the range."""
    value = getattr(owner, name)
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and (value > least if strictly else value >= least)
            and (infinite or np.isfinite(value))):
        raise ValueError("%s must be a %snumber %s %g%s, not %r"
                         % (name, "" if infinite else "finite ", ">" if strictly else ">=",
                            least, note, value))
