"""The empirical measurements and predictions, without a transformer: every statistic against a
brute-force loop over the (query, key) pairs, and the predictions against exact theory on data
drawn from laws whose moments are known."""

import itertools

import numpy as np
import pytest
import sympy as sp

from sdpa_proofs import moment
from sdpa_proofs.arrays import array_value
from sdpa_proofs.errors import UnsupportedExpression
from sdpa_proofs.measurements import measure_head
from sdpa_proofs.models import Sigma_kk, Sigma_qk, Sigma_qq, d, m_k, m_q
from sdpa_proofs.predictions import (
    ROW_GIVEN_QUERY,
    correlated_fit,
    factors_fit,
    gaussian_arrays,
    gaussian_fit,
    independent_fit,
    independent_vectors_fit,
    predict,
)


def sequences_of(rng, lengths, dim, mean_q=0.0, mean_k=0.0, mix=None):
    """Sequences of (Q, K): each token's (q, k) = ``mix`` times standard Gaussian latents (which
    correlates its coordinates, and q_i with k_i), plus the means."""
    mix = np.eye(2 * dim) if mix is None else mix
    out = []
    for n in lengths:
        x = rng.normal(size=(n, mix.shape[1])) @ mix.T
        out.append((x[:, :dim] + mean_q, x[:, dim:] + mean_k))
    return out


def brute_force(sequences):
    """Every statistic by a loop over the pairs (a, b) of each sequence."""
    pairs, logits, products, rows = [], [], [], []
    entropies, spreads, row_variances = [], [], []
    for queries, keys in sequences:
        n, dim = queries.shape
        for a in range(n):
            row = [float(queries[a] @ keys[b]) for b in range(n)]
            p = np.exp(np.array(row) / np.sqrt(dim))
            p /= p.sum()
            entropies.append(-(p * np.log(p)).sum() / np.log(n))
            mean = sum(row) / n
            spread = sum((s - mean) ** 2 for s in row) / n
            for b in range(n):
                pairs.append((queries[a], keys[b]))
                logits.append(row[b])
                products.append(queries[a] * keys[b])
                spreads.append(spread)
                # half the mean square difference of two keys drawn independently
                row_variances.append(sum((s - t) ** 2 for s in row for t in row) / (2 * n * n))
            rows.append(a)
    q = np.array([p for p, _ in pairs])
    k = np.array([k for _, k in pairs])
    logits, products = np.array(logits), np.array(products)
    return {
        "mean": logits.mean(), "variance": logits.var(), "products": products.var(axis=0).sum(),
        "spread": np.mean(spreads), "entropy": np.mean(entropies), "m_q": q.mean(axis=0),
        "m_k": k.mean(axis=0), "qq": q.T @ q / len(q), "kk": k.T @ k / len(k),
        "qk": q.T @ k / len(q), "row_share": np.mean(row_variances) / logits.var(),
        "pair_spread": np.mean(row_variances),
        "cross": sum(np.cov(products[:, i], products[:, j], bias=True)[0, 1]
                     for i in range(q.shape[1]) for j in range(q.shape[1]) if i != j),
    }


@pytest.fixture
def uneven_sequences():
    rng = np.random.default_rng(7)
    mix = rng.normal(size=(6, 6)) / 2
    return sequences_of(rng, [2, 3, 5, 7, 4], 3, mean_q=rng.normal(size=3),
                        mean_k=rng.normal(size=3), mix=mix)


