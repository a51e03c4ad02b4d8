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

from .expressions import MaxOver, is_random_coordinate


def calculus_normal_form(expr: Expr, dimension: Expr, context: tuple = ()) -> Expr:
    """``expr`` with every derivative taken and every sum over a Kronecker delta summed, the
    case splits decided where the index ranges decide them: a bound index runs over its
    binder's range, a free index that names a coordinate (in ``expr`` or in the expressions
    of ``context``, such as the other side of a step) over 1..dimension, and any other integer
    symbol over values not known here (its case splits stay)."""
    coordinates = {index for e in (expr, *context) for x in e.atoms(sp.Indexed)
                   if is_random_coordinate(x) for index in x.indices if index.is_Symbol}
    return _walk(expr, dimension, {index: (sp.S.One, dimension) for index in coordinates})


def _walk(expr: Expr, dimension: Expr, ranges: dict) -> Expr:
    if not expr.args:
        return expr
    if isinstance(expr, Sum):
        inner = {**ranges, **{v: (lo, hi) for v, lo, hi in expr.limits}}
        expr = Sum(_walk(expr.function, dimension, inner), *expr.limits)
        if expr.function.has(KroneckerDelta) and all(
                _pins_to_integers(expr.function, v) for v, _, _ in expr.limits):
            expr = expr.doit(deep=False)
        return _decide(expr, dimension, ranges)
    if isinstance(expr, MaxOver):  # its index runs over its own range, which may hold 0
        (index, lower, upper), = expr.limits
        inner = {**ranges, index: (lower, upper)}
        return MaxOver(_walk(expr.function, dimension, inner), (index, lower, upper))
    expr = expr.func(*(_walk(a, dimension, ranges) for a in expr.args))
    if isinstance(expr, Derivative):
        taken = expr.doit(deep=False)
        # SymPy leaves a derivative it cannot take (of a maximum) as it is: stop there
        return expr if taken == expr else _walk(taken, dimension, ranges)
    return _decide(expr, dimension, ranges)


def _pins_to_integers(function: Expr, index: Expr) -> bool:
    """Whether every Kronecker delta in the summand that involves the index pins it to an
    integer: delta(+-index + c, a) with a - c proven an integer.  SymPy's delta summation
    takes the root of 3 t = 4 (e + 1)! for a value of t whether or not it is an integer (the
    sum is z_8 at e = 2, 0 at e = 1; it gave z_(8/3) there; review round 53)."""
    for delta in function.atoms(KroneckerDelta):
        if not delta.has(index):
            continue
        difference = sp.expand(delta.args[0] - delta.args[1])
        slope = difference.diff(index)
        rest = sp.expand(difference - slope * index)
        if slope not in (1, -1) or rest.has(index) or rest.is_integer is not True:
            return False
    return True


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
    # the logic only: simplifying each relation as well (deep) sent SymPy's equals, and its
    # nsimplify and PSLQ, after every bound of an index; the corners below decide them
    if condition not in (sp.true, sp.false):
        condition = sp.simplify_logic(condition, deep=False)
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
    if any(s not in ranges for s in indices):
        return False  # an integer whose range is not known here
    corners = [ranges[s] for s in indices]
    for corner in product(*corners):
        value = condition.xreplace(dict(zip(indices, corner)))
        if value is not sp.true and sp.simplify(value) is not sp.true:
            return False
    return True
