"""Real numbers written as SymPy expressions, enclosed by interval arithmetic (mpmath.iv, outward
rounding) at rising precision: their signs, bounds and nearest doubles are proven, not read off
SymPy's evalf, which loses digits without saying so.  evalf takes log(1 + 10^-70) to be 0, so
SymPy finds 0 <= -10^70 log(1 + 10^-70) True and 1/2 - 10^70 log(1 + 10^-70) positive; the
number is 1 - 5 10^-71.

An enclosure may be wide, never wrong; what cannot be enclosed (a function without an interval
version here, a value that may not be real) is said to be so, and a sign that no precision up
to PRECISIONS[-1] bits decides is unknown, as for a number that is 0 without being written as
0 (log 4 - 2 log 2).
"""

from __future__ import annotations

from functools import lru_cache

import mpmath
import sympy as sp
from sympy import Expr, Rational

iv = mpmath.iv
PRECISIONS = (64, 256, 1024, 4096)  # bits, tried in turn: 10^1000 log(1 + 10^-1000) needs 3400
MAX_EXPONENT = 2**40  # e^x for larger x is beyond any comparison worth making here
MAX_TERMS = 10**4  # of a sum of numbers, enclosed term by term


class NoEnclosure(ValueError):
    """The number is built from something with no interval version here."""


class MaybeNotReal(NoEnclosure):
    """Part of the number may not be a real number (the logarithm of what may be <= 0)."""


def enclosure(x: Expr, prec: int) -> mpmath.ctx_iv.ivmpf:
    """A finite interval holding the real number x, computed with ``prec`` bits."""
    old = iv.prec
    iv.prec = prec
    try:
        box = _enclose(sp.sympify(x))
    finally:
        iv.prec = old
    if not (mpmath.isfinite(box.a) and mpmath.isfinite(box.b)):
        raise NoEnclosure(f"no finite enclosure of {x}")
    return box


@lru_cache(maxsize=4096)
def proven_sign(x: Expr) -> int | None:
    """The sign of the real number x (1, 0 or -1), proven: exactly for a rational, otherwise by
    an enclosure that excludes 0 (or is the point 0); None where none decides it."""
    x = sp.sympify(x)
    if x.is_Rational:
        return (x.p > 0) - (x.p < 0)
    for prec in PRECISIONS:
        try:
            box = enclosure(x, prec)
        except NoEnclosure:
            return None
        if box.a > 0:
            return 1
        if box.b < 0:
            return -1
        if box.a == 0 and box.b == 0:
            return 0
    return None


def certainly_positive(x: Expr) -> bool:
    """x > 0 is certain: proven for a number; otherwise from the symbols' assumptions and the
    proven signs of the numbers in it (see signed_stand_ins)."""
    x = sp.sympify(x)
    return proven_sign(x) == 1 if x.is_number else signed_stand_ins(x).is_positive is True


def certainly_nonzero(x: Expr) -> bool:
    """x != 0 is certain: proven for a number; otherwise as certainly_positive decides."""
    x = sp.sympify(x)
    return proven_sign(x) in (1, -1) if x.is_number else signed_stand_ins(x).is_zero is False


def signed_stand_ins(x: Expr) -> Expr:
    """x with each number in it that is not a rational replaced by an unknown that carries
    only its proven sign, so that SymPy's assumptions reason about x without evalf: SymPy
    holds q^2 (1/2 - 10^70 log(1 + 10^-70)) non-negative (the number is about -1/2)."""
    if x.is_number:
        if x.is_Rational or x.has(*_NOT_FINITE):
            return x
        return _signed_unknown(x, None)
    if not x.args:
        return x
    if isinstance(x, (sp.Add, sp.Mul)):  # the numbers among the terms as one number: 1 - c/2
        numbers = [a for a in x.args if a.is_number]
        rest = [signed_stand_ins(a) for a in x.args if not a.is_number]
        return x.func(signed_stand_ins(x.func(*numbers)), *rest)
    return x.func(*(signed_stand_ins(a) for a in x.args))


def numbers_as_unknowns(x: Expr) -> tuple[Expr, dict]:
    """x with each number in it that is not a rational replaced by an unknown that carries
    only its proven sign (equal numbers by the same unknown), and the map back: SymPy's
    simplify decides numbers by evalf, and takes sin(log(cos(10^-50))), about -5 10^-101,
    for 0, so that x (1 + it) - x simplified to 0."""
    unknowns: dict = {}

    def replaced(node: Expr) -> Expr:
        if _constant(node) and not (node.is_Rational or node.has(*_NOT_FINITE)):
            if node not in unknowns:  # named after its number, which reasons then show
                unknowns[node] = _signed_unknown(node, str(node))
            return unknowns[node]
        return node.func(*(replaced(a) for a in node.args)) if node.args else node
    return replaced(x), {u: number for number, u in unknowns.items() if u != 0}


