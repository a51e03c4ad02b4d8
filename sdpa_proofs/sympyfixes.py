"""Corrections to SymPy where a check depends on it and review found it wrong.

The checks consult SymPy's assumptions about expressions in d (is a range's end >= its start,
is sqrt(x^2) x or -x, is every term of a sum >= 0), so an assumption SymPy states falsely can
pass a false step.  Each correction here states the fact itself, and its test holds it
against values computed independently (tests/test_sympyfixes.py).
"""

from __future__ import annotations

import sympy as sp
from sympy.core import exprtools


def binomial_is_nonnegative(self: sp.binomial) -> bool | None:
    """binomial(n, k) >= 0 for integers n >= 0, k < 0 (it is 0) or k even; < 0 for n < 0 and
    odd k > 0, where it is (-1)^k C(k - n - 1, k); unknown otherwise.  SymPy 1.14 says "< 0"
    for every odd k once n's sign is unknown: binomial(d - 5, 3) is -20, 0, 1 and 10 at
    d = 1, 5, 8 and 10, and a sum from -binomial(d - 5, 3) was taken to have terms >= 0
    (review round 51)."""
    n, k = self.args
    if not (n.is_integer and k.is_integer):
        return None
    if n.is_nonnegative or k.is_negative or k.is_even:
        return True
    if n.is_negative and k.is_odd and k.is_positive:
        return False
    return None


def binomial_is_integer(self: sp.binomial) -> bool | None:
    """binomial(n, k) is an integer for integers n and k; otherwise unknown.  SymPy 1.14 says
    "no integer" whenever k is none, and so "not 0": binomial(9/2, d - 1/2) is 0 from d = 6
    on (1/Gamma(6 - d) is 0 there), and (x^2 + x)/x = x + 1 verified for it, though its
    left side has no value at d >= 6 (review round 69)."""
    n, k = self.args
    return True if n.is_integer and k.is_integer else None


def monotonic_sign(expr: sp.Expr):
    """SymPy's ``_monotonic_sign`` (the value of expr nearest 0, or a symbol of its sign),
    with only the sign kept where expr is not a polynomial in two or more symbols.  There
    SymPy puts each symbol's least value into a reciprocal, 1/(d r) at d = r = 1, and takes
    the largest value for the nearest to 0: 1/(d r) - 1/2 was positive to it for all positive
    integers d, r (-1/4 at d = r = 2), and so a bound, a range's direction and sqrt(c^2)
    were decided wrongly (review round 52)."""
    nearest = _SYMPY_MONOTONIC_SIGN(expr)
    if nearest is None or not nearest.is_number or len(expr.free_symbols) < 2 \
            or expr.is_polynomial(*expr.free_symbols):
        return nearest
    for sign in ("positive", "negative", "nonnegative", "nonpositive"):
        if getattr(nearest, f"is_{sign}"):
            return sp.Dummy(sign[:4], **{sign: True})
    return None


def mul_is_integer(self: sp.Mul) -> bool | None:
    """SymPy's answer to whether a product is an integer, except a "no" for a product of
    symbols that SymPy does not show to be irrational: SymPy 1.14 says no whenever every
    numerator is even and every denominator odd and > 1, so 4 (e + 1)!/3 (24 = 3 8 at e = 2)
    was no integer to it, and the sum of Kronecker deltas delta(3 t, 4 (e + 1)!) over t
    summed to 0 (review round 53).  And except a "yes" for a product with a denominator that
    is no power of 2: SymPy 1.14 weighs only the twos of a single even denominator, so 2^d/6
    was an integer to it, floor(2^(d - 1)(d - 1)(d - 2)(d - 3)/5) was built without its floor,
    and the false claim that it is that number verified (review round 71)."""
    integer = _SYMPY_MUL_IS_INTEGER(self)
    if integer is False and self.free_symbols and self._eval_is_rational() is not False:
        return None
    if integer is True and self.free_symbols and any(
            _odd_part(a.q) > 1 for a in self.args if a.is_Rational and not a.is_Integer):
        return None  # SymPy counted only the twos of the denominator
    return integer


def _odd_part(n: int) -> int:
    """n with its factors 2 divided out."""
    return n >> ((n & -n).bit_length() - 1)


def pow_is_imaginary(self: sp.Pow) -> bool | None:
    """SymPy's answer to whether a power is imaginary, except a "yes" for a real base to an
    exponent not known to be no integer: SymPy 1.14 takes any rational exponent it cannot show
    whole for a half-integer, so (-1)^(d(d + 1)/2), which is 1 or -1, was imaginary to it, and
    KroneckerDelta((-1)^(d(d + 1)/2), 1) was built as 0 (it is 1 at d = 3; review round 55)."""
    imaginary = _SYMPY_POW_IS_IMAGINARY(self)
    if imaginary and self.base.is_extended_real and self.exp.is_integer is not False:
        return None
    return imaginary


def _install(cls: type, fact: str, handler) -> None:
    """``handler`` as cls's rule for ``fact``: SymPy collects the rules when it creates the
    class, so the method alone would not be asked."""
    setattr(cls, f"_eval_is_{fact}", handler)
    handlers = getattr(cls, "_prop_handler", None)
    if handlers is not None:
        handlers[fact] = handler


_install(sp.binomial, "nonnegative", binomial_is_nonnegative)
_install(sp.binomial, "integer", binomial_is_integer)
_SYMPY_MONOTONIC_SIGN = exprtools._monotonic_sign
exprtools._monotonic_sign = monotonic_sign  # SymPy's Add looks it up there at each use
_SYMPY_MUL_IS_INTEGER = sp.Mul._eval_is_integer
_install(sp.Mul, "integer", mul_is_integer)
_SYMPY_POW_IS_IMAGINARY = sp.Pow._eval_is_imaginary
_install(sp.Pow, "imaginary", pow_is_imaginary)
