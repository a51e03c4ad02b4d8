"""The dependent case: what-if re-checks, wrong dependent derivations, expected refutations,
Isserlis against the latent engine, and the growth slopes."""

from pathlib import Path

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Eq, Sum

from sdpa_proofs import (
    DEPENDENT,
    Derivation,
    E,
    S,
    Step,
    SumOverDistinct,
    Var,
    alpha,
    beta,
    d,
    dot_product,
    get_model,
    i,
    j,
    k,
    lemma,
    q,
    rho,
    sigma_k,
    sigma_q,
    verify_derivation,
)
from sdpa_proofs.growth import growth
from sdpa_proofs.isolation import load_file
from sdpa_proofs.moments import ExactEvaluator
from sdpa_proofs.registry import resolve
from sdpa_proofs.report import REFUTED
from sdpa_proofs.rulecheck import rule_check
from sdpa_proofs.runner import VerifySettings, establish_lemmas

ROOT = Path(__file__).resolve().parent.parent
FAST = VerifySettings(monte_carlo=False)
SIGMA2 = sigma_q**2 * sigma_k**2

# which steps of the seed's Var(S) proof break under each dependent model, and why:
# 2 uses E[S] = 0, 5 factorises q_i, k_i (and, with shared factors, coordinates i != j),
# 7 uses the variance sigma^2 and the zero mean of a coordinate
BREAKS = {"aligned-uniform": {2, 5}, "aligned-rademacher": {2, 5}, "correlated-normal": {2, 5},
          "correlated-normal-means": {2, 5, 7}, "shared-factor": {2, 5, 7},
          "separate-factors": {5, 7}}


def bundled(path: str) -> Derivation:
    (derivation,) = load_file(ROOT / "derivations" / path)
    return derivation


@pytest.mark.parametrize("model", sorted(BREAKS))
def test_what_if_the_seed_proof_breaks_exactly_where_dependence_enters(model):
    report = verify_derivation(bundled("variance.py"),
                               VerifySettings(monte_carlo=False, models=[model]))
    steps = report.models[0].steps
    assert {s.index for s in steps if not s.passed} == BREAKS[model]
    for s in steps:
        if s.index in BREAKS[model]:
            assert s.rule_check.status == "fail"
            if s.index in (2, 5):  # E[S] = 0 and independence: a precondition of the rule
                assert "precondition fails" in s.rule_check.reason
            else:  # the variance is not sigma^2 (the rule yields something else) or the mean
                assert ("turns the previous expression into" in s.rule_check.reason  # is not 0
                        or "zero_mean: the model gives" in s.rule_check.reason)
            assert s.numeric_check.counterexample is not None
            assert s.numeric_check.counterexample["lhs"] != s.numeric_check.counterexample["rhs"]
        else:
            assert s.rule_check.status == s.exact_check.status == s.numeric_check.status == "pass"


def test_the_reasons_name_the_violated_precondition():
    steps = verify_derivation(bundled("variance.py"),
                              VerifySettings(monte_carlo=False, models=["shared-factor"])
                              ).models[0].steps
    assert "cited mean_zero: its step 2 fails" in steps[1].rule_check.reason
    assert "shared factor z" in steps[1].rule_check.reason
    assert "shared factor z" in steps[4].rule_check.reason
    reason = steps[4].rule_check.reason
    assert "k_i and k_j" in reason or "q_i and q_j" in reason


def test_shared_factor_variance_claimed_linear_in_d_is_rejected():
    right = bundled("dependent/shared_factor_variance.py")
    steps = list(right.steps)
    linear = steps[4].expr.subs(d * (d - 1), d)  # "only d off-diagonal terms" instead of d(d-1)
    wrong = Derivation(claim=Eq(Var(S), linear), where=right.where, models=right.models,
                       steps=steps[:4] + [Step(linear, "count_terms")], name="linear")
    report = verify_derivation(wrong, FAST)
    assert report.status == "failed"
    assert [s.index for s in report.models[0].steps if not s.passed] == [5]
    assert report.models[0].steps[4].exact_check.status == "fail"


