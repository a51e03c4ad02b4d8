"""E[S] = d rho sigma_q sigma_k when each (q_i, k_i) is correlated with correlation rho.

The mean of the logit grows linearly in d: dividing by sqrt(d) leaves a mean of
sqrt(d) rho sigma_q sigma_k that still grows.
"""

from sympy import Eq, Sum

from sdpa_proofs import Derivation, E, S, Step, d, dot_product, i, k, q, rho, sigma_k, sigma_q

derivation = Derivation(
    title="With per-coordinate correlation the mean of the dot product grows like d",
    claim=Eq(E(S), d * rho * sigma_q * sigma_k),
    where={S: dot_product},
    models=["correlated-normal"],
    steps=[
        Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity", "expectation is linear"),
        Step(Sum(rho * sigma_q * sigma_k, (i, 1, d)), "isserlis",
             "$E[q_i k_i] = Cov(q_i, k_i) = \\rho\\sigma_q\\sigma_k$ for centred Gaussians"),
        Step(d * rho * sigma_q * sigma_k, "count_terms", "$d$ equal terms"),
    ],
)
