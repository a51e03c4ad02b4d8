"""E[S] = tr Sigma_qk + m_q . m_k for jointly Gaussian q, k with means m_q, m_k."""

from sympy import Eq, Sum

from sdpa_proofs import Derivation, E, S, Sigma_qk, Step, d, dot_product, i, k, m_k, m_q, q

derivation = Derivation(
    title="General Gaussian q, k with means: E[S] = tr Sigma_qk + m_q . m_k",
    claim=Eq(E(S), Sum(Sigma_qk[i, i] + m_q[i] * m_k[i], (i, 1, d))),
    where={S: dot_product},
    models=["gaussian-means"],
    steps=[
        Step(Sum(E(q[i] * k[i]), (i, 1, d)), "linearity", "expectation is linear"),
        Step(Sum(Sigma_qk[i, i] + m_q[i] * m_k[i], (i, 1, d)), "isserlis",
             "$E[q_i k_i] = Cov(q_i, k_i) + E[q_i] E[k_i]$"),
    ],
)
