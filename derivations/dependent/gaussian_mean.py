"""E[S] = tr Sigma_qk for jointly Gaussian q, k with zero mean and any covariance."""

from sympy import Eq, Sum

from sdpa_proofs import Derivation, E, S, Sigma_qk, Step, d, dot_product, i, k, q

derivation = Derivation(
    title="General Gaussian q, k: the mean of the dot product is the trace of Sigma_qk",
    claim=Eq(E(S), Sum(Sigma_qk[i, i], (i, 1, d))),
    where={S: dot_product},
    models=["gaussian"],
    steps=[
        Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity", "expectation is linear"),
        Step(Sum(Sigma_qk[i, i], (i, 1, d)), "isserlis",
             "$E[q_i k_i] = Cov(q_i, k_i) = (\\Sigma_{qk})_{ii}$ at zero mean"),
    ],
)