def test_correlated_variance_missing_the_rho_squared_term_is_rejected():
    right = bundled("dependent/correlated_second_moment.py")
    steps = list(right.steps)
    missing = Sum(SIGMA2, (i, 1, d)) + SumOverDistinct(rho**2 * SIGMA2, i, j, d)
    wrong = Derivation(claim=right.claim, where=right.where, models=right.models,
                       steps=steps[:2] + [Step(missing, "isserlis")] + steps[3:], name="no_rho")
    report = verify_derivation(wrong, FAST)
    assert report.status == "failed"
    failing = [s for s in report.models[0].steps if not s.passed]
    assert failing[0].index == 3
    assert failing[0].numeric_check.status == "fail"


def test_expected_refutation_semantics():
    seed = bundled("seed_audit/variance_is_second_moment.py")
    refuted = verify_derivation(seed, FAST)
    assert refuted.status == REFUTED and refuted.expected == "refuted at step 2"
    # wrongly verified: the same claim under the independent model is true
    independent = Derivation(claim=seed.claim, steps=seed.steps, where=seed.where,
                             models=["independent-normal"], expect_refuted_at=2, name="x")
    assert verify_derivation(independent, FAST).status == "failed"
    # refuted, but at another step than announced
    elsewhere = Derivation(claim=seed.claim, steps=seed.steps, where=seed.where,
                           models=seed.models, expect_refuted_at=1, name="y")
    assert verify_derivation(elsewhere, FAST).status == "failed"
    with pytest.raises(ValueError, match="expect_refuted_at=3"):
        Derivation(claim=seed.claim, steps=seed.steps, expect_refuted_at=3)


def test_lemmas_of_one_model_do_not_leak_into_another():
    """The correlated mean is a lemma under correlated-normal only."""
    mean = lemma(Eq(E(S), d * rho * sigma_q * sigma_k))
    before, after = E(dot_product)**2, (d * rho * sigma_q * sigma_k)**2
    rules = [r.unfolded({S: dot_product}) for r in resolve(mean)]
    for name in ("correlated-normal", "shared-factor"):
        establish_lemmas(rules, get_model(name), VerifySettings())
    assert rule_check(before, after, rules, get_model("correlated-normal")).status == "pass"
    assert rule_check(before, after, rules, get_model("shared-factor")).status == "fail"


GAUSSIAN = [m for m in DEPENDENT if m.is_gaussian] + [get_model("independent-normal")]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(range(len(GAUSSIAN))),
       st.lists(st.tuples(st.sampled_from(["q", "k"]), st.sampled_from([1, 2, 3]),
                          st.integers(1, 3)), min_size=1, max_size=3))
def test_isserlis_rule_agrees_with_the_latent_engine(model_index, factors):
    """Two independent routes to a Gaussian moment: pairings of covariances, and expanding the
    coordinates in their latent variables."""
    model = GAUSSIAN[model_index]
    vectors = {"q": q, "k": k}
    monomial = sp.Mul(*(vectors[v][n] ** p for v, n, p in factors))
    by_pairings = resolve("isserlis")[0].rewrite(E(monomial), _context(model))
    by_latents = ExactEvaluator(model).value(E(monomial))
    assert by_pairings is not None
    assert sp.expand(by_pairings - by_latents) == 0


def _context(model):
    from sdpa_proofs.rules import Context

    return Context(model)


def test_growth_slopes_agree_with_the_closed_forms():
    small = dict(dims=(16, 64, 256), budget=2e6)
    rows = {(r.model, r.statistic): r for name in ("correlated-normal", "shared-factor")
            for r in growth(get_model(name), **small)}
    assert all(r.status == "pass" for r in rows.values())
    assert rows["correlated-normal", "Var(S)"].exact_slope == pytest.approx(1.0)
    assert rows["correlated-normal", "E[S²]"].exact_slope > 1.5
    assert rows["shared-factor", "Var(S)"].exact_slope > 1.8
    for r in rows.values():
        assert r.ci_low <= r.slope <= r.ci_high


def test_the_within_row_spread_grows_like_d_with_a_common_factor_and_d2_with_one_per_key():
    """E[(S - S~)^2] / 2 for two keys of a row: d sigma_k^2 (alpha^2 + sigma_q^2) when the
    factor is common to the row, alpha^2 beta^2 d^2 + O(d) when each key has its own; sampled
    from rows of one query and two keys."""
    small = dict(dims=(16, 64, 256), budget=2e6)
    spread = "E[(S−S̃)²]/2"
    common = next(r for r in growth(get_model("shared-factor"), **small) if r.statistic == spread)
    per_key = next(r for r in growth(get_model("separate-factors"), **small)
                   if r.statistic == spread)
    assert common.exact_slope == pytest.approx(1.0) and common.status == "pass"
    assert per_key.exact_slope > 1.5 and per_key.status == "pass"
    assert not per_key.ci_low <= 1.0 <= per_key.ci_high


