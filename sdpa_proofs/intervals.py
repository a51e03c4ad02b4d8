"""Interval arithmetic over expressions: a sound enclosure [lo, hi] of every value an expression
can take, used to establish signs (is this cofactor >= 0?) and ranges (max_j p_j <= 1).

An enclosure may be loose but is never wrong: where nothing is known the answer is (-oo, oo).
Closed intervals only, so the oracle establishes >= and <=, never strict inequalities.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp
from sympy import Add, Expr, KroneckerDelta, Mul, Pow, S, Sum

from .expressions import SD, Cov, E, MaxOver, Var, index_symbols, is_random_coordinate
from .realnumbers import (
    MaybeNotReal,
    NoEnclosure,
    proven_sign,
    rational_bounds,
    signed_stand_ins,
)

Interval = tuple[Expr, Expr]
UNKNOWN: Interval = (S.NegativeInfinity, S.Infinity)


@dataclass(frozen=True)
class Ranges:
    """Where each index runs: bound indices by their sum or max, free indices over 1..dimension
    (the convention of derivations: a free index names some coordinate)."""

    dimension: Expr
    bound: dict = field(default_factory=dict)

    def of(self, index: Expr) -> Interval | None:
        if index.is_Integer:
            return index, index
        if index in self.bound:
            return self.bound[index]
        if index.is_Symbol and index.is_integer:
            return S.One, self.dimension
        return None

    def with_limits(self, limits) -> Ranges:
        return Ranges(self.dimension, {**self.bound, **{v: (lo, hi) for v, lo, hi in limits}})


def _times(a: Expr, b: Expr) -> Expr:
    """Product of interval ends, with 0 * oo = 0 (a closed end of 0 times anything finite)."""
    return S.Zero if a == 0 or b == 0 else a * b


def known_le(a: Expr, b: Expr) -> bool:
    """a <= b is certain: SymPy decides it from the numbers or the symbols' assumptions."""
    return _certain(sp.Le, a, b)


def _known_lt(a: Expr, b: Expr) -> bool:
    return _certain(sp.Lt, a, b)


def _certain(relation, a: Expr, b: Expr) -> bool:
    """Two finite numbers are compared by the proven sign of their difference (SymPy compares
    numbers by evalf, which took 0 <= -10^70 log(1 + 10^-70) for True); anything else by
    SymPy, from the symbols' assumptions and the proven signs of the numbers in it."""
    a, b = sp.sympify(a), sp.sympify(b)
    if a.is_number and b.is_number and not (a.has(*_NOT_FINITE) or b.has(*_NOT_FINITE)):
        difference = proven_sign(b - a)
        return difference == 1 or (difference == 0 and relation is sp.Le)
    try:  # the numbers in the difference carry only their proven signs into SymPy's reasoning
        gap = signed_stand_ins(b - a)
        return (sp.Ge if relation is sp.Le else sp.Gt)(gap, 0) == S.true
    except TypeError:  # a non-real end
        return False


_NOT_FINITE = (S.Infinity, S.NegativeInfinity, S.ComplexInfinity, S.NaN)


def is_nonnegative(expr: Expr, ranges: Ranges) -> bool:
    lo, _ = enclosure(expr, ranges)
    return known_le(S.Zero, lo)


def is_positive(expr: Expr, ranges: Ranges) -> bool:
    """expr > 0 everywhere: its enclosure's lower end is above 0, or it is e^x of a real x, or a
    sum, product, maximum or power whose parts say so (closed enclosures lose the strictness
    of e^x > 0: the enclosure of a sum of e^(z_l) starts at 0)."""
    lo, _ = enclosure(expr, ranges)
    if lo is S.NaN:  # a part may not be real (exp of a log of what may be negative)
        return False
    if _known_lt(S.Zero, lo) or isinstance(expr, sp.exp) or (expr.is_Symbol
                                                              and expr.is_positive):
        return True
    if isinstance(expr, (Sum, MaxOver)):  # a maximum or a sum of positive terms, never empty
        inner = ranges.with_limits(expr.limits)
        return all(known_le(lower, upper) for _, lower, upper in expr.limits) \
            and is_positive(expr.function, inner)
    if isinstance(expr, Add):
        return all(is_nonnegative(a, ranges) for a in expr.args) \
            and any(is_positive(a, ranges) for a in expr.args)
    if isinstance(expr, Mul):
        return all(is_positive(a, ranges) for a in expr.args)
    if isinstance(expr, Pow):
        return is_positive(expr.base, ranges)
    return False


def is_nonpositive(expr: Expr, ranges: Ranges) -> bool:
    _, hi = enclosure(expr, ranges)
    return known_le(hi, S.Zero)


def sign(expr: Expr, ranges: Ranges) -> int | None:
    """+1 if expr >= 0 everywhere, -1 if expr <= 0 everywhere, None if neither is known."""
    if is_nonnegative(expr, ranges):
        return 1
    if is_nonpositive(expr, ranges):
        return -1
    return None


class NotReal(Exception):
    """A part of the expression may take a value that is not a real number (the logarithm of
    a negative, 1/0): no enclosure of its real values says anything about the whole."""


