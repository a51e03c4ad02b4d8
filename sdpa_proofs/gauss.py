"""Gauss rules of the classical weights (Hermite, Legendre, Laguerre) at any precision.

The nodes of an n-point Gauss rule are the roots of the n-th orthogonal polynomial p_n of the
weight.  Double-precision roots (NumPy) are polished by Newton's method on the three-term
recurrence, which doubles the correct digits each step: a few O(n^2) passes, where mpmath's
Golub-Welsch eigenvalue route costs a second for 128 points.  The weights are the Christoffel
numbers h_(n-1) / (p_(n-1)(x) p_n'(x)).  Whatever computed it, a rule is used only once it has been
seen to integrate every monomial of degree below 2n to the weight's exact moment, which is
what makes it the Gauss rule; a rule that fails this comes from mpmath instead.
"""

from __future__ import annotations

from math import factorial

import mpmath
import numpy as np

GUARD_DIGITS = 10  # digits carried beyond those asked for, while the rule is computed


def _recurrence(kind: str, n: int) -> tuple:
    """alpha_n, beta_n of the monic polynomials, p_(n+1) = (x - alpha_n) p_n - beta_n p_(n-1),
    beta_0 being the weight's total mass."""
    if kind == "hermite":  # e^(-x^2) on the line
        return mpmath.mpf(0), (mpmath.sqrt(mpmath.pi) if n == 0 else mpmath.mpf(n) / 2)
    if kind == "legendre":  # 1 on [-1, 1]
        return mpmath.mpf(0), (mpmath.mpf(2) if n == 0 else mpmath.mpf(n * n) / (4 * n * n - 1))
    if kind == "laguerre":  # e^(-x) on [0, oo)
        return mpmath.mpf(2 * n + 1), mpmath.mpf(n * n if n else 1)
    raise ValueError(f"no recurrence for {kind!r}")


def moment(kind: str, m: int) -> mpmath.mpf:
    """The weight's exact moment: integral of x^m against it."""
    if kind == "laguerre":
        return mpmath.mpf(factorial(m))
    if m % 2:
        return mpmath.mpf(0)
    if kind == "hermite":
        return mpmath.gamma(mpmath.mpf(m + 1) / 2)
    return mpmath.mpf(2) / (m + 1)


def _start(kind: str, n: int) -> list[float]:
    guesses = {"hermite": np.polynomial.hermite.hermgauss,
               "legendre": np.polynomial.legendre.leggauss,
               "laguerre": np.polynomial.laguerre.laggauss}[kind](n)[0]
    return [float(x) for x in guesses]


def _values(x, coefficients: list) -> tuple:
    """p_n(x), p_n'(x) and p_(n-1)(x), by the recurrence."""
    before, now, slope_before, slope = mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(0), mpmath.mpf(0)
    for alpha, beta in coefficients:
        shifted = x - alpha
        before, now, slope_before, slope = (now, shifted * now - beta * before, slope,
                                            now + shifted * slope - beta * slope_before)
    return now, slope, before


def _polished(x, coefficients: list, tolerance) -> tuple:
    """A root of p_n by Newton's method from x, until a step is within sqrt(tolerance): the
    error then being about the step squared, one more step is the last.  With the root, its
    Christoffel number h_(n-1) / (p_(n-1)(x) p_n'(x)), h_(n-1) = beta_0 ... beta_(n-1)."""
    x = mpmath.mpf(x)
    for _ in range(60):
        value, slope, _ = _values(x, coefficients)
        step = value / slope
        x -= step
        if abs(step) ** 2 <= tolerance * max(abs(x), 1) ** 2:
            value, slope, previous = _values(x, coefficients)
            x -= value / slope
            return x, mpmath.fprod(beta for _, beta in coefficients) / (previous * slope)
    raise ArithmeticError("Newton's method did not settle")


def newton_rule(kind: str, points: int, dps: int) -> tuple[tuple, tuple]:
    """Nodes and weights of the ``points``-point Gauss rule of the weight ``kind``, computed
    with GUARD_DIGITS beyond ``dps`` digits and rounded to them."""
    with mpmath.workdps(dps + GUARD_DIGITS):
        coefficients = [_recurrence(kind, n) for n in range(points)]
        tolerance = mpmath.mpf(10) ** -(dps + GUARD_DIGITS - 3)
        guesses = _start(kind, points)
        if kind == "laguerre":
            pairs = [_polished(x, coefficients, tolerance) for x in guesses]
        else:  # an even weight: the nodes come in pairs +-x, with equal weights
            half = [_polished(x, coefficients, tolerance) for x in guesses[points // 2:]]
            pairs = [(-x, w) for x, w in reversed(half[points % 2:])] + half
        nodes, weights = zip(*pairs)
    with mpmath.workdps(dps):
        return tuple(+x for x in nodes), tuple(+w for w in weights)


def is_gauss_rule(kind: str, nodes: tuple, weights: tuple, dps: int) -> bool:
    """Whether the rule integrates x^m exactly for every m < 2n (to 10^-(dps - 3) of the terms
    it adds): the property that defines the n-point Gauss rule, and only it."""
    n = len(nodes)
    if n != len(set(nodes)) or any(w <= 0 for w in weights):
        return False
    with mpmath.workdps(dps + GUARD_DIGITS):
        tolerance = mpmath.mpf(10) ** -(dps - 3)
        powers = [mpmath.mpf(w) for w in weights]
        for m in range(2 * n):
            total, size = mpmath.fsum(powers), mpmath.fsum(abs(p) for p in powers)
            if abs(total - moment(kind, m)) > tolerance * size:
                return False
            powers = [p * x for p, x in zip(powers, nodes)]
    return True


def gauss_rule(kind: str, points: int, dps: int) -> tuple[tuple, tuple]:
    """The Gauss rule by Newton's method, checked; mpmath's eigenvalue route when the check
    fails."""
    try:
        nodes, weights = newton_rule(kind, points, dps)
        if is_gauss_rule(kind, nodes, weights, dps):
            return nodes, weights
    except (ArithmeticError, ZeroDivisionError):
        pass
    with mpmath.workdps(dps):
        nodes, weights = mpmath.mp.gauss_quadrature(points, kind)
    return tuple(nodes), tuple(weights)
