"""Pieces shared by the dependent-case derivations (a helper module: not itself a derivation)."""

from sympy import Sum

from sdpa_proofs import (E, S, Step, SumOverDistinct, alpha, beta, d, i, j, k, q, sigma_k,
                         sigma_q)

# the part of Var(S) that is linear in d, under both shared-factor models
LINEAR = alpha**2 * sigma_k**2 + beta**2 * sigma_q**2 + sigma_q**2 * sigma_k**2
# E[q_i^2 k_i^2] with q_i = alpha z + sigma_q e_i, k_i = beta z' + sigma_k f_i
DIAGONAL_SAME = 3 * alpha**2 * beta**2 + LINEAR        # z' = z
DIAGONAL_SEPARATE = alpha**2 * beta**2 + LINEAR        # z' independent of z


def variance_opening(split: bool = True) -> list[Step]:
    """Var(S) = E[S^2] - E[S]^2, the square written as a double sum, expectation moved inside;
    with ``split`` also the d diagonal terms separated from the d(d - 1) others."""
    double = Sum(q[i] * k[i] * q[j] * k[j], (j, 1, d), (i, 1, d))
    steps = [
        Step(E(S**2) - E(S)**2, "second_moment", "$Var(X) = E[X^2] - E[X]^2$"),
        Step(E(double) - E(Sum(q[i] * k[i], (i, 1, d)))**2, "expand_square",
             "the square of a sum is a double sum"),
    ]
    if split:
        steps.append(Step(Sum(E(q[i]**2 * k[i]**2), (i, 1, d))
                          + SumOverDistinct(E(q[i] * k[i] * q[j] * k[j]), i, j, d)
                          - Sum(E(q[i] * k[i]), (i, 1, d))**2,
                          ["linearity", "split_diagonal"], "diagonal and off-diagonal terms"))
    else:
        steps.append(Step(Sum(E(q[i] * k[i] * q[j] * k[j]), (j, 1, d), (i, 1, d))
                          - Sum(E(q[i] * k[i]), (i, 1, d))**2, "linearity",
                          "expectation is linear"))
    return steps
