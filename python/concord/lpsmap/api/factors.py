"""lp-sparsemap's ``lpsmap.api.factors``: logic factors, budgets and pairs
over Variables and Slices (their variables in C order)."""

import numpy as np

__all__ = ["Logic", "Xor", "Or", "AtMostOne", "Imply", "XorOut", "OrOut", "AndOut", "Budget",
           "Pair"]


class Logic:
    """A logic factor over the flattened variables (factor_type names it)."""

    factor_type = None

    def __init__(self, variables):
        self._variables = variables

    def _construct(self, fg, pvars):
        return [fg.create_factor_logic(self.factor_type, pvars)], []


class Xor(Logic):
    """Exactly one variable is 1."""
    factor_type = "XOR"


class Or(Logic):
    """At least one variable is 1."""
    factor_type = "OR"


class AtMostOne(Logic):
    """At most one variable is 1."""
    factor_type = "ATMOSTONE"


class Imply(Logic):
    """The AND of all but the last variable implies the last."""
    factor_type = "IMPLY"


class XorOut(Logic):
    """The last variable is the sum of the others, at most one of which is 1."""
    factor_type = "XOROUT"


class OrOut(Logic):
    """The last variable is the OR of the others."""
    factor_type = "OROUT"


class AndOut(Logic):
    """The last variable is the AND of the others."""
    factor_type = "ANDOUT"


class Budget:
    """At most `budget` variables are 1 (exactly, with force_budget)."""

    def __init__(self, variables, budget, force_budget=False):
        self._variables = variables
        self.budget = budget
        self.force_budget = force_budget

    def _construct(self, fg, pvars):
        return [fg.create_factor_budget(pvars, self.budget, force_budget=self.force_budget)], []


class Pair:
    """For each k, a PAIR between the k-th variables of vars_i and vars_j,
    scored by additionals[k] when both are 1."""

    def __init__(self, vars_i, vars_j, additionals):
        self._variables = vars_i, vars_j
        self._additionals = additionals

    def _construct(self, fg, pvars):
        vars_i, vars_j = pvars
        adds = self._additionals
        if len(vars_i) != len(vars_j):
            raise ValueError("Pair: %d variables on one side, %d on the other"
                             % (len(vars_i), len(vars_j)))
        if np.ndim(adds) == 0:
            raise ValueError("Pair: its scores are a scalar; it needs one per pair of "
                             "variables (a 1-D array of %d)" % len(vars_i))
        if len(adds) != len(vars_i):
            raise ValueError("Pair: %d scores for %d pairs of variables"
                             % (len(adds), len(vars_i)))
        factors = [fg.create_factor_pair([vars_i[k], vars_j[k]], adds[k])
                   for k in range(len(vars_i))]
        return factors, [adds[k] for k in range(len(vars_i))]
