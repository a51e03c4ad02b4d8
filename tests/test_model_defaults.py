"""A model in a few lines: a LatentLinearModel needs only its latents and loadings; the name,
title, dimension and parameter points get defaults, the points chosen to respect every
assumption and to keep every loading real."""

import dataclasses

import pytest
import sympy as sp

from sdpa_proofs import (
    NORMAL,
    Derivation,
    E,
    Latent,
    LatentLinearModel,
    Step,
    VerifySettings,
    d,
    dot_product,
    i,
    k,
    q,
    verify_derivation,
)
from sdpa_proofs.errors import BadInput

r = sp.Symbol("r", real=True)
a = sp.Symbol("a", positive=True)


def correlated_pairs() -> LatentLinearModel:
    """q_i = a u_i, k_i = a (r u_i + sqrt(1 - r^2) w_i): pairs with correlation r."""
    return LatentLinearModel(latents=(Latent("u", NORMAL), Latent("w", NORMAL)),
                             loadings={q: {"u": a}, k: {"u": r * a, "w": a * sp.sqrt(1 - r**2)}})


def test_the_hidden_fields_get_defaults_and_the_points_keep_the_loadings_real():
    model = correlated_pairs()
    assert model.name == "latent-model" and model.title and model.dimension == d
    assert len(model.parameter_points) == 4  # one per sign and side of 1 (POINT_REGIONS)
    for point in model.parameter_points:
        assert point[a] > 0 and abs(point[r]) < 1  # a positive, sqrt(1 - r^2) real
    points = model.parameter_points
    assert all(p[x] != other[x] for p in points for other in points if other is not p
               for x in p)


def test_a_derivation_under_a_model_in_a_few_lines_verifies():
    """E[S] = d E[q_1 k_1] = d r a^2 (covariance of the pair, by hand)."""
    model = correlated_pairs()
    derivation = Derivation(
        claim=sp.Eq(E(dot_product), d * r * a**2),
        steps=[Step(sp.Sum(E(q[i] * k[i]), (i, 1, d)), "linearity"),
               Step(sp.Sum(r * a**2, (i, 1, d)), "model_moment"),
               Step(d * r * a**2, "count_terms")],
        models=[model], name="few_lines")
    report = verify_derivation(derivation, VerifySettings(monte_carlo_dimensions=(64,)))
    assert report.status == "verified"
    assert any("latent-model" in assumption for assumption in report.assumptions)


def test_loadings_that_no_values_make_real_are_a_clear_error():
    with pytest.raises(BadInput, match="no parameter values found"):
        LatentLinearModel(latents=(Latent("u", NORMAL),), loadings={q: {"u": sp.sqrt(-a)}})


def test_a_derivation_written_in_a_notebook_cell_is_named_after_its_title():
    """Jupyter runs a cell as a file such as /tmp/ipykernel_1/2.py, a prompt as <stdin>: the
    name comes from the title there, and from the file's stem for a file of its own."""
    source = ("from sympy import Eq\n"
              "from sdpa_proofs import Derivation, E, S, Step, dot_product\n"
              "made = Derivation(claim=Eq(E(S), 0), where={S: dot_product},\n"
              "                  steps=[Step(0, 'linearity')], title='The mean: E[S] = 0')\n")
    for file in ("/tmp/ipykernel_1/2.py", "<stdin>"):
        namespace: dict = {}
        exec(compile(source, file, "exec"), namespace)  # noqa: S102 - the test's own code
        assert namespace["made"].name == "the_mean_e_s_0"
    namespace = {}
    exec(compile(source, "/somewhere/my_claim.py", "exec"), namespace)  # noqa: S102
    assert namespace["made"].name == "my_claim"


# ---- a family by its usual parameter, a model from a covariance ---------------------------

def test_a_uniform_model_on_minus_a_to_a_has_variance_a_squared_over_3_and_corners_at_a():
    """Uniform(-a, a) has variance a^2 / 3 (the integral of x^2 / (2a) over [-a, a]); the
    points the checks try stay within [-a, a] and reach its ends."""
    from sdpa_proofs import UNIFORM, independent, moment, sigma_q
    from sdpa_proofs.supports import exact_points

    b = sp.Symbol("b", positive=True)
    model = independent(UNIFORM, UNIFORM.sd_from(a), UNIFORM.sd_from(b))
    assert model.name != "independent-uniform"  # not the built-in model of that name
    x = sp.Symbol("x", real=True)
    by_hand = sp.integrate(x**2 / (2 * a), (x, -a, a))
    assert sp.simplify(moment("Var(q[1])", model).closed_form - by_hand) == 0
    assert sp.simplify(moment("Var(S)", model).closed_form - d * a**2 * b**2 / 9) == 0
    point = model.parameter_points[0]
    values = {v for p in exact_points(model, [q[1], q[2]], 2, point) for v in p.values()}
    assert max(values) == point[a] and min(values) == -point[a]
    assert UNIFORM.sd_from(a) != sigma_q


