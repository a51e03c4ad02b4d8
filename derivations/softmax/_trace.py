"""Pieces shared by the trace bounds (a helper module: not itself a derivation)."""

from sympy import Derivative, Sum, Symbol

from sdpa_proofs import Step, i, n, softmax_p, z

P = Symbol("p_max")  # stands for p_max = max_l p_l (pass where={P: p_max})
TRACE = Sum(Derivative(softmax_p(i), z[i]), (i, 1, n))  # tr J, J = dp/dz


def trace_opening() -> list[Step]:
    """tr J = sum_i p_i (1 - p_i) = 1 - sum_i p_i^2."""
    return [
        Step(Sum(softmax_p(i) * (1 - softmax_p(i)), (i, 1, n)), ["differentiate", "sift"],
             "the diagonal of $J$: $\\partial p_i/\\partial z_i = p_i(1 - p_i)$"),
        Step(1 - Sum(softmax_p(i) ** 2, (i, 1, n)), "algebra", "$\\sum_i p_i = 1$"),
    ]
