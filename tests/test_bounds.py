"""Inequality steps: every wrong bound is rejected at the step it is made, by each check that can
see it; the interval oracle and the bound moves are checked against numerical evaluation."""

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Derivative, Eq, Ge, Le, Lt, Sum, Symbol

from sdpa_proofs import (
    Derivation,
    MaxOver,
    Step,
    VerifySettings,
    get_model,
    i,
    j,
    l,
    n,
    p_max,
    softmax_p,
    verify_derivation,
    z,
)
from sdpa_proofs.bounds import AtMostMax, SumAtLeastMax, WithinRange, moves
from sdpa_proofs.concrete import concretise
from sdpa_proofs.intervals import Ranges, enclosure
from sdpa_proofs.numeric import NumericSettings
from sdpa_proofs.registry import resolve
from sdpa_proofs.relations import compose, implies
from sdpa_proofs.rulecheck import rule_check
from sdpa_proofs.rules import Context

P = Symbol("p_max")
TRACE = Sum(Derivative(softmax_p(i), z[i]), (i, 1, n))
LOGITS = get_model("gaussian-logits")
OPENING = [Step(Sum(softmax_p(i) * (1 - softmax_p(i)), (i, 1, n)), ["differentiate", "sift"]),
           Step(1 - Sum(softmax_p(i) ** 2, (i, 1, n)), "algebra", "sum_i p_i = 1")]
UPPER_TAIL = [Step(1 - MaxOver(softmax_p(i) ** 2, (i, 1, n)), "sum_at_least_max", rel="<="),
              Step(1 - P ** 2, "max_monotone"), Step((1 - P) * (1 + P), "algebra")]


def check(claim, steps):
    derivation = Derivation(claim=claim, steps=OPENING + steps, where={P: p_max},
                            models=["gaussian-logits"], name="wrong")
    return verify_derivation(derivation, VerifySettings(monte_carlo=False)).models[0]


def test_the_bundled_bounds_verify():
    report = check(Le(TRACE, 2 * (1 - P)),
                   UPPER_TAIL + [Step(2 * (1 - P), "range", rel="<=")])
    assert report.status == "verified", [s.rule_check.reason for s in report.steps]
    report = check(Ge(TRACE, 1 - P),
                   [Step(1 - P * Sum(softmax_p(i), (i, 1, n)), "at_most_max", rel=">="),
                    Step(1 - P, "algebra")])
    assert report.status == "verified"


def assert_rejected_at(report, step: int, *, rule: str = "fail", exact: str = "fail",
                       numeric: str = "fail"):
    assert report.status == "failed"
    assert report.first_failing_step == step
    checked = report.steps[step - 1]
    assert (checked.rule_check.status, checked.exact_check.status,
            checked.numeric_check.status) == (rule, exact, numeric), \
        [checked.rule_check.reason, checked.exact_check.reason, checked.numeric_check.reason]
    return checked


def test_a_bound_that_is_too_strong_is_refuted_with_a_counterexample():
    """tr J <= 1 - max p is false (p = (0.6, 0.2, 0.2): tr J = 0.56 > 0.4)."""
    step = assert_rejected_at(check(Le(TRACE, 1 - P), [Step(1 - P, "sum_at_least_max",
                                                            rel="<=")]), 3)
    assert "no use of sum_at_least_max" in step.rule_check.reason
    assert "is false" in step.numeric_check.reason
    assert step.exact_check.counterexample["exact"] is True


def test_a_dropped_power_is_refuted():
    """sum p_i^2 >= max p_i^2, not max p_i: the square is dropped."""
    assert_rejected_at(check(Le(TRACE, 1 - P), [
        Step(1 - MaxOver(softmax_p(i), (i, 1, n)), "sum_at_least_max", rel="<=")]), 3)


