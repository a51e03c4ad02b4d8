"""Proven signs, bounds and doubles of numbers (realnumbers), against values computed
independently: mpmath at 400 digits with log1p, which keeps the digits that SymPy's evalf
loses in log(1 + 10^-70)."""

import mpmath
import pytest
import sympy as sp
from sympy import Integer, Rational, Sum, Symbol, exp, floor, log, pi, sin, sqrt, tanh

from sdpa_proofs.realnumbers import (
    MaybeNotReal,
    NoEnclosure,
    approximation,
    certainly_nonzero,
    certainly_positive,
    nearest_double,
    proven_sign,
    rational_bounds,
)

C70 = Integer(10) ** 70 * log(1 + Integer(10) ** -70)  # 1 - 5 10^-71


def reference(expr) -> mpmath.mpf:
    """The value at 400 digits, log(1 + x) by log1p: no step of it cancels."""
    with mpmath.workdps(400):
        return sp.lambdify([], expr.replace(
            lambda e: isinstance(e, sp.log) and e.args[0].is_Rational and e.args[0] > 1,
            lambda e: sp.Function("log1p")(e.args[0] - 1)), modules="mpmath")()


NUMBERS = [C70, 1 - C70, Rational(1, 2) - C70, sqrt(2) - Rational(141421356, 10**8),
           pi - Rational(355, 113), tanh(20) - 1, sin(Integer(10) ** 30),
           7 * Integer(10) ** 71 * log(10), exp(-Integer(500)), -pi ** 3 + 31]


def test_signs_that_sympy_reads_off_a_lost_evalf():
    """SymPy 1.12-1.14 evaluate log(1 + 10^-70) as 0, and so take 0 <= -C70 and 1/2 - C70 > 0
    for true; both are false."""
    assert proven_sign(-C70) == -1 and proven_sign(Rational(1, 2) - C70) == -1


@pytest.mark.parametrize("number", NUMBERS, ids=str)
def test_bounds_hold_the_value_and_the_sign_is_its_sign(number):
    value = reference(number)
    low, high = rational_bounds(number)
    with mpmath.workdps(400):
        assert mpmath.mpf(low.p) / low.q <= value <= mpmath.mpf(high.p) / high.q
    assert proven_sign(number) == (1 if value > 0 else -1)


@pytest.mark.parametrize("number", [n for n in NUMBERS if n != exp(-Integer(500))], ids=str)
def test_the_nearest_double_is_the_reference_rounded_once(number):
    with mpmath.workdps(400):
        assert nearest_double(number) == float(reference(number))


def test_bounds_are_exact_binary_ends_not_rounded_to_53_bits():
    """Ends converted by mpmath.mpf() were rounded to 53 bits, both to the same double: a
    'bound' of 7 10^71 log 10 that was only its nearest double, not a bound."""
    number = 7 * Integer(10) ** 71 * log(10)
    low, high = rational_bounds(number)
    assert low < high and (high - low) / low < Rational(1, 2**60)


def test_what_no_enclosure_decides_is_unknown_not_guessed():
    zero = log(4) - 2 * log(2)  # 0, not written as 0
    assert proven_sign(zero) is None
    assert proven_sign(Integer(10) ** 1000 * log(1 + Integer(10) ** -1000) - 1) is None
    with pytest.raises(NoEnclosure):
        nearest_double(zero)
    with pytest.raises(MaybeNotReal):
        rational_bounds(log(Rational(1, 2) - C70))  # the logarithm of about -1/2
    with pytest.raises(NoEnclosure):
        nearest_double(Integer(10) ** -400)  # below double precision, and not 0
    with pytest.raises(NoEnclosure):
        rational_bounds(sp.gamma(Rational(1, 3)))  # no interval version here


