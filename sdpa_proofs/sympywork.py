"""Work SymPy repeats for every object it builds, done once where the result is the same.

Writing sums out and putting values in build about a hundred thousand entries q_i over a
catalogue run, and SymPy deduces each one's assumptions afresh from its base's: the closure of
its assumption rules, about a tenth of the checks' time.  The closure depends on the base's
assumptions alone, so it is deduced once per set of them; each entry gets its own copy, since an
object adds to its own the facts it is later asked about.  tests/test_sympywork.py holds the
copies to SymPy's own deduction.
"""

from __future__ import annotations

from sympy.core.assumptions import StdFactKB
from sympy.tensor.indexed import IndexedBase

_DEDUCED: dict = {}  # the assumptions given -> (the facts deduced, the assumptions as given)


def set_assumptions(obj, assumptions: dict) -> None:
    """``IndexedBase._set_assumptions``: obj's facts, the closure of ``assumptions`` (with
    commutative unless they say otherwise), copied from the closure deduced before for the
    same assumptions."""
    key = frozenset(assumptions.items())
    if key not in _DEDUCED:
        _SYMPY_SET_ASSUMPTIONS(obj, assumptions)
        _DEDUCED[key] = dict(obj._assumptions), dict(obj._assumptions._generator)
        return
    facts, given = _DEDUCED[key]
    deduced = StdFactKB()  # its rules, and no facts yet
    dict.update(deduced, facts)
    deduced._generator = dict(given)
    obj._assumptions = deduced


_SYMPY_SET_ASSUMPTIONS = IndexedBase._set_assumptions
IndexedBase._set_assumptions = staticmethod(set_assumptions)
