"""Var(S) = 2 alpha^2 beta^2 d^2 + d (alpha^2 sigma_k^2 + beta^2 sigma_q^2 + sigma_q^2 sigma_k^2)
when q_i = alpha z + sigma_q e_i and k_i = beta z + sigma_k f_i share one factor z.

Dependence *across* coordinates (every q_i, k_j loads on z) is what makes the variance itself grow
like d^2; then S / sqrt(d) has a variance that grows like d and only S / d stays O(1).
"""

from _shared import DIAGONAL_SAME, LINEAR, variance_opening
from sympy import Eq, Sum

from sdpa_proofs import (Derivation, S, Step, SumOverDistinct, Var, alpha, beta, d, dot_product,
                         i, j)

derivation = Derivation(
    title="A shared factor makes the variance grow like d^2",
    claim=Eq(Var(S), 2 * alpha**2 * beta**2 * d**2 + d * LINEAR),
    where={S: dot_product},
    models=["shared-factor"],
    steps=[
        *variance_opening(),
        Step(Sum(DIAGONAL_SAME, (i, 1, d)) + SumOverDistinct(3 * alpha**2 * beta**2, i, j, d)
             - Sum(alpha * beta, (i, 1, d))**2, "isserlis",
             "Gaussian moments: for $i \\neq j$, three pairings through $z$ each give "
             "$\\alpha^2\\beta^2$"),
        Step(d * DIAGONAL_SAME + 3 * d * (d - 1) * alpha**2 * beta**2 - d**2 * alpha**2 * beta**2,
             "count_terms", "$d$, $d(d-1)$ and $d$ terms"),
        Step(2 * alpha**2 * beta**2 * d**2 + d * LINEAR, "algebra", "collect powers of $d$"),
    ],
)