#: what ``enclosure`` answers when a value may not be real: no comparison with it holds
NOT_REAL: Interval = (S.NaN, S.NaN)


def enclosure(expr: Expr, ranges: Ranges) -> Interval:
    """[lo, hi] containing every value of ``expr`` (ends may be symbolic, such as n), or
    NOT_REAL when some part of it may not be a real number: exp(log x) is no real at all for
    x < 0, and an enclosure that treated log x as some real would call it positive."""
    try:
        return _enclose(expr, ranges)
    except NotReal:
        return NOT_REAL


def _enclose(expr: Expr, ranges: Ranges) -> Interval:
    expr = sp.sympify(expr)
    if expr.is_number:
        bounds = _number(expr)
        if bounds is not None:
            return bounds
    if expr.is_Symbol:
        return ranges.bound.get(expr) or _symbol(expr)  # a bound index lies in its range
    for kind, rule in _RULES:
        if isinstance(expr, kind):
            lo, hi = rule(expr, ranges)
            return _outer(lo, 0), _outer(hi, 1)
    return UNKNOWN


def _outer(end: Expr, side: int) -> Expr:
    """A number end (e^(1/2), 10^70 log(1 + 10^-70) - 1/2) as a rational just outside it:
    SymPy's Min and Max, which order the corners of a product, compare numbers by evalf,
    which can lose every digit (see _certain)."""
    if not end.is_number or end.is_Rational or end.has(*_NOT_FINITE):
        return end
    try:
        return rational_bounds(end)[side]
    except NoEnclosure:
        return UNKNOWN[side]


def _number(x: Expr) -> Interval | None:
    """Rational bounds of a number, proven (realnumbers): ends that SymPy compares exactly.
    None for a number with no enclosure there (the rules for its parts may still bound it)."""
    if x.is_extended_real is not True:  # I, nan, zoo
        raise NotReal(x)
    if x.is_Rational or x.is_infinite:
        return x, x
    try:
        return rational_bounds(x)
    except MaybeNotReal as error:
        raise NotReal(x) from error
    except NoEnclosure:
        return None


def _symbol(x: Expr) -> Interval:
    """What the symbol's assumptions say (a bound index's range says more: see enclosure)."""
    if x.is_integer and x.is_positive:
        return S.One, S.Infinity
    if x.is_nonnegative:
        return S.Zero, S.Infinity
    if x.is_nonpositive:
        return S.NegativeInfinity, S.Zero
    return UNKNOWN


def _add(expr: Add, ranges: Ranges) -> Interval:
    ends = [_enclose(a, ranges) for a in expr.args]
    lo, hi = Add(*(e[0] for e in ends)), Add(*(e[1] for e in ends))
    return (S.NegativeInfinity if lo is S.NaN else lo), (S.Infinity if hi is S.NaN else hi)


def _mul(expr: Mul, ranges: Ranges) -> Interval:
    share, rest = _split_share(expr, ranges)
    lo, hi = (S.Zero, S.One) if share else (S.One, S.One)
    for factor in Mul.make_args(rest):
        a, b = _enclose(factor, ranges)
        corners = [_times(x, y) for x in (lo, hi) for y in (a, b)]
        if any(c is S.NaN for c in corners):
            return UNKNOWN
        lo, hi = _least(corners), _greatest(corners)
        if lo is None or hi is None:
            return _by_signs(expr, ranges)
    return lo, hi


def _least(ends: list) -> Expr | None:
    """The end that is certainly at most every other, None if none is.  Not SymPy's Min: with
    a corner such as -oo (d - c) among them, it returned the larger of two others (review
    round 44), and it compares numbers by evalf."""
    if any(_infinite_times_unknown(end) for end in ends):
        return None
    return next((end for end in ends
                 if all(other == end or known_le(end, other) for other in ends)), None)


def _greatest(ends: list) -> Expr | None:
    """The end that is certainly at least every other, None if none is (see _least)."""
    negated = _least([-end for end in ends])
    return None if negated is None else -negated


def _infinite_times_unknown(end: Expr) -> bool:
    """oo times what SymPy cannot sign (oo (d - c)): an end that is no end."""
    return end.has(S.Infinity, S.NegativeInfinity) and end not in (S.Infinity,
                                                                   S.NegativeInfinity)


def _by_signs(expr: Mul, ranges: Ranges) -> Interval:
    """Only the sign of a product whose factors have symbolic ends (such as 1 <= n)."""
    signs = [sign(f, ranges) for f in expr.args]
    if None in signs:
        return UNKNOWN
    negative = signs.count(-1) % 2
    return (S.NegativeInfinity, S.Zero) if negative else (S.Zero, S.Infinity)


