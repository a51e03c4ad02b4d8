"""Var(S) for jointly Gaussian q, k with means m_q, m_k and any covariance:

    Var(S) = tr(Sigma_qq Sigma_kk) + tr(Sigma_qk Sigma_qk)
             + m_k' Sigma_qq m_k + m_q' Sigma_kk m_q + 2 m_q' Sigma_qk' m_k.

The means add the variance of the linear part m_q'(k - m_k) + m_k'(q - m_q); for Gaussians the
third-order cross terms vanish.
"""

from _shared import variance_opening
from sympy import Eq, Sum

from sdpa_proofs import (Derivation, S, Sigma_kk, Sigma_qk, Sigma_qq, Step, Var, d,
                         dot_product, i, j, m_k, m_q)


def pairing(a, b, mean_a, mean_b):
    """E[XY] = Cov(X, Y) + E[X]E[Y]."""
    return a + mean_a * mean_b


quartic = m_q[i] * m_q[j] * m_k[i] * m_k[j]
# E[q_i k_i q_j k_j]: the three perfect pairings of (Cov + product of means), less 2 mean^4
fourth = (pairing(Sigma_qk[i, i], 0, m_q[i], m_k[i]) * pairing(Sigma_qk[j, j], 0, m_q[j], m_k[j])
          + pairing(Sigma_qq[i, j], 0, m_q[i], m_q[j]) * pairing(Sigma_kk[i, j], 0, m_k[i], m_k[j])
          + pairing(Sigma_qk[i, j], 0, m_q[i], m_k[j]) * pairing(Sigma_qk[j, i], 0, m_q[j], m_k[i])
          - 2 * quartic)
mean_term = Sigma_qk[i, i] + m_q[i] * m_k[i]

derivation = Derivation(
    title="General Gaussian q, k with means: the exact variance of the dot product",
    claim=Eq(Var(S), Sum(Sigma_qq[i, j] * Sigma_kk[j, i]
                         + Sigma_qk[i, j] * Sigma_qk[j, i]
                         + m_k[i] * Sigma_qq[i, j] * m_k[j]
                         + m_q[i] * Sigma_kk[i, j] * m_q[j]
                         + 2 * m_q[i] * Sigma_qk[j, i] * m_k[j], (j, 1, d), (i, 1, d))),
    where={S: dot_product},
    models=["gaussian-means"],
    steps=[
        *variance_opening(split=False),
        Step(Sum(fourth, (j, 1, d), (i, 1, d)) - Sum(mean_term, (i, 1, d))**2, "isserlis",
             "Isserlis with means: pairings of $(Cov + \\text{means})$, less $2\\mu^4$"),
        Step(Sum(Sigma_qq[i, j] * Sigma_kk[j, i]
                 + Sigma_qk[i, j] * Sigma_qk[j, i]
                 + m_k[i] * Sigma_qq[i, j] * m_k[j]
                 + m_q[i] * Sigma_kk[i, j] * m_q[j]
                 + 2 * m_q[i] * Sigma_qk[j, i] * m_k[j], (j, 1, d), (i, 1, d)),
             ["expand_square", "algebra"], "the square of the mean cancels; collect terms"),
    ],
)
