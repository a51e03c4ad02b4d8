"""Weights at initialisation: q = W_Q x, k = W_K y.  The bundled derivations verify under four
weight laws; independence is derived from independent weight matrices, and tying them breaks it
at the step that uses it."""

from dataclasses import replace
from pathlib import Path

import pytest
import sympy as sp
from sympy import Eq

from sdpa_proofs import S, Step, Var, d, dot_product, get_model, k, q, sigma_w, verify_derivation, x
from sdpa_proofs.isolation import load_file
from sdpa_proofs.moments import ExactEvaluator
from sdpa_proofs.runner import VerifySettings

FAST = VerifySettings(monte_carlo=False)
FOLDER = Path(__file__).resolve().parent.parent / "derivations" / "initialisation"


def bundled(name: str):
    (derivation,) = load_file(FOLDER / f"{name}.py")
    return derivation


@pytest.mark.parametrize("name", ["init_mean_zero", "init_variance", "init_variance_same_token"])
def test_the_initialisation_derivations_verify(name):
    report = verify_derivation(bundled(name), FAST)
    assert report.status == "verified", [(m.model, s.index, s.rule_check.reason)
                                         for m in report.models for s in m.steps
                                         if s.rule_check.status != "pass"]


def test_the_closed_form_against_a_direct_sum_over_weight_entries():
    """Var(q . k) by hand: S = sum_i sum_a sum_b W_ia x_a V_ib y_b with all entries
    independent, mean 0, variance sigma_w^2: only the squares of each term survive, giving
    d sigma_w^4 sum_a x_a^2 sum_b y_b^2; the exact engine on the latent model agrees."""
    model = get_model("init-uniform")
    y = [v for v in model.parameter_points[0] if str(v).startswith("y")]
    by_hand = d * sigma_w**4 * sum(v**2 for v in x) * sum(v**2 for v in sorted(y, key=str))
    assert sp.expand(ExactEvaluator(model).value(Var(dot_product)) - by_hand) == 0


def test_tied_weights_break_the_independence_step():
    """With W_K = W_Q and x = y, k = q: factorising E[q_i^2 k_i^2] is misapplied independence.
    The rule check names it at step 5, and the values refute it there (E[q_i^4] is not
    E[q_i^2]^2)."""
    same = get_model("init-same-token-normal")
    tied = replace(same, name="tied-weights", title="W_K = W_Q, the same token",
                   latents=same.latents[:3], loadings={q: same.loadings[q], k: same.loadings[q]})
    derivation = bundled("init_variance_same_token")
    wrong = type(derivation)(claim=derivation.claim, steps=derivation.steps,
                             where=derivation.where, models=[tied], name="tied")
    report = verify_derivation(wrong, FAST)
    assert report.status == "failed"
    assert report.models[0].steps[1].rule_check.status == "fail"  # E[S] = d sigma_w^2 |x|^2
    step5 = report.models[0].steps[4]
    assert step5.rule_check.status == "fail" and "dependent" in step5.rule_check.reason
    assert step5.numeric_check.status == "fail"


def test_a_claim_that_forgets_the_key_token_is_refuted():
    derivation = bundled("init_variance")
    wrong = type(derivation)(
        claim=Eq(Var(S), d * sigma_w**4 * sum(v**2 for v in x)), steps=derivation.steps[:-1]
        + [Step(d * sigma_w**4 * sum(v**2 for v in x), "count_terms")],
        where=derivation.where, models=derivation.models, name="forgets y")
    report = verify_derivation(wrong, FAST)
    assert report.status == "failed"
    last = report.models[0].steps[-1]
    assert last.rule_check.status == "fail" and last.numeric_check.status == "fail"
