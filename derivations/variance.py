"""Var(S) = d sigma_q^2 sigma_k^2, the seed's main computation ("方差 Var(S)").

E[S^2] is a double sum over (i, j); its d diagonal terms are E[q_i^2]E[k_i^2] = sigma_q^2 sigma_k^2
and its d(d - 1) off-diagonal terms factor into four means, each zero.
"""

from sympy import Eq, Sum

from sdpa_proofs import (Derivation, E, S, Step, SumOverDistinct, Var, cite, d, dot_product, i, j,
                         k, q, sigma_k, sigma_q)

from mean_zero import derivation as mean_zero

derivation = Derivation(
    title="The variance of the dot product grows linearly in d",
    claim=Eq(Var(S), d * sigma_q**2 * sigma_k**2),
    where={S: dot_product},
    steps=[
        Step(E((S - E(S)) ** 2), "variance_definition", "definition of variance"),
        Step(E(S**2), cite(mean_zero), "$E[S] = 0$, proved in mean_zero"),
        Step(E(Sum(q[i] * k[i] * q[j] * k[j], (j, 1, d), (i, 1, d))), "expand_square",
             "the square of a sum is a double sum"),
        Step(Sum(E(q[i]**2 * k[i]**2), (i, 1, d))
             + SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d),
             ["linearity", "split_diagonal"],
             "expectation is linear; the $d$ terms with $i = j$ and the $d(d-1)$ with $i \\neq j$"),
        Step(Sum(E(q[i]**2) * E(k[i]**2), (i, 1, d))
             + SumOverDistinct(E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]), i, j, d),
             "independence",
             "$q_i, k_i$ independent; for $i \\neq j$ all four coordinates are independent"),
        Step(Sum((Var(q[i]) + E(q[i])**2) * (Var(k[i]) + E(k[i])**2), (i, 1, d))
             + SumOverDistinct(E(q[i]) * E(k[i]) * E(q[j]) * E(k[j]), i, j, d),
             "second_moment", "$E[X^2] = Var(X) + E[X]^2$"),
        Step(Sum(sigma_q**2 * sigma_k**2, (i, 1, d)) + SumOverDistinct(0, i, j, d),
             ["model_variance", "zero_mean"], "variances $\\sigma_q^2, \\sigma_k^2$, means zero"),
        Step(d * sigma_q**2 * sigma_k**2, "count_terms",
             "$d$ equal diagonal terms; the off-diagonal sum is zero"),
    ],
)