def test_a_laplace_model_by_its_scale_b_has_variance_2_b_squared():
    from sdpa_proofs import LAPLACE, independent, moment

    x = sp.Symbol("x", real=True)
    by_hand = 2 * sp.integrate(x**2 * sp.exp(-x / a) / (2 * a), (x, 0, sp.oo))
    model = independent(LAPLACE, LAPLACE.sd_from(a), LAPLACE.sd_from(a), name="laplace-b")
    assert sp.simplify(moment("Var(k[1])", model).closed_form - by_hand) == 0


def test_a_model_from_a_covariance_block_with_means_has_the_moments_of_that_gaussian():
    """Var(q_i k_i) for a Gaussian pair with means (1, 0), sds s1, s2, correlation r is
    s1^2 s2^2 (1 + r^2) + s2^2 (Isserlis with means, by hand); the pairs are i.i.d. in i."""
    from sdpa_proofs import from_covariance, moment

    s1, s2 = sp.symbols("s1 s2", positive=True)
    model = from_covariance([[s1**2, r * s1 * s2], [r * s1 * s2, s2**2]], means={q: 1},
                            name="my-pairs")
    assert model.name == "my-pairs" and len(model.parameter_points) == 4
    assert all(abs(point[r]) < 1 for point in model.parameter_points)
    assert sp.simplify(moment("E[S]", model).closed_form - d * r * s1 * s2) == 0
    by_hand = d * (s1**2 * s2**2 * (1 + r**2) + s2**2)
    assert sp.simplify(moment("Var(S)", model).closed_form - by_hand) == 0


def test_the_seeds_proof_breaks_under_a_correlated_covariance_where_it_uses_independence():
    from pathlib import Path

    from sdpa_proofs import from_covariance
    from sdpa_proofs.isolation import load_file

    model = from_covariance([[a**2, r * a**2], [r * a**2, a**2]], name="pairs")
    (derivation,) = load_file(Path(__file__).parent.parent / "derivations" / "mean_zero.py")
    what_if = dataclasses.replace(derivation, models=[model])
    report = what_if.verify(VerifySettings(monte_carlo=False))
    failing = [s.index for s in report.models[0].steps if s.rule_check.status == "fail"]
    assert report.status == "failed" and failing == [2]  # E[q_i k_i] = E[q_i] E[k_i]
    assert any("pairs" in a_ for a_ in report.assumptions)


@pytest.mark.parametrize("covariance, why", [
    ([[1, 2], [3, 1]], "symmetric"),
    ([[1, 0, 0], [0, 1, 0], [0, 0, 1]], "symmetric 2 x 2"),
    ([[1, 2], [2, 1]], "not positive definite"),
])
def test_a_covariance_that_is_not_one_is_bad_input(covariance, why):
    from sdpa_proofs import from_covariance

    with pytest.raises(BadInput, match=why):
        from_covariance(covariance)


def test_a_covariance_of_a_vector_with_itself_is_bad_input():
    """(q_i, q_i) cannot have covariance [[1, 0], [0, 4]]: Cov(q_i, q_i) is Var(q_i); the
    model built from it kept the last block only, and E[q_1^2] = 4 verified (review, round 19)."""
    from sdpa_proofs import from_covariance

    with pytest.raises(BadInput, match="repeat"):
        from_covariance([[1, 0], [0, 4]], vectors=(q, q))


def test_a_covariance_of_numbers_makes_a_model_with_its_one_law():
    from sdpa_proofs import from_covariance, moment

    model = from_covariance([[1, sp.Rational(1, 2)], [sp.Rational(1, 2), 1]], name="numbers")
    assert model.parameter_points == [{}]
    assert moment("E[S]", model).closed_form == d / 2


def test_a_moment_under_a_model_of_ones_own_checks_its_points_and_its_vectors():
    from sdpa_proofs import moment

    bogus = LatentLinearModel(name="bogus", latents=(Latent("u", NORMAL), Latent("w", NORMAL)),
                              loadings={q: {"u": 1}, k: {"u": r, "w": sp.sqrt(1 - r**2)}},
                              parameter_points=[{r: 2}, {r: 3}])
    with pytest.raises(BadInput, match="not a real number"):
        moment("E[S**2]", bogus, d=3)
    only_q = LatentLinearModel(name="only-q", latents=(Latent("u", NORMAL),),
                               loadings={q: {"u": 1}})
    with pytest.raises(BadInput, match="no law for k"):
        moment("Var(S)", only_q)


