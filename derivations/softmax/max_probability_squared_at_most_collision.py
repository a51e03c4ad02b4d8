"""(max_l p_l)^2 <= sum_i p_i^2: the largest probability is at most the root of the collision
probability (one term of a sum of non-negative terms is at most the sum).

With collision_at_most_max: sum p^2 <= max p <= sqrt(sum p^2), pointwise.
"""

from sympy import Le, Sum, Symbol

from sdpa_proofs import Derivation, MaxOver, Step, i, n, p_max, softmax_p

P = Symbol("p_max")

derivation = Derivation(
    title="The largest probability is at most the root of the collision probability",
    claim=Le(P ** 2, Sum(softmax_p(i) ** 2, (i, 1, n))),
    where={P: p_max},
    models=["gaussian-logits"],
    steps=[
        Step(MaxOver(softmax_p(i) ** 2, (i, 1, n)), "max_monotone",
             "$x \\mapsto x^2$ is increasing on $[0, 1]$"),
        Step(Sum(softmax_p(i) ** 2, (i, 1, n)), "sum_at_least_max",
             "the largest of non-negative terms is at most their sum", rel="<="),
    ],
)
