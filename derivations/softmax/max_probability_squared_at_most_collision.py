"""(max_l p_l)^2 <= sum_i p_i^2: the largest probability is at most the root of the collision
probability (one term of a sum of non-negative terms is at most the sum).

With collision_at_most_max: sum p^2 <= max p <= sqrt(sum p^2), pointwise.
"""

from sympy import Le, Sum

from sdpa_proofs import Derivation, MaxOver, P, Step, i, n, p, softmax_abbreviations

derivation = Derivation(
    title="The largest probability is at most the root of the collision probability",
    claim=Le(P ** 2, Sum(p[i] ** 2, (i, 1, n))),
    where=softmax_abbreviations,
    models=["gaussian-logits"],
    steps=[
        Step(MaxOver(p[i] ** 2, (i, 1, n)), "max_monotone",
             "$x \\mapsto x^2$ is increasing on $[0, 1]$"),
        Step(Sum(p[i] ** 2, (i, 1, n)), "sum_at_least_max",
             "the largest of non-negative terms is at most their sum", rel="<="),
    ],
)
