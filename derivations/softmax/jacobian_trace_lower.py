"""The trace of the softmax Jacobian stays away from 0 while p is spread out: tr J >= 1 - max p.

With the upper bound (jacobian_trace_upper) this pins the trace of J to the largest probability:
1 - max p <= tr J <= 2 (1 - max p).  So tr J -> 0 exactly when max p -> 1, and a uniform
softmax over n keys (max p = 1/n) keeps tr J >= 1 - 1/n.  It is the trace only: at uniform p,
J = (I - 1 1^T / n) / n has spectral norm 1/n, small in every single direction.  The step that
bounds sum p_i^2 cites collision_at_most_max, proved in its own file.
"""

from sympy import Ge

from sdpa_proofs import Derivation, P, Step, cite, softmax_abbreviations

from _trace import TRACE, trace_opening
from collision_at_most_max import derivation as collision_at_most_max

derivation = Derivation(
    title="The trace of the softmax Jacobian stays away from 0 unless max p -> 1: "
          "tr J >= 1 - max p",
    claim=Ge(TRACE, 1 - P),
    where=softmax_abbreviations,
    models=["gaussian-logits"],
    steps=[
        *trace_opening(),
        Step(1 - P, cite(collision_at_most_max), "$\\sum_i p_i^2 \\le p_{\\max}$", rel=">="),
    ],
)