def test_a_bound_used_the_wrong_way_is_named():
    """p_i <= max p makes 1 - sum p_i^2 larger than 1 - max p sum p_i, not smaller."""
    step = assert_rejected_at(check(Le(TRACE, 1 - P), [
        Step(1 - P * Sum(softmax_p(i), (i, 1, n)), "at_most_max", rel="<="),
        Step(1 - P, "algebra")]), 3)
    assert "the bound goes the other way" in step.rule_check.reason


def test_a_range_bound_in_the_wrong_place_is_refuted():
    """(1 - P)(1 + P) <= 1 - P would need 1 + P <= 1."""
    step = assert_rejected_at(check(Le(TRACE, 1 - P), UPPER_TAIL + [
        Step(1 - P, "range", rel="<=")]), 6)
    assert "goes the other way" in step.rule_check.reason


def test_a_true_bound_with_the_wrong_rule_fails_only_its_rule_check():
    step = assert_rejected_at(check(Le(TRACE, 2 * (1 - P)), UPPER_TAIL + [
        Step(2 * (1 - P), "at_most_max", rel="<=")]), 6, exact="pass", numeric="pass")
    assert "at_most_max" in step.rule_check.reason


def test_steps_that_go_both_ways_prove_nothing():
    report = check(Le(TRACE, 1 - P), [
        Step(1 - P * Sum(softmax_p(i), (i, 1, n)), "at_most_max", rel=">="),
        Step(1 - P, "algebra", rel="<=")])
    assert report.status == "failed" and report.conclusion.status == "fail"
    assert "both ways" in report.conclusion.reason


def test_an_inequality_chain_does_not_prove_an_equation():
    report = check(Eq(TRACE, 1 - P), [
        Step(1 - P * Sum(softmax_p(i), (i, 1, n)), "at_most_max", rel=">="),
        Step(1 - P, "algebra")])
    assert report.conclusion.status == "fail"
    assert "does not give the claimed lhs = rhs" in report.conclusion.reason


def test_a_strict_step_is_not_proved_by_non_strict_facts():
    report = check(Lt(TRACE, 2 * (1 - P)), [
        Step(1 - MaxOver(softmax_p(i) ** 2, (i, 1, n)), "sum_at_least_max", rel="<"),
        *UPPER_TAIL[1:], Step(2 * (1 - P), "range", rel="<=")])
    step = report.steps[2]
    assert report.status == "failed" and step.rule_check.status == "fail"
    assert "strict" in step.rule_check.reason
    # at n = 1 both sides are 0: the numeric check finds the strict inequality false
    assert step.numeric_check.status == "fail"


def test_the_sign_of_the_difference_justifies_algebra_steps():
    context_steps = UPPER_TAIL
    good = check(Le(TRACE, 2 * (1 - P)), context_steps + [Step(2 * (1 - P), "algebra",
                                                                "(1 - P)^2 >= 0", rel="<=")])
    assert good.status == "verified"
    bad = check(Le(TRACE, 1 - P), context_steps + [Step(1 - P, "algebra", rel="<=")])
    assert bad.first_failing_step == 6
    assert "does not show" in bad.steps[5].rule_check.reason


def test_at_most_max_needs_the_index_inside_the_range():
    """p_n <= max_{l < n} p_l is false: the max must range over the index used."""
    shorter = MaxOver(softmax_p(l), (l, 1, n - 1))
    context = Context(LOGITS)
    assert not rule_check(softmax_p(i), shorter, [AtMostMax()], LOGITS, relation="<=").passed
    assert rule_check(softmax_p(i), p_max, [AtMostMax()], LOGITS, relation="<=").passed
    assert context.violations == []


def test_max_monotone_refuses_decreasing_and_sign_changing_functions():
    spread = MaxOver(z[l], (l, 1, n))  # logits can be negative: (max z)^2 != max z^2
    rule = resolve("max_monotone")
    assert not rule_check(spread ** 2, MaxOver(z[l] ** 2, (l, 1, n)), rule, LOGITS).passed
    assert not rule_check(-2 * p_max, MaxOver(-2 * softmax_p(l), (l, 1, n)), rule,
                          LOGITS).passed
    assert rule_check(2 * p_max, MaxOver(2 * softmax_p(l), (l, 1, n)), rule, LOGITS).passed


