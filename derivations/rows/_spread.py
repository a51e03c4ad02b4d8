"""Pieces shared by the row derivations (a helper module: not itself a derivation)."""

from sympy import Sum

from sdpa_proofs import E, Step, SumOverDistinct, d, i, j, k, ktilde, q

# the i-th term of S - S~ = sum_i q_i (k_i - k~_i), and the same term at j
DIFFERENCE = q[i] * (k[i] - ktilde[i])
DIFFERENCE_J = DIFFERENCE.xreplace({i: j})


def spread_opening() -> list[Step]:
    """E[(S - S~)^2] / 2 as one sum, squared into a double sum, the expectation moved inside and
    the d diagonal terms separated from the d(d - 1) others."""
    return [
        Step(E(Sum(DIFFERENCE, (i, 1, d))**2) / 2, "algebra",
             "$S - \\tilde S = \\sum_i q_i (k_i - \\tilde k_i)$"),
        Step(E(Sum(DIFFERENCE * DIFFERENCE_J, (j, 1, d), (i, 1, d))) / 2, "expand_square",
             "the square of a sum is a double sum"),
        Step((Sum(E(DIFFERENCE**2), (i, 1, d))
              + SumOverDistinct(E(DIFFERENCE * DIFFERENCE_J), i, j, d)) / 2,
             ["linearity", "split_diagonal"], "diagonal and off-diagonal terms"),
    ]
