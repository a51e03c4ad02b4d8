"""Calculus by SymPy itself: derivatives, and sums of Kronecker deltas summed by SymPy's own
delta summation, for a symbolic dimension.

SymPy answers sum_{m=1}^{n} delta_{jm} f(m) with a case split, f(j) if j <= n and 0 otherwise;
the convention of derivations is that an index names a coordinate, 1 <= j <= n, which decides
the case.  The rule check's ``differentiate`` and ``sift`` rules are a separate implementation
of the same facts; this one serves the checks that must not share code with it.
"""

from __future__ import annotations

from itertools import product

import sympy as sp
from sympy import Derivative, Expr, KroneckerDelta, Piecewise, Sum


def calculus_normal_form(expr: Expr, dimension: Expr) -> Expr:
    """``expr`` with every derivative taken and every sum over a Kronecker delta summed, the
    case splits decided for indices in 1..dimension."""
    return _walk(expr, dimension, {})


def _walk(expr: Expr, dimension: Expr, ranges: dict) -> Expr:
    if not expr.args:
        return expr
    if isinstance(expr, Sum):
        inner = {**ranges, **{v: (lo, hi) for v, lo, hi in expr.limits}}
        expr = Sum(_walk(expr.function, dimension, inner), *expr.limits)
        if expr.function.has(KroneckerDelta):
            expr = expr.doit(deep=False)
        return _decide(expr, dimension, ranges)
    expr = expr.func(*(_walk(a, dimension, ranges) for a in expr.args))
    if isinstance(expr, Derivative):
        taken = expr.doit(deep=False)
        # SymPy leaves a derivative it cannot take (of a maximum) as it is: stop there
        return expr if taken == expr else _walk(taken, dimension, ranges)
    return _decide(expr, dimension, ranges)


def _decide(expr: Expr, dimension: Expr, ranges: dict) -> Expr:
    """A case split whose branch is settled by the index ranges, resolved: the first branch
    whose condition holds everywhere, after branches whose conditions fail everywhere."""
    if not isinstance(expr, Piecewise):
        return expr
    for value, condition in expr.args:
        if _everywhere(condition, dimension, ranges):
            return value
        if not _everywhere(sp.Not(condition), dimension, ranges):
            return expr  # this branch may apply somewhere: undecided
    return expr


_CONVEX = (sp.Eq, sp.Le, sp.Lt, sp.Ge, sp.Gt)  # each is a half-space (or a hyperplane)


def _everywhere(condition, dimension: Expr, ranges: dict) -> bool:
    """Whether the condition holds for every value of its indices in their ranges.  Proved
    only for a conjunction of linear (in)equalities in the indices: the set where it holds is
    convex, so it contains the box of ranges when it contains every corner of the box."""
    condition = sp.simplify_logic(condition) if condition not in (sp.true, sp.false) \
        else condition
    if condition in (sp.true, sp.false):
        return bool(condition)
    relations = condition.args if isinstance(condition, sp.And) else (condition,)
    if not all(isinstance(r, _CONVEX) for r in relations):
        return False  # a disjunction or a "not equal" is not convex: not shown
    indices = sorted({s for r in relations for s in r.free_symbols
                      if s.is_integer and s != dimension}, key=sp.default_sort_key)
    for relation in relations:
        difference = relation.lhs - relation.rhs
        if not difference.is_polynomial(*indices) or \
                sp.Poly(difference, *indices).total_degree() > 1:
            return False
    corners = [ranges.get(s, (sp.S.One, dimension)) for s in indices]
    for corner in product(*corners):
        value = condition.xreplace(dict(zip(indices, corner)))
        if value is not sp.true and sp.simplify(value) is not sp.true:
            return False
    return True
