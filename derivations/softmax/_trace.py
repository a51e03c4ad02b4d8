"""Pieces shared by the trace bounds (a helper module: not itself a derivation)."""

from sympy import Derivative, Sum

from sdpa_proofs import Step, i, n, p, z

TRACE = Sum(Derivative(p[i], z[i]), (i, 1, n))  # tr J, J = dp/dz (where=softmax_abbreviations)


def trace_opening() -> list[Step]:
    """tr J = sum_i p_i (1 - p_i) = 1 - sum_i p_i^2."""
    return [
        Step(Sum(p[i] * (1 - p[i]), (i, 1, n)), ["differentiate", "sift"],
             "the diagonal of $J$: $\\partial p_i/\\partial z_i = p_i(1 - p_i)$"),
        Step(1 - Sum(p[i] ** 2, (i, 1, n)), "algebra", "$\\sum_i p_i = 1$"),
    ]
