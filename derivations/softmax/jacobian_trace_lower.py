"""The softmax Jacobian does not vanish while p is spread out: tr J >= 1 - max_l p_l.

With the upper bound (jacobian_trace_upper) this pins the size of J to the largest probability:
1 - max p <= tr J <= 2 (1 - max p).  So J -> 0 exactly when max p -> 1, and a uniform softmax
over n keys (max p = 1/n) keeps tr J >= 1 - 1/n.  The step that bounds sum p_i^2 cites
collision_at_most_max, proved in its own file.
"""

from sympy import Ge

from sdpa_proofs import Derivation, P, Step, cite, softmax_abbreviations

from _trace import TRACE, trace_opening
from collision_at_most_max import derivation as collision_at_most_max

derivation = Derivation(
    title="The softmax Jacobian stays away from 0 unless max p -> 1: tr J >= 1 - max p",
    claim=Ge(TRACE, 1 - P),
    where=softmax_abbreviations,
    models=["gaussian-logits"],
    steps=[
        *trace_opening(),
        Step(1 - P, cite(collision_at_most_max), "$\\sum_i p_i^2 \\le p_{\\max}$", rel=">="),
    ],
)
