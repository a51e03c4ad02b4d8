"""E[S] = d (rho sigma_q sigma_k + mu_q mu_k) with non-zero means and correlation rho."""

from sympy import Eq, Sum

from sdpa_proofs import (Derivation, E, S, Step, d, dot_product, i, k, mu_k, mu_q, q, rho, sigma_k,
                         sigma_q)

derivation = Derivation(
    title="With non-zero means the mean of the dot product is d (Cov + product of means)",
    claim=Eq(E(S), d * (rho * sigma_q * sigma_k + mu_q * mu_k)),
    where={S: dot_product},
    models=["correlated-normal-means"],
    steps=[
        Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity", "expectation is linear"),
        Step(Sum(rho * sigma_q * sigma_k + mu_q * mu_k, (i, 1, d)), "isserlis",
             "$E[q_i k_i] = Cov(q_i, k_i) + E[q_i]E[k_i]$ for Gaussians"),
        Step(d * (rho * sigma_q * sigma_k + mu_q * mu_k), "count_terms", "$d$ equal terms"),
    ],
)
