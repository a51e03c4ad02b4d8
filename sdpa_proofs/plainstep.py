"""A step checked by SymPy's algebra: what the rule check and the exact engine share.

Both take the step with its numbers as unknowns (SymPy's expand and constructors rewrite
numbers by what evalf makes of them), and both pass by algebra that holds only where the
sides have values, so a pass is worth no more than the guard against parts without one allows.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp
from sympy import Expr

from .algebra import misjudged_by_sympy, unshared_pole
from .models import Model, without_numbers_in_step
from .realnumbers import MisjudgedNumber
from .verdicts import FAIL, UNDECIDED, Verdict


def check_plain(check: Callable[..., Verdict], before: Expr, after: Expr, model: Model,
                label: str = "", guard: Callable[[Expr, Expr], str | None] = unshared_pole
                ) -> Verdict:
    """``check(before, after, model, numbers)`` on the step with each number that is not a
    rational as an unknown, and the map back: undecided where SymPy misjudges a number in the
    step, or one that putting values in makes.  A verdict other than a failure becomes
    undecided where a part of one side may have no value that the other side shares not
    (``guard``, by default ``algebra.unshared_pole`` of the sides as given): a
    counterexample where both sides have values stands (a fixed scale log(p/(1 - p)) is
    refuted, though a side has no value at p = 2)."""
    before, after = sp.sympify(before), sp.sympify(after)
    why = misjudged_by_sympy(before, after, *model.constants)
    if why:
        return Verdict(UNDECIDED, label + why)
    (plain_before, plain_after), numbers, plain_model = without_numbers_in_step(
        model, before, after)
    try:
        verdict = check(plain_before, plain_after, plain_model, numbers)
    except MisjudgedNumber as error:  # met where values are put in (a sum written out)
        return Verdict(UNDECIDED, label + str(error))
    if verdict.status == FAIL:
        return verdict
    lacking = guard(before, after)
    return Verdict(UNDECIDED, label + lacking) if lacking else verdict
