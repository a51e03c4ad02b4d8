"""When each key brings a factor of its own, the within-row spread grows like d^2.

One query q against two keys k, k~ of the same row; the query loads on a factor z, and each key
on a factor of its own, z_1 and z_2 (model key-factors).  Then the factors do not cancel in
S - S~ = sum_i q_i (k_i - k~_i): the term beta (z_1 - z_2) sum_i q_i keeps alpha z d in it, and

    E[(S - S~)^2] / 2 = alpha^2 beta^2 d^2 + d (alpha^2 sigma_k^2 + beta^2 sigma_q^2
                                                  + sigma_q^2 sigma_k^2).

Dividing by sqrt(d) leaves a spread that grows like d: the softmax saturates, and only 1/d keeps
the logits of order one.  Whether "d, not sqrt(d)" is right is thus a question about the rows
(common factor: see within_row_spread_row_factor), not about the variance of one logit.
"""

from _spread import spread_opening
from sympy import Eq, Sum

from sdpa_proofs import (Derivation, E, S, S_tilde, Step, SumOverDistinct, alpha, beta, d,
                         dot_product, i, j, other_dot_product, sigma_k, sigma_q)

linear = alpha**2 * sigma_k**2 + beta**2 * sigma_q**2 + sigma_q**2 * sigma_k**2

derivation = Derivation(
    title="With a factor per key the within-row spread grows like d^2",
    claim=Eq(E((S - S_tilde)**2) / 2, alpha**2 * beta**2 * d**2 + d * linear),
    where={S: dot_product, S_tilde: other_dot_product},
    models=["key-factors"],
    steps=[
        *spread_opening(),
        Step((Sum(2 * (alpha**2 + sigma_q**2) * (beta**2 + sigma_k**2), (i, 1, d))
              + SumOverDistinct(2 * alpha**2 * beta**2, i, j, d)) / 2,
             ["linearity", "isserlis"],
             "$k_i - \\tilde k_i = \\beta (z_1 - z_2) + \\sigma_k (f_i - g_i)$; for $i \\neq j$ "
             "the factors leave $E[q_i q_j] \\cdot 2\\beta^2 = 2\\alpha^2\\beta^2$"),
        Step((d * 2 * (alpha**2 + sigma_q**2) * (beta**2 + sigma_k**2)
              + d * (d - 1) * 2 * alpha**2 * beta**2) / 2, "count_terms",
             "$d$ and $d(d-1)$ terms"),
        Step(alpha**2 * beta**2 * d**2 + d * linear, "algebra", "collect powers of $d$"),
    ],
)
