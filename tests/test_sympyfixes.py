"""SymPy's assumptions that the toolkit corrects (sympyfixes), held against values computed
independently: the binomial coefficient by its product formula in exact integer arithmetic."""

import itertools
from fractions import Fraction
from math import factorial

import pytest
import sympy as sp

from sdpa_proofs import sympyfixes  # noqa: F401 - installs the corrections

d = sp.Symbol("d", integer=True, positive=True)
n = sp.Symbol("n", integer=True)


def binomial(top: int, k: int) -> Fraction:
    """C(top, k) = top (top - 1) ... (top - k + 1) / k! for integers, 0 for k < 0."""
    if k < 0:
        return Fraction(0)
    product = 1
    for j in range(k):
        product *= top - j
    return Fraction(product, factorial(k))


SIGNS = {"positive": lambda v: v > 0, "negative": lambda v: v < 0, "zero": lambda v: v == 0,
         "nonnegative": lambda v: v >= 0, "nonpositive": lambda v: v <= 0,
         "nonzero": lambda v: v != 0}


@pytest.mark.parametrize("top, symbol, values", [
    (d - 5, d, range(1, 40)), (5 - d, d, range(1, 40)), (-d, d, range(1, 40)),
    (d, d, range(1, 40)), (n, n, range(-20, 21)), (n + 2, n, range(-20, 21)),
])
@pytest.mark.parametrize("k", [-2, -1, 0, 1, 2, 3, 4, 5])
def test_what_sympy_says_of_a_binomial_coefficients_sign_holds_at_every_value(top, symbol,
                                                                            values, k):
    """SymPy 1.14 held binomial(d - 5, 3) negative for every d; it is 0 at d = 5..7 and
    positive from d = 8 on."""
    expr = sp.binomial(top, k)
    said = {fact: getattr(expr, f"is_{fact}") for fact in SIGNS}
    for value in values:
        exact = binomial(int(top.subs(symbol, value)), k)
        for fact, claim in said.items():
            assert claim is None or claim == SIGNS[fact](exact), (expr, fact, value, exact)


r = sp.Symbol("r", integer=True, positive=True)
m = sp.Symbol("m", integer=True, nonnegative=True)


@pytest.mark.parametrize("expr", [
    1 / (d * r) - sp.Rational(1, 2), sp.Rational(1, 2) - 1 / (d * r), 10 / (d * r) - 3,
    1 / (d**2 * r**2) - sp.Rational(1, 3), 1 / (d * r) + sp.Rational(1, 2),
    -1 / (d * r) - sp.Rational(1, 7), 10 / (m + d + 2) - 1, 3 / (d * r * (m + 1)) - 1,
    sp.floor(1 / (d * r) - sp.Rational(1, 100)), d * r - 1, d * r - m - 2,
])
def test_what_sympy_says_of_the_sign_of_a_reciprocal_in_several_symbols_holds(expr):
    """SymPy 1.14 took 1/(d r) at d = r = 1, its largest value, for the one nearest 0, and
    held 1/(d r) - 1/2 positive (it is -1/4 at d = r = 2).  The reference: exact fractions
    at every point of a grid of the symbols' values."""
    said = {fact: getattr(expr, f"is_{fact}") for fact in SIGNS}
    symbols = sorted(expr.free_symbols, key=str)
    grid = {d: range(1, 13), r: range(1, 13), m: range(0, 12)}
    for point in itertools.product(*(grid[s] for s in symbols)):
        exact = Fraction(str(expr.subs(dict(zip(symbols, point)))))
        for fact, claim in said.items():
            assert claim is None or claim == SIGNS[fact](exact), (expr, fact, point, exact)



e = sp.Symbol("e", integer=True, positive=True)


@pytest.mark.parametrize("expr", [
    4 * sp.factorial(e + 1) / 3, 2 * e / 3, e * (e + 1) / 3, 2 * e / 5, (2 * e + 1) / 2,
    e * (e + 1) / 2, 6 * e / 4, 2 * sp.factorial(e) / 9,
    2**e / 6, 2**(e - 1) * (e - 1) * (e - 2) * (e - 3) / 5, 2**(e + 1) / 12, 2**e / 4,
])
def test_what_sympy_says_of_whether_a_product_is_an_integer_holds_at_every_value(expr):
    """SymPy 1.14 held 4 (e + 1)!/3 no integer (even numerators, odd denominator): it is 8 at
    e = 2.  The reference: exact fractions."""
    said = expr.is_integer
    for value in range(1, 13):
        exact = Fraction(str(expr.subs(e, value)))
        assert said is None or said == (exact.denominator == 1), (expr, value, exact)


@pytest.mark.parametrize("base, exponent", [
    (-1, d * (d + 1) / 2), (-2, d * (d + 1) / 2), (-1, d * (d - 1) / 2), (-3, d**2 / 2 + d / 2),
])
def test_what_sympy_says_of_a_power_of_a_negative_number_holds_at_every_value(base, exponent):
    """SymPy 1.14 held (-1)^(d (d + 1)/2) imaginary, not real and no integer (it cannot show
    the exponent whole, and took it for a half-integer); it is 1 or -1.  The reference: exact
    integer powers."""
    power = sp.Integer(base) ** exponent
    said = {"real": power.is_real, "imaginary": power.is_imaginary, "integer": power.is_integer}
    for value in range(1, 13):
        whole = Fraction(str(exponent.subs(d, value)))
        assert whole.denominator == 1
        for fact, claim in said.items():
            truth = {"real": True, "imaginary": False, "integer": whole >= 0}[fact]
            assert claim is None or claim == truth, (power, fact, value)


@pytest.mark.parametrize("top, k", [
    (sp.Rational(9, 2), d - sp.Rational(1, 2)), (sp.Rational(7, 2), d + sp.Rational(1, 2)),
    (-sp.Rational(1, 2), d - sp.Rational(1, 2)), (sp.Rational(9, 2), d / 2),
])
def test_what_sympy_says_of_a_binomial_with_a_fraction_holds_at_every_value(top, k):
    """SymPy 1.14 held binomial(9/2, d - 1/2) no integer and so not 0; it is 0 from d = 6 on.
    The reference: mpmath's Gamma ratio, 1/Gamma being 0 at the poles."""
    import mpmath

    coefficient = sp.binomial(top, k)
    said = {"integer": coefficient.is_integer, "zero": coefficient.is_zero}
    for value in range(1, 13):
        with mpmath.workdps(30):
            exact = mpmath.binomial(mpmath.mpf(sp.Rational(top)), mpmath.mpf(k.subs(d, value)))
        truth = {"integer": mpmath.isint(exact), "zero": exact == 0}
        for fact, claim in said.items():
            assert claim is None or claim == truth[fact], (coefficient, fact, value, exact)
