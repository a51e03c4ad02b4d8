"""The softmax Jacobian does not vanish while p is spread out: tr J >= 1 - max_l p_l.

With the upper bound (jacobian_trace_upper) this pins the size of J to the largest probability:
1 - max p <= tr J <= 2 (1 - max p).  So J -> 0 exactly when max p -> 1, and a uniform softmax
over n keys (max p = 1/n) keeps tr J >= 1 - 1/n.
"""

from sympy import Ge, Sum

from sdpa_proofs import Derivation, P, Step, i, n, p, softmax_abbreviations

from _trace import TRACE, trace_opening

derivation = Derivation(
    title="The softmax Jacobian stays away from 0 unless max p -> 1: tr J >= 1 - max p",
    claim=Ge(TRACE, 1 - P),
    where=softmax_abbreviations,
    models=["gaussian-logits"],
    steps=[
        *trace_opening(),
        Step(1 - P * Sum(p[i], (i, 1, n)), "at_most_max",
             "$p_i^2 = p_i \\cdot p_i \\le p_i \\, p_{\\max}$", rel=">="),
        Step(1 - P, "algebra", "$\\sum_i p_i = 1$"),
    ],
)