def test_floor_sums_and_symbols():
    t = Symbol("t", integer=True)
    assert nearest_double(Sum(t ** 2, (t, 1, 4))) == 30.0
    assert proven_sign(Sum(t, (t, 1, 0))) == 0  # the empty sum
    low, high = rational_bounds(floor(Integer(10) ** 20 * pi))
    assert low <= 314159265358979323846 <= high and high - low < 10**4
    x = Symbol("x", positive=True)
    assert certainly_positive(x) and not certainly_positive(Rational(1, 2) - C70)
    assert certainly_nonzero(1 - C70) and not certainly_nonzero(log(4) - 2 * log(2))


@pytest.mark.parametrize("number", NUMBERS, ids=str)
def test_an_approximation_is_within_its_bits(number):
    value = reference(number)
    with mpmath.workdps(400):
        assert abs(approximation(number, 120) - value) <= abs(value) * mpmath.mpf(2) ** -120


def test_floor_and_ceiling_keep_every_bit_of_their_ends():
    """floor(2^60 + 255 + 1/2) is 2^60 + 255, and so is ceiling(2^60 + 255 - 1/2): mpmath's
    floor at 53 bits made both 2^60 + 256 (review round 44).  Unevaluated, as SymPy would
    otherwise work them out itself."""
    integer = Integer(2) ** 60 + 255
    for rounded in (floor(integer + Rational(1, 2), evaluate=False),
                    sp.ceiling(integer - Rational(1, 2), evaluate=False)):
        assert proven_sign(sp.Add(rounded, -integer, evaluate=False)) == 0
        assert rational_bounds(rounded) == (integer, integer)


# ---- values put in: SymPy decides floor, sign, |.|, max, relations of numbers by evalf --------

J = Symbol("j", integer=True, positive=True)
TINY = sin(log(sp.cos(J / Integer(10) ** 50)))  # about -5 10^-101 j^2


def tiny_at(j: int) -> mpmath.mpf:
    with mpmath.workdps(400):
        return mpmath.sin(mpmath.log(mpmath.cos(mpmath.mpf(j) / mpmath.mpf(10) ** 50)))


def test_a_sum_of_numbers_is_enclosed_as_its_terms_are_written():
    """floor(t) at j = 1 and 2 is -1 each (mpmath at 400 digits): the sum is -2, not 0."""
    expected = sum(int(mpmath.floor(tiny_at(j))) for j in (1, 2))
    assert expected == -2
    assert rational_bounds(Sum(floor(TINY), (J, 1, 2))) == (expected, expected)
    assert proven_sign(Sum(sp.sign(TINY), (J, 1, 1))) == int(mpmath.sign(tiny_at(1)))


@pytest.mark.parametrize("build, truth", [
    (floor, mpmath.floor), (sp.ceiling, mpmath.ceil), (sp.sign, mpmath.sign),
    (exp, mpmath.exp), (sp.Abs, abs), (sp.Heaviside, lambda t: (mpmath.sign(t) + 1) / 2),
    (lambda t: sp.Max(t, 0), lambda t: max(t, 0)), (lambda t: sp.Min(t, 0), lambda t: min(t, 0)),
    (lambda t: sp.KroneckerDelta(t, 0), lambda t: int(t == 0)),
    (lambda t: t < 0, lambda t: t < 0), (lambda t: sp.Mod(t, 1), lambda t: t - mpmath.floor(t)),
    (lambda t: sp.Piecewise((1, t < 0), (2, True)), lambda t: 1 if t < 0 else 2),
])
def test_putting_in_a_value_makes_the_true_number_or_is_refused(build, truth):
    """SymPy 1.14 builds floor(t), sign(t), |t|, e^t, max(t, 0), ... at j = 1 by evalf, as
    if t were 0; put_in refuses where SymPy's value is not the proven one (and, its answers
    depending on what it was asked before, may get them right): what comes out is the true
    value (mpmath at 400 digits), or a function SymPy left as it is."""
    from sdpa_proofs.realnumbers import MisjudgedNumber, put_in

    with mpmath.workdps(400):
        expected = truth(tiny_at(1))
        try:
            made = put_in(build(TINY), {J: Integer(1)})
        except MisjudgedNumber:
            return
        if isinstance(made, sp.logic.boolalg.BooleanAtom):
            assert bool(made) == bool(expected)
        elif made.free_symbols or not made.atoms(sp.Function) - made.atoms(sp.sin, sp.log,
                                                                          sp.cos, sp.exp):
            assert abs(approximation(made, 1300) - expected) <= mpmath.mpf(10) ** -390
        else:  # left undecided: Mod(t, 1), Heaviside(t)
            assert made.func == build(TINY).func


