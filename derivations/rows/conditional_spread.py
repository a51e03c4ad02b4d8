"""The spread of a row's logits given its query: Var(q . k | q = u) = u' Sigma_kk u.

Softmax sees one query against the n keys of its row, and the keys are drawn independently of
the query.  So given q = u the key keeps its own law, k ~ N(m_k, Sigma_kk) (model
gaussian-row-given-query: only k is random, the query held at u), and the logit u . k of a key
spreads across the row by

    Var(u . k) = E[(sum_i u_i (k_i - m_k,i))^2] = sum_ij u_i (Sigma_kk)_ij u_j = u' Sigma_kk u,

while its mean u . m_k is common to the row, which softmax ignores.  Averaged over queries this
is tr(Sigma_qq Sigma_kk) + m_q' Sigma_kk m_q (conditional_spread_mean.py).
"""

from sympy import Eq, Sum

from sdpa_proofs import Derivation, E, Sigma_kk, Step, Var, d, i, j, k, m_k, query_value

u = query_value
logit = Sum(u[i] * k[i], (i, 1, d))  # q . k at q = u
centred = u[i] * (k[i] - m_k[i])  # the i-th term of u . (k - m_k)
spread = Sum(u[i] * Sigma_kk[i, j] * u[j], (j, 1, d), (i, 1, d))  # u' Sigma_kk u

derivation = Derivation(
    title="Given its query q = u, a row's logits spread by u' Sigma_kk u",
    claim=Eq(Var(logit), spread),
    models=["gaussian-row-given-query"],
    steps=[
        Step(E((logit - E(logit)) ** 2), "variance_definition", "definition of variance"),
        Step(E(Sum(centred, (i, 1, d)) ** 2), ["linearity", "isserlis"],
             "$E[u \\cdot k] = u \\cdot m_k$: $u$ is fixed"),
        Step(E(Sum(centred * centred.xreplace({i: j}), (j, 1, d), (i, 1, d))), "expand_square",
             "the square of a sum is a double sum"),
        Step(spread, ["linearity", "isserlis"],
             "$E[(k_i - m_{k,i})(k_j - m_{k,j})] = (\\Sigma_{kk})_{ij}$"),
    ],
)