def test_every_statistic_matches_a_loop_over_the_pairs(uneven_sequences):
    m, ref = measure_head(uneven_sequences), brute_force(uneven_sequences)
    assert m.pairs == 4 + 9 + 25 + 49 + 16 and m.rows == 21
    for got, want in [(m.logit_mean, ref["mean"]), (m.logit_variance, ref["variance"]),
                      (m.coordinate_products_variance, ref["products"]),
                      (m.cross_coordinate, ref["cross"]),
                      (m.within_row_spread, ref["spread"]), (m.entropy_ratio, ref["entropy"]),
                      (m.row_share, ref["row_share"]), (m.within_row_spread, ref["pair_spread"])]:
        assert got == pytest.approx(want, rel=1e-10, abs=1e-12)
    for got, want in [(m.moments.m_q, ref["m_q"]), (m.moments.m_k, ref["m_k"]),
                      (m.moments.second_qq, ref["qq"]), (m.moments.second_kk, ref["kk"]),
                      (m.moments.second_qk, ref["qk"])]:
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [2, 3, 7])
def test_one_sequence_makes_q_and_k_independent_and_the_law_free_prediction_exact(n):
    """Within one sequence the pair law is the product of the tokens' q-law and k-law, so q and
    k are independent under it, and Var(S), E[S^2] and the row spread of independent q, k
    (functions of the first two moments alone, whatever the law) are the measured ones
    exactly, even for heavy-tailed coordinates: measurement and prediction are the same kind of
    quantity, divisors included."""
    rng = np.random.default_rng(n)
    queries, keys = rng.standard_t(2.5, size=(n, 4)), rng.standard_t(2.5, size=(n, 4)) + 0.3
    m = measure_head([(queries, keys)])
    for ratio in independent_vectors_fit(m).ratios(m).values():
        assert ratio == pytest.approx(1, rel=1e-10)


def test_the_gaussian_mean_of_s_is_the_measured_mean_for_any_law(uneven_sequences):
    """E[S] = tr(Sigma_qk) + m_q . m_k holds for every law: the moment API's closed form,
    evaluated on the measured moments, is the measured mean however far from Gaussian."""
    m = measure_head(uneven_sequences)
    closed_form = moment("E[S]", "gaussian-means").closed_form
    assert array_value(closed_form, gaussian_arrays(m.moments), {}, d) == pytest.approx(
        m.logit_mean, rel=1e-12)


def test_keys_common_to_their_row_leave_softmax_nothing_to_see():
    """All keys of a row equal: every row is flat (spread 0, entropy log n), while the logits
    still vary from row to row."""
    rng = np.random.default_rng(3)
    sequences = [(rng.normal(size=(n, 4)), np.tile(rng.normal(size=4), (n, 1)))
                 for n in (3, 6, 9)]
    m = measure_head(sequences)
    assert m.within_row_spread == pytest.approx(0, abs=1e-20)
    assert m.entropy_ratio == pytest.approx(1, rel=1e-12)
    assert m.logit_variance > 0.1 and m.row_share == pytest.approx(0, abs=1e-18)


def test_the_same_tokens_correlation_is_measured_apart_from_the_pair_law():
    """k = 0.5 q + noise within each token: Corr(q_i, k_i) of the same token is
    0.5 / sqrt(0.25 + 1) (exact theory), while under the pair law, where q and k of one
    sequence are independent, almost nothing of it is left."""
    rng = np.random.default_rng(6)
    sequences = []
    for _ in range(3000):
        q = rng.normal(size=(8, 3))
        sequences.append((q, 0.5 * q + rng.normal(size=(8, 3))))
    m = measure_head(sequences)
    np.testing.assert_allclose(m.token_correlations, 0.5 / np.sqrt(1.25), atol=0.02)
    assert np.all(np.abs(m.coordinate_correlations) < 0.1)


def test_bad_sequences_are_refused():
    with pytest.raises(ValueError, match="no sequences"):
        measure_head([])
    with pytest.raises(ValueError, match="tokens >= 2"):
        measure_head([(np.ones((1, 3)), np.ones((1, 3)))])
    with pytest.raises(ValueError, match="same shape"):
        measure_head([(np.ones((3, 3)), np.ones((3, 2)))])
    with pytest.raises(ValueError, match="shape \\(tokens, d\\)"):
        measure_head([(np.ones(3), np.ones(3))])
    with pytest.raises(ValueError, match="overflow"):
        measure_head([(np.full((2, 2), 1e160), np.full((2, 2), 1e160))])
    # lists and generators are sequences too
    assert measure_head(([[1.0, 0.0], [0.0, 1.0]], [[1.0, 1.0], [2.0, 0.0]]) for _ in range(2)
                        ).pairs == 8


