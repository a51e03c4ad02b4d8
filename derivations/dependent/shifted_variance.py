"""Var(S) with non-zero means mu_q, mu_k and per-coordinate correlation rho:

    Var(S) = d (sigma_q^2 sigma_k^2 (1 + rho^2) + mu_q^2 sigma_k^2 + mu_k^2 sigma_q^2
                + 2 rho mu_q mu_k sigma_q sigma_k),

still linear in d, while E[S] = d (rho sigma_q sigma_k + mu_q mu_k) makes E[S^2] grow like d^2.
Trained models have sizeable means, so this is the realistic per-coordinate case.
"""

from _shared import variance_opening
from sympy import Eq, Sum

from sdpa_proofs import (Derivation, S, Step, SumOverDistinct, Var, d, dot_product, i, j, mu_k,
                         mu_q, rho, sigma_k, sigma_q)

pair_mean = rho * sigma_q * sigma_k + mu_q * mu_k  # E[q_i k_i]
pair_square = (mu_q**2 * mu_k**2 + mu_k**2 * sigma_q**2 + mu_q**2 * sigma_k**2
               + 4 * rho * mu_q * mu_k * sigma_q * sigma_k
               + sigma_q**2 * sigma_k**2 * (1 + 2 * rho**2))  # E[q_i^2 k_i^2]

derivation = Derivation(
    title="With non-zero means the variance is still linear in d",
    claim=Eq(Var(S), d * (sigma_q**2 * sigma_k**2 * (1 + rho**2) + mu_q**2 * sigma_k**2
                          + mu_k**2 * sigma_q**2 + 2 * rho * mu_q * mu_k * sigma_q * sigma_k)),
    where={S: dot_product},
    models=["correlated-normal-means"],
    steps=[
        *variance_opening(),
        Step(Sum(pair_square, (i, 1, d)) + SumOverDistinct(pair_mean**2, i, j, d)
             - Sum(pair_mean, (i, 1, d))**2, "isserlis",
             "Gaussian moments with means; distinct pairs are independent"),
        Step(d * pair_square + d * (d - 1) * pair_mean**2 - d**2 * pair_mean**2, "count_terms",
             "$d$, $d(d-1)$ and $d$ terms"),
        Step(d * (sigma_q**2 * sigma_k**2 * (1 + rho**2) + mu_q**2 * sigma_k**2
                  + mu_k**2 * sigma_q**2 + 2 * rho * mu_q * mu_k * sigma_q * sigma_k),
             "algebra", "the $d^2$ terms cancel"),
    ],
)