_NOT_FINITE = (sp.oo, -sp.oo, sp.zoo, sp.nan)


def _signed_unknown(number: Expr, name: str | None) -> Expr:
    """An unknown that knows of ``number`` only its proven sign (0 itself if that is 0)."""
    sign = proven_sign(number)
    if sign == 0:
        return sp.S.Zero
    return sp.Dummy(name, **{1: {"positive": True}, -1: {"negative": True}}.get(sign, {}))


def _constant(node) -> bool:
    """An expression with no free symbol: a number, or one that binds its symbols (a maximum
    over j = 1..1 of sin(log(cos(j/10^50))), which SymPy's is_number does not count and its
    simplify works out to a number it takes for 0; review round 49)."""
    return isinstance(node, Expr) and not node.free_symbols


def misjudged_number(x: Expr) -> Expr | None:
    """A number in x, at any depth, that SymPy's assumptions take for 0, positive or negative
    where its proven sign says otherwise or says nothing; None if there is none.  SymPy then
    rewrites it wrongly: sin(log(cos(10^-50))) is about -5 10^-101, SymPy's is_zero says True,
    and so sigma^t is 1 to it and expand turns sigma^(2 + t) into sigma^2 (review round 46)."""
    for node in sp.preorder_traversal(x):
        if not _constant(node) or node.is_Rational or node.has(*_NOT_FINITE):
            continue
        sign = proven_sign(node)
        said = {0: node.is_zero, 1: node.is_positive, -1: node.is_negative}
        if any(claim is True and sign != value for value, claim in said.items()):
            return node
    return None


@lru_cache(maxsize=4096)
def rational_bounds(x: Expr, relative: float = 2.0**-56) -> tuple[Rational, Rational]:
    """Rationals lo <= x <= hi, as close as ``relative`` of |x| where the precision allows."""
    for prec in PRECISIONS:
        low, high = _ends_of(enclosure(x, prec))
        if high - low <= relative * max(abs(low), abs(high)):
            break
    return _rational(low), _rational(high)


def approximation(x: Expr, bits: int) -> mpmath.mpf:
    """x to within 2^-bits of its size, proven (the midpoint of a narrow enough enclosure);
    NoEnclosure where none is narrow enough."""
    for prec in PRECISIONS:
        if prec < bits + 16:
            continue
        low, high = _ends_of(enclosure(x, prec))
        with mpmath.workprec(prec):
            middle, width = (low + high) / 2, high - low
            if width <= mpmath.ldexp(max(abs(low), abs(high)), -bits):
                return middle
    raise NoEnclosure(f"cannot tell {x} to {bits} bits")


@lru_cache(maxsize=4096)
def nearest_double(x: Expr) -> float:
    """The double nearest to the real number x, once both ends of its enclosure round to it;
    refused (NoEnclosure) if they never do, or if x underflows (10^-400 is not 0)."""
    for prec in PRECISIONS:
        box = enclosure(x, prec)
        low, high = (float(end) for end in _ends_of(box))  # each to nearest
        if low == high and abs(low) != float("inf"):
            break
    else:
        raise NoEnclosure(f"cannot tell the double nearest to {x}")
    tiny = 2.2250738585072014e-308  # the smallest normal double
    if abs(low) < tiny and not (box.a == 0 and box.b == 0):
        raise NoEnclosure(f"{x} falls below double precision (underflow)")
    return low


def _ends_of(box) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The interval's ends as they are: mpmath.mpf(box.a) would round them to 53 bits."""
    return tuple(mpmath.mp.make_mpf(end) for end in box._mpi_)


def _rational(end: mpmath.mpf) -> Rational:
    sign, mantissa, exponent, _ = end._mpf_  # exactly: the ends are binary numbers
    return (-1) ** sign * Rational(int(mantissa)) * Rational(2) ** int(exponent)


def _enclose(x: Expr):
    if x.is_Rational:
        return iv.mpf(int(x.p)) / int(x.q)
    if x.is_Float:
        return iv.mpf(mpmath.mp.make_mpf(x._mpf_))  # exactly, then outwards
    if x in _CONSTANTS:
        return _CONSTANTS[x]()
    for kind, rule in _RULES:
        if isinstance(x, kind):
            return rule(x)
    raise NoEnclosure(f"no interval version of {type(x).__name__} ({x})")


