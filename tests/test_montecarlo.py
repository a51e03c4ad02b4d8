"""Monte Carlo from one stream of draws: claims of several models checked together must keep
each model's own latents independent, and a wrong claim must still fail among right ones."""

import numpy as np
import pytest
from sources import GOOD, write
from sympy import Eq, Sum
from sympy import exp as sp_exp
from sympy import log as sp_log

from sdpa_proofs import E, Var, d, get_model, i, k, q, rho, sigma_k, sigma_q
from sdpa_proofs.distributions import FAMILIES, NORMAL, random_stream
from sdpa_proofs.isolation import verify_paths
from sdpa_proofs.montecarlo import check_claim, check_claims
from sdpa_proofs.runner import VerifySettings

S = Sum(q[i] * k[i], (i, 1, d))
SMALL = {"dims": (64,)}  # 200,000 samples of S at d = 64


def statuses(results):
    return [[r.status for r in per_claim] for per_claim in results]


def test_a_wrong_claim_fails_among_right_ones_that_share_its_draws():
    """Theory: E[S] = 0 and Var(S) = d sigma_q^2 sigma_k^2 for independent coordinates; with
    k_i = rho sigma_k/sigma_q q_i + noise, E[S] = d rho sigma_q sigma_k.  Both models take
    their latents from the same chunks, so a sampler that handed one latent to both q and k
    would break E[S] = 0 under the independent model."""
    independent, correlated = get_model("independent-normal"), get_model("correlated-normal")
    assert correlated.parameter_points[0][rho] != 0  # else E[S] = 0 would be right
    claims = [
        (Eq(E(S), 0), independent),
        (Eq(Var(S), d * sigma_q**2 * sigma_k**2), independent),
        (Eq(Var(S), 2 * d * sigma_q**2 * sigma_k**2), independent),  # twice too large
        (Eq(E(S), d * rho * sigma_q * sigma_k), correlated),
        (Eq(E(S), 0), correlated),  # the independence slip of the seed
    ]
    assert statuses(check_claims(claims, **SMALL)) == [["pass"], ["pass"], ["fail"], ["pass"],
                                                      ["fail"]]


def test_claims_checked_together_see_the_samples_they_would_see_alone():
    """Sharing draws across claims changes nothing for a claim: the same estimate either way."""
    model = get_model("shared-factor")
    alone = check_claim(Eq(E(S), 0), model, **SMALL)
    together = check_claims([(Eq(Var(S), 0), get_model("independent-uniform")),
                             (Eq(E(S), 0), model)], **SMALL)[1]
    assert alone[0].estimate == together[0].estimate


def test_vectors_built_once_per_chunk_for_every_d_are_those_built_at_each_d(monkeypatch):
    """A model without shared latents is built once per chunk and read at each d; claims that
    share S share its samples.  Built afresh at each d, for each claim, the estimates are the
    same to the last bit; a shared factor ties coordinates together, so it is built per d."""
    from sdpa_proofs.models import LatentLinearModel

    assert get_model("init-laplace").coordinatewise
    assert not get_model("shared-factor").coordinatewise
    claims = [(Eq(E(S), 0), get_model("independent-uniform")),
              (Eq(Var(S), d * sigma_q**2 * sigma_k**2), get_model("independent-uniform")),
              (Eq(E(S**2), 0), get_model("correlated-normal")),
              (Eq(Var(S), 0), get_model("shared-factor"))]
    dims = {"dims": (64, 100, 512)}  # 100: rows of d that do not fill a chunk
    once = check_claims(claims, **dims)
    monkeypatch.setattr(LatentLinearModel, "coordinatewise", property(lambda self: False))
    per_d = check_claims(claims, **dims)
    assert [[r.estimate for r in c] for c in once] == [[r.estimate for r in c] for c in per_d]


def test_a_model_whose_claim_cannot_be_sampled_leaves_the_others_alone():
    uniform = get_model("independent-uniform")
    results = check_claims([(Eq(E(q[i] * k[i]), 0), uniform),  # a free index: not sampled
                            (Eq(Var(S), d * sigma_q**2 * sigma_k**2), uniform)], **SMALL)
    assert statuses(results) == [["n/a"], ["pass"]]
    assert results[1][0].samples == 200_000


def test_sampled_latents_are_independent_within_a_model():
    """Under independent-normal, the sample correlation of q_1 and k_1 is 0 within its
    standard error 1/sqrt(n); q_1 has variance sigma_q^2 (relative error sqrt(2/n))."""
    from sdpa_proofs.montecarlo import _Draws

    model = get_model("independent-normal")
    point = model.parameter_points[0]
    n = 40_000
    arrays = model.sample_from(_Draws((1, 2, 3)), n, 4, point)
    first_q, first_k = arrays[q][:, 0], arrays[k][:, 0]
    assert abs(np.corrcoef(first_q, first_k)[0, 1]) < 4 / np.sqrt(n)
    variance = float(point[sigma_q]) ** 2
    assert abs(first_q.var() / variance - 1) < 4 * np.sqrt(2 / n)


