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

from .expressions import index_symbols


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
        return _walk(expr.doit(deep=False), dimension, ranges)
    return _decide(expr, dimension, ranges)


def _decide(expr: Expr, dimension: Expr, ranges: dict) -> Expr:
    """Piecewise branches whose conditions are settled by the index ranges, resolved."""
    if not isinstance(expr, Piecewise):
        return expr
    for value, condition in expr.args:
        verdict = _holds(condition, dimension, ranges)
        if verdict is True:
            return value
        if verdict is None:
            return expr
    return expr


def _holds(condition, dimension: Expr, ranges: dict) -> bool | None:
    """Whether a condition linear in the indices holds for all of them in their ranges (it
    then holds at every corner of the box of ranges, and conversely); None if undecided."""
    if condition in (sp.true, sp.false):
        return bool(condition)
    indices = sorted(index_symbols(condition) | {s for s in condition.free_symbols
                                                 if s.is_integer and s != dimension},
                     key=sp.default_sort_key)
    for relation in condition.atoms(sp.core.relational.Relational):
        difference = relation.lhs - relation.rhs
        if not difference.is_polynomial(*indices) or \
                sp.Poly(difference, *indices).total_degree() > 1:
            return None
    corners = [ranges.get(s, (sp.S.One, dimension)) for s in indices]
    outcomes = set()
    for corner in product(*corners):
        value = condition.xreplace(dict(zip(indices, corner)))
        value = sp.simplify(value) if value not in (sp.true, sp.false) else value
        if value not in (sp.true, sp.false):
            return None
        outcomes.add(bool(value))
    return outcomes.pop() if len(outcomes) == 1 else None
