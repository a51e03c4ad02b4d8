"""Rows: one query against two keys.  The bundled row derivations verify, and the wrong turns a
reader of the single-logit argument is likely to take are rejected at the step they are in."""

from pathlib import Path

import pytest
from sympy import Eq, Sum, Symbol

from sdpa_proofs import (
    E,
    S,
    S_tilde,
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
    ktilde,
    other_dot_product,
    q,
    rho,
    sigma_k,
    sigma_q,
    verify_derivation,
)
from sdpa_proofs.isolation import load_file
from sdpa_proofs.moments import ExactEvaluator
from sdpa_proofs.montecarlo import check_claim
from sdpa_proofs.runner import VerifySettings

FAST = VerifySettings(monte_carlo=False)
ROWS = Path(__file__).resolve().parent.parent / "derivations" / "rows"
DIFFERENCE = q[i] * (k[i] - ktilde[i])


def bundled(name: str):
    (derivation,) = load_file(ROWS / f"{name}.py")
    return derivation


def with_step(derivation, number: int, step: Step, claim=None):
    steps = list(derivation.steps)
    steps[number - 1] = step
    return type(derivation)(claim=derivation.claim if claim is None else claim, steps=steps,
                            where=derivation.where, models=derivation.models,
                            name=derivation.name)


def rejected_at(report) -> set:
    return {(st.index, label) for m in report.models for st in m.steps
            for label, v in (("rule", st.rule_check), ("exact", st.exact_check),
                             ("numeric", st.numeric_check)) if v.status != "pass"}


@pytest.mark.parametrize("name", ["within_row_spread_row_factor", "within_row_spread_key_factors",
                                  "alignment_margin_mean", "alignment_margin_variance"])
def test_the_row_derivations_verify(name):
    report = verify_derivation(bundled(name), FAST)
    assert report.status == "verified", rejected_at(report)


def test_a_factor_per_key_does_not_cancel():
    """Carrying the row-factor answer (off-diagonal terms 0) over to key-factors is refuted
    at that step by every check: there E[q_i q_j] 2 beta^2 = 2 alpha^2 beta^2 for i != j."""
    derivation = bundled("within_row_spread_key_factors")
    linear = alpha**2 * sigma_k**2 + beta**2 * sigma_q**2 + sigma_q**2 * sigma_k**2
    wrong = with_step(derivation, 4, Step(
        (Sum(2 * (alpha**2 + sigma_q**2) * (beta**2 + sigma_k**2), (i, 1, d))
         + SumOverDistinct(0, i, j, d)) / 2, ["linearity", "isserlis"]),
        claim=Eq(E((S - S_tilde)**2) / 2, d * linear))
    report = verify_derivation(wrong, FAST)
    assert report.status == "failed"
    assert {(4, "rule"), (4, "exact"), (4, "numeric")} <= rejected_at(report)
    assert min(index for index, _ in rejected_at(report)) == 4


def test_a_dropped_key_term_in_the_margin_variance_is_refuted():
    """E[q_i^2 (k_i - k~_i)^2] with the k~_i^2 term dropped: sigma_q^2 sigma_k^2 (1 + 2 rho^2)
    in place of (2 + 2 rho^2)."""
    derivation = bundled("alignment_margin_variance")
    c = Symbol("c", positive=True)
    pair_mean = rho * sigma_q * sigma_k
    wrong = with_step(derivation, 6, Step(
        (Sum(sigma_q**2 * sigma_k**2 * (1 + 2 * rho**2), (i, 1, d))
         + SumOverDistinct(pair_mean**2, i, j, d) - Sum(pair_mean, (i, 1, d))**2) / c**2,
        ["linearity", "isserlis"]))
    report = verify_derivation(wrong, FAST)
    assert report.status == "failed"
    assert {(6, "rule"), (6, "exact"), (6, "numeric")} <= rejected_at(report)
    numeric = report.models[0].steps[5].numeric_check
    assert numeric.counterexample["lhs"] != numeric.counterexample["rhs"]