@pytest.mark.parametrize("build, at, expected", [
    (lambda j: floor(sqrt(j + 1)), 3, 2),                   # isqrt(4)
    (lambda j: floor(pi * j), 2, 6),                         # 6.28...
    (lambda j: sp.Abs(sqrt(j) - 2), 1, 1),
    (lambda j: sp.sign(log(j)), 3, 1),
    (lambda j: sp.Max(sqrt(j), 1) ** 2, 2, 2),
    (lambda j: sp.KroneckerDelta(j, 2) + sp.Heaviside(pi - j), 4, 0),
    (lambda j: sp.Piecewise((j, sqrt(j) < 2), (-j, True)), 5, -5),
])
def test_values_whose_decisions_are_proven_are_put_in_as_sympy_builds_them(build, at, expected):
    from sdpa_proofs.realnumbers import put_in

    assert put_in(build(J), {J: Integer(at)}) == expected


@pytest.mark.parametrize("build", [
    lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a ** b, lambda a, b: sp.Max(a, b),
    lambda a, b: sp.floor(a - b), lambda a, b: sp.Eq(a, b), lambda a, b: sp.exp(a) * b,
])
def test_values_are_written_in_as_under_sympys_evaluate_false_and_leave_its_cache_clean(build):
    """written_with builds what xreplace builds under sympy.evaluate(False), without emptying
    SymPy's cache; what it built unevaluated is never handed out to evaluating code later."""
    from sdpa_proofs.realnumbers import written_with

    a, b = Symbol("a", positive=True), Symbol("b", positive=True)
    x = Symbol("x", positive=True)
    values = {a: x, b: x}
    with sp.evaluate(False):
        expected = build(a, b).xreplace(values)
    written = written_with(build(a, b), values)
    assert sp.srepr(written) == sp.srepr(expected)
    assert build(x, x) == build(a, b).xreplace(values)  # and evaluated as before


def test_values_written_in_stand_as_written():
    from sdpa_proofs.realnumbers import written_with

    a, b, x = Symbol("a"), Symbol("b"), Symbol("x")
    assert written_with(a + b, {a: x, b: x}).args == (x, x)
    assert written_with(sp.floor(a - b), {a: x, b: x}) != 0
    assert written_with(sp.Eq(a, b), {a: x, b: x}) is not sp.true
    assert x + x == 2 * x and sp.Eq(x, x) is sp.true
    # a function whose constructor takes no evaluate option is built under SymPy's context
    beta = written_with(sp.betainc_regularized(1, 1, 0, a), {a: sp.sqrt(2) / 4})
    assert beta.args == (1, 1, 0, sp.sqrt(2) / 4) and isinstance(beta, sp.betainc_regularized)


@pytest.mark.parametrize("func, pick", [(sp.Max, max), (sp.Min, min)])
def test_a_maximum_of_many_numbers_is_the_largest_and_near_ties_are_decided_by_proof(func,
                                                                                   pick):
    """max and min of log(t + 1) - t/3, t = 0..40 (mpmath at 60 digits picks the winner),
    beside a value 10^-30 from the winner, which no 64-bit enclosure tells apart: the winner
    comes out, however many values a proof sets aside before SymPy compares the rest."""
    from sdpa_proofs.realnumbers import built_as_written

    t = Symbol("t", integer=True, nonnegative=True)
    values = [(log(t + 1) - t / 3).xreplace({t: Integer(v)}) for v in range(41)]
    with mpmath.workdps(60):
        numeric = [mpmath.log(v + 1) - mpmath.mpf(v) / 3 for v in range(41)]
        winner = values[numeric.index(pick(numeric))]
    shift = Integer(10) ** -30 if func is sp.Min else -Integer(10) ** -30
    crowded = values + [winner + shift]
    made = built_as_written(func(*crowded, evaluate=False), kept=crowded)
    assert made == winner