def test_growth_of_a_model_without_q_and_k_is_not_applicable():
    rows = growth(get_model("gaussian-logits"))
    assert {r.status for r in rows} == {"n/a"} and "no q . k" in rows[0].closed_form


def test_growth_slope_of_a_wrong_closed_form_would_not_agree():
    """The Monte Carlo slope distinguishes linear from quadratic growth at this sample size."""
    row = next(r for r in growth(get_model("shared-factor"), dims=(16, 64, 256), budget=2e6)
               if r.statistic == "Var(S)")
    assert not row.ci_low <= 1.0 <= row.ci_high


def test_shared_factor_variance_has_the_exact_d_squared_coefficient():
    for name, coefficient in (("shared-factor", 2), ("separate-factors", 1)):
        value = sp.expand(ExactEvaluator(get_model(name)).value(Var(dot_product)))
        assert sp.Poly(value, d).coeff_monomial(d**2) == coefficient * alpha**2 * beta**2


def test_parameter_points_in_range():
    """Parameter points keep |rho| < 1, never sigma = 1, never sigma_q = sigma_k."""
    for model in DEPENDENT:
        for point in model.parameter_points:
            if sigma_q in point:
                assert point[sigma_q] != 1 and point[sigma_k] != 1
                assert point[sigma_q] != point[sigma_k]
            if rho in point:
                assert 0 < abs(point[rho]) < 1


def test_general_gaussian_variance_with_a_transposed_cross_term_is_rejected():
    """tr(Sigma_qk Sigma_qk) is not sum_ij Sigma_qk[i,j]^2 (= tr(Sigma_qk Sigma_qk^T)) unless
    Sigma_qk is symmetric; the general model's covariance patterns are not."""
    from sdpa_proofs import Sigma_kk, Sigma_qk, Sigma_qq

    right = bundled("dependent/gaussian_variance.py")
    wrong_rhs = (Sum(Sigma_qq[i, j] * Sigma_kk[j, i], (j, 1, d), (i, 1, d))
                 + Sum(Sigma_qk[i, j]**2, (j, 1, d), (i, 1, d)))
    steps = list(right.steps[:-1]) + [Step(wrong_rhs, ["expand_square", "algebra"])]
    report = verify_derivation(Derivation(claim=Eq(Var(S), wrong_rhs), steps=steps,
                                          where=right.where, models=right.models, name="w"),
                               FAST)
    last = report.models[0].steps[-1]
    assert report.status == "failed"
    assert [s.index for s in report.models[0].steps if not s.passed] == [5]
    assert last.exact_check.status == "fail" and last.numeric_check.status == "fail"
    assert "covariance_pattern" in last.numeric_check.counterexample


def test_growth_of_a_statistic_without_randomness_agrees_with_its_closed_form():
    """k = (sigma_k/sigma_q) q with Rademacher q: S = d sigma_q sigma_k exactly, so every
    batch gives the same slope (2 for E[S^2]) and zero spread; that is agreement, not a
    failure of rounding size."""
    rows = {r.statistic: r for r in growth(get_model("aligned-rademacher"), dims=(16, 64, 256),
                                           budget=2e5)}
    assert rows["E[S²]"].exact_slope == pytest.approx(2.0)
    assert rows["E[S²]"].status == "pass"


@pytest.mark.parametrize("family, kurtosis", [("normal", 3), ("uniform", sp.Rational(9, 5)),
                                              ("rademacher", 1), ("laplace", 6)])
def test_k_a_multiple_of_q_for_every_family(family, kurtosis):
    """k = (sigma_k/sigma_q) q: S = (sigma_k/sigma_q) sum q_i^2, so E[S] = d sigma_q sigma_k and
    Var(S) = d sigma_q^2 sigma_k^2 (kurtosis - 1), kurtosis E[q^4]/sigma_q^4 of each law (3, 9/5,
    1, 6: by hand)."""
    from sdpa_proofs import moment

    model = f"aligned-{family}"
    assert sp.expand(moment("E(S)", model).closed_form - d * sigma_q * sigma_k) == 0
    expected = d * sigma_q**2 * sigma_k**2 * (kurtosis - 1)
    assert sp.expand(moment("Var(S)", model).closed_form - expected) == 0
