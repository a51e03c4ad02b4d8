"""Var(S) = alpha^2 beta^2 d^2 + d (alpha^2 sigma_k^2 + beta^2 sigma_q^2 + sigma_q^2 sigma_k^2)
when q loads on a factor z and k on an independent factor z'.

Here E[S] = 0, so Var(S) = E[S^2], and yet the variance grows like d^2: what matters is
dependence across coordinates, not correlation between q and k.
"""

from _shared import DIAGONAL_SEPARATE, LINEAR, variance_opening
from sympy import Eq, Sum

from sdpa_proofs import (Derivation, S, Step, SumOverDistinct, Var, alpha, beta, d, dot_product,
                         i, j)

derivation = Derivation(
    title="Independent factors in q and in k: zero mean, yet variance of order d^2",
    claim=Eq(Var(S), alpha**2 * beta**2 * d**2 + d * LINEAR),
    where={S: dot_product},
    models=["separate-factors"],
    steps=[
        *variance_opening(),
        Step(Sum(DIAGONAL_SEPARATE, (i, 1, d)) + SumOverDistinct(alpha**2 * beta**2, i, j, d)
             - Sum(0, (i, 1, d))**2, "isserlis",
             "Gaussian moments: $E[q_i k_i] = 0$; for $i \\neq j$ one pairing through $z$ and "
             "one through $z'$"),
        Step(d * DIAGONAL_SEPARATE + d * (d - 1) * alpha**2 * beta**2, "count_terms",
             "$d$ and $d(d-1)$ terms"),
        Step(alpha**2 * beta**2 * d**2 + d * LINEAR, "algebra", "collect powers of $d$"),
    ],
)