def test_independent_coordinates_are_predicted_by_every_model():
    """q_i ~ N(0, 1.5^2), k_i ~ N(0, 0.5^2), all independent: Var(S) = E[S^2] = d 1.5^2 0.5^2
    (exact theory), and every model's prediction from the measured moments is near it."""
    rng = np.random.default_rng(11)
    dim, scale = 6, np.diag([1.5] * 6 + [0.5] * 6)
    m = measure_head(sequences_of(rng, [16] * 400, dim, mix=scale))
    theory = dim * 1.5 ** 2 * 0.5 ** 2
    assert m.logit_variance == pytest.approx(theory, rel=0.05)
    for p in predict(m):
        for value in (p.variance, p.second_moment, p.row_spread):
            if value is not None:
                assert value == pytest.approx(theory, rel=0.05), p.model
    fitted = independent_fit(m).parameters
    assert (fitted["sigma_q"], fitted["sigma_k"]) == pytest.approx((1.5, 0.5), rel=0.02)


def test_dependence_across_coordinates_is_what_the_independent_pairs_models_miss():
    """q and k independent of each other, each with correlated coordinates and a mean: the
    pair law is exactly Gaussian, Var(S) = tr(Sigma_qq Sigma_kk) + m_q' Sigma_kk m_q
    + m_k' Sigma_qq m_k (exact theory), and only the general Gaussian gets it."""
    rng = np.random.default_rng(5)
    dim = 4
    a_q, a_k = np.eye(dim) + 0.8, np.eye(dim) * 0.7 + 0.5  # shared parts: cross-coordinate
    mean_q, mean_k = np.array([1.0, -0.5, 0.3, 0.0]), np.array([0.2, 0.4, -1.0, 0.6])
    mix = np.block([[a_q, np.zeros((dim, dim))], [np.zeros((dim, dim)), a_k]])
    m = measure_head(sequences_of(rng, [12] * 1500, dim, mean_q, mean_k, mix))
    s_q, s_k = a_q @ a_q.T, a_k @ a_k.T
    theory = np.trace(s_q @ s_k) + mean_q @ s_k @ mean_q + mean_k @ s_q @ mean_k
    assert m.logit_variance == pytest.approx(theory, rel=0.05)
    assert gaussian_fit(m).variance == pytest.approx(theory, rel=0.05)
    assert independent_vectors_fit(m).variance == pytest.approx(theory, rel=0.05)
    # a row of n = 12 keys spreads by (n - 1)/n of what independent keys would (two keys drawn
    # from the row are the same one with probability 1/n): the model is for the latter
    assert independent_vectors_fit(m).row_spread * 11 / 12 == pytest.approx(
        m.within_row_spread, rel=0.05)
    for fit in (independent_fit, correlated_fit):
        assert abs(fit(m).variance / theory - 1) > 0.2, fit.__name__
    # the dependence here is a factor loading on every coordinate alike (the 0.8 and 0.5 in
    # a_q, a_k), which the factor model has, and the means are small beside it
    assert factors_fit(m).variance == pytest.approx(theory, rel=0.05)


def test_the_factor_model_predicts_data_of_its_own_law():
    """Each token's q_i = alpha z + sigma e_i and k_i = beta z' + sigma f_i, z and z'
    independent: the pair law is separate-factors, whose Var(S) is
    d(alpha^2 beta^2 d + alpha^2 sigma^2 + beta^2 sigma^2 + sigma^4) (exact theory)."""
    rng = np.random.default_rng(4)
    dim, alpha, beta, sigma = 6, 0.9, 0.7, 0.5
    mix = np.zeros((2 * dim, 2 * dim + 2))
    mix[:dim, 0], mix[dim:, 1] = alpha, beta
    mix[:, 2:] = sigma * np.eye(2 * dim)
    m = measure_head(sequences_of(rng, [16] * 600, dim, mix=mix))
    theory = dim * (alpha ** 2 * beta ** 2 * dim + (alpha ** 2 + beta ** 2) * sigma ** 2
                    + sigma ** 4)
    assert m.logit_variance == pytest.approx(theory, rel=0.05)
    fitted = factors_fit(m)
    assert (fitted.parameters["alpha"], fitted.parameters["beta"]) == pytest.approx(
        (alpha, beta), rel=0.05)
    assert fitted.variance == pytest.approx(theory, rel=0.05)
    assert fitted.row_spread * 15 / 16 == pytest.approx(m.within_row_spread, rel=0.05)
    assert independent_fit(m).variance < 0.6 * theory  # the d^2 term it cannot have