def _split_share(expr: Mul, ranges: Ranges) -> tuple[bool, Expr]:
    """Find x_t^k / (sum_l x_l)^k among the factors: it lies in [0, 1] when every x_l >= 0 and
    t is in the sum's range (a term of a sum of non-negative terms is at most the sum; softmax
    probabilities, for one).  Returns whether one was found and the remaining factors."""
    factors = Mul.make_args(expr)
    for factor in factors:
        if not (isinstance(factor, Pow) and isinstance(factor.base, Sum)
                and factor.exp.is_Integer and factor.exp < 0 and len(factor.base.limits) == 1):
            continue
        total, power = factor.base, -factor.exp
        (index, lower, upper), = total.limits
        rest = expr / factor
        if not is_nonnegative(total.function, ranges.with_limits(total.limits)):
            continue
        for t in _index_candidates(rest):
            reach = ranges.of(t)
            if reach is None or not (known_le(lower, reach[0]) and known_le(reach[1], upper)):
                continue
            # expr = share * quotient is an identity, so any t in range gives a sound enclosure
            return True, rest / total.function.xreplace({index: t}) ** power
    return False, expr


def _index_candidates(expr: Expr) -> list:
    """The free indices of ``expr``: the t of a share x_t / sum_l x_l."""
    return sorted(index_symbols(expr), key=sp.default_sort_key)


def _pow(expr: Pow, ranges: Ranges) -> Interval:
    base, exponent = expr.base, expr.exp
    lo, hi = _enclose(base, ranges)
    if not exponent.is_number or not exponent.is_real:
        if base == S.Exp1:
            return _exp(sp.exp(exponent), ranges)
        if not known_le(S.Zero, lo):  # (-1)^x is not real for most x
            raise NotReal(expr)
        return UNKNOWN
    if exponent.is_Integer and exponent % 2 == 0 and exponent > 0:
        if known_le(S.Zero, lo):
            return lo ** exponent, hi ** exponent
        if known_le(hi, S.Zero):
            return hi ** exponent, lo ** exponent
        top = _greatest([lo ** exponent, hi ** exponent])
        return S.Zero, S.Infinity if top is None else top
    if exponent.is_Integer and exponent > 0:  # odd: increasing on the whole line
        return lo ** exponent, hi ** exponent
    # a proven sign, not "> 0": an exponent that is 0 without being written as 0 (cos(pi/7) -
    # cos(2pi/7) + cos(3pi/7) - 1/2) has none, and no bound
    direction = proven_sign(exponent)
    if direction == 1 and known_le(S.Zero, lo):
        return lo ** exponent, hi ** exponent
    if direction == -1 and known_le(S.Zero, lo):
        return (hi ** exponent if hi is not S.Infinity else S.Zero,
                lo ** exponent if lo != 0 else S.Infinity)
    if exponent.is_Integer and (_known_lt(S.Zero, lo) or _known_lt(hi, S.Zero)):
        return UNKNOWN  # 1/x^k of an x kept away from 0: real
    raise NotReal(expr)  # a root of a negative, or 1/0


def _exp(expr: Expr, ranges: Ranges) -> Interval:
    lo, hi = _enclose(expr.args[0], ranges)
    return (S.Zero if lo is S.NegativeInfinity else sp.exp(lo)), sp.exp(hi)


def _log(expr: Expr, ranges: Ranges) -> Interval:
    lo, hi = _enclose(expr.args[0], ranges)
    if not known_le(S.Zero, lo):  # the logarithm of a negative is not real
        raise NotReal(expr)
    return (S.NegativeInfinity if lo == 0 else sp.log(lo)), sp.log(hi)


def forward(limits) -> bool:
    """Every range runs upwards or is empty (upper >= lower - 1).  SymPy sums a reversed range
    as minus the sum over the gap (Karr's convention), which turns every sign around."""
    return all(known_le(lower, upper + 1) for _, lower, upper in limits)


def _sum(expr: Sum, ranges: Ranges) -> Interval:
    """A sum of terms in [a, b]: non-negative if a >= 0, non-positive if b <= 0."""
    if not forward(expr.limits):
        return UNKNOWN
    a, b = _enclose(expr.function, ranges.with_limits(expr.limits))
    lo = S.Zero if known_le(S.Zero, a) else S.NegativeInfinity
    hi = S.Zero if known_le(b, S.Zero) else S.Infinity
    return lo, hi


def _max_over(expr: MaxOver, ranges: Ranges) -> Interval:
    """The largest of values in [a, b] lies in [a, b]; an end that depends on the index the
    maximum binds means nothing outside it, and is dropped."""
    lo, hi = _enclose(expr.function, ranges.with_limits(expr.limits))
    index = expr.index
    return (S.NegativeInfinity if lo.has(index) else lo), (S.Infinity if hi.has(index) else hi)


def _expectation(expr: E, ranges: Ranges) -> Interval:
    return _enclose(expr.args[0], ranges)


def _indexed(expr: Expr, ranges: Ranges) -> Interval:
    return UNKNOWN if is_random_coordinate(expr) else _symbol(expr)


_RULES = [
    (Add, _add), (Mul, _mul), (Pow, _pow), (sp.exp, _exp), (sp.log, _log), (Sum, _sum),
    (MaxOver, _max_over), (E, _expectation), (sp.Indexed, _indexed),
    ((Var, SD, sp.Abs), lambda e, r: (S.Zero, S.Infinity)),
    (KroneckerDelta, lambda e, r: (S.Zero, S.One)),
    (Cov, lambda e, r: UNKNOWN),
]
