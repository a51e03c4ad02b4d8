"""Lim(X_n, n): the almost-sure limit of a random X_n as n -> infinity, and the one way the
toolkit knows it.

When X_n = h(M_1, ..., M_m) is a function of sample means M_k = (1/n) sum_{i=1}^n f_k(v_i) of
summands that are i.i.d. across i with E|f_k| finite, the strong law of large numbers gives
M_k -> E[f_k(v_1)] almost surely, and if h is continuous at that point the continuous mapping
theorem gives X_n -> h(E[f_1], ..., E[f_m]) almost surely.  This module says what X_n must look
like (``sample_means``) and which conditions h must meet at the limit point
(``SampleMeans.conditions``); each checker establishes the conditions, and E[f_k], its own way.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy import Expr, Sum, Symbol
from sympy.printing.precedence import PRECEDENCE

from .errors import UnsupportedExpression
from .expressions import MOMENT_FUNCTIONS, is_random_coordinate, random_coordinates
from .realnumbers import certainly_positive, numbers_as_unknowns


class Lim(Expr):
    """lim_{n -> oo} X_n, almost surely: ``Lim(X, n)``."""

    is_commutative = True
    precedence = PRECEDENCE["Mul"]

    def __new__(cls, body, variable) -> Lim:
        return Expr.__new__(cls, sp.sympify(body), sp.sympify(variable))

    @property
    def body(self) -> Expr:
        return self.args[0]

    @property
    def variable(self) -> Symbol:
        return self.args[1]


@dataclass(frozen=True)
class SampleMeans:
    """X_n = function(means), each mean M_k standing for (1/n) sum_i summands[k](i)."""

    function: Expr
    means: tuple
    summands: tuple  # f_k at coordinate 1: what each mean converges to the expectation of
    vectors: frozenset  # the random vectors the summands use

    def limit(self, expectations: list[Expr]) -> Expr:
        """h at the limit point, given E[f_k] for each k."""
        return self.function.xreplace(dict(zip(self.means, expectations)))

    def conditions(self) -> list[tuple[str, Expr]]:
        """What continuity of h at the limit point needs, in the means: ("nonzero", e) for
        every denominator factor and the base of every power whose exponent may be negative
        (M^(c - 3) for an integer c > 0 is 1/M at c = 2), wherever it stands
        (tanh(1/M) and Max(0, 1/M) jump at M = 0 as 1/M does), then ("positive", e) for the
        argument of every logarithm, the base of every non-integer power, and the base of
        every power whose exponent holds a mean (b^x jumps at x = 0 for b = 0, and is not real
        for b < 0).  The nonzero ones come first: the others may mean nothing where they fail."""
        means = set(self.means)
        found = []
        _, denominator = sp.fraction(sp.together(self.function))
        for factor in sp.Mul.make_args(denominator):
            base = factor.as_base_exp()[0]
            if base.free_symbols & means:
                found.append(("nonzero", base))
        for node in sp.preorder_traversal(self.function):
            if isinstance(node, sp.Pow) and not node.exp.is_nonnegative \
                    and node.base.free_symbols & means and ("nonzero", node.base) not in found:
                found.append(("nonzero", node.base))
        for node in sp.preorder_traversal(self.function):
            if isinstance(node, sp.log):
                found.append(("positive", node.args[0]))
            elif isinstance(node, sp.Pow) and (
                    (not node.exp.is_integer and node.base.free_symbols & means)
                    or node.exp.free_symbols & means):
                found.append(("positive", node.base))
        return found


# What a map of the sample means may be built from: functions continuous wherever they are
# defined (a denominator or a logarithm's argument, checked by ``conditions``, aside).  sign,
# floor, ceiling and the like jump, and a limit point on a jump has no limit.
CONTINUOUS = (sp.Add, sp.Mul, sp.Pow, sp.exp, sp.log, sp.sin, sp.cos, sp.tanh, sp.Abs, sp.Max,
              sp.Min, sp.Tuple)


def outside_the_law(limit: Lim, means: SampleMeans, model) -> str | None:
    """Why the law of large numbers says nothing about ``limit`` under ``model``: a limit in
    another variable than the model's size, or summands the model does not make i.i.d."""
    if limit.variable != model.dimension:
        return f"a limit in {limit.variable}, not in the model's size {model.dimension}"
    why = model.iid_reason(means.vectors)
    return f"no law of large numbers: {why}" if why else None


