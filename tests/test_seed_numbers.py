"""Numbers quoted in the docs about the seed, re-derived: the exact tail of S = q . k for unit
Gaussian coordinates (used for "values in the hundreds") against Monte Carlo, and the
large-n statements about softmax against simulation."""

import mpmath
import numpy as np


def tail(t: float, d: int) -> mpmath.mpf:
    """P(S > t) for S = sum of d products of independent standard normals: S = (X - Y)/2 with X,
    Y independent chi^2_d, so P(S > t) = E[P(X > Y + 2t)]."""
    with mpmath.workdps(30):
        def density(y):
            return mpmath.exp(-y / 2) * y ** (mpmath.mpf(d) / 2 - 1) / (
                2 ** (mpmath.mpf(d) / 2) * mpmath.gamma(mpmath.mpf(d) / 2))

        def survival(x):
            return mpmath.gammainc(mpmath.mpf(d) / 2, x / 2, mpmath.inf, regularized=True)

        return mpmath.quad(lambda y: density(y) * survival(y + 2 * t), [0, d, 2 * d, mpmath.inf])


def test_the_exact_tail_of_the_logit_against_monte_carlo():
    """Where Monte Carlo sees the tail (2 to 3 standard deviations at d = 64), the formula
    agrees within 4 standard errors; the quoted numbers follow from it."""
    rng = np.random.default_rng(3)
    d, n = 64, 400_000
    logits = np.concatenate([np.einsum("ij,ij->i", rng.standard_normal((50_000, d)),
                                       rng.standard_normal((50_000, d)))
                             for _ in range(n // 50_000)])
    for t in (16.0, 24.0):
        p = float(tail(t, d))
        observed = np.mean(logits > t)
        assert abs(observed - p) <= 4 * np.sqrt(p * (1 - p) / n)
    assert abs(tail(100, 512) - mpmath.mpf("5.795e-6")) < mpmath.mpf("0.01e-6")
    assert 2.9 < float(2 * tail(100, 512) * 512**2) < 3.1  # entries of a 512 x 512 matrix


def test_the_entropy_deficit_reaches_s2_over_2_only_as_n_grows():
    """At s = 2 the deficit log n - E[H] grows with n towards 2 (the docs quote 1.13, 1.77)."""
    rng = np.random.default_rng(5)
    deficits = []
    for n in (16, 256):
        z = 2.0 * rng.standard_normal((4000, n))
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        entropy = -(p * np.log(p)).sum(axis=1)
        deficits.append((np.log(n) - entropy.mean(), entropy.std() / np.sqrt(4000)))
    (small, e_small), (large, e_large) = deficits
    assert abs(small - 1.13) < 4 * e_small + 0.01 and abs(large - 1.77) < 4 * e_large + 0.01
    assert small < large < 2