def test_independence_of_q_and_a_key_difference_is_not_independence_of_coordinates():
    """Under row-factor q is independent of k - k~ (the factor cancels), so factorising
    E[q_i^2 (k_i - k~_i)^2] is right in value; but q_i and k_i both load on z, and the
    independence rule, which factorises coordinates, must refuse it: only the rule check
    fails."""
    derivation = bundled("within_row_spread_row_factor")
    factorised = (Sum(E(q[i]**2) * E((k[i] - ktilde[i])**2), (i, 1, d))
                  + SumOverDistinct(E(DIFFERENCE * DIFFERENCE.xreplace({i: j})), i, j, d)) / 2
    steps = list(derivation.steps[:3]) + [Step(factorised, "independence")] + \
        list(derivation.steps[3:])
    wrong = type(derivation)(claim=derivation.claim, steps=steps, where=derivation.where,
                             models=derivation.models, name=derivation.name)
    report = verify_derivation(wrong, FAST)
    assert report.status == "failed"
    assert rejected_at(report) == {(4, "rule")}


def test_single_logit_variance_and_within_row_spread_part_ways():
    """The exact engine, as a question: under row-factor Var(S) grows like d^2 while the spread
    softmax sees is linear; Monte Carlo of real rows at d = 64 backs the spread."""
    model = get_model("row-factor")
    engine = ExactEvaluator(model)
    variance = engine.value(Var(dot_product))
    spread = engine.value(E((dot_product - other_dot_product)**2) / 2)
    assert variance.as_poly(d).degree() == 2 and spread.as_poly(d).degree() == 1
    (result,) = check_claim(Eq(E((dot_product - other_dot_product)**2) / 2, spread), model,
                            dims=(64,))
    assert result.status == "pass"


def test_the_conditional_spread_needs_the_query_mean_and_an_independent_key():
    """Dropping m_q' Sigma_kk m_q is refuted (the gaussian-row patterns have non-zero means);
    under gaussian-means, where k depends on q, the Isserlis step that treats them as
    independent fails too."""
    from sdpa_proofs import Sigma_kk, Sigma_qq

    derivation = bundled("conditional_spread_mean")
    alignment = Sum(Sigma_qq[i, j] * Sigma_kk[i, j], (j, 1, d), (i, 1, d))
    wrong = type(derivation)(claim=Eq(derivation.claim.lhs, alignment),
                             steps=derivation.steps[:2] + [Step(alignment, "algebra")],
                             name="no_mean", models=derivation.models)
    report = verify_derivation(wrong, FAST)
    assert report.status == "failed" and {(3, "rule"), (3, "numeric")} <= rejected_at(report)
    dependent = type(derivation)(claim=derivation.claim, steps=derivation.steps,
                                 name="dependent", models=["gaussian-means"])
    report = verify_derivation(dependent, FAST)
    assert report.status == "failed" and (2, "rule") in rejected_at(report)


def test_the_spread_given_the_query_verifies_and_its_slips_are_refuted_where_made():
    """Var(u . k) = u' Sigma_kk u with the query held at u.  Dropping the cross terms i != j (as
    if the key's coordinates were independent) and keeping the common mean (E[(u . k)^2] for
    Var) are each refuted at the step that makes them, by every check."""
    from sdpa_proofs import Sigma_kk, m_k, query_value

    u = query_value
    derivation = bundled("conditional_spread")
    assert verify_derivation(derivation, FAST).status == "verified"
    diagonal = Sum(u[i] ** 2 * Sigma_kk[i, i], (i, 1, d))
    wrong = with_step(derivation, 4, Step(diagonal, ["linearity", "isserlis"]),
                      claim=Eq(derivation.claim.lhs, diagonal))
    assert {(4, "rule"), (4, "exact"), (4, "numeric")} <= rejected_at(
        verify_derivation(wrong, FAST))
    second_moment = derivation.steps[3].expr + Sum(u[i] * m_k[i], (i, 1, d)) ** 2
    wrong = with_step(derivation, 4, Step(second_moment, ["linearity", "isserlis"]),
                      claim=Eq(derivation.claim.lhs, second_moment))
    assert {(4, "rule"), (4, "exact"), (4, "numeric")} <= rejected_at(
        verify_derivation(wrong, FAST))


def test_a_query_is_held_at_a_value_only_when_the_keys_are_independent_of_it():
    """Given q = u a correlated key's law changes (its mean moves by Sigma_kq Sigma_qq^-1 u):
    the model refuses to stand for the conditional law then."""
    from sdpa_proofs import GaussianMatrixModel
    from sdpa_proofs.errors import BadInput

    with pytest.raises(BadInput, match="independent"):
        GaussianMatrixModel(name="conditioned", given_query=True)
    model = get_model("gaussian-row-given-query")
    assert model.vectors == (k,) and "independently of the query" in model.assumptions()[0]
