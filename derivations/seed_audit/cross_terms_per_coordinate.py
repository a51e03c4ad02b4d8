"""Seed, dependence section: "the cross terms E[q_i k_i q_j k_j] no longer vanish and may make
Var(S) proportional to d_k^2".

Under per-coordinate correlation the cross terms are rho^2 sigma_q^2 sigma_k^2, there are d(d-1)
of them, and they do give E[S^2] a d^2 term; but that term is E[S]^2, so Var(S) stays
d sigma_q^2 sigma_k^2 (1 + rho^2) (dependent/correlated_variance.py).  The seed's chain goes wrong
where it reuses Var(S) = E[S^2].  With dependence across coordinates (a shared factor) the claim is
right: see dependent/shared_factor_variance.py.
"""

from sympy import Eq, Sum

from sdpa_proofs import (Derivation, E, S, Step, SumOverDistinct, Var, d, dot_product, i, j, k,
                         lemma, q, rho, sigma_k, sigma_q)

sigma2 = sigma_q**2 * sigma_k**2

derivation = Derivation(
    title="Seed audit: per-coordinate correlation makes Var(S) grow like d^2 (refuted)",
    claim=Eq(Var(S), d * sigma2 * (1 + 2 * rho**2) + d * (d - 1) * rho**2 * sigma2),
    where={S: dot_product},
    models=["correlated-normal"],
    steps=[
        Step(E((S - E(S))**2), "variance_definition", "definition of variance"),
        Step(E(S**2), lemma(Eq(E(S), 0), "mean_zero"), "the seed keeps $Var(S) = E[S^2]$"),
        Step(E(Sum(q[i] * k[i] * q[j] * k[j], (j, 1, d), (i, 1, d))), "expand_square",
             "the square of a sum is a double sum"),
        Step(Sum(E(q[i]**2 * k[i]**2), (i, 1, d))
             + SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d),
             ["linearity", "split_diagonal"], "diagonal and cross terms"),
        Step(Sum(sigma2 * (1 + 2 * rho**2), (i, 1, d)) + SumOverDistinct(rho**2 * sigma2, i, j, d),
             "isserlis", "the cross terms are $\\rho^2\\sigma_q^2\\sigma_k^2 \\neq 0$"),
        Step(d * sigma2 * (1 + 2 * rho**2) + d * (d - 1) * rho**2 * sigma2, "count_terms",
             "$d(d-1)$ non-zero cross terms: a $d^2$ term"),
    ],
    expect_refuted_at=2,
)
