"""Limits that are checked: lim_n X_n = L almost surely, by the law of large numbers, whose
conditions (i.i.d. summands, finite means, continuity at the limit point) each check
establishes its own way; a condition that cannot be established leaves a step undecided, and
one that fails under the model fails it."""

from pathlib import Path

import pytest
import sympy as sp
from sympy import Eq, Sum, exp

from sdpa_proofs import (
    NORMAL,
    Derivation,
    E,
    Latent,
    LatentLinearModel,
    Lim,
    Step,
    get_model,
    i,
    n,
    s,
    verify_derivation,
    z,
)
from sdpa_proofs.distributions import LAPLACE
from sdpa_proofs.isolation import load_file
from sdpa_proofs.montecarlo import check_claim, check_claims
from sdpa_proofs.runner import VerifySettings

FAST = VerifySettings(monte_carlo=False)
SOFTMAX = Path(__file__).resolve().parent.parent / "derivations" / "softmax"
COLLISION = n * Sum(exp(2 * z[i]), (i, 1, n)) / Sum(exp(z[i]), (i, 1, n)) ** 2
LOGITS = get_model("gaussian-logits")


def step_verdicts(derivation, number: int) -> dict:
    report = verify_derivation(derivation, FAST)
    step = report.models[0].steps[number - 1]
    return {"rule": step.rule_check, "exact": step.exact_check, "numeric": step.numeric_check}


@pytest.mark.parametrize("name", ["collision_limit", "entropy_limit", "normalised_entropy_limit"])
def test_the_limit_derivations_verify(name):
    (derivation,) = load_file(SOFTMAX / f"{name}.py")
    report = verify_derivation(derivation, FAST)
    assert report.status == "verified", [(s_.index, s_.rule_check.reason, s_.exact_check.reason)
                                         for s_ in report.models[0].steps]


def test_a_wrong_limit_is_refuted_where_it_goes_wrong():
    """e^{s^2/2} for e^{s^2} (the mean of e^z where the ratio of means belongs)."""
    wrong = Derivation(claim=Eq(Lim(COLLISION, n), exp(s**2 / 2)),
                       steps=[Step(exp(s**2 / 2), "law_of_large_numbers")],
                       models=["gaussian-logits"], name="wrong_limit")
    verdicts = step_verdicts(wrong, 1)
    assert {v.status for v in verdicts.values()} == {"fail"}
    sampled = check_claim(Eq(Lim(COLLISION, n), exp(s**2 / 2)), LOGITS, dims=(64, 4096))
    assert {r.status for r in sampled} == {"fail"} and "does not converge" in sampled[0].reason


def shared_logits() -> LatentLinearModel:
    """Logits z_i = s e_i + a u that share one factor u: not i.i.d. across i."""
    a = sp.Symbol("a", positive=True)
    return LatentLinearModel(
        name="shared-logits", title="logits sharing a factor", dimension=n,
        parameter_points=[{s: sp.Rational(3, 5), a: sp.Rational(1, 2)},
                          {s: sp.Rational(7, 4), a: sp.Rational(1, 3)}],
        latents=(Latent("e", NORMAL), Latent("u", NORMAL, shared=True)),
        loadings={z: {"e": s, "u": a}}, description=("z_i = s e_i + a u",))


def test_the_law_of_large_numbers_refuses_logits_that_share_a_factor():
    """Then the sample mean of e^{z} tends to a random limit, not to E[e^{z_1}]: the rule's
    precondition fails and names the factor; the other checks cannot evaluate the limit."""
    step = Step(E(exp(2 * z[1])) / E(exp(z[1])) ** 2, "law_of_large_numbers")
    derivation = Derivation(claim=Eq(Lim(COLLISION, n), E(exp(2 * z[1])) / E(exp(z[1])) ** 2),
                            steps=[step], models=[shared_logits()], name="shared")
    verdicts = step_verdicts(derivation, 1)
    assert verdicts["rule"].status == "fail" and "share the factor u" in verdicts["rule"].reason
    assert verdicts["exact"].status == "undecided" and verdicts["numeric"].status == "undecided"


