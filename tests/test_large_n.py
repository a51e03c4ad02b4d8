"""The large-n closed forms through E[e^{sX}]: exponential moments in the exact engine, converged
quadrature in the numeric check, and wrong steps rejected where they are made."""

from dataclasses import replace
from pathlib import Path

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Abs, Sum, exp, sqrt

from sdpa_proofs import E, VerifySettings, get_model, i, n, s, verify_derivation, z
from sdpa_proofs.isolation import load_file
from sdpa_proofs.moments import ExactEvaluator
from sdpa_proofs.numeric import NumericSettings, numeric_check

SOFTMAX = Path(__file__).resolve().parent.parent / "derivations" / "softmax"
LOGITS = get_model("gaussian-logits")


def test_exponential_moments_against_closed_forms_derived_by_hand():
    """E[(sum_i e^{z_i})^2]: n terms e^{2z} (mean e^{2s^2}) and n(n-1) products of independent
    e^{z} (mean e^{s^2/2} each)."""
    exact = ExactEvaluator(LOGITS)
    square = exact.value(E(Sum(exp(z[i]), (i, 1, n)) ** 2))
    by_hand = n * exp(2 * s**2) + n * (n - 1) * exp(s**2)
    assert sp.simplify(square - by_hand) == 0


def test_tilted_moment_against_one_dimensional_quadrature():
    """E[z^2 e^{3z + 1}] for z ~ N(0, s^2), against mpmath.quad of the density."""
    exact = ExactEvaluator(LOGITS).value(E(z[1] ** 2 * exp(3 * z[1] + 1)))
    with mpmath.workdps(30):
        sd = mpmath.mpf(3) / 5
        integral = mpmath.quad(lambda x: x**2 * mpmath.exp(3 * x + 1) * mpmath.npdf(x, 0, sd),
                               [-mpmath.inf, mpmath.inf])
        assert abs(sp.N(exact.subs(s, sp.Rational(3, 5)), 30) - integral) < 1e-25


def test_quadrature_that_does_not_converge_is_undecided_not_passed():
    """|z| has a kink: Gauss rules converge like 1/N there, and agreeing rules would prove
    nothing, so even the true value E|z| = s sqrt(2/pi) is left undecided rather than passed
    (and a wrong one cannot be told apart either)."""
    truth = s * sqrt(2 / sp.pi)
    for value in (truth, 2 * truth):
        verdict = numeric_check(E(Abs(z[1])), value, LOGITS, NumericSettings(dimensions=(1,)))
        assert verdict.status == "undecided" and "not smooth" in verdict.reason


def _derivation(name: str):
    (derivation,) = load_file(SOFTMAX / f"{name}.py")
    return derivation


def _with_step(derivation, number: int, expr):
    steps = list(derivation.steps)
    steps[number - 1] = replace(steps[number - 1], expr=expr)
    return replace(derivation, steps=steps)


def _rejected_at(derivation, number: int):
    report = verify_derivation(derivation, VerifySettings(monte_carlo=False)).models[0]
    assert report.first_failing_step == number
    step = report.steps[number - 1]
    assert {step.rule_check.status, step.exact_check.status, step.numeric_check.status} \
        == {"fail"}, (step.rule_check.reason, step.exact_check.reason, step.numeric_check.reason)
    return step


@pytest.mark.parametrize("wrong,why", [
    (n * Sum(exp(s**2), (i, 1, n)) / Sum(exp(s**2 / 2), (i, 1, n)) ** 2, "t^2 forgotten"),
    (n * Sum(exp(2 * s**2), (i, 1, n)) / Sum(exp(s**2), (i, 1, n)) ** 2, "1/2 dropped"),
])
def test_collision_limit_rejects_a_wrong_moment_generating_function(wrong, why):
    _rejected_at(_with_step(_derivation("collision_large_n"), 2, wrong), 2)


def test_collision_limit_rejects_a_wrong_count():
    derivation = _with_step(_derivation("collision_large_n"), 3,
                            n * (n * exp(2 * s**2)) / (n**2 * exp(s**2 / 2)) ** 2)
    _rejected_at(derivation, 3)


def test_entropy_limit_rejects_sigma_for_variance_in_stein():
    normaliser = Sum(E(exp(z[i])), (i, 1, n))
    wrong = sp.log(normaliser) - Sum(s * E(exp(z[i])), (i, 1, n)) / normaliser
    step = _rejected_at(_with_step(_derivation("entropy_large_n"), 2, wrong), 2)
    assert "stein" in step.rule_check.reason


def _moment(f, sd):
    """E[f(X)] for X ~ N(0, sd^2) by tanh-sinh quadrature of the density."""
    return mpmath.quad(lambda x: f(x) * mpmath.npdf(x, 0, sd), [-mpmath.inf, 0, mpmath.inf])


def test_the_closed_forms_hold_at_the_model_points_as_numbers():
    """e^{s^2} and log n - s^2/2 against direct one-dimensional integrals of the Gaussian
    density (E[e^{2z}] / E[e^z]^2 and log E[e^z] - E[z e^z] / E[e^z])."""
    with mpmath.workdps(30):
        for sd in (mpmath.mpf(3) / 5, mpmath.mpf(7) / 4):
            w1, w2 = _moment(mpmath.exp, sd), _moment(lambda x: mpmath.exp(2 * x), sd)
            zw = _moment(lambda x: x * mpmath.exp(x), sd)
            assert abs(w2 / w1**2 - mpmath.exp(sd**2)) < 1e-20
            assert abs(mpmath.log(w1) - zw / w1 + sd**2 / 2) < 1e-20


@settings(max_examples=25, deadline=None)
@given(st.integers(-3, 3), st.integers(0, 3), st.fractions(-2, 2, max_denominator=5))
def test_tilted_moments_against_quadrature(power_shift, power, t):
    """E[z^a e^{t z + b}] from the exact engine (completing the square) against tanh-sinh
    quadrature of the Gaussian density, for random a, t and b."""
    b = sp.Rational(power_shift, 3)
    t = sp.Rational(t.numerator, t.denominator)
    exact = ExactEvaluator(LOGITS).value(E(z[1] ** power * exp(t * z[1] + b)))
    with mpmath.workdps(30):
        sd = mpmath.mpf(3) / 5
        tt, bb = mpmath.mpf(t.p) / t.q, mpmath.mpf(b.p) / b.q
        integral = _moment(lambda x: x**power * mpmath.exp(tt * x + bb), sd)
        value = sp.N(exact.subs(s, sp.Rational(3, 5)), 30)
        assert abs(value - integral) <= 1e-22 * max(1, abs(integral))