def test_max_monotone_takes_exp_and_the_logarithm_of_positive_values():
    """e^x grows everywhere, log x on x > 0: each commutes with a maximum; e^(-x) does not,
    nor the logarithm of logits that may be negative."""
    spread = MaxOver(z[l], (l, 1, n))
    rule = resolve("max_monotone")
    assert rule_check(sp.exp(spread), MaxOver(sp.exp(z[l]), (l, 1, n)), rule, LOGITS).passed
    assert rule_check(sp.log(MaxOver(sp.exp(z[l]), (l, 1, n))), spread, rule, LOGITS).passed
    assert not rule_check(sp.exp(-spread), MaxOver(sp.exp(-z[l]), (l, 1, n)), rule,
                          LOGITS).passed
    assert not rule_check(sp.log(spread), MaxOver(sp.log(z[l]), (l, 1, n)), rule,
                          LOGITS).passed


LOG_SUM_EXP = sp.log(Sum(sp.exp(z[i]), (i, 1, n)))


@pytest.mark.parametrize("relation, verified", [(">=", True), ("<=", False)])
def test_log_sum_exp_is_at_least_the_largest_logit(relation, verified):
    """log sum_i e^(z_i) >= log max_i e^(z_i) = max_i z_i: a bound inside the logarithm, which
    grows with what it is taken of; the other way round the bound is refused where it is
    made, by the rule check (which way it goes), the exact and the numeric check
    (counterexamples)."""
    claim = (Ge if relation == ">=" else Le)(LOG_SUM_EXP, MaxOver(z[i], (i, 1, n)))
    steps = [Step(sp.log(MaxOver(sp.exp(z[i]), (i, 1, n))), "sum_at_least_max", rel=relation),
             Step(sp.log(sp.exp(MaxOver(z[i], (i, 1, n)))), "max_monotone"),
             Step(MaxOver(z[i], (i, 1, n)), "algebra")]
    report = verify_derivation(Derivation(claim=claim, steps=steps, models=["gaussian-logits"],
                                          name="lse"), VerifySettings(monte_carlo=False))
    if verified:
        assert report.status == "verified", [(s.rule_check.reason, s.exact_check.reason)
                                             for s in report.models[0].steps]
    else:
        checked = assert_rejected_at(report.models[0], 1)
        assert "the bound goes the other way" in checked.rule_check.reason


@pytest.mark.parametrize("claimed,proved,ok", [
    ("<=", "=", True), ("<=", "<", True), ("<", "<=", False), ("=", "<=", False),
    (">=", ">", True), (">=", "<=", False)])
def test_relations_compose_as_in_calc(claimed, proved, ok):
    assert implies(proved, claimed) is ok


def test_composition_of_chains():
    assert compose(["=", "<=", "<", "="]) == "<"
    assert compose(["=", ">="]) == ">="
    assert compose(["<=", ">="]) is None


# Expressions in the softmax probabilities: the oracle's enclosure must contain their values.
_ATOMS = [softmax_p(i), softmax_p(j), p_max, Sum(softmax_p(l) ** 2, (l, 1, n)), sp.Integer(2),
          sp.Rational(1, 3)]


def _expressions():
    leaves = st.sampled_from(_ATOMS)
    return st.recursive(leaves, lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda t: t[0] + t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] - t[1]),
        st.tuples(inner, inner).map(lambda t: t[0] * t[1]),
        inner.map(lambda t: t ** 2),
        inner.map(lambda t: sp.log(1 + t ** 2)),  # the logarithm of what stays positive
        inner.map(sp.exp)), max_leaves=5)