@pytest.mark.parametrize("body, why", [
    (Sum(exp(z[i]), (i, 1, n)), "not a function of sample means"),  # grows without bound
    (n / Sum(z[i], (i, 1, n)), "nonzero"),  # 1 / (mean of z) at a mean of 0
    # an integer c > 0 makes M^(c - 3) 1/M at c = 2: at s = 1 it jumps (review round 85)
    (sp.tanh((Sum(z[i]**2, (i, 1, n)) / n - 1)**(sp.Symbol("c", integer=True, positive=True)
                                                - 3)), "nonzero"),
])
def test_limits_whose_conditions_are_not_established_stay_undecided(body, why):
    derivation = Derivation(claim=Eq(Lim(body, n), 1), steps=[Step(1, "law_of_large_numbers")],
                            models=["gaussian-logits"], name="undecided")
    verdicts = step_verdicts(derivation, 1)
    assert verdicts["rule"].status == "undecided" and why in verdicts["rule"].reason
    assert verdicts["exact"].status != "pass" and verdicts["numeric"].status != "pass"


def test_exponential_moments_of_a_laplace_law_are_not_taken_for_granted():
    laplace = LatentLinearModel(
        name="laplace-logits", title="Laplace logits", dimension=n,
        parameter_points=[{s: sp.Rational(3, 5)}, {s: sp.Rational(7, 4)}],
        latents=(Latent("e", LAPLACE),), loadings={z: {"e": s}},
        description=("z_i Laplace",))
    derivation = Derivation(claim=Eq(Lim(Sum(exp(z[i]), (i, 1, n)) / n, n), E(exp(z[1]))),
                            steps=[Step(E(exp(z[1])), "law_of_large_numbers")],
                            models=[laplace], name="laplace")
    verdicts = step_verdicts(derivation, 1)
    assert verdicts["rule"].status == "undecided" and "not established" in \
        verdicts["rule"].reason


def test_monte_carlo_of_a_true_limit_shrinks_towards_it():
    results = check_claim(Eq(Lim(COLLISION, n), exp(s**2)), LOGITS, dims=(64, 4096))
    assert {r.status for r in results} == {"pass"} and results[0].dimension == "n"


def test_limits_sampled_beside_other_claims_see_what_they_see_alone():
    """The limits take their rows chunk by chunk from the draws the model's other claims take
    (theory: E[e^(2z)] / E[e^z]^2 = e^(s^2) for z ~ N(0, s^2), and E[z^2] = s^2): a wrong
    limit still fails among right claims, and each estimate is the one it has alone."""
    right, wrong = Eq(Lim(COLLISION, n), exp(s**2)), Eq(Lim(COLLISION, n), exp(s**2) + 1)
    mean_square = Eq(Lim(Sum(z[i]**2, (i, 1, n)) / n, n), s**2)
    moment = Eq(E(z[1]**2), s**2)
    together = check_claims([(right, LOGITS), (moment, LOGITS), (wrong, LOGITS),
                             (mean_square, LOGITS)], dims=(64, 4096))
    assert [{r.status for r in results} for results in together] == [{"pass"}, {"pass"},
                                                                     {"fail"}, {"pass"}]
    for claim, results in zip((right, moment, wrong, mean_square), together):
        alone = check_claim(claim, LOGITS, dims=(64, 4096))
        assert [r.estimate for r in alone] == [r.estimate for r in results]


def test_sizes_given_out_of_order_or_twice_are_each_sampled_once_smallest_first():
    """Review round 58: dims = (512, 64, 64) crashed (a plan finished twice at 64); and a
    limit's distance is to shrink from the smallest size to the largest, whatever the order
    the sizes are given in."""
    claim, moment = Eq(Lim(Sum(z[i]**2, (i, 1, n)) / n, n), s**2), Eq(E(z[1]**2), s**2)
    for c in (claim, moment):
        given = check_claim(c, LOGITS, dims=(512, 64, 64))
        assert [r.d for r in given] == [64, 512]
        assert given == check_claim(c, LOGITS, dims=(64, 512))


# ---- round 15: hostile review of the limit rule ---------------------------------------------

@pytest.mark.parametrize("body", [
    sp.sign(Sum(z[i], (i, 1, n))**2),   # is 1 for every n, and would pass as 0 at the jump
    sp.sign(Sum(z[i], (i, 1, n))),      # flips forever: no limit
    sp.floor(Sum(z[i], (i, 1, n)) / n),  # the mean tends to 0 from both sides: -1 and 0
])
def test_a_map_that_jumps_at_the_limit_point_is_not_taken_through_the_limit(body):
    """sign(E[z]^2) = sign(0) = 0, yet the limit of sign((sum z)^2) is 1: continuity at the
    limit point is a condition, and maps that jump are not known to meet it."""
    claim = Eq(Lim(body, n), 0)
    derivation = Derivation(claim=claim, steps=[Step(0, "law_of_large_numbers")],
                            models=["gaussian-logits"], name="jump")
    report = verify_derivation(derivation, VerifySettings(monte_carlo_dimensions=(64,)))
    assert report.status != "verified"
    verdicts = step_verdicts(derivation, 1)
    assert {v.status for v in verdicts.values()} == {"undecided"}
    assert "not known to be continuous" in verdicts["rule"].reason