def test_the_chosen_points_visit_each_sign_and_side_of_1():
    """r <= r^2 fails only on (0, 1), r^2 <= r only outside [0, 1], r^3 <= r^2 only beyond 1:
    a parameter of free sign is tried within and beyond 1 at both signs; one of fixed sign
    within and beyond 1, and a correlation within 1 at both signs."""
    s = sp.Symbol("s", real=True)
    model = LatentLinearModel(latents=(Latent("u", NORMAL), Latent("w", NORMAL)),
                              loadings={q: {"u": s, "w": a}, k: {"w": 1}})
    regions = {(abs(p[s]) > 1, p[s] > 0) for p in model.parameter_points}
    assert regions == {(False, True), (True, False), (True, True), (False, False)}
    assert {abs(p[a]) > 1 for p in model.parameter_points} == {False, True}
    assert all(p[a] > 0 for p in model.parameter_points)
    rho = sp.Symbol("rho", real=True)
    paired = LatentLinearModel(latents=(Latent("u", NORMAL), Latent("w", NORMAL)),
                               loadings={q: {"u": 1}, k: {"u": rho, "w": sp.sqrt(1 - rho**2)}})
    assert {p[rho] > 0 for p in paired.parameter_points} == {False, True}
    assert all(abs(p[rho]) < 1 for p in paired.parameter_points)


@pytest.mark.parametrize("claimed, bound", [
    (d * r, d * r**2),        # false on (0, 1)
    (d * r**2, d * r),        # false outside [0, 1]
    (d * r**3, d * r**2),     # false beyond 1 (review round 84)
    (d * r**2, -d * r**3),    # false below -1
])
def test_a_bound_false_in_one_region_is_refuted_at_the_chosen_points(claimed, bound):
    from sdpa_proofs.numeric import NumericSettings, numeric_check

    model = LatentLinearModel(latents=(Latent("u", NORMAL), Latent("w", NORMAL)),
                              loadings={q: {"u": r}, k: {"w": 1}})
    verdict = numeric_check(claimed, bound, model, NumericSettings(), relation="<=")
    assert verdict.status == "fail", verdict


def test_an_integer_loading_gets_points_nearest_0_and_beyond():
    """A loading h declared a positive integer was left out of the chosen points, and the model
    was refused with 'the coordinates of q load h, not a real number' (review round 88); Var(q_1)
    = h^2 now verifies, and E[q_1^2] >= 2 E[k_1^2], h^2 >= 2, false at h = 1, is refuted."""
    from sdpa_proofs.numeric import NumericSettings, numeric_check

    h = sp.Symbol("h", integer=True, positive=True)
    model = LatentLinearModel(latents=(Latent("u", NORMAL),), loadings={q: {"u": h}, k: {"u": 1}})
    assert sorted(p[h] for p in model.parameter_points)[:2] == [1, 2]
    assert all(p[h].is_Integer and p[h] > 0 for p in model.parameter_points)
    derivation = Derivation(claim=sp.Eq(E(q[1] ** 2), h**2), steps=[Step(h**2, "model_moment")],
                            models=[model], name="integral")
    report = verify_derivation(derivation, VerifySettings(monte_carlo_dimensions=(64,)))
    assert report.status == "verified" and report.conditions == ["h ∈ ℤ", "h > 0"], report
    verdict = numeric_check(E(q[1] ** 2), 2 * E(k[1] ** 2), model, NumericSettings(),
                            relation=">=")
    assert verdict.status == "fail", verdict


def test_an_integer_mean_is_tried_at_0_and_a_loading_never_is():
    """E[q_1]^2 >= 1 with E[q_1] = h, a nonnegative integer, is false at h = 0 alone, which no
    chosen point took (review round 89); a loading of 0 would leave q without a law."""
    from sdpa_proofs.algebra import small_integers

    h = sp.Symbol("h", integer=True, nonnegative=True)
    mean = LatentLinearModel(latents=(Latent("u", NORMAL),), loadings={q: {"u": 1}, k: {"u": 1}},
                             means={q: h})
    loading = LatentLinearModel(latents=(Latent("u", NORMAL),), loadings={q: {"u": h}, k: {"u": 1}})
    assert 0 in {p[h] for p in mean.parameter_points}
    assert 0 not in {p[h] for p in loading.parameter_points}
    assert small_integers(sp.Symbol("c", integer=True), 3) == (0, 1, -1)
    assert small_integers(sp.Symbol("c", integer=True, even=True, positive=True), 2) == (2, 4)