def test_a_chunks_per_coordinate_draws_serve_every_d_in_its_own_shape():
    """The draws of one chunk: at d = 4 and d = 64 the same numbers read as (rows, d), each
    latent slot from a stream of its own (q and k stay independent), drawn once per chunk and
    read-only (no model can change what another reads)."""
    from sdpa_proofs.montecarlo import _Draws

    model = get_model("independent-normal")
    point = model.parameter_points[0]
    shared: dict = {}
    small = model.sample_from(_Draws((1, 4, 0), shared), 8192, 4, point)
    large = model.sample_from(_Draws((1, 64, 0), shared), 512, 64, point)
    np.testing.assert_array_equal(small[q].reshape(-1), large[q].reshape(-1))
    assert len(shared) == 2 and not any(a.flags.writeable for a in shared.values())
    n = small[q].size
    assert abs(np.corrcoef(small[q].reshape(-1), small[k].reshape(-1))[0, 1]) < 4 / np.sqrt(n)
    variance = float(point[sigma_q]) ** 2
    assert abs(small[q].var() / variance - 1) < 4 * np.sqrt(2 / n)


def test_verify_backs_every_claim_by_one_sampler_not_by_the_checkers(tmp_path, monkeypatch):
    """The checkers leave Monte Carlo to the sampler: were a checker to sample, the patched
    ``sample`` (inherited by the forked workers) would make its check an internal error."""
    import sdpa_proofs.runner as runner

    def no_sampling_here(*args):
        raise AssertionError("a checker sampled")

    monkeypatch.setattr(runner, "sample", no_sampling_here)
    write(tmp_path, "good.py", GOOD)
    heard = []
    run = verify_paths([str(tmp_path)], VerifySettings(monte_carlo_dimensions=(64,)),
                       lambda name, reports: heard.append(name))
    (report,) = run.derivations
    assert report.status == "verified", report.error
    (model,) = report.models
    assert [(r.d, r.status) for r in model.monte_carlo] == [(64, "pass")]
    assert "Monte Carlo under independent-normal" in heard


def test_a_sampler_that_dies_leaves_the_claims_undecided(tmp_path, monkeypatch):
    import os

    import sdpa_proofs.isolation as isolation

    monkeypatch.setattr(isolation, "_sample_sealed", lambda *args: os._exit(3))
    write(tmp_path, "good.py", GOOD)
    run = verify_paths([str(tmp_path)], VerifySettings(monte_carlo_dimensions=(64,)))
    (report,) = run.derivations
    (result,) = report.models[0].monte_carlo
    assert result.status == "undecided" and "exited (3)" in result.reason
    assert report.status == "undecided"


@pytest.mark.parametrize("stream", [random_stream, np.random.default_rng],
                         ids=["sampler's stream", "NumPy's default"])
@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_each_family_samples_its_own_law(family, stream):
    """The sample mean of X^2 and X^4 against the exact moments (tested against quadrature of
    the density in test_engines), within 5 standard errors, which E[X^8] gives."""
    sigma = 1.3
    draws = family.sample(stream(11), (400_000,), sigma)
    for power in (2, 4):
        exact = float(family.moment(power, sigma))
        spread = np.sqrt((float(family.moment(2 * power, sigma)) - exact**2) / draws.size)
        assert abs(np.mean(draws**power) - exact) <= 5 * spread + 1e-12
    assert abs(draws.mean()) <= 5 * sigma / np.sqrt(draws.size)


@pytest.mark.parametrize("sigma", [1.0, 0.37])
def test_normal_draws_are_numpys_normal_draws(sigma):
    """Normal.sample scales standard normals itself: the same numbers as NumPy's normal."""
    ours = NORMAL.sample(random_stream(5), (1000,), sigma)
    assert np.array_equal(ours, random_stream(5).normal(0.0, sigma, (1000,)))


def test_results_name_the_size_that_was_sampled():
    """A softmax claim is sampled at n logits, not at a dimension d: the report says n."""
    from sympy import exp

    from sdpa_proofs import n, s, z

    logits = get_model("gaussian-logits")
    (result,) = check_claim(Eq(E(Sum(exp(z[i]), (i, 1, n))), n * exp(s**2 / 2)), logits,
                            dims=(64,))
    assert result.status == "pass" and result.dimension == "n"
    (result,) = check_claim(Eq(E(S), 0), get_model("independent-normal"), dims=(64,))
    assert result.dimension == "d"