def test_an_exponential_of_a_product_of_coordinates_has_no_mean_taken_for_granted():
    """E[e^{q k}] is infinite once sigma_q sigma_k >= 1: e^{q_1 k_1} is linear in each
    coordinate but not jointly, and the rule must not call its mean finite."""
    from sdpa_proofs import d, k, q

    summand = q[1] * exp(q[1] * k[1])
    claim = Eq(Lim(Sum(q[i] * exp(q[i] * k[i]), (i, 1, d)) / d, d), E(summand))
    derivation = Derivation(claim=claim, steps=[Step(E(summand), "law_of_large_numbers")],
                            models=["independent-normal"], name="heavy")
    verdicts = step_verdicts(derivation, 1)
    assert verdicts["rule"].status == "undecided" and "not established" in \
        verdicts["rule"].reason


@pytest.mark.parametrize("offset", [sp.Rational(1, 100), s**2 / 20])
def test_monte_carlo_rejects_a_limit_that_is_close_but_wrong(offset):
    """lim (1/n) sum z_i^2 = s^2; s^2 + offset must fail even though |X_n - L| still shrinks
    from n = 64 (where the noise is larger than the offset)."""
    claim = Eq(Lim(Sum(z[i]**2, (i, 1, n)) / n, n), s**2 + offset)
    results = check_claim(claim, LOGITS)
    assert {r.status for r in results} == {"fail"} and "does not converge" in results[0].reason
    right = check_claim(Eq(Lim(Sum(z[i]**2, (i, 1, n)) / n, n), s**2), LOGITS)
    assert {r.status for r in right} == {"pass"}


# ---- round 17: the summation index used as a number -----------------------------------------

@pytest.mark.parametrize("body", [
    Sum(i * z[i] ** 2, (i, 1, n)) / n,  # mean (n + 1) s^2 / 2: diverges
    Sum(sp.KroneckerDelta(i, 1) * z[i] ** 2, (i, 1, n)) / n,  # z_1^2 / n -> 0
    Sum((-1) ** i * z[i] ** 2, (i, 1, n)) / n,  # terms of alternating sign: -> 0
])
def test_a_summand_that_uses_its_index_as_a_number_is_not_a_sample_mean(body):
    """The terms then differ in law, so the mean of the first (s^2) is not the limit; the law
    of large numbers says nothing and no check may pass the step."""
    derivation = Derivation(claim=Eq(Lim(body, n), s**2),
                            steps=[Step(E(z[1] ** 2), "law_of_large_numbers"),
                                   Step(s**2, "model_moment")],
                            models=["gaussian-logits"], name="weighted")
    verdicts = step_verdicts(derivation, 1)
    assert {v.status for v in verdicts.values()} == {"undecided"}
    assert "as a number" in verdicts["rule"].reason
    assert verify_derivation(derivation, FAST).status != "verified"


def test_monte_carlo_samples_the_index_as_a_number_and_sees_the_divergence():
    claim = Eq(Lim(Sum(i * z[i] ** 2, (i, 1, n)) / n, n), s**2)
    assert {r.status for r in check_claim(claim, LOGITS, dims=(64, 4096))} == {"fail"}


def test_the_normalised_entropy_deficit_with_s_squared_for_half_of_it_is_refuted():
    """log n (1 - H / log n) -> s^2 (the deficit of E[e^z] taken for the entropy's) fails at
    the last step by every check, and Monte Carlo sees the limit elsewhere."""
    (derivation,) = load_file(SOFTMAX / "normalised_entropy_limit.py")
    wrong_claim = Eq(derivation.claim.lhs, s**2)
    steps = list(derivation.steps[:-1]) + [Step(s**2, "algebra")]
    wrong = Derivation(claim=wrong_claim, steps=steps, models=["gaussian-logits"], name="wrong")
    assert {v.status for v in step_verdicts(wrong, 4).values()} == {"fail"}
    assert {r.status for r in check_claim(wrong_claim, LOGITS, dims=(64, 4096))} == {"fail"}
