"""Pointwise claims are checked at points the model can produce, corners of bounded supports
included: a claim true on the support is not refuted outside it, and a claim false only at a
corner is refuted there by every check that evaluates points."""

import numpy as np
import sympy as sp
from sympy import Eq, Ge, Le, Sum, exp, log

from sdpa_proofs import (
    MaxOver,
    exact_check,
    get_model,
    i,
    k,
    logit_range,
    n,
    numeric_check,
    q,
    sigma_k,
    sigma_q,
    z,
)
from sdpa_proofs.distributions import FAMILIES
from sdpa_proofs.montecarlo import check_claim
from sdpa_proofs.numeric import NumericSettings
from sdpa_proofs.supports import Corners, Scaled, Tie, bounded_latents, corner_counts

UNIFORM_LOGITS = get_model("uniform-logits")
R = logit_range
normaliser = Sum(exp(z[i]), (i, 1, n))
ENTROPY = log(normaliser) - Sum(z[i] * exp(z[i]), (i, 1, n)) / normaliser


def at_corner(t):
    """H with t of n logits at R and the others at 0, by hand."""
    total = t * exp(R) + n - t
    return log(total) - t * R * exp(R) / total


def statuses(before, after, model, relation="="):
    return (exact_check(before, after, model, relation=relation).status,
            numeric_check(before, after, model, NumericSettings(), relation=relation).status)


def test_corners_put_the_first_k_coordinates_at_the_top_of_each_bounded_latent():
    for family in FAMILIES:
        source = Corners(np.random.default_rng(1), [0, 2, 3])
        draws = source.standard(family, 0, (5, 3))
        if family.end is None:
            assert not source.bounded
            continue
        end = float(family.end)
        assert source.bounded and np.array_equal(np.abs(draws), np.full((5, 3), end))
        assert np.array_equal(draws[:3] > 0, [[False] * 3, [True, True, False], [True] * 3])


def test_scaled_and_tied_latents_stay_in_the_support():
    rng = np.random.default_rng(3)
    for family in FAMILIES:
        for factor in (8, 1 / 8):
            draws = Scaled(rng, factor).standard(family, 0, (1000, 4))
            if family.end is not None:
                assert np.all(np.abs(draws) <= float(family.end) + 1e-12)
            if family.two_points:
                assert np.allclose(np.abs(draws), float(family.end))
        tied = Tie(rng).standard(family, 0, (6, 4))
        assert np.all(tied == tied[:, :1])


def test_corner_counts_cover_every_count_or_a_spread_of_them():
    assert corner_counts(5) == [0, 1, 2, 3, 4, 5]
    many = corner_counts(4096)
    assert many[0] == 0 and many[-1] == 4096 and set(range(33)) <= set(many)
    assert len(many) < 1100


def test_only_models_with_bounded_latents_have_corners():
    assert bounded_latents(UNIFORM_LOGITS, UNIFORM_LOGITS.parameter_points[0])
    for name in ("gaussian-logits", "independent-normal", "gaussian", "independent-laplace"):
        model = get_model(name)
        assert not bounded_latents(model, model.parameter_points[0]), name


def test_a_claim_true_on_a_two_point_support_is_not_refuted_off_it():
    # q_1^2 = sigma_q^2 for every Rademacher draw; scaled or random coordinates would refute it
    model = get_model("independent-rademacher")
    exact, numeric = statuses(q[1] ** 2, sigma_q ** 2, model)
    assert exact != "fail" and numeric == "pass"
    exact, numeric = statuses(q[1] ** 2, 2 * sigma_q ** 2, model)
    assert exact == "fail" and numeric == "fail"


def test_a_claim_about_a_line_is_checked_on_the_line():
    # aligned models put k on the line k = (sigma_k / sigma_q) q: points off it are not theirs
    for name in ("aligned-uniform", "aligned-normal"):
        model = get_model(name)
        exact, numeric = statuses(k[1], sigma_k / sigma_q * q[1], model)
        assert exact != "fail" and numeric == "pass", name
        exact, numeric = statuses(k[1], sigma_k / sigma_q * q[1] + q[1] ** 2 / 7, model)
        assert exact == "fail" and numeric == "fail", name