def test_a_moment_beside_the_coordinates_is_not_sampled_rather_than_a_crash():
    """max_l z_l + sum_i E[z_i^2] = max_l z_l + n s^2: the sampler cannot give E[...] from
    draws; it says so (n/a) instead of failing inside lambdify (hostile review, round 25)."""
    from sympy import Symbol

    from sdpa_proofs import E, MaxOver, n, s, z

    i, l = (Symbol(x, integer=True, positive=True) for x in "il")
    claim = Eq(MaxOver(z[l], (l, 1, n)) + Sum(E(z[i] ** 2), (i, 1, n)),
               MaxOver(z[l], (l, 1, n)) + n * s ** 2)
    (result,) = check_claim(claim, get_model("gaussian-logits"), dims=(8,))
    assert result.status == "n/a" and "a moment beside the coordinates" in result.reason


def test_claims_worked_out_of_order_come_back_in_the_order_given():
    """check_claims works a model's limit and pointwise claims one after another (they share
    samples drawn whole), but each result must stay with its claim: the same results as each
    claim alone.  Theory: lim_n n sum e^{2z}/(sum e^z)^2 = e^{s^2} (collision limit), and
    log sum e^z >= max z at every point (the largest term alone), with equality nowhere."""
    from sdpa_proofs import Lim, MaxOver, l, n, s, z

    logits = get_model("gaussian-logits")
    weights = Sum(sp_exp(z[i]), (i, 1, n))
    collision = n * Sum(sp_exp(2 * z[i]), (i, 1, n)) / weights**2
    largest = MaxOver(z[l], (l, 1, n))
    claims = [(Eq(Lim(collision, n), sp_exp(s**2)), logits),
              (Eq(Var(S), d * sigma_q**2 * sigma_k**2), get_model("independent-normal")),
              (sp_log(weights) <= largest, logits),  # wrong way round
              (Eq(Lim(collision, n), 1), logits),  # wrong: the limit of a uniform softmax
              (sp_log(weights) >= largest, logits)]
    dims = {"dims": (64, 512)}
    together = check_claims(claims, **dims)
    alone = [check_claim(claim, model, **dims) for claim, model in claims]
    assert statuses(together) == [["pass"] * 2, ["pass"] * 2, ["fail"] * 2, ["fail"] * 2,
                                  ["pass"] * 2]
    assert [[r.estimate for r in c] for c in together] == [[r.estimate for r in c]
                                                           for c in alone]


def test_claims_evaluated_in_blocks_of_rows_see_what_they_see_whole(monkeypatch):
    """Pointwise and limit claims are evaluated block by block (the cache); taken whole, the
    estimates, the failing rows and the first counterexample are the same.  z_1 <= c, c the
    largest z_1 of the first block's rows, fails first in a later block, at the row the draws
    themselves tell."""
    import sympy as sp

    from sdpa_proofs import Lim, montecarlo, n, s, z

    logits = get_model("gaussian-logits")
    z_1 = montecarlo.draw_samples(logits, 4096, logits.parameter_points[0],
                                  montecarlo.POINTWISE_SAMPLES, 2026)[z][:, 0]
    rows = montecarlo.ROW_BLOCK // 4096
    c = sp.Rational(float(z_1[:rows].max()))
    weights = Sum(sp_exp(z[i]), (i, 1, n))
    claims = [(z[1] <= c, logits),
              (Eq(Lim(n * Sum(sp_exp(2 * z[i]), (i, 1, n)) / weights**2, n), sp_exp(s**2)),
               logits)]
    dims = {"dims": (64, 4096)}
    blocked = check_claims(claims, **dims)
    monkeypatch.setattr(montecarlo, "ROW_BLOCK", 2**40)
    whole = check_claims(claims, **dims)
    assert [[(r.estimate, r.reason) for r in c] for c in blocked] == \
        [[(r.estimate, r.reason) for r in c] for c in whole]
    failing = np.flatnonzero(z_1 > float(c))
    assert failing[0] >= rows and blocked[1][0].status == "pass"
    assert f"fails at {len(failing)} of 2000 samples; the first: {z_1[failing[0]]:.12g} <= " \
        in blocked[0][1].reason