def _values(expr, dim: int, rng) -> list[float]:
    """The expression at random logits (wide and narrow) for every pair of free indices."""
    found = []
    for scale in (0.3, 3.0):
        logits = rng.normal(scale=scale, size=dim)
        for a in range(1, dim + 1):
            for b in range(1, dim + 1):
                concrete = concretise(expr, {n: sp.Integer(dim)}, {i: a, j: b})
                point = {z[c]: sp.Float(float(logits[c - 1]), 30) for c in range(1, dim + 1)}
                found.append(float(sp.N(concrete.xreplace(point), 30)))
    return found


@settings(max_examples=40, deadline=None)
@given(_expressions(), st.integers(2, 4), st.integers(0, 10**6))
def test_enclosures_contain_every_value(expr, dim, seed):
    lo, hi = enclosure(expr, Ranges(n))
    for value in _values(expr, dim, np.random.default_rng(seed)):
        if lo.is_finite:
            assert value >= float(lo.subs(n, dim)) - 1e-12
        if hi.is_finite:
            assert value <= float(hi.subs(n, dim)) + 1e-12


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(_expressions(), st.integers(2, 4), st.integers(0, 10**6))
def test_every_bound_move_moves_the_way_it_says(expr, dim, seed):
    """For each replacement the bound rules offer, the new expression lies on the announced
    side of the old one at random points: the search only ever takes sound steps."""
    rules = [AtMostMax(), SumAtLeastMax(), WithinRange()]
    for new, effect in list(moves(expr, rules, Ranges(n), [p_max]))[:25]:
        rng = np.random.default_rng(seed)
        old_values = _values(expr, dim, rng)
        rng = np.random.default_rng(seed)
        new_values = _values(new, dim, rng)
        for old, moved in zip(old_values, new_values):
            assert effect * (moved - old) >= -1e-9, (expr, new, effect)


def test_numeric_check_tells_ties_from_violations():
    """A bound that is tight at a tie (n = 1: tr J = 0 = 1 - max p) passes as <=, and a
    violation far above the working precision fails."""
    from sdpa_proofs.numeric import numeric_check

    before, after = 1 - Sum(softmax_p(i) ** 2, (i, 1, n)), 1 - p_max
    settings_ = NumericSettings()
    assert numeric_check(before, after, LOGITS, settings_, relation=">=").passed
    wrong = numeric_check(before, after, LOGITS, settings_, relation="<=")
    assert wrong.status == "fail" and mpmath.mpf(wrong.counterexample["lhs"]) > \
        mpmath.mpf(wrong.counterexample["rhs"])


def test_monte_carlo_checks_a_pointwise_inequality_at_every_sample():
    from sdpa_proofs.montecarlo import check_pointwise

    collision = Sum(softmax_p(i) ** 2, (i, 1, n))
    good = check_pointwise(Le(collision, p_max), LOGITS, dims=(64,))
    assert [r.status for r in good] == ["pass"] and good[0].samples > 0
    bad = check_pointwise(Le(collision, p_max ** 2), LOGITS, dims=(64,))
    assert bad[0].status == "fail" and "is false" in bad[0].reason


def test_monte_carlo_of_a_moment_inequality_is_one_sided():
    """E[sum e^{2z}] >= E[sum e^z]^2 / n (Cauchy-Schwarz), about e^{s^2} times over: the true
    direction passes, the turned one fails."""
    from sdpa_proofs import E
    from sdpa_proofs.montecarlo import check_claim

    squares, total = E(Sum(sp.exp(2 * z[i]), (i, 1, n))), E(Sum(sp.exp(z[i]), (i, 1, n)))
    assert {r.status for r in check_claim(Ge(squares, total ** 2 / n), LOGITS,
                                          dims=(64,))} == {"pass"}
    turned = check_claim(Le(squares, total ** 2 / n), LOGITS, dims=(64,))
    assert turned[0].status == "fail" and "wrong side" in turned[0].reason