def test_a_bound_true_on_the_range_holds_and_one_too_tight_fails_at_a_corner():
    assert statuses(z[1], R, UNIFORM_LOGITS, "<=") == ("pass", "pass")
    exact, numeric = statuses(z[1], R * sp.Rational(99, 100), UNIFORM_LOGITS, "<=")
    assert exact == "fail" and numeric == "fail"
    results = check_claim(Le(z[1], R * sp.Rational(99, 100)), UNIFORM_LOGITS)
    assert all(r.status == "fail" and "corners of the support" in r.reason for r in results)


def test_the_entropy_floor_holds_at_every_corner_and_its_one_key_version_does_not():
    """min over corners of H is the floor (t = 0..n); t = 1 alone is too high from n = 8 on,
    which only the corners show: at n <= 3 and at random points the one-key floor holds."""
    t = sp.Symbol("t", integer=True, nonnegative=True)
    floor = -MaxOver(-at_corner(t), (t, 0, n))
    assert statuses(ENTROPY, floor, UNIFORM_LOGITS, ">=") == ("pass", "pass")
    assert all(r.status == "pass" for r in check_claim(Ge(ENTROPY, floor), UNIFORM_LOGITS))
    one_key = at_corner(1)
    exact, numeric = statuses(ENTROPY, one_key, UNIFORM_LOGITS, ">=")
    assert exact == "pass" and numeric == "fail"  # exact: n <= 4 only, where it holds
    assert numeric_check(ENTROPY, one_key, UNIFORM_LOGITS,
                         NumericSettings(), relation=">=").counterexample["n"] == 8
    # by hand: at n = 8, R = 2 two logits at the top give less entropy than one
    assert (at_corner(2) - at_corner(1)).subs({n: 8, R: 2}).evalf() < -0.02
    results = check_claim(Ge(ENTROPY, one_key), UNIFORM_LOGITS)
    assert all(r.status == "fail" for r in results)


def test_sums_and_maxima_of_a_function_of_the_index_alone_are_sampled():
    t = sp.Symbol("t", integer=True, nonnegative=True)
    claim = Eq(MaxOver(-(t - 3) ** 2, (t, 0, n)) + Sum(t, (t, 1, n)), n * (n + 1) / 2)
    assert all(r.status == "pass" for r in check_claim(claim, UNIFORM_LOGITS))
    wrong = Eq(MaxOver(-(t - 3) ** 2, (t, 0, n)) + Sum(t, (t, 1, n)), n * (n - 1) / 2)
    assert all(r.status == "fail" for r in check_claim(wrong, UNIFORM_LOGITS))


def test_a_linear_combination_is_the_sum_written_out_to_the_last_bit():
    """Block by block, each element gets c0 x0 + c1 x1 + ... + mean in that order: the same
    doubles as the sum of whole arrays, for every shape a model asks for, a latent shared by
    the coordinates (rows, 1) among them, and for a row longer than a block."""
    from sdpa_proofs.supports import COMBINED_BLOCK, linear_combination

    rng = np.random.default_rng(5)
    for shape in [(3, 5), (4096, 64), (7, 3 * COMBINED_BLOCK + 11), (1, 2**18),
                  (COMBINED_BLOCK + 3, 1)]:
        rows, width = shape
        terms = [(rng.standard_normal(shape), 0.4285714285714285),
                 (rng.standard_normal((rows, 1)), -1.25),
                 (rng.standard_normal(shape), 1.1456439237389600)]
        for mean in (0.0, -0.75):
            for used in (terms[:1], terms[1:2], terms):
                written_out = sum((c * x for x, c in used[1:]), used[0][1] * used[0][0]) + mean
                got = linear_combination(used, mean, shape)
                assert got.shape == shape and not got.flags.writeable
                np.testing.assert_array_equal(got, np.broadcast_to(written_out, shape))
    np.testing.assert_array_equal(linear_combination([], 0.5, (2, 3)), np.full((2, 3), 0.5))
