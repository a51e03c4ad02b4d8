"""The spread of the aligned key's margin: Var(l* - l) = d sigma_q^2 sigma_k^2 (2 + rho^2) / c^2.

With the margin's mean d rho sigma_q sigma_k / c (alignment_margin_mean), the margin measured in
its own standard deviations is sqrt(d) rho / sqrt(2 + rho^2), whatever c: the scale decides how
large the logits are, not how well the aligned key stands out.  With c = sqrt(d) the margin
and its spread are sqrt(d) rho sigma_q sigma_k and O(1); with c = d, O(1) and O(1 / sqrt(d)).
"""

from sympy import Eq, Sum, Symbol

from sdpa_proofs import (Derivation, E, S, S_tilde, Step, SumOverDistinct, Var, d,
                         dot_product, i, j, k, ktilde, other_dot_product, q, rho, sigma_k,
                         sigma_q)

difference = q[i] * (k[i] - ktilde[i])  # the i-th term of S - S~
pair_mean = rho * sigma_q * sigma_k  # E[q_i (k_i - k~_i)]

c = Symbol("c", positive=True)  # the scale of the logits: 1, sqrt(d), d, ... (any c > 0)

derivation = Derivation(
    title="The aligned key's margin has variance d sigma_q^2 sigma_k^2 (2 + rho^2) / c^2",
    claim=Eq(Var((S - S_tilde) / c), d * sigma_q**2 * sigma_k**2 * (2 + rho**2) / c**2),
    where={S: dot_product, S_tilde: other_dot_product},
    models=["aligned-key"],
    steps=[
        Step(Var(S - S_tilde) / c**2, "variance_scaling", "$Var(X / c) = Var(X) / c^2$"),
        Step((E((S - S_tilde)**2) - E(S - S_tilde)**2) / c**2, "second_moment",
             "$Var(X) = E[X^2] - E[X]^2$"),
        Step((E(Sum(difference, (i, 1, d))**2) - E(Sum(difference, (i, 1, d)))**2) / c**2,
             "algebra", "$S - \\tilde S = \\sum_i q_i (k_i - \\tilde k_i)$"),
        Step((E(Sum(difference * difference.xreplace({i: j}), (j, 1, d), (i, 1, d)))
              - E(Sum(difference, (i, 1, d)))**2) / c**2, "expand_square",
             "the square of a sum is a double sum"),
        Step((Sum(E(difference**2), (i, 1, d))
              + SumOverDistinct(E(difference * difference.xreplace({i: j})), i, j, d)
              - Sum(E(difference), (i, 1, d))**2) / c**2,
             ["linearity", "split_diagonal"], "diagonal and off-diagonal terms"),
        Step((Sum(sigma_q**2 * sigma_k**2 * (2 + 2 * rho**2), (i, 1, d))
              + SumOverDistinct(pair_mean**2, i, j, d) - Sum(pair_mean, (i, 1, d))**2) / c**2,
             ["linearity", "isserlis"],
             "Gaussian moments: $E[q_i^2 (k_i - \\tilde k_i)^2] = \\sigma_q^2\\sigma_k^2 "
             "(2 + 2\\rho^2)$; distinct coordinates are independent"),
        Step((d * sigma_q**2 * sigma_k**2 * (2 + 2 * rho**2) + d * (d - 1) * pair_mean**2
              - d**2 * pair_mean**2) / c**2, "count_terms", "$d$, $d(d-1)$ and $d$ terms"),
        Step(d * sigma_q**2 * sigma_k**2 * (2 + rho**2) / c**2, "algebra",
             "the $d^2$ terms cancel"),
    ],
)