def test_a_context_shared_by_query_and_keys_is_what_only_the_general_gaussian_sees():
    """A latent c of each sequence in every token's q and k (q = c + e, k = B c + f): q_a and
    k_b of two tokens are dependent through c, Sigma_qk = B^T, and the exact Gaussian
    Var(S) = tr(Sigma_qq Sigma_kk) + tr(Sigma_qk Sigma_qk) gains the second trace, which a model
    with q independent of k cannot have.  (Neither prediction is an identity of the data.)"""
    rng = np.random.default_rng(8)
    dim = 4
    lift = 1.2 * np.eye(dim)  # tr(Sigma_qk^2) = 5.76 beside tr(Sigma_qq Sigma_kk) = 19.52
    sequences = []
    for _ in range(4000):
        context = rng.normal(size=dim)
        n = 6
        sequences.append((context + rng.normal(size=(n, dim)),
                          context @ lift.T + rng.normal(size=(n, dim))))
    m = measure_head(sequences)
    s_qq, s_kk, s_qk = np.eye(dim) * 2, lift @ lift.T + np.eye(dim), lift.T
    theory = np.trace(s_qq @ s_kk) + np.trace(s_qk @ s_qk)
    assert m.logit_variance == pytest.approx(theory, rel=0.05)
    assert gaussian_fit(m).variance == pytest.approx(theory, rel=0.05)
    assert independent_vectors_fit(m).variance == pytest.approx(theory - 5.76, rel=0.05)


def test_a_per_coordinate_correlation_is_recovered():
    """(q_i, k_i) of the same token correlated by rho; a key of another token independent:
    the pair law's correlation is rho times the share of pairs with a = b (1/n)."""
    rng = np.random.default_rng(2)
    dim, rho, n = 3, 0.6, 4
    mix = np.block([[np.eye(dim), np.zeros((dim, dim))],
                    [rho * np.eye(dim), np.sqrt(1 - rho ** 2) * np.eye(dim)]])
    m = measure_head(sequences_of(rng, [n] * 20000, dim, mix=mix))
    assert correlated_fit(m).parameters["rho"] == pytest.approx(rho / n, abs=0.01)


def entry_values(arrays: dict, dim: int) -> dict:
    """The matrix entries as SymPy substitutions, indices 1..dim."""
    values = {}
    for base, array in arrays.items():
        for position in itertools.product(range(dim), repeat=array.ndim):
            values[base[tuple(p + 1 for p in position)]] = sp.Float(float(array[position]), 30)
    return values


@pytest.mark.parametrize("question,model", [("Var(S)", "gaussian-means"),
                                            ("E[S**2]", "gaussian-means"),
                                            (ROW_GIVEN_QUERY, "gaussian-row")])
def test_array_evaluation_is_the_closed_form_expanded_at_that_d(question, model):
    """The arrays' evaluation of a closed form against SymPy's: the sums expanded at d = 3 and
    every entry substituted."""
    rng = np.random.default_rng(1)
    dim = 3
    factor = rng.normal(size=(2 * dim, 2 * dim))
    covariance, mean = factor @ factor.T, rng.normal(size=2 * dim)
    arrays = {Sigma_qq: covariance[:dim, :dim], Sigma_kk: covariance[dim:, dim:],
              Sigma_qk: covariance[:dim, dim:], m_q: mean[:dim], m_k: mean[dim:]}
    closed_form = moment(question, model).closed_form
    expanded = closed_form.xreplace({d: dim}).doit().xreplace(entry_values(arrays, dim))
    assert array_value(closed_form, arrays, {}, d) == pytest.approx(float(expanded), rel=1e-12)


