"""E[S^2] = d sigma_q^2 sigma_k^2 (1 + rho^2) + d^2 rho^2 sigma_q^2 sigma_k^2.

With per-coordinate correlation the d(d - 1) cross terms E[q_i k_i q_j k_j] = rho^2 sigma_q^2
sigma_k^2 no longer vanish: that is where a d^2 term comes from.  It sits in the second moment,
that is in E[S]^2, not in the variance (see correlated_variance).
"""

from sympy import Eq, Sum

from sdpa_proofs import (Derivation, E, S, Step, SumOverDistinct, d, dot_product, i, j, k, q, rho,
                         sigma_k, sigma_q)

sigma2 = sigma_q**2 * sigma_k**2

derivation = Derivation(
    title="With per-coordinate correlation the second moment gains a d^2 term",
    claim=Eq(E(S**2), d * sigma2 * (1 + rho**2) + d**2 * rho**2 * sigma2),
    where={S: dot_product},
    models=["correlated-normal"],
    steps=[
        Step(E(Sum(q[i] * k[i] * q[j] * k[j], (j, 1, d), (i, 1, d))), "expand_square",
             "the square of a sum is a double sum"),
        Step(Sum(E(q[i]**2 * k[i]**2), (i, 1, d))
             + SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d),
             ["linearity", "split_diagonal"], "the $d$ terms with $i = j$ and the $d(d-1)$ others"),
        Step(Sum(sigma2 * (1 + 2 * rho**2), (i, 1, d)) + SumOverDistinct(rho**2 * sigma2, i, j, d),
             "isserlis", "Gaussian moments; pairs with $i \\neq j$ are independent"),
        Step(d * sigma2 * (1 + 2 * rho**2) + d * (d - 1) * rho**2 * sigma2, "count_terms",
             "$d$ diagonal and $d(d-1)$ off-diagonal terms"),
        Step(d * sigma2 * (1 + rho**2) + d**2 * rho**2 * sigma2, "algebra",
             "collect powers of $d$"),
    ],
)