def test_the_families_read_off_sealed_data_are_the_models_own():
    """The parent groups samplers by latent family without building a file's expressions
    (sealing.drawn_families); what it reads is what the rebuilt model draws from."""
    from sdpa_proofs.models import MODELS, LatentLinearModel
    from sdpa_proofs.sealing import drawn_families, seal_model, unseal_model

    for name, model in MODELS.items():
        user = {"latent_linear": seal_model(model)["latent_linear"]} \
            if isinstance(model, LatentLinearModel) else None
        own = tuple(sorted({lat.family.name for lat in model.latents})) \
            if isinstance(model, LatentLinearModel) else None
        assert drawn_families(name) == drawn_families({"builtin": name}) == own
        if user is not None:
            rebuilt = unseal_model(user)
            assert drawn_families(user) == tuple(sorted({lat.family.name
                                                          for lat in rebuilt.latents}))
    assert drawn_families(5) is None and drawn_families({"latent_linear": 5}) is None


def test_models_that_combine_the_same_draws_alike_share_the_vector_and_only_then():
    """Within a chunk, a vector asked for twice with the same draws and numbers is built once;
    another number, another draw or another mean gives another vector.  An entry holds its
    draws, so a new array cannot take a kept one's id and be handed its combination."""
    from sdpa_proofs.montecarlo import _Draws

    source = _Draws((1, 64, 0))
    u = source.standard(NORMAL, 0, (8, 4))
    w = source.standard(NORMAL, 1, (8, 4))
    assert source.standard(NORMAL, 0, (8, 4)) is u  # one object per draw
    first = source.combined([(u, 0.5), (w, 2.0)], 0.0, (8, 4))
    assert source.combined([(u, 0.5), (w, 2.0)], 0.0, (8, 4)) is first
    for other, expected in [(([(u, 0.5), (w, 3.0)], 0.0), 0.5 * u + 3.0 * w),
                            (([(w, 0.5), (u, 2.0)], 0.0), 0.5 * w + 2.0 * u),
                            (([(u, 0.5), (w, 2.0)], 1.0), 0.5 * u + 2.0 * w + 1.0)]:
        np.testing.assert_array_equal(source.combined(*other, (8, 4)), expected)
    for value in range(50):  # a fresh array each time, freed after the call: ids come back
        got = source.combined([(np.full((8, 4), float(value)), 1.0)], 0.0, (8, 4))
        np.testing.assert_array_equal(got, np.full((8, 4), float(value)))


def test_pointwise_claims_that_share_parts_see_what_each_sees_alone():
    """The pointwise claims of a model share the parts with one number per row (the collision
    sum, the largest probability): each gets the results it gets checked alone, a wrong one
    among right ones fails, and another model's draws are no one's parts."""
    from sympy import Le

    from sdpa_proofs import MaxOver, n, softmax_p
    from sdpa_proofs.montecarlo import _ROW_VALUES, _corners_at, _draw, check_pointwise
    from sdpa_proofs.symbols import l as top

    collision = Sum(softmax_p(i) ** 2, (i, 1, n))
    largest = MaxOver(softmax_p(top), (top, 1, n))
    claims = [Le(collision, largest), Le(collision, largest ** 2), Le(largest ** 2, collision)]
    models = [get_model("gaussian-logits"), get_model("uniform-logits")]

    def fresh():
        _ROW_VALUES.clear()
        _draw.cache_clear()
        _corners_at.cache_clear()

    alone = []
    for model in models:
        for claim in claims:
            fresh()
            alone.append(check_pointwise(claim, model, dims=(64,)))
    fresh()
    together = [check_pointwise(claim, model, dims=(64,)) for model in models
                for claim in claims]
    assert together == alone
    assert [r[0].status for r in together] == ["pass", "fail", "pass"] * 2


def test_a_constant_s_is_judged_within_its_rounding_and_a_wrong_constant_still_fails():
    """Under aligned-rademacher k_i = (sigma_k / sigma_q) q_i with q_i = +-sigma_q, so S is the
    constant d sigma_q sigma_k and Var(S) = 0 (each q_i k_i is sigma_q sigma_k).  Its samples
    differ by rounding alone, whose spread had been read as a standard error: E[S] was 1534
    standard errors from d sigma_q sigma_k at d = 4096, Var(S) 276 from 0 at d = 512 (review
    round 86).  A constant off by a millionth, or a variance of 10^-6, is still refuted."""
    aligned = get_model("aligned-rademacher")
    right = check_claims([(Eq(E(S), d * sigma_q * sigma_k), aligned),
                          (Eq(Var(S), 0), aligned)])
    assert all(status in ("pass", "n/a") for per_claim in statuses(right)
               for status in per_claim), right
    assert "pass" in statuses(right)[0] and "pass" in statuses(right)[1]
    wrong = check_claims([(Eq(E(S), d * sigma_q * sigma_k * (1 + sp_exp(-14))), aligned),
                          (Eq(Var(S), sp_exp(-14)), aligned)])
    assert all("fail" in per_claim for per_claim in statuses(wrong)), wrong