def test_monte_carlo_differentiates_before_sampling():
    """tr J <= 2 (1 - max p) holds at every sample at n = 64; tr J <= 1 - max p does not."""
    from sdpa_proofs.montecarlo import check_pointwise

    good = check_pointwise(Le(TRACE, 2 * (1 - p_max)), LOGITS, dims=(64,))
    assert good[0].status == "pass" and good[0].samples > 0
    bad = check_pointwise(Le(TRACE, 1 - p_max), LOGITS, dims=(64,))
    assert bad[0].status == "fail" and "is false" in bad[0].reason


def test_a_reversed_sum_is_not_taken_for_a_sum_of_its_terms():
    """SymPy sums i = 5..2 as minus the sum over i = 3..4 (Karr's convention: sum of 1 is -2),
    so non-negative terms do not make it non-negative, and no bound is pushed through it."""
    reversed_sum = Sum(softmax_p(i), (i, 5, 2))
    assert Sum(1, (i, 5, 2)).doit() == -2
    lo, _ = enclosure(reversed_sum, Ranges(n))
    assert lo == -sp.oo
    assert not rule_check(reversed_sum, 0, resolve("range"), LOGITS, relation=">=").passed
    assert not rule_check(reversed_sum, Sum(p_max, (i, 5, 2)), resolve("at_most_max"), LOGITS,
                          relation="<=").passed


def _loaded(name: str):
    from pathlib import Path

    from sdpa_proofs.isolation import load_file

    (derivation,) = load_file(Path(__file__).resolve().parent.parent / "derivations" / name)
    return derivation


def test_a_cited_bound_is_used_only_the_way_it_points():
    from sdpa_proofs import cite

    collision = cite(_loaded("softmax/collision_at_most_max.py"))
    right = check(Ge(TRACE, 1 - P), [Step(1 - P, collision, rel=">=")])
    assert right.status == "verified"
    wrong = check(Le(TRACE, 1 - P), [Step(1 - P, collision, rel="<=")])
    assert wrong.first_failing_step == 3
    assert "goes the other way" in wrong.steps[2].rule_check.reason


def test_a_citation_of_a_broken_derivation_is_refused_with_its_failing_step():
    from sdpa_proofs import cite

    broken = Derivation(claim=Le(Sum(softmax_p(i) ** 2, (i, 1, n)), P ** 2),
                        steps=[Step(P ** 2, "at_most_max", rel="<=")],
                        where={P: p_max}, models=["gaussian-logits"], name="too_strong")
    report = check(Ge(TRACE, 1 - P ** 2), [Step(1 - P ** 2, cite(broken), rel=">=")])
    reason = report.steps[2].rule_check.reason
    assert report.status == "failed" and "cited too_strong: its step 1 fails" in reason


def test_a_cited_equation_rewrites_only_where_it_holds():
    from sdpa_proofs import E, cite, dot_product
    from sdpa_proofs.registry import resolve as names

    mean_zero = cite(_loaded("mean_zero.py"))
    for model, holds in (("independent-normal", True), ("correlated-normal", False)):
        verdict = rule_check(E(dot_product) + 1, 1, names([mean_zero]), get_model(model))
        assert verdict.passed is holds, verdict.reason


def test_positivity_is_claimed_only_where_every_part_shows_it():
    """is_positive decides where a logarithm may take a bound inside it: e^x and sums and
    maxima of it over a range that is not empty are positive; an empty sum, a factor of
    unknown sign and a real symbol of unknown sign are not."""
    from sdpa_proofs import sigma_q
    from sdpa_proofs.intervals import is_positive

    ranges = Ranges(n)
    assert is_positive(Sum(sp.exp(z[i]), (i, 1, n)), ranges)
    assert is_positive(MaxOver(sp.exp(z[i]), (i, 1, n)), ranges)
    assert is_positive(sigma_q * sp.exp(z[1]), ranges)
    assert not is_positive(Sum(sp.exp(z[i]), (i, 2, 1)), ranges)  # empty
    assert not is_positive(z[1] * sp.exp(z[1]), ranges)
    assert not is_positive(sp.exp(z[1]) - 1, ranges)
    assert not is_positive(Symbol("y", real=True), ranges)