CLOSE_BELOW = Rational(2, 10**40) - Rational(1, 10**80)


@pytest.mark.parametrize("build", [
    lambda d: sp.Max(log(1 + d / Integer(10) ** 40), CLOSE_BELOW),
    lambda d: sp.Min(log(1 + d / Integer(10) ** 40), CLOSE_BELOW),
    lambda d: sp.Min(CLOSE_BELOW, log(1 + d / Integer(10) ** 40), Rational(5, 10**40)),
    lambda d: sp.Max(CLOSE_BELOW, log(1 + d / Integer(10) ** 40),
                     log(1 + (d - 1) / Integer(10) ** 40) + Integer(10) ** -40),
])
def test_a_maximum_that_sympy_orders_wrongly_is_decided_by_proven_signs(build):
    """log(1 + 3 10^-40) against 2 10^-40 - 10^-80: 64-bit enclosures do not set either
    aside, and SymPy's evalf picks the wrong one, which was refused, leaving the step
    undecided (review round 61).  The proven signs at more bits decide it: the value is the
    reference's extreme (log1p at 400 digits), never an argument a proof shows beaten."""
    from sdpa_proofs.realnumbers import put_in

    d = Symbol("d", positive=True, integer=True)
    for at in (2, 3, 4):
        made = put_in(build(d), {d: at})
        pick = max if isinstance(build(d), sp.Max) else min
        arguments = [reference(a.xreplace({d: at})) for a in build(d).args]
        with mpmath.workdps(400):
            assert abs(reference(made) - pick(arguments)) < mpmath.mpf(10) ** -300


def test_a_radical_far_below_its_terms_does_not_decide_a_sign_by_evalf():
    """(sqrt 2 - 1)^200 is about 2.8 10^-77; expanded, its inverse is A - B sqrt 2 with terms
    of 10^76 that cancel, and SymPy's evalf of such a power claims digits it lacks.  With
    sqrt 2 as itself, SymPy took the slope of Z = x/B - M x + 10^-100 x (about 10^-100 > 0)
    for negative and rebuilt |Z - 10^-200| as -(Z - 10^-200): four false identities passed
    algebra (review round 74).  Every irrational number is an unknown of its sign."""
    from math import isqrt

    from sdpa_proofs.algebra import algebraically_equal

    power = sp.expand((sqrt(2) - 1) ** 20) ** 10
    a, b = sp.expand((sqrt(2) + 1) ** 200).as_coeff_add()
    b0 = int(b[0] / sqrt(2))
    m = Rational(int(a) * 10**100 + isqrt(2 * b0**2 * 10**200), 10**100)
    x = Symbol("x", positive=True)
    z = x / power - m * x + Rational(1, 10**100) * x  # 10^-100 x, about
    tiny = Rational(1, 10**200)
    for lhs, rhs in [(sp.Max(2, z + 1), 2), (sp.sign(z - tiny), -1),
                     (sp.Heaviside(z - tiny), 0), (1 + sp.Abs(z - tiny), 1 - z + tiny)]:
        assert algebraically_equal(lhs, rhs) is not True, lhs


@pytest.mark.parametrize("number, roots", [
    (sqrt(3), {sqrt(3)}), (1 + sqrt(2), {sqrt(2)}), (Integer(2) ** Rational(2, 3) / 5,
                                                   {Integer(2) ** Rational(1, 3)}),
    (sqrt(3) * Symbol("a"), {sqrt(3)}), (log(2), set()), (pi, set()),
    (sqrt(1 + sqrt(2)), set()), (exp(sqrt(2)), set()), ((1 + sqrt(2)) ** 25, set()),
])
def test_a_radical_of_rationals_is_written_in_roots_that_know_their_powers(number, roots):
    """sqrt 3 becomes a root w with w^2 = 3 and nothing else; any other number an unknown of
    its sign (log 2, pi, a nested root, e^sqrt 2, a power too high to write out)."""
    from sdpa_proofs.realnumbers import Root, numbers_as_unknowns

    plain, back = numbers_as_unknowns(number)
    found = {value for unknown, value in back.items() if isinstance(unknown, Root)}
    assert found == roots
    assert all(isinstance(u, Root) for u in back) is bool(roots)
    if roots:
        assert sp.expand(plain.xreplace(back) - number) == 0
        (w, value), = ((u, v) for u, v in back.items() if isinstance(u, Root))
        assert w ** w.degree == value ** w.degree  # w^q is r, as it is built


