"""Seed, dependence section: "E[S] = Σ Cov(q_i, k_i)" when q_i and k_i are correlated.

True, for zero-mean coordinates (the seed's setting); with non-zero means the products of the
means are added (see dependent/shifted_mean.py; `--model correlated-normal-means` refutes this
derivation at its zero-mean step).  The seed's rider "not necessarily proportional to d_k" is
loose: with the same correlation in every coordinate the sum is exactly d rho sigma_q sigma_k.
"""

from sympy import Eq, Sum

from sdpa_proofs import Cov, Derivation, E, S, Step, d, dot_product, i, k, q

derivation = Derivation(
    title="Seed audit: E[S] is the sum of the coordinate covariances (verified)",
    claim=Eq(E(S), Sum(Cov(q[i], k[i]), (i, 1, d))),
    where={S: dot_product},
    models=["correlated-normal", "aligned-uniform", "shared-factor"],
    steps=[
        Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity", "expectation is linear"),
        Step(Sum(Cov(q[i], k[i]) + E(q[i]) * E(k[i]), (i, 1, d)), "covariance_definition",
             "$E[XY] = Cov(X, Y) + E[X]E[Y]$"),
        Step(Sum(Cov(q[i], k[i]), (i, 1, d)), "zero_mean", "zero-mean coordinates"),
    ],
)
