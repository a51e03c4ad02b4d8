"""The spread of a row's logits given its query, on average:
tr(Sigma_qq Sigma_kk) + m_q' Sigma_kk m_q.

Keys are drawn independently of the query (model gaussian-row: q ~ N(m_q, Sigma_qq) and k ~
N(m_k, Sigma_kk) independent).  Given q, the logit q . k has mean q . m_k, the part common to
the row that softmax ignores, and variance q' Sigma_kk q: that is the spread softmax sees in the
row of this query.  Its mean over queries is E[(q . (k - m_k))^2] (the law of total expectation:
E[(q . k - q . m_k)^2 | q] = q' Sigma_kk q), which this derivation evaluates:

    E[(sum_i q_i (k_i - m_k,i))^2]
        = sum_ij (Sigma_qq)_ij (Sigma_kk)_ij + sum_ij m_q,i (Sigma_kk)_ij m_q,j
        = tr(Sigma_qq Sigma_kk) + m_q' Sigma_kk m_q.

So the row spread grows like d^2 only when q's covariances (or its mean) line up with k's
covariances: the alignment of the blocks, not the size of either.
"""

from sympy import Eq, Sum

from sdpa_proofs import Derivation, E, Sigma_kk, Sigma_qq, Step, d, i, j, k, m_k, m_q, q

centred = q[i] * (k[i] - m_k[i])  # the i-th term of q . (k - m_k)
alignment = Sum(Sigma_qq[i, j] * Sigma_kk[i, j], (j, 1, d), (i, 1, d))  # tr(Sigma_qq Sigma_kk)
mean_part = Sum(m_q[i] * Sigma_kk[i, j] * m_q[j], (j, 1, d), (i, 1, d))  # m_q' Sigma_kk m_q

derivation = Derivation(
    title="Given its query a row's logits spread by q' Sigma_kk q; on average "
          "tr(Sigma_qq Sigma_kk) + m_q' Sigma_kk m_q",
    claim=Eq(E(Sum(centred, (i, 1, d))**2), alignment + mean_part),
    models=["gaussian-row"],
    steps=[
        Step(E(Sum(centred * centred.xreplace({i: j}), (j, 1, d), (i, 1, d))), "expand_square",
             "the square of a sum is a double sum"),
        Step(Sum((Sigma_qq[i, j] + m_q[i] * m_q[j]) * Sigma_kk[i, j], (j, 1, d), (i, 1, d)),
             ["linearity", "isserlis"],
             "$q$ and $k$ independent: $E[q_i q_j] = (\\Sigma_{qq})_{ij} + m_{q,i} m_{q,j}$ "
             "and $E[(k_i - m_{k,i})(k_j - m_{k,j})] = (\\Sigma_{kk})_{ij}$"),
        Step(alignment + mean_part, "algebra", "two sums"),
    ],
)