def test_a_root_knows_its_powers_and_no_value():
    """(a/sqrt 3)^2 (b/sqrt 3)^2 is a^2 b^2/9 by algebra on the root (not a^2 b^2/3), and the
    root has no value for SymPy to decide a sign by: sqrt 3 - 1.7320508 stays undecided."""
    from sdpa_proofs.algebra import algebraically_equal
    from sdpa_proofs.realnumbers import Root

    a, b = Symbol("a", positive=True), Symbol("b", positive=True)
    assert algebraically_equal((a / sqrt(3)) ** 2 * (b / sqrt(3)) ** 2, a**2 * b**2 / 9)
    assert algebraically_equal((a / sqrt(3)) ** 2 * (b / sqrt(3)) ** 2, a**2 * b**2 / 3) is False
    w = Root(Integer(3), 2, "sqrt(3)")
    assert w**5 == 9 * w and 1 / w == w / 3 and (w - Rational(17320508, 10**7)).is_positive is None


def test_roots_of_one_prime_are_one_root_and_a_hidden_zero_comes_out_zero():
    """2^(1/4) and sqrt 2 were two unrelated roots, so (1 + r)(1 - r) + sqrt 2 - 1 (exactly 0
    for r = 2^(1/4)) was an unknown nonzero number, and x (a^2 (1 + D)^2 - a^2)/(a^2 (1 + D')^2
    - a^2), 0/0, passed as x (review round 77).  Each prime is one root now, at the least
    common multiple of its degrees, and sqrt 6 is sqrt 2 sqrt 3."""
    from sdpa_proofs.algebra import algebraically_equal
    from sdpa_proofs.realnumbers import numbers_as_unknowns

    r = sp.root(2, 4)
    hidden_zeros = [(1 + r) * (1 - r) + sqrt(2) - 1, (2 + r) * (2 - r) + sqrt(2) - 4,
                    (sqrt(2) + sqrt(3)) ** 2 - 5 - 2 * sqrt(6)]
    for zero in hidden_zeros:
        assert sp.expand(numbers_as_unknowns(zero)[0]) == 0
    x, a = Symbol("x", real=True), Symbol("a", positive=True)
    first, second = hidden_zeros[:2]
    ratio = x * (a**2 * (1 + first) ** 2 - a**2) / (a**2 * (1 + second) ** 2 - a**2)
    assert algebraically_equal(ratio, x) is not True


def test_a_prime_under_roots_of_too_many_degrees_stays_one_unknown():
    """2^(1/23) + 2^(1/19) + 2^(1/17) + 2^(1/13) would be written in 2^(1/96577): squaring
    it, SymPy's simplify factored polynomials of that degree for minutes (review round 78).
    Such a radical stays one unknown of its sign, and 2^(1/8) 2^(1/3) is still 2^(11/24)."""
    from sdpa_proofs.algebra import algebraically_equal
    from sdpa_proofs.realnumbers import Root, numbers_as_unknowns

    spread = sum(sp.root(2, k) for k in (23, 19, 17, 13))
    plain, back = numbers_as_unknowns(spread)
    assert len(back) == 1 and not any(isinstance(u, Root) for u in back)
    x = Symbol("x", real=True)
    assert algebraically_equal(spread**2 * x, x) is not True
    assert algebraically_equal(sp.root(2, 8) * sp.root(2, 3) * x, sp.root(2, 24) ** 11 * x)
