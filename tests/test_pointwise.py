"""Expressions in the coordinates evaluated at the working precision (mpmath, node by node),
against SymPy's adaptive evalf; and the numeric check still seeing through what rounding at
that precision hides."""

import mpmath
import sympy as sp
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from sympy.printing.pycode import MpmathPrinter

from sdpa_proofs import z
from sdpa_proofs.errors import UnsupportedExpression
from sdpa_proofs.models import MODELS
from sdpa_proofs.numeric import (
    NOISE_DIGITS,
    NumericSettings,
    numeric_check,
    pointwise_size,
    pointwise_value,
)
from sdpa_proofs.verdicts import FAIL, PASS, UNDECIDED

LOGITS = MODELS["gaussian-logits"]
BIG = sp.Integer(10) ** 30


def check(lhs, rhs, relation="="):
    return numeric_check(lhs, rhs, LOGITS, NumericSettings(), frozenset(), relation).status


LEAVES = st.sampled_from([z[1], z[2], sp.Rational(3, 7), sp.Integer(10) ** 12,
                          sp.Rational(-1, 10**9), sp.pi])


def _built(function, *args):
    """function(*args), or no example where SymPy cannot build it: its perfect-power test of
    sqrt(1 + u^2) raised ValueError in factorint for 1 + u^2 = 25 10^70 + 1."""
    try:
        return function(*args)
    except ValueError:
        reject()


def _combined(parts):
    return st.one_of(
        st.tuples(parts, parts).map(lambda p: p[0] + p[1]),
        st.tuples(parts, parts).map(lambda p: p[0] - p[1]),
        st.tuples(parts, parts).map(lambda p: p[0] * p[1]),
        st.tuples(parts, st.integers(2, 5)).map(lambda p: p[0] ** p[1]),
        # built as written: exp's own simplification (logcombine) can stall for minutes on
        # powers of 10^12 inside u, before the example reaches the toolkit
        parts.map(lambda u: sp.exp(u / (1 + u**2), evaluate=False)),
        parts.map(lambda u: sp.log(1 + u**2)),
        parts.map(sp.tanh), parts.map(sp.sin), parts.map(lambda u: _built(sp.sqrt, 1 + u**2)))


EXPRESSIONS = st.recursive(LEAVES, _combined, max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(EXPRESSIONS, st.floats(-3, 3), st.floats(-3, 3))
def test_a_value_is_within_its_terms_size_of_the_value_at_many_more_digits(expr, a, b):
    """The reference: SymPy's printer and mpmath at 200 digits (not SymPy's evalf, which makes
    tanh(sin(log(1 + 10^-18))) 0; nor lambdify, whose rebuilding of the expression can stall
    SymPy's assumptions for minutes, as on tanh((z_1 - pi) exp(10^12/(10^24 + 1)))^2)."""
    reference = MpmathPrinter().doprint(expr)
    with mpmath.workdps(45):
        values = {z[1]: mpmath.mpf(a), z[2]: mpmath.mpf(b)}
        try:
            value, size = pointwise_value(expr, values), pointwise_size(expr, values)
        except UnsupportedExpression:  # sin(sqrt(1 + 10^144)): refused, which is no wrong value
            reject()
    with mpmath.workdps(200):
        coordinates = {1: mpmath.mpf(a), 2: mpmath.mpf(b)}
        error = abs(value - eval(reference, {"mpmath": mpmath, "z": coordinates}))
        assert error <= max(size, abs(value)) * mpmath.mpf(10) ** (NOISE_DIGITS - 45)


def test_terms_that_cancel_far_beyond_the_working_precision_are_seen_through():
    cancelled = (z[1] + BIG) ** 2 - BIG**2 - 2 * BIG * z[1]  # z_1^2, from terms of 10^60
    assert check(cancelled, z[1] ** 2) == PASS
    assert check(cancelled, z[1] ** 2 * (1 + sp.Rational(1, 10**5))) == FAIL
    assert check(cancelled - z[1] ** 2, sp.Rational(1, 10**40)) == FAIL
    assert check(cancelled - z[1] ** 2, 0) == PASS


def test_derivatives_are_evaluated_and_wrong_ones_rejected():
    u = z[1]
    assert check(sp.Derivative(u * sp.exp(u), u), (1 + u) * sp.exp(u)) == PASS
    assert check(sp.Derivative(u * sp.exp(u), u), u * sp.exp(u)) == FAIL
    assert check(sp.Derivative(u**3, (u, 2)), 6 * u) == PASS
    assert check(sp.Derivative(u**3, (u, 2)), 3 * u**2) == FAIL


def test_a_side_that_is_no_real_number_leaves_the_check_undecided():
    assert check(sp.log(z[1] ** 2 - 100), sp.log(z[1] ** 2 - 100)) == UNDECIDED


def test_a_corner_where_a_side_has_no_value_is_named_as_written():
    """log(max z) = max log z under logits uniform on [0, 1]: the exact check's corner z = 0
    has log 0 on both sides, and its reason named SymPy's complaint about zoo and the sides
    with their bound indices renamed (review round 80)."""
    from sdpa_proofs import MaxOver, get_model, l, n
    from sdpa_proofs.exactcheck import exact_check

    before, after = sp.log(MaxOver(z[l], (l, 1, n))), MaxOver(sp.log(z[l]), (l, 1, n))
    verdict = exact_check(before, after, get_model("uniform-logits"))
    assert verdict.status == "undecided"
    assert "at z_1 = 0" in verdict.reason and "no real value there" in verdict.reason
    assert "max_{l=1..n} log(z_l)" in verdict.reason, verdict.reason
