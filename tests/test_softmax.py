"""Softmax saturation: statistics, exact two-logit integrals, large-n expansions, the scaling
comparison and its figures — each number against an independent method."""

import json

import mpmath
import numpy as np
import pytest

from sdpa_proofs import get_model
from sdpa_proofs.cli import main
from sdpa_proofs.scaling import scaling
from sdpa_proofs.softmax import (
    STATISTICS,
    exact_two_logits,
    gaussian_logit_statistics,
    large_n_limit,
    limit_applies,
    neglected,
    softmax,
    statistics,
)


def test_statistics_of_uniform_and_one_hot():
    n = 8
    uniform = statistics(np.full((1, n), 1 / n))
    one_hot = statistics(np.eye(n)[:1])
    assert uniform["entropy"][0] == pytest.approx(1) and one_hot["entropy"][0] == 0
    assert uniform["collision"][0] == pytest.approx(1) and one_hot["collision"][0] == n
    assert uniform["max_p"][0] == pytest.approx(1 / n) and one_hot["max_p"][0] == 1
    assert one_hot["jacobian"][0] == 0  # a saturated softmax passes no gradient


def test_jacobian_norm_against_the_matrix_and_its_bound():
    """||diag(p) - pp^T||_F from the closed form equals the matrix norm; ||J||_inf is at most
    2 (1 - max p), so J -> 0 as p -> one-hot."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 12))
        p = softmax(rng.normal(scale=3, size=n))
        jacobian = np.diag(p) - np.outer(p, p)
        assert statistics(p[None])["jacobian"][0] == pytest.approx(
            np.sqrt(n) * np.linalg.norm(jacobian), rel=1e-9)
        numeric = np.array([(softmax(np.eye(n)[j] * 1e-6 + np.log(p)) - p) / 1e-6
                            for j in range(n)]).T
        assert np.allclose(numeric, jacobian, atol=1e-5)  # J really is dp/dx
        assert np.abs(jacobian).sum(axis=1).max() <= 2 * (1 - p.max()) + 1e-12


@pytest.mark.parametrize("name", STATISTICS)
def test_two_logits_exact_integral_against_gauss_hermite_and_monte_carlo(name):
    s = 0.8
    value, digits = exact_two_logits(name, s, dps=30)
    assert digits >= 25
    if name == "max_p":  # a kink at t = 0: E[max] = 2 * integral over t > 0 of sigma(t) phi(t)
        with mpmath.workdps(30):
            scale = mpmath.sqrt(2) * mpmath.mpf(s)
            half = 2 * mpmath.quad(lambda t: mpmath.npdf(t, 0, scale) / (1 + mpmath.exp(-t)),
                                   [0, mpmath.inf])
        assert abs(value - half) < mpmath.mpf(10) ** -25
    else:  # smooth: Gauss-Hermite in the logit difference t = 2 s x, a different quadrature
        nodes, weights = np.polynomial.hermite.hermgauss(200)
        p = 1 / (1 + np.exp(-2 * s * nodes))
        hermite = (weights * statistics(np.stack([p, 1 - p], axis=-1))[name]).sum()
        assert float(value) == pytest.approx(hermite / np.sqrt(np.pi), rel=1e-8)
    monte_carlo = gaussian_logit_statistics(2, s, 200_000, np.random.default_rng(7))[name]
    assert monte_carlo.agrees_with(float(value))


def test_two_logits_limits_in_s():
    """s -> 0: uniform (entropy 1, collision 1); s large: one-hot (entropy, Jacobian -> 0)."""
    assert float(exact_two_logits("entropy", 1e-3)[0]) == pytest.approx(1, abs=1e-5)
    assert float(exact_two_logits("collision", 1e-3)[0]) == pytest.approx(1, abs=1e-5)
    assert float(exact_two_logits("entropy", 50)[0]) < 0.05
    assert float(exact_two_logits("jacobian", 50)[0]) < 0.05
    assert isinstance(exact_two_logits("max_p", 1)[0], mpmath.mpf)


@pytest.mark.parametrize("n,s", [(256, 0.3), (1024, 0.5), (4096, 0.7)])
def test_large_n_expansions_against_monte_carlo(n, s):
    assert limit_applies(n, s)
    estimates = gaussian_logit_statistics(n, s, 4000, np.random.default_rng(n))
    for name in ("entropy", "collision", "jacobian"):
        assert estimates[name].agrees_with(large_n_limit(name, n, s), slack=neglected(n, s)), name


def test_a_wrong_closed_form_is_rejected():
    n, s = 1024, 0.6
    estimates = gaussian_logit_statistics(n, s, 4000, np.random.default_rng(11))
    slack = neglected(n, s)
    wrong = {"collision": np.exp(s**2 / 2),                       # E[e^{sX}] for E[e^{2sX}]
             "entropy": (np.log(n) - s**2) / np.log(n),           # s^2 for s^2 / 2
             "jacobian": np.exp(s**2)}                            # missing the square root
    for name, value in wrong.items():
        assert not estimates[name].agrees_with(value, slack=slack), name
    assert large_n_limit("max_p", n, s) is None


def test_sqrt_d_keeps_the_independent_model_d_invariant_and_matches_gaussian_theory():
    rows = scaling(get_model("independent-normal"), dims=(16, 1024), ns=(256,), samples=200)
    by = {(r.scale, r.d): r for r in rows}
    # sd(S / sqrt(d)) = sigma_q sigma_k exactly, for every d
    assert by["√d", 16].logit_sd == pytest.approx(by["√d", 1024].logit_sd)
    assert by["√d", 16].logit_sd == pytest.approx(3 / 7 * 5 / 4)
    assert by["√d", 1024].gaussian_limits and all(by["√d", 1024].agreement.values())
    # c = 1 saturates as d grows, c = d flattens towards uniform
    assert by["1", 1024].estimates["entropy"].mean < by["1", 16].estimates["entropy"].mean < 0.8
    assert by["d", 1024].estimates["entropy"].mean > 0.999


def test_a_factor_common_to_the_row_cancels_and_one_per_key_saturates_sqrt_d():
    """Rows, not single logits: with the factor z common to the query and its keys,
    k_j - k_l = sigma_k (f_j - f_l), so the within-row sd at c = sqrt(d) is
    sigma_k sqrt(alpha^2 + sigma_q^2) for every d and sqrt(d) keeps the softmax spread out;
    with a factor per key the spread grows like sqrt(d) and sqrt(d) saturates, d does not."""
    common = {(r.scale, r.d): r for r in scaling(get_model("shared-factor"), dims=(64, 1024),
                                                   ns=(64,), samples=100)}
    per_key = {(r.scale, r.d): r for r in scaling(get_model("separate-factors"),
                                                    dims=(64, 1024), ns=(64,), samples=100)}
    sigma_q, sigma_k, alpha = 3 / 7, 5 / 4, 2 / 3  # the models' first parameter point
    for dim in (64, 1024):
        assert common["√d", dim].logit_sd == pytest.approx(sigma_k * (alpha**2 + sigma_q**2)**0.5)
    assert common["√d", 1024].estimates["max_p"].mean < 0.25
    assert per_key["√d", 1024].estimates["max_p"].mean > 0.5
    assert per_key["√d", 1024].logit_sd > 3 * per_key["√d", 64].logit_sd
    assert per_key["d", 1024].estimates["entropy"].mean > 0.9
    assert not common["√d", 1024].gaussian_limits  # no CLT with a shared factor: no comparison


def test_scaling_says_which_models_have_no_rows(capsys):
    assert main(["scaling", "--model", "gaussian-logits", "--d", "16"]) == 2
    err = capsys.readouterr().err
    assert "gaussian-logits" in err and "no query and keys" in err


def test_scaling_command_writes_table_json_and_figures(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    code = main(["scaling", "--model", "independent-normal", "--d", "16", "1024", "--n", "128",
                 "--samples", "50", "--json", str(tmp_path / "s.json"), "--plot",
                 str(tmp_path / "figures")])
    output = capsys.readouterr().out
    assert code == 0 and "independent-normal" in output
    rows = json.loads((tmp_path / "s.json").read_text())
    assert {r["scale"] for r in rows} == {"1", "√d", "d"} and len(rows) == 6
    for suffix in ("png", "svg"):
        figure = tmp_path / "figures" / f"scaling-independent-normal-n128.{suffix}"
        assert figure.stat().st_size > 5000
    assert (tmp_path / "figures" / "scaling-independent-normal-n128.png").read_bytes()[:4] \
        == b"\x89PNG"


def test_scaling_command_rejects_bad_values(capsys):
    assert main(["scaling", "--d", "1"]) == 2
    assert "--d, --n need values >= 2" in capsys.readouterr().err


# -- the softmax derivations ------------------------------------------------------------------

from pathlib import Path  # noqa: E402

from sympy import Derivative, Eq, KroneckerDelta, Sum, exp  # noqa: E402

from sdpa_proofs import Derivation, Step, i, j, m, n, softmax_p, verify_derivation, z  # noqa: E402
from sdpa_proofs.isolation import load_file  # noqa: E402
from sdpa_proofs.numeric import NumericSettings, numeric_check  # noqa: E402
from sdpa_proofs.registry import resolve  # noqa: E402
from sdpa_proofs.rulecheck import rule_check  # noqa: E402
from sdpa_proofs.runner import VerifySettings  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAST = VerifySettings(monte_carlo=False)


def test_bundled_softmax_derivations_verify():
    for name in ("jacobian", "jacobian_rows"):
        (derivation,) = load_file(ROOT / "derivations" / "softmax" / f"{name}.py")
        report = verify_derivation(derivation, FAST)
        assert report.status == "verified", name
        assert all(s.numeric_check.digits >= 30 for s in report.models[0].steps)


@pytest.mark.parametrize("wrong", [softmax_p(i) * (KroneckerDelta(i, j) + softmax_p(j)),
                                   softmax_p(i) * KroneckerDelta(i, j) - softmax_p(j),
                                   softmax_p(i) * (1 - softmax_p(j))])
def test_a_wrong_jacobian_is_rejected_with_a_counterexample(wrong):
    (right,) = load_file(ROOT / "derivations" / "softmax" / "jacobian.py")
    steps = list(right.steps[:-1]) + [Step(wrong, "algebra")]
    report = verify_derivation(Derivation(claim=Eq(right.claim.lhs, wrong), steps=steps,
                                          where=right.where, models=right.models,
                                          name="wrong"), FAST)
    last = report.models[0].steps[-1]
    assert report.status == "failed"
    assert last.rule_check.status == "fail"
    assert last.exact_check.status == "fail" and last.numeric_check.status == "fail"
    example = last.numeric_check.counterexample
    assert example["lhs"] != example["rhs"] and "n" in example and "i" in example


def test_a_derivative_is_not_a_constant_of_the_sum_over_its_variable():
    """SymPy counts d/dz_j's variable as bound, so free_symbols misses j: algebra must not pull
    the derivative out of the sum over j (that would 'prove' sum_j dp_i/dz_j = n dp_i/dz_j)."""
    model = get_model("gaussian-logits")
    before = Sum(Derivative(softmax_p(i), z[j]), (j, 1, n))
    after = n * Derivative(softmax_p(i), z[j])
    assert rule_check(before, after, resolve("algebra"), model).status != "pass"
    assert numeric_check(before, after, model, NumericSettings()).status == "fail"


def test_sifting_needs_the_delta_index_in_range_of_the_sum():
    model = get_model("gaussian-logits")
    partial = Sum(KroneckerDelta(i, m) * exp(z[m]), (m, 1, 3))  # i may exceed 3
    assert rule_check(partial, exp(z[i]), resolve("sift"), model).status == "fail"


def test_a_shift_dropped_from_the_normaliser_is_refuted_by_every_check():
    """softmax(z + c) = softmax(z) holds for every c; e^{z_i + c} / sum_m e^{z_m} does not, and
    the symbol c, which no model fixes, is given seeded values by the concrete checks."""
    from sympy import Eq, Sum, Symbol, exp

    from sdpa_proofs import Derivation, Step, VerifySettings, i, m, n, softmax_p, verify_derivation
    from sdpa_proofs import z as logits

    c = Symbol("c", real=True)
    for normaliser, verdicts in ((Sum(exp(logits[m] + c), (m, 1, n)), {"pass"}),
                                 (Sum(exp(logits[m]), (m, 1, n)), {"fail"})):
        derivation = Derivation(claim=Eq(exp(logits[i] + c) / normaliser, softmax_p(i)),
                                steps=[Step(softmax_p(i), "algebra")],
                                models=["gaussian-logits"])
        step = verify_derivation(derivation, VerifySettings(monte_carlo=False)).models[0].steps[0]
        assert {step.rule_check.status, step.exact_check.status,
                step.numeric_check.status} == verdicts


def test_at_uniform_p_only_the_trace_of_the_jacobian_is_large():
    """J = (I - 11^T/n)/n at uniform p: eigenvalues 1/n (n - 1 times) and 0, so ||J||_2 = 1/n
    while tr J = 1 - 1/n (the lower bound tr J >= 1 - max p is about the trace only)."""
    for keys in (2, 16, 256):
        p = np.full(keys, 1 / keys)
        jacobian = np.diag(p) - np.outer(p, p)
        assert np.linalg.norm(jacobian, 2) == pytest.approx(1 / keys)
        assert np.trace(jacobian) == pytest.approx(1 - 1 / keys)


def test_a_scale_fixed_in_n_does_not_keep_the_probability_of_the_key_ahead():
    """With lambda = log(p / (1 - p)) / Delta (no n in it), p* = p only for n = 1: the bundled
    derivation's claim with that scale is refuted, at n = 2 by the numeric check."""
    from sympy import Eq, Symbol, exp, log

    from sdpa_proofs import Derivation, Step, VerifySettings, verify_derivation

    margin, p = Symbol("Delta", positive=True), Symbol("pstar", positive=True)
    fixed = log(p / (1 - p)) / margin
    wrong = Derivation(claim=Eq(exp(fixed * margin) / (exp(fixed * margin) + n), p),
                       steps=[Step(p, "algebra")], models=["gaussian-logits"], name="fixed")
    step = verify_derivation(wrong, VerifySettings(monte_carlo=False)).models[0].steps[0]
    assert step.rule_check.status == "fail" and step.exact_check.status == "fail"
    assert step.numeric_check.status == "fail" and step.numeric_check.counterexample["n"] == 2
