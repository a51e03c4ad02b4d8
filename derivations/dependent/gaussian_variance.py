"""Var(S) = tr(Sigma_qq Sigma_kk) + tr(Sigma_qk Sigma_qk) for jointly Gaussian q, k with zero
mean and any covariance blocks (Isserlis/Wick).

Both traces are sums of d^2 terms, but large cross-coordinate covariances are not enough to make
the variance grow like d^2: tr(Sigma_qq Sigma_kk) is the Frobenius inner product of the two
blocks, so what counts is how q's covariances line up with k's (and tr(Sigma_qk^2)).  Under
separate factors with beta = 0, Cov(q_i, q_j) = alpha^2 is of order one and Var(S) is linear.
"""

from _shared import variance_opening
from sympy import Eq, Sum

from sdpa_proofs import (Derivation, S, Sigma_kk, Sigma_qk, Sigma_qq, Step, Var, d,
                         dot_product, i, j)

derivation = Derivation(
    title="General Gaussian q, k: Var(S) = tr(Sigma_qq Sigma_kk) + tr(Sigma_qk Sigma_qk)",
    claim=Eq(Var(S), Sum(Sigma_qq[i, j] * Sigma_kk[j, i], (j, 1, d), (i, 1, d))
             + Sum(Sigma_qk[i, j] * Sigma_qk[j, i], (j, 1, d), (i, 1, d))),
    where={S: dot_product},
    models=["gaussian"],
    steps=[
        *variance_opening(split=False),
        Step(Sum(Sigma_qk[i, i] * Sigma_qk[j, j] + Sigma_qq[i, j] * Sigma_kk[i, j]
                 + Sigma_qk[i, j] * Sigma_qk[j, i], (j, 1, d), (i, 1, d))
             - Sum(Sigma_qk[i, i], (i, 1, d))**2, "isserlis",
             "the three pairings of $q_i, k_i, q_j, k_j$"),
        Step(Sum(Sigma_qq[i, j] * Sigma_kk[j, i], (j, 1, d), (i, 1, d))
             + Sum(Sigma_qk[i, j] * Sigma_qk[j, i], (j, 1, d), (i, 1, d)),
             ["expand_square", "algebra"],
             "$(\\operatorname{tr}\\Sigma_{qk})^2$ cancels the first pairing; "
             "$\\Sigma_{kk}$ is symmetric"),
    ],
)