def _fold(x: Expr, combine):
    parts = [_enclose(a) for a in x.args]
    total = parts[0]
    for part in parts[1:]:
        total = combine(total, part)
    return total


def _power(x: sp.Pow):
    base, exponent = _enclose(x.base), x.exp
    if exponent.is_Integer and abs(exponent) <= MAX_EXPONENT:
        if exponent < 0 and base.a <= 0 <= base.b:
            raise NoEnclosure(f"{x}: a negative power of what may be 0")
        return base ** int(exponent)
    if base.a > 0:  # a real power of a positive number (SymPy's root of a negative is complex)
        return _exp_of(_enclose(exponent) * iv.log(base))
    if base.a == 0 and base.b == 0 and proven_sign(exponent) == 1:
        return iv.mpf(0)
    raise MaybeNotReal(f"{x}: a power of what may be <= 0")


def _exp_of(argument):
    if argument.b > MAX_EXPONENT:
        raise NoEnclosure(f"e^{argument} is too large to enclose")
    return iv.exp(argument)


def _log(x: sp.log):
    argument = _enclose(x.args[0])
    if not argument.a > 0:
        raise MaybeNotReal(f"{x}: the logarithm of what may be <= 0")
    return iv.log(argument)


def _periodic(function):
    def enclose(x):
        argument = _enclose(x.args[0])
        if max(abs(argument.a), abs(argument.b)) > 2 ** iv.prec:  # no digits of its phase
            return iv.mpf([-1, 1])
        return function(argument)
    return enclose


def _tanh(x: sp.tanh):
    """tanh u = 1 - 2 / (e^(2u) + 1), increasing in e^(2u), which occurs once: tight."""
    argument = _enclose(x.args[0])
    if argument.b > MAX_EXPONENT or argument.a < -MAX_EXPONENT:
        return iv.mpf([-1, 1])
    return 1 - 2 / (iv.exp(2 * argument) + 1)


def _sum(x: sp.Sum):
    """A sum over whole numbers lower..upper, term by term (SymPy's sum over a reversed range
    is minus the sum over the gap, Karr's convention: not enclosed here)."""
    *inner, (index, lower, upper) = x.limits
    function = sp.Sum(x.function, *inner) if inner else x.function
    if not (lower.is_Integer and upper.is_Integer and -1 <= upper - lower < MAX_TERMS):
        raise NoEnclosure(f"{x}: not a sum of at most {MAX_TERMS} terms")
    total = iv.mpf(0)
    for value in range(int(lower), int(upper) + 1):
        total += _enclose(function.xreplace({index: sp.Integer(value)}))
    return total


def _ends(x: Expr, pick):
    parts = [_enclose(a) for a in x.args]
    return iv.mpf([pick(p.a for p in parts), pick(p.b for p in parts)])


def _sign(x: sp.sign):
    argument = _enclose(x.args[0])
    low = 1 if argument.a > 0 else 0 if argument.a >= 0 else -1
    high = -1 if argument.b < 0 else 0 if argument.b <= 0 else 1
    return iv.mpf([low, high])


def _rounded(function):
    def enclose(x):
        # floor and ceiling are monotone, and exact when taken with as many bits as the ends
        # have (at mpmath's 53, floor(2^60 + 255) was 2^60 + 256)
        ends = _ends_of(_enclose(x.args[0]))
        with mpmath.workprec(max(53, *(end._mpf_[3] for end in ends))):
            return iv.mpf([function(end) for end in ends])
    return enclose


# +: mpmath's constants are evaluated when used, at the precision of that moment
_CONSTANTS = {sp.pi: lambda: +iv.pi, sp.E: lambda: +iv.e, sp.EulerGamma: lambda: +iv.euler}
_RULES = [
    (sp.Add, lambda x: _fold(x, lambda a, b: a + b)),
    (sp.Mul, lambda x: _fold(x, lambda a, b: a * b)),
    (sp.Pow, _power),
    (sp.Sum, _sum),
    (sp.exp, lambda x: _exp_of(_enclose(x.args[0]))),
    (sp.log, _log),
    (sp.sin, _periodic(iv.sin)),
    (sp.cos, _periodic(iv.cos)),
    (sp.tanh, _tanh),
    (sp.Abs, lambda x: abs(_enclose(x.args[0]))),
    (sp.Max, lambda x: _ends(x, max)),
    (sp.Min, lambda x: _ends(x, min)),
    (sp.sign, _sign),
    (sp.floor, _rounded(mpmath.floor)),
    (sp.ceiling, _rounded(mpmath.ceil)),
]