def test_array_evaluation_refuses_what_it_cannot_evaluate():
    i, j = sp.symbols("i j", integer=True)
    arrays = {m_q: np.ones(3)}
    with pytest.raises(UnsupportedExpression, match="no array for m_k"):
        array_value(sp.Sum(m_k[i], (i, 1, d)), arrays, {}, d)
    with pytest.raises(UnsupportedExpression, match="only sums over 1..d"):
        array_value(sp.Sum(m_q[i], (i, 2, d)), arrays, {}, d)
    with pytest.raises(UnsupportedExpression, match="only sums over 1..d"):  # a range of i
        array_value(sp.Sum(sp.Sum(m_q[j], (j, i, d)), (i, 1, d)), arrays, {}, d)
    for outside in (m_q[0], m_q[4], sp.Sum(m_q[i - 1], (i, 1, d)), m_q[sp.Rational(3, 2)]):
        with pytest.raises(UnsupportedExpression, match="outside the entries 1..3"):
            array_value(outside, arrays, {}, d)
    # a function NumPy defines otherwise (np.sinc is sin(pi x)/(pi x)) is not evaluated
    with pytest.raises(UnsupportedExpression, match="cannot evaluate sinc"):
        array_value(sp.Sum(sp.sinc(m_q[i]), (i, 1, d)), arrays, {}, d)
    with pytest.raises(UnsupportedExpression, match="no finite real value"):
        array_value(sp.Sum(sp.sqrt(-m_q[i]), (i, 1, d)), arrays, {}, d)
    with pytest.raises(UnsupportedExpression, match="no value for the dimension"):
        array_value(sp.Sum(m_q[i], (i, 1, d)), {}, {}, d)
    with pytest.raises(UnsupportedExpression, match="does not sum over: i"):  # even at d = 1
        array_value(m_q[i] * sp.Sum(m_q[i], (i, 1, d)), {m_q: np.ones(1)}, {}, d)
    # an infinity or NaN on the way is refused, though a later step would hide it
    for hidden in (sp.exp(-1 / m_q[1]), sp.KroneckerDelta(sp.exp(1000 * m_q[2]), 1),
                   sp.sign(1 / m_q[1]), sp.Pow(sp.log(-m_q[2]), 0, evaluate=False)):
        with pytest.raises(UnsupportedExpression, match="no finite real value"):
            array_value(hidden, {m_q: np.array([0.0, 1.0, 2.0])}, {}, d)
    for dimension in (3.7, -2, 0, 1e30):
        with pytest.raises(UnsupportedExpression, match="a dimension is a positive integer"):
            array_value(sp.Sum(i, (i, 1, d)), {}, {d: dimension}, d)
    with pytest.raises(UnsupportedExpression, match="not all d, d x d"):
        array_value(sp.Sum(Sigma_qq[i, j], (i, 1, d), (j, 1, d)), {Sigma_qq: np.ones((5, 3))},
                    {}, d)
    # powers of indices in floats, not in wrapping int64: sum_ij i^j at d = 30 against SymPy
    assert array_value(sp.Sum(i ** j, (i, 1, d), (j, 1, d)), {}, {d: 30}, d) == pytest.approx(
        float(sp.Sum(i ** j, (i, 1, 30), (j, 1, 30)).doit()), rel=1e-12)
    with pytest.raises(UnsupportedExpression, match="does not sum over"):
        array_value(m_q[i] * sp.Sum(m_q[i], (i, 1, d)), arrays, {}, d)
    with pytest.raises(UnsupportedExpression, match="no value for j"):
        array_value(sp.Sum(m_q[i] * m_q[j], (i, 1, d)), arrays, {}, d)
    with pytest.raises(UnsupportedExpression, match="no value for"):
        array_value(sp.Symbol("rho") * sp.Sum(m_q[i], (i, 1, d)), arrays, {}, d)
    # a Kronecker delta and powers evaluate: sum_ij delta_ij m_i m_j^2 = sum_i m_i^3
    values = np.array([1.0, -2.0, 3.0])
    delta = sp.Sum(sp.KroneckerDelta(i, j) * m_q[i] * m_q[j] ** 2, (i, 1, d), (j, 1, d))
    assert array_value(delta, {m_q: values}, {}, d) == pytest.approx((values ** 3).sum())