def sample_means(limit: Lim) -> SampleMeans:
    """The body of ``limit`` as a function of sample means, or UnsupportedExpression saying why
    it is not one (the law of large numbers then says nothing)."""
    body, n = limit.body, limit.variable
    if any(isinstance(x, MOMENT_FUNCTIONS) for x in sp.preorder_traversal(body)):
        raise UnsupportedExpression(f"lim: {body} holds an expectation; the limit is of the "
                                    "random expression itself (almost surely)")
    sums = list(dict.fromkeys(x for x in sp.preorder_traversal(body) if isinstance(x, Sum)))
    means, summands, vectors, replacements = [], [], set(), {}
    for total in sums:
        summand = _summand(total, n)
        mean = sp.Dummy(f"M{len(means) + 1}", positive=True) if certainly_positive(summand) \
            else sp.Dummy(f"M{len(means) + 1}", real=True)
        replacements[total] = n * mean
        means.append(mean)
        (index, _, _), = total.limits
        summands.append(summand.xreplace({index: sp.Integer(1)}))
        vectors |= {c.base for c in random_coordinates(summand)}
    plain, numbers = numbers_as_unknowns(body.xreplace(replacements))
    function = sp.simplify(plain).xreplace(numbers)  # no number decided by evalf
    jumps = [node for node in sp.preorder_traversal(function)
             if isinstance(node, sp.Basic) and node.args and not isinstance(node, CONTINUOUS)]
    if jumps:
        raise UnsupportedExpression(f"lim: {jumps[0]} of the sample means is not known to be "
                                    "continuous, and the limit needs continuity at its point")
    if function.has(n):
        raise UnsupportedExpression(f"lim: {body} is not a function of sample means alone "
                                    f"({n} is left over: {function})")
    if random_coordinates(function):
        raise UnsupportedExpression(f"lim: {body} has coordinates outside its sums")
    return SampleMeans(function, tuple(means), tuple(summands), frozenset(vectors))


def _summand(total: Sum, n: Symbol) -> Expr:
    """The summand of sum_{i=1}^{n} f(i), when f involves the i-th coordinates only."""
    if len(total.limits) != 1:
        raise UnsupportedExpression(f"lim: {total} is a nested sum, not a sample sum")
    (index, lower, upper), = total.limits
    summand = total.function
    if lower != 1 or upper != n:
        raise UnsupportedExpression(f"lim: {total} does not run over 1..{n}")
    if summand.has(n) or summand.has(Sum):
        raise UnsupportedExpression(f"lim: the summand of {total} depends on {n} or holds a "
                                    "sum: its terms are not identically distributed")
    coordinates = random_coordinates(summand)
    if not coordinates or any(not is_random_coordinate(c) or c.indices != (index,)
                              for c in coordinates):
        raise UnsupportedExpression(f"lim: the summand of {total} must involve the {index}-th "
                                    "coordinates, and only them")
    if any(s.is_integer and s != index for s in summand.free_symbols):
        raise UnsupportedExpression(f"lim: the summand of {total} has another free index")
    # i may only pick the i-th coordinates: a weight i, (-1)^i or a delta_{i1} makes the terms
    # differ in law, and the mean of the first is then not the limit
    if summand.xreplace({c: sp.Dummy() for c in coordinates}).has(index):
        raise UnsupportedExpression(f"lim: the summand of {total} uses {index} as a number, so "
                                    "its terms are not identically distributed")
    return summand
